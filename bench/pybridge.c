/* pybridge.c - what the python problem costs: its gradient (a NumPy class
 * through the embedded interpreter) against lrmse's on the same rows.
 *
 *     pybridge LRMSE.so PYTHON.so CLASS ROWS COLS REPS
 *
 * Both plugins are opened as one worker holding the same ROWS x COLS
 * dense rows (standard normal, handed as a data file's rows would be), and
 * their full gradients are timed in turn, REPS times each; then both are
 * opened on 10 rows of 10 columns and 2000 gradients timed, where the
 * call, not the arithmetic, is what costs.  Prints, one key=value a line:
 *
 *   grad_lrmse, grad_python   median seconds of a full gradient
 *   call_lrmse, call_python   mean seconds of one call on 10 x 10 rows
 *   maxdiff                   max |g_python - g_lrmse| of the last gradients
 *
 * CLASS is found through AIARUN_PYTHONPATH (etc/lsq.py's LeastSquares).
 */
#include <config.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define CALLS 2000

struct prob {
    void *dl;
    const struct aia_problem_plugin *p;
    void *state;
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Open the plugin at path as worker 0 of 1 holding the rows of d. */
static int open_on(struct prob *pr, const char *path,
                   const struct aia_value *args, const struct aia_dataset *d)
{
    /* RTLD_LOCAL, as aiarun's loader: the python problem makes its
     * libpython global itself, which this checks */
    if (!pr->dl && !(pr->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "pybridge: %s\n", dlerror());
        return -1;
    }
    pr->p = dlsym(pr->dl, "aia_problem_plugin");
    if (!pr->p || pr->p->h.abi != AIA_ABI_VERSION) {
        fprintf(stderr, "pybridge: %s: not a problem plugin\n", path);
        return -1;
    }
    struct aia_context ctx = {.size = sizeof ctx,
                              .role = AIA_ROLE_WORKER,
                              .rank = 1,
                              .worker = 0,
                              .nworkers = 1,
                              .seed = 1,
                              .args = args,
                              .jobdir = ".",
                              .data = d};
    struct aia_partition part = {.index = 0, .count = 1};
    struct aia_error err;
    if (pr->p->open(&ctx, &part, &pr->state, &err) < 0) {
        fprintf(stderr, "pybridge: %s: open: %s\n", path, err.text);
        return -1;
    }
    return 0;
}

static int grad(struct prob *pr, const double *x, double *g)
{
    struct aia_error err;
    if (pr->p->gradient(pr->state, x, NULL, 0, g, &err) < 0) {
        fprintf(stderr, "pybridge: %s: gradient: %s\n", pr->p->h.name,
                err.text);
        return -1;
    }
    return 0;
}

/* rows x cols standard normal rows and targets, in d (freed by the
 * caller through d->x, d->y, d->row_ids). */
static int make_rows(struct aia_dataset *d, size_t rows, size_t cols)
{
    double *x = malloc(rows * cols * sizeof *x), *y = malloc(rows * sizeof *y);
    size_t *ids = malloc(rows * sizeof *ids);
    if (!x || !y || !ids) {
        free(x);
        free(y);
        free(ids);
        return -1;
    }
    struct aia_rng g;
    aia_rng_seed(&g, 7, 1);
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = aia_rng_normal(&g);
    for (size_t i = 0; i < rows; i++)
        y[i] = aia_rng_normal(&g), ids[i] = i;
    *d = (struct aia_dataset){.rows = rows,
                              .cols = cols,
                              .total_rows = rows,
                              .row_ids = ids,
                              .y = y,
                              .x = x,
                              .source = "generated"};
    return 0;
}

static void free_rows(struct aia_dataset *d)
{
    free((void *)d->x);
    free((void *)d->y);
    free((void *)d->row_ids);
}

/* Mean seconds of one gradient call over CALLS. */
static double per_call(struct prob *pr, const double *x, double *g)
{
    double t = bench_now();
    for (int i = 0; i < CALLS; i++)
        if (grad(pr, x, g) < 0)
            return NAN;
    return (bench_now() - t) / CALLS;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: pybridge LRMSE.so PYTHON.so CLASS ROWS COLS "
                        "REPS\n");
        return 2;
    }
    size_t rows = strtoull(argv[4], NULL, 10),
           cols = strtoull(argv[5], NULL, 10);
    int reps = atoi(argv[6]);
    if (rows < 10 || cols < 10 || reps < 1 || reps > 1000)
        return fprintf(stderr, "pybridge: bad sizes\n"), 2;
    /* lrmse's table, in order: only ridge counts with rows given */
    struct aia_value largs[] = {
        {"rows", AIA_INT, 0, 1000, 1000, NULL, 0, NULL, NULL},
        {"cols", AIA_INT, 0, 10, 10, NULL, 0, NULL, NULL},
        {"noise", AIA_DOUBLE, 0, 0, 0.1, NULL, 0, NULL, NULL},
        {"ridge", AIA_DOUBLE, 0, 0, 0, NULL, 0, NULL, NULL},
        {"condition", AIA_DOUBLE, 0, 0, 1, NULL, 0, NULL, NULL},
        {"corrupt", AIA_INTS, 0, 0, 0, NULL, 0, NULL, NULL},
        {"corrupt_noise", AIA_DOUBLE, 0, 0, 100, NULL, 0, NULL, NULL},
        {NULL, 0, 0, 0, 0, NULL, 0, NULL, NULL},
    };
    struct aia_value pargs[] = {
        {"class", AIA_STRING, 1, 0, 0, argv[3], 0, NULL, NULL},
        {NULL, 0, 0, 0, 0, NULL, 0, NULL, NULL},
    };
    struct aia_dataset big, small;
    double *x = calloc(cols, sizeof *x), *g1 = calloc(cols, sizeof *g1),
           *g2 = calloc(cols, sizeof *g2), *tl = calloc((size_t)reps, 8),
           *tp = calloc((size_t)reps, 8);
    if (!x || !g1 || !g2 || !tl || !tp || make_rows(&big, rows, cols) < 0 ||
        make_rows(&small, 10, 10) < 0)
        return fprintf(stderr, "pybridge: out of memory\n"), 1;
    for (size_t j = 0; j < cols; j++)
        x[j] = 1.0 / (double)(j + 1);
    struct prob lr = {0}, py = {0}, lr10 = {0}, py10 = {0};
    if (open_on(&lr, argv[1], largs, &big) < 0 ||
        open_on(&py, argv[2], pargs, &big) < 0)
        return 1;
    /* warm up: the views of x and g are made at the first call */
    if (grad(&lr, x, g1) < 0 || grad(&py, x, g2) < 0)
        return 1;
    for (int r = 0; r < reps; r++) {
        double t = bench_now();
        if (grad(&lr, x, g1) < 0)
            return 1;
        tl[r] = bench_now() - t;
        t = bench_now();
        if (grad(&py, x, g2) < 0)
            return 1;
        tp[r] = bench_now() - t;
    }
    double maxdiff = 0;
    for (size_t j = 0; j < cols; j++)
        maxdiff = fmax(maxdiff, fabs(g1[j] - g2[j]));
    qsort(tl, (size_t)reps, 8, cmp);
    qsort(tp, (size_t)reps, 8, cmp);
    lr10.dl = lr.dl;
    py10.dl = py.dl;
    if (open_on(&lr10, argv[1], largs, &small) < 0 ||
        open_on(&py10, argv[2], pargs, &small) < 0)
        return 1;
    double cl = per_call(&lr10, x, g1), cp = per_call(&py10, x, g2);
    printf("grad_lrmse=%.9g\ngrad_python=%.9g\ncall_lrmse=%.9g\n"
           "call_python=%.9g\nmaxdiff=%.3g\n",
           tl[reps / 2], tp[reps / 2], cl, cp, maxdiff);
    lr.p->close(lr.state);
    py.p->close(py.state);
    lr10.p->close(lr10.state);
    py10.p->close(py10.state);
    free_rows(&big);
    free_rows(&small);
    free(x), free(g1), free(g2), free(tl), free(tp);
    return 0;
}
