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
 * is whole.  Without it step 1/L diverged in async mode and with a pool
 * whose delays differ (bench/ANALYSIS.md, "The age factor of gd and
 * sag", has the runs).
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
    struct aia_table_method t; /* first: the descriptor functions take it */
    int nworkers;
};

static void destroy(void *state)
{
    struct gd *s = state;
    if (!s)
        return;
    aia_table_method_close(&s->t);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct gd *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->nworkers = ctx->nworkers;
    if (aia_table_method_open(
            &s->t, ctx, 1.0, "1/L, gradient descent's step", 1.0,
            ctx->nworkers > 0 ? (size_t)ctx->nworkers : 0, shape, err) < 0) {
        destroy(s);
        return -1;
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
    aia_table_store(&s->t.table, (size_t)info->worker, answer,
                    (double)info->rows, info->sent_round);
    aia_table_heard(&s->t.table, info->round);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h =
        AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "gd", "1.1",
                   "synchronous gradient descent: one step a round with "
                   "the row-weighted mean of the workers' latest gradients",
                   params),
    .flags = AIA_ALG_ASSOCIATIVE | AIA_ALG_ADDITIVE | AIA_ALG_SEPARABLE,
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = aia_table_method_query,
    .state_size = aia_table_method_size,
    .save = aia_table_method_save,
    .load = aia_table_method_load,
};
