/* logreg.c - binary logistic regression, optionally L2-regularised.
 *
 * With labels y_i in {0, 1}, signs s_i = 2 y_i - 1 and margins
 * z_i = s_i a_i . x:
 *
 *     f(x)      = 1/m sum_i log(1 + exp(-z_i)) + l2/2 ||x||^2
 *     grad f(x) = -1/m sum_i sigma(-z_i) s_i a_i + l2 x
 *     hess f(x) = 1/m sum_i sigma(z_i) sigma(-z_i) a_i a_i' + l2 I
 *
 * where sigma(t) = 1/(1 + exp(-t)).  The loss of one row is computed as
 * max(-z, 0) + log1p(exp(-|z|)) and sigma from exp(-|z|), so that no
 * exponential of a positive number is ever taken: margins of a thousand
 * give 0 and 1000, not inf or NaN.
 *
 * Generated data come from the seed: a hidden w_true ~ N(0, I) from its
 * own stream, and row r from stream STREAM_ROWS + r: a_r ~ N(0, I), then
 * one uniform u.  A row whose distance to the plane w_true . a = 0 is
 * below `margin` (|a . w| < margin ||w||) is pushed away from it along w
 * by margin, to the same side; its label is [a . w_true > 0], flipped
 * when u < `flip`.  With flip 0 the rows are separable with that margin.
 * A worker builds exactly its own rows; every rank agrees on every row.
 *
 * Rows from a data file (ctx->data, dense or sparse) replace the generated
 * ones; labels may be 0/1 or -1/+1 (-1 is read as 0).  Sparse rows are
 * never expanded.
 *
 * The metric is the accuracy: the fraction of rows with s_i a_i . x > 0
 * (a row on the boundary, a_i . x = 0, counts as wrong).
 *
 * The coordinator (AIA_PART_ALL) keeps every generated row (with a data
 * file it holds none, and has no optimum); generated rows are drawn
 * on first need, or drawn again on every pass when they would not fit in
 * CACHE_MAX doubles.  Its optimum is found by Newton's method with a
 * backtracking line search, the n x n Hessian solved by Cholesky.  With
 * l2 = 0 and separable rows there is no finite minimiser (the loss tends
 * to 0 along any separating direction): as soon as an iterate classifies
 * every row correctly, which proves it, the optimum is refused.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "rowkernels.h"

/* Above this dimension the Hessian is not built: no optimum. */
#define HESS_MAX 4096
/* The coordinator keeps at most this many doubles of generated rows. */
#define CACHE_MAX ((size_t)1 << 25)
#define NEWTON_MAX 100
/* Above this many multiply-adds per Newton step (rows x n^2, seconds of
 * work) the optimum is not computed: the whole job would wait for it. */
#define NEWTON_WORK 1e10

#define STREAM_WTRUE 0x4c4f475257000000ull
#define STREAM_ROWS 0x4c4f475200000000ull

static const struct aia_param params[] = {
    AIA_GENERATED_SIZE_PARAMS,
    {"l2", AIA_DOUBLE, "0", "L2 penalty: the loss gains l2/2 ||x||^2", NULL, 0,
     1e12},
    {"flip", AIA_DOUBLE, "0",
     "probability that a generated label is flipped (label noise)", NULL, 0, 1},
    {"margin", AIA_DOUBLE, "0.1",
     "least distance of a generated row to the hidden separating plane", NULL,
     0, 1e6},
    {"precision", AIA_ENUM, "float64",
     "the gradient's pass over the rows: float64, or float32 (dense rows "
     "kept as floats too, half the bytes read; the model, the loss and "
     "the gradient's sum stay float64)",
     "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct logreg {
    struct aia_rowset rs; /* first: rows, scratch row, optimum */
    double l2, flip, margin;
    double *wtrue, wnorm;
    double *A; /* generated rows held, k x n (NULL: data, or not yet) */
    double *s; /* each held row's label as a sign, -1 or +1 */
    struct aiar_f32 f; /* precision: float32 (f.x not NULL) */
};

static void gen_row(const struct logreg *p, size_t r, double *a, double *s)
{
    struct aia_rng g;
    aia_rng_seed(&g, p->rs.seed, STREAM_ROWS + (uint64_t)r);
    double z = 0;
    for (size_t j = 0; j < p->rs.n; j++) {
        a[j] = aia_rng_normal(&g);
        z += a[j] * p->wtrue[j];
    }
    z /= p->wnorm; /* signed distance to the plane */
    if (fabs(z) < p->margin) {
        double push = z < 0 ? -p->margin : p->margin;
        for (size_t j = 0; j < p->rs.n; j++)
            a[j] += push * p->wtrue[j] / p->wnorm;
        z += push;
    }
    *s = z > 0 ? 1 : -1;
    /* Drawn after the features, so that flip changes labels only. */
    if (aia_rng_uniform(&g) < p->flip)
        *s = -*s;
}

static void logreg_close(void *state)
{
    struct logreg *p = state;
    if (!p)
        return;
    aia_rowset_free(&p->rs);
    free(p->wtrue);
    free(p->A);
    free(p->s);
    aiar_f32_free(&p->f);
    free(p);
}

/* The rows given are complete, their sparse columns in range and their
 * labels 0/1 or -1/+1; the signs go to p->s.  Rows are named from 1. */
static int load_data(struct logreg *p, const struct aia_dataset *d,
                     struct aia_error *err)
{
    const char *src = d->source ? d->source : "the data";
    if (aia_rowset_use(&p->rs, d, err) < 0)
        return -1;
    if (d->rows == 0)
        return 0;
    if (!(p->s = malloc(d->rows * sizeof *p->s)))
        return aia_seterr(err, "out of memory for %zu labels", d->rows);
    int zero = 0, minus = 0;
    for (size_t i = 0; i < d->rows; i++) {
        size_t id = (d->row_ids ? d->row_ids[i] : i) + 1;
        double y = d->y[i];
        if (y == 1) {
            p->s[i] = 1;
        } else if (y == 0 || y == -1) {
            p->s[i] = -1;
            zero |= y == 0;
            minus |= y == -1;
        } else {
            return aia_seterr(err, "%s: row %zu: label %g is not 0/1 or -1/+1",
                              src, id, y);
        }
    }
    /* Labels -1, 0 and 1 together are three classes, not two (the
     * coordinator, which holds every row, sees any such mix). */
    if (zero && minus)
        return aia_seterr(err,
                          "%s: labels 0 and -1 both appear: logreg "
                          "takes 0/1 or -1/+1",
                          src);
    return 0;
}

/* Draw the rows held: a worker's own at open, every row on the
 * coordinator at first need.  0, or -1 out of memory. */
static int draw_rows(struct logreg *p, const size_t *rows)
{
    size_t k = p->rs.k ? p->rs.k : 1;
    if (!(p->A = malloc(k * p->rs.n * sizeof *p->A)) ||
        !(p->s = malloc(k * sizeof *p->s))) {
        free(p->A);
        p->A = NULL;
        return -1;
    }
    for (size_t i = 0; i < p->rs.k; i++)
        gen_row(p, rows ? rows[i] : i, p->A + i * p->rs.n, &p->s[i]);
    return 0;
}

static int open_generated(struct logreg *p, const struct aia_context *ctx,
                          const struct aia_partition *part)
{
    p->flip = aia_arg(ctx->args, "flip")->d;
    p->margin = aia_arg(ctx->args, "margin")->d;
    p->rs.m = (size_t)aia_arg(ctx->args, "rows")->i;
    p->rs.n = (size_t)aia_arg(ctx->args, "cols")->i;
    if (!(p->wtrue = malloc(p->rs.n * sizeof *p->wtrue)))
        return -1;
    struct aia_rng g;
    aia_rng_seed(&g, p->rs.seed, STREAM_WTRUE);
    double ww = 0;
    for (size_t j = 0; j < p->rs.n; j++) {
        p->wtrue[j] = aia_rng_normal(&g);
        ww += p->wtrue[j] * p->wtrue[j];
    }
    p->wnorm = sqrt(ww);
    if (p->rs.all) {
        p->rs.k = p->rs.m;
        return 0;
    }
    p->rs.k = aia_owned_rows(ctx->host, part, p->rs.m, NULL);
    size_t *rows = malloc((p->rs.k ? p->rs.k : 1) * sizeof *rows);
    if (!rows)
        return -1;
    aia_owned_rows(ctx->host, part, p->rs.m, rows);
    int rc = draw_rows(p, rows);
    free(rows);
    return rc;
}

static int logreg_open(const struct aia_context *ctx,
                       const struct aia_partition *part, void **state,
                       struct aia_error *err)
{
    static const char *const gen[] = {"rows", "cols", "flip", "margin"};
    struct logreg *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    aia_rowset_init(&p->rs, ctx, part);
    p->l2 = aia_arg(ctx->args, "l2")->d;
    if (ctx->data) {
        if (load_data(p, ctx->data, err) < 0)
            goto fail;
        aia_note_ignored_names(ctx, "logreg", gen, sizeof gen / sizeof gen[0]);
    } else if (open_generated(p, ctx, part) < 0) {
        aia_seterr(err, "out of memory for this rank's rows of %zu columns",
                   (size_t)aia_arg(ctx->args, "cols")->i);
        goto fail;
    }
    if (aia_arg(ctx->args, "precision")->i == 1 && p->rs.k > 0 &&
        !p->rs.all) {
        const double *A = p->rs.data ? p->rs.data->x : p->A;
        if (!A) {
            aia_seterr(err, "precision: float32 takes dense rows (the data's "
                            "storage: dense)");
            goto fail;
        }
        if (aiar_f32_open(&p->f, A, p->rs.k, p->rs.n) < 0) {
            aia_seterr(err, "out of memory for %zu rows as floats", p->rs.k);
            goto fail;
        }
    }
    if (aia_rowset_scratch(&p->rs, err) < 0)
        goto fail;
    *state = p;
    return 0;
fail:
    logreg_close(p);
    return -1;
}

/* The coordinator draws its generated rows once, when they fit; when they
 * do not, get_row draws each again on every pass. */
static void cache(struct logreg *p)
{
    if (p->rs.all && !p->rs.data && !p->A && p->rs.k > 0 &&
        p->rs.n <= CACHE_MAX / p->rs.k)
        draw_rows(p, NULL);
}

/* Row i of what this rank holds, and its label as a sign.  A row drawn
 * again goes to the scratch row, valid until the next call. */
static double get_row(struct logreg *p, size_t i, struct aia_row *r)
{
    double s;
    if (p->rs.data) {
        aia_data_row(p->rs.data, i, r);
        s = p->s[i];
    } else if (p->A) {
        aia_dense_row(r, p->A + i * p->rs.n);
        s = p->s[i];
    } else {
        gen_row(p, i, p->rs.row, &s);
        aia_dense_row(r, p->rs.row);
    }
    return s;
}

/* log(1 + exp(-z)) without overflow. */
static double softplus_neg(double z)
{
    return fmax(-z, 0) + log1p(exp(-fabs(z)));
}

/* sigma(-z) = 1/(1 + exp(z)) without overflow. */
static double sigma_neg(double z)
{
    double e = exp(-fabs(z));
    return z >= 0 ? e / (1 + e) : 1 / (1 + e);
}

/* Mean loss over the rows held, plus the penalty; with wrong not NULL,
 * also the number of rows with z <= 0. */
static double mean_loss(struct logreg *p, const double *x, size_t *wrong)
{
    double sum = 0;
    size_t bad = 0;
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        double sg = get_row(p, i, &r);
        double z = sg * aiar_row_dot(&r, x, p->rs.n);
        sum += softplus_neg(z);
        bad += !(z > 0);
    }
    if (wrong)
        *wrong = bad;
    double f = p->rs.k ? sum / (double)p->rs.k : 0;
    if (p->l2 > 0)
        f += 0.5 * p->l2 * aia_dot(x, x, p->rs.n);
    return f;
}

static int logreg_loss(void *state, const double *x, double *f,
                       struct aia_error *err)
{
    struct logreg *p = state;
    (void)err;
    cache(p);
    *f = mean_loss(p, x, NULL);
    return 0;
}

/* A row's weight in the gradient: -sigma(-z_i) s_i, z_i = s_i a_i . x. */
static double weight(const void *ctx, size_t i, double z)
{
    double sg = ((const struct logreg *)ctx)->s[i];
    return -sigma_neg(sg * z) * sg;
}

static int logreg_gradient(void *state, const double *x, const size_t *idx,
                           size_t nidx, double *g, struct aia_error *err)
{
    struct logreg *p = state;
    cache(p);
    size_t count = aia_gradient_begin(&p->rs, idx, nidx, g, p->rs.n, err);
    if (count == 0)
        return -1;
    size_t n = p->rs.n;
    if (p->f.x)
        aiar_f32_pass(&p->f, idx, count, x, weight, p, g);
    for (size_t t = 0; !p->f.x && t < count; t++) {
        struct aia_row r;
        double sg = get_row(p, idx ? idx[t] : t, &r);
        double z = sg * aiar_row_dot(&r, x, n);
        aiar_row_axpy(&r, -sigma_neg(z) * sg, g, n);
    }
    aia_gradient_end(g, x, n, count, p->l2);
    return 0;
}

static int logreg_metric(void *state, const double *x, double *value,
                         struct aia_error *err)
{
    struct logreg *p = state;
    if (p->rs.k == 0)
        return aia_seterr(err, "an accuracy over no rows");
    cache(p);
    size_t wrong;
    mean_loss(p, x, &wrong);
    *value = (double)(p->rs.k - wrong) / (double)p->rs.k;
    return 0;
}

/* f, its gradient g and its Hessian H (full) at x over every row; the
 * rows with z <= 0 in *wrong. */
static double newton_pass(struct logreg *p, const double *x, double *g,
                          double *H, size_t *wrong)
{
    size_t n = p->rs.n, bad = 0;
    double sum = 0;
    memset(g, 0, n * sizeof *g);
    memset(H, 0, n * n * sizeof *H);
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        double sg = get_row(p, i, &r);
        double z = sg * aiar_row_dot(&r, x, n);
        double e = exp(-fabs(z));
        sum += softplus_neg(z);
        bad += !(z > 0);
        aiar_row_axpy(&r, -sigma_neg(z) * sg, g, n);
        aia_row_outer(&r, e / ((1 + e) * (1 + e)), H, n);
    }
    double inv = 1.0 / (double)p->rs.k;
    for (size_t j = 0; j < n; j++) {
        g[j] = g[j] * inv + p->l2 * x[j];
        for (size_t l = j; l < n; l++)
            H[l * n + j] = H[j * n + l] *= inv;
        H[j * n + j] += p->l2;
    }
    *wrong = bad;
    return sum * inv + 0.5 * p->l2 * aia_dot(x, x, n);
}

/* Newton's method from 0 with Armijo backtracking.  It stops when the
 * Newton decrement g'H^-1g (twice the expected f - f*) is below 1e-20, or
 * below 1e-14 and no longer halving at each step: rounding then decides.
 * Close to the optimum f(x + d) and f(x) agree to rounding, so the full
 * step is taken there without testing the decrease. */
static int newton(struct logreg *p, double *x, double *H, double *g, double *d,
                  double *xt, struct aia_error *err)
{
    size_t n = p->rs.n, wrong;
    double prev = INFINITY;
    memset(x, 0, n * sizeof *x);
    for (int it = 0; it < NEWTON_MAX; it++) {
        double f = newton_pass(p, x, g, H, &wrong);
        if (!isfinite(f))
            return aia_seterr(err, "the loss is %g at Newton step %d", f, it);
        if (p->l2 == 0 && wrong == 0)
            return aia_seterr(err,
                              "the rows are linearly separable (Newton "
                              "step %d classifies all %zu correctly): "
                              "with l2 = 0 the loss has no finite "
                              "minimiser; set l2 > 0",
                              it, p->rs.k);
        double big = 0;
        for (size_t j = 0; j < n; j++)
            big = fmax(big, H[j * n + j]);
        if (aia_cholesky(H, n, 0, 1e-14 * big) < 0)
            return aia_seterr(err,
                              "the Hessian is singular at Newton step "
                              "%d (%zu rows, %zu columns, l2 %g)",
                              it, p->rs.k, n, p->l2);
        aia_cholesky_solve(H, g, d, n); /* d = -H^-1 g */
        for (size_t j = 0; j < n; j++)
            d[j] = -d[j];
        double dec = -aia_dot(g, d, n);
        if (dec <= 1e-20 || (dec <= 1e-14 && dec > 0.5 * prev))
            return 0;
        prev = dec;
        for (double t = 1;; t *= 0.5) {
            if (t < 1e-12)
                return aia_seterr(err,
                                  "the line search failed at Newton "
                                  "step %d (decrement %.3g)",
                                  it, dec);
            for (size_t j = 0; j < n; j++)
                xt[j] = x[j] + t * d[j];
            if (dec <= 1e-8 || mean_loss(p, xt, NULL) <= f - 1e-4 * t * dec)
                break;
        }
        memcpy(x, xt, n * sizeof *x);
    }
    return aia_seterr(err, "Newton's method did not converge in %d steps",
                      NEWTON_MAX);
}

static int solve(void *state, struct aia_error *err)
{
    struct logreg *p = state;
    size_t n = p->rs.n;
    if (n > HESS_MAX)
        return aia_seterr(err, "dimension %zu is above %d: no Hessian", n,
                          HESS_MAX);
    if (p->rs.k == 0)
        return aia_seterr(err, "no rows: no optimum");
    if ((double)p->rs.k * (double)n * (double)n > NEWTON_WORK)
        return aia_seterr(err,
                          "%zu rows of %zu columns: a Newton step would take "
                          "%.2g operations, above %.2g",
                          p->rs.k, n, (double)p->rs.k * (double)n * (double)n,
                          NEWTON_WORK);
    cache(p);
    double *H = malloc(n * n * sizeof *H);
    double *v = malloc(3 * n * sizeof *v);
    p->rs.xopt = malloc(n * sizeof *p->rs.xopt);
    int rc = -1;
    if (!H || !v || !p->rs.xopt)
        aia_seterr(err, "out of memory for the %zu x %zu Hessian", n, n);
    else
        rc = newton(p, p->rs.xopt, H, v, v + n, v + 2 * n, err);
    if (rc == 0)
        p->rs.fopt = mean_loss(p, p->rs.xopt, NULL);
    free(H);
    free(v);
    return rc;
}

static int logreg_optimum(void *state, double *x, double *f,
                          struct aia_error *err)
{
    return aia_rowset_optimum(&((struct logreg *)state)->rs, solve, state, x, f,
                              ((struct logreg *)state)->rs.n, err);
}

/* out = H(x) v = 1/k sum_i sigma(z_i) sigma(-z_i) (a_i . v) a_i + l2 v
 * over the rows held: one pass, two dot products and an axpy a row. */
static int logreg_hvp(void *state, const double *x, const double *v,
                      double *out, struct aia_error *err)
{
    struct logreg *p = state;
    size_t n = p->rs.n;
    if (p->rs.k == 0)
        return aia_seterr(err, "a Hessian over no rows");
    cache(p);
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        double sg = get_row(p, i, &r);
        double e = exp(-fabs(sg * aiar_row_dot(&r, x, n)));
        double w = e / ((1 + e) * (1 + e));
        aiar_row_axpy(&r, w * aiar_row_dot(&r, v, n), out, n);
    }
    double inv = 1.0 / (double)p->rs.k;
    for (size_t j = 0; j < n; j++)
        out[j] = out[j] * inv + p->l2 * v[j];
    return 0;
}

/* ------------------------------------------------------------------ */
/* Smoothness: the log-loss's Hessian is A'DA/k + l2 I with D <= 1/4,
 * equal to 1/4 at x = 0, so L = lambda_max(A'A)/(4k) + l2 is the largest
 * eigenvalue of the Hessian at 0, taken by central differences of the
 * gradient around 0 with t = 1e-4 (aia_gradient_smoothness). */

extern const struct aia_problem_plugin aia_problem_plugin;

static int logreg_smoothness(void *state, double *L, struct aia_error *err)
{
    return aia_gradient_smoothness(&aia_problem_plugin, state, 1e-4, L, err);
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h =
        AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "logreg", "1.0",
                   "binary logistic regression, optionally L2, on "
                   "generated or given rows (loss: mean log-loss)",
                   params),
    .flags = AIA_PROBLEM_DATA,
    .open = logreg_open,
    .close = logreg_close,
    .loss = logreg_loss,
    .gradient = logreg_gradient,
    .optimum = logreg_optimum,
    .smoothness = logreg_smoothness,
    .metric = logreg_metric,
    .hvp = logreg_hvp,
    AIA_ROWSET_SIZES,
    .metric_name = "accuracy",
};
