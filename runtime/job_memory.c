/* job_memory.c - the memory a job's rows will take on a machine, estimated
 * before anything is allocated, against what the machine has or a limit
 * the user sets: a job of 10^9 rows is refused at start with the figure,
 * not after it has exhausted the machine.
 *
 * The estimate is a lower bound, so that a job that fits is never
 * refused: the rows' doubles (8 bytes each, dense) that the machine's
 * workers hold, plus all of them when the coordinator is there and holds
 * every row (a data file: it computes the loss over all of them).
 */
#include <config.h>

#include "job.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "params.h"
#include "util.h"

/* Lines counted at the head of a text file: a lower bound on its rows. */
#define COUNT_BYTES (64u << 20)

int job_parse_bytes(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !(v >= 0) || !isfinite(v))
        return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (u) {
        v *= pow(1024, (double)(u - units + 1));
        end++;
        end += strcmp(end, "iB") == 0 ? 2 : strcmp(end, "B") == 0 ? 1 : 0;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

/* Bytes MemAvailable says, or -1 when /proc/meminfo says nothing. */
static double available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    double kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Lines in the first COUNT_BYTES of path (a lower bound on its rows). */
static double count_lines(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    double lines = 0;
    static char buf[1 << 16];
    size_t seen = 0;
    ssize_t got;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        while (seen < COUNT_BYTES && (got = read(fd, buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < got; i++)
                lines += buf[i] == '\n';
            seen += (size_t)got;
        }
    close(fd);
    return lines;
}

static double int_arg(const struct aia_value *args, const char *name)
{
    const struct aia_value *v = aia_arg(args, name);
    return v && v->type == AIA_INT ? (double)v->i : 0;
}

/* The doubles of every row of the job, and what they are, into what. */
static double job_doubles(const struct job *job, const struct aia_value *args,
                          int *coord_holds, char *what, size_t len)
{
    const struct job_data *d = &job->data;
    *coord_holds = d->path != NULL;
    if (!d->path) {
        double rows = int_arg(args, "rows"), cols = int_arg(args, "cols");
        snprintf(what, len, "problem.rows %.0f x problem.cols %.0f doubles",
                 rows, cols);
        return rows * cols;
    }
    struct stat st;
    if (stat(d->path, &st) != 0)
        return 0;
    if (d->format == DATA_BINARY) {
        double rows = d->rows ? (double)d->rows
                              : floor((double)st.st_size / (8.0 * d->cols));
        snprintf(what, len, "%.0f rows x problem.data.cols %zu doubles", rows,
                 d->cols);
        return rows * (double)d->cols;
    }
    if (d->format == DATA_LIBSVM && !d->sparse && d->features) {
        double rows = count_lines(d->path);
        snprintf(what, len,
                 "at least %.0f rows x problem.data.features "
                 "%zu doubles, stored dense",
                 rows, d->features);
        return rows * (double)d->features;
    }
    return 0; /* text held about as large as the file: no estimate */
}

int job_check_memory(const struct job *job, const struct aia_value *args,
                     int nworkers, int local, int coord, struct aia_error *err)
{
    double limit = job->memory_limit;
    const char *whose = "limits.memory allows";
    const char *env = getenv("AIARUN_MEMORY_LIMIT");
    if (limit <= 0 && env && *env) {
        if (job_parse_bytes(env, &limit) < 0)
            return aia_seterr(err,
                              "AIARUN_MEMORY_LIMIT=%s: expected bytes, "
                              "as 8e9, 512M or 16G",
                              env);
        whose = "AIARUN_MEMORY_LIMIT allows";
    }
    if (limit <= 0) {
        limit = available();
        whose = "this machine has available (MemAvailable)";
    }
    if (limit <= 0 || nworkers < 1)
        return 0;
    char what[200] = "";
    int coord_holds;
    double all = 8 * job_doubles(job, args, &coord_holds, what, sizeof what);
    double need = all * local / nworkers + (coord && coord_holds ? all : 0);
    if (need <= limit)
        return 0;
    const struct mnode *n = job->data.path
                                ? job->data.key
                                : mnode_get(job->problem.node, "rows", NULL);
    char where[256];
    params_where(where, sizeof where, job->m->path, n ? n : job->problem.key);
    return aia_seterr(err,
                      "%s: the rows take at least %.4g GB on this "
                      "machine (%s; %d of %d workers%s), more than the "
                      "%.4g GB %s: give fewer rows, or more machines",
                      where, need / 1e9, what, local, nworkers,
                      coord && coord_holds ? " and the coordinator's copy" : "",
                      limit / 1e9, whose);
}
