/* gd.c - synchronous full-gradient descent.
 *
 * Workers answer a query x with the full gradient g_i of their rows' loss
 * at x (the mean over their rows).  The coordinator keeps the latest
 * gradient of each worker and the number of rows n_i it holds, and at the
 * end of every round takes one step with their row-weighted mean over the
 * workers heard from so far:
 *
 *     x <- x - step * (sum_i n_i g_i) / (sum_i n_i)
 *
 * Since each g_i is a mean over n_i rows, the weighted mean is the mean
 * gradient over all rows: when every worker answers every round (the
 * default wait) this is exact gradient descent on the whole problem, even
 * when the parts are of unequal sizes.  When a round ends before every
 * worker answered, the others contribute their latest, older, gradient.
 *
 * The coordinator holds dim x nworkers doubles.
 *
 * step: auto (the default) is 1/L, L the smoothness the problem gives:
 * for an L-smooth f, x - g/L decreases f by at least |g|^2/(2L), and
 * every step below 2/L is stable.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

enum { P_STEP };

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "auto",
     "step size applied to the row-weighted mean of the workers' gradients "
     "(auto: 1/L, L the problem's smoothness)",
     "auto", 1e-300, 1e300},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct gd {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim;
    int nworkers;
    double step;
    /* coordinator */
    double *x;    /* the iterate */
    double *g;    /* nworkers x dim: each worker's latest gradient */
    double *rows; /* rows of each worker heard from, 0 before */
    double *mean; /* dim scratch: the weighted mean gradient */
};

static void destroy(void *state)
{
    struct gd *s = state;
    if (!s)
        return;
    free(s->x);
    free(s->g);
    free(s->rows);
    free(s->mean);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct gd *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->nworkers = ctx->nworkers;
    if (aia_auto_step(ctx, P_STEP, 1.0, "1/L, gradient descent's step",
                      &s->step, err) < 0) {
        destroy(s);
        return -1;
    }
    if (ctx->role != AIA_ROLE_COORDINATOR) {
        if (s->prob->rows(s->pstate) == 0) {
            destroy(s);
            return aia_seterr(err, "worker %d holds no rows of the problem",
                              ctx->rank);
        }
    } else {
        size_t d = s->dim ? s->dim : 1;
        size_t w = ctx->nworkers > 0 ? (size_t)ctx->nworkers : 1;
        s->x = calloc(d, sizeof *s->x);
        s->mean = calloc(d, sizeof *s->mean);
        s->rows = calloc(w, sizeof *s->rows);
        if (d <= SIZE_MAX / w)
            s->g = calloc(d * w, sizeof *s->g);
        if (!s->x || !s->mean || !s->rows || !s->g) {
            size_t dim = s->dim;
            destroy(s);
            return aia_seterr(err,
                              "out of memory for the gradients of %d workers "
                              "of dimension %zu",
                              ctx->nworkers, dim);
        }
    }
    shape->query_len = shape->answer_len = s->dim;
    *state = s;
    return 0;
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct gd *s = state;
    (void)err;
    memcpy(query, s->x, s->dim * sizeof *query);
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct gd *s = state;
    (void)step;
    return s->prob->gradient(s->pstate, query, NULL, 0, answer, err);
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct gd *s = state;
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    if (info->rows == 0)
        return aia_seterr(err,
                          "an answer from worker %d, which holds no rows: its "
                          "gradient would have no weight",
                          info->worker);
    memcpy(s->g + (size_t)info->worker * s->dim, answer,
           s->dim * sizeof *answer);
    s->rows[info->worker] = (double)info->rows;
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    struct gd *s = state;
    double total = 0;
    memset(s->mean, 0, s->dim * sizeof *s->mean);
    for (int w = 0; w < s->nworkers; w++) {
        if (s->rows[w] == 0)
            continue;
        const double *g = s->g + (size_t)w * s->dim;
        for (size_t j = 0; j < s->dim; j++)
            s->mean[j] += s->rows[w] * g[j];
        total += s->rows[w];
    }
    /* No answer yet: nothing to step with, the query stays. */
    if (total > 0)
        for (size_t j = 0; j < s->dim; j++)
            s->x[j] -= s->step * (s->mean[j] / total);
    return init(state, query, err);
}

/* Checkpoints: the iterate, each worker's latest gradient and its rows. */
static size_t state_size(void *state)
{
    struct gd *s = state;
    size_t n = (size_t)s->nworkers;
    return (s->dim + n * s->dim + n) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct gd *s = state;
    size_t n = (size_t)s->nworkers;
    double *p = buf;
    (void)err;
    memcpy(p, s->x, s->dim * sizeof *p);
    memcpy(p + s->dim, s->g, n * s->dim * sizeof *p);
    memcpy(p + s->dim + n * s->dim, s->rows, n * sizeof *p);
    return 0;
}

static int load(void *state, const void *buf, size_t len,
                struct aia_error *err)
{
    struct gd *s = state;
    size_t n = (size_t)s->nworkers;
    const double *p = buf;
    if (len != state_size(state))
        return aia_seterr(err, "a state of %zu bytes, expected %zu", len,
                          state_size(state));
    memcpy(s->x, p, s->dim * sizeof *p);
    memcpy(s->g, p + s->dim, n * s->dim * sizeof *p);
    memcpy(s->rows, p + s->dim + n * s->dim, n * sizeof *p);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h =
        AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "gd", "1.0",
                   "synchronous gradient descent: one step a round with "
                   "the row-weighted mean of the workers' latest gradients",
                   params),
    .flags = AIA_ALG_ASSOCIATIVE | AIA_ALG_ADDITIVE,
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
