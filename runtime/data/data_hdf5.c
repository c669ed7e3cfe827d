/* data_hdf5.c - HDF5 files: a 2-D dataset of rows (read as float64), the
 * target a column of it or a 1-D dataset of the same file.
 *
 * A rank reads only its own rows: the rows kept in each block of
 * BLOCK_BYTES are read as hyperslabs, one per run of consecutive kept
 * rows, so that a worker of a block partition reads one hyperslab a block
 * and nothing of the other workers' rows.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "data_pass.h"

#ifdef HAVE_HDF5
#include <hdf5.h>

/* Rows considered at a time: about this many bytes of values. */
#define BLOCK_BYTES (1u << 20)

struct h5 {
    hid_t file, x, t; /* the file, its rows' and targets' datasets */
    const char *xname, *tname;
    size_t rows, width;
    double *buf, *tbuf;
    char *take, *store;
};

/* A dataset's dimensions: 0 or -1. */
static int dims_of(struct data_pass *p, hid_t set, const char *name, int *ndim,
                   hsize_t dims[2])
{
    hid_t space = H5Dget_space(set);
    int nd = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (nd >= 1 && nd <= 2)
        H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0)
        H5Sclose(space);
    *ndim = nd;
    if (nd < 1 || nd > 2)
        return aia_seterr(p->err, "%s: dataset '%s': %d dimensions; %s",
                          p->o->path, name, nd,
                          "rows need 2 (rows x columns), targets 1");
    return 0;
}

/* Read rows [first, first + count) of set (width values a row) into buf. */
static int read_rows(struct data_pass *p, hid_t set, const char *name,
                     size_t first, size_t count, size_t width, double *buf)
{
    hid_t space = H5Dget_space(set);
    hsize_t start[2] = {first, 0}, n[2] = {count, width};
    int nd = H5Sget_simple_extent_ndims(space);
    hid_t mem = H5Screate_simple(nd, n, NULL);
    herr_t rc =
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, n, NULL);
    if (rc >= 0)
        rc = H5Dread(set, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf);
    H5Sclose(mem);
    H5Sclose(space);
    if (rc < 0)
        return aia_seterr(p->err,
                          "%s: dataset '%s': rows %zu to %zu cannot "
                          "be read as float64",
                          p->o->path, name, first + 1, first + count);
    return 0;
}

/* The rows [c, c + n): which are taken, the runs of them read, each one
 * checked and stored. */
static int block(struct data_pass *p, struct h5 *h, size_t c, size_t n)
{
    int has_target = h->t < 0;
    for (size_t i = 0; i < n; i++) {
        int store;
        p->rows++;
        h->take[i] = (char)data_take(p, c + i, &store);
        h->store[i] = (char)store;
    }
    for (size_t a = 0; a < n;) {
        if (!h->take[a]) {
            a++;
            continue;
        }
        size_t b = a;
        while (b < n && h->take[b])
            b++;
        if (read_rows(p, h->x, h->xname, c + a, b - a, h->width,
                      h->buf + a * h->width) < 0 ||
            (!has_target &&
             read_rows(p, h->t, h->tname, c + a, b - a, 1, h->tbuf + a) < 0))
            return -1;
        a = b;
    }
    for (size_t i = 0; i < n; i++) {
        if (!h->take[i])
            continue;
        const double *v = h->buf + i * h->width;
        double y = has_target ? 0 : h->tbuf[i];
        int bad = data_store_values(p, c + i, v, h->width, has_target, y,
                                    h->store[i]);
        if (bad < 0)
            return -1;
        char why[AIA_ERROR_LEN / 2];
        if (bad > 0 && (size_t)(bad - 1) < h->width)
            return aia_seterr(
                p->err, "%s: dataset '%s': row %zu, column %d: %s", p->o->path,
                h->xname, c + i + 1, bad,
                data_value_why(v[bad - 1], p->o->scale != 0 ? p->o->scale : 1,
                               why, sizeof why));
        if (bad > 0)
            return aia_seterr(p->err,
                              "%s: dataset '%s': row %zu: a target that is "
                              "not finite",
                              p->o->path, h->tname, c + i + 1);
    }
    return 0;
}

static int h5_pass(struct data_pass *p, struct h5 *h)
{
    const char *path = p->o->path;
    int nd;
    hsize_t dims[2] = {0, 0}, tdims[2] = {0, 0};
    if ((h->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return aia_seterr(p->err, "%s: cannot open as an HDF5 file", path);
    if ((h->x = H5Dopen2(h->file, h->xname, H5P_DEFAULT)) < 0)
        return aia_seterr(p->err, "%s: no dataset '%s' (give dataset)", path,
                          h->xname);
    if (dims_of(p, h->x, h->xname, &nd, dims) < 0)
        return -1;
    if (nd != 2)
        return aia_seterr(p->err, "%s: dataset '%s' is 1-D; rows need 2-D",
                          path, h->xname);
    h->rows = (size_t)dims[0];
    h->width = (size_t)dims[1];
    if (h->tname) {
        if ((h->t = H5Dopen2(h->file, h->tname, H5P_DEFAULT)) < 0)
            return aia_seterr(p->err, "%s: no dataset '%s' (targets)", path,
                              h->tname);
        if (dims_of(p, h->t, h->tname, &nd, tdims) < 0)
            return -1;
        if (tdims[0] != dims[0] || (nd == 2 && tdims[1] != 1))
            return aia_seterr(p->err,
                              "%s: dataset '%s': %ju targets for the %zu rows "
                              "of '%s'",
                              path, h->tname, (uintmax_t)tdims[0], h->rows,
                              h->xname);
    }
    int has_target = h->t < 0;
    if (h->width < 1 + (size_t)has_target)
        return aia_seterr(p->err, "%s: dataset '%s': %zu columns are too few",
                          path, h->xname, h->width);
    if (h->rows == 0)
        return 0; /* "no data rows", said by the caller */
    p->cols = h->width - (size_t)has_target;
    if ((has_target && data_target(p, h->width) < 0) ||
        data_build_init(p, p->cols) < 0)
        return -1;
    /* a width of 2^61 would wrap 8 * width around to a small buffer */
    size_t per = h->width <= BLOCK_BYTES / 8 ? BLOCK_BYTES / (8 * h->width) : 1,
           bytes;
    if (util_mul(per * h->width, sizeof *h->buf, &bytes) < 0)
        return aia_seterr(p->err,
                          "%s: dataset '%s': rows of %zu values: more than "
                          "memory can hold",
                          path, h->xname, h->width);
    h->buf = malloc(bytes);
    h->tbuf = malloc(per * sizeof *h->tbuf);
    h->take = malloc(per);
    h->store = malloc(per);
    if (!h->buf || !h->tbuf || !h->take || !h->store)
        return data_oom(p);
    for (size_t c = 0; c < h->rows; c += per)
        if (block(p, h, c, h->rows - c < per ? h->rows - c : per) < 0)
            return -1;
    return 0;
}

int data_hdf5_pass(struct data_pass *p)
{
    struct h5 h = {.file = -1, .x = -1, .t = -1};
    h.xname = p->o->dataset ? p->o->dataset : "x";
    h.tname = p->o->targets;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are ours to say */
    int rc = h5_pass(p, &h);
    if (h.t >= 0)
        H5Dclose(h.t);
    if (h.x >= 0)
        H5Dclose(h.x);
    if (h.file >= 0)
        H5Fclose(h.file);
    free(h.buf);
    free(h.tbuf);
    free(h.take);
    free(h.store);
    return rc;
}

int data_hdf5_shape(struct data_pass *p, double *rows, double *cols)
{
    const char *name = p->o->dataset ? p->o->dataset : "x";
    hsize_t dims[2] = {0, 0};
    int nd = -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(p->o->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t set = file < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
    hid_t space = set < 0 ? -1 : H5Dget_space(set);
    if (space >= 0 && (nd = H5Sget_simple_extent_ndims(space)) == 2)
        H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0)
        H5Sclose(space);
    if (set >= 0)
        H5Dclose(set);
    if (file >= 0)
        H5Fclose(file);
    if (nd != 2)
        return -1;
    *rows = (double)dims[0];
    *cols = (double)dims[1];
    return 0;
}

#else

int data_hdf5_pass(struct data_pass *p)
{
    return data_format_refuse(DATA_HDF5, p->o->path, p->err);
}

int data_hdf5_shape(struct data_pass *p, double *rows, double *cols)
{
    (void)rows;
    (void)cols;
    return data_format_refuse(DATA_HDF5, p->o->path, p->err);
}

#endif
