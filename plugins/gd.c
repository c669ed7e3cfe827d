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
 *
 * Stale gradients make the step a delayed one: every step, auto or given,
 * is multiplied by the table's age factor (aia_table_age_factor, most 1:
 * min(1, 1/a), a the entries' row-weighted mean age in rounds, updates in
 * async mode, unless entries at most one step old hold more than half the
 * rows).  Waiting for every worker, or for all but a straggler, the step
 * is whole.  Without it, step 1/L diverged in async mode with 4 workers
 * (iteration 50 to 64 under mpirun), and with nwait 1 of 4 workers whose
 * delays differ (fixed, 1 to 10 ms) in 5 of 12 simulated pools (none of
 * 40 with it).
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

static const struct aia_param params[] = {
    AIA_STEP_PARAM("step size applied to the row-weighted mean of the "
                   "workers' gradients (auto: 1/L, L the problem's "
                   "smoothness), times min(1, 1/a) when the table is old, "
                   "a its mean age in steps"),
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct gd {
    struct aia_method m; /* first: its descriptor functions take the state */
    int nworkers;
    struct aia_table table; /* coordinator: each worker's latest gradient */
};

static void destroy(void *state)
{
    struct gd *s = state;
    if (!s)
        return;
    aia_method_close(&s->m);
    aia_table_free(&s->table);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct gd *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->nworkers = ctx->nworkers;
    if (aia_method_open(&s->m, ctx, 1.0, "1/L, gradient descent's step", 0, 0,
                        0, shape, err) < 0) {
        destroy(s);
        return -1;
    }
    if (ctx->role == AIA_ROLE_COORDINATOR &&
        aia_table_init(&s->table, ctx->nworkers > 0 ? (size_t)ctx->nworkers : 0,
                       s->m.dim) < 0) {
        size_t dim = s->m.dim;
        destroy(s);
        return aia_seterr(err,
                          "out of memory for the gradients of %d workers of "
                          "dimension %zu",
                          ctx->nworkers, dim);
    }
    *state = s;
    return 0;
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
    aia_table_put(&s->table, (size_t)info->worker, answer, (double)info->rows,
                  info->sent_round);
    aia_table_heard(&s->table, info->round);
    return 0;
}

/* With no answer yet there is nothing to step with: the query stays. */
static int query(void *state, double *query, struct aia_error *err)
{
    struct gd *s = state;
    double age = aia_table_age_factor(s->m.host, &s->table, 1.0);
    aia_table_step(&s->table, s->m.x, s->m.step * age);
    return aia_method_init(state, query, err);
}

/* Checkpoints: the iterate, each worker's latest gradient and its rows,
 * then the round of each one's query (a double, exact below 2^53). */
static size_t state_size(void *state)
{
    struct gd *s = state;
    size_t n = (size_t)s->nworkers;
    return (s->m.dim + n * s->m.dim + 2 * n) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct gd *s = state;
    double *p = buf;
    (void)err;
    memcpy(p, s->m.x, s->m.dim * sizeof *p);
    aia_table_save(&s->table, p + s->m.dim);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct gd *s = state;
    const double *p = buf;
    double rows, sent;
    if (aia_state_len(len, state_size(state), err) < 0)
        return -1;
    size_t w = aia_table_bad(&s->table, p + s->m.dim, &rows, &sent);
    if (w < s->table.entries)
        return aia_seterr(err,
                          "worker %zu's gradient: %g rows from round %g, not "
                          "a state of gd",
                          w, rows, sent);
    memcpy(s->m.x, p, s->m.dim * sizeof *p);
    aia_table_load(&s->table, p + s->m.dim);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h =
        AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "gd", "1.1",
                   "synchronous gradient descent: one step a round with "
                   "the row-weighted mean of the workers' latest gradients",
                   params),
    .flags = AIA_ALG_ASSOCIATIVE | AIA_ALG_ADDITIVE,
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = query,
    .state_size = state_size,
    .save = save,
    .load = load,
};
