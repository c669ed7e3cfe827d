/* data.c - the CSV reader: values, layouts, headers and targets,
 * delimiters and line ends; and the place named by every refusal of a
 * CSV or libsvm file, and of a .npy shape that wraps around 2^64.  The
 * other formats, row selection and the example files: t/data-formats.c. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "datatest.h"
#include "tap.h"

static const char *refuse_csv(const char *text)
{
    struct data_opts o = csv(text);
    return refuse(&o);
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

/* precision: float32 keeps the rows as floats: a feature beyond a
 * float's range (finite as a double) is refused where it is written; it
 * became an infinity, and the run "diverged".  A target stays a double. */
static void float_range(void)
{
    struct data_opts o = csv("1,2,3\n4,1e39,6\n");
    struct data_table t;
    get(&o, &t);
    ok(t.d.x[3] == 1e39, "csv: 1e39 is read as a double by default");
    data_free(&t);
    o.float32 = 1;
    char want[4200];
    snprintf(want, sizeof want,
             "%s:2:3: column 2: '1e39' is beyond float32's range (at most "
             "3.4e+38 in magnitude), and the problem's precision: float32 "
             "keeps the rows as floats",
             o.path);
    is_string(refuse(&o), want,
              "csv: 1e39 refused for float32, naming file, line, column");
    o = csv("x,y\n-3.5e38,1\n");
    o.float32 = 1;
    like(refuse(&o),
         "t.csv:2:1: column 1 ('x'): '-3.5e38' is beyond "
         "float32's range",
         "csv: -3.5e38 too");
    o = csv("x,y\n3.4e38,1e300\n");
    o.float32 = 1;
    get(&o, &t);
    ok(t.d.x[0] == 3.4e38 && t.d.y[0] == 1e300,
       "csv: a float's largest values and a double target are kept");
    data_free(&t);
    o = opts(DATA_LIBSVM, put("t.svm", "1 1:2 3:-1e39\n", 0));
    o.float32 = 1;
    like(refuse(&o), "t.svm:1:9: index 3: '-1e39' is beyond float32's range",
         "libsvm: refused at its line, column and index");
    o = opts(DATA_LIBSVM, put("t.svm", "1e39 1:2\n", 0));
    o.float32 = 1;
    get(&o, &t);
    ok(t.d.y[0] == 1e39, "libsvm: a large label (the target) is kept");
    data_free(&t);
    double v[6] = {1, 2, 3, 4, 5e38, 6};
    o = opts(DATA_BINARY, put("t.bin", v, sizeof v));
    o.cols = 3;
    o.float32 = 1;
    like(refuse(&o),
         "t.bin: row 2, column 2 (byte 32): "
         "5e+38 is beyond float32's range",
         "binary float64: refused at its row, column and byte");
    o.target = "1";
    get(&o, &t);
    ok(t.d.y[1] == 5e38, "binary: the same value as the target is kept");
    data_free(&t);
}

int main(void)
{
    datatest_begin();
    dense_csv();
    headers_and_targets();
    delimiters_and_lines();
    refusals();
    wraps();
    float_range();
    datatest_end();
    return done_testing();
}
