/* job_memory.c - the memory a job's rows will take on a machine, estimated
 * before anything is allocated, against what the machine has or a limit
 * the user sets: a job of 10^9 rows is refused at start with the figure,
 * not after it has exhausted the machine.
 *
 * The estimate is a lower bound, so that a job that fits is never
 * refused: the rows' doubles (8 bytes each, dense) that the machine's
 * workers hold, plus all of them when the coordinator is there and holds
 * every row (a data file: it computes the loss over all of them).  A CSV
 * file's rows are its lines times the cells of its first line, the lines
 * counted in its first COUNT_BYTES and, past them, in proportion to the
 * file's size (a 10 GB file was estimated from its first 64 MB).  A
 * libsvm file's largest index there is the model's dimension: every rank
 * holds at least one model of that many doubles, however few entries the
 * rows store (one index of 10^8 in a file of two lines made a 10 GB run);
 * its rows read sparse take their entries (12 bytes each) and 24 bytes a
 * row, counted the same way.  A file with a header (.npy, idx, HDF5) is
 * estimated from its header's shape: an HDF5 dataset of 10^9 x 1000
 * never written takes 52 KB on disk, and every rank scanned it until
 * pool.setup_timeout.
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

#include "data/data.h"
#include "params.h"
#include "core/util.h"

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

/* What the first COUNT_BYTES of a text file say of its size: its lines
 * that hold more than blanks and comments (from '#', libsvm), the cells
 * of its first line (CSV, split at delim or, when 0, at the first of ',',
 * ';', tab it holds, else at runs of blanks; 0 when it holds a quote) and
 * the largest libsvm index ("index:value"). */
struct head {
    double lines, cells, max_index;
    double entries; /* libsvm's "index:value" pairs */
};

/* n, counted in the first seen bytes of a file of size bytes, taken to
 * the whole file in proportion. */
static double whole(double n, size_t seen, off_t size)
{
    return seen > 0 && (double)size > (double)seen
               ? n * (double)size / (double)seen
               : n;
}

static void count_head(const char *path, char delim, struct head *h,
                       size_t *seen_out, off_t *size);

static void read_head(const char *path, char delim, struct head *h)
{
    size_t seen = 0;
    off_t size = 0;
    count_head(path, delim, h, &seen, &size);
    h->lines = whole(h->lines, seen, size);
    h->entries = whole(h->entries, seen, size);
}

static void count_head(const char *path, char delim, struct head *h,
                       size_t *seen_out, off_t *size)
{
    memset(h, 0, sizeof *h);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st = {0};
    static char buf[1 << 16];
    char first[4096];
    size_t seen = 0, nfirst = 0;
    double token = 0; /* the digits of the current token, as a number */
    int digits = 0;   /* the current token is digits only so far */
    int filled = 0, comment = 0, in_first = 1; /* the current line */
    ssize_t got;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        while (seen < COUNT_BYTES && (got = read(fd, buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < got; i++) {
                char c = buf[i];
                in_first &= c != '\n';
                if (in_first && nfirst < sizeof first - 1)
                    first[nfirst++] = c;
                comment |= c == '#';
                if (c == '\n') {
                    h->lines += filled;
                    filled = comment = 0;
                } else if (!comment && c != ' ' && c != '\t' && c != '\r') {
                    filled = 1;
                }
                if (comment) {
                    digits = -1;
                } else if (c >= '0' && c <= '9') {
                    if (digits >= 0) {
                        token = token * 10 + (c - '0');
                        digits = 1;
                    }
                } else if (c == ':' && digits > 0) {
                    h->max_index = token > h->max_index ? token : h->max_index;
                    h->entries++;
                    digits = -1;
                }
                if (c == ' ' || c == '\t' || c == '\n') {
                    token = 0;
                    digits = 0;
                } else if (!(c >= '0' && c <= '9') && c != ':') {
                    digits = -1;
                }
            }
            seen += (size_t)got;
        }
    h->lines += filled; /* a last line without its line end */
    *seen_out = seen;
    *size = st.st_size;
    close(fd);
    first[nfirst] = '\0';
    if (nfirst == 0 || strchr(first, '"'))
        return;
    if (!delim)
        for (const char *d = ",;\t"; *d && !delim; d++)
            delim = strchr(first, *d) ? *d : 0;
    if (delim && delim != ' ') {
        h->cells = 1;
        for (const char *c = first; *c; c++)
            h->cells += *c == delim;
        return;
    }
    for (const char *c = first; *c;) { /* runs of blanks */
        while (*c == ' ' || *c == '\t' || *c == '\r')
            c++;
        if (*c)
            h->cells++;
        while (*c && *c != ' ' && *c != '\t' && *c != '\r')
            c++;
    }
}

static double int_arg(const struct aia_value *args, const char *name)
{
    const struct aia_value *v = aia_arg(args, name);
    return v && v->type == AIA_INT ? (double)v->i : 0;
}

/* The doubles of every row of the job, and what they are, into what;
 * *model: the doubles of the model every rank holds, when the file tells
 * a lower bound on them (libsvm), else 0. */
static double job_doubles(const struct job *job, const struct aia_value *args,
                          int *coord_holds, double *model, char *what,
                          size_t len)
{
    const struct job_data *d = &job->data;
    *coord_holds = d->path != NULL;
    *model = 0;
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
    struct head h;
    if (d->format == DATA_LIBSVM && !d->sparse && d->features) {
        read_head(d->path, 0, &h);
        snprintf(what, len,
                 "at least %.0f rows x problem.data.features "
                 "%zu doubles, stored dense",
                 h.lines, d->features);
        return h.lines * (double)d->features;
    }
    if (d->format == DATA_LIBSVM) {
        read_head(d->path, 0, &h);
        double dim = d->features ? (double)d->features : h.max_index;
        *model = dim;
        int n = snprintf(
            what, len,
            "%s %.0f: a model of as many doubles on each "
            "rank%s",
            d->features ? "problem.data.features" : "a feature index of", dim,
            d->sparse ? "" : ", and as many a row stored dense");
        /* the entries named where they weigh more than the model */
        if (d->sparse && 24 * h.lines + 12 * h.entries > 8 * dim && n > 0 &&
            (size_t)n < len)
            snprintf(what + n, len - (size_t)n,
                     "; about %.0f rows of %.0f entries in all, read sparse",
                     h.lines, h.entries);
        if (d->sparse) /* ids, targets, row starts; columns and values */
            return (24 * h.lines + 12 * h.entries) / 8;
        return (h.lines > 1 ? h.lines - 1 : 0) * dim;
    }
    if (d->format == DATA_CSV) {
        read_head(d->path, d->delimiter, &h);
        double rows = h.lines > 1 ? h.lines - 1 : 0;
        double cols = h.cells > 1 ? h.cells - 1 : 0;
        snprintf(what, len, "at least %.0f rows x %.0f columns of doubles",
                 rows, cols);
        return rows * cols;
    }
    double rows, cols;
    struct data_opts o;
    data_opts_init(&o);
    o.format = d->format;
    o.path = d->path;
    o.dataset = d->dataset;
    if (data_shape(&o, &rows, &cols) == 0) {
        snprintf(what, len,
                 "%.0f rows x %.0f values of doubles, from the "
                 "file's header",
                 rows, cols);
        return rows * cols;
    }
    return 0; /* no estimate */
}

int job_check_memory(const struct job *job, const struct aia_value *args,
                     int nworkers, int local, int coord, struct aia_error *err)
{
    double limit = job->limits.memory;
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
    double model;
    double all =
        8 * job_doubles(job, args, &coord_holds, &model, what, sizeof what);
    double need = all * local / nworkers + (coord && coord_holds ? all : 0) +
                  8 * model * (local + (coord ? 1 : 0));
    if (need <= limit)
        return 0;
    const struct mnode *n = job->data.path
                                ? job->data.key
                                : mnode_get(job->problem.node, "rows", NULL);
    char where[256];
    params_where(where, sizeof where, job->m->path, n ? n : job->problem.key);
    return aia_seterr(err,
                      "%s: the %s take at least %.4g GB on this "
                      "machine (%s; %d of %d workers%s), more than the "
                      "%.4g GB %s: give fewer rows, or more machines",
                      where, model > 0 ? "rows and the model" : "rows",
                      need / 1e9, what, local, nworkers,
                      coord && coord_holds ? " and the coordinator's copy" : "",
                      limit / 1e9, whose);
}
