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
 * Private to the plugins of problems/ (not installed). */
#ifndef AIARUN_PROBLEMS_ROWKERNELS_H
#define AIARUN_PROBLEMS_ROWKERNELS_H

#include <stddef.h>

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
