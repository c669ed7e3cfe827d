/* lrmse.c - linear regression with the mean squared error, optionally
 * ridge-regularised.
 *
 *     f(x) = 1/(2m) * sum_i (a_i . x - b_i)^2 + lambda/2 * ||x||^2
 *     grad f(x) = A'(Ax - b)/m + lambda x
 *
 * with lambda the `ridge` parameter (0 by default: plain least squares).
 *
 * Generated data come from the seed: a_ij ~ N(0, 1) * s_j, b = A x_true +
 * noise e with e ~ N(0, 1).  The column scales s_j = kappa^(-j/(2(n-1)))
 * (kappa the `condition` parameter, 1 by default) spread the eigenvalues
 * of A'A/m from about 1 down to about 1/kappa, so that its condition
 * number is about kappa: a badly conditioned problem on demand.  Row r is
 * drawn from its own random stream, so a worker builds exactly its own
 * rows, and every rank agrees on every row.
 *
 * Fault injection, for experiments: the workers named in `corrupt` (pool
 * indices) add noise of standard deviation corrupt_noise to the targets
 * of their generated rows (from a stream of their own), so that their
 * part is garbage while the coordinator's view, its loss and its optimum
 * stay those of the clean rows.  Rows from a data file are never touched.
 *
 * Rows from a data file (ctx->data: b is the target, a the features, dense
 * or sparse) replace the generated ones; a worker is handed its own rows
 * and uses them as they are.  Sparse rows are never expanded: the dot
 * products, gradients and Gram updates touch their stored entries only.
 *
 * The coordinator's view (AIA_PART_ALL) never stores A: on first need it
 * streams the rows once into G = A'A/m, c = A'b/m, and then the loss costs
 * O(n^2).  The optimum solves (G + lambda I) x = c by Cholesky; once it is
 * known the loss is computed as f* + (x - x*)' (G + lambda I) (x - x*) / 2
 * (exact for a quadratic), which keeps the suboptimality accurate down to
 * rounding of f* itself.  With a data file the coordinator holds no row:
 * each worker's summary is its sums of a a', b a and b^2, and the
 * coordinator's G, c and b'b/m are the pool's sums (combine).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "rowkernels.h"

/* Above this dimension the Gram matrix is not built; the loss streams the
 * rows instead and the optimum is not computed. */
#define GRAM_MAX 4096

#define STREAM_XTRUE 0x4c524d5345000000ull
#define STREAM_CORRUPT 0x4c52434f52000000ull

static const struct aia_param params[] = {
    AIA_GENERATED_SIZE_PARAMS,
    {"noise", AIA_DOUBLE, "0.1", "standard deviation of the noise added to b",
     NULL, 0, 1e6},
    {"ridge", AIA_DOUBLE, "0",
     "L2 penalty lambda: the loss gains lambda/2 ||x||^2", NULL, 0, 1e12},
    {"condition", AIA_DOUBLE, "1",
     "condition number of the generated columns' Gram matrix (1: as drawn)",
     NULL, 1, 1e15},
    {"corrupt", AIA_INTS, "[]",
     "workers (pool indices) whose generated targets get corrupt_noise "
     "(a fault injected for experiments; the coordinator's loss stays the "
     "clean rows')",
     NULL, 0, 1e6},
    {"corrupt_noise", AIA_DOUBLE, "100",
     "standard deviation of the noise added to the corrupt workers' targets",
     NULL, 0, 1e12},
    {"precision", AIA_ENUM, "float64",
     "the gradient's pass over the rows: float64, or float32 (dense rows "
     "kept as floats too, half the bytes read; the model, the loss and "
     "the gradient's sum stay float64)",
     "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct lrmse {
    struct aia_rowset rs; /* first: rows, scratch row, optimum */
    double noise, ridge;
    double *xtrue;
    double *scale; /* column scales; NULL when the condition is 1 */
    double *A, *b; /* generated rows of a worker: k x n row-major, k */
    /* coordinator */
    double *G, *c; /* n x n, n: A'A/m, A'b/m */
    double bb;     /* b'b/m */
    double *d;     /* n scratch */
    struct aiar_f32 f; /* precision: float32 (f.x not NULL) */
    const double *y;   /* the targets of the rows f holds */
};

static void gen_row(const struct lrmse *p, size_t r, double *a, double *b)
{
    struct aia_rng g;
    aia_rng_seed(&g, p->rs.seed, 2 * (uint64_t)r + 1);
    double dot = 0;
    for (size_t j = 0; j < p->rs.n; j++) {
        a[j] = aia_rng_normal(&g);
        if (p->scale)
            a[j] *= p->scale[j];
        dot += a[j] * p->xtrue[j];
    }
    *b = dot + p->noise * aia_rng_normal(&g);
}

static void lrmse_close(void *state)
{
    struct lrmse *p = state;
    if (!p)
        return;
    free(p->xtrue);
    free(p->scale);
    free(p->A);
    free(p->b);
    free(p->G);
    free(p->c);
    free(p->d);
    aiar_f32_free(&p->f);
    aia_rowset_free(&p->rs);
    free(p);
}

static int open_data(struct lrmse *p, const struct aia_context *ctx,
                     struct aia_error *err)
{
    const struct aia_dataset *d = ctx->data;
    static const char *const gen[] = {"rows",      "cols",    "noise",
                                      "condition", "corrupt", "corrupt_noise"};
    if (aia_rowset_use(&p->rs, d, err) < 0)
        return -1;
    aia_note_ignored_names(ctx, "lrmse", gen, sizeof gen / sizeof gen[0]);
    return 0;
}

static int open_generated(struct lrmse *p, const struct aia_context *ctx,
                          const struct aia_partition *part)
{
    p->rs.m = (size_t)aia_arg(ctx->args, "rows")->i;
    p->rs.n = (size_t)aia_arg(ctx->args, "cols")->i;
    p->noise = aia_arg(ctx->args, "noise")->d;
    double kappa = aia_arg(ctx->args, "condition")->d;
    p->xtrue = malloc(p->rs.n * sizeof *p->xtrue);
    if (!p->xtrue)
        return -1;
    struct aia_rng g;
    aia_rng_seed(&g, p->rs.seed, STREAM_XTRUE);
    for (size_t j = 0; j < p->rs.n; j++)
        p->xtrue[j] = aia_rng_normal(&g);
    /* Only scale when asked, so that condition 1 draws the very rows it
     * always drew. */
    if (kappa > 1 && p->rs.n > 1) {
        if (!(p->scale = malloc(p->rs.n * sizeof *p->scale)))
            return -1;
        for (size_t j = 0; j < p->rs.n; j++)
            p->scale[j] =
                pow(kappa, -(double)j / (2.0 * (double)(p->rs.n - 1)));
    }
    if (p->rs.all) {
        p->rs.k = p->rs.m;
        return 0;
    }
    p->rs.k = aia_owned_rows(ctx->host, part, p->rs.m, NULL);
    size_t *rows = malloc((p->rs.k ? p->rs.k : 1) * sizeof *rows);
    p->A = malloc((p->rs.k ? p->rs.k : 1) * p->rs.n * sizeof *p->A);
    p->b = malloc((p->rs.k ? p->rs.k : 1) * sizeof *p->b);
    if (!rows || !p->A || !p->b) {
        free(rows);
        return -1;
    }
    aia_owned_rows(ctx->host, part, p->rs.m, rows);
    for (size_t i = 0; i < p->rs.k; i++)
        gen_row(p, rows[i], p->A + i * p->rs.n, &p->b[i]);
    free(rows);
    const struct aia_value *bad = aia_arg(ctx->args, "corrupt");
    double sigma = aia_arg(ctx->args, "corrupt_noise")->d;
    for (size_t i = 0; i < bad->n; i++) {
        if (bad->ints[i] != part->index)
            continue;
        struct aia_rng bg;
        aia_rng_seed(&bg, p->rs.seed, STREAM_CORRUPT + (uint64_t)part->index);
        for (size_t r = 0; r < p->rs.k; r++)
            p->b[r] += sigma * aia_rng_normal(&bg);
        break;
    }
    return 0;
}

static int lrmse_open(const struct aia_context *ctx,
                      const struct aia_partition *part, void **state,
                      struct aia_error *err)
{
    struct lrmse *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    aia_rowset_init(&p->rs, ctx, part);
    p->ridge = aia_arg(ctx->args, "ridge")->d;
    int rc = -1;
    if (ctx->data)
        rc = open_data(p, ctx, err);
    else if (open_generated(p, ctx, part) == 0)
        rc = 0;
    else
        aia_seterr(err, "out of memory for this rank's rows of %zu columns",
                   (size_t)aia_arg(ctx->args, "cols")->i);
    if (rc == 0 && aia_arg(ctx->args, "precision")->i == 1 && p->rs.k > 0 &&
        !p->rs.all) {
        const double *A = p->A;
        p->y = p->b;
        if (p->rs.data) {
            A = p->rs.data->x;
            p->y = p->rs.data->y;
        }
        if (!A)
            rc = aia_seterr(err, "precision: float32 takes dense rows (the "
                                 "data's storage: dense)");
        else if (aiar_f32_open(&p->f, A, p->rs.k, p->rs.n) < 0)
            rc = aia_seterr(err, "out of memory for %zu rows as floats",
                            p->rs.k);
    }
    if (rc < 0 || aia_rowset_scratch(&p->rs, err) < 0) {
        lrmse_close(p);
        return -1;
    }
    *state = p;
    return 0;
}

/* Row i of what this rank holds, and its target.  A generated row on the
 * coordinator is drawn again into the scratch row, valid until the next
 * call. */
static double get_row(struct lrmse *p, size_t i, struct aia_row *r)
{
    double b;
    if (p->rs.data) {
        aia_data_row(p->rs.data, i, r);
        b = p->rs.data->y[i];
    } else if (!p->rs.all) {
        b = p->b[i];
        aia_dense_row(r, p->A + i * p->rs.n);
    } else {
        gen_row(p, i, p->rs.row, &b);
        aia_dense_row(r, p->rs.row);
    }
    return b;
}

/* g += sum_i (a_i . x - b_i) a_i over k contiguous dense rows: the
 * gradient's hot loop, one pass that reads each row once (rowkernels.h):
 * bench case 4 measures it against the memory bandwidth bound and the
 * general path. */
static void dense_gradient(const double *restrict A, const double *restrict b,
                           size_t k, size_t n, const double *restrict x,
                           double *restrict g)
{
    for (size_t i = 0; i < k; i++) {
        const double *a = A + i * n;
        aiar_axpy(aiar_dot(a, x, n) - b[i], a, g, n);
    }
}

/* G = A'A/m, c = A'b/m, bb = b'b/m, once. */
static int gram(struct lrmse *p, struct aia_error *err)
{
    if (p->G)
        return 0;
    if (p->rs.n > GRAM_MAX)
        return aia_seterr(err, "dimension %zu is above %d: no Gram matrix",
                          p->rs.n, GRAM_MAX);
    if (p->rs.k == 0)
        return aia_seterr(err, "no rows: no Gram matrix");
    size_t n = p->rs.n;
    double *G = calloc(n * n, sizeof *G), *c = calloc(n, sizeof *c);
    if (!G || !c) {
        free(G);
        free(c);
        return aia_seterr(err, "out of memory for the %zu x %zu Gram matrix",
                          n, n);
    }
    double bb = 0;
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        double b = get_row(p, i, &r);
        aia_row_outer(&r, 1, G, n);
        aia_row_axpy(&r, b, c, n);
        bb += b * b;
    }
    double inv = 1.0 / (double)p->rs.k;
    for (size_t j = 0; j < n; j++) {
        for (size_t l = j; l < n; l++)
            G[l * n + j] = G[j * n + l] *= inv;
        c[j] *= inv;
    }
    p->G = G;
    p->c = c;
    p->bb = bb * inv;
    return 0;
}

/* Mean of half the squared residuals over the rows held, plus the
 * penalty. */
static double direct_loss(struct lrmse *p, const double *x)
{
    double s = 0;
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        double b = get_row(p, i, &r);
        double e = aiar_row_dot(&r, x, p->rs.n) - b;
        s += e * e;
    }
    double f = p->rs.k ? 0.5 * s / (double)p->rs.k : 0;
    if (p->ridge > 0)
        f += 0.5 * p->ridge * aia_dot(x, x, p->rs.n);
    return f;
}

static int solve(void *state, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n;
    if (gram(p, err) < 0)
        return -1;
    double *L = malloc(n * n * sizeof *L);
    p->rs.xopt = malloc(n * sizeof *p->rs.xopt);
    p->d = malloc(n * sizeof *p->d);
    if (!L || !p->rs.xopt || !p->d) {
        free(L);
        return aia_seterr(err, "out of memory for the normal equations");
    }
    memcpy(L, p->G, n * n * sizeof *L);
    for (size_t j = 0; j < n; j++)
        L[j * n + j] += p->ridge;
    if (aia_cholesky(L, n, 1e-12, 1e-12) < 0) {
        free(L);
        return aia_seterr(err,
                          "the normal equations are singular (%zu rows, "
                          "%zu columns, ridge %g)",
                          p->rs.k, n, p->ridge);
    }
    double *x = p->rs.xopt;
    aia_cholesky_solve(L, p->c, x, n);
    free(L);
    if (p->rs.k) {
        p->rs.fopt = direct_loss(p, x);
        return 0;
    }
    /* the coordinator of a data file: from the workers' sums */
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += x[j] * (0.5 * (aia_dot(p->G + j * n, x, n) + p->ridge * x[j]) -
                     p->c[j]);
    p->rs.fopt = q + 0.5 * p->bb;
    return 0;
}

/* A data file's summary: the sums of a a', b a and b^2 over the rows
 * held, and their count, so that the coordinator, which holds none, gets
 * the Gram matrix (and with it the optimum and the loss). */
static size_t lrmse_summary_len(void *state)
{
    struct lrmse *p = state;
    return p->rs.data && p->rs.n <= GRAM_MAX ? p->rs.n * p->rs.n + p->rs.n + 2 : 0;
}

static int lrmse_summarize(void *state, double *out, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n;
    if (gram(p, err) < 0)
        return -1;
    double k = (double)p->rs.k;
    for (size_t j = 0; j < n * n; j++)
        out[j] = p->G[j] * k;
    for (size_t j = 0; j < n; j++)
        out[n * n + j] = p->c[j] * k;
    out[n * n + n] = p->bb * k;
    out[n * n + n + 1] = k;
    /* a worker's loss and gradients go over its rows: the matrix would
     * only take memory */
    free(p->G);
    free(p->c);
    p->G = p->c = NULL;
    return 0;
}

static int lrmse_combine(void *state, const double *sum,
                         struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n;
    double m = sum[n * n + n + 1];
    if (!(m > 0))
        return 0; /* no summary: the optimum stays unknown */
    free(p->G);
    free(p->c);
    p->G = malloc(n * n * sizeof *p->G);
    p->c = malloc(n * sizeof *p->c);
    if (!p->G || !p->c)
        return aia_seterr(err, "out of memory for the %zu x %zu Gram matrix",
                          n, n);
    for (size_t j = 0; j < n * n; j++)
        p->G[j] = sum[j] / m;
    for (size_t j = 0; j < n; j++)
        p->c[j] = sum[n * n + j] / m;
    p->bb = sum[n * n + n] / m;
    return 0;
}

static int lrmse_optimum(void *state, double *x, double *f,
                         struct aia_error *err)
{
    struct lrmse *p = state;
    return aia_rowset_optimum(&p->rs, solve, p, x, f, p->rs.n, err);
}

/* (G + lambda I) v, row j */
static double hess_row(const struct lrmse *p, size_t j, const double *v)
{
    return aia_dot(p->G + j * p->rs.n, v, p->rs.n) + p->ridge * v[j];
}

static int lrmse_loss(void *state, const double *x, double *f,
                      struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n;
    if (!p->rs.all || gram(p, err) < 0) {
        *f = direct_loss(p, x);
        return 0;
    }
    if (p->rs.opt == 1) {
        for (size_t j = 0; j < n; j++)
            p->d[j] = x[j] - p->rs.xopt[j];
        double q = 0;
        for (size_t j = 0; j < n; j++)
            q += p->d[j] * hess_row(p, j, p->d);
        *f = p->rs.fopt + 0.5 * q;
        return 0;
    }
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += x[j] * (0.5 * hess_row(p, j, x) - p->c[j]);
    *f = q + 0.5 * p->bb;
    return 0;
}

/* A row's weight in the gradient: its residual. */
static double residual(const void *ctx, size_t i, double z)
{
    return z - ((const struct lrmse *)ctx)->y[i];
}

static int lrmse_gradient(void *state, const double *x, const size_t *idx,
                          size_t nidx, double *g, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n, count = aia_gradient_begin(&p->rs, idx, nidx, g, p->rs.n, err);
    if (count == 0)
        return -1;
    if (p->rs.all && !idx && gram(p, err) == 0) {
        for (size_t j = 0; j < n; j++)
            g[j] = hess_row(p, j, x) - p->c[j];
        return 0;
    }
    if (p->f.x) {
        aiar_f32_pass(&p->f, idx, count, x, residual, p, g);
        aia_gradient_end(g, x, n, count, p->ridge);
        return 0;
    }
    /* contiguous dense rows, the common case, take the fast loop */
    const double *A = NULL, *y = NULL;
    if (!idx && p->rs.data && p->rs.data->x)
        A = p->rs.data->x, y = p->rs.data->y;
    else if (!idx && !p->rs.data && !p->rs.all)
        A = p->A, y = p->b;
    if (A) {
        dense_gradient(A, y, p->rs.k, n, x, g);
        count = 0;
    }
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        struct aia_row r;
        double b = get_row(p, i, &r);
        aiar_row_axpy(&r, aiar_row_dot(&r, x, n) - b, g, n);
    }
    aia_gradient_end(g, x, n, idx ? nidx : p->rs.k, p->ridge);
    return 0;
}

/* out = H v = A'A v / k + ridge v over the rows held (the Gram matrix
 * where the coordinator has it): the loss is quadratic, so H does not
 * depend on x. */
static int lrmse_hvp(void *state, const double *x, const double *v,
                     double *out, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->rs.n;
    (void)x;
    if (p->rs.all && gram(p, err) == 0) {
        for (size_t j = 0; j < n; j++)
            out[j] = hess_row(p, j, v);
        return 0;
    }
    if (p->rs.k == 0)
        return aia_seterr(err, "a Hessian over no rows");
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        get_row(p, i, &r);
        aiar_row_axpy(&r, aiar_row_dot(&r, v, n), out, n);
    }
    double inv = 1.0 / (double)p->rs.k;
    for (size_t j = 0; j < n; j++)
        out[j] = out[j] * inv + p->ridge * v[j];
    return 0;
}

/* ------------------------------------------------------------------ */
/* Smoothness: L is the largest eigenvalue of A'A/k plus the ridge, for the
 * k rows held.  The gradient is affine, so H v = grad(v) - grad(0)
 * exactly (aia_gradient_smoothness with t = 0). */

extern const struct aia_problem_plugin aia_problem_plugin;

static int lrmse_smoothness(void *state, double *L, struct aia_error *err)
{
    return aia_gradient_smoothness(&aia_problem_plugin, state, 0, L, err);
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "lrmse", "1.2",
                    "least-squares linear regression, optionally ridge, on "
                    "generated or given rows (loss: half the mean squared "
                    "error)",
                    params),
    .flags = AIA_PROBLEM_DATA,
    AIA_ROWSET_SIZES,
    .open = lrmse_open,
    .close = lrmse_close,
    .loss = lrmse_loss,
    .gradient = lrmse_gradient,
    .optimum = lrmse_optimum,
    .smoothness = lrmse_smoothness,
    .hvp = lrmse_hvp,
    .summary_len = lrmse_summary_len,
    .summarize = lrmse_summarize,
    .combine = lrmse_combine,
};
