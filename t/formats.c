/* formats.c - the .npy, idx and HDF5 readers: each file read gives the
 * very table of the same rows written as CSV, rows kept by a selection
 * included, and every bad file is refused naming the file and the place. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "tap.h"

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef HAVE_HDF5
#include <hdf5.h>
#endif

#define R 7 /* rows */
#define D 3 /* features */

static char dir[] = "/tmp/aiarun-formats.XXXXXX";
static char paths[32][4200];
static int npaths;

static const char *path_of(const char *name)
{
    char *p = paths[npaths++ % 32];
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

static const char *put(const char *name, const void *bytes, size_t len)
{
    const char *p = path_of(name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
        bail_out("cannot write %s", p);
    return p;
}

/* The rows: feature j of row r, and its target (a class, 0..2). */
static double feat(int r, int j)
{
    return (r * 7 + j * 3) % 11 - 4 + 0.25 * j;
}

static double label(int r)
{
    return r % 3;
}

/* The same rows as CSV (values printed to round-trip), target last. */
static const char *csv_of(double scale)
{
    char text[4096], *w = text;
    for (int r = 0; r < R; r++) {
        for (int j = 0; j < D; j++)
            w += sprintf(w, "%.17g,", feat(r, j) * scale);
        w += sprintf(w, "%g\n", label(r));
    }
    return put("rows.csv", text, strlen(text));
}

/* A .npy file: header for descr and shape, then the values. */
static size_t npy_bytes(unsigned char *buf, int version, const char *descr,
                        const char *shape, const void *vals, size_t vbytes)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
    size_t pre = version == 1 ? 10 : 12;
    size_t hlen = (size_t)n + 1;
    while ((pre + hlen) % 64)
        hlen++;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 255);
    buf[9] = (unsigned char)(hlen >> 8);
    if (version > 1)
        buf[10] = buf[11] = 0;
    memset(buf + pre, ' ', hlen);
    memcpy(buf + pre, dict, (size_t)n);
    buf[pre + hlen - 1] = '\n';
    memcpy(buf + pre + hlen, vals, vbytes);
    return pre + hlen + vbytes;
}

static struct data_opts opts(int format, const char *path)
{
    struct data_opts o;
    data_opts_init(&o);
    o.format = format;
    o.path = path;
    return o;
}

static int same_table(const struct data_table *a, const struct data_table *b)
{
    if (a->d.rows != b->d.rows || a->d.cols != b->d.cols ||
        a->d.total_rows != b->d.total_rows || a->nnz != b->nnz) {
        diag("shape %zu x %zu (%zu) vs %zu x %zu (%zu)", a->d.rows, a->d.cols,
             a->d.total_rows, b->d.rows, b->d.cols, b->d.total_rows);
        return 0;
    }
    for (size_t i = 0; i < a->d.rows; i++) {
        if (a->d.y[i] != b->d.y[i] || a->d.row_ids[i] != b->d.row_ids[i])
            return 0;
        for (size_t j = 0; a->d.x && j < a->d.cols; j++)
            if (a->d.x[i * a->d.cols + j] != b->d.x[i * b->d.cols + j]) {
                diag("row %zu col %zu: %.17g vs %.17g", i, j,
                     a->d.x[i * a->d.cols + j], b->d.x[i * b->d.cols + j]);
                return 0;
            }
    }
    for (size_t k = 0; k < a->nnz; k++)
        if (a->d.col[k] != b->d.col[k] || a->d.val[k] != b->d.val[k])
            return 0;
    return 1;
}

static int odd(size_t r, void *arg)
{
    (void)arg;
    return r % 2 == 1;
}

/* Read o dense, sparse and every odd row; each must equal the CSV's. */
static void like_csv(struct data_opts o, double scale, const char *what)
{
    struct data_opts c = opts(DATA_CSV, csv_of(scale));
    c.header = DATA_HEADER_NO;
    struct data_table a, b;
    struct aia_error err;
    for (int sparse = 0; sparse < 2; sparse++) {
        o.sparse = c.sparse = sparse;
        int rc = data_read(&o, NULL, NULL, &a, &err);
        if (rc < 0)
            diag("%s", err.text);
        if (data_read(&c, NULL, NULL, &b, &err) < 0)
            bail_out("%s", err.text);
        ok(rc == 0 && same_table(&a, &b), "%s, %s: the CSV's rows", what,
           sparse ? "sparse" : "dense");
        data_free(&a);
        data_free(&b);
    }
    o.sparse = c.sparse = 0;
    int rc = data_read(&o, odd, NULL, &a, &err);
    if (data_read(&c, odd, NULL, &b, &err) < 0)
        bail_out("%s", err.text);
    ok(rc == 0 && a.d.rows == R / 2 && same_table(&a, &b),
       "%s: every odd row, as the CSV's", what);
    data_free(&a);
    data_free(&b);
    size_t rows, cols;
    ok(data_scan(&o, &rows, &cols, &err) == 0 && rows == R && cols == D,
       "%s: data_scan counts %d rows of %d features", what, R, D);
}

static const char *refused(const struct data_opts *o)
{
    static struct aia_error err;
    struct data_table t;
    size_t rows, cols;
    if (data_scan(o, &rows, &cols, &err) == 0)
        return "(accepted)";
    struct aia_error e2;
    if (data_read(o, NULL, NULL, &t, &e2) == 0) {
        data_free(&t);
        return "(data_read accepted it)";
    }
    return err.text;
}

/* What the build reads, and the refusal of a format it lacks the library
 * of, whichever libraries this build has. */
static void libraries(void)
{
#ifdef HAVE_ZLIB
    int zlib = 1;
#else
    int zlib = 0;
#endif
#ifdef HAVE_HDF5
    int hdf5 = 1;
#else
    int hdf5 = 0;
#endif
    ok(data_format_built(DATA_CSV) && data_format_built(DATA_NPY) &&
           data_format_built(DATA_BINARY) && data_format_built(DATA_LIBSVM),
       "csv, libsvm, binary and npy need no library");
    ok(!data_format_built(-1) && !data_format_built(99),
       "no format: not built");
    is_int(data_format_built(DATA_IDX), zlib,
           "idx is read iff built with zlib");
    is_int(data_format_built(DATA_HDF5), hdf5,
           "hdf5 is read iff built with libhdf5");
    struct aia_error err;
    is_int(data_format_refuse(DATA_HDF5, "d/x.h5", &err), -1,
           "the refusal of an HDF5 file fails");
    is_string(err.text,
              "d/x.h5: HDF5 files need libhdf5, and this aiarun was built "
              "without it (install libhdf5-dev and build again)",
              "naming the file, the library and the package");
    data_format_refuse(DATA_IDX, "t10k-labels-idx1-ubyte.gz", &err);
    is_string(err.text,
              "t10k-labels-idx1-ubyte.gz: idx files need zlib, and this "
              "aiarun was built without it (install zlib1g-dev and build "
              "again)",
              "an idx file's names zlib");
#ifndef HAVE_ZLIB
    struct data_opts o = opts(DATA_IDX, "/x-idx1-ubyte.gz");
    like(refused(&o),
         "x-idx1-ubyte.gz: idx files need zlib, and this aiarun was "
         "built without it",
         "idx: refused clearly by a build without zlib");
#endif
}

static void npy(void)
{
    unsigned char buf[4096];
    double v[R * (D + 1)], x[R * D];
    float xf[R * D];
    long long y[R];
    for (int r = 0; r < R; r++) {
        for (int j = 0; j < D; j++) {
            v[r * (D + 1) + j] = x[r * D + j] = feat(r, j);
            xf[r * D + j] = (float)feat(r, j);
        }
        v[r * (D + 1) + D] = label(r);
        y[r] = (long long)label(r);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "(%d, %d)", R, D + 1);
    size_t n = npy_bytes(buf, 1, "<f8", shape, v, sizeof v);
    struct data_opts o = opts(DATA_NPY, put("rows.npy", buf, n));
    like_csv(o, 1, "npy float64, v1.0, target column");
    is_int(data_format_guess(o.path), DATA_NPY, "npy: guessed from .npy");

    /* float32 rows, v2.0, int64 targets in a second file */
    snprintf(shape, sizeof shape, "(%d, %d)", R, D);
    n = npy_bytes(buf, 2, "<f4", shape, xf, sizeof xf);
    o = opts(DATA_NPY, put("x32.npy", buf, n));
    snprintf(shape, sizeof shape, "(%d,)", R);
    n = npy_bytes(buf, 1, "<i8", shape, y, sizeof y);
    const char *ypath = o.targets = put("y.npy", buf, n);
    like_csv(o, 1, "npy float32, v2.0, targets file"); /* exact in float */
    o.scale = 0.5;
    like_csv(o, 0.5, "npy with scale 0.5");

    /* refusals, each with its place */
    snprintf(shape, sizeof shape, "(%d, %d)", R, D);
    n = npy_bytes(buf, 1, "<f8", shape, x, sizeof x);
    buf[0] = 'X';
    o = opts(DATA_NPY, put("bad.npy", buf, n));
    o.targets = ypath;
    like(refused(&o), "bad.npy: byte 0: not a .npy file", "npy: bad magic");
    n = npy_bytes(buf, 1, "<c16", shape, x, sizeof x);
    o.path = put("bad.npy", buf, n);
    like(refused(&o), "bad.npy: byte 21: dtype '<c16' is not taken",
         "npy: a complex dtype, at its byte");
    n = npy_bytes(buf, 1, "<f8", shape, x, sizeof x - 8);
    o.path = put("bad.npy", buf, n);
    like(refused(&o),
         "bad.npy: byte 128: the shape (7 x 3 of 8 bytes) needs "
         "296 bytes in all, the file has 288",
         "npy: a short file");
    unsigned char *fo = buf;
    while (memcmp(fo, "False", 5) != 0)
        fo++;
    memcpy(fo, "True ", 5);
    o.path = put("bad.npy", buf, n + 8);
    like(refused(&o), "bad.npy: byte 44: fortran_order True",
         "npy: Fortran order");
    double nan = NAN;
    n = npy_bytes(buf, 1, "<f8", shape, x, sizeof x);
    memcpy(buf + 128 + 8 * (2 * D + 1), &nan, 8);
    o.path = put("bad.npy", buf, n);
    like(refused(&o), "bad.npy: row 3, column 2 (byte 184): NaN",
         "npy: NaN, at its row, column and byte");
    n = npy_bytes(buf, 1, "<f8", "(7, 3)", x, sizeof x);
    o.path = put("ok.npy", buf, n);
    n = npy_bytes(buf, 1, "<i8", "(6,)", y, sizeof y - 8);
    o.targets = put("y6.npy", buf, n);
    like(refused(&o), "y6.npy: 6 targets for the 7 rows of",
         "npy: targets of another length");
}

/* A float64 .npy value beyond a float's range, rows kept as floats
 * (precision: float32): refused at its row, column and byte, unless the
 * scale brings it within range. */
static void npy_float32(void)
{
    double x[2 * 3] = {1, 2, 0, -3.5e38, 5, 1};
    unsigned char buf[512];
    size_t n = npy_bytes(buf, 1, "<f8", "(2, 3)", x, sizeof x);
    struct data_opts o = opts(DATA_NPY, put("big.npy", buf, n));
    o.float32 = 1;
    like(refused(&o),
         "big.npy: row 2, column 1 (byte 152): -3.5e+38 is "
         "beyond float32's range",
         "npy float64: -3.5e38 refused for float32 at its byte");
    x[3] = 2e38;
    n = npy_bytes(buf, 1, "<f8", "(2, 3)", x, sizeof x);
    o = opts(DATA_NPY, put("big.npy", buf, n));
    o.float32 = 1;
    o.scale = 2;
    like(refused(&o),
         "big.npy: row 2, column 1 (byte 152): 2e+38 times problem.scale 2 "
         "is beyond float32's range",
         "npy: a value the scale takes beyond range, the scale named");
    x[3] = -3.5e38;
    n = npy_bytes(buf, 1, "<f8", "(2, 3)", x, sizeof x);
    o = opts(DATA_NPY, put("big.npy", buf, n));
    o.float32 = 1;
    o.scale = 0.5;
    struct data_table t;
    struct aia_error err;
    int rc = data_read(&o, NULL, NULL, &t, &err);
    ok(rc == 0 && t.d.x[2] == -1.75e38,
       "npy: scaled into a float's range, it is kept");
    if (rc == 0)
        data_free(&t);
}

#ifdef HAVE_ZLIB
static const char *gz(const char *name, const unsigned char *b, size_t n,
                      int compress)
{
    if (!compress)
        return put(name, b, n);
    const char *p = path_of(name);
    gzFile f = gzopen(p, "wb");
    if (!f || gzwrite(f, b, (unsigned)n) != (int)n || gzclose(f) != Z_OK)
        bail_out("cannot write %s", p);
    return p;
}

static void idx(void)
{
    /* images R x 1 x D of unsigned bytes, labels R */
    unsigned char img[16 + R * D], lab[8 + R];
    memcpy(img, "\0\0\x08\x03", 4);
    memcpy(lab, "\0\0\x08\x01", 4);
    unsigned char dims[12] = {0, 0, 0, R, 0, 0, 0, 1, 0, 0, 0, D};
    memcpy(img + 4, dims, 12);
    memcpy(lab + 4, dims, 4);
    for (int r = 0; r < R; r++) {
        lab[8 + r] = (unsigned char)label(r);
        for (int j = 0; j < D; j++)
            img[16 + r * D + j] = (unsigned char)(feat(r, j) * 4 + 40);
    }
    /* the CSV of those bytes: feat(r, j) * 4 + 40 is a whole number */
    char text[4096], *w = text;
    for (int r = 0; r < R; r++) {
        for (int j = 0; j < D; j++)
            w += sprintf(w, "%.17g,", (feat(r, j) * 4 + 40) * (1.0 / 255));
        w += sprintf(w, "%g\n", label(r));
    }
    for (int compress = 1; compress >= 0; compress--) {
        struct data_opts o =
            opts(DATA_IDX, gz(compress ? "img-idx3-ubyte.gz" : "img-idx3-ubyte",
                              img, sizeof img, compress));
        o.targets = gz(compress ? "lab-idx1-ubyte.gz" : "lab-idx1-ubyte", lab,
                       sizeof lab, compress);
        o.scale = 1.0 / 255;
        struct data_opts c = opts(DATA_CSV, put("idx.csv", text, strlen(text)));
        c.header = DATA_HEADER_NO;
        struct data_table a, b;
        struct aia_error err;
        int rc = data_read(&o, NULL, NULL, &a, &err);
        if (rc < 0)
            diag("%s", err.text);
        if (data_read(&c, NULL, NULL, &b, &err) < 0)
            bail_out("%s", err.text);
        ok(rc == 0 && same_table(&a, &b),
           "idx%s: the CSV's rows (pixels scaled by 1/255, labels as "
           "targets)",
           compress ? " (gzip)" : "");
        data_free(&a);
        data_free(&b);
        is_int(data_format_guess(o.path), DATA_IDX, "idx: guessed from %s",
               compress ? "-ubyte.gz" : "-ubyte");
    }
    struct data_opts o =
        opts(DATA_IDX, gz("short-idx3-ubyte.gz", img, sizeof img - 4, 1));
    o.targets = gz("lab-idx1-ubyte.gz", lab, sizeof lab, 1);
    like(refused(&o),
         "short-idx3-ubyte.gz: byte 33: the data end in row 6 "
         "of the 7",
         "idx: a short file, at its byte (uncompressed)");
    unsigned char bad[sizeof img];
    memcpy(bad, img, sizeof img);
    bad[2] = 0x07;
    o.path = gz("type-idx3-ubyte.gz", bad, sizeof bad, 1);
    like(refused(&o), "type-idx3-ubyte.gz: byte 2: type 0x07",
         "idx: an unknown type");
    o.path = gz("img-idx3-ubyte.gz", img, sizeof img, 1);
    o.targets = gz("lab6-idx1-ubyte.gz", lab, sizeof lab - 1, 1);
    like(refused(&o), "lab6-idx1-ubyte.gz: byte 14: the data end in row 7",
         "idx: fewer labels than the header says");
    o.targets = NULL;
    {
        struct data_table a;
        struct aia_error err;
        int rc = data_read(&o, NULL, NULL, &a, &err), zero = rc == 0;
        if (rc < 0)
            diag("%s", err.text);
        for (size_t i = 0; zero && i < a.d.rows; i++)
            zero = a.d.y[i] == 0 && a.d.cols == D;
        ok(zero && a.d.rows == R,
           "idx: no labels file: the rows, every target 0 (for pca)");
        if (rc == 0)
            data_free(&a);
    }
    o.targets = o.path;
    like(refused(&o), "img-idx3-ubyte.gz: byte 3: 3 dimensions; targets need 1",
         "idx: images given as labels");
}
#endif

#ifdef HAVE_HDF5
static void hdf5(void)
{
    const char *p = path_of("rows.h5");
    double x[R * D], v[R * (D + 1)], y[R];
    for (int r = 0; r < R; r++) {
        for (int j = 0; j < D; j++)
            v[r * (D + 1) + j] = x[r * D + j] = feat(r, j);
        v[r * (D + 1) + D] = y[r] = label(r);
    }
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d2[2] = {R, D}, d3[2] = {R, D + 1}, d1[1] = {R};
    struct {
        const char *name;
        int nd;
        hsize_t *dims;
        const double *vals;
    } sets[] = {{"x", 2, d2, x}, {"y", 1, d1, y}, {"xy", 2, d3, v}};
    for (int i = 0; i < 3; i++) {
        hid_t s = H5Screate_simple(sets[i].nd, sets[i].dims, NULL);
        hid_t d = H5Dcreate2(f, sets[i].name, H5T_IEEE_F64LE, s, H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                 sets[i].vals);
        H5Dclose(d);
        H5Sclose(s);
    }
    H5Fclose(f);
    struct data_opts o = opts(DATA_HDF5, p);
    o.targets = "y";
    like_csv(o, 1, "hdf5, targets dataset");
    o.targets = NULL;
    o.dataset = "xy";
    like_csv(o, 1, "hdf5, target column");
    is_int(data_format_guess(p), DATA_HDF5, "hdf5: guessed from .h5");
    o.dataset = "nope";
    like(refused(&o), "rows.h5: no dataset 'nope'", "hdf5: a missing dataset");
    o.dataset = "y";
    like(refused(&o), "rows.h5: dataset 'y' is 1-D", "hdf5: 1-D rows");
    x[4] = 1e39;
    p = path_of("big.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(2, d2, NULL);
    hid_t d = H5Dcreate2(f, "x", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
    o = opts(DATA_HDF5, p);
    o.target = "0";
    o.float32 = 1;
    like(refused(&o),
         "big.h5: dataset 'x': row 2, column 2: 1e+39 is "
         "beyond float32's range",
         "hdf5 float64: 1e39 refused for float32 at its row and column");
    o.target = "1";
    struct data_table t;
    struct aia_error err;
    int rc = data_read(&o, NULL, NULL, &t, &err);
    ok(rc == 0 && t.d.y[1] == 1e39, "hdf5: the same value as a target is kept");
    if (rc == 0)
        data_free(&t);
    o.path = put("not.h5", "text", 4);
    o.dataset = NULL;
    like(refused(&o), "not.h5: cannot open as an HDF5 file",
         "hdf5: not an HDF5 file");
}
#endif

int main(void)
{
    if (!mkdtemp(dir))
        bail_out("mkdtemp failed");
    npy();
    npy_float32();
#ifdef HAVE_ZLIB
    idx();
#else
    ok(1, "# SKIP idx: built without zlib");
#endif
#ifdef HAVE_HDF5
    hdf5();
#else
    struct data_opts o = opts(DATA_HDF5, "/x.h5");
    like(refused(&o),
         "x.h5: HDF5 files need libhdf5, and this aiarun was "
         "built without it",
         "hdf5: refused clearly by a build without libhdf5");
#endif
    libraries();
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return done_testing();
}
