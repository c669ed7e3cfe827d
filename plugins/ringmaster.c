/* ringmaster.c - Ringmaster ASGD: asynchronous SGD that discards answers
 * whose delay is R or more.
 *
 * Maranjyan, Tyurin and Richtarik, "Ringmaster ASGD: The First
 * Asynchronous SGD with Optimal Time Complexity" (ICML 2025).  Every
 * answer computed at an iterate fewer than R steps old is applied at
 * once,
 *
 *     x <- x - step * (n m_i / m) * g
 *
 * (weighted by the worker's share m_i/m of the rows times the n workers,
 * 1 on even parts, as sgd does); an answer of delay R or more is dropped
 * and its sender re-tasked with the current iterate.  Bounding the delay
 * is what lets the step stay large (1/(2RL) rather than shrink with the
 * slowest worker's delay), and the dropped work is the stragglers' only.
 *
 * The delay is counted in steps of x, not in the runtime's rounds: a
 * query is the iterate and its version (steps taken so far), an answer
 * the gradient and the version it was computed at, delay = version now
 * - that version.  In async mode (pool.mode: async) every answer is an
 * iteration and its sender is re-tasked at once, as the method wants.
 *
 * R (max_delay) defaults from the theory when the noise level is given:
 * R = ceil(noise / epsilon), noise = sigma^2 the variance of an answer
 * and epsilon the target squared gradient norm; else R = the number of
 * workers.  step: auto is 1/(2RL), the paper's step at that R.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

enum { P_STEP, P_MAX_DELAY, P_NOISE, P_EPSILON, P_BATCH };

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "auto",
     "step size applied to each answer kept (auto: 1/(2RL), L the "
     "problem's smoothness)",
     "auto", 1e-300, 1e300},
    {"max_delay", AIA_INT, "0",
     "R: answers computed R or more steps ago are discarded (0: "
     "ceil(noise/epsilon) when noise is given, else the number of workers)",
     NULL, 0, 1e9},
    {"noise", AIA_DOUBLE, "0",
     "sigma^2, the variance of an answer's gradient, for the default R (0: "
     "unknown)",
     NULL, 0, 1e300},
    {"epsilon", AIA_DOUBLE, "1e-6",
     "target squared gradient norm, for the default R", NULL, 1e-300, 1e300},
    {"batch", AIA_INT, "0",
     "rows per gradient, drawn with replacement (0: all the worker's rows)",
     NULL, 0, 1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct ringmaster {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim, rows, batch;
    uint64_t R;
    int nworkers;
    double step;
    size_t *idx; /* worker: the batch's rows */
    struct aia_rng rng;
    /* coordinator */
    double *x;
    double version; /* steps taken */
};

static void destroy(void *state)
{
    struct ringmaster *s = state;
    if (!s)
        return;
    free(s->idx);
    free(s->x);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct ringmaster *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->rows = s->prob->rows(s->pstate);
    s->batch = (size_t)ctx->args[P_BATCH].i;
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    s->R = (uint64_t)ctx->args[P_MAX_DELAY].i;
    double noise = ctx->args[P_NOISE].d, eps = ctx->args[P_EPSILON].d;
    if (s->R == 0)
        s->R = noise > 0 ? (uint64_t)fmax(1, ceil(noise / eps))
                         : (uint64_t)s->nworkers;
    aia_rng_seed(&s->rng, ctx->seed,
                 0x52494e0000000000ull + (uint64_t)ctx->rank);
    if (aia_auto_step(ctx, P_STEP, 1.0 / (2.0 * (double)s->R),
                      "1/(2RL), Ringmaster ASGD's step", &s->step, err) < 0) {
        destroy(s);
        return -1;
    }
    if (ctx->role == AIA_ROLE_COORDINATOR) {
        if (!(s->x = calloc(s->dim ? s->dim : 1, sizeof *s->x))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
    } else {
        if (s->rows == 0) {
            destroy(s);
            return aia_seterr(err, "worker %d holds no rows of the problem",
                              ctx->rank);
        }
        if (s->batch > 0 && !(s->idx = malloc(s->batch * sizeof *s->idx))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
    }
    shape->query_len = shape->answer_len = s->dim + 1;
    *state = s;
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct ringmaster *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    query[s->dim] = s->version;
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct ringmaster *s = state;
    (void)step;
    answer[s->dim] = query[s->dim];
    if (s->batch == 0)
        return s->prob->gradient(s->pstate, query, NULL, 0, answer, err);
    for (size_t i = 0; i < s->batch; i++)
        s->idx[i] = (size_t)aia_rng_below(&s->rng, s->rows);
    return s->prob->gradient(s->pstate, query, s->idx, s->batch, answer, err);
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct ringmaster *s = state;
    double delay = s->version - answer[s->dim];
    if (!(delay >= 0))
        return aia_seterr(err,
                          "an answer computed at version %g, after the "
                          "current %g",
                          answer[s->dim], s->version);
    if (delay >= (double)s->R)
        return 0;
    double h = s->step;
    if (info->total_rows > 0)
        h *=
            (double)s->nworkers * (double)info->rows / (double)info->total_rows;
    for (size_t j = 0; j < s->dim; j++)
        s->x[j] -= h * answer[j];
    s->version++;
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    return init(state, query, err);
}

static int iterate(void *state, double *x, struct aia_error *err)
{
    struct ringmaster *s = state;
    (void)err;
    memcpy(x, s->x, s->dim * sizeof *x);
    return 0;
}

/* Checkpoints: the iterate, then its version (an answer's delay is
 * counted from it, so it must go on where it was). */
static size_t state_size(void *state)
{
    struct ringmaster *s = state;
    return (s->dim + 1) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct ringmaster *s = state;
    double *p = buf;
    (void)err;
    memcpy(p, s->x, s->dim * sizeof *p);
    p[s->dim] = s->version;
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct ringmaster *s = state;
    const double *p = buf;
    if (len != state_size(state))
        return aia_seterr(err, "a state of %zu bytes, expected %zu", len,
                          state_size(state));
    if (!(p[s->dim] >= 0))
        return aia_seterr(err, "version %g: not a state of ringmaster",
                          p[s->dim]);
    memcpy(s->x, p, s->dim * sizeof *p);
    s->version = p[s->dim];
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin,
                    "ringmaster", "1.0",
                    "Ringmaster ASGD: asynchronous SGD that discards answers "
                    "computed R or more steps ago",
                    params),
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
