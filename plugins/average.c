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
 * job's weights (staleness: none; average_mix.c gives the schemes that
 * count a model's age, and gd, the default where it applies).  With one local
 * step and every worker fresh, the average of x - step * g_i weighted by rows
 * is x - step * (mean gradient over all rows): exactly gradient descent.  With
 * more local steps each worker drifts toward its own optimum, and the fixed
 * point moves off the global one by an amount that grows with the step and the
 * local steps.
 *
 * memory: latest stores every worker's model (dim x nworkers on the
 * coordinator).  memory: delta keeps dim doubles: each worker remembers
 * the model it last sent and answers with the difference y_i - y_i_prev
 * (its first answer is the model itself), and the coordinator keeps only
 * S = sum_i w_i y_i and W = sum_i w_i over the workers heard from:
 * S <- S + w_i * delta_i, with w_i added to W at a worker's first answer.
 * Both give the same queries up to rounding.
 *
 * Delayed exchange (delay: d, 0 < d <= local_steps).  A worker keeps its
 * own model y across answers, and an average it receives is applied d
 * local steps late, as when models are sent every k = local_steps steps
 * and the average of them comes back d steps after the send:
 *
 *     d steps from y;  apply the query x;  k - d steps;  answer y
 *
 * The exchange is one query and one answer, so the d steps are taken at
 * the start of the call that receives x: d <= k, and every answer is
 * still k steps after the one before.  Applying x is plain replacement,
 * y <- x (compensate: false: the d steps only warm the core), or, with
 * compensate: true, y <- x + (y - y_sent), with y_sent the model the
 * worker last answered: the average stands in for the model it was sent,
 * and the progress made since on the worker's rows is kept, not thrown
 * away.  It is chosen over a DC-ASGD-like correction of gradients
 * (g + lambda g*g*(x - y)) because it costs one vector and no gradient,
 * needs no second-order estimate nor its lambda, and applies to models,
 * which is what workers exchange here.  Its error is that the d steps
 * started from y_sent instead of x, which vanishes as the workers agree.
 * delay: 0 is replacement from the query, the algorithm above.
 * The worker's model is not checkpointed: after --resume each worker
 * starts again from its first query.
 *
 * Preemption (preempt_every: N > 0).  Each answer carries, after the
 * model, the worker's score: the loss of its model on its own rows.  The
 * coordinator keeps every worker's latest score, and at the end of every
 * N-th round replaces the models of the `preempt` workers with the worst
 * (highest) scores by the model of the worker with the best one, so that
 * a worker whose rows or model went bad stops dragging the average.  A
 * replaced worker's score is forgotten until it answers again, so that it
 * is not replaced twice for one answer.  The query is one buffer for all
 * the workers of a round, so it carries, after the average x, the best
 * model x_best and one count per worker of the times it was replaced:
 *
 *     query = [x (dim), x_best (dim), replaced_0 .. replaced_{n-1}]
 *
 * A worker that sees its count grow drops its own model and restarts
 * from x_best (with delay: 0 it starts from x anyway, whose share of it
 * is already the best model).  A count, not a flag, so that a worker busy
 * with an older query when the replacement happened still sees it at its
 * next query.  Preemption needs memory: latest (delta keeps no model to
 * replace); each is logged at info level (aiarun -v).  In a tree
 * (pool.topology: tree) the coordinator's children stand for their
 * subtrees: their combined answers carry the rows-weighted mean score of
 * the subtree, and a replacement restarts the subtree's root worker only.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#include "average.h"

#define STREAM_AVERAGE 0x4156470000000000ull

/* The choice parameters' values, bound by name (aia_arg_enum), so that
 * the order of the choices in params does not matter. */
static const char *const memories[] = {
    [MEM_LATEST] = "latest", [MEM_DELTA] = "delta"};
static const char *const schemes[] = {[SCHEME_AUTO] = "auto",
                                      [SCHEME_NONE] = "none",
                                      [SCHEME_DECAY] = "decay",
                                      [SCHEME_GD] = "gd"};

/* The value of the integer or boolean parameter name. */
static int64_t arg_i(const struct aia_context *ctx, const char *name)
{
    return aia_arg(ctx->args, name)->i;
}

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "auto",
     "step size of the workers' local gradient steps (auto: 1/L_max, the "
     "largest of the workers' smoothness)",
     "auto", 1e-300, 1e300},
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
    {"delay", AIA_INT, "0",
     "local steps a worker takes from its own model before it applies a "
     "received average (0: it starts from the query; at most local_steps)",
     NULL, 0, 1e9},
    {"compensate", AIA_BOOL, "true",
     "with delay: apply the average as x + (y - y_sent), keeping the local "
     "progress made since the model was sent, instead of replacing y by x",
     NULL, 0, 0},
    {"preempt_every", AIA_INT, "0",
     "rounds between preemptions: the worst-scored workers' models are "
     "replaced by the best one's (0: never)",
     NULL, 0, 1e9},
    {"preempt", AIA_INT, "1",
     "workers replaced at each preemption, the worst scores (loss of a "
     "worker's model on its rows) first",
     NULL, 1, 1e6},
    {"staleness", AIA_ENUM, "auto",
     "how stale models count: none: the weighted average of the latest "
     "models; decay: a model's weight shrinks by decay a round of age; gd: "
     "workers answer their local progress, kept per worker and added to "
     "the current iterate; auto: gd with memory: latest, delay 0 and no "
     "preemption, else none",
     "auto|none|decay|gd", 0, 0},
    {"decay", AIA_DOUBLE, "0.5",
     "staleness: decay: the factor of a model's weight per round of age", NULL,
     0, 1},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
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
    if (s->running)
        aia_table_free(&s->table); /* models included */
    else
        free(s->models);
    free(s->sum);
    free(s->w);
    free(s->wq);
    free(s->sent_round);
    free(s->heard);
    free(s->score);
    free(s->scored);
    free(s->replaced);
    free(s->best);
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
    int keep = s->memory == MEM_DELTA || s->delay > 0;
    if (keep)
        s->sent = calloc(d, sizeof *s->sent);
    if (s->batch > 0)
        s->idx = malloc(s->batch * sizeof *s->idx);
    if (!s->y || !s->g || (keep && !s->sent) || (s->batch > 0 && !s->idx))
        return aia_seterr(err, "out of memory");
    return 0;
}

static int alloc_coordinator(struct average *s, struct aia_error *err)
{
    size_t d = s->dim ? s->dim : 1;
    size_t n = s->nworkers > 0 ? (size_t)s->nworkers : 1;
    s->x = calloc(d, sizeof *s->x);
    s->w = calloc(n, sizeof *s->w);
    s->wq = calloc(n, sizeof *s->wq);
    s->heard = calloc(n, 1);
    if (s->scheme == SCHEME_DECAY &&
        !(s->sent_round = calloc(n, sizeof *s->sent_round)))
        return aia_seterr(err, "out of memory");
    if (s->memory == MEM_DELTA)
        s->sum = calloc(d, sizeof *s->sum);
    else if (s->running) { /* the table's entries are the models */
        s->models = aia_table_init(&s->table, n, s->dim) == 0 ? s->table.g
                                                              : NULL;
        s->table.running = 1; /* its sums are kept, and checkpointed */
    }
    else if (d <= SIZE_MAX / n)
        s->models = calloc(d * n, sizeof *s->models);
    if (PREEMPTING(s)) {
        s->score = calloc(n, sizeof *s->score);
        s->scored = calloc(n, 1);
        s->replaced = calloc(n, sizeof *s->replaced);
        s->best = calloc(d, sizeof *s->best);
        if (!s->score || !s->scored || !s->replaced || !s->best)
            return aia_seterr(err, "out of memory");
    }
    if (!s->x || !s->w || !s->wq || !s->heard ||
        (s->memory == MEM_DELTA ? !s->sum : !s->models))
        return aia_seterr(err,
                          "out of memory for the models of %d workers of "
                          "dimension %zu",
                          s->nworkers, s->dim);
    return 0;
}

/* delay within the local steps; preemption with a model to replace and
 * one to keep.  0 or -1. */
static int check_options(const struct aia_context *ctx, struct aia_error *err)
{
    int64_t delay = arg_i(ctx, "delay"), local = arg_i(ctx, "local_steps"),
            every = arg_i(ctx, "preempt_every"),
            preempt = arg_i(ctx, "preempt");
    int memory = aia_arg_enum(ctx->args, "memory", memories, 2),
        scheme = aia_arg_enum(ctx->args, "staleness", schemes, 4);
    if (memory < 0 || scheme < 0)
        return aia_seterr(err, "memory or staleness: a value average does "
                               "not know");
    if (delay > local)
        return aia_seterr(err,
                          "delay: %lld is more than local_steps (%lld): an "
                          "average is applied within the local steps of "
                          "the exchange that brings it",
                          (long long)delay, (long long)local);
    int gd = scheme == SCHEME_GD;
    if (gd && (memory != MEM_LATEST || delay > 0 || every > 0))
        return aia_seterr(err, "staleness: gd keeps every worker's progress "
                               "from the query it was sent: it needs "
                               "memory: latest, delay: 0 and no preemption "
                               "(preempt_every: 0)");
    if (scheme == SCHEME_DECAY && memory != MEM_LATEST)
        return aia_seterr(err, "staleness: decay weighs every model by its "
                               "age, which memory: delta does not keep: use "
                               "memory: latest");
    if (every == 0)
        return 0;
    if (memory == MEM_DELTA)
        return aia_seterr(err, "preempt_every: preemption replaces the "
                               "workers' models, which memory: delta does "
                               "not keep: use memory: latest");
    if (preempt >= ctx->nworkers)
        return aia_seterr(err,
                          "preempt: %lld of a pool of %d workers: at least "
                          "the best one must be kept",
                          (long long)preempt, ctx->nworkers);
    return 0;
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    if (check_weights(ctx, aia_arg(ctx->args, "weights"), err) < 0 ||
        check_options(ctx, err) < 0)
        return -1;
    struct average *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->rows = s->prob->rows(s->pstate);
    /* Each worker's local steps are gradient descent on its own rows, so
     * auto takes the largest of the workers' L: 1/L_max = scale/L. */
    const struct aia_problem_facts *f =
        ctx->size >= offsetof(struct aia_context, facts) + sizeof ctx->facts
            ? ctx->facts
            : NULL;
    double scale = f && f->largest > 0 ? f->smoothness / f->largest : 1.0;
    if (aia_auto_step_named(
            ctx, "step", scale,
            "1/L_max, the largest worker's L: each worker's local "
            "steps are gradient descent on its rows",
            &s->step, err) < 0) {
        free(s);
        return -1;
    }
    s->local_steps = (uint64_t)arg_i(ctx, "local_steps");
    s->batch = (size_t)arg_i(ctx, "batch");
    s->memory = aia_arg_enum(ctx->args, "memory", memories, 2);
    s->delay = (uint64_t)arg_i(ctx, "delay");
    s->compensate = (int)arg_i(ctx, "compensate");
    s->preempt_every = (uint64_t)arg_i(ctx, "preempt_every");
    s->preempt = (uint64_t)arg_i(ctx, "preempt");
    s->scheme = aia_arg_enum(ctx->args, "staleness", schemes, 4);
    s->decay = aia_arg(ctx->args, "decay")->d;
    if (s->scheme == SCHEME_AUTO)
        s->scheme = s->memory == MEM_LATEST && s->delay == 0 && !PREEMPTING(s)
                        ? SCHEME_GD
                        : SCHEME_NONE;
    s->nworkers = ctx->nworkers;
    s->me = ctx->worker;
    s->host = ctx->host;
    /* in async mode every answer ends a round: a query that summed every
     * worker's model would cost O(workers x dim) an answer */
    s->running = s->memory == MEM_LATEST && s->scheme != SCHEME_DECAY &&
                 AIA_HAS(struct aia_context, ctx, async) && ctx->async;
    const struct aia_value *wv = aia_arg(ctx->args, "weights");
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
    if (PREEMPTING(s)) {
        shape->query_len = 2 * s->dim + (size_t)s->nworkers;
        shape->answer_len = s->dim + 1;
    }
    *state = s;
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct average *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    if (PREEMPTING(s)) {
        memcpy(query + s->dim, s->best, s->dim * sizeof *query);
        memcpy(query + 2 * s->dim, s->replaced,
               (size_t)s->nworkers * sizeof *query);
    }
    return 0;
}

static int iterate(void *state, double *x, struct aia_error *err)
{
    struct average *s = state;
    (void)err;
    memcpy(x, s->x, s->dim * sizeof *x);
    return 0;
}

/* n local gradient steps from y. */
static int local(struct average *s, uint64_t n, struct aia_error *err)
{
    for (uint64_t k = 0; k < n; k++) {
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
    return 0;
}

/* y <- x, or y <- x + (y - sent) with compensation. */
static void apply(struct average *s, const double *x)
{
    if (!s->compensate) {
        memcpy(s->y, x, s->dim * sizeof *s->y);
        return;
    }
    for (size_t j = 0; j < s->dim; j++)
        s->y[j] = x[j] + (s->y[j] - s->sent[j]);
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct average *s = state;
    (void)step;
    if (s->delay == 0) {
        memcpy(s->y, query, s->dim * sizeof *s->y);
    } else {
        const double *from = query;
        if (PREEMPTING(s) && s->me >= 0 && s->me < s->nworkers &&
            query[2 * s->dim + (size_t)s->me] > (double)s->restarts) {
            /* Replaced by the best model: drop the own one. */
            s->restarts = (uint64_t)query[2 * s->dim + (size_t)s->me];
            from = query + s->dim;
            s->have = 0;
        }
        if (!s->have) {
            memcpy(s->y, from, s->dim * sizeof *s->y);
            memcpy(s->sent, from, s->dim * sizeof *s->sent);
            s->have = 1;
        }
        if (local(s, s->delay, err) < 0)
            return -1;
        apply(s, query);
    }
    if (local(s, s->local_steps - s->delay, err) < 0)
        return -1;
    if (PREEMPTING(s)) {
        double f;
        if (s->prob->loss(s->pstate, s->y, &f, err) < 0)
            return -1;
        answer[s->dim] = f;
    }
    if (s->scheme == SCHEME_GD) {
        /* the progress from the query (delay is 0: y started there) */
        for (size_t j = 0; j < s->dim; j++)
            answer[j] = s->y[j] - query[j];
        return 0;
    }
    if (s->memory == MEM_LATEST) {
        memcpy(answer, s->y, s->dim * sizeof *answer);
        if (s->delay > 0)
            memcpy(s->sent, s->y, s->dim * sizeof *s->sent);
        return 0;
    }
    /* The first answer is the model itself: the coordinator's sum has
     * nothing of this worker's yet. */
    for (size_t j = 0; j < s->dim; j++) {
        answer[j] = s->answered ? s->y[j] - s->sent[j] : s->y[j];
        s->sent[j] = s->y[j];
    }
    s->answered = 1;
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
    if (PREEMPTING(s)) {
        /* A score that is not a number ranks worst. */
        double f = answer[s->dim];
        s->score[i] = f == f ? f : INFINITY;
        s->scored[i] = 1;
    }
    average_keep(s, i, answer, info->sent_round, info->round);
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    average_mix(state);
    return init(state, query, err);
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "average",
                    "1.1",
                    "aggregation and averaging: workers take local gradient "
                    "steps, the query is the weighted average of their "
                    "latest models",
                    params),
    .flags = AIA_ALG_ASSOCIATIVE | AIA_ALG_SEPARABLE,
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = average_state_size,
    .save = average_save,
    .load = average_load,
};
