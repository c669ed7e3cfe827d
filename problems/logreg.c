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

enum { P_ROWS, P_COLS, P_L2, P_FLIP, P_MARGIN };

static const struct aia_param params[] = {
    {"rows", AIA_INT, "1000", "rows m of the generated data, over all workers",
     NULL, 1, 1e12},
    {"cols", AIA_INT, "10", "columns n: the model's dimension", NULL, 1, 1e9},
    {"l2", AIA_DOUBLE, "0", "L2 penalty: the loss gains l2/2 ||x||^2", NULL, 0,
     1e12},
    {"flip", AIA_DOUBLE, "0",
     "probability that a generated label is flipped (label noise)", NULL, 0, 1},
    {"margin", AIA_DOUBLE, "0.1",
     "least distance of a generated row to the hidden separating plane", NULL,
     0, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct logreg {
    size_t m, n;
    double l2, flip, margin;
    uint64_t seed;
    double *wtrue, wnorm;
    /* rows given, or NULL: generated */
    const struct aia_dataset *data;
    int all;     /* the coordinator's view */
    size_t k;    /* rows held */
    double *A;   /* generated rows held, k x n (NULL: data, or not yet) */
    double *s;   /* each held row's label as a sign, -1 or +1 */
    double *row; /* n scratch */
    /* coordinator */
    int opt; /* 0 not tried, 1 known, -1 impossible */
    double *xopt, fopt;
    struct aia_error why; /* why the optimum is not known */
};

/* One row, dense (a: n entries) or sparse (nnz entries col/val). */
struct row {
    const double *a;
    const uint32_t *col;
    const double *val;
    size_t nnz;
    double s;
};

static void gen_row(const struct logreg *p, size_t r, double *a, double *s)
{
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, STREAM_ROWS + (uint64_t)r);
    double z = 0;
    for (size_t j = 0; j < p->n; j++) {
        a[j] = aia_rng_normal(&g);
        z += a[j] * p->wtrue[j];
    }
    z /= p->wnorm; /* signed distance to the plane */
    if (fabs(z) < p->margin) {
        double push = z < 0 ? -p->margin : p->margin;
        for (size_t j = 0; j < p->n; j++)
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
    free(p->wtrue);
    free(p->A);
    free(p->s);
    free(p->row);
    free(p->xopt);
    free(p);
}

/* Rows of part that this rank holds: their count, and when rows is not
 * NULL, their indices. */
static size_t owned(const struct aia_partition *part, size_t m, size_t *rows)
{
    if (part->scheme == AIA_PART_BLOCK) {
        size_t first = aia_partition_first(part, m, part->index);
        size_t last = aia_partition_first(part, m, part->index + 1);
        for (size_t r = first; rows && r < last; r++)
            rows[r - first] = r;
        return last - first;
    }
    size_t k = 0;
    for (size_t r = 0; r < m; r++)
        if (aia_partition_owner(part, m, r) == part->index) {
            if (rows)
                rows[k] = r;
            k++;
        }
    return k;
}

/* The rows given are complete, their sparse columns in range and their
 * labels 0/1 or -1/+1; the signs go to p->s.  Rows are named from 1. */
static int load_data(struct logreg *p, const struct aia_dataset *d,
                     struct aia_error *err)
{
    const char *src = d->source ? d->source : "the data";
    if (d->cols == 0)
        return aia_seterr(err, "%s: no feature columns", src);
    if (p->all && d->rows != 0 && d->rows != d->total_rows)
        return aia_seterr(err,
                          "%s: the coordinator was given %zu of the %zu rows",
                          src, d->rows, d->total_rows);
    p->data = d;
    p->n = d->cols;
    p->m = d->total_rows;
    p->k = d->rows;
    if (d->rows == 0)
        return 0;
    if (!d->y || (!d->x && (!d->row_start || !d->col || !d->val)))
        return aia_seterr(err, "%s: rows without labels or features", src);
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
        if (d->x)
            continue;
        for (size_t k = d->row_start[i]; k < d->row_start[i + 1]; k++)
            if (d->col[k] >= d->cols)
                return aia_seterr(err, "%s: row %zu: column %lu of %zu", src,
                                  id, (unsigned long)d->col[k] + 1, d->cols);
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

/* Say once, on the coordinator, that the generator's parameters given in
 * the job have no effect: the rows come from the data file. */
static void note_ignored(const struct aia_context *ctx)
{
    static const int gen[] = {P_ROWS, P_COLS, P_FLIP, P_MARGIN};
    if (ctx->role != AIA_ROLE_COORDINATOR || !ctx->host || !ctx->host->log)
        return;
    for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++)
        if (ctx->args[gen[i]].given)
            ctx->host->log(ctx->host, AIA_LOG_WARN,
                           "logreg: %s is ignored: the rows come from %s",
                           ctx->args[gen[i]].name,
                           ctx->data->source ? ctx->data->source
                                             : "the data file");
}

/* Draw the rows held: a worker's own at open, every row on the
 * coordinator at first need.  0, or -1 out of memory. */
static int draw_rows(struct logreg *p, const size_t *rows)
{
    size_t k = p->k ? p->k : 1;
    if (!(p->A = malloc(k * p->n * sizeof *p->A)) ||
        !(p->s = malloc(k * sizeof *p->s))) {
        free(p->A);
        p->A = NULL;
        return -1;
    }
    for (size_t i = 0; i < p->k; i++)
        gen_row(p, rows ? rows[i] : i, p->A + i * p->n, &p->s[i]);
    return 0;
}

static int open_generated(struct logreg *p, const struct aia_context *ctx,
                          const struct aia_partition *part)
{
    p->m = (size_t)ctx->args[P_ROWS].i;
    p->n = (size_t)ctx->args[P_COLS].i;
    p->flip = ctx->args[P_FLIP].d;
    p->margin = ctx->args[P_MARGIN].d;
    if (!(p->wtrue = malloc(p->n * sizeof *p->wtrue)))
        return -1;
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, STREAM_WTRUE);
    double ww = 0;
    for (size_t j = 0; j < p->n; j++) {
        p->wtrue[j] = aia_rng_normal(&g);
        ww += p->wtrue[j] * p->wtrue[j];
    }
    p->wnorm = sqrt(ww);
    if (p->all) {
        p->k = p->m;
        return 0;
    }
    p->k = owned(part, p->m, NULL);
    size_t *rows = malloc((p->k ? p->k : 1) * sizeof *rows);
    if (!rows)
        return -1;
    owned(part, p->m, rows);
    int rc = draw_rows(p, rows);
    free(rows);
    return rc;
}

static int logreg_open(const struct aia_context *ctx,
                       const struct aia_partition *part, void **state,
                       struct aia_error *err)
{
    struct logreg *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->l2 = ctx->args[P_L2].d;
    p->seed = ctx->seed;
    p->all = part->index == AIA_PART_ALL;
    if (ctx->data) {
        if (load_data(p, ctx->data, err) < 0) {
            logreg_close(p);
            return -1;
        }
        note_ignored(ctx);
    } else if (open_generated(p, ctx, part) < 0) {
        logreg_close(p);
        return aia_seterr(err,
                          "out of memory for this rank's rows of %zu columns",
                          (size_t)ctx->args[P_COLS].i);
    }
    if (!(p->row = malloc(p->n * sizeof *p->row))) {
        size_t n = p->n;
        logreg_close(p);
        return aia_seterr(err, "out of memory for a row of %zu columns", n);
    }
    *state = p;
    return 0;
}

static size_t logreg_dim(void *state)
{
    return ((struct logreg *)state)->n;
}

static size_t logreg_rows(void *state)
{
    return ((struct logreg *)state)->k;
}

/* The coordinator draws its generated rows once, when they fit; when they
 * do not, get_row draws each again on every pass. */
static void cache(struct logreg *p)
{
    if (p->all && !p->data && !p->A && p->k > 0 && p->n <= CACHE_MAX / p->k)
        draw_rows(p, NULL);
}

/* Row i of what this rank holds.  A row drawn again goes to the scratch
 * row, valid until the next call. */
static void get_row(struct logreg *p, size_t i, struct row *r)
{
    const struct aia_dataset *d = p->data;
    r->col = NULL;
    r->val = NULL;
    r->nnz = 0;
    if (d && !d->x) {
        r->a = NULL;
        r->col = d->col + d->row_start[i];
        r->val = d->val + d->row_start[i];
        r->nnz = d->row_start[i + 1] - d->row_start[i];
        r->s = p->s[i];
    } else if (d) {
        r->a = d->x + i * p->n;
        r->s = p->s[i];
    } else if (p->A) {
        r->a = p->A + i * p->n;
        r->s = p->s[i];
    } else {
        gen_row(p, i, p->row, &r->s);
        r->a = p->row;
    }
}

/* Four partial sums: the additions no longer wait on each other, so the
 * loop runs at memory speed (bench/: 2.9x under the bandwidth bound with
 * one sum). */
static double dot(const double *restrict a, const double *restrict x,
                  size_t n)
{
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
    return (s0 + s1) + (s2 + s3);
}

static double row_dot(const struct row *r, const double *x, size_t n)
{
    if (r->a)
        return dot(r->a, x, n);
    double s = 0;
    for (size_t k = 0; k < r->nnz; k++)
        s += r->val[k] * x[r->col[k]];
    return s;
}

/* g += alpha * a */
/* g += alpha * a, with no aliasing, so the compiler vectorizes it. */
static void axpy(double alpha, const double *restrict a, double *restrict g,
                 size_t n)
{
    for (size_t j = 0; j < n; j++)
        g[j] += alpha * a[j];
}

static void row_axpy(const struct row *r, double alpha, double *g, size_t n)
{
    if (r->a) {
        axpy(alpha, r->a, g, n);
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        g[r->col[k]] += alpha * r->val[k];
}

/* Upper triangle of H += w a a' (see lrmse.c for the sparse pairs). */
static void row_outer(const struct row *r, double w, double *H, size_t n)
{
    if (r->a) {
        for (size_t j = 0; j < n; j++) {
            double wa = w * r->a[j];
            double *Hj = H + j * n;
            for (size_t l = j; l < n; l++)
                Hj[l] += wa * r->a[l];
        }
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        for (size_t q = 0; q < r->nnz; q++)
            if (r->col[k] <= r->col[q])
                H[r->col[k] * n + r->col[q]] += w * r->val[k] * r->val[q];
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
    for (size_t i = 0; i < p->k; i++) {
        struct row r;
        get_row(p, i, &r);
        double z = r.s * row_dot(&r, x, p->n);
        sum += softplus_neg(z);
        bad += !(z > 0);
    }
    if (wrong)
        *wrong = bad;
    double f = p->k ? sum / (double)p->k : 0;
    if (p->l2 > 0)
        f += 0.5 * p->l2 * dot(x, x, p->n);
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

static int logreg_gradient(void *state, const double *x, const size_t *idx,
                           size_t nidx, double *g, struct aia_error *err)
{
    struct logreg *p = state;
    size_t n = p->n, count = idx ? nidx : p->k;
    memset(g, 0, n * sizeof *g);
    if (count == 0)
        return aia_seterr(err, "a gradient over no rows");
    cache(p);
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        if (i >= p->k)
            return aia_seterr(err, "row %zu is not among the %zu held", i,
                              p->k);
        struct row r;
        get_row(p, i, &r);
        double z = r.s * row_dot(&r, x, n);
        row_axpy(&r, -sigma_neg(z) * r.s, g, n);
    }
    double inv = 1.0 / (double)count;
    for (size_t j = 0; j < n; j++)
        g[j] = g[j] * inv + p->l2 * x[j];
    return 0;
}

static int logreg_metric(void *state, const double *x, double *value,
                         struct aia_error *err)
{
    struct logreg *p = state;
    if (p->k == 0)
        return aia_seterr(err, "an accuracy over no rows");
    cache(p);
    size_t wrong;
    mean_loss(p, x, &wrong);
    *value = (double)(p->k - wrong) / (double)p->k;
    return 0;
}

/* In place: H = L L' (lower triangle), 0 or -1 when not numerically
 * positive definite. */
static int cholesky(double *H, size_t n)
{
    double big = 0;
    for (size_t j = 0; j < n; j++)
        big = fmax(big, H[j * n + j]);
    for (size_t j = 0; j < n; j++) {
        double s = H[j * n + j];
        for (size_t k = 0; k < j; k++)
            s -= H[j * n + k] * H[j * n + k];
        if (!(s > 1e-14 * big))
            return -1;
        double l = sqrt(s);
        H[j * n + j] = l;
        for (size_t i = j + 1; i < n; i++) {
            double t = H[i * n + j];
            for (size_t k = 0; k < j; k++)
                t -= H[i * n + k] * H[j * n + k];
            H[i * n + j] = t / l;
        }
    }
    return 0;
}

/* f, its gradient g and its Hessian H (full) at x over every row; the
 * rows with z <= 0 in *wrong. */
static double newton_pass(struct logreg *p, const double *x, double *g,
                          double *H, size_t *wrong)
{
    size_t n = p->n, bad = 0;
    double sum = 0;
    memset(g, 0, n * sizeof *g);
    memset(H, 0, n * n * sizeof *H);
    for (size_t i = 0; i < p->k; i++) {
        struct row r;
        get_row(p, i, &r);
        double z = r.s * row_dot(&r, x, n);
        double e = exp(-fabs(z));
        sum += softplus_neg(z);
        bad += !(z > 0);
        row_axpy(&r, -sigma_neg(z) * r.s, g, n);
        row_outer(&r, e / ((1 + e) * (1 + e)), H, n);
    }
    double inv = 1.0 / (double)p->k;
    for (size_t j = 0; j < n; j++) {
        g[j] = g[j] * inv + p->l2 * x[j];
        for (size_t l = j; l < n; l++)
            H[l * n + j] = H[j * n + l] *= inv;
        H[j * n + j] += p->l2;
    }
    *wrong = bad;
    return sum * inv + 0.5 * p->l2 * dot(x, x, n);
}

/* d = -H^-1 g from the Cholesky factor in H. */
static void newton_dir(const double *L, const double *g, double *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double t = -g[i];
        for (size_t k = 0; k < i; k++)
            t -= L[i * n + k] * d[k];
        d[i] = t / L[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double t = d[i];
        for (size_t k = i + 1; k < n; k++)
            t -= L[k * n + i] * d[k];
        d[i] = t / L[i * n + i];
    }
}

/* Newton's method from 0 with Armijo backtracking.  It stops when the
 * Newton decrement g'H^-1g (twice the expected f - f*) is below 1e-20, or
 * below 1e-14 and no longer halving at each step: rounding then decides.
 * Close to the optimum f(x + d) and f(x) agree to rounding, so the full
 * step is taken there without testing the decrease. */
static int newton(struct logreg *p, double *x, double *H, double *g, double *d,
                  double *xt, struct aia_error *err)
{
    size_t n = p->n, wrong;
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
                              it, p->k);
        if (cholesky(H, n) < 0)
            return aia_seterr(err,
                              "the Hessian is singular at Newton step "
                              "%d (%zu rows, %zu columns, l2 %g)",
                              it, p->k, n, p->l2);
        newton_dir(H, g, d, n);
        double dec = -dot(g, d, n);
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

static int solve(struct logreg *p, struct aia_error *err)
{
    size_t n = p->n;
    if (n > HESS_MAX)
        return aia_seterr(err, "dimension %zu is above %d: no Hessian", n,
                          HESS_MAX);
    if (p->k == 0)
        return aia_seterr(err, "no rows: no optimum");
    if ((double)p->k * (double)n * (double)n > NEWTON_WORK)
        return aia_seterr(err,
                          "%zu rows of %zu columns: a Newton step would take "
                          "%.2g operations, above %.2g",
                          p->k, n, (double)p->k * (double)n * (double)n,
                          NEWTON_WORK);
    cache(p);
    double *H = malloc(n * n * sizeof *H);
    double *v = malloc(3 * n * sizeof *v);
    p->xopt = malloc(n * sizeof *p->xopt);
    int rc = -1;
    if (!H || !v || !p->xopt)
        aia_seterr(err, "out of memory for the %zu x %zu Hessian", n, n);
    else
        rc = newton(p, p->xopt, H, v, v + n, v + 2 * n, err);
    if (rc == 0)
        p->fopt = mean_loss(p, p->xopt, NULL);
    free(H);
    free(v);
    return rc;
}

static int logreg_optimum(void *state, double *x, double *f,
                          struct aia_error *err)
{
    struct logreg *p = state;
    if (!p->all)
        return aia_seterr(err, "the optimum is known to the coordinator only");
    if (p->opt == 0)
        p->opt = solve(p, &p->why) == 0 ? 1 : -1;
    if (p->opt < 0) {
        *err = p->why;
        return -1;
    }
    memcpy(x, p->xopt, p->n * sizeof *x);
    *f = p->fopt;
    return 0;
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
    .dim = logreg_dim,
    .rows = logreg_rows,
    .loss = logreg_loss,
    .gradient = logreg_gradient,
    .optimum = logreg_optimum,
    .metric = logreg_metric,
    .metric_name = "accuracy",
};
