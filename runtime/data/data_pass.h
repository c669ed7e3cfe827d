/* data_pass.h - one pass over a data file: what data.c (tables, binary
 * files) and data_text.c (CSV and libsvm lines) share.  Not installed. */
#ifndef AIARUN_DATA_PASS_H
#define AIARUN_DATA_PASS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "data.h"

/* The rows kept so far, in the arrays that become the table's.  Capacity
 * doubles, so keeping n rows costs O(n) copies in all. */
struct data_build {
    int sparse;
    size_t width; /* dense: values per row */
    size_t rows, cap;
    size_t *ids;
    double *y;
    double *x;     /* dense: cap * width */
    size_t *start; /* sparse: cap + 1 */
    uint32_t *col; /* sparse: nzcap */
    double *val;
    size_t nnz, nzcap;
};

/* A CSV cell: its text, NUL-terminated inside the line, and the column
 * (from 1) where it starts, for messages. */
struct data_cell {
    char *s;
    size_t at;
};

struct data_pass {
    const struct data_opts *o;
    int (*keep)(size_t r, void *arg);
    void *arg;
    int check_all;        /* data_scan: parse every row */
    struct data_build *b; /* NULL: store nothing */
    struct aia_error *err;
    size_t rows;   /* data rows seen */
    size_t cols;   /* features */
    size_t maxcol; /* libsvm: the largest index seen */
    size_t target; /* CSV, binary: the target's column */
    /* CSV */
    int started;
    size_t first_line; /* the line of the header or the first row */
    char delim;
    size_t ncells; /* cells per row */
    char **names;  /* the header's ncells names, or NULL */
    struct data_cell *cells;
    size_t cellcap;
};

/* Kinds of number a cell may hold; see data_number. */
enum data_num {
    DATA_NUM_OK,
    DATA_NUM_BAD,
    DATA_NUM_NAN,
    DATA_NUM_INF,
    DATA_NUM_BIG
};

/* Whether data row r is parsed (1) or only counted (0); *store is set to
 * 1 when it is also kept.  Calls keep once. */
int data_take(struct data_pass *p, size_t r, int *store);

/* Size the table's rows for width features, once the width is known. */
int data_build_init(struct data_pass *p, size_t width);

/* Start the row with id in p->b; *slot: its dense values (zeroed), NULL
 * when sparse.  Set p->b->y[p->b->rows] before data_build_end. */
int data_build_begin(struct data_pass *p, size_t id, double **slot);

/* Append the entry (col, v) to the current sparse row. */
int data_build_entry(struct data_pass *p, size_t col, double v);

/* Close the current row. */
void data_build_end(struct data_pass *p);

/* Parse the len bytes at s as a whole number into *v. */
enum data_num data_number(const char *s, size_t len, double *v);

/* Why a number of that kind is refused, quoting s (len bytes). */
const char *data_num_why(enum data_num kind, const char *s, size_t len,
                         char *buf, size_t size);

/* 1 when the rows are to be kept as floats (o->float32) and feature
 * value x, as stored, is beyond a float's range: it would become an
 * infinity there. */
int data_float_over(const struct data_pass *p, double x);

/* Why such a value (shown as the file writes it; kept times scale, where
 * the format scales its features, else 1) is refused. */
const char *data_float_why(const char *shown, double scale, char *buf,
                           size_t size);

/* Why data_store_values refused value v (as the file holds it, before
 * scale): NaN, infinity, or beyond a float's range. */
const char *data_value_why(double v, double scale, char *buf, size_t size);

/* Set p->target from o->target among n columns (p->names, when set, are
 * their names).  0 or -1. */
int data_target(struct data_pass *p, size_t n);

/* Move b into t, spreading sparse rows out when the caller wants dense
 * ones (libsvm files are read sparse).  0 or -1. */
int data_build_finish(struct data_pass *p, struct data_table *t);

/* Free the rows built so far. */
void data_build_free(struct data_build *b);

/* "out of memory" for the file; -1. */
int data_oom(struct data_pass *p);

/* Row r of a file whose values come as numbers: v holds the row's nv
 * values, the target among them at p->target when has_target, else y is
 * the target.  The features are multiplied by p->o->scale (when not 0).
 * Stored when data_take says so.  Returns 0; -1 with err set (memory);
 * or 1 + j when value j is not finite or a feature beyond a float's range
 * (data_float_over), for the caller to say where (data_value_why). */
int data_put_values(struct data_pass *p, size_t r, const double *v,
                    size_t nv, int has_target, double y);

/* The same for a row that data_take (called by the caller, p->rows
 * counted) said to parse; store is what it set. */
int data_store_values(struct data_pass *p, size_t r, const double *v,
                      size_t nv, int has_target, double y, int store);

/* The value of size bytes at s: kind 'f' (float, size 4 or 8), 'i'
 * (signed) or 'u' (unsigned integer, size 1, 2, 4 or 8); big: big-endian,
 * else little-endian. */
double data_decode(const unsigned char *s, char kind, int size, int big);

/* Values stored one after the other, rows x width of them, read through
 * read (bytes read; fewer at the end or on an error, which why tells). */
struct data_source {
    const char *path; /* for messages */
    size_t (*read)(void *h, void *buf, size_t bytes);
    const char *(*why)(void *h); /* NULL: "short file" */
    void *h;
    char kind; /* as data_decode takes them */
    int size, big;
    size_t rows;
    uintmax_t at; /* the file's byte (uncompressed) of the next value */
};

/* Every row of x (x->rows of width values; the target among them at
 * p->target when has_target), the targets from t (one value a row) when
 * t is not NULL.  Refuses values that are not finite or beyond a float's
 * range (data_float_over), naming the row, column and byte.  0 or -1. */
int data_array_pass(struct data_pass *p, struct data_source *x,
                    size_t width, int has_target, struct data_source *t);

/* Each format's pass over o->path, counting every row in p->rows and
 * building the kept ones.  0 or -1. */
int data_csv_pass(struct data_pass *p);
int data_svm_pass(struct data_pass *p);
int data_bin_pass(struct data_pass *p);
int data_npy_pass(struct data_pass *p);
int data_idx_pass(struct data_pass *p);
int data_hdf5_pass(struct data_pass *p);

/* Each header format's data_shape: the rows and the values a row. */
int data_npy_shape(struct data_pass *p, double *rows, double *cols);
int data_idx_shape(struct data_pass *p, double *rows, double *cols);
int data_hdf5_shape(struct data_pass *p, double *rows, double *cols);

#endif
