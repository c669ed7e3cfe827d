/* output.c - CSV and JSON Lines rows, and the iterate file. */
#include <config.h>

#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

/* Rows reach the file at least this often, so that a run that crashes
 * (a plugin's fault, a kill) loses at most the last second of them; a
 * flush per row would cost a system call per answer on fast runs. */
#define OUTPUT_FLUSH_S 1.0

struct output {
    FILE *f;
    char *path;
    int format;
    const struct output_column *cols;
    int ncols;
    double flushed; /* util_now of the last flush */
};

static int write_failed(const char *path, struct aia_error *err)
{
    return aia_seterr(err, "%s: write failed: %s", path, strerror(errno));
}

/* keep < 0: a new file; else the file cut to keep bytes, to append to
 * (a file that is gone is started again; one that is shorter, an empty
 * one included, is refused: it is not the file the checkpoint was
 * written with).  The file must be regular or new, and is locked (flock)
 * for as long as it is open, so that two runs never write one file. */
static FILE *open_at(const char *path, long long keep, struct aia_error *err)
{
    char shown[200];
    util_shown(shown, sizeof shown, path, 160);
    struct stat before;
    int existed = stat(path, &before) == 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        aia_seterr(err, "%s: cannot write: %s", shown, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        aia_seterr(err, "%s: not a regular file: outputs are regular files "
                        "or new paths",
                   shown);
        goto fail;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        aia_seterr(err, "%s: %s", shown,
                   errno == EWOULDBLOCK ? "another run is writing it (the "
                                          "file is locked)"
                                        : strerror(errno));
        goto fail;
    }
    if (keep >= 0 && (existed || st.st_size > 0) && st.st_size < keep) {
        aia_seterr(err, "%s: %lld bytes, fewer than the %lld the checkpoint "
                        "records: not the file it was written with",
                   shown, (long long)st.st_size, keep);
        goto fail;
    }
    if (ftruncate(fd, keep >= 0 && st.st_size > 0 ? (off_t)keep : 0) != 0) {
        aia_seterr(err, "%s: cannot cut it back: %s", shown, strerror(errno));
        goto fail;
    }
    FILE *f = fdopen(fd, "a");
    if (f)
        return f;
    aia_seterr(err, "%s: %s", shown, strerror(errno));
fail:
    if (fd >= 0)
        close(fd);
    return NULL;
}

static long long size_of(FILE *f)
{
    fflush(f);
    return (long long)ftello(f);
}

struct output *output_open(const char *path, int format,
                           const struct output_column *cols, int ncols,
                           long long keep, struct aia_error *err)
{
    struct output *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(path))) {
        free(o);
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (!(o->f = open_at(path, keep, err))) {
        free(o->path);
        free(o);
        return NULL;
    }
    o->format = format;
    o->cols = cols;
    o->ncols = ncols;
    o->flushed = 0; /* the first row is flushed at once */
    if (format == OUTPUT_CSV && size_of(o->f) == 0) {
        for (int i = 0; i < ncols; i++)
            fprintf(o->f, "%s%s", i ? "," : "", cols[i].name);
        fputc('\n', o->f);
    }
    return o;
}

long long output_size(struct output *o)
{
    return size_of(o->f);
}

static void value(FILE *f, enum output_kind kind, double v, int json)
{
    if (isnan(v) || isinf(v)) {
        if (json)
            fputs("null", f);
        return;
    }
    switch (kind) {
    case OUT_INT:
        fprintf(f, "%lld", (long long)v);
        break;
    case OUT_TIME:
        fprintf(f, "%.6f", v);
        break;
    case OUT_SHORT:
        fprintf(f, "%.9f", v);
        break;
    case OUT_REAL:
        fprintf(f, "%.17g", v);
        break;
    }
}

int output_row(struct output *o, const double *values, struct aia_error *err)
{
    int json = o->format == OUTPUT_JSONL;
    if (json)
        fputc('{', o->f);
    for (int i = 0; i < o->ncols; i++) {
        if (json)
            fprintf(o->f, "%s\"%s\":", i ? "," : "", o->cols[i].name);
        else if (i)
            fputc(',', o->f);
        value(o->f, o->cols[i].kind, values[i], json);
    }
    if (json)
        fputc('}', o->f);
    if (fputc('\n', o->f) == EOF)
        return write_failed(o->path, err);
    double now = util_now();
    if (now - o->flushed >= OUTPUT_FLUSH_S) {
        o->flushed = now;
        if (fflush(o->f) != 0)
            return write_failed(o->path, err);
    }
    return 0;
}

int output_close(struct output *o, struct aia_error *err)
{
    if (!o)
        return 0;
    int rc = 0;
    if (ferror(o->f) | (fclose(o->f) != 0))
        rc = write_failed(o->path, err);
    free(o->path);
    free(o);
    return rc;
}

struct iterates {
    FILE *f;
    char *path;
    size_t dim;
};

struct iterates *iterates_open(const char *path, size_t dim,
                               long long keep, struct aia_error *err)
{
    struct iterates *it = calloc(1, sizeof *it);
    if (!it || !(it->path = strdup(path))) {
        free(it);
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (!(it->f = open_at(path, keep, err))) {
        free(it->path);
        free(it);
        return NULL;
    }
    it->dim = dim;
    if (size_of(it->f) == 0) {
        uint32_t version[2] = {1, 0};
        uint64_t d = dim;
        fwrite("AIAITER1", 1, 8, it->f);
        fwrite(version, sizeof version, 1, it->f);
        fwrite(&d, sizeof d, 1, it->f);
    }
    return it;
}

long long iterates_size(struct iterates *it)
{
    return size_of(it->f);
}

int iterates_write(struct iterates *it, int64_t iteration, int64_t epoch,
                   double time, const double *x, struct aia_error *err)
{
    fwrite(&iteration, sizeof iteration, 1, it->f);
    fwrite(&epoch, sizeof epoch, 1, it->f);
    fwrite(&time, sizeof time, 1, it->f);
    if (fwrite(x, sizeof *x, it->dim, it->f) != it->dim)
        return write_failed(it->path, err);
    return 0;
}

int iterates_close(struct iterates *it, struct aia_error *err)
{
    if (!it)
        return 0;
    int rc = 0;
    if (ferror(it->f) | (fclose(it->f) != 0))
        rc = write_failed(it->path, err);
    free(it->path);
    free(it);
    return rc;
}

size_t output_sample_rows(const struct output_conf *o, int data, int gap,
                          size_t rows, size_t total)
{
    int64_t n = o->history_sample;
    if (!data || !o->history || n == OUTPUT_SAMPLE_ALL || total == 0)
        return 0;
    if (n == OUTPUT_SAMPLE_AUTO) {
        /* a run to a gap reads the suboptimality of every row */
        if (gap || total < (size_t)OUTPUT_SAMPLE_ROWS * OUTPUT_SAMPLE_FROM)
            return 0;
        n = OUTPUT_SAMPLE_ROWS;
    }
    if ((uint64_t)n >= total)
        return 0;
    /* this rank's share of the sample, as its share of the rows */
    double k = floor((double)n * (double)rows / (double)total + 0.5);
    if (k < 1)
        k = 1;
    return k >= (double)rows ? 0 : (size_t)k;
}
