/* softmax.c - multinomial logistic regression over C classes, optionally
 * L2-regularised, on rows from a data file whose targets are class
 * indices 0 .. C-1.
 *
 * The model x is the C x n weight matrix W (row-major, one row a class)
 * followed by the C biases b: dim = C (n + 1).  With scores
 * z_i = W a_i + b and p_i = softmax(z_i):
 *
 *     f(x)      = 1/m sum_i (log sum_c exp z_ic - z_i,y_i) + l2/2 ||x||^2
 *     grad_W f  = 1/m sum_i (p_i - e_y_i) a_i' + l2 W
 *     grad_b f  = 1/m sum_i (p_i - e_y_i) + l2 b
 *
 * The scores are shifted by their largest before exp, so no overflow.
 * A block of rows at a time goes through two matrix products (BLAS when
 * the build has it, kernels.h); sparse rows are never expanded.  The metric is the accuracy: the
 * fraction of rows whose highest score is their class (the first class
 * on a tie).  No optimum is offered by the problem itself; its hvp lets
 * the runtime find one (aiarun(5), stop.gap).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "kernels.h"

static const struct aia_param params[] = {
    {"classes", AIA_INT, NULL,
     "classes C: the targets are class indices 0 to C-1", NULL, 2, 1e6},
    {"l2", AIA_DOUBLE, "0", "L2 penalty: the loss gains l2/2 ||x||^2", NULL, 0,
     1e12},
    {"precision", AIA_ENUM, "float64",
     "the matrix products: float64, or float32 (dense rows kept as floats "
     "too; the model, the loss and the sums stay float64)",
     "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct softmax {
    struct aia_rowset rs; /* first: rows, scratch row */
    size_t c;             /* classes */
    double l2;
    double *z;      /* AIAK_BLOCK x c scores, then their gradients */
    double *wt, *gt; /* n x c: W' and the gradient's W' part */
    double *buf;    /* AIAK_BLOCK x n: gathered dense rows */
    struct aiak_f32 f; /* precision: float32 (f.x not NULL) */
    const double *blk; /* the dense block of the last block_pass */
    const float *blkf; /* or its float one */
};

static void softmax_close(void *state)
{
    struct softmax *p = state;
    if (!p)
        return;
    free(p->z);
    free(p->wt);
    free(p->gt);
    free(p->buf);
    aiak_f32_free(&p->f);
    aia_rowset_free(&p->rs);
    free(p);
}

static int softmax_open(const struct aia_context *ctx,
                        const struct aia_partition *part, void **state,
                        struct aia_error *err)
{
    struct softmax *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->c = (size_t)aia_arg(ctx->args, "classes")->i;
    if (aia_rowset_classes(&p->rs, ctx, part, "softmax", p->c, err) < 0 ||
        aia_rowset_scratch(&p->rs, err) < 0)
        goto fail;
    p->l2 = aia_arg(ctx->args, "l2")->d;
    size_t n = p->rs.n, c = p->c;
    p->z = malloc(AIAK_BLOCK * c * sizeof *p->z);
    p->wt = malloc(n * c * sizeof *p->wt);
    p->gt = malloc(n * c * sizeof *p->gt);
    if (p->rs.data->x)
        p->buf = malloc(AIAK_BLOCK * n * sizeof *p->buf);
    if (!p->z || !p->wt || !p->gt || (p->rs.data->x && !p->buf)) {
        aia_seterr(err, "out of memory for %zu scores", c);
        goto fail;
    }
    if (aia_arg(ctx->args, "precision")->i == 1 && p->rs.k > 0) {
        if (!p->rs.data->x) {
            aia_seterr(err, "precision: float32 takes dense rows (the data's "
                            "storage: dense)");
            goto fail;
        }
        if (aiak_f32_open(&p->f, p->rs.data, c) < 0) {
            aia_seterr(err, "out of memory for %zu rows as floats", p->rs.k);
            goto fail;
        }
    }
    aiak_one_thread();
    *state = p;
    return 0;
fail:
    softmax_close(p);
    return -1;
}

static size_t softmax_dim(void *state)
{
    struct softmax *p = state;
    return p->c * (p->rs.n + 1);
}

/* wt = W' (n x c) from x, and in float for precision: float32. */
static void transpose_w(struct softmax *p, const double *x)
{
    size_t n = p->rs.n, c = p->c;
    for (size_t k = 0; k < c; k++)
        for (size_t j = 0; j < n; j++)
            p->wt[j * c + k] = x[k * n + j];
    if (p->f.x)
        aiak_to_f32(p->wt, p->f.v, n * c);
}

/* The scores of the nb rows sel[t0 ..] (t0 .. when sel is NULL) in p->z,
 * each row's turned into its gradient (p - e_y); adds their losses to
 * *sum and the rows classified right to *good.  Keeps the block used for
 * block_tmul.  p->wt must hold W'. */
static void block_pass(struct softmax *p, const double *x, const size_t *sel,
                       size_t t0, size_t nb, double *sum, size_t *good)
{
    size_t c = p->c;
    const double *b = x + c * p->rs.n;
    if (p->f.x)
        p->blkf = aiak_f32_mul(&p->f, p->rs.n, sel, t0, nb, c, p->z);
    else
        p->blk = aiak_block_mul(p->rs.data, sel, t0, nb, p->wt, c, p->z,
                                p->buf);
    for (size_t t = 0; t < nb; t++) {
        size_t i = sel ? sel[t0 + t] : t0 + t, top;
        size_t y = (size_t)p->rs.data->y[i];
        double *z = p->z + t * c;
        for (size_t k = 0; k < c; k++)
            z[k] += b[k];
        *sum += aia_softmax_xent(z, c, y, &top);
        *good += top == y;
    }
}

/* gt += A_b' D for the block of the last block_pass, D in p->z. */
static void block_tmul(struct softmax *p, const size_t *sel, size_t t0,
                       size_t nb)
{
    if (p->f.x)
        aiak_f32_tmul(&p->f, p->rs.n, p->blkf, nb, p->z, p->c, p->gt);
    else
        aiak_block_tmul(p->rs.data, p->blk, sel, t0, nb, p->z, p->c, p->gt);
}

/* Mean loss (with the penalty) or accuracy over the rows held: the one
 * asked for. */
static void evaluate(struct softmax *p, const double *x, double *f, double *acc)
{
    double sum = 0;
    size_t good = 0;
    transpose_w(p, x);
    for (size_t t0 = 0; t0 < p->rs.k; t0 += AIAK_BLOCK) {
        size_t nb = p->rs.k - t0 < AIAK_BLOCK ? p->rs.k - t0 : AIAK_BLOCK;
        block_pass(p, x, NULL, t0, nb, &sum, &good);
    }
    double k = p->rs.k ? (double)p->rs.k : 1;
    if (acc)
        *acc = (double)good / k;
    if (f)
        *f = sum / k +
             (p->l2 > 0 ? 0.5 * p->l2 * aia_dot(x, x, softmax_dim(p)) : 0);
}

static int softmax_loss(void *state, const double *x, double *f,
                        struct aia_error *err)
{
    (void)err;
    evaluate(state, x, f, NULL);
    return 0;
}

static int softmax_metric(void *state, const double *x, double *value,
                          struct aia_error *err)
{
    if (((struct softmax *)state)->rs.k == 0)
        return aia_seterr(err, "an accuracy over no rows");
    evaluate(state, x, NULL, value);
    return 0;
}

/* A block of rows at a time: Z = A_b W' + b (one matrix product), the
 * scores turned into their gradients D row by row, then G_W' += A_b' D
 * (another), G_b += the column sums of D. */
static int softmax_gradient(void *state, const double *x, const size_t *idx,
                            size_t nidx, double *g, struct aia_error *err)
{
    struct softmax *p = state;
    size_t n = p->rs.n, c = p->c, dim = softmax_dim(p);
    size_t count = aia_gradient_begin(&p->rs, idx, nidx, g, dim, err);
    if (count == 0)
        return -1;
    double *gb = g + c * n, sum = 0;
    size_t good = 0;
    transpose_w(p, x);
    memset(p->gt, 0, n * c * sizeof *p->gt);
    for (size_t t0 = 0; t0 < count; t0 += AIAK_BLOCK) {
        size_t nb = count - t0 < AIAK_BLOCK ? count - t0 : AIAK_BLOCK;
        block_pass(p, x, idx, t0, nb, &sum, &good);
        block_tmul(p, idx, t0, nb);
        for (size_t t = 0; t < nb; t++)
            aia_axpy(1, p->z + t * c, gb, c);
    }
    for (size_t k = 0; k < c; k++)
        for (size_t j = 0; j < n; j++)
            g[k * n + j] = p->gt[j * c + k];
    aia_gradient_end(g, x, dim, count, p->l2);
    return 0;
}

/* out = H(x) v over the rows held.  With V the C x n block of v and vb
 * its C biases, a row's scores move by dz = V a + vb; the cross-entropy's
 * Hessian in the scores is diag(p) - p p', so the row adds u a' to the
 * weights' part and u to the biases', u = p o dz - p (p . dz).  Plus
 * l2 v. */
static int softmax_hvp(void *state, const double *x, const double *v,
                       double *out, struct aia_error *err)
{
    struct softmax *p = state;
    size_t n = p->rs.n, c = p->c, dim = softmax_dim(p);
    if (p->rs.k == 0)
        return aia_seterr(err, "a Hessian over no rows");
    double *u = malloc(c * sizeof *u);
    if (!u)
        return aia_seterr(err, "out of memory for %zu scores", c);
    memset(out, 0, dim * sizeof *out);
    const double *b = x + c * n, *vb = v + c * n;
    double *ob = out + c * n;
    for (size_t i = 0; i < p->rs.k; i++) {
        struct aia_row r;
        aia_data_row(p->rs.data, i, &r);
        double top = -INFINITY, sum = 0, pdz = 0;
        for (size_t k = 0; k < c; k++) {
            p->z[k] = aia_row_dot(&r, x + k * n, n) + b[k];
            top = fmax(top, p->z[k]);
        }
        for (size_t k = 0; k < c; k++)
            sum += p->z[k] = exp(p->z[k] - top);
        for (size_t k = 0; k < c; k++) {
            p->z[k] /= sum; /* the probability p_k */
            u[k] = aia_row_dot(&r, v + k * n, n) + vb[k];
            pdz += p->z[k] * u[k];
        }
        for (size_t k = 0; k < c; k++) {
            double w = p->z[k] * (u[k] - pdz);
            aia_row_axpy(&r, w, out + k * n, n);
            ob[k] += w;
        }
    }
    free(u);
    double inv = 1.0 / (double)p->rs.k;
    for (size_t j = 0; j < dim; j++)
        out[j] = out[j] * inv + p->l2 * v[j];
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "softmax",
                    "1.0",
                    "multinomial logistic regression over C classes, "
                    "optionally L2, on given rows (loss: mean "
                    "cross-entropy)",
                    params),
    .flags = AIA_PROBLEM_DATA,
    .open = softmax_open,
    .close = softmax_close,
    .dim = softmax_dim,
    .rows = aia_rowset_rows,
    .metric_name = "accuracy",
    .loss = softmax_loss,
    .gradient = softmax_gradient,
    .metric = softmax_metric,
    .hvp = softmax_hvp,
};
