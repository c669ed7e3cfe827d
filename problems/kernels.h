/* kernels.h - block kernels for the row problems (softmax, pca): a batch
 * of rows times a small matrix and its transpose, through BLAS (dgemm)
 * when the build has it (HAVE_CBLAS, from pkg-config), else through plain
 * loops that give the same sums in another order.  Dense rows go through
 * the matrix product a block of rows at a time; sparse rows (CSR) through
 * their own kernel, which touches the stored entries only.
 *
 * With precision: float32 a problem keeps its dense rows as floats too
 * (half the bytes each pass reads) and takes the products in single
 * precision (sgemm), the model, the loss and the sums over blocks staying
 * in double.
 *
 * Private to the plugins of problems/ (not installed); the loops are
 * always compiled, so that t/kernels.c checks BLAS against them. */
#ifndef AIARUN_PROBLEMS_KERNELS_H
#define AIARUN_PROBLEMS_KERNELS_H

#include <stddef.h>
#include <stdlib.h>
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

/* ------------------------------------------------------------------ */
/* float32: the rows kept as floats, the products in single precision    */

/* C = alpha op(A) op(B) + beta C in float, as aiak_gemm. */
static inline void aiak_sgemm(int ta, int tb, size_t m, size_t n, size_t k,
                              float alpha, const float *A, size_t lda,
                              const float *B, size_t ldb, float beta, float *C,
                              size_t ldc)
{
    if (m == 0 || n == 0)
        return;
#ifdef HAVE_CBLAS
    if (k > 0) {
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                    alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
        return;
    }
#endif
    for (size_t i = 0; i < m; i++) {
        float *Ci = C + i * ldc;
        for (size_t j = 0; j < n; j++)
            Ci[j] = beta == 0 ? 0 : Ci[j] * beta;
        for (size_t l = 0; l < k; l++) {
            float a = alpha * (ta ? A[l * lda + i] : A[i * lda + l]);
            if (a == 0)
                continue;
            for (size_t j = 0; j < n; j++)
                Ci[j] += a * (tb ? B[j * ldb + l] : B[l * ldb + j]);
        }
    }
}

/* The dense rows of d as floats (rows x cols), or NULL when memory runs
 * out. */
static inline float *aiak_rows_f32(const struct aia_dataset *d)
{
    size_t count = d->rows * d->cols;
    float *x = (float *)malloc((count ? count : 1) * sizeof *x);
    for (size_t i = 0; x && i < count; i++)
        x[i] = (float)d->x[i];
    return x;
}

/* to[i] = from[i], n values, double to float and back. */
static inline void aiak_to_f32(const double *from, float *to, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = (float)from[i];
}

static inline void aiak_to_f64(const float *from, double *to, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = from[i];
}

/* The float rows sel[t0 .. t0+nb-1] of X (rows of n) as one block: in
 * place when consecutive, else gathered into buf (AIAK_BLOCK x n). */
static inline const float *aiak_block_f32(const float *X, size_t n,
                                          const size_t *sel, size_t t0,
                                          size_t nb, float *buf)
{
    if (!sel)
        return X + t0 * n;
    int run = 1;
    for (size_t t = 1; t < nb && run; t++)
        run = sel[t0 + t] == sel[t0] + t;
    if (run)
        return X + sel[t0] * n;
    for (size_t t = 0; t < nb; t++)
        memcpy(buf + t * n, X + sel[t0 + t] * n, n * sizeof *buf);
    return buf;
}

/* The single-precision side of a problem: its rows as floats, and
 * scratch for V (n x k), W (n x k) and a block's product (AIAK_BLOCK x
 * k) in float. */
struct aiak_f32 {
    float *x;        /* rows x n, or NULL: double precision */
    float *v, *w, *p; /* n x k: V; n x k: a block's A'P; AIAK_BLOCK x k */
    float *buf;      /* AIAK_BLOCK x n: gathered rows */
};

/* Set f up for the dense rows of d and a model of n x k.  0 or -1 (out
 * of memory). */
static inline int aiak_f32_open(struct aiak_f32 *f, const struct aia_dataset *d,
                                size_t k)
{
    size_t n = d->cols;
    f->x = aiak_rows_f32(d);
    f->v = (float *)malloc(n * k * sizeof *f->v);
    f->w = (float *)malloc(n * k * sizeof *f->w);
    f->p = (float *)malloc(AIAK_BLOCK * k * sizeof *f->p);
    f->buf = (float *)malloc(AIAK_BLOCK * n * sizeof *f->buf);
    return f->x && f->v && f->w && f->p && f->buf ? 0 : -1;
}

static inline void aiak_f32_free(struct aiak_f32 *f)
{
    free(f->x);
    free(f->v);
    free(f->w);
    free(f->p);
    free(f->buf);
}

/* P = A_b V in float, V as f->v holds it (aiak_to_f32 first); P in
 * double.  Returns the block for aiak_f32_tmul. */
static inline const float *aiak_f32_mul(struct aiak_f32 *f, size_t n,
                                        const size_t *sel, size_t t0,
                                        size_t nb, size_t k, double *P)
{
    const float *A = aiak_block_f32(f->x, n, sel, t0, nb, f->buf);
    aiak_sgemm(0, 0, nb, k, n, 1, A, n, f->v, k, 0, f->p, k);
    aiak_to_f64(f->p, P, nb * k);
    return A;
}

/* W += A_b' P: the block's product in float, added to W in double. */
static inline void aiak_f32_tmul(struct aiak_f32 *f, size_t n, const float *A,
                                 size_t nb, const double *P, size_t k,
                                 double *W)
{
    aiak_to_f32(P, f->p, nb * k);
    aiak_sgemm(1, 0, n, k, nb, 1, A, n, f->p, k, 0, f->w, k);
    for (size_t j = 0; j < n * k; j++)
        W[j] += f->w[j];
}

#endif
