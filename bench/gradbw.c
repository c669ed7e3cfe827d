/* gradbw.c - how fast a worker computes: lrmse's gradient, called through
 * the plugin, against reading the same number of bytes from memory.
 *
 *     gradbw PLUGIN.so ROWS COLS REPS [PLUGIN2.so [KEY=VALUE ...]]
 *
 * The plugin is opened as one worker holding every row (ROWS x COLS
 * doubles plus ROWS targets, made to leave the caches).  Each repetition
 * times, one after the other:
 *
 *   gradient   the plugin's gradient over all its rows (reads A and b once)
 *   read       a STREAM-like read of an array of the same size: a sum with
 *              eight independent accumulators, vectorized (GCC: as at
 *              -O3), limited by memory only
 *   read1      the same sum with one accumulator, as a plain loop is
 *              written: each addition waits for the previous one
 *   grad4      the gradient with the plugin's arithmetic but four
 *              accumulators in the row's dot product, its loops vectorized
 *              (GCC: as at -O3), over a copy of the same size: what the
 *              plugin would reach so written and compiled
 *   gradient2  the gradient of PLUGIN2.so (the same problem built another
 *              way, or the same plugin with the problem keys KEY=VALUE,
 *              such as precision=float32), when given
 *
 * and prints, for each, the median over REPS in GB/s of the matrix read
 * (ROWS * (COLS + 1) * 8 bytes), one key=value per line.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

enum { K_GRADIENT, K_READ, K_READ1, K_GRAD4, K_GRADIENT2, NKERNELS };

static const char *const names[NKERNELS] = {"gradient", "read", "read1",
                                            "grad4", "gradient2"};

static volatile double sink;

/* Compiled as at -O3 (GCC), like the kernels it bounds: vector loads
 * into eight sums, so that memory, not the adds, sets its pace. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static double read8(const double *restrict a, size_t len)
{
    double s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += a[i + (size_t)k];
    for (; i < len; i++)
        s[0] += a[i];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

static double read1(const double *a, size_t len)
{
    double s = 0;
    for (size_t i = 0; i < len; i++)
        s += a[i];
    return s;
}

/* g = A'(Ax - b)/m, rows of A row-major, as lrmse computes it but with
 * four partial sums in each row's dot product, and (with GCC) its loops
 * vectorized as at -O3. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static void
grad4(const double *restrict A, const double *restrict b, size_t m, size_t n,
      const double *restrict x, double *restrict g)
{
    memset(g, 0, n * sizeof *g);
    for (size_t i = 0; i < m; i++) {
        const double *a = A + i * n;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        size_t j = 0;
        for (; j + 4 <= n; j += 4) {
            s0 += a[j] * x[j];
            s1 += a[j + 1] * x[j + 1];
            s2 += a[j + 2] * x[j + 2];
            s3 += a[j + 3] * x[j + 3];
        }
        for (; j < n; j++)
            s0 += a[j] * x[j];
        double e = (s0 + s1) + (s2 + s3) - b[i];
        for (j = 0; j < n; j++)
            g[j] += e * a[j];
    }
    for (size_t j = 0; j < n; j++)
        g[j] /= (double)m;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6 + 14) {
        fprintf(stderr, "usage: gradbw PLUGIN.so ROWS COLS REPS "
                        "[PLUGIN2.so [KEY=VALUE ...]]\n");
        return 2;
    }
    char rows_kv[64], cols_kv[64];
    snprintf(rows_kv, sizeof rows_kv, "rows=%s", argv[2]);
    snprintf(cols_kv, sizeof cols_kv, "cols=%s", argv[3]);
    char *kv[] = {rows_kv, cols_kv};
    char *kv2[16] = {rows_kv, cols_kv};
    int nkv2 = 2;
    for (int a = 6; a < argc; a++)
        kv2[nkv2++] = argv[a];
    size_t m = strtoull(argv[2], NULL, 10), n = strtoull(argv[3], NULL, 10);
    int reps = atoi(argv[4]);
    if (m == 0 || n == 0 || reps < 1)
        return 2;
    struct bench_problem bp;
    if (bench_problem_load(&bp, argv[1], kv, 2) < 0)
        return 1;
    void *part = bench_problem_open(&bp, 1, 1, 0, 1, NULL);
    struct bench_problem bp2 = {0};
    void *part2 = NULL;
    int nk = argc >= 6 ? NKERNELS : K_GRADIENT2;
    if (argc >= 6 && (bench_problem_load(&bp2, argv[5], kv2, nkv2) < 0 ||
                      !(part2 = bench_problem_open(&bp2, 1, 1, 0, 1, NULL))))
        return 1;
    size_t len = m * (n + 1);
    double *copy = malloc(len * sizeof *copy);
    double *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g);
    double *t[NKERNELS];
    int ok = part && copy && x && g;
    for (int k = 0; k < NKERNELS; k++)
        ok &= (t[k] = malloc((size_t)reps * sizeof *t[k])) != NULL;
    if (!ok) {
        fprintf(stderr, "gradbw: cannot set up %zu x %zu\n", m, n);
        return 1;
    }
    struct aia_rng rng;
    aia_rng_seed(&rng, 1, 2);
    for (size_t i = 0; i < len; i++)
        copy[i] = aia_rng_uniform(&rng) - 0.5;
    for (size_t j = 0; j < n; j++)
        x[j] = aia_rng_uniform(&rng);
    struct aia_error err;
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < nk; k++) {
            double t0 = bench_now();
            if (k == K_GRADIENT || k == K_GRADIENT2) {
                int rc = k == K_GRADIENT
                             ? bp.p->gradient(part, x, NULL, 0, g, &err)
                             : bp2.p->gradient(part2, x, NULL, 0, g, &err);
                if (rc < 0) {
                    fprintf(stderr, "gradbw: %s\n", err.text);
                    return 1;
                }
                sink = g[0];
            } else if (k == K_READ) {
                sink = read8(copy, len);
            } else if (k == K_READ1) {
                sink = read1(copy, len);
            } else {
                grad4(copy, copy + m * n, m, n, x, g);
                sink = g[0];
            }
            t[k][r] = bench_now() - t0;
        }
    }
    double bytes = (double)len * sizeof(double);
    printf("bytes=%.0f\n", bytes);
    for (int k = 0; k < nk; k++) {
        qsort(t[k], (size_t)reps, sizeof *t[k], cmp);
        printf("%s=%.3f\n", names[k], bytes / t[k][reps / 2] / 1e9);
    }
    bp.p->close(part);
    bench_problem_unload(&bp);
    if (part2)
        bp2.p->close(part2);
    bench_problem_unload(&bp2);
    free(copy);
    free(x);
    free(g);
    for (int k = 0; k < NKERNELS; k++)
        free(t[k]);
    return 0;
}
