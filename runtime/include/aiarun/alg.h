/* alg.h - helpers for algorithm plugins: a worker's gradient (all its
 * rows or a mini-batch), a gradient method's common state (step, iterate,
 * versioned queries) with its descriptor functions, and the
 * coordinator's table of the latest row-weighted gradients.
 *
 * Plugins link nothing but libc and libm, so these are static inline
 * functions in portable C, as in rows.h: a plugin that includes this
 * header gets its own copy of what it calls.  The gradient methods of
 * aiarun (gd, sgd, sag, rennala, ringmaster) are built on them.
 *
 *     #include <aiarun/aiarun.h>
 *     #include <aiarun/alg.h>
 */
#ifndef AIARUN_ALG_H
#define AIARUN_ALG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter table's entry of a step that may be "auto" (scale / L,
 * through aia_auto_step_named), with its help line. */
#define AIA_STEP_PARAM(help_)                                                  \
    {                                                                          \
        "step", AIA_DOUBLE, "auto", (help_), "auto", 1e-300, 1e300             \
    }

/* The parameter table's entry of a worker's batch (aia_gradients_open),
 * and those of the noise level behind aia_count_from_noise, what_ naming
 * the count ("S"). */
#define AIA_BATCH_PARAM                                                        \
    {                                                                          \
        "batch", AIA_INT, "0",                                                 \
            "rows per gradient, drawn with replacement (0: all the "           \
            "worker's rows)",                                                  \
            NULL, 0, 1e12                                                      \
    }
#define AIA_NOISE_PARAMS(what_)                                                \
    {"noise",                                                                  \
     AIA_DOUBLE,                                                               \
     "0",                                                                      \
     "sigma^2, the variance of an answer's gradient, for the default " what_   \
     " (0: unknown)",                                                          \
     NULL,                                                                     \
     0,                                                                        \
     1e300},                                                                   \
    {                                                                          \
        "epsilon", AIA_DOUBLE, "1e-6",                                         \
            "target squared gradient norm, for the default " what_, NULL,      \
            1e-300, 1e300                                                      \
    }

/* The parameter table's entries of such a count (aia_count_from_noise):
 * name_, whose help_ line says what it counts, then the noise level's,
 * what_ naming the count. */
#define AIA_COUNT_PARAMS(name_, help_, what_)                                  \
    {name_,                                                                    \
     AIA_INT,                                                                  \
     "0",                                                                      \
     help_ " (0: ceil(noise/epsilon) when noise is given, else the number "    \
           "of workers)",                                                      \
     NULL,                                                                     \
     0,                                                                        \
     1e9},                                                                     \
        AIA_NOISE_PARAMS(what_)

/* The count of a method that its theory sets from the noise level
 * (Rennala's gradients S, Ringmaster's max_delay R): the parameter name
 * when not 0; else ceil(noise / epsilon), noise = sigma^2 the variance of
 * an answer and epsilon the target squared gradient norm (parameters
 * "noise" and "epsilon"), when the noise is given; else the number of
 * workers. */
static inline uint64_t aia_count_from_noise(const struct aia_context *ctx,
                                            const char *name)
{
    const struct aia_value *v = aia_arg(ctx->args, name),
                           *noise = aia_arg(ctx->args, "noise"),
                           *eps = aia_arg(ctx->args, "epsilon");
    if (v && v->i > 0)
        return (uint64_t)v->i;
    if (noise && eps && noise->d > 0)
        return (uint64_t)fmax(1, ceil(noise->d / eps->d));
    return (uint64_t)(ctx->nworkers > 0 ? ctx->nworkers : 1);
}

/* ------------------------------------------------------------------ */
/* A rank's gradients                                                  */

/* The problem this rank holds and how a worker's answer is taken from
 * it: the mean gradient over all its rows (batch 0), or over batch rows
 * drawn with replacement from the rank's own random stream. */
struct aia_gradients {
    const struct aia_problem_plugin *prob;
    void *pstate;
    size_t dim;   /* the model's length */
    size_t rows;  /* rows this rank holds */
    size_t batch; /* rows per gradient, 0: all */
    size_t *idx;  /* worker: the batch's rows */
    struct aia_rng rng;
};

/* Start g on ctx's problem.  On a worker, one that holds no rows is
 * refused, and a batch's indices are allocated; stream (a constant of
 * the plugin's) and the rank pick the random stream.  0, or -1 with err
 * set (call aia_gradients_free either way). */
static inline int aia_gradients_open(struct aia_gradients *g,
                                     const struct aia_context *ctx,
                                     size_t batch, uint64_t stream,
                                     struct aia_error *err)
{
    memset(g, 0, sizeof *g);
    g->prob = ctx->problem;
    g->pstate = ctx->problem_state;
    g->dim = g->prob->dim(g->pstate);
    g->rows = g->prob->rows(g->pstate);
    g->batch = batch;
    aia_rng_seed(&g->rng, ctx->seed, stream + (uint64_t)ctx->rank);
    if (ctx->role == AIA_ROLE_COORDINATOR)
        return 0;
    if (g->rows == 0)
        return aia_seterr(err, "worker %d holds no rows of the problem",
                          ctx->rank);
    if (batch > 0 && !(g->idx = (size_t *)malloc(batch * sizeof *g->idx)))
        return aia_seterr(err, "out of memory");
    return 0;
}

static inline void aia_gradients_free(struct aia_gradients *g)
{
    free(g->idx);
    g->idx = NULL;
}

/* out = the gradient at x over all the rows, or over a fresh batch. */
static inline int aia_gradients_take(struct aia_gradients *g, const double *x,
                                     double *out, struct aia_error *err)
{
    if (g->batch == 0)
        return g->prob->gradient(g->pstate, x, NULL, 0, out, err);
    for (size_t i = 0; i < g->batch; i++)
        g->idx[i] = (size_t)aia_rng_below(&g->rng, g->rows);
    return g->prob->gradient(g->pstate, x, g->idx, g->batch, out, err);
}

/* ------------------------------------------------------------------ */
/* A gradient method's common state                                    */

/* The first member of a gradient method's state: its gradients, its step
 * and, on the coordinator, its iterate and the steps taken.  A versioned
 * method's queries and answers carry the version after the dim doubles,
 * so that the coordinator can tell how many steps old an answer's
 * iterate is, whatever the runtime's rounds. */
struct aia_method {
    struct aia_gradients grad;
    const struct aia_host *host; /* ctx->host, for the runtime's rules */
    size_t dim;
    int versioned;
    double step;
    double *x;      /* coordinator: the iterate, 0 at first */
    double version; /* coordinator: steps taken */
};

/* Start m on ctx: the step from the parameter "step" (auto: scale / L,
 * rule saying why, aia_auto_step_named), the gradients (batch, stream:
 * aia_gradients_open) and on the coordinator the iterate.  Sets the
 * message lengths to dim (+ 1 when versioned) both ways.  0, or -1 with
 * err set (call aia_method_close either way). */
static inline int
aia_method_open(struct aia_method *m, const struct aia_context *ctx,
                double scale, const char *rule, size_t batch, uint64_t stream,
                int versioned, struct aia_shape *shape, struct aia_error *err)
{
    memset(m, 0, sizeof *m);
    m->versioned = versioned;
    m->host = ctx->host;
    if (aia_auto_step_named(ctx, "step", scale, rule, &m->step, err) < 0 ||
        aia_gradients_open(&m->grad, ctx, batch, stream, err) < 0)
        return -1;
    m->dim = m->grad.dim;
    if (ctx->role == AIA_ROLE_COORDINATOR &&
        !(m->x = (double *)calloc(m->dim ? m->dim : 1, sizeof *m->x)))
        return aia_seterr(err, "out of memory");
    shape->query_len = shape->answer_len = m->dim + (versioned ? 1 : 0);
    return 0;
}

static inline void aia_method_close(struct aia_method *m)
{
    aia_gradients_free(&m->grad);
    free(m->x);
    m->x = NULL;
}

/* A zeroed state of size bytes whose first member is a struct aia_method,
 * opened by aia_method_open with the batch of the parameter "batch" (0
 * when the plugin has none): the state, or NULL with err set and nothing
 * left allocated.  aia_method_destroy frees it: the descriptor's destroy
 * where the state holds nothing else. */
static inline void aia_method_destroy(void *state)
{
    if (!state)
        return;
    aia_method_close((struct aia_method *)state);
    free(state);
}

static inline void *aia_method_create(const struct aia_context *ctx,
                                      size_t size, double scale,
                                      const char *rule, uint64_t stream,
                                      int versioned, struct aia_shape *shape,
                                      struct aia_error *err)
{
    const struct aia_value *batch = aia_arg(ctx->args, "batch");
    struct aia_method *m = (struct aia_method *)calloc(1, size);
    if (!m) {
        aia_seterr(err, "out of memory");
        return NULL;
    }
    if (aia_method_open(m, ctx, scale, rule, batch ? (size_t)batch->i : 0,
                        stream, versioned, shape, err) < 0) {
        aia_method_destroy(m);
        return NULL;
    }
    return m;
}

/* Descriptor functions for a state whose first member is a struct
 * aia_method.  init (and query, for a method whose step is taken in
 * absorb): the iterate (and its version).  worker: the gradient at the
 * query (and the query's version).  iterate: the iterate. */
static inline int aia_method_init(void *state, double *query,
                                  struct aia_error *err)
{
    struct aia_method *m = (struct aia_method *)state;
    (void)err;
    memcpy(query, m->x, m->dim * sizeof *query);
    if (m->versioned)
        query[m->dim] = m->version;
    return 0;
}

static inline int aia_method_worker(void *state, const double *query,
                                    double *answer, const struct aia_step *step,
                                    struct aia_error *err)
{
    struct aia_method *m = (struct aia_method *)state;
    (void)step;
    if (m->versioned)
        answer[m->dim] = query[m->dim];
    return aia_gradients_take(&m->grad, query, answer, err);
}

static inline int aia_method_iterate(void *state, double *x,
                                     struct aia_error *err)
{
    struct aia_method *m = (struct aia_method *)state;
    (void)err;
    memcpy(x, m->x, m->dim * sizeof *x);
    return 0;
}

/* A checkpoint's load refuses a state of another size than its own
 * state_size: 0 when len is want, else -1 with err naming both. */
static inline int aia_state_len(size_t len, size_t want, struct aia_error *err)
{
    if (len == want)
        return 0;
    return aia_seterr(err, "a state of %zu bytes, expected %zu", len, want);
}

/* A checkpoint's values that must be finite (an iterate, gradients),
 * checked at load before any is used: 0, or -1 with err naming what and
 * the first that is not. */
static inline int aia_state_finite(const double *p, size_t n, const char *what,
                                   struct aia_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i]))
            return aia_seterr(err,
                              "damaged: value %zu of its %s is %g: not "
                              "finite",
                              i, what, p[i]);
    return 0;
}

/* A load that takes its state with or without the running sums at its
 * end (a state of bare bytes, written before the sums were saved, is
 * summed afresh): 1 when len is full and the sums are there, 0 when len
 * is bare (or bare is full), else -1 with err naming full. */
static inline int aia_state_len_sums(size_t len, size_t full, size_t bare,
                                     struct aia_error *err)
{
    if (len == full)
        return bare < full;
    if (len == bare)
        return 0;
    return aia_state_len(len, full, err);
}

/* Checkpoints of a state whose first member is a struct aia_method and
 * that holds nothing else to save: the iterate, then its version when
 * versioned (an answer's delay counts from it, so it goes on where it
 * was).  load refuses another size or a version that is no count of
 * steps, and changes nothing then. */
static inline size_t aia_method_size(void *state)
{
    const struct aia_method *m = (struct aia_method *)state;
    return (m->dim + (m->versioned ? 1 : 0)) * sizeof(double);
}

static inline int aia_method_save(void *state, void *buf, struct aia_error *err)
{
    const struct aia_method *m = (struct aia_method *)state;
    double *p = (double *)buf;
    (void)err;
    memcpy(p, m->x, m->dim * sizeof *p);
    if (m->versioned)
        p[m->dim] = m->version;
    return 0;
}

static inline int aia_method_load(void *state, const void *buf, size_t len,
                                  struct aia_error *err)
{
    struct aia_method *m = (struct aia_method *)state;
    const double *p = (const double *)buf;
    if (aia_state_len(len, aia_method_size(state), err) < 0)
        return -1;
    if (m->versioned && !(p[m->dim] >= 0 && p[m->dim] < AIA_EXACT_BELOW &&
                          p[m->dim] == floor(p[m->dim])))
        return aia_seterr(err, "version %g: not a count of steps", p[m->dim]);
    if (aia_state_finite(p, m->dim, "iterate", err) < 0)
        return -1;
    memcpy(m->x, p, m->dim * sizeof *p);
    if (m->versioned)
        m->version = p[m->dim];
    return 0;
}

/* The weight of an answer's step: its worker's share m_i / m of the rows
 * times the n workers, 1 on even parts, so that a round of answers of
 * uneven parts adds up to the whole problem's gradient; 1 when the total
 * is unknown. */
static inline double aia_row_weight(const struct aia_answer_info *info,
                                    int nworkers)
{
    if (info->total_rows == 0)
        return 1;
    return (double)nworkers * (double)info->rows / (double)info->total_rows;
}

/* ------------------------------------------------------------------ */
/* The coordinator's table of gradients                                */

/* Sums over many vectors go this many values at a time (8 KB of
 * doubles): the block of the result stays in the first-level cache while
 * every vector adds to it. */
#define AIA_SUM_BLOCK 1024

/* A loop over independent values that the compiler may vectorize, where
 * the plugin is built with -fopenmp-simd -DAIA_OMP_SIMD=1 (GCC and clang;
 * no OpenMP runtime): each value is computed as the plain loop computes
 * it, so the results do not change. */
#ifdef AIA_OMP_SIMD
#define AIA_SIMD _Pragma("omp simd")
/* The same for a loop that also adds into the local variable var, which
 * is then found in partial sums, in another order: only for a sum that is
 * no value of the model (a table's mass only says when to sum afresh; a
 * tie at that threshold could move a sum afresh by an answer). */
#define AIA_PRAGMA_(text) _Pragma(#text)
#define AIA_SIMD_SUM(var) AIA_PRAGMA_(omp simd reduction(+ : var))
#else
#define AIA_SIMD
#define AIA_SIMD_SUM(var)
#endif

/* The rows of a table's entries from the two latest steps stored, for
 * the age factor: by parity of the step, rows[i] for step when[i].  Kept
 * by aia_table and aia_segtable (segtable.h) alike. */
struct aia_recent {
    uint64_t when[2];
    double rows[2];
};

/* Rows of step when leave (sign -1) or join (+1) the two latest steps'.
 * A step older than the one kept in its slot is at least two behind the
 * latest, and no longer recent. */
static inline void aia_recent_move(struct aia_recent *r, uint64_t when,
                                   double rows, int sign)
{
    int i = (int)(when & 1);
    if (sign > 0 && when > r->when[i]) {
        r->when[i] = when;
        r->rows[i] = 0;
    }
    if (when == r->when[i])
        r->rows[i] += sign * rows;
}

/* Start again from top, the latest step stored, and the one before it,
 * with no rows: a re-sum then moves every entry in. */
static inline void aia_recent_restart(struct aia_recent *r, uint64_t top)
{
    r->when[top & 1] = top;
    r->when[(top + 1) & 1] = top > 0 ? top - 1 : 0;
    r->rows[0] = r->rows[1] = 0;
}

/* The rows at most one step older than now. */
static inline double aia_recent_rows(const struct aia_recent *r, uint64_t now)
{
    double rows = 0;
    for (int i = 0; i < 2; i++)
        if (r->when[i] + 1 >= now)
            rows += r->rows[i];
    return rows;
}

/* The latest gradient of each of entries sources (workers, or parts of
 * workers), the rows behind it and the step (round; update in async mode)
 * of the query it answered; a step goes with their row-weighted mean, the
 * mean gradient over those rows.  A table whose mean is read after every
 * answer keeps it in running sums (aia_table_add). */
struct aia_table {
    size_t dim, entries;
    double *g;      /* entries x dim */
    double *n;      /* rows behind each entry, 0 before it is filled */
    uint64_t *when; /* step of the query behind each entry */
    uint64_t now;   /* the latest step an answer came in (aia_table_heard) */
    double *sum;    /* dim: sum_e n_e g_e (scratch of aia_table_step) */
    /* running sums, kept by aia_table_add and aia_table_resum only */
    double total;    /* sum_e n_e */
    double when_sum; /* sum_e n_e when_e (integers, exact below 2^53) */
    size_t since;    /* aia_table_add calls since the last aia_table_resum */
    double big;      /* the largest |n g_j| added or taken since then */
    double mass;     /* sum_e sum_j |n_e g_ej|, kept by difference */
    struct aia_recent recent; /* rows of the two latest steps stored */
    int running; /* aia_table_store keeps the running sums (async mode) */
};

/* 0, or -1 when memory runs out (call aia_table_free either way). */
static inline int aia_table_init(struct aia_table *t, size_t entries,
                                 size_t dim)
{
    size_t d = dim ? dim : 1, e = entries ? entries : 1;
    memset(t, 0, sizeof *t);
    t->dim = dim;
    t->entries = entries;
    t->n = (double *)calloc(e, sizeof *t->n);
    t->when = (uint64_t *)calloc(e, sizeof *t->when);
    t->sum = (double *)calloc(d, sizeof *t->sum);
    if (d <= SIZE_MAX / sizeof(double) / e)
        t->g = (double *)calloc(d * e, sizeof *t->g);
    return t->n && t->when && t->sum && t->g ? 0 : -1;
}

static inline void aia_table_free(struct aia_table *t)
{
    free(t->g);
    free(t->n);
    free(t->when);
    free(t->sum);
    memset(t, 0, sizeof *t);
}

/* Entry e becomes gradient g of rows rows, the answer to the query of
 * step sent. */
static inline void aia_table_put(struct aia_table *t, size_t e, const double *g,
                                 double rows, uint64_t sent)
{
    memcpy(t->g + e * t->dim, g, t->dim * sizeof *g);
    t->n[e] = rows;
    t->when[e] = sent;
}

/* An answer came in at step now (its info->round), whether it enters the
 * table or not: the entries' ages count from the latest. */
static inline void aia_table_heard(struct aia_table *t, uint64_t now)
{
    if (now > t->now)
        t->now = now;
}

/* The running sums (sum, total, when_sum and the recent rows) summed
 * afresh in entry order from the entries. */
static inline void aia_table_resum(struct aia_table *t)
{
    double *sum = t->sum, mass = 0;
    memset(sum, 0, t->dim * sizeof *sum);
    t->total = t->when_sum = 0;
    for (size_t e = 0; e < t->entries; e++) {
        const double *g = t->g + e * t->dim;
        const double n = t->n[e];
        if (n == 0)
            continue;
        AIA_SIMD_SUM(mass)
        for (size_t j = 0; j < t->dim; j++) {
            sum[j] += n * g[j];
            mass += fabs(n * g[j]);
        }
        t->total += n;
        t->when_sum += n * (double)t->when[e];
    }
    /* the latest step stored and the one before it, then their rows */
    uint64_t top = 0;
    for (size_t e = 0; e < t->entries; e++)
        if (t->n[e] > 0 && t->when[e] > top)
            top = t->when[e];
    aia_recent_restart(&t->recent, top);
    for (size_t e = 0; e < t->entries; e++)
        if (t->n[e] > 0)
            aia_recent_move(&t->recent, t->when[e], t->n[e], 1);
    t->mass = mass;
    t->since = 0;
    t->big = 0;
}

/* A running table sums afresh once every this many answers, or every
 * entries answers for a larger table: a table of few entries would
 * otherwise sum afresh at nearly every answer (bench/ANALYSIS.md, "A
 * period of at least 16 answers", has what that cost). */
#define AIA_TABLE_RESUM_MIN 16

/* The answers between two sums afresh of a running table of n entries
 * (or segments): n, at least AIA_TABLE_RESUM_MIN. */
static inline size_t aia_resum_period(size_t n)
{
    return n > AIA_TABLE_RESUM_MIN ? n : AIA_TABLE_RESUM_MIN;
}

static inline size_t aia_table_period(const struct aia_table *t)
{
    return aia_resum_period(t->entries);
}

/* aia_table_put, for a table whose mean sum / total is read after every
 * answer: the running sums change by the entry's difference, so that an
 * answer costs O(dim) whatever the entries, and are summed afresh once
 * every aia_table_period calls, so that rounding does not drift.  Such a
 * table is not stepped with aia_table_step, whose scratch is sum. */
static inline void aia_table_add(struct aia_table *t, size_t e, const double *g,
                                 double rows, uint64_t sent)
{
    double *old = t->g + e * t->dim;
    double *sum = t->sum, n = t->n[e], big = t->big, mass = 0;
    /* one pass: the entry is replaced as it is read (aia_table_put's
     * copy, fused), and the loop left plain: vectorised with big's
     * largest it is slower (bench/coordcost's table-add), being bound by
     * memory */
    for (size_t j = 0; j < t->dim; j++) {
        double gj = g[j], in = rows * gj, out = n * old[j];
        double a = fabs(in), b = fabs(out), m = a > b ? a : b;
        sum[j] += in - out;
        old[j] = gj;
        big = m > big ? m : big; /* fmax, without a libm call a value */
        mass += a - b;
    }
    t->big = big;
    t->mass += mass;
    t->total += rows - n;
    t->when_sum += rows * (double)sent - n * (double)t->when[e];
    if (n > 0)
        aia_recent_move(&t->recent, t->when[e], n, -1);
    if (rows > 0)
        aia_recent_move(&t->recent, sent, rows, 1);
    t->n[e] = rows;
    t->when[e] = sent;
    /* each term's rounding stays in the sums until they are summed
     * afresh: once a period of answers, and at once when the table's
     * whole mass has shrunk a thousandfold below one term added or taken
     * since (large gradients replaced by small ones), whose rounding
     * would then outweigh what the table holds */
    if (++t->since >= aia_table_period(t) || big > 1024 * t->mass)
        aia_table_resum(t);
}

/* The entries' row-weighted mean age from the running sums: now (the
 * latest step heard) less their mean step; 0 while none is filled. */
static inline double aia_table_mean_age(const struct aia_table *t)
{
    if (!(t->total > 0))
        return 0;
    return (double)t->now - t->when_sum / t->total;
}

/* x <- x - step * (sum_e n_e g_e) / (sum_e n_e) over the filled entries,
 * summed afresh in entry order (the same numbers whatever order the
 * answers came in, and no drift from a running sum).  The sum is formed
 * AIA_SUM_BLOCK values at a time, every entry adding to a block that stays
 * in cache, and x stepped with it at once: the table is read once and x
 * and the sum written once, not the sum once an entry.  With no entry
 * filled yet x stays.  Returns the rows summed. */
static inline double aia_table_step(struct aia_table *t, double *x, double step)
{
    double total = 0;
    for (size_t e = 0; e < t->entries; e++)
        total += t->n[e];
    if (!(total > 0))
        return 0;
    for (size_t j0 = 0; j0 < t->dim; j0 += AIA_SUM_BLOCK) {
        size_t j1 = t->dim - j0 < AIA_SUM_BLOCK ? t->dim : j0 + AIA_SUM_BLOCK;
        double *sum = t->sum;
        memset(sum + j0, 0, (j1 - j0) * sizeof *sum);
        for (size_t e = 0; e < t->entries; e++) {
            if (t->n[e] == 0)
                continue;
            const double *g = t->g + e * t->dim;
            const double n = t->n[e];
            AIA_SIMD
            for (size_t j = j0; j < j1; j++)
                sum[j] += n * g[j];
        }
        AIA_SIMD
        for (size_t j = j0; j < j1; j++)
            x[j] -= step * (sum[j] / total);
    }
    return total;
}

/* The factor of a table step for the age of its entries: entry e was
 * computed from the query of step when[e] (a round; an update in async
 * mode), now is the latest step heard.  A table of stale gradients steps
 * along a delayed gradient, and x' = -h x(t - a), h = step L, oscillates
 * and grows once h (2a + 1) passes about pi.  The factor is 1 while
 * entries at most one step old hold more than half the rows: x' = -h (w
 * x(t) + (1 - w) x(t - d)) is stable whatever the delay d for w > 1/2 and
 * h <= 1 (every worker fresh, or a persistent straggler among fresh
 * ones).  Otherwise it is min(1, most / a), a the entries' row-weighted
 * mean age, so that h (2a + 1) stays below about 3: most = 1 / h (gd's
 * 1/L: 1; SAG's 1/(2L): 2).  The rule is the runtime's (host->age_factor),
 * so that a better one reaches plugins already built; 1 when the host has
 * none. */
static inline double aia_table_age_factor(const struct aia_host *host,
                                          const struct aia_table *t,
                                          double most)
{
    if (!host || !AIA_HAS(struct aia_host, host, age_factor) ||
        !host->age_factor)
        return 1.0;
    double rows = 0, age = 0, recent = 0;
    if (t->running) { /* from the running sums: O(1) an answer */
        rows = t->total;
        age = rows * (double)t->now - t->when_sum;
        recent = aia_recent_rows(&t->recent, t->now);
    } else {
        for (size_t e = 0; e < t->entries; e++) {
            uint64_t d = t->now > t->when[e] ? t->now - t->when[e] : 0;
            rows += t->n[e];
            age += t->n[e] * (double)d;
            if (d <= 1)
                recent += t->n[e];
        }
    }
    return host->age_factor(host, rows, age, recent, most);
}

/* Entry e becomes gradient g of rows rows from the query of step sent:
 * through the running sums in a running table (aia_table_add), else
 * stored for the next aia_table_step. */
static inline void aia_table_store(struct aia_table *t, size_t e,
                                   const double *g, double rows,
                                   uint64_t sent)
{
    if (t->running)
        aia_table_add(t, e, g, rows, sent);
    else
        aia_table_put(t, e, g, rows, sent);
}

/* Checkpoints: the gradients, the rows, then the steps of their queries
 * (doubles, exact below 2^53), (dim + 2) * entries doubles at p.  save
 * returns the end of what it wrote.  aia_table_bad is the first entry
 * whose rows or step are not a table's (entries when all are);
 * aia_table_load, once none is, reads them back, taking the latest step
 * among them for now, and returns the end of what it read;
 * aia_table_restore does both, and sums the running sums afresh. */
static inline double *aia_table_save(const struct aia_table *t, double *p)
{
    memcpy(p, t->g, t->entries * t->dim * sizeof *p);
    p += t->entries * t->dim;
    memcpy(p, t->n, t->entries * sizeof *p);
    p += t->entries;
    for (size_t e = 0; e < t->entries; e++)
        p[e] = (double)t->when[e];
    return p + t->entries;
}

static inline size_t aia_table_bad(const struct aia_table *t, const double *p,
                                   double *rows, double *sent)
{
    const double *n = p + t->entries * t->dim, *when = n + t->entries;
    const double exact = AIA_EXACT_BELOW;
    for (size_t e = 0; e < t->entries; e++)
        if (!(n[e] >= 0 && isfinite(n[e]) && when[e] >= 0 && when[e] < exact &&
              when[e] == floor(when[e]))) {
            *rows = n[e];
            *sent = when[e];
            return e;
        }
    return t->entries;
}

static inline const double *aia_table_load(struct aia_table *t, const double *p)
{
    memcpy(t->g, p, t->entries * t->dim * sizeof *p);
    p += t->entries * t->dim;
    memcpy(t->n, p, t->entries * sizeof *p);
    p += t->entries;
    t->now = 0;
    for (size_t e = 0; e < t->entries; e++) {
        t->when[e] = (uint64_t)p[e];
        /* the step the table was saved at, as near as it tells */
        aia_table_heard(t, t->when[e]);
    }
    return p + t->entries;
}

/* The end of what it read, or NULL with err naming the bad entry and the
 * table unchanged. */
static inline const double *
aia_table_restore(struct aia_table *t, const double *p, struct aia_error *err)
{
    double rows, sent;
    size_t e = aia_table_bad(t, p, &rows, &sent);
    if (e < t->entries) {
        aia_seterr(err, "table entry %zu: %g rows from round %g, not a table's",
                   e, rows, sent);
        return NULL;
    }
    if (aia_state_finite(p, t->entries * t->dim, "table's gradients", err) < 0)
        return NULL;
    p = aia_table_load(t, p);
    aia_table_resum(t);
    return p;
}

/* The running sums a table keeps by difference (aia_table here, sag's
 * aia_segtable of row segments), through pointers, for checkpoints that
 * hold them so that a resumed run goes on with the same bits (summed
 * afresh at load, they would differ from the saved run's in their last
 * bits until its next sum afresh): the sum (dim doubles), then total,
 * when_sum, since, now, and the two recent steps and their rows,
 * AIA_RUNNING_SCALARS doubles.  aia_running_save returns the end of what
 * it wrote; aia_running_bad says what in saved sums p is not the running
 * sums of a table whose rows and rows x steps sum to total and steps,
 * whose latest step stored is top and whose period is period (NULL when
 * nothing is); aia_running_load reads them back. */
#define AIA_RUNNING_SCALARS 8

struct aia_running {
    double *sum;
    size_t dim;
    double *total, *when_sum;
    size_t *since;
    uint64_t *now;
    struct aia_recent *recent;
};

static inline double *aia_running_save(const struct aia_running *r, double *p)
{
    memcpy(p, r->sum, r->dim * sizeof *p);
    p += r->dim;
    p[0] = *r->total;
    p[1] = *r->when_sum;
    p[2] = (double)*r->since;
    p[3] = (double)*r->now;
    p[4] = (double)r->recent->when[0];
    p[5] = (double)r->recent->when[1];
    p[6] = r->recent->rows[0];
    p[7] = r->recent->rows[1];
    return p + AIA_RUNNING_SCALARS;
}

/* Whether saved running sums a and the sums b formed afresh from the
 * saved entries differ by more than the rounding between two sums
 * afresh. */
static inline int aia_sums_apart(double a, double b)
{
    return !(fabs(a - b) <= 1e-9 * fabs(b));
}

static inline const char *aia_running_bad(const struct aia_running *r,
                                          const double *p, double total,
                                          double steps, double top,
                                          size_t period)
{
    const double exact = AIA_EXACT_BELOW;
    const double *q = p + r->dim;
    for (size_t j = 0; j < r->dim; j++)
        if (!isfinite(p[j]))
            return "a sum that is not finite";
    if (aia_sums_apart(q[0], total) || aia_sums_apart(q[1], steps))
        return "rows or steps that are not the table's sums";
    if (!(q[2] >= 0 && q[2] < (double)period && q[2] == floor(q[2])))
        return "a count of answers past its period";
    for (int i = 3; i < 6; i++)
        if (!(q[i] >= 0 && q[i] < exact && q[i] == floor(q[i])))
            return "a step that is no count of steps";
    if (!(q[3] >= top && q[4] <= q[3] && q[5] <= q[3]))
        return "a latest step before a step stored";
    if (!(q[6] >= 0 && isfinite(q[6]) && q[7] >= 0 && isfinite(q[7])))
        return "recent rows that are no count";
    return NULL;
}

static inline void aia_running_load(const struct aia_running *r,
                                    const double *p)
{
    memcpy(r->sum, p, r->dim * sizeof *p);
    p += r->dim;
    *r->total = p[0];
    *r->when_sum = p[1];
    *r->since = (size_t)p[2];
    *r->now = (uint64_t)p[3];
    r->recent->when[0] = (uint64_t)p[4];
    r->recent->when[1] = (uint64_t)p[5];
    r->recent->rows[0] = p[6];
    r->recent->rows[1] = p[7];
}

/* A running table's sums in a checkpoint, after its entries: its
 * running sums (aia_running), then its mass and big.
 * aia_table_sums_len doubles (none for a table that is not running);
 * aia_table_sums_bad checks them against the entries' saved rows n and
 * steps when (entries doubles each); aia_table_load_sums reads them
 * back, over what aia_table_restore summed afresh. */
#define AIA_TABLE_SUMS_SCALARS (AIA_RUNNING_SCALARS + 2)

static inline struct aia_running aia_table_running(const struct aia_table *t)
{
    struct aia_table *m = (struct aia_table *)t;
    struct aia_running r = {m->sum,   m->dim,  &m->total, &m->when_sum,
                            &m->since, &m->now, &m->recent};
    return r;
}

static inline size_t aia_table_sums_len(const struct aia_table *t)
{
    return t->running ? t->dim + AIA_TABLE_SUMS_SCALARS : 0;
}

static inline double *aia_table_save_sums(const struct aia_table *t, double *p)
{
    if (!t->running)
        return p;
    struct aia_running r = aia_table_running(t);
    p = aia_running_save(&r, p);
    p[0] = t->mass;
    p[1] = t->big;
    return p + 2;
}

static inline const char *aia_table_sums_bad(const struct aia_table *t,
                                             const double *n,
                                             const double *when,
                                             const double *p)
{
    const double *q = p + t->dim + AIA_RUNNING_SCALARS;
    double total = 0, steps = 0, top = 0;
    for (size_t e = 0; e < t->entries; e++) {
        total += n[e];
        steps += n[e] * when[e];
        top = n[e] > 0 && when[e] > top ? when[e] : top;
    }
    struct aia_running r = aia_table_running(t);
    const char *bad =
        aia_running_bad(&r, p, total, steps, top, aia_table_period(t));
    if (bad)
        return bad;
    if (!(q[0] >= 0 && isfinite(q[0]) && q[1] >= 0 && isfinite(q[1])))
        return "a mass that is not one";
    return NULL;
}

/* aia_table_sums_bad on saved sums p, the table saved at q before them
 * (aia_table_save: its entries' rows and steps are read there): 0, or
 * -1 with err saying what is wrong. */
static inline int aia_table_sums_check(const struct aia_table *t,
                                       const double *q, const double *p,
                                       struct aia_error *err)
{
    const double *n = q + t->entries * t->dim;
    const char *bad = aia_table_sums_bad(t, n, n + t->entries, p);
    return bad ? aia_seterr(err, "the table's running sums: %s", bad) : 0;
}

static inline void aia_table_load_sums(struct aia_table *t, const double *p)
{
    struct aia_running r = aia_table_running(t);
    aia_running_load(&r, p);
    p += t->dim + AIA_RUNNING_SCALARS;
    t->mass = p[0];
    t->big = p[1];
}

/* ------------------------------------------------------------------ */
/* A method that steps along its table once a round                    */

/* The first member of the state of a method whose coordinator keeps a
 * table of the latest gradients and at the end of every round steps
 * along their mean, its step times the table's age factor (gd, sag). */
struct aia_table_method {
    struct aia_method m;
    struct aia_table table; /* coordinator */
    double most;            /* the age factor's: 1 / (step L) */
};

/* Open tm: the step (aia_method_open's scale / L and rule; no batch, no
 * version), most, and on the coordinator a table of entries gradients.
 * 0, or -1 with err set (call aia_table_method_close either way). */
static inline int aia_table_method_open(struct aia_table_method *tm,
                                        const struct aia_context *ctx,
                                        double scale, const char *rule,
                                        double most, size_t entries,
                                        struct aia_shape *shape,
                                        struct aia_error *err)
{
    memset(&tm->table, 0, sizeof tm->table);
    tm->most = most;
    if (aia_method_open(&tm->m, ctx, scale, rule, 0, 0, 0, shape, err) < 0)
        return -1;
    if (ctx->role == AIA_ROLE_COORDINATOR &&
        aia_table_init(&tm->table, entries, tm->m.dim) < 0)
        return aia_seterr(err,
                          "out of memory for a table of %zu gradients of "
                          "dimension %zu",
                          entries, tm->m.dim);
    /* in async mode every answer is followed by a query: the mean is kept
     * in running sums, O(dim) an answer; rounds sum it afresh, once a
     * round, the same numbers whatever the answers' order */
    tm->table.running = AIA_HAS(struct aia_context, ctx, async) && ctx->async;
    return 0;
}

static inline void aia_table_method_close(struct aia_table_method *tm)
{
    aia_method_close(&tm->m);
    aia_table_free(&tm->table);
}

/* Descriptor functions for a state whose first member is a struct
 * aia_table_method.  query: a step along the table's mean (none while it
 * is empty), then the iterate.  Checkpoints: the iterate, then the table
 * (aia_table_save), (dim + entries (dim + 2)) doubles, then a running
 * table's sums (aia_table_save_sums); load also takes a state without
 * the sums (summed afresh then), refuses another size, a bad entry or
 * bad sums, and changes nothing then. */
static inline int aia_table_method_query(void *state, double *query,
                                         struct aia_error *err)
{
    struct aia_table_method *tm = (struct aia_table_method *)state;
    struct aia_table *t = &tm->table;
    double age = aia_table_age_factor(tm->m.host, t, tm->most);
    if (!t->running) {
        aia_table_step(t, tm->m.x, tm->m.step * age);
    } else if (t->total > 0) {
        const double h = tm->m.step * age;
        AIA_SIMD
        for (size_t j = 0; j < t->dim; j++)
            tm->m.x[j] -= h * (t->sum[j] / t->total);
    }
    return aia_method_init(state, query, err);
}

static inline size_t aia_table_method_size(void *state)
{
    const struct aia_table_method *tm = (struct aia_table_method *)state;
    size_t d = tm->m.dim, e = tm->table.entries;
    return (d + e * (d + 2) + aia_table_sums_len(&tm->table)) * sizeof(double);
}

static inline int aia_table_method_save(void *state, void *buf,
                                        struct aia_error *err)
{
    const struct aia_table_method *tm = (struct aia_table_method *)state;
    double *p = (double *)buf;
    (void)err;
    memcpy(p, tm->m.x, tm->m.dim * sizeof *p);
    aia_table_save_sums(&tm->table, aia_table_save(&tm->table, p + tm->m.dim));
    return 0;
}

static inline int aia_table_method_load(void *state, const void *buf,
                                        size_t len, struct aia_error *err)
{
    struct aia_table_method *tm = (struct aia_table_method *)state;
    struct aia_table *t = &tm->table;
    const double *p = (const double *)buf, *sums;
    size_t full = aia_table_method_size(state);
    size_t bare = full - aia_table_sums_len(t) * sizeof(double);
    int with = aia_state_len_sums(len, full, bare, err);
    if (with < 0)
        return -1;
    sums = p + tm->m.dim + t->entries * (t->dim + 2);
    if (aia_state_finite(p, tm->m.dim, "iterate", err) < 0)
        return -1;
    if (with && aia_table_sums_check(t, p + tm->m.dim, sums, err) < 0)
        return -1;
    if (!aia_table_restore(t, p + tm->m.dim, err))
        return -1;
    if (with)
        aia_table_load_sums(t, sums);
    memcpy(tm->m.x, p, tm->m.dim * sizeof *p);
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
