/* rowkernels.h - one row at a time: the dot product and the axpy of the
 * linear problems (lrmse, logreg), whose gradient, loss and
 * Hessian-vector product are a pass over the rows that reads each row
 * once: its dot product with x, a weight from it, then the row times the
 * weight added to the sum.  One pass is what these problems need: their
 * rows are read once per answer, so they run at the memory's speed when
 * the rows do not fit in the caches, where two matrix-vector products
 * (A x, then A' e) would read them twice.
 *
 * The dot product keeps its partial sums in vectors of four doubles (GCC
 * vector extensions), which the compiler maps to SIMD registers without
 * reassociating anything itself: the sum's order is fixed by the code, so
 * every build and every rank computes the same bits on the same machine.
 * On x86-64 with GCC each kernel is compiled twice, for x86-64-v3 (AVX2
 * and FMA) and for the baseline, and the loader picks one for the CPU it
 * runs on (target_clones, through an ifunc).
 *
 * With precision: float32 the dense rows are kept as floats too, and the
 * gradient's pass reads them: half the bytes, at twice the lanes.  Each
 * row's dot product is in float (eight partial sums of eight lanes); the
 * row's weight is taken in double from it, and the rows' sum goes into a
 * float vector that is added to the double gradient every AIAR_FLUSH
 * rows, so that no float sum runs over more than that many rows.  The
 * loss, the metric and the Hessian-vector product keep the double rows.
 *
 * Private to the plugins of problems/ (not installed). */
#ifndef AIARUN_PROBLEMS_ROWKERNELS_H
#define AIARUN_PROBLEMS_ROWKERNELS_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/rows.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&      \
    defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
#define AIAR_CLONES                                                          \
    __attribute__((target_clones("arch=x86-64-v3", "default"),     \
                   optimize("O3"), unused))
#else
#define AIAR_CLONES __attribute__((unused))
#endif

typedef double aiar_v4 __attribute__((vector_size(32)));
typedef float aiar_f8 __attribute__((vector_size(32)));

/* Rows summed in float before the sum goes into the double gradient. */
#define AIAR_FLUSH 256

/* a . x over n entries: eight partial sums, two vectors of four, added in
 * a fixed order. */
AIAR_CLONES static double aiar_dot(const double *restrict a,
                                   const double *restrict x, size_t n)
{
    aiar_v4 s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        aiar_v4 a0, a1, x0, x1;
        __builtin_memcpy(&a0, a + j, sizeof a0);
        __builtin_memcpy(&a1, a + j + 4, sizeof a1);
        __builtin_memcpy(&x0, x + j, sizeof x0);
        __builtin_memcpy(&x1, x + j + 4, sizeof x1);
        s0 += a0 * x0;
        s1 += a1 * x1;
    }
    aiar_v4 s = s0 + s1;
    double d = (s[0] + s[2]) + (s[1] + s[3]);
    for (; j < n; j++)
        d += a[j] * x[j];
    return d;
}

/* g += alpha a over n entries. */
AIAR_CLONES static void aiar_axpy(double alpha, const double *restrict a,
                                  double *restrict g, size_t n)
{
    for (size_t j = 0; j < n; j++)
        g[j] += alpha * a[j];
}

/* a . x in float over n entries: sixteen lanes, added in a fixed order. */
AIAR_CLONES static float aiar_dot_f32(const float *restrict a,
                                      const float *restrict x, size_t n)
{
    aiar_f8 s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        aiar_f8 a0, a1, x0, x1;
        __builtin_memcpy(&a0, a + j, sizeof a0);
        __builtin_memcpy(&a1, a + j + 8, sizeof a1);
        __builtin_memcpy(&x0, x + j, sizeof x0);
        __builtin_memcpy(&x1, x + j + 8, sizeof x1);
        s0 += a0 * x0;
        s1 += a1 * x1;
    }
    aiar_f8 s = s0 + s1;
    float d = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
    for (; j < n; j++)
        d += a[j] * x[j];
    return d;
}

/* g += alpha a in float over n entries. */
AIAR_CLONES static void aiar_axpy_f32(float alpha, const float *restrict a,
                                      float *restrict g, size_t n)
{
    for (size_t j = 0; j < n; j++)
        g[j] += alpha * a[j];
}

/* The float side of a problem's dense rows (precision: float32). */
struct aiar_f32 {
    float *x;  /* rows x n: the rows as floats; NULL: double precision */
    float *xq; /* n: the model the pass is at */
    float *g;  /* n: the rows' sum since the last flush */
    size_t n;
};

/* Keep the k x n dense rows A as floats.  0, or -1 when memory runs out
 * (f then holds nothing). */
static inline int aiar_f32_open(struct aiar_f32 *f, const double *A, size_t k,
                                size_t n)
{
    size_t count = k * n > 0 ? k * n : 1;
    f->n = n;
    f->x = (float *)malloc(count * sizeof *f->x);
    f->xq = (float *)malloc((n ? n : 1) * sizeof *f->xq);
    f->g = (float *)calloc(n ? n : 1, sizeof *f->g);
    if (!f->x || !f->xq || !f->g) {
        free(f->x);
        free(f->xq);
        free(f->g);
        memset(f, 0, sizeof *f);
        return -1;
    }
    for (size_t i = 0; i < k * n; i++)
        f->x[i] = (float)A[i];
    return 0;
}

static inline void aiar_f32_free(struct aiar_f32 *f)
{
    free(f->x);
    free(f->xq);
    free(f->g);
    memset(f, 0, sizeof *f);
}

/* g += sum_t w(ctx, i_t, a_i . x) a_i over the rows i_t = idx[t] (t when
 * idx is NULL), t < count, in float as the top of this file says; g is
 * double, n long. */
static inline void aiar_f32_pass(struct aiar_f32 *f, const size_t *idx,
                                 size_t count, const double *x,
                                 double (*w)(const void *ctx, size_t i,
                                             double z),
                                 const void *ctx, double *g)
{
    size_t n = f->n;
    for (size_t j = 0; j < n; j++)
        f->xq[j] = (float)x[j];
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        const float *a = f->x + i * n;
        double e = w(ctx, i, aiar_dot_f32(a, f->xq, n));
        aiar_axpy_f32((float)e, a, f->g, n);
        if ((t + 1) % AIAR_FLUSH == 0 || t + 1 == count)
            for (size_t j = 0; j < n; j++) {
                g[j] += f->g[j];
                f->g[j] = 0;
            }
    }
}

/* r . x over n columns: dense rows through aiar_dot, sparse ones over
 * their stored entries. */
static inline double aiar_row_dot(const struct aia_row *r, const double *x,
                                  size_t n)
{
    return r->a ? aiar_dot(r->a, x, n) : aia_row_dot(r, x, n);
}

/* g += alpha r over n columns. */
static inline void aiar_row_axpy(const struct aia_row *r, double alpha,
                                 double *g, size_t n)
{
    if (r->a)
        aiar_axpy(alpha, r->a, g, n);
    else
        aia_row_axpy(r, alpha, g, n);
}

#endif
