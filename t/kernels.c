/* kernels.c - the block kernels of problems/kernels.h: the matrix product
 * through BLAS (when the build has it) against the plain loops, in every
 * transposition, and a block of rows times a matrix, dense (the product)
 * against the same rows sparse (the CSR kernel), both ways.  In float64
 * they differ only in the order of their sums: 1e-12 relative.  Also
 * rowkernels.h's dot product and axpy against the plain loops of rows.h,
 * at every length around their vector widths, and on unaligned rows. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../problems/kernels.h"
#include "../problems/rowkernels.h"
#include "tap.h"

/* max |a - b| / max |b| */
static double rel(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = tap_worst(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return s > 0 ? d / s : d;
}

static void fill(struct aia_rng *g, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = aia_rng_normal(g);
}

int main(void)
{
    struct aia_rng g;
    aia_rng_seed(&g, 7, 1);
    diag("matrix products through %s", aiak_blas() ? "BLAS" : "the loops");
    /* C = alpha op(A) op(B) + beta C, shapes that are not square */
    size_t m = 37, n = 23, k = 301;
    double *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B);
    double *C0 = malloc(m * n * sizeof *C0), *C1 = malloc(m * n * sizeof *C1);
    double *C2 = malloc(m * n * sizeof *C2);
    if (!A || !B || !C0 || !C1 || !C2)
        bail_out("out of memory");
    fill(&g, A, m * k);
    fill(&g, B, k * n);
    fill(&g, C0, m * n);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            memcpy(C1, C0, m * n * sizeof *C1);
            memcpy(C2, C0, m * n * sizeof *C2);
            size_t lda = ta ? m : k, ldb = tb ? k : n;
            aiak_gemm(ta, tb, m, n, k, 0.5, A, lda, B, ldb, 2, C1, n);
            aiak_gemm_loops(ta, tb, m, n, k, 0.5, A, lda, B, ldb, 2, C2, n);
            double r = rel(C1, C2, m * n), moved = rel(C0, C2, m * n);
            ok(r <= 1e-12 && moved > 0.1,
               "gemm%s%s: the product and the loops agree (%.1e relative)",
               ta ? " A'" : " A", tb ? " B'" : " B", r);
        }
    /* beta 0 ignores what C held, even NaN */
    for (size_t i = 0; i < m * n; i++)
        C1[i] = C2[i] = NAN;
    aiak_gemm(0, 0, m, n, k, 1, A, k, B, n, 0, C1, n);
    aiak_gemm_loops(0, 0, m, n, k, 1, A, k, B, n, 0, C2, n);
    ok(rel(C1, C2, m * n) <= 1e-12, "gemm with beta 0 ignores C's NaN");

    /* 600 rows of 50 columns, a third of the entries set, as dense and as
     * CSR; a selection of rows in no order, over more than one block */
    size_t rows = 600, cols = 50, kk = 7, nnz = 0;
    double *X = calloc(rows * cols, sizeof *X), *y = calloc(rows, sizeof *y);
    size_t *start = malloc((rows + 1) * sizeof *start);
    uint32_t *col = malloc(rows * cols * sizeof *col);
    double *val = malloc(rows * cols * sizeof *val);
    double *V = malloc(cols * kk * sizeof *V);
    double *P1 = malloc(AIAK_BLOCK * kk * sizeof *P1);
    double *P2 = malloc(AIAK_BLOCK * kk * sizeof *P2);
    double *W1 = calloc(cols * kk, sizeof *W1), *W2 = calloc(cols * kk, sizeof *W2);
    double *buf = malloc(AIAK_BLOCK * cols * sizeof *buf);
    size_t *sel = malloc(rows * sizeof *sel);
    if (!X || !y || !start || !col || !val || !V || !P1 || !P2 || !W1 ||
        !W2 || !buf || !sel)
        bail_out("out of memory");
    for (size_t i = 0; i < rows; i++) {
        start[i] = nnz;
        for (size_t j = 0; j < cols; j++)
            if (aia_rng_uniform(&g) < 1.0 / 3) {
                X[i * cols + j] = aia_rng_normal(&g);
                col[nnz] = (uint32_t)j;
                val[nnz++] = X[i * cols + j];
            }
        sel[i] = (i * 7919) % rows; /* a permutation: 7919 is prime */
    }
    start[rows] = nnz;
    fill(&g, V, cols * kk);
    struct aia_dataset dense = {.rows = rows, .cols = cols, .total_rows = rows,
                                .y = y, .x = X};
    struct aia_dataset sparse = {.rows = rows, .cols = cols,
                                 .total_rows = rows, .y = y,
                                 .row_start = start, .col = col, .val = val};
    double worst = 0;
    int gathered = 0;
    for (int pick = 0; pick < 2; pick++) {
        const size_t *s = pick ? sel : NULL;
        memset(W1, 0, cols * kk * sizeof *W1);
        memset(W2, 0, cols * kk * sizeof *W2);
        for (size_t t0 = 0; t0 < rows; t0 += AIAK_BLOCK) {
            size_t nb = rows - t0 < AIAK_BLOCK ? rows - t0 : AIAK_BLOCK;
            const double *Ad =
                aiak_block_mul(&dense, s, t0, nb, V, kk, P1, buf);
            const double *As =
                aiak_block_mul(&sparse, s, t0, nb, V, kk, P2, buf);
            gathered |= Ad == buf;
            ok(As == NULL, "sparse rows give no dense block (%s, rows %zu-)",
               pick ? "chosen rows" : "every row", t0);
            worst = tap_worst(worst, rel(P1, P2, nb * kk));
            aiak_block_tmul(&dense, Ad, s, t0, nb, P1, kk, W1);
            aiak_block_tmul(&sparse, As, s, t0, nb, P2, kk, W2);
        }
        double r = rel(W1, W2, cols * kk);
        ok(r <= 1e-12, "%s: A'(AV) dense and sparse agree (%.1e relative)",
           pick ? "chosen rows" : "every row", r);
    }
    ok(worst <= 1e-12, "AV dense and sparse agree (%.1e relative)", worst);
    ok(gathered, "chosen rows out of order are gathered into the buffer");
    /* the rows themselves: A'(AV) against a plain sum over the rows */
    memset(W2, 0, cols * kk * sizeof *W2);
    for (size_t i = 0; i < rows; i++)
        for (size_t a = 0; a < kk; a++) {
            double b = 0;
            for (size_t j = 0; j < cols; j++)
                b += X[i * cols + j] * V[j * kk + a];
            for (size_t j = 0; j < cols; j++)
                W2[j * kk + a] += X[i * cols + j] * b;
        }
    double r = rel(W1, W2, cols * kk);
    ok(r <= 1e-12, "A'(AV) is the sum over the rows of a (a'V) (%.1e)", r);
    free(A);
    free(B);
    free(C0);
    free(C1);
    free(C2);
    free(X);
    free(y);
    free(start);
    free(col);
    free(val);
    free(V);
    free(P1);
    free(P2);
    free(W1);
    free(W2);
    free(buf);
    free(sel);

    /* rowkernels.h: every length from 0 to 40 (the tails of 8- and
     * 4-wide loops) and a long one, from an odd offset (unaligned) */
    double a[1001], x[1001], g0[1001], g1[1001];
    fill(&g, a, 1001);
    fill(&g, x, 1001);
    int dots = 1, axpys = 1;
    for (size_t len = 0; len <= 1000; len = len < 40 ? len + 1 : len + 960) {
        double d0 = aia_dot(a + 1, x, len), d1 = aiar_dot(a + 1, x, len);
        dots &= fabs(d0 - d1) <= 1e-12 * (1 + fabs(d0) + sqrt((double)len));
        memcpy(g0, x, sizeof x);
        memcpy(g1, x, sizeof x);
        aia_axpy(0.37, a + 1, g0, len);
        aiar_axpy(0.37, a + 1, g1, len);
        for (size_t j = 0; j < len; j++) /* one rounding or two (FMA) */
            axpys &= fabs(g0[j] - g1[j]) <= 1e-15 * (fabs(g0[j]) + 1);
        axpys &= memcmp(g1 + len, x + len, (1001 - len) * sizeof *x) == 0;
    }
    ok(dots, "rowkernels: the dot product agrees with rows.h's (lengths 0 "
             "to 40 and 1000, unaligned)");
    ok(axpys, "rowkernels: the axpy agrees with rows.h's to rounding, and "
              "writes nothing past its length");
    return done_testing();
}
