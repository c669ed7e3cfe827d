/* probtest.h - a problem plugin opened part by part in one process, for
 * the unit tests of problem plugins: calls that bail out of the test run
 * on failure, the claims every problem must meet (a gradient that matches
 * its loss, parts that add up to the whole, rows that follow the seed),
 * and data sets built from rows in memory. */
#ifndef AIARUN_PROBTEST_H
#define AIARUN_PROBTEST_H

#include <aiarun/aiarun.h>

#include "plugtest.h"

/* Open part index of count (AIA_PART_ALL: the coordinator's view) of the
 * problem t with its parameters, on rows given by data (NULL: generated):
 * the state, or NULL with err filled. */
void *probtest_try_open(const struct plugtest *t, int index, int count,
                        int scheme, const double *weights, uint64_t seed,
                        const struct aia_dataset *data, struct aia_error *err);

/* The same, block partition, bailing out when open fails. */
void *probtest_open(const struct plugtest *t, int index, int count,
                    const struct aia_dataset *data, uint64_t seed);

/* The loss and the gradient over every row of s at x, bailing out when
 * the plugin fails. */
double probtest_loss(const struct aia_problem_plugin *p, void *s,
                     const double *x);
void probtest_grad(const struct aia_problem_plugin *p, void *s, const double *x,
                   double *g);

/* The metric of s at x (accuracy, ...), bailing out when it fails. */
double probtest_metric(const struct aia_problem_plugin *p, void *s,
                       const double *x);

/* The loss at x of the count generated parts (block partition, seed) of
 * a problem of total rows, weighted by their rows: the whole problem's
 * where they partition it. */
double probtest_parts_loss(const struct plugtest *t, int count, size_t total,
                           uint64_t seed, const double *x);

/* Tests that s holds k rows and at x (of length n) has the loss f and
 * the gradient want, within tol: what a problem given these very rows
 * must compute. */
void probtest_holds(const struct aia_problem_plugin *p, void *s, size_t k,
                    const double *x, size_t n, double f, const double *want,
                    double tol, const char *what);

/* max_j |a_j - b_j| */
double probtest_maxdiff(const double *a, const double *b, size_t n);

/* The largest eigenvalue of the symmetric positive semi-definite n x n
 * matrix A (row-major), by iterations of the power method from the
 * vector of ones. */
double probtest_top_eigenvalue(const double *A, size_t n, int iterations);

/* Tests the claims every problem meets on count parts of total rows of
 * n columns: probtest_gradient_check at x within tol, then at points of
 * no particular meaning probtest_partitions, block and cyclic, even and
 * weighted, and probtest_determinism of part 2. */
void probtest_claims(const struct plugtest *t, int count, const double *x,
                     size_t n, size_t total, double tol);

/* Tests (four TAP assertions) that worker 1 of count holds, at x (of
 * length n), a gradient within tol of central differences of its loss,
 * the same gradient over its first rows rows by index, a different one
 * over a single row, and refuses row total, which it does not hold. */
void probtest_gradient_check(const struct plugtest *t, int count,
                             const double *x, size_t n, size_t rows,
                             size_t total, double tol);

/* Tests that every one of total rows is in exactly one of count parts of
 * scheme (with weights, or none), and that the parts' gradients, losses
 * and, where the problem has a metric, metrics at x (of length n),
 * weighted by their rows, give the coordinator's. */
void probtest_partitions(const struct plugtest *t, int count, int scheme,
                         const double *weights, const double *x, size_t n,
                         size_t total, const char *what);

/* Tests that part index of count, built twice from one seed, gives the
 * same gradient at x, and from another seed another one. */
void probtest_determinism(const struct plugtest *t, int index, int count,
                          const double *x, size_t n);

/* Where two states on the same rows are compared, and how closely. */
struct probtest_at {
    const double *x; /* the point */
    size_t n;        /* its length */
    double tol;      /* loss, gradients and optimal loss */
    double xtol;     /* the optimum */
};

/* Tests that two states a and b on the same rows agree at->x within
 * at->tol: loss, gradient, a gradient over some rows (rows 0, 7, 3, 3),
 * the metric where there is one exactly, and when all (the coordinator)
 * the optimal loss, and the optimum within at->xtol. */
void probtest_same(const struct aia_problem_plugin *p, void *a, void *b,
                   int all, const struct probtest_at *at, const char *what);

/* probtest_same on part index of count (AIA_PART_ALL: the coordinator)
 * opened on rows a and on rows b (NULL: generated from seed). */
void probtest_same_rows(const struct plugtest *t, int index, int count,
                        const struct aia_dataset *a,
                        const struct aia_dataset *b, uint64_t seed,
                        const struct probtest_at *at, const char *what);

/* A data set of rows [first, first + k) of the row-major A (cols columns)
 * with targets y, of total rows in all: dense, or sparse with the zeros
 * left out (named rows.svm; the dense one rows.csv).  r starts zeroed;
 * its storage grows as a data set needs, until probtest_rows_free. */
struct probtest_rows {
    size_t *ids, *start;
    uint32_t *col;
    double *val;
    size_t cap; /* rows x cols the storage holds */
    struct aia_dataset d;
};

void probtest_rows_free(struct probtest_rows *r);
void probtest_rows_make(struct probtest_rows *r, int sparse, const double *A,
                        const double *y, size_t cols, size_t first, size_t k,
                        size_t total);

/* precision: float32 (args32) against float64 (args) for problem name:
 * the gradients of part 0 of count at x (n long), over every row and
 * over rows by index, agree to 1e-5 relative and differ in their bits;
 * the losses are the same; sparse rows are refused. */
void probtest_float32(const char *name, const char *args, const char *args32,
                      int count, const double *x, size_t n);

/* Store each of the first k sparse rows' entries in descending column
 * order, as a file may give them. */
void probtest_rows_reverse(struct probtest_rows *r, size_t k);

#endif
