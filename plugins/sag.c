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
 * plans (rebalance): the target time per answer is the least of the
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
    size_t every, window, most;
    double threshold;
    size_t now_parts;  /* worker: its current p */
    double *p;         /* coordinator: each worker's p */
    double *plan;      /* coordinator: a plan's p (scratch) */
    double *ring_rows; /* coordinator: window x nworkers answers' rows */
    double *ring_time; /* coordinator: and their compute times */
    double *samples;   /* coordinator: answers timed, per worker */
    double *recent;    /* coordinator: of them since its p changed */
    double *scratch;   /* coordinator: window doubles */
    double *cap;       /* coordinator: most parts a split paid for */
    double *fixed;     /* coordinator: fixed cost of an answer, latest fit */
    double *wrows;     /* coordinator: rows of each worker (0: unknown) */
    double since_plan, plans;
    int *ranks; /* coordinator: each worker's rank, for messages */
    struct aia_segtable seg;
};

static void destroy(void *state)
{
    struct sag *s = state;
    if (!s)
        return;
    aia_table_method_close(&s->t);
    aia_segtable_free(&s->seg);
    free(s->p);
    free(s->plan);
    free(s->ring_rows);
    free(s->ring_time);
    free(s->recent);
    free(s->scratch);
    free(s->cap);
    free(s->fixed);
    free(s->samples);
    free(s->wrows);
    free(s->ranks);
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
    s->every = (size_t)aia_arg(ctx->args, "balance_every")->i;
    s->window = (size_t)aia_arg(ctx->args, "balance_window")->i;
    s->threshold = aia_arg(ctx->args, "balance_threshold")->d;
    s->most = (size_t)aia_arg(ctx->args, "balance_max")->i;
    s->async = AIA_HAS(struct aia_context, ctx, async) && ctx->async;
    s->worker_index = ctx->worker;
    if (s->balance && s->most < s->parts) {
        size_t most = s->most, parts = s->parts;
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
             !(s->p = calloc(n, sizeof *s->p)) ||
             !(s->plan = calloc(n, sizeof *s->plan)) ||
             !(s->ring_rows = calloc(n * s->window, sizeof(double))) ||
             !(s->ring_time = calloc(n * s->window, sizeof(double))) ||
             !(s->recent = calloc(n, sizeof *s->recent)) ||
             !(s->scratch = calloc(s->window, sizeof *s->scratch)) ||
             !(s->cap = calloc(n, sizeof *s->cap)) ||
             !(s->fixed = calloc(n, sizeof *s->fixed)) ||
             !(s->samples = calloc(n, sizeof *s->samples)) ||
             !(s->wrows = calloc(n, sizeof *s->wrows)) ||
             !(s->ranks = calloc(n, sizeof *s->ranks)))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
        for (size_t w = 0; s->p && w < n; w++) {
            s->p[w] = (double)s->parts;
            s->cap[w] = (double)s->most;
            s->ranks[w] = ctx->pool_ranks ? ctx->pool_ranks[w] : (int)w + 1;
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

/* Workers first..last (pool indexes) as "w" or "w-v", appended at *at
 * within end. */
static void put_range(char **at, char *end, int first, int last)
{
    int n = first == last
                ? snprintf(*at, (size_t)(end - *at), " %d", first)
                : snprintf(*at, (size_t)(end - *at), " %d-%d", first, last);
    if (n > 0)
        *at += (size_t)n < (size_t)(end - *at) ? (size_t)n
                                               : (size_t)(end - *at) - 1;
}

/* The assignment p as runs of workers' ranks: "1: ranks 1-75; 3: ranks
 * 76-100" in buf. */
static void describe(const struct sag *s, const double *p, char *buf,
                     size_t len)
{
    char *at = buf, *end = buf + len;
    buf[0] = '\0';
    /* each value of p, least first, with its workers */
    double v = 0;
    for (;;) {
        double next = INFINITY;
        for (int w = 0; w < s->nworkers; w++)
            if (p[w] > v && p[w] < next)
                next = p[w];
        if (!isfinite(next))
            break;
        v = next;
        int n = snprintf(at, (size_t)(end - at), "%s%g: ranks",
                         at == buf ? "" : "; ", v);
        if (n < 0 || n >= end - at)
            return;
        at += n;
        for (int w = 0; w < s->nworkers; w++) {
            if (p[w] != v ||
                (w > 0 && p[w - 1] == v && s->ranks[w] == s->ranks[w - 1] + 1))
                continue;
            int u = w;
            while (u + 1 < s->nworkers && p[u + 1] == v &&
                   s->ranks[u + 1] == s->ranks[u] + 1)
                u++;
            put_range(&at, end, s->ranks[w], s->ranks[u]);
        }
    }
}

static void note_assignment(const struct sag *s)
{
    char list[800], text[1000];
    describe(s, s->p, list, sizeof list);
    snprintf(text, sizeof text, "%.0f plans taken; sub-partitions %s", s->plans,
             list);
    aia_note(s->t.m.host, "balance", text);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median compute time and rows of worker w's window answers whose
 * rows are within 1% of n (scratch: window doubles); 0 with *t and *r
 * set, -1 when fewer than 3 are. */
static int median_near(const struct sag *s, int w, size_t have, double n,
                       double *scratch, double *t, double *r)
{
    const double *rows = s->ring_rows + (size_t)w * s->window;
    const double *time = s->ring_time + (size_t)w * s->window;
    size_t m = 0;
    double sum = 0;
    for (size_t k = 0; k < have; k++)
        if (fabs(rows[k] - n) <= 0.01 * n) {
            scratch[m++] = time[k];
            sum += rows[k];
        }
    if (m < 3)
        return -1;
    qsort(scratch, m, sizeof *scratch, by_value);
    *t = m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
    *r = sum / (double)m;
    return 0;
}

/* Coordinator: worker w's time per answer as o + b n, n the rows
 * answered, o a fixed cost of each answer (waking, scheduling) and b the
 * time per row, from medians (a worker descheduled a while on a loaded
 * node must not move the plan): the median time of its answers of the
 * latest size, and of the size before it when the window still holds
 * three, give the line through both; with one size o is that of the
 * latest such line (0 before one), remembered once the older size has
 * left the window.  0 with *o and *b set, or -1 while it has answered fewer
 * than five (or balance_window) since its p changed: the plan after a change
 * waits for times at the new size. */
static int model(struct sag *s, int w, double *o, double *b, double *split)
{
    size_t have =
        s->samples[w] < (double)s->window ? (size_t)s->samples[w] : s->window;
    if (s->recent[w] < (double)(s->window < 5 ? s->window : 5) ||
        !(s->wrows[w] > 0))
        return -1;
    const double *rows = s->ring_rows + (size_t)w * s->window;
    size_t last = (size_t)fmod(s->samples[w] - 1, (double)s->window);
    double n1 = rows[last], t1, r1, t2, r2, n2 = 0;
    if (median_near(s, w, have, n1, s->scratch, &t1, &r1) < 0)
        return -1;
    /* the latest answer of another size, newest first */
    for (size_t k = 1; k < have && n2 == 0; k++) {
        double n = rows[(last + s->window - k) % s->window];
        if (fabs(n - n1) > 0.01 * n1)
            n2 = n;
    }
    /* one size: the fixed cost of the latest fit through two */
    *o = s->fixed[w] < t1 ? s->fixed[w] : 0;
    *b = (t1 - *o) / r1;
    if (split)
        *split = 0;
    if (n2 > 0 && median_near(s, w, have, n2, s->scratch, &t2, &r2) == 0) {
        /* a finer split that did not cut the time per answer below
         * balance_threshold of the coarser one's did not pay: the
         * coarser one's count is the most this worker gets */
        if (split && r1 < r2 && t1 > s->threshold * t2)
            *split = floor(s->wrows[w] / r2 + 0.5);
        double slope = (t2 - t1) / (r2 - r1), fixed = t1 - slope * r1;
        if (slope > 0 && fixed >= 0) {
            *b = slope;
            *o = fixed;
            if (split) /* a plan's call: the fit is remembered */
                s->fixed[w] = fixed;
        }
    }
    return *b > 0 ? 0 : -1;
}

/* Coordinator: plan a new assignment, and take it when it predicts a
 * real gain.  Worker i's time per answer at p is o_i + b_i R_i / p; the
 * target T is the least of these at subpartitions (the fastest worker
 * keeps it), and p_i = b_i R_i / max(T - o_i, o_i), rounded: as near T as
 * can be, but never so fine that an answer's compute is below its fixed
 * cost (each further split would add a fixed cost per row cycle and save
 * less than one). */
static void rebalance(struct sag *s)
{
    double target = INFINITY, now = 0, then = 0, o, b, split;
    for (int w = 0; w < s->nworkers; w++)
        if (model(s, w, &o, &b, &split) == 0)
            target = fmin(target, o + b * s->wrows[w] / (double)s->parts);
    if (!isfinite(target))
        return;
    int changed = 0;
    for (int w = 0; w < s->nworkers; w++) {
        double p = s->p[w];
        if (model(s, w, &o, &b, &split) == 0) {
            if (split >= (double)s->parts && split < s->cap[w])
                s->cap[w] = split;
            double most = fmin(fmin((double)s->most, s->wrows[w]), s->cap[w]);
            double c = b * s->wrows[w];
            /* at most 4 times as many as now: times measured on a
             * loaded node are noisy, and a plan is checked by the next */
            p = fmin(fmin(fmax(floor(c / fmax(target - o, o) + 0.5),
                               (double)s->parts),
                          most),
                     4 * s->p[w]);
            /* a change of less than a half is noise, not worth a
             * restarted cycle */
            if (p < 1.5 * s->p[w] && p * 1.5 > s->p[w] && p > s->parts)
                p = s->p[w];
            now = fmax(now, o + c / s->p[w]);
            then = fmax(then, o + c / p);
        }
        s->plan[w] = p;
        changed |= p != s->p[w];
    }
    if (!changed || !(then < s->threshold * now))
        return;
    s->plans++;
    char list[800];
    size_t k = 0;
    list[0] = '\0';
    for (int w = 0; w < s->nworkers; w++)
        if (s->plan[w] != s->p[w] && k < sizeof list - 80) {
            int n;
            if (model(s, w, &o, &b, NULL) == 0)
                n = snprintf(list + k, sizeof list - k,
                             "%s%d: %g->%g (%.3g ms + %.3g us a row)",
                             k ? ", " : "", s->ranks[w], s->p[w], s->plan[w],
                             o * 1e3, b * 1e6);
            else
                n = snprintf(list + k, sizeof list - k, "%s%d: %g->%g",
                             k ? ", " : "", s->ranks[w], s->p[w], s->plan[w]);
            k += n > 0 && (size_t)n < sizeof list - k ? (size_t)n : 0;
        }
    if (k >= sizeof list - 80)
        snprintf(list + k, sizeof list - k, ", ...");
    const struct aia_host *host = s->t.m.host;
    if (host && host->log)
        host->log(
            host, AIA_LOG_INFO,
            "balance: plan %.0f: predicted time per answer %.4g s -> %.4g s "
            "(x%.3f); sub-partitions of rank %s",
            s->plans, now, then, then / now, list);
    for (int w = 0; w < s->nworkers; w++)
        if (s->plan[w] != s->p[w])
            s->recent[w] = 0;
    memcpy(s->p, s->plan, (size_t)s->nworkers * sizeof *s->p);
    note_assignment(s);
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
    s->wrows[w] = (double)info->rows;
    /* its time per row, into the worker's window */
    size_t k = (size_t)fmod(s->samples[w], (double)s->window);
    s->ring_rows[(size_t)w * s->window + k] = rows;
    s->ring_time[(size_t)w * s->window + k] = info->compute_s;
    s->samples[w]++;
    s->recent[w]++;
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
        memcpy(query + s->t.m.dim, s->p, (size_t)s->nworkers * sizeof *s->p);
        note_assignment(s);
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
    /* in async mode a round's worth of updates is one a worker: a plan,
     * O(nworkers), then costs O(1) an answer whatever the pool */
    if (++s->since_plan >=
        (double)s->every * (s->async ? (double)s->nworkers : 1)) {
        s->since_plan = 0;
        rebalance(s);
    }
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

/* Checkpoints with balance: x, the plans and the rounds since the last,
 * the assignment, each worker's rows, answers timed (all, and since its p
 * changed), the most parts a split paid for, the fixed cost of the
 * latest fit, and window (rows, then times), then the segments
 * (aia_segtable_save). */
static size_t balanced_len(const struct sag *s)
{
    size_t n = (size_t)s->nworkers;
    return s->t.m.dim + 2 + n * (6 + 2 * s->window) +
           aia_segtable_size(&s->seg);
}

static size_t state_size(void *state)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_size(state);
    return balanced_len(s) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_save(state, buf, err);
    size_t n = (size_t)s->nworkers, dim = s->t.m.dim;
    double *p = buf;
    memcpy(p, s->t.m.x, dim * sizeof *p);
    p += dim;
    *p++ = s->plans;
    *p++ = s->since_plan;
    memcpy(p, s->p, n * sizeof *p);
    p += n;
    memcpy(p, s->wrows, n * sizeof *p);
    p += n;
    memcpy(p, s->samples, n * sizeof *p);
    p += n;
    memcpy(p, s->recent, n * sizeof *p);
    p += n;
    memcpy(p, s->cap, n * sizeof *p);
    p += n;
    memcpy(p, s->fixed, n * sizeof *p);
    p += n;
    memcpy(p, s->ring_rows, n * s->window * sizeof *p);
    p += n * s->window;
    memcpy(p, s->ring_time, n * s->window * sizeof *p);
    p += n * s->window;
    aia_segtable_save(&s->seg, p);
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct sag *s = state;
    if (!s->balance)
        return aia_table_method_load(state, buf, len, err);
    size_t n = (size_t)s->nworkers, dim = s->t.m.dim;
    size_t fixed = dim + 2 + n * (6 + 2 * s->window);
    const double *p = buf, *q;
    if (len % sizeof(double) || len / sizeof(double) < fixed)
        return aia_seterr(err,
                          "a state of %zu bytes, not a balanced table's "
                          "(another job's checkpoint?)",
                          len);
    q = p + dim + 2;
    for (size_t w = 0; w < n; w++) {
        double parts = q[w], rows = q[n + w];
        if (!(parts >= (double)s->parts && parts <= (double)s->most &&
              parts == floor(parts) && rows >= 0 && rows < 9.007e15 &&
              (rows == 0 || parts <= rows)))
            return aia_seterr(err,
                              "worker %zu: %g sub-partitions of %g rows "
                              "(expected %zu to %zu, at most its rows): not "
                              "this job's balance",
                              w, parts, rows, s->parts, s->most);
    }
    struct aia_segtable seg = {0};
    size_t *bound = malloc(n * sizeof *bound);
    if (!bound || aia_segtable_init(&seg, s->nworkers, dim) < 0) {
        free(bound);
        aia_segtable_free(&seg);
        return aia_seterr(err, "out of memory");
    }
    for (size_t w = 0; w < n; w++)
        bound[w] = q[n + w] > 0 ? (size_t)q[n + w] : SIZE_MAX;
    size_t rest = len / sizeof(double) - fixed;
    const double *end = aia_segtable_load(&seg, p + fixed, rest, bound, err);
    free(bound);
    if (!end || end != p + fixed + rest) {
        if (end)
            aia_seterr(err, "%zu doubles past the balanced table",
                       (size_t)(p + fixed + rest - end));
        aia_segtable_free(&seg);
        return -1;
    }
    aia_segtable_free(&s->seg);
    s->seg = seg;
    memcpy(s->t.m.x, p, dim * sizeof *p);
    s->plans = p[dim];
    s->since_plan = p[dim + 1];
    memcpy(s->p, q, n * sizeof *p);
    memcpy(s->wrows, q + n, n * sizeof *p);
    memcpy(s->samples, q + 2 * n, n * sizeof *p);
    memcpy(s->recent, q + 3 * n, n * sizeof *p);
    memcpy(s->cap, q + 4 * n, n * sizeof *p);
    memcpy(s->fixed, q + 5 * n, n * sizeof *p);
    memcpy(s->ring_rows, q + 6 * n, n * s->window * sizeof *p);
    memcpy(s->ring_time, q + 6 * n + n * s->window, n * s->window * sizeof *p);
    note_assignment(s);
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
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
