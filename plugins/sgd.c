/* sgd.c - asynchronous stochastic gradient descent.
 *
 * Workers answer a query x with a gradient of their rows' loss at x (all
 * rows, or a mini-batch drawn with replacement); the coordinator applies
 * each answer as it arrives: x <- x - step * g.  With every answer applied
 * at once this is the per-answer asynchronous SGD of parameter servers;
 * the round-based pool decides how stale the x behind a gradient may be.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

enum { P_STEP, P_BATCH };

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "0.1", "step size applied to each gradient", NULL,
     1e-300, 1e300},
    {"batch", AIA_INT, "0",
     "rows per gradient, drawn with replacement (0: all the worker's rows)",
     NULL, 0, 1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct sgd {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim, rows, batch;
    double step;
    double *x;    /* coordinator: the iterate */
    size_t *idx;  /* worker: the batch's rows */
    struct aia_rng rng;
};

static void destroy(void *state)
{
    struct sgd *s = state;
    if (!s)
        return;
    free(s->x);
    free(s->idx);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct sgd *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->rows = s->prob->rows(s->pstate);
    s->step = ctx->args[P_STEP].d;
    s->batch = (size_t)ctx->args[P_BATCH].i;
    aia_rng_seed(&s->rng, ctx->seed, 0x5347440000000000ull + (uint64_t)ctx->rank);
    if (ctx->role == AIA_ROLE_COORDINATOR)
        s->x = calloc(s->dim ? s->dim : 1, sizeof *s->x);
    else if (s->batch > 0)
        s->idx = malloc(s->batch * sizeof *s->idx);
    if ((ctx->role == AIA_ROLE_COORDINATOR && !s->x) ||
        (ctx->role != AIA_ROLE_COORDINATOR && s->batch > 0 && !s->idx)) {
        destroy(s);
        return aia_seterr(err, "out of memory");
    }
    if (ctx->role != AIA_ROLE_COORDINATOR && s->rows == 0) {
        destroy(s);
        return aia_seterr(err, "worker %d holds no rows of the problem",
                          ctx->rank);
    }
    shape->query_len = shape->answer_len = s->dim;
    *state = s;
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct sgd *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct sgd *s = state;
    (void)step;
    if (s->batch == 0)
        return s->prob->gradient(s->pstate, query, NULL, 0, answer, err);
    for (size_t i = 0; i < s->batch; i++)
        s->idx[i] = (size_t)aia_rng_below(&s->rng, s->rows);
    return s->prob->gradient(s->pstate, query, s->idx, s->batch, answer, err);
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sgd *s = state;
    (void)info;
    (void)err;
    for (size_t j = 0; j < s->dim; j++)
        s->x[j] -= s->step * answer[j];
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    return init(state, query, err);
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "sgd",
                    "1.0",
                    "asynchronous SGD: each answer is a gradient, applied "
                    "as it arrives",
                    params),
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
};
