/* answer.c - what one answer of softmax, mlp and pca costs a worker: each
 * problem's gradient over a batch of rows, called through its plugin as a
 * worker calls it, for bench/peers.sh to set beside PyTorch's and NumPy's
 * on the same rows (bench/peers.py).
 *
 *     answer PLUGINDIR ROWS.f64 LABELS.f64 M REPS
 *
 * ROWS.f64: M x 784 doubles, row-major (raw, native order); LABELS.f64:
 * M doubles, class indices 0-9.  One worker holds the M rows; each of
 * REPS repetitions times, one after the other, softmax's gradient (10
 * classes), mlp's (784-128-10) and pca's (k = 10) over all of them, then
 * softmax's, mlp's and pca's with precision: float32.  Prints softmax_s,
 * mlp_s, pca_s, softmax_f32_s, mlp_f32_s and pca_f32_s, the medians in
 * seconds, one key=value a line. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define FEATURES 784

static volatile double sink;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double *slurp(const char *path, size_t count)
{
    FILE *f = fopen(path, "rb");
    double *v = malloc(count * sizeof *v);
    if (!f || !v || fread(v, sizeof *v, count, f) != count) {
        fprintf(stderr, "answer: %s: cannot read %zu doubles\n", path, count);
        exit(1);
    }
    fclose(f);
    return v;
}

/* The median seconds of reps gradients of plugin name over the rows of d,
 * with kv its parameters. */
static double time_problem(const char *dir, const char *name, char **kv,
                           int nkv, const struct aia_dataset *d, int reps)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.so", dir, name);
    struct bench_problem bp;
    if (bench_problem_load(&bp, path, kv, nkv) < 0)
        exit(1);
    struct aia_context ctx = {.size = sizeof ctx,
                              .role = AIA_ROLE_WORKER,
                              .rank = 1,
                              .worker = 0,
                              .nworkers = 1,
                              .seed = 1,
                              .args = bp.args,
                              .jobdir = ".",
                              .host = &bp.host,
                              .data = d};
    struct aia_partition part = {.count = 1, .scheme = AIA_PART_BLOCK};
    struct aia_error err;
    void *s = NULL;
    if (bp.p->open(&ctx, &part, &s, &err) < 0) {
        fprintf(stderr, "answer: %s: open: %s\n", path, err.text);
        exit(1);
    }
    size_t dim = bp.p->dim(s);
    double *x = calloc(dim, sizeof *x), *g = malloc(dim * sizeof *g);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!x || !g || !t)
        exit(1);
    /* untimed for 0.3 s first: the first calls of a process run slower
     * (first touches of the rows and of BLAS's buffers; measured: the
     * problem timed first took 2-3x the same one timed later) */
    for (double w0 = bench_now(); bench_now() - w0 < 0.3;)
        if (bp.p->gradient(s, x, NULL, 0, g, &err) < 0) {
            fprintf(stderr, "answer: %s: %s\n", name, err.text);
            exit(1);
        }
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (bp.p->gradient(s, x, NULL, 0, g, &err) < 0) {
            fprintf(stderr, "answer: %s: %s\n", name, err.text);
            exit(1);
        }
        sink = g[0];
        t[r] = bench_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double med = t[reps / 2];
    bp.p->close(s);
    bench_problem_unload(&bp);
    free(x);
    free(g);
    free(t);
    return med;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr,
                "usage: answer PLUGINDIR ROWS.f64 LABELS.f64 M REPS\n");
        return 2;
    }
    size_t m = strtoull(argv[4], NULL, 10);
    int reps = atoi(argv[5]);
    if (m == 0 || reps < 1)
        return 2;
    double *X = slurp(argv[2], m * FEATURES), *y = slurp(argv[3], m);
    size_t *ids = malloc(m * sizeof *ids);
    if (!ids)
        return 1;
    for (size_t i = 0; i < m; i++)
        ids[i] = i;
    struct aia_dataset d = {.rows = m,
                            .cols = FEATURES,
                            .total_rows = m,
                            .row_ids = ids,
                            .y = y,
                            .x = X,
                            .source = argv[2]};
    char classes[] = "classes=10", hidden[] = "hidden=[128]", k[] = "k=10";
    char *sm[] = {classes}, *ml[] = {classes, hidden}, *pc[] = {k};
    printf("softmax_s=%.6g\n", time_problem(argv[1], "softmax", sm, 1, &d, reps));
    printf("mlp_s=%.6g\n", time_problem(argv[1], "mlp", ml, 2, &d, reps));
    printf("pca_s=%.6g\n", time_problem(argv[1], "pca", pc, 1, &d, reps));
    char f32[] = "precision=float32";
    char *sm32[] = {classes, f32}, *ml32[] = {classes, hidden, f32};
    char *pc32[] = {k, f32};
    printf("softmax_f32_s=%.6g\n",
           time_problem(argv[1], "softmax", sm32, 2, &d, reps));
    printf("mlp_f32_s=%.6g\n", time_problem(argv[1], "mlp", ml32, 3, &d, reps));
    printf("pca_f32_s=%.6g\n", time_problem(argv[1], "pca", pc32, 2, &d, reps));
    free(X);
    free(y);
    free(ids);
    return 0;
}
