/* data_bin.c - raw little-endian float64 files. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data_pass.h"

/* Bytes read at a time from a binary file (whole rows, at least one). */
#define READ_CHUNK (1u << 20)

/* ------------------------------------------------------------------ */
/* Binary files                                                        */

static double get_le(const unsigned char *s)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | s[i];
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int bin_rows(struct data_pass *p, FILE *f, size_t n, size_t cols)
{
    size_t rowb = cols * 8, chunk = READ_CHUNK / rowb;
    if (chunk == 0)
        chunk = 1;
    unsigned char *buf = malloc(chunk * rowb);
    if (!buf)
        return data_oom(p);
    int rc = 0;
    for (size_t r = 0; r < n && rc == 0;) {
        size_t want = n - r < chunk ? n - r : chunk;
        if (fread(buf, rowb, want, f) != want) {
            rc = aia_seterr(p->err, "%s: read error: %s", p->o->path,
                            ferror(f) ? strerror(errno) : "file shrank");
            break;
        }
        for (size_t i = 0; i < want && rc == 0; i++, r++) {
            int store;
            p->rows++;
            if (!data_take(p, r, &store))
                continue;
            double *slot = NULL;
            if (store && data_build_begin(p, r, &slot) < 0) {
                rc = -1;
                break;
            }
            for (size_t j = 0; j < cols; j++) {
                double v = get_le(buf + i * rowb + j * 8);
                if (!isfinite(v)) {
                    rc = aia_seterr(p->err,
                                    "%s: row %zu, column %zu (byte %zu): "
                                    "%s is not allowed",
                                    p->o->path, r + 1, j + 1, r * rowb + j * 8,
                                    isnan(v) ? "NaN" : "infinity");
                    break;
                }
                if (j != p->target && data_float_over(p, v)) {
                    char why[AIA_ERROR_LEN / 2];
                    rc = aia_seterr(p->err,
                                    "%s: row %zu, column %zu (byte %zu): %s",
                                    p->o->path, r + 1, j + 1, r * rowb + j * 8,
                                    data_value_why(v, 1, why, sizeof why));
                    break;
                }
                if (!store)
                    continue;
                size_t k = j - (j > p->target);
                if (j == p->target)
                    p->b->y[p->b->rows] = v;
                else if (slot)
                    slot[k] = v;
                else if (v != 0 && data_build_entry(p, k, v) < 0) {
                    rc = -1;
                    break;
                }
            }
            if (store && rc == 0)
                data_build_end(p);
        }
    }
    free(buf);
    return rc;
}

int data_bin_pass(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    size_t cols = o->cols;
    if (cols < 2)
        return aia_seterr(p->err,
                          "%s: a binary file needs cols, its float64 values "
                          "per row with the target (at least 2)",
                          o->path);
    if (cols > SIZE_MAX / 8)
        return aia_seterr(p->err, "%s: %zu columns is too many", o->path, cols);
    FILE *f = fopen(o->path, "rb");
    if (!f)
        return aia_seterr(p->err, "%s: cannot open: %s", o->path,
                          strerror(errno));
    struct stat st;
    int rc = -1;
    if (fstat(fileno(f), &st) < 0) {
        aia_seterr(p->err, "%s: %s", o->path, strerror(errno));
        goto out;
    }
    uintmax_t size = (uintmax_t)st.st_size;
    if (size % (cols * 8) != 0) {
        aia_seterr(p->err,
                   "%s: %ju bytes is not a whole number of rows of %zu "
                   "float64 values",
                   o->path, size, cols);
        goto out;
    }
    uintmax_t n = size / (cols * 8);
    if (o->rows && o->rows != n) {
        aia_seterr(p->err,
                   "%s: %ju bytes hold %ju rows of %zu float64 values, "
                   "not %zu",
                   o->path, size, n, cols, o->rows);
        goto out;
    }
    if (n == 0) {
        rc = 0; /* "no data rows", said by the caller */
        goto out;
    }
    p->cols = cols - 1;
    if (data_target(p, cols) < 0 || data_build_init(p, cols - 1) < 0)
        goto out;
    rc = bin_rows(p, f, (size_t)n, cols);
out:
    fclose(f);
    return rc;
}
