/* average.c - aggregation and averaging of local models.
 *
 * Workers start from the query x, take local_steps gradient steps of size
 * step on their own rows (the full local gradient, or a mini-batch drawn
 * with replacement from a per-worker stream of the seed),
 *
 *     y <- x;  repeat local_steps times: y <- y - step * grad_i(y)
 *
 * and answer with their model y_i.  The coordinator keeps the latest
 * model of every worker heard from and queries their weighted average
 *
 *     x <- (sum_i w_i y_i) / (sum_i w_i)     over workers that answered
 *
 * with w_i the worker's share of the rows (rows_i / total_rows) or the
 * job's weights.  With one local step and every worker fresh, the
 * average of x - step * g_i weighted by rows is x - step * (mean gradient
 * over all rows): exactly gradient descent.  With more local steps each
 * worker drifts toward its own optimum, and the fixed point moves off the
 * global one by an amount that grows with the step and the local steps.
 *
 * memory: latest stores every worker's model (dim x nworkers on the
 * coordinator).  memory: delta keeps dim doubles: each worker remembers
 * the model it last sent and answers with the difference y_i - y_i_prev
 * (its first answer is the model itself), and the coordinator keeps only
 * S = sum_i w_i y_i and W = sum_i w_i over the workers heard from:
 * S <- S + w_i * delta_i, with w_i added to W at a worker's first answer.
 * Both give the same queries up to rounding.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#define STREAM_AVERAGE 0x4156470000000000ull

enum { P_STEP, P_LOCAL_STEPS, P_BATCH, P_WEIGHTS, P_MEMORY };

/* In the order of the memory parameter's choices. */
enum { MEM_LATEST, MEM_DELTA };

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "0.1",
     "step size of the workers' local gradient steps", NULL, 1e-300, 1e300},
    {"local_steps", AIA_INT, "1",
     "gradient steps a worker takes from the query before it answers", NULL, 1,
     1e9},
    {"batch", AIA_INT, "0",
     "rows per local gradient, drawn with replacement (0: all the worker's "
     "rows)",
     NULL, 0, 1e12},
    {"weights", AIA_DOUBLES, "[]",
     "weight of each worker's model, in pool order (empty: its share of the "
     "rows)",
     NULL, 0, 1e12},
    {"memory", AIA_ENUM, "latest",
     "coordinator memory: every worker's latest model, or the weighted sum "
     "of the workers' model differences",
     "latest|delta", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct average {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim, rows, batch;
    uint64_t local_steps;
    double step;
    int memory, nworkers;
    double *weights; /* nworkers entries, or NULL: shares of the rows */
    /* worker */
    double *y;    /* the local model */
    double *g;    /* a gradient */
    double *sent; /* memory: delta: the model last sent */
    size_t *idx;  /* the batch's rows */
    struct aia_rng rng;
    /* coordinator */
    double *x;      /* the query */
    double *models; /* memory: latest: nworkers x dim */
    double *sum;    /* memory: delta: S, the weighted sum of the models */
    double total;   /* W, the weight of the workers heard from */
    double *w;      /* weight of each worker heard from */
    /* heard[i]: worker i has answered at least once */
    unsigned char *heard;
};

static void destroy(void *state)
{
    struct average *s = state;
    if (!s)
        return;
    free(s->weights);
    free(s->y);
    free(s->g);
    free(s->sent);
    free(s->idx);
    free(s->x);
    free(s->models);
    free(s->sum);
    free(s->w);
    free(s->heard);
    free(s);
}

/* The job's weights must give one per worker of the pool, and some model
 * must count.  None given is fine: the rows decide.  0 or -1. */
static int check_weights(const struct aia_context *ctx,
                         const struct aia_value *v, struct aia_error *err)
{
    if (v->n == 0)
        return 0;
    if (v->n != (size_t)ctx->nworkers)
        return aia_seterr(err,
                          "weights: %zu weights for a pool of %d workers: "
                          "give one per worker, in pool order",
                          v->n, ctx->nworkers);
    double sum = 0;
    for (size_t i = 0; i < v->n; i++)
        sum += v->doubles[i];
    if (!(sum > 0))
        return aia_seterr(err, "weights: they add up to 0: at least one "
                               "worker's model must count");
    return 0;
}

static int alloc_worker(struct average *s, const struct aia_context *ctx,
                        struct aia_error *err)
{
    size_t d = s->dim ? s->dim : 1;
    if (s->rows == 0)
        return aia_seterr(err, "worker %d holds no rows of the problem",
                          ctx->rank);
    s->y = calloc(d, sizeof *s->y);
    s->g = calloc(d, sizeof *s->g);
    if (s->memory == MEM_DELTA)
        s->sent = calloc(d, sizeof *s->sent);
    if (s->batch > 0)
        s->idx = malloc(s->batch * sizeof *s->idx);
    if (!s->y || !s->g || (s->memory == MEM_DELTA && !s->sent) ||
        (s->batch > 0 && !s->idx))
        return aia_seterr(err, "out of memory");
    return 0;
}

static int alloc_coordinator(struct average *s, struct aia_error *err)
{
    size_t d = s->dim ? s->dim : 1;
    size_t n = s->nworkers > 0 ? (size_t)s->nworkers : 1;
    s->x = calloc(d, sizeof *s->x);
    s->w = calloc(n, sizeof *s->w);
    s->heard = calloc(n, 1);
    if (s->memory == MEM_DELTA)
        s->sum = calloc(d, sizeof *s->sum);
    else if (d <= SIZE_MAX / n)
        s->models = calloc(d * n, sizeof *s->models);
    if (!s->x || !s->w || !s->heard ||
        (s->memory == MEM_DELTA ? !s->sum : !s->models))
        return aia_seterr(err,
                          "out of memory for the models of %d workers of "
                          "dimension %zu",
                          s->nworkers, s->dim);
    return 0;
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    if (check_weights(ctx, &ctx->args[P_WEIGHTS], err) < 0)
        return -1;
    struct average *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->rows = s->prob->rows(s->pstate);
    s->step = ctx->args[P_STEP].d;
    s->local_steps = (uint64_t)ctx->args[P_LOCAL_STEPS].i;
    s->batch = (size_t)ctx->args[P_BATCH].i;
    s->memory = (int)ctx->args[P_MEMORY].i;
    s->nworkers = ctx->nworkers;
    const struct aia_value *wv = &ctx->args[P_WEIGHTS];
    if (wv->n > 0) {
        if (!(s->weights = malloc(wv->n * sizeof *s->weights))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
        memcpy(s->weights, wv->doubles, wv->n * sizeof *s->weights);
    }
    aia_rng_seed(&s->rng, ctx->seed, STREAM_AVERAGE + (uint64_t)ctx->rank);
    int rc = ctx->role == AIA_ROLE_COORDINATOR ? alloc_coordinator(s, err)
                                               : alloc_worker(s, ctx, err);
    if (rc < 0) {
        destroy(s);
        return -1;
    }
    shape->query_len = shape->answer_len = s->dim;
    *state = s;
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct average *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct average *s = state;
    (void)step;
    memcpy(s->y, query, s->dim * sizeof *s->y);
    for (uint64_t k = 0; k < s->local_steps; k++) {
        const size_t *idx = NULL;
        if (s->batch > 0) {
            for (size_t i = 0; i < s->batch; i++)
                s->idx[i] = (size_t)aia_rng_below(&s->rng, s->rows);
            idx = s->idx;
        }
        if (s->prob->gradient(s->pstate, s->y, idx, s->batch, s->g, err) < 0)
            return -1;
        for (size_t j = 0; j < s->dim; j++)
            s->y[j] -= s->step * s->g[j];
    }
    if (s->memory == MEM_LATEST) {
        memcpy(answer, s->y, s->dim * sizeof *answer);
        return 0;
    }
    /* sent starts at zero, so the first difference is the model itself. */
    for (size_t j = 0; j < s->dim; j++) {
        answer[j] = s->y[j] - s->sent[j];
        s->sent[j] = s->y[j];
    }
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct average *s = state;
    int i = info->worker;
    if (i < 0 || i >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d", i,
                          s->nworkers);
    if (!s->heard[i]) {
        if (s->weights)
            s->w[i] = s->weights[i];
        else if (info->total_rows > 0)
            s->w[i] = (double)info->rows / (double)info->total_rows;
        else
            return aia_seterr(err,
                              "the pool holds no rows: worker %d's "
                              "model has no weight",
                              i);
        s->heard[i] = 1;
        s->total += s->w[i];
    }
    if (s->memory == MEM_LATEST) {
        memcpy(s->models + (size_t)i * s->dim, answer, s->dim * sizeof *answer);
        return 0;
    }
    for (size_t j = 0; j < s->dim; j++)
        s->sum[j] += s->w[i] * answer[j];
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    struct average *s = state;
    /* Only workers of weight 0 heard from yet: the query stays. */
    if (!(s->total > 0))
        return init(state, query, err);
    if (s->memory == MEM_DELTA) {
        for (size_t j = 0; j < s->dim; j++)
            s->x[j] = s->sum[j] / s->total;
        return init(state, query, err);
    }
    memset(s->x, 0, s->dim * sizeof *s->x);
    for (int i = 0; i < s->nworkers; i++) {
        if (!s->heard[i] || s->w[i] == 0)
            continue;
        const double *y = s->models + (size_t)i * s->dim;
        for (size_t j = 0; j < s->dim; j++)
            s->x[j] += s->w[i] * y[j];
    }
    for (size_t j = 0; j < s->dim; j++)
        s->x[j] /= s->total;
    return init(state, query, err);
}

/* Checkpoints.  memory: latest saves the query and every worker's model
 * with its weight; memory: delta saves the query alone: after a restart
 * the workers no longer remember what they last sent, so their first
 * answers are whole models again, and the weighted sum starts anew from
 * them (the query stays until one arrives). */
static size_t state_size(void *state)
{
    struct average *s = state;
    size_t n = (size_t)s->nworkers;
    if (s->memory == MEM_DELTA)
        return s->dim * sizeof(double);
    return (s->dim + n * s->dim + n + 1) * sizeof(double) + n;
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct average *s = state;
    size_t n = (size_t)s->nworkers;
    double *p = buf;
    (void)err;
    memcpy(p, s->x, s->dim * sizeof *p);
    if (s->memory == MEM_DELTA)
        return 0;
    memcpy(p + s->dim, s->models, n * s->dim * sizeof *p);
    memcpy(p + s->dim + n * s->dim, s->w, n * sizeof *p);
    p[s->dim + n * s->dim + n] = s->total;
    memcpy(p + s->dim + n * s->dim + n + 1, s->heard, n);
    return 0;
}

static int load(void *state, const void *buf, size_t len,
                struct aia_error *err)
{
    struct average *s = state;
    size_t n = (size_t)s->nworkers;
    const double *p = buf;
    if (len != state_size(state))
        return aia_seterr(err, "a state of %zu bytes, expected %zu", len,
                          state_size(state));
    memcpy(s->x, p, s->dim * sizeof *p);
    if (s->memory == MEM_DELTA) {
        memset(s->sum, 0, s->dim * sizeof *s->sum);
        memset(s->w, 0, n * sizeof *s->w);
        memset(s->heard, 0, n);
        s->total = 0;
        return 0;
    }
    memcpy(s->models, p + s->dim, n * s->dim * sizeof *p);
    memcpy(s->w, p + s->dim + n * s->dim, n * sizeof *p);
    s->total = p[s->dim + n * s->dim + n];
    memcpy(s->heard, p + s->dim + n * s->dim + n + 1, n);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "average",
                    "1.0",
                    "aggregation and averaging: workers take local gradient "
                    "steps, the query is the weighted average of their "
                    "latest models",
                    params),
    .flags = AIA_ALG_ASSOCIATIVE,
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .state_size = state_size,
    .save = save,
    .load = load,
};
