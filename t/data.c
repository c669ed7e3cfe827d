/* data.c - the data file readers: values, layouts, row selection and the
 * place named by every refusal. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "tap.h"

static char dir[] = "/tmp/aiarun-data.XXXXXX";
static char *made[64];
static int nmade;

/* Write len bytes (len 0: strlen) to dir/name; returns the path. */
static const char *put(const char *name, const void *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int i = 0;
    while (i < nmade && strcmp(made[i], path) != 0)
        i++;
    if (i == nmade) {
        if (nmade == 64 || !(made[i] = strdup(path)))
            bail_out("too many files");
        nmade++;
    }
    FILE *f = fopen(path, "wb");
    if (!len)
        len = strlen(bytes);
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
        bail_out("cannot write %s", path);
    return made[i];
}

static struct data_opts opts(int format, const char *path)
{
    struct data_opts o;
    data_opts_init(&o);
    o.format = format;
    o.path = path;
    return o;
}

static struct data_opts csv(const char *text)
{
    return opts(DATA_CSV, put("t.csv", text, 0));
}

/* Read every row, or stop the test run. */
static void get(const struct data_opts *o, struct data_table *t)
{
    struct aia_error err;
    if (data_read(o, NULL, NULL, t, &err) < 0)
        bail_out("%s", err.text);
}

/* The error of a file that data_scan and data_read must both refuse with
 * the same message. */
static const char *refuse(const struct data_opts *o)
{
    static struct aia_error e1;
    struct aia_error e2;
    struct data_table t;
    size_t rows, cols;
    if (data_scan(o, &rows, &cols, &e1) == 0)
        return "(data_scan accepted it)";
    if (data_read(o, NULL, NULL, &t, &e2) == 0) {
        data_free(&t);
        return "(data_read accepted it)";
    }
    if (t.d.rows || t.x || t.y || t.source)
        return "(a refused read left the table filled)";
    if (strcmp(e1.text, e2.text) != 0)
        return "(data_scan and data_read differ)";
    return e1.text;
}

static const char *refuse_csv(const char *text)
{
    struct data_opts o = csv(text);
    return refuse(&o);
}

static int same(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            diag("entry %zu: %.17g != %.17g", i, a[i], b[i]);
            return 0;
        }
    return 1;
}

static void dense_csv(void)
{
    struct data_table t;
    struct data_opts o = csv("a,b,y\n1,2,3\n4,-5.5e1,6\n");
    get(&o, &t);
    is_int((long long)t.d.rows, 2, "csv: the data rows, header excluded");
    is_int((long long)t.d.cols, 2, "csv: the features, target excluded");
    is_int((long long)t.d.total_rows, 2, "csv: total_rows is every row");
    ok(t.d.x && same(t.d.x, (double[]){1, 2, 4, -55}, 4),
       "csv: dense features, row-major");
    ok(same(t.d.y, (double[]){3, 6}, 2), "csv: the last column is y");
    ok(t.d.row_ids[0] == 0 && t.d.row_ids[1] == 1, "csv: row ids from 0");
    ok(!t.d.row_start && !t.d.col && !t.d.val, "csv: no CSR when dense");
    is_string(t.d.source, o.path, "the source is the path");
    data_free(&t);
    ok(!t.d.x && !t.source && t.d.rows == 0, "data_free empties the table");

    o = csv("0,2,3\n4,0,6\n0,0,1\n");
    o.sparse = 1;
    get(&o, &t);
    ok(t.d.x == NULL && t.d.row_start && t.nnz == 2,
       "csv sparse: CSR without the zeros");
    ok(t.d.row_start[0] == 0 && t.d.row_start[1] == 1 &&
           t.d.row_start[2] == 2 && t.d.row_start[3] == 2,
       "csv sparse: row starts");
    ok(t.d.col[0] == 1 && t.d.col[1] == 0 && t.d.val[0] == 2 && t.d.val[1] == 4,
       "csv sparse: columns and values");
    ok(same(t.d.y, (double[]){3, 6, 1}, 3), "csv sparse: targets");
    data_free(&t);
}

static void headers_and_targets(void)
{
    struct data_table t;
    struct data_opts o = csv("1,2,3\n4,5,6\n");
    get(&o, &t);
    is_int((long long)t.d.rows, 2, "auto: a first row of numbers is data");
    data_free(&t);
    o = csv("1,2,3\n1,2,3\n4,5,6\n");
    o.header = DATA_HEADER_YES;
    get(&o, &t);
    ok(t.d.rows == 2 && t.d.y[0] == 3 && t.d.row_ids[0] == 0,
       "header: yes makes a row of numbers the header");
    data_free(&t);
    o = csv("a,b,c\n1,2,3\n");
    o.header = DATA_HEADER_NO;
    like(refuse(&o), "t.csv:1:1: column 1: 'a' is not a number",
         "header: no reads the names as data, and refuses them");
    o = csv("x,,y\n1,2,3\n");
    get(&o, &t);
    is_int((long long)t.d.rows, 1,
           "auto: one name makes a header, even beside an empty cell");
    data_free(&t);
    like(refuse_csv(",2,3\n4,5,6\n"), "t.csv:1:1: column 1: empty cell",
         "auto: numbers and empty cells are a row");

    const char *text = "a,b,y\n1,2,3\n4,5,6\n";
    struct {
        const char *target;
        double y0, x01;
    } cases[] = {{"a", 1, 3},  {"b", 2, 3},  {"0", 1, 3}, {"1", 2, 3},
                 {"-1", 3, 2}, {"-3", 1, 3}, {"y", 3, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o = csv(text);
        o.target = cases[i].target;
        get(&o, &t);
        ok(t.d.y[0] == cases[i].y0 && t.d.x[1] == cases[i].x01 && t.d.cols == 2,
           "target '%s' picks its column, the rest are features in order",
           cases[i].target);
        data_free(&t);
    }
    o = csv("a,2,y\n1,2,3\n");
    o.target = "2";
    get(&o, &t);
    ok(t.d.y[0] == 2, "a header name wins over an index that reads the same");
    data_free(&t);
    o = csv(text);
    o.target = "zz";
    like(refuse(&o), "t.csv: no column 'zz' in the header: a, b, y",
         "an unknown target name lists the columns");
    o.target = "3";
    like(refuse(&o), "target 3 is out of range: 3 columns (0 to 2, or -3 to",
         "a target index past the end is refused");
    o.target = "-4";
    like(refuse(&o), "target -4 is out of range", "and one before the start");
    o = csv("1,2,3\n");
    o.target = "y";
    like(refuse(&o), "target 'y' is a name, but the file has no header",
         "a target name needs a header");
    o = csv("\"a,1\",\"b \"\"q\"\"\",y\n1,2,3\n4,x,6\n");
    o.target = "a,1";
    like(refuse(&o), "t.csv:3:3: column 2 ('b \"q\"'): 'x' is not a number",
         "quoted header names: delimiters and doubled quotes inside");
    o = csv("\"a,1\",b,y\n1,2,3\n");
    o.target = "a,1";
    get(&o, &t);
    ok(t.d.y[0] == 1, "a quoted name is a target name");
    data_free(&t);
    o = csv("\xef\xbb\xbfname,y\n1,2\n");
    o.target = "name";
    get(&o, &t);
    ok(t.d.y[0] == 1, "a byte order mark is skipped");
    data_free(&t);
}

static void delimiters_and_lines(void)
{
    struct {
        const char *what, *text;
        char delim;
    } cases[] = {
        {"commas", "a,b,y\n1,2,3\n4,5,6\n", 0},
        {"semicolons", "a;b;y\n1;2;3\n4;5;6\n", 0},
        {"tabs", "a\tb\ty\n1\t2\t3\n4\t5\t6\n", 0},
        {"runs of blanks", "  a  b   y\n1 2 \t 3  \n\t4 5 6\n", 0},
        {"blanks around cells", "a , b,y\n 1 ,\t2, 3\n4,5 ,6\n", 0},
        {"an explicit '|'", "a|b|y\n1|2|3\n4|5|6\n", '|'},
        {"an explicit ','", "a;1,b,y\n1,2,3\n4,5,6\n", ','},
        {"an explicit tab", "a 1\tb\ty\n1\t2\t3\n 4 \t5\t6\n", '\t'},
        {"an explicit ' '", "a b  y\n1 2\t3\n4  5 6\n", ' '},
        {"an explicit ';' beside commas", "a,1;b;y\n1;2;3\n4;5;6\n", ';'},
        {"CRLF line ends", "a,b,y\r\n1,2,3\r\n4,5,6\r\n", 0},
        {"no final line end", "a,b,y\n1,2,3\n4,5,6", 0},
        {"CRLF and no final line end", "a,b,y\r\n1,2,3\r\n4,5,6", 0},
        {"blank lines at the end", "a,b,y\n1,2,3\n4,5,6\n\n  \r\n\n", 0},
        {"quoted numbers", "a,b,y\n\"1\",2,3\n4,5,\"6\"\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct data_table t;
        struct data_opts o = csv(cases[i].text);
        o.delimiter = cases[i].delim;
        get(&o, &t);
        ok(t.d.rows == 2 && t.d.cols == 2 &&
               same(t.d.x, (double[]){1, 2, 4, 5}, 4) &&
               same(t.d.y, (double[]){3, 6}, 2),
           "csv with %s", cases[i].what);
        data_free(&t);
    }

    /* one row of 5000 columns, far longer than any buffer */
    size_t n = 5000;
    char *text = malloc(n * 24 + 2), *w = text;
    for (size_t j = 0; j < n; j++)
        w += sprintf(w, "%s%.17g", j ? "," : "", 0.5 * (double)j + 1e-3);
    strcpy(w, "\n");
    struct data_table t;
    struct data_opts o = csv(text);
    get(&o, &t);
    ok(t.d.rows == 1 && t.d.cols == n - 1, "a line of 5000 cells is one row");
    ok(t.d.x[0] == 1e-3 && t.d.x[n - 2] == 0.5 * (double)(n - 2) + 1e-3 &&
           t.d.y[0] == 0.5 * (double)(n - 1) + 1e-3,
       "with its first and last values");
    data_free(&t);
    free(text);
}

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

static void refusals(void)
{
    like(refuse_csv("a,b,y\n1,2,3\n4,5,abc\n"),
         "t.csv:3:5: column 3 ('y'): 'abc' is not a number",
         "a bad cell: file, line, column, the column's name");
    like(refuse_csv("1,2,3\n4,abc,6\n"), "t.csv:2:3: column 2: 'abc'",
         "and without a header, its number");
    like(refuse_csv("a,b,y\n1,2,3\n4,5\n"),
         "t.csv:3: 2 cells, but the header has 3", "a short row");
    like(refuse_csv("1,2,3\n4,5,6,7\n"), "t.csv:2: 4 cells, but line 1 has 3",
         "a long row, without a header");
    like(refuse_csv("a,b,y\n1,,3\n"), "t.csv:2:3: column 2 ('b'): empty cell",
         "an empty cell");
    like(refuse_csv("a,b,y\n1,2,3\n1,2,\n"),
         "t.csv:3:5: column 3 ('y'): empty cell", "an empty last cell");
    like(refuse_csv("a,b,y\n1,nan,3\n"),
         "t.csv:2:3: column 2 ('b'): NaN is not allowed", "NaN");
    like(refuse_csv("a,b,y\n1,-inf,3\n"), "infinity is not allowed",
         "infinity");
    like(refuse_csv("a,b,y\n1,1e999,3\n"), "'1e999' is too large for a double",
         "overflow");
    like(refuse_csv("a,b,y\n"), "t.csv: no data rows", "a header only");
    like(refuse_csv(""), "t.csv: no data rows", "an empty file");
    like(refuse_csv("\n\n"), "t.csv: no data rows", "blank lines only");
    like(refuse_csv("a,b,y\n1,2,3\n\n \n4,5,6\n"),
         "t.csv:3: empty line (empty lines are allowed only at the end",
         "a blank line inside");
    like(refuse_csv("y\n1\n"), "t.csv:1: one column only", "one column");
    like(refuse_csv("a,b,y\n1,\"2,3\n"), "t.csv:2:3: a quote is not closed",
         "an open quote");
    like(refuse_csv("a,b,y\n1,\"2\"x,3\n"), "t.csv:2:6: text after a closing",
         "text after a quote");
    like(refuse(&(struct data_opts){.path = put("z.csv", "a,b\n1\0,2\n", 9),
                                    .header = DATA_HEADER_AUTO}),
         "z.csv:2:2: a NUL byte", "a NUL byte");
    struct data_opts o = csv("a,y\n1,2\n");
    o.path = "/nonexistent/t.csv";
    like(refuse(&o), "/nonexistent/t.csv: cannot open", "a missing file");

    struct {
        const char *text, *want, *what;
        size_t features;
    } svm[] = {
        {"abc 1:2\n", "s.svm:1:1: label: 'abc' is not a number", "bad label",
         0},
        {"1 1:2\nnan 1:2\n", "s.svm:2:1: label: NaN", "NaN label", 0},
        {"1 1:2 3\n", "s.svm:1:7: '3' is not index:value", "missing ':'", 0},
        {"1 0:2\n", "s.svm:1:3: index 0: indices count from 1", "index 0", 0},
        {"1 3:1 2:1\n", "s.svm:1:7: index 2 after 3: indices must increase",
         "decreasing indices", 0},
        {"1 3:1 3:1\n", "index 3 after 3", "a repeated index", 0},
        {"1 1:1 3:1\n", "s.svm:1:7: index 3 is above the 2 features",
         "an index above features", 2},
        {"1 2:x\n", "s.svm:1:5: index 2: 'x' is not a number", "bad value", 0},
        {"1 2:\n", "s.svm:1:5: index 2: no value after ':'", "no value", 0},
        {"1 2:inf\n", "index 2: infinity is not allowed", "infinite value", 0},
        {"1 x:1\n", "s.svm:1:3: 'x' is not an index", "bad index", 0},
        {"1 99999999999:1\n", "is too large", "huge index", 0},
        {"# nothing\n", "s.svm: no data rows", "comments only", 0},
        {"1\n2\n", "s.svm: no features in the rows read", "no features", 0},
    };
    for (size_t i = 0; i < sizeof svm / sizeof svm[0]; i++) {
        o = opts(DATA_LIBSVM, put("s.svm", svm[i].text, 0));
        o.features = svm[i].features;
        like(refuse(&o), svm[i].want, "libsvm: %s", svm[i].what);
    }
    o.target = "0";
    like(refuse(&o), "a libsvm file's target is its label",
         "libsvm: no target option");
}

/* A .npy file whose shape's byte count wraps around 2^64: (1, 2^61 + 1)
 * values of 8 bytes "need" 8, which the file has.  It was read past its
 * buffer (rank 0 died of SIGSEGV with no message). */
static void wraps(void)
{
    char head[128];
    const char *dict = "{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (1, 2305843009213693953), }";
    size_t hlen = 64 - 10;
    while (10 + hlen < strlen(dict) + 11)
        hlen += 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)hlen;
    head[9] = 0;
    memset(head + 10, ' ', hlen);
    memcpy(head + 10, dict, strlen(dict));
    head[10 + hlen - 1] = '\n';
    char file[128 + 8];
    memcpy(file, head, 10 + hlen);
    memset(file + 10 + hlen, 0, 8);
    struct data_opts o = opts(DATA_NPY, put("wrap.npy", file, 10 + hlen + 8));
    like(refuse(&o),
         "wrap.npy: byte 10: the shape (1 x 2305843009213693953 of 8 "
         "bytes) needs more bytes than a file can hold",
         "npy: a shape whose byte count wraps around 2^64 is refused");
    o = opts(DATA_NPY, put("wrap.npy", file, 10 + hlen + 8));
    o.target = "0";
    like(refuse(&o), "more bytes than a file can hold",
         "npy: with a target column too");
}

int main(void)
{
    if (!mkdtemp(dir))
        bail_out("mkdtemp failed");
    dense_csv();
    headers_and_targets();
    delimiters_and_lines();
    selection(DATA_CSV);
    selection(DATA_LIBSVM);
    libsvm();
    binary();
    scan_counts();
    examples();
    refusals();
    wraps();
    is_int(data_format_guess("a/b.CSV"), DATA_CSV, "format of .csv");
    is_int(data_format_guess("x.svm"), DATA_LIBSVM, "format of .svm");
    is_int(data_format_guess("x.bin"), DATA_BINARY, "format of .bin");
    is_int(data_format_guess("x.yaml"), -1, "no format for other names");
    for (int i = 0; i < nmade; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    rmdir(dir);
    return done_testing();
}
