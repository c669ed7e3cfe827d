/* huber.c - robust linear regression with the Huber loss, a problem
 * plugin for aiarun built outside its tree (see aiarun-plugin(7)).
 *
 *     f(x) = 1/m * sum_i h(a_i . x - b_i)
 *     h(r) = r^2 / 2               when |r| <= delta
 *            delta (|r| - delta/2) otherwise
 *     grad f(x) = 1/m * sum_i clamp(a_i . x - b_i, -delta, delta) a_i
 *
 * Least squares lets a few wild targets drag the fit; the Huber loss
 * grows only linearly past delta, so they pull no harder than delta each.
 * Its gradient is (1/m) sum |a_i|^2-Lipschitz, so a step of about 1 suits
 * rows of unit variance.
 *
 * Generated rows come from the job's seed: a_ij ~ N(0, 1), b_i = a_i .
 * x_true + noise e_i, and with probability `outliers` the target is
 * replaced by outlier_scale * N(0, 1).  Row r is drawn from its own random
 * stream, so each worker draws exactly the rows of its part and every rank
 * agrees on every row.  Rows from a data file (problem.data in the job)
 * are used instead when given, dense or sparse.
 *
 * The metric, reported beside the loss, is the fraction of rows whose
 * residual is within delta (inliers): at the Huber fit it is about the
 * fraction of clean rows, where a least-squares fit, dragged by the wild
 * targets, leaves far fewer.
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags aiarun) huber.c \
 *            -o huber.so -lm
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

static const struct aia_param params[] = {
    {"rows", AIA_INT, "2000", "generated rows", NULL, 1, 1e9},
    {"cols", AIA_INT, "10", "generated features", NULL, 1, 1e6},
    {"delta", AIA_DOUBLE, "1", "residual past which the loss is linear", NULL,
     1e-9, 1e9},
    {"noise", AIA_DOUBLE, "0.1", "standard deviation of the targets' noise",
     NULL, 0, 1e9},
    {"outliers", AIA_DOUBLE, "0.1",
     "fraction of targets replaced by wild "
     "values",
     NULL, 0, 1},
    {"outlier_scale", AIA_DOUBLE, "100",
     "standard deviation of the wild targets", NULL, 0, 1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* A stream number of our own for x_true, apart from the rows' 0 .. m-1. */
#define STREAM_XTRUE 0x4855424552000000ull

struct huber {
    size_t n; /* features */
    size_t k; /* rows held by this rank */
    double delta;
    /* generated rows (dense, k x n) and targets, or NULL for data rows */
    double *a, *b;
    const struct aia_dataset *data;
};

/* The generator's noise, share of outliers and their scale, read by name
 * once (aia_arg walks the table). */
struct gen {
    double noise, outliers, outlier_scale;
};

static void gen_row(const struct gen *q, uint64_t seed, const double *xtrue,
                    size_t n, size_t r, double *a, double *b)
{
    struct aia_rng g;
    aia_rng_seed(&g, seed, r);
    double dot = 0;
    for (size_t j = 0; j < n; j++) {
        a[j] = aia_rng_normal(&g);
        dot += a[j] * xtrue[j];
    }
    *b = dot + q->noise * aia_rng_normal(&g);
    if (aia_rng_uniform(&g) < q->outliers)
        *b = q->outlier_scale * aia_rng_normal(&g);
}

/* Generate the rows of this rank's part (every row on the coordinator,
 * which computes the reported loss). */
static int generate(struct huber *p, const struct aia_context *ctx,
                    const struct aia_partition *part, struct aia_error *err)
{
    const struct aia_value *args = ctx->args;
    size_t m = (size_t)aia_arg(args, "rows")->i;
    p->n = (size_t)aia_arg(args, "cols")->i;
    struct gen q = {aia_arg(args, "noise")->d, aia_arg(args, "outliers")->d,
                    aia_arg(args, "outlier_scale")->d};
    double *xtrue = malloc(p->n * sizeof *xtrue);
    if (!xtrue)
        return aia_seterr(err, "out of memory");
    struct aia_rng g;
    aia_rng_seed(&g, ctx->seed, STREAM_XTRUE);
    for (size_t j = 0; j < p->n; j++)
        xtrue[j] = aia_rng_normal(&g);
    int all = part->index == AIA_PART_ALL;
    p->k = 0;
    for (size_t r = 0; r < m; r++)
        if (all || aia_partition_owner(ctx->host, part, m, r) == part->index)
            p->k++;
    p->a = malloc((p->k ? p->k : 1) * p->n * sizeof *p->a);
    p->b = malloc((p->k ? p->k : 1) * sizeof *p->b);
    if (!p->a || !p->b) {
        free(xtrue);
        return aia_seterr(err, "out of memory for %zu rows of %zu", p->k, p->n);
    }
    size_t i = 0;
    for (size_t r = 0; r < m; r++)
        if (all || aia_partition_owner(ctx->host, part, m, r) == part->index) {
            gen_row(&q, ctx->seed, xtrue, p->n, r, p->a + i * p->n, &p->b[i]);
            i++;
        }
    free(xtrue);
    return 0;
}

/* What the table's bounds cannot say alone; run by aiarun --check and by
 * open. */
static int huber_check(const struct aia_context *ctx, struct aia_error *err)
{
    const struct aia_value *noise = aia_arg(ctx->args, "noise");
    const struct aia_value *delta = aia_arg(ctx->args, "delta");
    if (noise->given && delta->given && delta->d < noise->d)
        return aia_seterr(err,
                          "delta %g is below the noise %g: every row would "
                          "count as an outlier",
                          delta->d, noise->d);
    return 0;
}

static void huber_close(void *state)
{
    struct huber *p = state;
    if (!p)
        return;
    free(p->a);
    free(p->b);
    free(p);
}

static int huber_open(const struct aia_context *ctx,
                      const struct aia_partition *part, void **state,
                      struct aia_error *err)
{
    if (huber_check(ctx, err) < 0)
        return -1;
    struct huber *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->delta = aia_arg(ctx->args, "delta")->d;
    if (ctx->data) {
        const struct aia_dataset *d = ctx->data;
        if (d->cols == 0 || (d->rows && !d->y) ||
            (d->rows && !d->x && (!d->row_start || !d->col || !d->val))) {
            huber_close(p);
            return aia_seterr(err, "%s: rows without targets or features",
                              d->source ? d->source : "the data");
        }
        p->data = d;
        p->n = d->cols;
        p->k = d->rows;
    } else if (generate(p, ctx, part, err) < 0) {
        huber_close(p);
        return -1;
    }
    *state = p;
    return 0;
}

static size_t huber_dim(void *state)
{
    return ((struct huber *)state)->n;
}

static size_t huber_rows(void *state)
{
    return ((struct huber *)state)->k;
}

/* The residual a_i . x - b_i of local row i: dense generated rows, dense
 * data rows or sparse (CSR) data rows. */
static double residual(const struct huber *p, size_t i, const double *x)
{
    const struct aia_dataset *d = p->data;
    double dot = 0;
    if (!d) {
        const double *a = p->a + i * p->n;
        for (size_t j = 0; j < p->n; j++)
            dot += a[j] * x[j];
        return dot - p->b[i];
    }
    if (d->x) {
        const double *a = d->x + i * p->n;
        for (size_t j = 0; j < p->n; j++)
            dot += a[j] * x[j];
    } else {
        for (size_t e = d->row_start[i]; e < d->row_start[i + 1]; e++)
            if (d->col[e] < p->n)
                dot += d->val[e] * x[d->col[e]];
    }
    return dot - d->y[i];
}

/* g += w * a_i, for local row i. */
static void add_row(const struct huber *p, size_t i, double w, double *g)
{
    const struct aia_dataset *d = p->data;
    if (!d || d->x) {
        const double *a = d ? d->x + i * p->n : p->a + i * p->n;
        for (size_t j = 0; j < p->n; j++)
            g[j] += w * a[j];
        return;
    }
    for (size_t e = d->row_start[i]; e < d->row_start[i + 1]; e++)
        if (d->col[e] < p->n)
            g[d->col[e]] += w * d->val[e];
}

static int huber_loss(void *state, const double *x, double *f,
                      struct aia_error *err)
{
    const struct huber *p = state;
    (void)err;
    double sum = 0;
    for (size_t i = 0; i < p->k; i++) {
        double r = fabs(residual(p, i, x));
        sum += r <= p->delta ? 0.5 * r * r : p->delta * (r - 0.5 * p->delta);
    }
    *f = p->k ? sum / (double)p->k : 0;
    return 0;
}

static int huber_gradient(void *state, const double *x, const size_t *idx,
                          size_t nidx, double *g, struct aia_error *err)
{
    const struct huber *p = state;
    size_t count = idx ? nidx : p->k;
    memset(g, 0, p->n * sizeof *g);
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        if (i >= p->k)
            return aia_seterr(err, "row %zu of the %zu this rank holds", i,
                              p->k);
        double r = residual(p, i, x);
        double psi = r > p->delta ? p->delta : r < -p->delta ? -p->delta : r;
        add_row(p, i, psi, g);
    }
    if (count)
        for (size_t j = 0; j < p->n; j++)
            g[j] /= (double)count;
    return 0;
}

/* Fraction of this rank's rows whose residual is within delta. */
static int huber_inliers(void *state, const double *x, double *value,
                         struct aia_error *err)
{
    const struct huber *p = state;
    (void)err;
    double sum = 0;
    for (size_t i = 0; i < p->k; i++)
        sum += fabs(residual(p, i, x)) <= p->delta;
    *value = p->k ? sum / (double)p->k : 0;
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "huber", "1.0",
                    "robust linear regression with the Huber loss", params),
    .flags = AIA_PROBLEM_DATA,
    .open = huber_open,
    .close = huber_close,
    .dim = huber_dim,
    .rows = huber_rows,
    .loss = huber_loss,
    .gradient = huber_gradient,
    .metric = huber_inliers,
    .metric_name = "inliers",
    .check = huber_check,
};
