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
 *
 * balance: on is DSAG's load balancer (Severinson et al., section VI):
 * on a pool whose workers stay unequal a while (a shared cluster), a
 * slow worker gets more, smaller sub-partitions, so that every worker's
 * expected time per answer is the same; no row moves between ranks.  The
 * coordinator keeps, per worker, the rows and compute times (compute_s)
 * of its latest balance_window answers, fits them as o_i + b_i n (a fixed
 * cost of an answer, a time per row), and every balance_every rounds
 * plans (balance.h): the target time per answer is the least of the
 * workers' at subpartitions, and each worker gets the p that brings its
 * time nearest it, at least subpartitions, at most balance_max, its rows
 * and 4 times its p.  The plan's predicted time per answer of its slowest
 * worker (max o_i + b_i R_i / p_i: the round's time when a round waits
 * for every worker, the staleness of the slowest otherwise) must be below
 * balance_threshold times the current assignment's, or the plan is
 * dropped: a plan must pay for the cycles it restarts (the paper
 * simulates the pool and takes a plan below 0.95-0.98 of the current
 * time; here the slowest worker's expected time stands for it).  The query
 * carries the assignment after x (dim + nworkers doubles); a worker answers
 * sub-partition (its answers mod p), so a new p takes effect at once.  The
 * table is then of row segments (segtable.h): an answer is the gradient, its
 * sub-partition's index, its rows and its first row, and replaces exactly the
 * rows it covers, so the table's sum stays that of the latest gradient of every
 * row, whatever the assignments were.  Each accepted plan is logged (-v), and
 * the run report gives the final assignment.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>
#include <aiarun/balance.h>
#include <aiarun/segtable.h>
#include <stdio.h>

enum { V_SAG, V_DSAG };
static const char *const variants[] = {[V_SAG] = "sag", [V_DSAG] = "dsag"};
static const char *const balance_words[] = {"off", "on"};

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
     "has an entry in the table); with balance, the fewest a worker gets",
     NULL, 1, 1e6},
    {"balance", AIA_ENUM, "off",
     "on: DSAG's load balancer gives slower workers more, smaller "
     "sub-partitions, so that every worker's expected time per answer is "
     "equal",
     "off|on", 0, 0},
    {"balance_every", AIA_INT, "10",
     "rounds between two plans of the balancer (in async mode, as many "
     "updates times the workers)",
     NULL, 1, 1e9},
    {"balance_window", AIA_INT, "20",
     "latest answers per worker whose compute times the balancer fits as "
     "a fixed cost per answer plus a time per row",
     NULL, 2, 10000},
    {"balance_threshold", AIA_DOUBLE, "0.95",
     "a plan is taken only when its predicted time per answer of the "
     "slowest worker is below this fraction of the current one's",
     NULL, 0.01, 1},
    {"balance_max", AIA_INT, "1000",
     "most sub-partitions the balancer gives a worker (never more than its "
     "rows)",
     NULL, 1, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct sag {
    struct aia_table_method t; /* first: the descriptor functions take it;
                                  its table has nworkers x parts entries */
    size_t rows, parts;
    int nworkers, dsag;
    size_t *idx; /* worker: the rows of one sub-partition */
    /* balance: on */
    int balance, worker_index, async;
    size_t now_parts;       /* worker: its current p */
    struct aia_balance bal; /* coordinator */
    struct aia_segtable seg;
};

static void destroy(void *state)
{
    struct sag *s = state;
    if (!s)
        return;
    aia_table_method_close(&s->t);
    aia_segtable_free(&s->seg);
    aia_balance_close(&s->bal);
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
    s->balance = aia_arg_enum(ctx->args, "balance", balance_words, 2) == 1;
    size_t most = (size_t)aia_arg(ctx->args, "balance_max")->i;
    s->async = AIA_HAS(struct aia_context, ctx, async) && ctx->async;
    s->worker_index = ctx->worker;
    if (s->balance && most < s->parts) {
        size_t parts = s->parts;
        destroy(s);
        return aia_seterr(err,
                          "balance_max: %zu is below subpartitions (%zu), "
                          "the fewest a worker gets",
                          most, parts);
    }
    /* a balanced table is of row segments: the fixed one stays empty */
    if (aia_table_method_open(&s->t, ctx, 0.5,
                              "1/(2L): the table mixes gradients of several "
                              "iterates",
                              2.0,
                              s->balance ? 0 : (size_t)s->nworkers * s->parts,
                              shape, err) < 0) {
        destroy(s);
        return -1;
    }
    s->rows = s->t.m.grad.rows;
    shape->answer_len = s->t.m.dim + 2;
    if (s->balance) {
        size_t n = (size_t)s->nworkers;
        shape->query_len = s->t.m.dim + n;
        shape->answer_len = s->t.m.dim + 3;
        s->now_parts = s->parts;
        if (ctx->role == AIA_ROLE_COORDINATOR &&
            (aia_segtable_init(&s->seg, s->nworkers, s->t.m.dim) < 0 ||
             aia_balance_open(
                 &s->bal, ctx, s->parts,
                 (size_t)aia_arg(ctx->args, "balance_every")->i,
                 (size_t)aia_arg(ctx->args, "balance_window")->i,
                 aia_arg(ctx->args, "balance_threshold")->d, most) < 0)) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
    }
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

/* Rows [first(j), first(j + 1)) of the worker's form sub-partition j of
 * parts. */
static size_t first_of(size_t rows, size_t j, size_t parts)
{
    return (size_t)(((unsigned __int128)rows * j) / parts);
}

static size_t first(const struct sag *s, size_t j)
{
    return first_of(s->rows, j, s->parts);
}

/* balance: on.  Worker: the p the query gives it (after x, one a worker,
 * in pool order), sub-partition answers mod p.  The answer is the
 * gradient, the sub-partition's index, its rows and its first row. */
static int worker_balanced(struct sag *s, const double *query, double *answer,
                           const struct aia_step *step, struct aia_error *err)
{
    size_t dim = s->t.m.dim;
    double p = query[dim + s->worker_index];
    if (!(p >= (double)s->parts && p <= (double)s->rows && p == floor(p)))
        return aia_seterr(err,
                          "the query gives worker %d %g sub-partitions of "
                          "its %zu rows (at least %zu)",
                          s->worker_index, p, s->rows, s->parts);
    /* j from the answer count alone, as without balance: a new p goes on
     * from wherever the count is, and a worker started again on a
     * checkpoint picks up where it was */
    s->now_parts = (size_t)p;
    size_t j = (size_t)(step->answers % s->now_parts);
    size_t lo = first_of(s->rows, j, s->now_parts);
    size_t hi = first_of(s->rows, j + 1, s->now_parts);
    struct aia_gradients *g = &s->t.m.grad;
    int rc;
    if (s->now_parts == 1)
        rc = aia_gradients_take(g, query, answer, err);
    else {
        for (size_t i = lo; i < hi; i++)
            s->idx[i - lo] = i;
        rc = g->prob->gradient(g->pstate, query, s->idx, hi - lo, answer, err);
    }
    answer[dim] = (double)j;
    answer[dim + 1] = (double)(hi - lo);
    answer[dim + 2] = (double)lo;
    return rc;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct sag *s = state;
    if (s->balance)
        return worker_balanced(s, query, answer, step, err);
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

static int absorb_balanced(struct sag *s, const double *answer,
                           const struct aia_answer_info *info,
                           struct aia_error *err)
{
    size_t dim = s->t.m.dim;
    double part = answer[dim], rows = answer[dim + 1], lo = answer[dim + 2];
    int w = info->worker;
    if (!(part >= 0 && part < (double)info->rows && rows > 0 && lo >= 0 &&
          lo == floor(lo) && rows == floor(rows) &&
          lo + rows <= (double)info->rows))
        return aia_seterr(err,
                          "an answer for rows %g to %g of worker %d's %zu: "
                          "not one of this job's",
                          lo, lo + rows, w, info->rows);
    aia_balance_time(&s->bal, w, (double)info->rows, rows, info->compute_s);
    aia_segtable_heard(&s->seg, info->round);
    if (info->staleness > 0 && !s->dsag)
        return 0;
    if (aia_segtable_put(&s->seg, w, (size_t)lo, (size_t)(lo + rows), answer,
                         info->sent_round) < 0)
        return aia_seterr(err, "out of memory for the table's segments");
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sag *s = state;
    double part = answer[s->t.m.dim], rows = answer[s->t.m.dim + 1];
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    if (s->balance)
        return absorb_balanced(s, answer, info, err);
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

/* The query: x, then with balance each worker's p. */
static int init(void *state, double *query, struct aia_error *err)
{
    struct sag *s = state;
    int rc = aia_method_init(state, query, err);
    if (s->balance) {
        memcpy(query + s->t.m.dim, s->bal.p,
               (size_t)s->nworkers * sizeof *s->bal.p);
        aia_balance_note(&s->bal);
    }
    return rc;
}

/* The end of a round: with balance, a plan every balance_every, then a
 * step along the segments' mean (summed afresh in rounds mode, so that it
 * does not depend on the answers' order), times the table's age factor. */
static int query(void *state, double *q, struct aia_error *err)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_query(state, q, err);
    aia_balance_round(&s->bal, s->async);
    struct aia_segtable *t = &s->seg;
    if (!s->async)
        aia_segtable_resum(t);
    double h = s->t.m.step * aia_segtable_age_factor(s->t.m.host, t, s->t.most);
    if (t->total > 0)
        for (size_t j = 0; j < t->dim; j++)
            s->t.m.x[j] -= h * (t->sum[j] / t->total);
    return init(state, q, err);
}

static int iterate(void *state, double *x, struct aia_error *err)
{
    struct sag *s = state;
    (void)err;
    memcpy(x, s->t.m.x, s->t.m.dim * sizeof *x);
    return 0;
}

/* Checkpoints with balance: x, the balancer's state (aia_balance_save),
 * then the segments (aia_segtable_save), then in async mode the table's
 * running sums (aia_segtable_save_sums; in rounds they are summed afresh
 * at every round's end, and a state without them loads in either mode). */
static size_t sums_len(const struct sag *s)
{
    return s->async ? aia_segtable_sums_len(&s->seg) : 0;
}

static size_t state_size(void *state)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_size(state);
    return (s->t.m.dim + aia_balance_len(&s->bal) +
            aia_segtable_size(&s->seg) + sums_len(s)) *
           sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_save(state, buf, err);
    double *p = buf;
    memcpy(p, s->t.m.x, s->t.m.dim * sizeof *p);
    p = aia_segtable_save(&s->seg, aia_balance_save(&s->bal, p + s->t.m.dim));
    if (s->async)
        aia_segtable_save_sums(&s->seg, p);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_load(state, buf, len, err);
    size_t n = (size_t)s->nworkers, dim = s->t.m.dim;
    size_t fixed = dim + aia_balance_len(&s->bal);
    const double *p = buf, *rows = p + dim + 2 + n;
    if (len % sizeof(double) || len / sizeof(double) < fixed)
        return aia_seterr(err,
                          "a state of %zu bytes, not a balanced table's "
                          "(another job's checkpoint?)",
                          len);
    if (aia_state_finite(p, dim, "iterate", err) < 0)
        return -1;
    if (aia_balance_bad(&s->bal, p + dim, err) < 0)
        return -1;
    struct aia_segtable seg = {0};
    size_t *bound = malloc(n * sizeof *bound);
    if (!bound || aia_segtable_init(&seg, s->nworkers, dim) < 0) {
        free(bound);
        aia_segtable_free(&seg);
        return aia_seterr(err, "out of memory");
    }
    for (size_t w = 0; w < n; w++)
        bound[w] = rows[w] > 0 ? (size_t)rows[w] : SIZE_MAX;
    size_t rest = len / sizeof(double) - fixed;
    const double *end = aia_segtable_load(&seg, p + fixed, rest, bound, err);
    free(bound);
    /* after the segments: the running sums (async mode), or nothing */
    size_t left = end ? (size_t)(p + fixed + rest - end) : 0;
    int with = s->async && left == aia_segtable_sums_len(&seg);
    const char *bad = with ? aia_segtable_sums_bad(&seg, end) : NULL;
    if (!end || (left && !with) || bad) {
        if (bad)
            aia_seterr(err, "the table's running sums: %s", bad);
        else if (end)
            aia_seterr(err, "%zu doubles past the balanced table", left);
        aia_segtable_free(&seg);
        return -1;
    }
    if (with)
        aia_segtable_load_sums(&seg, end);
    aia_segtable_free(&s->seg);
    s->seg = seg;
    memcpy(s->t.m.x, p, dim * sizeof *p);
    aia_balance_load(&s->bal, p + dim);
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
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
