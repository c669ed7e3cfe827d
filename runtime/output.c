/* output.c - CSV and JSON Lines rows, and the iterate file. */
#include <config.h>

#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

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
 * (a file that is shorter, or gone, is appended to as it is). */
static FILE *open_at(const char *path, const char *mode, long long keep,
                     struct aia_error *err)
{
    if (keep >= 0 && truncate(path, (off_t)keep) != 0 && errno != ENOENT) {
        aia_seterr(err, "%s: cannot cut it back to the checkpoint: %s", path,
                   strerror(errno));
        return NULL;
    }
    FILE *f = fopen(path, keep >= 0 ? "a" : mode);
    if (!f)
        aia_seterr(err, "%s: cannot write: %s", path, strerror(errno));
    return f;
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
    if (!(o->f = open_at(path, "w", keep, err))) {
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
    if (!(it->f = open_at(path, "wb", keep, err))) {
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
