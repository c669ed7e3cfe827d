/* mlp.c - a fully connected neural network classifier: hidden layers of
 * ReLU units, a softmax output over C classes, the mean cross-entropy as
 * the loss (plus l2/2 ||w||^2), on rows from a data file whose targets are
 * class indices 0 .. C-1.
 *
 * Layers l = 1 .. L map n_{l-1} inputs to n_l outputs, n_0 the features,
 * n_L = C, the sizes between them the `hidden` parameter.  Their weights
 * w are W_1, b_1, W_2, b_2, ... in one flat vector (each W_l n_l x n_{l-1}
 * row-major, each b_l n_l).
 *
 * The model x is the offset of the weights from a seeded initialisation
 * w0 (He's: W_l ~ N(0, 2 / n_{l-1}), b_l = 0), w = w0 + x, so that the
 * algorithms' usual start x = 0 is that initialisation, not the all-zero
 * network (a saddle where ReLU units never move).  Every rank draws the
 * same w0 from the job's seed; aiarun-evaluate -S gives it the seed to read
 * output.final.
 *
 * Rows are processed in blocks of BLOCK (sparse rows expanded into the
 * block); each layer is a matrix product, through BLAS (cblas_dgemm) when
 * the build has it, else loops.  With precision: float32 the rows are kept
 * as floats and the layers go through sgemm (half the bytes and about
 * twice the rate of dgemm); the model, the softmax, the loss and the
 * gradient's sums over blocks stay in double.  Non-convex: no optimum is
 * offered.  The metric is the accuracy (the first class on a tie).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "kernels.h"

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

#define BLOCK 128 /* rows at a time */
#define LAYERS_MAX 16
#define STREAM_INIT 0x4d4c500000000000ull

static const struct aia_param params[] = {
    {"classes", AIA_INT, NULL,
     "classes C: the targets are class indices 0 to C-1", NULL, 2, 1e6},
    {"hidden", AIA_INTS, "[64]",
     "units of each hidden layer (ReLU), input side first (at most 15 "
     "layers)",
     NULL, 1, 1e6},
    {"l2", AIA_DOUBLE, "0", "L2 penalty: the loss gains l2/2 ||w||^2", NULL, 0,
     1e12},
    {"precision", AIA_ENUM, "float64",
     "the layers' products: float64, or float32 (dense rows kept as floats "
     "too; the model, the softmax, the loss and the sums stay float64)",
     "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct mlp {
    struct aia_rowset rs;         /* first: rows, scratch row */
    size_t c, nl;                 /* classes, layers */
    size_t width[LAYERS_MAX + 1]; /* n_0 .. n_L */
    size_t off[LAYERS_MAX];       /* where W_l starts in w */
    size_t dim, widest;
    double l2;
    double *w0, *w; /* the initial weights, and w0 + x */
    double *act;    /* activations of every layer, BLOCK rows each */
    const double *in; /* the block's input rows: in the data or in act */
    size_t act_off[LAYERS_MAX + 1];
    double *delta, *delta2; /* BLOCK x widest: backward signals */
    /* precision: float32 (xf not NULL): the rows, the weights, the
     * activations, the signals, a layer's gradient and a gathered block,
     * in float */
    float *xf, *wf, *actf, *deltaf, *delta2f, *gf, *buf;
    const float *inf;
};

static void mlp_close(void *state)
{
    struct mlp *p = state;
    if (!p)
        return;
    free(p->w0);
    free(p->w);
    free(p->act);
    free(p->delta);
    free(p->delta2);
    free(p->xf);
    free(p->wf);
    free(p->actf);
    free(p->deltaf);
    free(p->delta2f);
    free(p->gf);
    free(p->buf);
    aia_rowset_free(&p->rs);
    free(p);
}

/* Layer sizes, offsets and the seeded initial weights.  0 or -1. */
static int build(struct mlp *p, const struct aia_value *hidden,
                 struct aia_error *err)
{
    if (hidden->n + 1 > LAYERS_MAX)
        return aia_seterr(err, "hidden: %zu layers, at most %d", hidden->n,
                          LAYERS_MAX - 1);
    p->nl = hidden->n + 1;
    p->width[0] = p->rs.n;
    for (size_t l = 0; l < hidden->n; l++)
        p->width[l + 1] = (size_t)hidden->ints[l];
    p->width[p->nl] = p->c;
    size_t acts = 0;
    p->widest = 0;
    for (size_t l = 0; l <= p->nl; l++) {
        p->act_off[l] = acts;
        acts += BLOCK * p->width[l];
        p->widest = p->width[l] > p->widest ? p->width[l] : p->widest;
        if (l == 0)
            continue;
        p->off[l - 1] = p->dim;
        p->dim += p->width[l] * (p->width[l - 1] + 1);
    }
    p->w0 = malloc(p->dim * sizeof *p->w0);
    p->w = malloc(p->dim * sizeof *p->w);
    p->act = malloc(acts * sizeof *p->act);
    p->delta = malloc(BLOCK * p->widest * sizeof *p->delta);
    p->delta2 = malloc(BLOCK * p->widest * sizeof *p->delta2);
    if (!p->w0 || !p->w || !p->act || !p->delta || !p->delta2)
        return aia_seterr(err, "out of memory for a network of %zu weights",
                          p->dim);
    for (size_t l = 1; l <= p->nl; l++) {
        struct aia_rng g;
        aia_rng_seed(&g, p->rs.seed, STREAM_INIT + l);
        double sd = sqrt(2.0 / (double)p->width[l - 1]);
        size_t nw = p->width[l] * p->width[l - 1];
        double *W = p->w0 + p->off[l - 1];
        for (size_t j = 0; j < nw; j++)
            W[j] = sd * aia_rng_normal(&g);
        memset(W + nw, 0, p->width[l] * sizeof *W);
    }
    return 0;
}

/* precision: float32: the rows as floats and the float scratch.  0 or
 * -1. */
static int floats(struct mlp *p, struct aia_error *err)
{
    if (!p->rs.data->x)
        return aia_seterr(err, "precision: float32 takes dense rows (the "
                               "data's storage is sparse)");
    size_t acts = p->act_off[p->nl] + BLOCK * p->width[p->nl], most = 0;
    for (size_t l = 1; l <= p->nl; l++) {
        size_t nw = p->width[l] * p->width[l - 1];
        most = nw > most ? nw : most;
    }
    p->xf = aiak_rows_f32(p->rs.data);
    p->wf = malloc(p->dim * sizeof *p->wf);
    p->actf = malloc(acts * sizeof *p->actf);
    p->deltaf = malloc(BLOCK * p->widest * sizeof *p->deltaf);
    p->delta2f = malloc(BLOCK * p->widest * sizeof *p->delta2f);
    p->gf = malloc(most * sizeof *p->gf);
    p->buf = malloc(BLOCK * p->rs.n * sizeof *p->buf);
    if (!p->xf || !p->wf || !p->actf || !p->deltaf || !p->delta2f || !p->gf ||
        !p->buf)
        return aia_seterr(err, "out of memory for %zu rows as floats",
                          p->rs.k);
    return 0;
}

static int mlp_open(const struct aia_context *ctx,
                    const struct aia_partition *part, void **state,
                    struct aia_error *err)
{
    struct mlp *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->c = (size_t)aia_arg(ctx->args, "classes")->i;
    p->l2 = aia_arg(ctx->args, "l2")->d;
    if (aia_rowset_classes(&p->rs, ctx, part, "mlp", p->c, err) < 0 ||
        build(p, aia_arg(ctx->args, "hidden"), err) < 0 ||
        (aia_arg(ctx->args, "precision")->i == 1 && p->rs.k > 0 &&
         floats(p, err) < 0)) {
        mlp_close(p);
        return -1;
    }
#if defined(HAVE_CBLAS) && defined(OPENBLAS_VERSION)
    /* ranks share the cores already: a BLAS thread each would fight them */
    openblas_set_num_threads(1);
#endif
    *state = p;
    return 0;
}

static size_t mlp_dim(void *state)
{
    return ((struct mlp *)state)->dim;
}

/* Forward the rows sel[0 .. b-1] (local indices) through the network at
 * p->w; the output layer's scores end in act(nl). */
static void forward(struct mlp *p, const size_t *sel, size_t b)
{
    size_t n = p->rs.n;
    if (p->rs.data->x) { /* dense rows: read in place when consecutive */
        p->in = aiak_dense_block(p->rs.data, sel, 0, b, p->act);
    } else {
        memset(p->act, 0, b * n * sizeof *p->act);
        for (size_t i = 0; i < b; i++) {
            struct aia_row r;
            aia_data_row(p->rs.data, sel[i], &r);
            aia_row_axpy(&r, 1, p->act + i * n, n);
        }
        p->in = p->act;
    }
    for (size_t l = 1; l <= p->nl; l++) {
        size_t ni = p->width[l - 1], no = p->width[l];
        const double *W = p->w + p->off[l - 1], *bias = W + no * ni;
        double *h = p->act + p->act_off[l];
        for (size_t i = 0; i < b; i++)
            memcpy(h + i * no, bias, no * sizeof *h);
        aiak_gemm(0, 1, b, no, ni, 1,
                  l == 1 ? p->in : p->act + p->act_off[l - 1], ni, W, ni, 1,
                  h, no);
        if (l < p->nl)
            for (size_t j = 0; j < b * no; j++)
                h[j] = h[j] > 0 ? h[j] : 0;
    }
}

/* forward() in float; the output layer's scores end in act(nl) in
 * double, for outputs(). */
static void forward_f32(struct mlp *p, const size_t *sel, size_t b)
{
    p->inf = aiak_block_f32(p->xf, p->rs.n, sel, 0, b, p->buf);
    for (size_t l = 1; l <= p->nl; l++) {
        size_t ni = p->width[l - 1], no = p->width[l];
        const float *W = p->wf + p->off[l - 1], *bias = W + no * ni;
        float *h = p->actf + p->act_off[l];
        for (size_t i = 0; i < b; i++)
            memcpy(h + i * no, bias, no * sizeof *h);
        aiak_sgemm(0, 1, b, no, ni, 1,
                   l == 1 ? p->inf : p->actf + p->act_off[l - 1], ni, W, ni,
                   1, h, no);
        if (l < p->nl)
            for (size_t j = 0; j < b * no; j++)
                h[j] = h[j] > 0 ? h[j] : 0;
    }
    aiak_to_f64(p->actf + p->act_off[p->nl], p->act + p->act_off[p->nl],
                b * p->c);
}

/* Loss summed over the b rows forwarded; their output scores become the
 * gradient of their loss; *good counts the rows classified right. */
static double outputs(struct mlp *p, const size_t *sel, size_t b, size_t *good)
{
    double sum = 0;
    double *z = p->act + p->act_off[p->nl];
    for (size_t i = 0; i < b; i++) {
        size_t y = (size_t)p->rs.data->y[sel[i]], top;
        sum += aia_softmax_xent(z + i * p->c, p->c, y, &top);
        *good += top == y;
    }
    return sum;
}

/* Add the gradient of the b rows' summed loss to g, from the output
 * signals outputs() left. */
static void backward(struct mlp *p, size_t b, double *g)
{
    double *d = p->act + p->act_off[p->nl];
    for (size_t l = p->nl; l >= 1; l--) {
        size_t ni = p->width[l - 1], no = p->width[l];
        const double *in = l == 1 ? p->in : p->act + p->act_off[l - 1];
        double *gW = g + p->off[l - 1], *gb = gW + no * ni;
        aiak_gemm(1, 0, no, ni, b, 1, d, no, in, ni, 1, gW, ni);
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < no; j++)
                gb[j] += d[i * no + j];
        if (l == 1)
            break;
        double *next = d == p->delta ? p->delta2 : p->delta;
        aiak_gemm(0, 0, b, ni, no, 1, d, no, p->w + p->off[l - 1], ni, 0, next,
                  ni);
        for (size_t j = 0; j < b * ni; j++)
            next[j] = in[j] > 0 ? next[j] : 0; /* ReLU's derivative */
        d = next;
    }
}

/* backward() in float: each layer's gradient of the block in float,
 * added to g in double. */
static void backward_f32(struct mlp *p, size_t b, double *g)
{
    float *d = p->deltaf;
    aiak_to_f32(p->act + p->act_off[p->nl], d, b * p->c);
    for (size_t l = p->nl; l >= 1; l--) {
        size_t ni = p->width[l - 1], no = p->width[l];
        const float *in = l == 1 ? p->inf : p->actf + p->act_off[l - 1];
        double *gW = g + p->off[l - 1], *gb = gW + no * ni;
        aiak_sgemm(1, 0, no, ni, b, 1, d, no, in, ni, 0, p->gf, ni);
        for (size_t j = 0; j < no * ni; j++)
            gW[j] += p->gf[j];
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < no; j++)
                gb[j] += d[i * no + j];
        if (l == 1)
            break;
        float *next = d == p->deltaf ? p->delta2f : p->deltaf;
        aiak_sgemm(0, 0, b, ni, no, 1, d, no, p->wf + p->off[l - 1], ni, 0,
                   next, ni);
        for (size_t j = 0; j < b * ni; j++)
            next[j] = in[j] > 0 ? next[j] : 0; /* ReLU's derivative */
        d = next;
    }
}

/* w = w0 + x (and its float copy with precision: float32, in the same
 * pass: the model is read once an answer).  In float32 the layers read
 * only the copy, and w serves the penalty alone: without one, only the
 * copy is written. */
static void weights(struct mlp *p, const double *x)
{
    if (p->xf && !(p->l2 > 0)) {
        for (size_t j = 0; j < p->dim; j++)
            p->wf[j] = (float)(p->w0[j] + x[j]);
        return;
    }
    if (p->xf) {
        for (size_t j = 0; j < p->dim; j++) {
            double v = p->w0[j] + x[j];
            p->w[j] = v;
            p->wf[j] = (float)v;
        }
        return;
    }
    for (size_t j = 0; j < p->dim; j++)
        p->w[j] = p->w0[j] + x[j];
}

/* Mean loss (with the penalty) and accuracy over the rows held. */
static void evaluate(struct mlp *p, const double *x, double *f, double *acc)
{
    size_t sel[BLOCK], good = 0;
    double sum = 0;
    weights(p, x);
    for (size_t a = 0; a < p->rs.k; a += BLOCK) {
        size_t b = p->rs.k - a < BLOCK ? p->rs.k - a : BLOCK;
        for (size_t i = 0; i < b; i++)
            sel[i] = a + i;
        if (p->xf)
            forward_f32(p, sel, b);
        else
            forward(p, sel, b);
        sum += outputs(p, sel, b, &good);
    }
    double k = p->rs.k ? (double)p->rs.k : 1;
    *f = sum / k + (p->l2 > 0 ? 0.5 * p->l2 * aia_dot(p->w, p->w, p->dim) : 0);
    *acc = (double)good / k;
}

static int mlp_loss(void *state, const double *x, double *f,
                    struct aia_error *err)
{
    double acc;
    (void)err;
    evaluate(state, x, f, &acc);
    return 0;
}

static int mlp_metric(void *state, const double *x, double *value,
                      struct aia_error *err)
{
    struct mlp *p = state;
    double f;
    if (p->rs.k == 0)
        return aia_seterr(err, "an accuracy over no rows");
    evaluate(p, x, &f, value);
    return 0;
}

static int mlp_gradient(void *state, const double *x, const size_t *idx,
                        size_t nidx, double *g, struct aia_error *err)
{
    struct mlp *p = state;
    size_t count = aia_gradient_begin(&p->rs, idx, nidx, g, p->dim, err);
    if (count == 0)
        return -1;
    weights(p, x);
    size_t sel[BLOCK], good = 0;
    for (size_t a = 0; a < count; a += BLOCK) {
        size_t b = count - a < BLOCK ? count - a : BLOCK;
        for (size_t i = 0; i < b; i++)
            sel[i] = idx ? idx[a + i] : a + i;
        if (p->xf) {
            forward_f32(p, sel, b);
            outputs(p, sel, b, &good);
            backward_f32(p, b, g);
            continue;
        }
        forward(p, sel, b);
        outputs(p, sel, b, &good);
        backward(p, b, g);
    }
    /* the penalty is on w = w0 + x (w is neither written in float32 nor
     * read without one) */
    aia_gradient_end(g, p->w, p->dim, count, p->l2);
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "mlp", "1.0",
                    "fully connected ReLU network with a softmax output over "
                    "C classes, on given rows (loss: mean cross-entropy; "
                    "the model: offsets from seeded initial weights)",
                    params),
    .flags = AIA_PROBLEM_DATA,
    .open = mlp_open,
    .close = mlp_close,
    .dim = mlp_dim,
    .rows = aia_rowset_rows,
    .loss = mlp_loss,
    .gradient = mlp_gradient,
    .metric = mlp_metric,
    .metric_name = "accuracy",
};
