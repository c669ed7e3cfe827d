/* pca.c - the top-k principal subspace of the rows a_i (n features), as
 * DSAG computes it: the model is an n x k matrix V (row-major, flattened),
 * and the loss the mean squared reconstruction error
 *
 *     f(V) = 1/(2m) sum_i ||a_i - V V' a_i||^2
 *
 * whose minima are exactly the V with orthonormal columns spanning the
 * top-k eigenvectors of E = A'A/m (the rows are taken as they are, not
 * centred).  A worker's gradient over its rows is built from W = A_i'(A_i
 * V), the product DSAG's workers compute, two passes over the (dense or
 * sparse) rows:
 *
 *     grad f = (-2 W + W (V'V) + V (V'W)) / m_i
 *
 * The model x is the offset of V from a seeded initial V0 (Gaussian,
 * N(0, 1/n) entries), V = V0 + x, so that the algorithms' start x = 0 is
 * a full-rank V, not the saddle V = 0.
 *
 * The metric is the explained variance, the fraction of the rows' squared
 * norm that their projection on span(V) keeps:
 * tr((V'V)^-1 V'EV) / tr(E).  The optimum comes from an eigen-solve of E
 * (LAPACKE's dsyev when the build has it, else cyclic Jacobi) when n is at
 * most EIG_MAX: V* the top-k eigenvectors, f* = (tr E - sum of the top k
 * eigenvalues) / 2.
 *
 * Block (subspace) methods ask for W = A'A B itself, for any n x c block
 * B (the block function, struct aia_block): the same two passes over the
 * rows as the gradient's, with c columns instead of k; the model stands
 * for V = V0 + x, V0 the block's base.
 *
 * Without a data file the rows are generated sparse: entry j of row r is
 * nonzero with probability `density`, then N(0, decay^j) (from the seed,
 * stream r), so that E's eigenvalues fall off geometrically.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "kernels.h"

#ifdef HAVE_LAPACKE
#include <lapacke.h>
#endif

#define EIG_MAX 2000
#define STREAM_V0 0x5043413000000000ull
#define STREAM_ROWS 0x5043410000000000ull

static const struct aia_param params[] = {
    {"k", AIA_INT, "3", "components: the dimension of the subspace", NULL, 1,
     1e6},
    {"rows", AIA_INT, "2000", "rows m of the generated data, over all workers",
     NULL, 1, 1e12},
    {"cols", AIA_INT, "50", "columns n of the generated data", NULL, 1, 1e9},
    {"density", AIA_DOUBLE, "0.2",
     "share of the generated entries that are not zero", NULL, 1e-9, 1},
    {"decay", AIA_DOUBLE, "0.8",
     "variance of generated column j: decay^j (the eigenvalues' fall)", NULL,
     1e-6, 1},
    {"precision", AIA_ENUM, "float64",
     "the matrix products: float64, or float32 (dense rows kept as floats "
     "too; the model, the loss and the sums stay float64)",
     "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct pca {
    struct aia_rowset rs;      /* first: rows, optimum */
    size_t kc;                 /* components */
    double *v0, *v;            /* n x k: the initial V, and V0 + x */
    double *w, *gram, *vw, *b; /* n x k, k x k, k x k, k */
    double trace;              /* tr(E) */
    double *aa;                /* ||a_i||^2 of each row held */
    double *P, *buf;           /* AIAK_BLOCK x k, AIAK_BLOCK x n: scratch */
    double *E, em;             /* coordinator: the workers' sum of a a', rows */
    double all_trace, all_m;   /* worker: tr(A'A) and rows of the whole data */
    int coord;                 /* opened as the coordinator (AIA_PART_ALL) */
    struct aiak_f32 f;         /* precision: float32 (f.x not NULL) */
    size_t width;              /* columns P and f's scratch have room for */
    struct aia_block blk;      /* the model as a block; gram */
    const struct aia_host *host;
    /* generated rows, CSR */
    struct aia_dataset gen;
    size_t *ids, *start;
    uint32_t *col;
    double *val, *y;
};

static void pca_close(void *state)
{
    struct pca *p = state;
    if (!p)
        return;
    free(p->v0);
    free(p->v);
    free(p->w);
    free(p->gram);
    free(p->vw);
    free(p->b);
    free(p->aa);
    free(p->P);
    free(p->buf);
    free(p->E);
    aiak_f32_free(&p->f);
    free(p->ids);
    free(p->start);
    free(p->col);
    free(p->val);
    free(p->y);
    aia_rowset_free(&p->rs);
    free(p);
}

/* The generated rows this rank holds, as a dataset.  0 or -1. */
static int generate(struct pca *p, const struct aia_context *ctx,
                    const struct aia_partition *part, struct aia_error *err)
{
    size_t m = (size_t)aia_arg(ctx->args, "rows")->i,
           n = (size_t)aia_arg(ctx->args, "cols")->i;
    double density = aia_arg(ctx->args, "density")->d,
           decay = aia_arg(ctx->args, "decay")->d;
    size_t k = part->index == AIA_PART_ALL ? m : aia_owned_rows(ctx->host, part, m, NULL);
    p->ids = malloc((k ? k : 1) * sizeof *p->ids);
    p->start = malloc((k + 1) * sizeof *p->start);
    p->y = calloc(k ? k : 1, sizeof *p->y);
    size_t cap = 64, nnz = 0;
    p->col = malloc(cap * sizeof *p->col);
    p->val = malloc(cap * sizeof *p->val);
    if (!p->ids || !p->start || !p->y || !p->col || !p->val)
        return aia_seterr(err, "out of memory for %zu rows", k);
    if (part->index == AIA_PART_ALL)
        for (size_t i = 0; i < m; i++)
            p->ids[i] = i;
    else
        aia_owned_rows(ctx->host, part, m, p->ids);
    for (size_t i = 0; i < k; i++) {
        struct aia_rng g;
        aia_rng_seed(&g, ctx->seed, STREAM_ROWS + p->ids[i]);
        p->start[i] = nnz;
        double sd = 1;
        for (size_t j = 0; j < n; j++, sd *= sqrt(decay)) {
            if (aia_rng_uniform(&g) >= density)
                continue;
            if (nnz == cap) {
                cap *= 2;
                uint32_t *c = realloc(p->col, cap * sizeof *c);
                double *v = c ? realloc(p->val, cap * sizeof *v) : NULL;
                if (c)
                    p->col = c;
                if (!v)
                    return aia_seterr(err, "out of memory for the rows");
                p->val = v;
            }
            p->col[nnz] = (uint32_t)j;
            p->val[nnz++] = sd * aia_rng_normal(&g);
        }
    }
    p->start[k] = nnz;
    p->gen = (struct aia_dataset){.rows = k,
                                  .cols = n,
                                  .total_rows = m,
                                  .row_ids = p->ids,
                                  .y = p->y,
                                  .row_start = p->start,
                                  .col = p->col,
                                  .val = p->val,
                                  .source = "the generated rows"};
    return 0;
}

static int pca_open(const struct aia_context *ctx,
                    const struct aia_partition *part, void **state,
                    struct aia_error *err)
{
    struct pca *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    aia_rowset_init(&p->rs, ctx, part);
    p->coord = part->index == AIA_PART_ALL;
    p->kc = (size_t)aia_arg(ctx->args, "k")->i;
    p->host = ctx->host;
    const struct aia_dataset *d = ctx->data;
    if (!d && generate(p, ctx, part, err) < 0)
        goto fail;
    if (aia_rowset_use(&p->rs, d ? d : &p->gen, err) < 0)
        goto fail;
    size_t n = p->rs.n, k = p->kc;
    if (k > n) {
        aia_seterr(err, "k = %zu components of %zu columns", k, n);
        goto fail;
    }
    p->v0 = malloc(n * k * sizeof *p->v0);
    p->v = malloc(n * k * sizeof *p->v);
    p->w = malloc(n * k * sizeof *p->w);
    p->gram = malloc(k * k * sizeof *p->gram);
    p->vw = malloc(k * k * sizeof *p->vw);
    p->b = malloc(k * sizeof *p->b);
    p->aa = malloc((p->rs.k ? p->rs.k : 1) * sizeof *p->aa);
    p->P = malloc(AIAK_BLOCK * k * sizeof *p->P);
    if (p->rs.data->x)
        p->buf = malloc(AIAK_BLOCK * n * sizeof *p->buf);
    if (!p->v0 || !p->v || !p->w || !p->gram || !p->vw || !p->b || !p->aa ||
        !p->P || (p->rs.data->x && !p->buf)) {
        aia_seterr(err, "out of memory for %zu x %zu", n, k);
        goto fail;
    }
    struct aia_rng g;
    aia_rng_seed(&g, ctx->seed, STREAM_V0);
    for (size_t j = 0; j < n * k; j++)
        p->v0[j] = aia_rng_normal(&g) / sqrt((double)n);
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        aia_data_row(p->rs.data, i, &r);
        p->aa[i] = r.a ? aia_dot(r.a, r.a, n) : aia_dot(r.val, r.val, r.nnz);
        p->trace += p->aa[i];
    }
    if (aia_arg(ctx->args, "precision")->i == 1 && p->rs.k > 0) {
        if (!p->rs.data->x) {
            aia_seterr(err, "precision: float32 takes dense rows (a data "
                            "file with storage: dense)");
            goto fail;
        }
        if (aiak_f32_open(&p->f, p->rs.data, k) < 0) {
            aia_seterr(err, "out of memory for %zu rows as floats", p->rs.k);
            goto fail;
        }
    }
    p->width = k;
    aiak_one_thread();
    *state = p;
    return 0;
fail:
    pca_close(p);
    return -1;
}

static size_t pca_dim(void *state)
{
    struct pca *p = state;
    return p->rs.n * p->kc;
}

/* V = V0 + x; gram = V'V. */
static void set_v(struct pca *p, const double *x)
{
    size_t n = p->rs.n, k = p->kc;
    for (size_t j = 0; j < n * k; j++)
        p->v[j] = p->v0[j] + x[j];
    aiak_gemm(1, 0, k, k, n, 1, p->v, k, p->v, k, 0, p->gram, k);
}

/* Sums over the rows sel (all when NULL) of ||a||^2 - 2||b||^2 + b'Gb,
 * b = V'a, and when w is not NULL, W = sum a b': a block of rows at a time,
 * B = A_b V and W += A_b' B, two matrix products (kernels.h). */
static double pass(struct pca *p, const size_t *sel, size_t count, double *w)
{
    size_t n = p->rs.n, k = p->kc;
    double s = 0;
    if (w)
        memset(w, 0, n * k * sizeof *w);
    if (p->f.x)
        aiak_to_f32(p->v, p->f.v, n * k);
    for (size_t t0 = 0; t0 < count; t0 += AIAK_BLOCK) {
        size_t nb = count - t0 < AIAK_BLOCK ? count - t0 : AIAK_BLOCK;
        const double *A = NULL;
        const float *Af = NULL;
        if (p->f.x)
            Af = aiak_f32_mul(&p->f, n, sel, t0, nb, k, p->P);
        else
            A = aiak_block_mul(p->rs.data, sel, t0, nb, p->v, k, p->P,
                               p->buf);
        for (size_t t = 0; t < nb; t++) {
            const double *b = p->P + t * k;
            double bgb = 0;
            for (size_t a = 0; a < k; a++)
                bgb += b[a] * aia_dot(p->gram + a * k, b, k);
            s += p->aa[sel ? sel[t0 + t] : t0 + t] - 2 * aia_dot(b, b, k) + bgb;
        }
        if (w && Af)
            aiak_f32_tmul(&p->f, n, Af, nb, p->P, k, w);
        else if (w)
            aiak_block_tmul(p->rs.data, A, sel, t0, nb, p->P, k, w);
    }
    return s;
}

/* Room for blocks of c columns in P and the float scratch.  0 or -1. */
static int widen(struct pca *p, size_t c)
{
    size_t n = p->rs.n;
    if (c <= p->width)
        return 0;
    double *P = realloc(p->P, AIAK_BLOCK * c * sizeof *P);
    if (!P)
        return -1;
    p->P = P;
    if (p->f.x) {
        float *v = realloc(p->f.v, n * c * sizeof *v);
        if (v)
            p->f.v = v;
        float *w = v ? realloc(p->f.w, n * c * sizeof *w) : NULL;
        if (w)
            p->f.w = w;
        float *q = w ? realloc(p->f.p, AIAK_BLOCK * c * sizeof *q) : NULL;
        if (!q)
            return -1;
        p->f.p = q;
    }
    p->width = c;
    return 0;
}

/* out = A'A b over the rows held, b n x c: B = A_b b, out += A_b' B, a
 * block of rows at a time (the passes of the gradient, c columns). */
static int pca_gram(void *state, const double *b, size_t c, double *out,
                    struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n, m = p->rs.k;
    if (c == 0 || widen(p, c) < 0)
        return aia_seterr(err, "a block of %zu columns: %s", c,
                          c ? "out of memory" : "none");
    memset(out, 0, n * c * sizeof *out);
    if (p->f.x)
        aiak_to_f32(b, p->f.v, n * c);
    for (size_t t0 = 0; t0 < m; t0 += AIAK_BLOCK) {
        size_t nb = m - t0 < AIAK_BLOCK ? m - t0 : AIAK_BLOCK;
        if (p->f.x) {
            const float *Af = aiak_f32_mul(&p->f, n, NULL, t0, nb, c, p->P);
            aiak_f32_tmul(&p->f, n, Af, nb, p->P, c, out);
        } else {
            const double *A =
                aiak_block_mul(p->rs.data, NULL, t0, nb, b, c, p->P, p->buf);
            aiak_block_tmul(p->rs.data, A, NULL, t0, nb, p->P, c, out);
        }
    }
    return 0;
}

static const struct aia_block *pca_block(void *state)
{
    struct pca *p = state;
    p->blk = (struct aia_block){.size = sizeof p->blk,
                                .n = p->rs.n,
                                .cols = p->kc,
                                .base = p->v0,
                                .gram = pca_gram};
    return &p->blk;
}

static int pca_loss(void *state, const double *x, double *f,
                    struct aia_error *err)
{
    struct pca *p = state;
    set_v(p, x);
    *f = p->rs.k ? 0.5 * pass(p, NULL, p->rs.k, NULL) / (double)p->rs.k : 0;
    return 0;
}

static int pca_gradient(void *state, const double *x, const size_t *idx,
                        size_t nidx, double *g, struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n, k = p->kc;
    size_t count = aia_gradient_begin(&p->rs, idx, nidx, g, n * k, err);
    if (count == 0)
        return -1;
    set_v(p, x);
    pass(p, idx, count, p->w);
    /* g = -2W + W G + V (V'W) */
    aiak_gemm(1, 0, k, k, n, 1, p->v, k, p->w, k, 0, p->vw, k);
    aiak_gemm(0, 0, n, k, k, 1, p->w, k, p->gram, k, 0, g, k);
    aiak_gemm(0, 0, n, k, k, 1, p->v, k, p->vw, k, 1, g, k);
    aia_axpy(-2, p->w, g, n * k);
    aia_gradient_end(g, x, n * k, count, 0);
    return 0;
}

/* The explained variance: tr(G^-1 V'EV) / tr(E), V'EV from the rows.  A
 * worker that knows the whole data's trace and rows (combine) gives its
 * rows' kept variance per row over the whole data's variance per row, so
 * that the runtime's row-weighted mean of the workers' figures is the
 * whole data's ratio; else its own rows' ratio. */
static int pca_metric(void *state, const double *x, double *value,
                      struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n, k = p->kc;
    if (!(p->trace > 0))
        return aia_seterr(err, "the rows are all zero: no variance");
    set_v(p, x);
    pass(p, NULL, p->rs.k, p->w); /* W = A'AV */
    aiak_gemm(1, 0, k, k, n, 1, p->v, k, p->w, k, 0, p->vw, k);
    if (aia_cholesky(p->gram, k, 1e-13, 0) < 0)
        return aia_seterr(err, "V is rank-deficient: no subspace");
    double t = 0;
    for (size_t c = 0; c < k; c++) { /* column c of G^-1 V'AA'V */
        for (size_t a = 0; a < k; a++)
            p->b[a] = p->vw[a * k + c];
        aia_cholesky_solve(p->gram, p->b, p->b, k);
        t += p->b[c];
    }
    *value = p->all_m > 0 && p->all_trace > 0 && p->rs.k > 0
                 ? t * p->all_m / ((double)p->rs.k * p->all_trace)
                 : t / p->trace;
    return 0;
}

/* hv = E v, E = A'A/k over the k rows held: two passes, the block
 * kernels with one column (aia_hvp_fn). */
static int e_product(void *ctx, const double *v, double *hv,
                     struct aia_error *err)
{
    struct pca *p = ctx;
    size_t n = p->rs.n, k = p->rs.k;
    (void)err;
    memset(hv, 0, n * sizeof *hv);
    for (size_t t0 = 0; t0 < k; t0 += AIAK_BLOCK) {
        size_t nb = k - t0 < AIAK_BLOCK ? k - t0 : AIAK_BLOCK;
        const double *A =
            aiak_block_mul(p->rs.data, NULL, t0, nb, v, 1, p->P, p->buf);
        aiak_block_tmul(p->rs.data, A, NULL, t0, nb, p->P, 1, hv);
    }
    for (size_t j = 0; j < n; j++)
        hv[j] /= (double)k;
    return 0;
}

/* L = 4 lambda_1(E), lambda_1 the largest eigenvalue of this rank's E by
 * power iteration: the Hessian's largest eigenvalue at the minima (V
 * orthonormal), whose direction is V's column along the top eigenvector
 * scaled.  Away from them it is at most (2 + 6 ||V||^2) lambda_1, so the
 * step 1/L of step: auto is stable while ||V|| stays near 1, as it does
 * from the seeded start. */
static int pca_smoothness(void *state, double *L, struct aia_error *err)
{
    struct pca *p = state;
    double lambda = 0;
    if (p->rs.k == 0)
        return aia_seterr(err, "no rows: no smoothness");
    if (aia_power_iteration(p->rs.n, e_product, p, 500, 1e-9, &lambda, err) <
        0)
        return -1;
    *L = 4 * lambda;
    return 0;
}

static int solve(void *state, struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n, k = p->kc, m = p->rs.k;
    if (m == 0 && p->E)
        m = (size_t)p->em;
    if (n > EIG_MAX)
        return aia_seterr(err, "%zu columns: above %d, no eigen-solve", n,
                          EIG_MAX);
    double *E = calloc(n * n, sizeof *E), *Q = malloc(n * n * sizeof *Q);
    double *ev = malloc(n * sizeof *ev);
    p->rs.xopt = malloc(n * k * sizeof *p->rs.xopt);
    if (!E || !Q || !ev || !p->rs.xopt) {
        free(E);
        free(Q);
        free(ev);
        return aia_seterr(err, "out of memory for the %zu x %zu matrix", n, n);
    }
    if (p->E)
        for (size_t j = 0; j < n * n; j++)
            E[j] = p->E[j] / (double)m;
    for (size_t i = 0; !p->E && i < m; i++) {
        struct aia_row r;
        aia_data_row(p->rs.data, i, &r);
        aia_row_outer(&r, 1.0 / (double)m, E, n);
    }
    for (size_t j = 0; j < n; j++)
        for (size_t l = j + 1; l < n; l++)
            E[l * n + j] = E[j * n + l];
#ifdef HAVE_LAPACKE
    /* ascending eigenvalues; the vectors replace E, in its columns */
    int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)n, E,
                             (lapack_int)n, ev);
    memcpy(Q, E, n * n * sizeof *Q);
#else
    int info = 0;
    aia_jacobi(E, Q, ev, n);
#endif
    aia_eig_descending(Q, ev, n); /* the k largest first */
    int rc = 0;
    if (info != 0) {
        rc = aia_seterr(err, "the eigen-solve failed (%d)", info);
    } else {
        double kept = 0;
        for (size_t a = 0; a < k; a++) {
            kept += ev[a];
            for (size_t j = 0; j < n; j++)
                p->rs.xopt[j * k + a] = Q[j * n + a] - p->v0[j * k + a];
        }
        p->rs.fopt = 0.5 * (p->trace / (double)m - kept);
        if (p->host && p->host->log)
            p->host->log(p->host, AIA_LOG_INFO,
                         "pca: the eigen-solve's top %zu components explain "
                         "%.12f of the variance",
                         k, kept * (double)m / p->trace);
    }
    free(E);
    free(Q);
    free(ev);
    return rc;
}

/* A data file's summary: the sum of a a' over the rows held (n x n) and
 * their count, so that the coordinator, which holds none, has E, and with
 * it the eigen-solve's optimum. */
static size_t pca_summary_len(void *state)
{
    struct pca *p = state;
    return p->rs.data == &p->gen || p->rs.n > EIG_MAX
               ? 0
               : p->rs.n * p->rs.n + 1;
}

static int pca_summarize(void *state, double *out, struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n, k = p->rs.k;
    const struct aia_dataset *d = p->rs.data;
    (void)err;
    memset(out, 0, (n * n + 1) * sizeof *out);
    if (d->x && k > 0) {
        aiak_gemm(1, 0, n, n, k, 1, d->x, n, d->x, n, 0, out, n);
    } else {
        for (size_t i = 0; i < k; i++) {
            struct aia_row r;
            aia_data_row(d, i, &r);
            aia_row_outer(&r, 1, out, n);
        }
        for (size_t j = 0; j < n; j++)
            for (size_t l = j + 1; l < n; l++)
                out[l * n + j] = out[j * n + l];
    }
    out[n * n] = (double)k;
    return 0;
}

static int pca_combine(void *state, const double *sum, struct aia_error *err)
{
    struct pca *p = state;
    size_t n = p->rs.n;
    if (!(sum[n * n] > 0))
        return 0; /* no summary: the optimum stays unknown */
    if (!p->coord) { /* a worker: the whole data's trace, for the metric */
        p->all_trace = 0;
        for (size_t j = 0; j < n; j++)
            p->all_trace += sum[j * n + j];
        p->all_m = sum[n * n];
        return 0;
    }
    free(p->E);
    if (!(p->E = malloc(n * n * sizeof *p->E)))
        return aia_seterr(err, "out of memory for the %zu x %zu matrix", n, n);
    memcpy(p->E, sum, n * n * sizeof *p->E);
    p->em = sum[n * n];
    p->trace = 0;
    for (size_t j = 0; j < n; j++)
        p->trace += sum[j * n + j];
    return 0;
}

static int pca_optimum(void *state, double *x, double *f, struct aia_error *err)
{
    struct pca *p = state;
    return aia_rowset_optimum(&p->rs, solve, p, x, f, pca_dim(p), err);
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "pca", "1.0",
                    "top-k principal subspace of given or generated sparse "
                    "rows (loss: half the mean squared reconstruction error; "
                    "the model: V - V0, n x k)",
                    params),
    .flags = AIA_PROBLEM_DATA | AIA_PROBLEM_COMBINE_ALL,
    .open = pca_open,
    .close = pca_close,
    .dim = pca_dim,
    .rows = aia_rowset_rows,
    .loss = pca_loss,
    .gradient = pca_gradient,
    .optimum = pca_optimum,
    .smoothness = pca_smoothness,
    .summary_len = pca_summary_len,
    .summarize = pca_summarize,
    .combine = pca_combine,
    .metric = pca_metric,
    .metric_name = "explained_variance",
    .block = pca_block,
};
