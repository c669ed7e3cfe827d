/* data_idx.c - MNIST's idx files, gzip-compressed (as shipped) or not:
 * the rows from an idx file of 2 or more dimensions, the targets (class
 * labels) from a 1-D one.
 *
 * An idx file is a magic number (two zero bytes, the type of the values,
 * the number of dimensions), each dimension as a big-endian uint32, then
 * the values, big-endian, in C order.  zlib reads both kinds of file;
 * byte positions in messages count in the uncompressed data.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "data_pass.h"

#ifdef HAVE_ZLIB
#include <zlib.h>

struct idx {
    const char *path;
    gzFile f;
    char kind;
    int size;
    size_t ndim, rows, width;
    uintmax_t offset;
};

static size_t idx_read(void *h, void *buf, size_t bytes)
{
    int got = gzread(h, buf, (unsigned)bytes);
    return got < 0 ? 0 : (size_t)got;
}

static const char *idx_why(void *h)
{
    int code;
    const char *msg = gzerror(h, &code);
    return code == Z_OK || !msg || !*msg ? "the file ends early" : msg;
}

static int idx_open(struct data_pass *p, struct idx *a, const char *path,
                    int rows_file)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    if (!(a->f = gzopen(path, "rb")))
        return aia_seterr(p->err, "%s: cannot open: %s", path,
                          errno ? strerror(errno) : "out of memory");
    gzbuffer(a->f, 1u << 17);
    unsigned char m[4];
    if (idx_read(a->f, m, 4) != 4 || m[0] != 0 || m[1] != 0)
        return aia_seterr(p->err,
                          "%s: byte 0: not an idx file (it starts with two "
                          "zero bytes)",
                          path);
    static const struct {
        unsigned char code;
        char kind;
        int size;
    } types[] = {{0x08, 'u', 1}, {0x09, 'i', 1}, {0x0B, 'i', 2},
                 {0x0C, 'i', 4}, {0x0D, 'f', 4}, {0x0E, 'f', 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].code == m[2]) {
            a->kind = types[i].kind;
            a->size = types[i].size;
        }
    if (!a->kind)
        return aia_seterr(p->err, "%s: byte 2: type 0x%02x is not an idx type",
                          path, m[2]);
    a->ndim = m[3];
    if (rows_file ? a->ndim < 2 : a->ndim != 1)
        return aia_seterr(p->err, "%s: byte 3: %zu dimensions; %s", path,
                          a->ndim,
                          rows_file ? "the rows need 2 or more (rows x ...)"
                                    : "targets need 1 (an idx1 label file)");
    a->width = 1;
    for (size_t d = 0; d < a->ndim; d++) {
        unsigned char b[4];
        if (idx_read(a->f, b, 4) != 4)
            return aia_seterr(p->err,
                              "%s: byte %zu: the file ends in its "
                              "header",
                              path, 4 + 4 * d);
        size_t v =
            (size_t)b[0] << 24 | (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3];
        if (d == 0)
            a->rows = v;
        else if (v == 0 || a->width > UINT32_MAX / v)
            return aia_seterr(p->err, "%s: byte %zu: dimension %zu is %zu",
                              path, 4 + 4 * d, d + 1, v);
        else
            a->width *= v;
    }
    a->offset = 4 + 4 * a->ndim;
    return 0;
}

/* After the last row: nothing more in the file. */
static int idx_end(struct data_pass *p, const struct idx *a, uintmax_t at)
{
    unsigned char extra;
    if (idx_read(a->f, &extra, 1) != 0)
        return aia_seterr(p->err,
                          "%s: byte %ju: more data than the %zu rows the "
                          "header promises",
                          a->path, at, a->rows);
    return 0;
}

int data_idx_pass(struct data_pass *p)
{
    const struct data_opts *o = p->o;
    struct idx x = {0}, t = {0};
    int rc = -1;
    /* without targets every row's target is 0: for problems that use
     * none (pca); a classifier then sees one class */
    if (idx_open(p, &x, o->path, 1) < 0 ||
        (o->targets && idx_open(p, &t, o->targets, 0) < 0))
        goto out;
    if (o->targets && t.rows != x.rows) {
        aia_seterr(p->err, "%s: %zu targets for the %zu rows of %s", t.path,
                   t.rows, x.rows, x.path);
        goto out;
    }
    if (x.rows == 0) {
        rc = 0; /* "no data rows", said by the caller */
        goto out;
    }
    p->cols = x.width;
    if (data_build_init(p, p->cols) < 0)
        goto out;
    struct data_source xs = {x.path, idx_read, idx_why, x.f,     x.kind,
                             x.size, 1,        x.rows,  x.offset};
    struct data_source ts = {t.path, idx_read, idx_why, t.f,     t.kind,
                             t.size, 1,        t.rows,  t.offset};
    rc = data_array_pass(p, &xs, x.width, 0, o->targets ? &ts : NULL);
    if (rc == 0 && (idx_end(p, &x, xs.at) < 0 ||
                    (o->targets && idx_end(p, &t, ts.at) < 0)))
        rc = -1;
out:
    if (x.f)
        gzclose(x.f);
    if (t.f)
        gzclose(t.f);
    return rc;
}

int data_idx_shape(struct data_pass *p, double *rows, double *cols)
{
    struct idx x;
    int rc = idx_open(p, &x, p->o->path, 1);
    if (x.f)
        gzclose(x.f);
    if (rc < 0)
        return -1;
    *rows = (double)x.rows;
    *cols = (double)x.width;
    return 0;
}

#else

int data_idx_pass(struct data_pass *p)
{
    return data_format_refuse(DATA_IDX, p->o->path, p->err);
}

int data_idx_shape(struct data_pass *p, double *rows, double *cols)
{
    (void)rows;
    (void)cols;
    return data_format_refuse(DATA_IDX, p->o->path, p->err);
}

#endif
