/* nesterov.c - Nesterov's accelerated gradient descent, an algorithm
 * plugin for aiarun built outside its tree (see aiarun-plugin(7)).
 *
 * Workers answer the gradient of their rows at the query.  The
 * coordinator keeps the latest gradient of every worker and, at the end of
 * each round, takes their mean weighted by the workers' rows (a worker
 * that was not waited for contributes its latest, stale, gradient, as in
 * gradient descent with stale gradients) and makes one accelerated step:
 *
 *     v <- momentum * v - step * g(y)
 *     x <- x + v
 *     y <- x + momentum * v      (the next query: the look-ahead point)
 *
 * The reported model is x, not the look-ahead point y, so the plugin
 * gives `iterate`.  With `restart`, the momentum is dropped whenever the
 * gradient points along the last move, g(y) . v > 0 (the gradient
 * restart of O'Donoghue and Candes, 2015), which removes the ripples of
 * an over-estimated momentum on badly conditioned problems.
 *
 * The state (x, v and every worker's latest gradient) is saved in
 * checkpoints, so a resumed run ends where an uninterrupted one does.
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags aiarun) nesterov.c \
 *            -o nesterov.so -lm
 */
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, NULL,
     "step size, at most 1/L for a loss with "
     "L-Lipschitz gradient (required)",
     NULL, 1e-12, 1e6},
    {"momentum", AIA_DOUBLE, "0.9",
     "momentum; (sqrt(L/mu) - 1)/(sqrt(L/mu) + 1) for a mu-strongly convex "
     "loss",
     NULL, 0, 0.9999},
    {"restart", AIA_BOOL, "true",
     "drop the momentum when the gradient points along the last move", NULL, 0,
     0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct nesterov {
    const struct aia_problem_plugin *prob; /* opened by the runtime */
    const struct aia_host *host;           /* the runtime's services */
    int coordinator;
    void *prob_state;
    size_t dim;
    int nworkers;
    double step, momentum;
    int restart;
    /* coordinator only */
    double *x;    /* the model */
    double *v;    /* the velocity */
    double *grad; /* nworkers x dim: each worker's latest gradient */
    double *rows; /* rows behind each stored gradient; 0: none yet */
    double *mean; /* dim: scratch for the weighted mean */
    uint64_t restarts;
};

static void destroy(void *state)
{
    struct nesterov *s = state;
    if (!s)
        return;
    /* host->log prefixes the rank and obeys aiarun -v */
    if (s->coordinator && s->restart && s->host && s->host->log)
        s->host->log(s->host, AIA_LOG_INFO, "nesterov: %llu restarts",
                     (unsigned long long)s->restarts);
    free(s->x);
    free(s->v);
    free(s->grad);
    free(s->rows);
    free(s->mean);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct nesterov *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->prob_state = ctx->problem_state;
    s->host = ctx->host;
    s->coordinator = ctx->role == AIA_ROLE_COORDINATOR;
    s->dim = s->prob->dim(s->prob_state);
    s->nworkers = ctx->nworkers;
    s->step = aia_arg(ctx->args, "step")->d;
    s->momentum = aia_arg(ctx->args, "momentum")->d;
    s->restart = (int)aia_arg(ctx->args, "restart")->i;
    shape->query_len = s->dim;
    shape->answer_len = s->dim;
    if (s->coordinator) {
        size_t n = s->dim, w = (size_t)s->nworkers;
        s->x = calloc(n, sizeof *s->x);
        s->v = calloc(n, sizeof *s->v);
        s->grad = calloc(w * n, sizeof *s->grad);
        s->rows = calloc(w, sizeof *s->rows);
        s->mean = calloc(n, sizeof *s->mean);
        if (!s->x || !s->v || !s->grad || !s->rows || !s->mean) {
            destroy(s);
            return aia_seterr(err, "out of memory for %d gradients of %zu",
                              ctx->nworkers, n);
        }
    }
    *state = s;
    return 0;
}

/* The first query: x = 0, no velocity yet, so y = x. */
static int init(void *state, double *query, struct aia_error *err)
{
    struct nesterov *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    return 0;
}

/* On a worker: the mean gradient of its rows at the query. */
static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct nesterov *s = state;
    (void)step;
    return s->prob->gradient(s->prob_state, query, NULL, 0, answer, err);
}

/* On the coordinator: remember the answer as that worker's gradient. */
static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct nesterov *s = state;
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from pool index %d of %d",
                          info->worker, s->nworkers);
    memcpy(s->grad + (size_t)info->worker * s->dim, answer,
           s->dim * sizeof *answer);
    s->rows[info->worker] = (double)info->rows;
    return 0;
}

/* End of a round: one accelerated step, then the next look-ahead point.
 * The sum runs in pool order, so a run that waits for every worker gives
 * the same numbers whatever order the answers arrived in. */
static int query(void *state, double *query, struct aia_error *err)
{
    struct nesterov *s = state;
    size_t n = s->dim;
    double total = 0;
    memset(s->mean, 0, n * sizeof *s->mean);
    for (int w = 0; w < s->nworkers; w++) {
        const double *g = s->grad + (size_t)w * n;
        for (size_t j = 0; j < n; j++)
            s->mean[j] += s->rows[w] * g[j];
        total += s->rows[w];
    }
    if (total <= 0)
        return aia_seterr(err, "a round ended before any worker answered");
    double along = 0;
    for (size_t j = 0; j < n; j++) {
        s->mean[j] /= total;
        s->v[j] = s->momentum * s->v[j] - s->step * s->mean[j];
        s->x[j] += s->v[j];
        along += s->mean[j] * s->v[j];
    }
    /* A step against the gradient has along < 0; along > 0 means the
     * momentum carried x uphill. */
    if (s->restart && along > 0) {
        memset(s->v, 0, n * sizeof *s->v);
        s->restarts++;
    }
    for (size_t j = 0; j < n; j++)
        query[j] = s->x[j] + s->momentum * s->v[j];
    return 0;
}

/* The model whose loss is reported: x, not the look-ahead point. */
static int iterate(void *state, double *x, struct aia_error *err)
{
    struct nesterov *s = state;
    (void)err;
    memcpy(x, s->x, s->dim * sizeof *x);
    return 0;
}

/* Checkpoints: x, v, every worker's gradient and its rows, in this order. */
static size_t state_size(void *state)
{
    struct nesterov *s = state;
    size_t w = (size_t)s->nworkers;
    return (2 * s->dim + w * s->dim + w) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct nesterov *s = state;
    double *p = buf;
    size_t n = s->dim, w = (size_t)s->nworkers;
    (void)err;
    memcpy(p, s->x, n * sizeof *p);
    memcpy(p + n, s->v, n * sizeof *p);
    memcpy(p + 2 * n, s->grad, w * n * sizeof *p);
    memcpy(p + 2 * n + w * n, s->rows, w * sizeof *p);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct nesterov *s = state;
    const double *p = buf;
    size_t n = s->dim, w = (size_t)s->nworkers;
    if (len != state_size(state))
        return aia_seterr(err, "a saved state of %zu bytes, expected %zu", len,
                          state_size(state));
    memcpy(s->x, p, n * sizeof *p);
    memcpy(s->v, p + n, n * sizeof *p);
    memcpy(s->grad, p + 2 * n, w * n * sizeof *p);
    memcpy(s->rows, p + 2 * n + w * n, w * sizeof *p);
    return 0;
}

/* The one symbol aiarun looks for.  The name must match the file name
 * (nesterov.so); no flags: the stored answers are states, not increments
 * (no top-k compression), and one per worker (no tree aggregation). */
const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "nesterov",
                    "1.0",
                    "Nesterov's accelerated gradient descent over the "
                    "workers' latest gradients",
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
