/* alg.h - helpers for algorithm plugins: a worker's gradient (all its
 * rows or a mini-batch), versioned queries, and the coordinator's table
 * of the latest row-weighted gradients.
 *
 * Plugins link nothing but libc and libm, so these are static inline
 * functions in portable C, as in rows.h: a plugin that includes this
 * header gets its own copy of what it calls.  The gradient methods of
 * aiarun (gd, sgd, sag, rennala, ringmaster) use them.
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
#define AIA_STEP_PARAM(help_)                                              \
    {                                                                      \
        "step", AIA_DOUBLE, "auto", (help_), "auto", 1e-300, 1e300         \
    }

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
/* Versioned queries: the iterate and the number of steps behind it    */

/* A query of dim + 1 doubles: x, then its version. */
static inline void aia_versioned_query(double *query, const double *x,
                                       size_t dim, double version)
{
    memcpy(query, x, dim * sizeof *query);
    query[dim] = version;
}

/* A worker's answer to a versioned query: the gradient at it, then the
 * version it was computed at, so that the coordinator can tell how many
 * steps old it is whatever the runtime's rounds. */
static inline int aia_versioned_answer(struct aia_gradients *g,
                                       const double *query, double *answer,
                                       struct aia_error *err)
{
    answer[g->dim] = query[g->dim];
    return aia_gradients_take(g, query, answer, err);
}

/* ------------------------------------------------------------------ */
/* The coordinator's table of gradients                                */

/* The latest gradient of each of entries sources (workers, or parts of
 * workers) and the rows behind it; a step goes with their row-weighted
 * mean, the mean gradient over those rows. */
struct aia_table {
    size_t dim, entries;
    double *g;   /* entries x dim */
    double *n;   /* rows behind each entry, 0 before it is filled */
    double *sum; /* dim scratch: sum_e n_e g_e */
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
    t->sum = (double *)calloc(d, sizeof *t->sum);
    if (d <= SIZE_MAX / sizeof(double) / e)
        t->g = (double *)calloc(d * e, sizeof *t->g);
    return t->n && t->sum && t->g ? 0 : -1;
}

static inline void aia_table_free(struct aia_table *t)
{
    free(t->g);
    free(t->n);
    free(t->sum);
    memset(t, 0, sizeof *t);
}

/* Entry e becomes gradient g of rows rows. */
static inline void aia_table_put(struct aia_table *t, size_t e,
                                 const double *g, double rows)
{
    memcpy(t->g + e * t->dim, g, t->dim * sizeof *g);
    t->n[e] = rows;
}

/* x <- x - step * (sum_e n_e g_e) / (sum_e n_e) over the filled entries,
 * summed afresh in entry order (the same numbers whatever order the
 * answers came in, and no drift from a running sum).  With no entry
 * filled yet x stays.  Returns the rows summed. */
static inline double aia_table_step(struct aia_table *t, double *x,
                                    double step)
{
    double total = 0;
    memset(t->sum, 0, t->dim * sizeof *t->sum);
    for (size_t e = 0; e < t->entries; e++) {
        if (t->n[e] == 0)
            continue;
        const double *g = t->g + e * t->dim;
        for (size_t j = 0; j < t->dim; j++)
            t->sum[j] += t->n[e] * g[j];
        total += t->n[e];
    }
    if (total > 0)
        for (size_t j = 0; j < t->dim; j++)
            x[j] -= step * (t->sum[j] / total);
    return total;
}

/* Checkpoints: the gradients, then the rows, (dim + 1) * entries doubles
 * at p.  save returns the end of what it wrote, load the end of what it
 * read. */
static inline double *aia_table_save(const struct aia_table *t, double *p)
{
    memcpy(p, t->g, t->entries * t->dim * sizeof *p);
    p += t->entries * t->dim;
    memcpy(p, t->n, t->entries * sizeof *p);
    return p + t->entries;
}

static inline const double *aia_table_load(struct aia_table *t,
                                           const double *p)
{
    memcpy(t->g, p, t->entries * t->dim * sizeof *p);
    p += t->entries * t->dim;
    memcpy(t->n, p, t->entries * sizeof *p);
    return p + t->entries;
}

#ifdef __cplusplus
}
#endif

#endif
