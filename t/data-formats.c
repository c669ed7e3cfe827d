/* data-formats.c - the libsvm and binary readers (binary's refusals
 * included), row selection by keep(), data_scan's counts, the example
 * files and the format a file's name gives.  The CSV reader and the
 * refusals of CSV, libsvm and .npy files: t/data.c. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "datatest.h"
#include "tap.h"

struct block {
    size_t lo, hi, calls, last;
};

static int in_block(size_t r, void *arg)
{
    struct block *b = arg;
    b->calls++;
    b->last = r;
    return r >= b->lo && r < b->hi;
}

static int every_third(size_t r, void *arg)
{
    (void)arg;
    return r % 3 == 1;
}

static int none(size_t r, void *arg)
{
    (void)r;
    (void)arg;
    return 0;
}

/* keep() on a file whose row r holds r in every column. */
static void selection(int format)
{
    char text[4096] = "", *w = text;
    const char *name = format == DATA_CSV ? "k.csv" : "k.svm";
    if (format == DATA_CSV)
        w += sprintf(w, "a,b,y\n");
    for (int r = 0; r < 10; r++)
        w += sprintf(w, format == DATA_CSV ? "%d,%d,%d\n" : "%d 1:%d 2:%d\n", r,
                     r, r);
    struct data_opts o = opts(format, put(name, text, 0));
    o.features = 2;
    struct data_table t;
    struct aia_error err;
    struct block b = {3, 7, 0, 0};
    int rc = data_read(&o, in_block, &b, &t, &err);
    ok(rc == 0 && t.d.rows == 4 && t.d.total_rows == 10 && t.d.cols == 2,
       "%s: a block keeps its rows; total_rows counts the file", name);
    ok(rc == 0 && t.d.row_ids[0] == 3 && t.d.row_ids[3] == 6 &&
           same(t.d.y, (double[]){3, 4, 5, 6}, 4) && t.d.x &&
           t.d.x[2 * 3 + 1] == 6,
       "%s: with their ids and values", name);
    ok(b.calls == 10 && b.last == 9, "%s: keep is asked once per row", name);
    data_free(&t);
    rc = data_read(&o, every_third, NULL, &t, &err);
    ok(rc == 0 && t.d.rows == 3 && t.d.row_ids[0] == 1 && t.d.row_ids[1] == 4 &&
           t.d.row_ids[2] == 7 && same(t.d.y, (double[]){1, 4, 7}, 3),
       "%s: every third row, with its ids", name);
    data_free(&t);
    for (o.sparse = 0; o.sparse < 2; o.sparse++) {
        rc = data_read(&o, none, NULL, &t, &err);
        ok(rc == 0 && t.d.rows == 0 && t.d.total_rows == 10 && t.d.y &&
               t.d.row_ids &&
               (o.sparse ? t.d.row_start && t.d.row_start[0] == 0 && t.d.col
                         : t.d.x != NULL),
           "%s: no row kept is an empty %s table, arrays allocated", name,
           o.sparse ? "sparse" : "dense");
        data_free(&t);
    }
}

static void libsvm(void)
{
    const char *path = put("s.svm",
                           "# a comment line\n"
                           "1 1:2 3:4.5 # a comment\n"
                           "-1\t2:5\n"
                           "+0\n",
                           0);
    struct data_opts o = opts(DATA_LIBSVM, path);
    struct data_table t;
    get(&o, &t);
    ok(t.d.rows == 3 && t.d.cols == 3 && t.d.total_rows == 3,
       "libsvm: rows, and features up to the largest index");
    ok(t.d.x && same(t.d.x, (double[]){2, 0, 4.5, 0, 5, 0, 0, 0, 0}, 9),
       "libsvm dense: index i is column i - 1, absent is 0");
    ok(same(t.d.y, (double[]){1, -1, 0}, 3), "libsvm: the labels are y");
    data_free(&t);
    o.sparse = 1;
    get(&o, &t);
    ok(!t.d.x && t.nnz == 3 && t.d.row_start[1] == 2 && t.d.row_start[2] == 3 &&
           t.d.row_start[3] == 3,
       "libsvm sparse: row starts, an empty row included");
    ok(t.d.col[0] == 0 && t.d.col[1] == 2 && t.d.col[2] == 1 &&
           same(t.d.val, (double[]){2, 4.5, 5}, 3),
       "libsvm sparse: 0-based columns and values");
    data_free(&t);
    o.features = 5;
    o.sparse = 0;
    get(&o, &t);
    ok(t.d.cols == 5 && t.d.x[5 + 1] == 5, "libsvm: features sets the width");
    data_free(&t);
}

static void binary(void)
{
    unsigned char bytes[6 * 8];
    double v[6] = {1, 0, 3, 4, -5.25, 1e-300};
    for (int i = 0; i < 6; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        for (int k = 0; k < 8; k++)
            bytes[8 * i + k] = (unsigned char)(u >> (8 * k));
    }
    struct data_opts o = opts(DATA_BINARY, put("b.bin", bytes, sizeof bytes));
    o.cols = 3;
    struct data_table t;
    get(&o, &t);
    ok(t.d.rows == 2 && t.d.cols == 2 && same(t.d.x, v, 2) && t.d.x[2] == 4 &&
           t.d.x[3] == -5.25 && same(t.d.y, (double[]){3, 1e-300}, 2),
       "binary: little-endian rows, the last value the target");
    data_free(&t);
    o.target = "0";
    o.rows = 2;
    o.sparse = 1;
    get(&o, &t);
    ok(t.d.y[1] == 4 && t.nnz == 3 && t.d.row_start[1] == 1 &&
           t.d.col[0] == 1 && t.d.val[0] == 3,
       "binary: target 0, given rows, sparse without the zeros");
    data_free(&t);
    size_t rows, cols;
    struct aia_error err;
    ok(data_scan(&o, &rows, &cols, &err) == 0 && rows == 2 && cols == 2,
       "binary: data_scan counts");
    o.rows = 3;
    like(refuse(&o), "b.bin: 48 bytes hold 2 rows of 3 float64 values, not 3",
         "binary: rows that disagree with the size");
    o.rows = 0;
    o.cols = 5;
    like(refuse(&o),
         "b.bin: 48 bytes is not a whole number of rows of 5 "
         "float64 values",
         "binary: a size that is not whole rows");
    o.cols = 0;
    like(refuse(&o), "b.bin: a binary file needs cols", "binary: no cols");
    o.cols = 3;
    o.target = "y";
    like(refuse(&o), "target 'y' is a name, but the file has no header",
         "binary: a target name");
    o.target = NULL;
    double nan = NAN;
    memcpy(bytes + 4 * 8, &nan, 8);
    o.path = put("n.bin", bytes, sizeof bytes);
    like(refuse(&o), "n.bin: row 2, column 2 (byte 32): NaN is not allowed",
         "binary: NaN names row, column and byte");
    o.path = put("e.bin", "", 0);
    like(refuse(&o), "e.bin: no data rows", "binary: an empty file");
}

static void scan_counts(void)
{
    size_t rows = 0, cols = 0;
    struct aia_error err;
    struct data_opts o = csv("a,b,c,y\n1,2,3,4\n5,6,7,8\n9,10,11,12\n\n");
    ok(data_scan(&o, &rows, &cols, &err) == 0 && rows == 3 && cols == 3,
       "data_scan: csv rows and features");
    o = opts(DATA_LIBSVM, put("c.svm", "1 2:1\n2 7:1\n3\n", 0));
    ok(data_scan(&o, &rows, &cols, &err) == 0 && rows == 3 && cols == 7,
       "data_scan: libsvm features are the largest index");
    o.features = 9;
    ok(data_scan(&o, &rows, &cols, &err) == 0 && cols == 9,
       "data_scan: or the given features");
    o = csv("a,y\n1,2\n2,x\n3,4\n");
    ok(data_scan(&o, &rows, &cols, &err) < 0, "data_scan checks every row ...");
    struct block b = {2, 3, 0, 0};
    struct data_table t;
    ok(data_read(&o, in_block, &b, &t, &err) == 0 && t.d.rows == 1 &&
           t.d.total_rows == 3,
       "... and data_read only the rows it keeps");
    data_free(&t);
}

/* The example files: the three lr formats hold the same numbers. */
static void examples(void)
{
    const char *top = getenv("top_srcdir");
    char p1[4096], p2[4096], p3[4096], p4[4096];
    snprintf(p1, sizeof p1, "%s/etc/data/lr.csv", top ? top : ".");
    snprintf(p2, sizeof p2, "%s/etc/data/lr.svm", top ? top : ".");
    snprintf(p3, sizeof p3, "%s/etc/data/lr.bin", top ? top : ".");
    snprintf(p4, sizeof p4, "%s/etc/data/logreg.csv", top ? top : ".");
    struct data_table c, s, b, z, g;
    struct data_opts o = opts(DATA_CSV, p1);
    get(&o, &c);
    o = opts(DATA_LIBSVM, p2);
    o.features = 8;
    get(&o, &s);
    o.sparse = 1;
    get(&o, &z);
    o = opts(DATA_BINARY, p3);
    o.cols = 9;
    get(&o, &b);
    ok(c.d.rows == 2000 && c.d.cols == 8 && s.d.rows == 2000 &&
           b.d.rows == 2000 && b.d.cols == 8,
       "lr: 2000 rows of 8 features in each format");
    ok(same(c.d.x, s.d.x, 2000 * 8) && same(c.d.y, s.d.y, 2000),
       "lr.csv and lr.svm agree row by row");
    ok(same(c.d.x, b.d.x, 2000 * 8) && same(c.d.y, b.d.y, 2000),
       "lr.csv and lr.bin agree row by row");
    size_t zeros = 0;
    for (size_t k = 0; k < 2000 * 8; k++)
        zeros += c.d.x[k] == 0;
    ok(z.nnz == 2000 * 8 - zeros && zeros > 2000 * 8 / 4 &&
           zeros < 2000 * 8 * 35 / 100,
       "lr.svm leaves out the zeros, about 30%% of the values (%zu)", zeros);
    o = opts(DATA_CSV, p4);
    get(&o, &g);
    const double w[5] = {1, -1, 0.5, 2, -0.5};
    size_t ones = 0, bad = 0;
    for (size_t i = 0; i < g.d.rows; i++) {
        double f = 0.25;
        for (int j = 0; j < 5; j++)
            f += w[j] * g.d.x[5 * i + j];
        ones += g.d.y[i] == 1;
        bad += (g.d.y[i] != (f > 0)) || fabs(f) < 0.25;
    }
    ok(g.d.rows == 1000 && g.d.cols == 5 && ones > 300 && ones < 700,
       "logreg: 1000 rows of 5 features, both labels (%zu ones)", ones);
    is_int((long long)bad, 0,
           "logreg: labels are the side of w.x + b, with a margin of 0.25");
    data_free(&c);
    data_free(&s);
    data_free(&z);
    data_free(&b);
    data_free(&g);
}

int main(void)
{
    datatest_begin();
    selection(DATA_CSV);
    selection(DATA_LIBSVM);
    libsvm();
    binary();
    scan_counts();
    examples();
    is_int(data_format_guess("a/b.CSV"), DATA_CSV, "format of .csv");
    is_int(data_format_guess("x.svm"), DATA_LIBSVM, "format of .svm");
    is_int(data_format_guess("x.bin"), DATA_BINARY, "format of .bin");
    is_int(data_format_guess("x.yaml"), -1, "no format for other names");
    datatest_end();
    return done_testing();
}
