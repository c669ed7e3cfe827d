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
 * entries made x oscillate and grow at the step 1/(2L), with a pool whose
 * delays differ and in async mode, where the entries are about n updates
 * old (bench/ANALYSIS.md, "The age factor of gd and sag", has the runs).
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
    struct aia_table_method t; /* first: the descriptor functions take it;
                                  its table has nworkers x parts entries */
    size_t rows, parts;
    int nworkers, dsag;
    size_t *idx; /* worker: the rows of one sub-partition */
};

static void destroy(void *state)
{
    struct sag *s = state;
    if (!s)
        return;
    aia_table_method_close(&s->t);
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
    if (aia_table_method_open(&s->t, ctx, 0.5,
                              "1/(2L): the table mixes gradients of several "
                              "iterates",
                              2.0, (size_t)s->nworkers * s->parts, shape,
                              err) < 0) {
        destroy(s);
        return -1;
    }
    s->rows = s->t.m.grad.rows;
    shape->answer_len = s->t.m.dim + 2;
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
    struct aia_gradients *g = &s->t.m.grad;
    int rc;
    if (s->parts == 1)
        rc = aia_gradients_take(g, query, answer, err);
    else {
        for (size_t i = lo; i < hi; i++)
            s->idx[i - lo] = i;
        rc = g->prob->gradient(g->pstate, query, s->idx, hi - lo, answer, err);
    }
    answer[s->t.m.dim] = (double)j;
    answer[s->t.m.dim + 1] = (double)(hi - lo);
    return rc;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sag *s = state;
    double part = answer[s->t.m.dim], rows = answer[s->t.m.dim + 1];
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    if (!(part >= 0 && part < (double)s->parts && rows > 0))
        return aia_seterr(err,
                          "an answer for sub-partition %g of %zu rows "
                          "%g: not one of this job's",
                          part, s->parts, rows);
    aia_table_heard(&s->t.table, info->round);
    if (info->staleness > 0 && !s->dsag)
        return 0;
    size_t e = (size_t)info->worker * s->parts + (size_t)part;
    /* an older answer than the entry's (possible for DSAG) changes
     * nothing: the table keeps the freshest gradient */
    if (s->t.table.n[e] > 0 && info->sent_round < s->t.table.when[e])
        return 0;
    aia_table_store(&s->t.table, e, answer, rows, info->sent_round);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "sag",
                    "1.0",
                    "SAG and DSAG: one step a round with the row-weighted "
                    "mean of a table of the latest gradient of every "
                    "worker's sub-partitions; DSAG keeps stale answers",
                    params),
    .flags = AIA_ALG_SEPARABLE,
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = worker,
    .absorb = absorb,
    .query = aia_table_method_query,
    .state_size = aia_table_method_size,
    .save = aia_table_method_save,
    .load = aia_table_method_load,
};
