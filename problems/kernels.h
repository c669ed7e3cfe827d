/* kernels.h - block kernels for the row problems (softmax, pca): a batch
 * of rows times a small matrix and its transpose, through BLAS (dgemm)
 * when the build has it (HAVE_CBLAS, from pkg-config), else through plain
 * loops that give the same sums in another order.  Dense rows go through
 * the matrix product a block of rows at a time; sparse rows (CSR) through
 * their own kernel, which touches the stored entries only.
 *
 * Private to the plugins of problems/ (not installed); the loops are
 * always compiled, so that t/kernels.c checks BLAS against them. */
#ifndef AIARUN_PROBLEMS_KERNELS_H
#define AIARUN_PROBLEMS_KERNELS_H

#include <stddef.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

/* Rows a kernel takes at a time: the block of rows and its products stay
 * in the caches (256 rows of 784 doubles: 1.6 MB). */
#define AIAK_BLOCK 256

/* C = alpha op(A) op(B) + beta C, row-major; op(A) m x k, op(B) k x n;
 * ta, tb: transpose A, B.  The plain loops. */
static inline void aiak_gemm_loops(int ta, int tb, size_t m, size_t n,
                                   size_t k, double alpha, const double *A,
                                   size_t lda, const double *B, size_t ldb,
                                   double beta, double *C, size_t ldc)
{
    for (size_t i = 0; i < m; i++) {
        double *Ci = C + i * ldc;
        for (size_t j = 0; j < n; j++)
            Ci[j] = beta == 0 ? 0 : Ci[j] * beta;
        for (size_t l = 0; l < k; l++) {
            double a = alpha * (ta ? A[l * lda + i] : A[i * lda + l]);
            if (a == 0)
                continue;
            if (tb)
                for (size_t j = 0; j < n; j++)
                    Ci[j] += a * B[j * ldb + l];
            else
                for (size_t j = 0; j < n; j++)
                    Ci[j] += a * B[l * ldb + j];
        }
    }
}

/* The same through BLAS when the build has it. */
static inline void aiak_gemm(int ta, int tb, size_t m, size_t n, size_t k,
                             double alpha, const double *A, size_t lda,
                             const double *B, size_t ldb, double beta,
                             double *C, size_t ldc)
{
    if (m == 0 || n == 0)
        return;
#ifdef HAVE_CBLAS
    if (k == 0) {
        aiak_gemm_loops(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
                A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
#else
    aiak_gemm_loops(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

/* 1 when the kernels go through BLAS. */
static inline int aiak_blas(void)
{
#ifdef HAVE_CBLAS
    return 1;
#else
    return 0;
#endif
}

/* One BLAS thread: the ranks of a run share the cores already, and
 * threads of their own would fight them. */
static inline void aiak_one_thread(void)
{
#if defined(HAVE_CBLAS) && defined(OPENBLAS_VERSION)
    openblas_set_num_threads(1);
#endif
}

/* The dense rows sel[t0 .. t0+nb-1] of d (rows t0 .. when sel is NULL)
 * as one nb x cols block: a pointer into d when they are consecutive,
 * else copied into buf (nb x cols doubles). */
static inline const double *aiak_dense_block(const struct aia_dataset *d,
                                             const size_t *sel, size_t t0,
                                             size_t nb, double *buf)
{
    size_t n = d->cols;
    if (!sel)
        return d->x + t0 * n;
    int run = 1;
    for (size_t t = 1; t < nb && run; t++)
        run = sel[t0 + t] == sel[t0] + t;
    if (run)
        return d->x + sel[t0] * n;
    for (size_t t = 0; t < nb; t++)
        memcpy(buf + t * n, d->x + sel[t0 + t] * n, n * sizeof *buf);
    return buf;
}

/* P = A_b V: P nb x k, V n x k (row-major), A_b the sparse rows
 * sel[t0 ..] of d (CSR). */
static inline void aiak_csr_mul(const struct aia_dataset *d, const size_t *sel,
                                size_t t0, size_t nb, const double *V,
                                size_t k, double *P)
{
    memset(P, 0, nb * k * sizeof *P);
    for (size_t t = 0; t < nb; t++) {
        struct aia_row r;
        aia_data_row(d, sel ? sel[t0 + t] : t0 + t, &r);
        double *Pt = P + t * k;
        for (size_t e = 0; e < r.nnz; e++)
            aia_axpy(r.val[e], V + (size_t)r.col[e] * k, Pt, k);
    }
}

/* W += A_b' P: W n x k, P nb x k, A_b as for aiak_csr_mul. */
static inline void aiak_csr_tmul(const struct aia_dataset *d,
                                 const size_t *sel, size_t t0, size_t nb,
                                 const double *P, size_t k, double *W)
{
    for (size_t t = 0; t < nb; t++) {
        struct aia_row r;
        aia_data_row(d, sel ? sel[t0 + t] : t0 + t, &r);
        const double *Pt = P + t * k;
        for (size_t e = 0; e < r.nnz; e++)
            aia_axpy(r.val[e], Pt, W + (size_t)r.col[e] * k, k);
    }
}

/* P = A_b V for dense or sparse rows; buf: AIAK_BLOCK x cols doubles of
 * scratch for gathered dense rows.  Returns the dense block used (NULL for
 * sparse rows), for aiak_block_tmul. */
static inline const double *aiak_block_mul(const struct aia_dataset *d,
                                           const size_t *sel, size_t t0,
                                           size_t nb, const double *V,
                                           size_t k, double *P, double *buf)
{
    if (!d->x) {
        aiak_csr_mul(d, sel, t0, nb, V, k, P);
        return NULL;
    }
    const double *A = aiak_dense_block(d, sel, t0, nb, buf);
    aiak_gemm(0, 0, nb, k, d->cols, 1, A, d->cols, V, k, 0, P, k);
    return A;
}

/* W += A_b' P, A the block aiak_block_mul returned. */
static inline void aiak_block_tmul(const struct aia_dataset *d,
                                   const double *A, const size_t *sel,
                                   size_t t0, size_t nb, const double *P,
                                   size_t k, double *W)
{
    if (!A)
        aiak_csr_tmul(d, sel, t0, nb, P, k, W);
    else
        aiak_gemm(1, 0, d->cols, k, nb, 1, A, d->cols, P, k, 1, W, k);
}

#endif
