/* mlpflops.c - how close mlp's and softmax's gradients come to the
 * machine's arithmetic: each gradient, called through its plugin, against
 * the time its floating-point operations take at the dgemm rate measured
 * here through the same BLAS.
 *
 *     mlpflops MLP.so SOFTMAX.so ROWS REPS
 *
 * Both plugins are opened as one worker holding ROWS rows of a
 * Fashion-MNIST-sized problem (784 features in [0, 1), 10 classes, the
 * network 784-128-10).  Each repetition times, one after the other:
 *
 *   dgemm     C = A B, square DGEMM_N matrices, through cblas_dgemm with
 *             one thread (the plugin's setting): the rate that bounds
 *   mlp       mlp's gradient over all its rows
 *   softmax   softmax's gradient over all its rows
 *
 * and prints, one key=value per line, the median dgemm rate in GFLOP/s,
 * each gradient's median time in seconds, its floating-point operations
 * (multiply-adds counted as two) and its bound: those operations at the
 * dgemm rate.  mlp: forward 2 (784*128 + 128*10), the weight gradients as
 * many again, the signal sent back to the hidden layer 2*10*128, per row.
 * softmax: scores 2*784*10 and weight gradient as many again, per row.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

#define FEATURES 784
#define HIDDEN 128
#define CLASSES 10
#define DGEMM_N 512

static volatile double sink;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[n / 2];
}

#ifdef HAVE_CBLAS
/* Seconds one DGEMM_N^3 product takes. */
static double time_dgemm(const double *A, const double *B, double *C)
{
    double t0 = bench_now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, DGEMM_N, DGEMM_N,
                DGEMM_N, 1, A, DGEMM_N, B, DGEMM_N, 0, C, DGEMM_N);
    sink = C[0];
    return bench_now() - t0;
}

/* Open plugin path as one worker holding the rows of d; NULL after
 * printing why. */
static void *open_on(struct bench_problem *bp, const char *path,
                     const struct aia_dataset *d, int with_hidden)
{
    char classes[32], hidden[32];
    snprintf(classes, sizeof classes, "classes=%d", CLASSES);
    snprintf(hidden, sizeof hidden, "hidden=[%d]", HIDDEN);
    char *kv[] = {classes, hidden};
    if (bench_problem_load(bp, path, kv, with_hidden ? 2 : 1) < 0)
        return NULL;
    struct aia_context ctx = {.size = sizeof ctx,
                              .role = AIA_ROLE_WORKER,
                              .rank = 1,
                              .worker = 0,
                              .nworkers = 1,
                              .seed = 1,
                              .args = bp->args,
                              .jobdir = ".",
                              .host = &bp->host,
                              .data = d};
    struct aia_partition part = {.count = 1, .scheme = AIA_PART_BLOCK};
    struct aia_error err;
    void *state = NULL;
    if (bp->p->open(&ctx, &part, &state, &err) < 0) {
        fprintf(stderr, "mlpflops: %s: open: %s\n", path, err.text);
        return NULL;
    }
    return state;
}

/* Seconds one full gradient of the problem takes. */
static double time_gradient(struct bench_problem *bp, void *state,
                            const double *x, double *g)
{
    struct aia_error err;
    double t0 = bench_now();
    if (bp->p->gradient(state, x, NULL, 0, g, &err) < 0) {
        fprintf(stderr, "mlpflops: %s: %s\n", bp->p->h.name, err.text);
        exit(1);
    }
    sink = g[0];
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mlpflops MLP.so SOFTMAX.so ROWS REPS\n");
        return 2;
    }
    size_t m = strtoull(argv[3], NULL, 10);
    int reps = atoi(argv[4]);
    if (m == 0 || reps < 1)
        return 2;
    double *X = malloc(m * FEATURES * sizeof *X), *y = malloc(m * sizeof *y);
    size_t *ids = malloc(m * sizeof *ids);
    size_t nd = (size_t)DGEMM_N * DGEMM_N;
    double *A = malloc(3 * nd * sizeof *A);
    double *t = malloc(3 * (size_t)reps * sizeof *t);
    if (!X || !y || !ids || !A || !t) {
        fprintf(stderr, "mlpflops: out of memory for %zu rows\n", m);
        return 1;
    }
    struct aia_rng rng;
    aia_rng_seed(&rng, 1, 3);
    for (size_t i = 0; i < m * FEATURES; i++)
        X[i] = aia_rng_uniform(&rng);
    for (size_t i = 0; i < m; i++) {
        y[i] = (double)(i % CLASSES);
        ids[i] = i;
    }
    for (size_t i = 0; i < 3 * nd; i++)
        A[i] = aia_rng_uniform(&rng) - 0.5;
    struct aia_dataset d = {.rows = m,
                            .cols = FEATURES,
                            .total_rows = m,
                            .row_ids = ids,
                            .y = y,
                            .x = X,
                            .source = "generated"};
    struct bench_problem mlp, sm;
    void *ms = open_on(&mlp, argv[1], &d, 1);
    void *ss = ms ? open_on(&sm, argv[2], &d, 0) : NULL;
    if (!ss)
        return 1;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
#endif
    size_t dm = mlp.p->dim(ms), ds = sm.p->dim(ss);
    double *x = calloc(dm + ds, sizeof *x), *g = malloc(dm * sizeof *g);
    if (!x || !g)
        return 1;
    double *td = t, *tm = t + reps, *ts = t + 2 * reps;
    for (int r = 0; r < reps; r++) {
        td[r] = time_dgemm(A, A + nd, A + 2 * nd);
        tm[r] = time_gradient(&mlp, ms, x, g);
        ts[r] = time_gradient(&sm, ss, x, g);
    }
    double rate = 2.0 * DGEMM_N * DGEMM_N * DGEMM_N / median(td, reps);
    double fm = (double)m * (4.0 * (FEATURES * HIDDEN + HIDDEN * CLASSES) +
                             2.0 * CLASSES * HIDDEN);
    double fs = (double)m * 4.0 * FEATURES * CLASSES;
    printf("dgemm_gflops=%.3f\n", rate / 1e9);
    printf("mlp_s=%.6f\nmlp_flops=%.0f\nmlp_bound_s=%.6f\n", median(tm, reps),
           fm, fm / rate);
    printf("softmax_s=%.6f\nsoftmax_flops=%.0f\nsoftmax_bound_s=%.6f\n",
           median(ts, reps), fs, fs / rate);
    mlp.p->close(ms);
    sm.p->close(ss);
    bench_problem_unload(&mlp);
    bench_problem_unload(&sm);
    free(X);
    free(y);
    free(ids);
    free(A);
    free(t);
    free(x);
    free(g);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "mlpflops: this build has no BLAS to measure against\n");
    return 77;
}
#endif
