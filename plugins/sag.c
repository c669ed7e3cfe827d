/* sag.c - stochastic average gradient over the pool, SAG or DSAG.
 *
 * Each worker splits its rows into p sub-partitions (subpartitions: p)
 * and answers each query with the mean gradient of the next one, cycling
 * through them, one per query.  The coordinator keeps a table of the
 * latest gradient of every (worker, sub-partition) and the rows behind
 * it, and at the end of every round steps with their row-weighted mean:
 *
 *     x <- x - step * (sum_e n_e g_e) / (sum_e n_e)
 *
 * over the entries e heard from so far (so that the first rounds do not
 * divide by rows that have not answered yet).  With p = 1 and every
 * worker fresh every round this is gradient descent; with fewer answers a
 * round, the others contribute their latest, older, gradients, which is
 * what makes SAG a variance-reduced method that converges to the exact
 * optimum with a constant step.
 *
 * variant: sag takes only fresh answers into the table: an answer
 * computed from an earlier round's query is dropped (its worker is sent
 * the current query at once, as for every stale answer).  variant: dsag
 * keeps it too, when it is newer than the entry it replaces: Severinson,
 * Rosnes, El Rouayheb and Amat, "DSAG: A mixed synchronous-asynchronous
 * iterative method for straggler-resilient learning" (IEEE Trans.
 * Commun. 2023), the method MPIAsyncPools was written for, whose stale
 * answers are work that SAG throws away.
 *
 * step: auto (the default) is 1/(2L), L the problem's smoothness: half the
 * gradient step, since the table mixes gradients of several iterates.
 *
 * The table's direction is as old as its entries: every step, auto or
 * given, is multiplied by its age factor (aia_table_age_factor, alg.h,
 * most 2: min(1, 2/a), a the entries' row-weighted mean age in steps,
 * rounds or updates in async mode, unless entries at most one step old
 * hold more than half the rows, as with every worker fresh or a
 * persistent straggler among fresh ones).  Without it DSAG's stale
 * entries made x oscillate and grow at the step 1/(2L): with nwait 1 of
 * 4 workers whose delays differ (fixed, 1 to 10 ms) and 3 sub-partitions
 * 9 of 40 simulated pools diverged (none with it), and async mode, where
 * the entries are about n updates old, diverged with 4 workers.
 *
 * An answer is the gradient (dim doubles), then the sub-partition's index
 * and its rows.  The coordinator holds nworkers x p x dim doubles.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

enum { V_SAG, V_DSAG };
static const char *const variants[] = {[V_SAG] = "sag", [V_DSAG] = "dsag"};

static const struct aia_param params[] = {
    AIA_STEP_PARAM("step size applied to the row-weighted mean of the "
                   "gradient table (auto: 1/(2L), L the problem's "
                   "smoothness), times min(1, 2/a) when the table is old, "
                   "a its mean age in steps"),
    {"variant", AIA_ENUM, "dsag",
     "sag: stale answers are dropped; dsag: they enter the table too, when "
     "newer than the entry they replace",
     "sag|dsag", 0, 0},
    {"subpartitions", AIA_INT, "1",
     "parts of its rows a worker cycles through, one per query (each "
     "has an entry in the table)",
     NULL, 1, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct sag {
    struct aia_method m; /* first: its descriptor functions take the state */
    size_t rows, parts;
    int nworkers, dsag;
    size_t *idx; /* worker: the rows of one sub-partition */
    /* coordinator */
    struct aia_table table; /* nworkers x parts entries */
};

static void destroy(void *state)
{
    struct sag *s = state;
    if (!s)
        return;
    aia_method_close(&s->m);
    aia_table_free(&s->table);
    free(s->idx);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct sag *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    int variant = aia_arg_enum(ctx->args, "variant", variants, 2);
    s->dsag = variant == V_DSAG;
    s->parts = (size_t)aia_arg(ctx->args, "subpartitions")->i;
    if (variant < 0) {
        destroy(s);
        return aia_seterr(err, "variant: not sag or dsag");
    }
    if (!s->dsag && AIA_HAS(struct aia_context, ctx, async) && ctx->async) {
        destroy(s);
        return aia_seterr(err,
                          "variant: sag drops stale answers, and in async "
                          "mode every answer but the first is stale: its "
                          "table would never change (variant: dsag keeps "
                          "them)");
    }
    if (aia_method_open(&s->m, ctx, 0.5,
                        "1/(2L): the table mixes gradients of several "
                        "iterates",
                        0, 0, 0, shape, err) < 0) {
        destroy(s);
        return -1;
    }
    s->rows = s->m.grad.rows;
    shape->answer_len = s->m.dim + 2;
    if (ctx->role != AIA_ROLE_COORDINATOR) {
        if (s->rows < s->parts) {
            size_t rows = s->rows, parts = s->parts;
            destroy(s);
            return aia_seterr(err,
                              "subpartitions: %zu parts of worker %d's "
                              "%zu rows would leave one empty",
                              parts, ctx->rank, rows);
        }
        if (!(s->idx = malloc((s->rows / s->parts + 1) * sizeof *s->idx))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
    } else {
        size_t entries = (size_t)s->nworkers * s->parts;
        if (aia_table_init(&s->table, entries, s->m.dim) < 0) {
            size_t d = s->m.dim ? s->m.dim : 1;
            destroy(s);
            return aia_seterr(err,
                              "out of memory for a table of %zu gradients "
                              "of dimension %zu",
                              entries, d);
        }
    }
    *state = s;
    return 0;
}

/* Rows [first(j), first(j + 1)) of the worker's form sub-partition j. */
static size_t first(const struct sag *s, size_t j)
{
    return (size_t)(((unsigned __int128)s->rows * j) / s->parts);
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct sag *s = state;
    size_t j = (size_t)(step->answers % s->parts);
    size_t lo = first(s, j), hi = first(s, j + 1);
    int rc;
    if (s->parts == 1)
        rc = aia_gradients_take(&s->m.grad, query, answer, err);
    else {
        for (size_t i = lo; i < hi; i++)
            s->idx[i - lo] = i;
        rc = s->m.grad.prob->gradient(s->m.grad.pstate, query, s->idx, hi - lo,
                                      answer, err);
    }
    answer[s->m.dim] = (double)j;
    answer[s->m.dim + 1] = (double)(hi - lo);
    return rc;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sag *s = state;
    double part = answer[s->m.dim], rows = answer[s->m.dim + 1];
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    if (!(part >= 0 && part < (double)s->parts && rows > 0))
        return aia_seterr(err,
                          "an answer for sub-partition %g of %zu rows "
                          "%g: not one of this job's",
                          part, s->parts, rows);
    aia_table_heard(&s->table, info->round);
    if (info->staleness > 0 && !s->dsag)
        return 0;
    size_t e = (size_t)info->worker * s->parts + (size_t)part;
    /* an older answer than the entry's (possible for DSAG) changes
     * nothing: the table keeps the freshest gradient */
    if (s->table.n[e] > 0 && info->sent_round < s->table.when[e])
        return 0;
    aia_table_put(&s->table, e, answer, rows, info->sent_round);
    return 0;
}

/* No entry yet: nothing to step with, the query stays. */
static int query(void *state, double *query, struct aia_error *err)
{
    struct sag *s = state;
    double age = aia_table_age_factor(s->m.host, &s->table, 2.0);
    aia_table_step(&s->table, s->m.x, s->m.step * age);
    return aia_method_init(state, query, err);
}

/* Checkpoints: the iterate, then the table: every entry's gradient, its
 * rows and the round of its query (a double, exact below 2^53). */
static size_t state_size(void *state)
{
    struct sag *s = state;
    size_t entries = (size_t)s->nworkers * s->parts;
    return (s->m.dim + entries * (s->m.dim + 2)) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct sag *s = state;
    double *p = buf;
    (void)err;
    memcpy(p, s->m.x, s->m.dim * sizeof *p);
    aia_table_save(&s->table, p + s->m.dim);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct sag *s = state;
    const double *p = buf;
    double rows, sent;
    if (aia_state_len(len, state_size(state), err) < 0)
        return -1;
    size_t e = aia_table_bad(&s->table, p + s->m.dim, &rows, &sent);
    if (e < s->table.entries)
        return aia_seterr(err,
                          "table entry %zu: %g rows from round %g, not a "
                          "state of sag",
                          e, rows, sent);
    memcpy(s->m.x, p, s->m.dim * sizeof *p);
    aia_table_load(&s->table, p + s->m.dim);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "sag",
                    "1.0",
                    "SAG and DSAG: one step a round with the row-weighted "
                    "mean of a table of the latest gradient of every "
                    "worker's sub-partitions; DSAG keeps stale answers",
                    params),
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .state_size = state_size,
    .save = save,
    .load = load,
};
