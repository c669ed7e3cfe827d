/* algtest.h - a coordinator and its workers, driven by hand in one
 * process, for the unit tests of algorithm plugins. */
#ifndef AIARUN_ALGTEST_H
#define AIARUN_ALGTEST_H

#include <aiarun/aiarun.h>

#include "plugtest.h"

#define ALGTEST_MAX_WORKERS 8
/* Rounds of queries kept, so that an answer may be this stale at most. */
#define ALGTEST_HISTORY 64

struct algtest {
    const struct aia_algorithm_plugin *alg;
    const struct aia_problem_plugin *prob;
    int nworkers;
    size_t dim;
    size_t qlen, alen; /* lengths of a query and an answer */
    /* Index 0 is the coordinator, w + 1 is worker w. */
    void *ps[ALGTEST_MAX_WORKERS + 1];
    void *as[ALGTEST_MAX_WORKERS + 1];
    size_t rows[ALGTEST_MAX_WORKERS], total_rows;
    uint64_t answers[ALGTEST_MAX_WORKERS];
    uint64_t round; /* the current round; the first is 1 */
    double *hist;   /* the queries of the latest rounds */
    double *x;      /* the model, when the algorithm gives it apart */
    struct aia_problem_facts facts; /* L combined as the runtime does */
    /* Optional: the compute time the answers' info gives (0 when NULL) */
    double (*compute_s)(const struct algtest *t, int w, const double *answer);
};

/* Nonzero: the algorithms algtest_open creates are told the pool runs in
 * async mode (pool.mode: async, ctx.async). */
extern int algtest_async;

/* Open the problem on every rank of a pool of nworkers (block partition
 * with these weights, or equal parts for NULL), create the algorithm on
 * each, and have the coordinator write the first query.  Bails out of the
 * test run on any failure. */
void algtest_open(struct algtest *t, const struct plugtest *alg,
                  const struct plugtest *prob, int nworkers,
                  const double *weights, uint64_t seed);

void algtest_close(struct algtest *t);

/* A coordinator built by hand, for a test that sets what algtest_open
 * does not (the problem's facts, async) or sees create fail: prob opened
 * whole on rank 0 of a pool of nworkers (*ps, for the caller to close),
 * *ctx a context to create alg in, its arguments alg's.  Returns alg's
 * plugin; bails out on any failure. */
const struct aia_algorithm_plugin *
algtest_by_hand(const struct plugtest *alg, const struct plugtest *prob,
                int nworkers, uint64_t seed, struct aia_context *ctx,
                void **ps);

/* The query of round r, which must be one of the latest ALGTEST_HISTORY. */
const double *algtest_query(const struct algtest *t, uint64_t r);

/* Worker w (0-based) answers the query of round sent (at most the current
 * one) and the coordinator absorbs the answer in the current round. */
void algtest_answer(struct algtest *t, int w, uint64_t sent);

/* The coordinator absorbs a, given by hand, as worker w's answer to the
 * query of round sent, in the current round, w holding rows of
 * total_rows: absorb's status, its message in err. */
int algtest_give(struct algtest *t, int w, const double *a, size_t rows,
                 size_t total_rows, uint64_t sent, struct aia_error *err);

/* End the round: the coordinator writes the next query. */
void algtest_end_round(struct algtest *t);

/* Async order, as pool.mode: async runs it, for answers answers: every
 * answer is a round, its sender is sent the new query at once, and the
 * next to answer is drawn from the pool (a fixed LCG), so answers arrive
 * from iterates 0 to many updates old and the parts' order is
 * irregular. */
void algtest_run_async(struct algtest *t, int answers);

/* Rounds in which every worker answers, lagging ones the query of lag
 * rounds before (lagging: a worker index, or -1 for none). */
void algtest_rounds(struct algtest *t, int rounds, int lagging, int lag);

/* The coordinator's current model: its iterate, or the current query
 * when it gives none.  Valid until the next call. */
const double *algtest_model(struct algtest *t);

/* (loss - optimum) / optimum at the current model. */
double algtest_gap(struct algtest *t);

/* max_j |x_j - x*_j| at the current model. */
double algtest_distance(struct algtest *t);

/* Resume u, opened on the same job, from t: the coordinator's state saved
 * by t and loaded by u through the plugin's checkpoint functions, then
 * t's round, kept queries and workers' answer counts.  Returns the
 * state's size in bytes; bails out on any failure. */
size_t algtest_resume(struct algtest *u, const struct algtest *t);

/* u, opened on the same job, takes t's place in the run: the state in
 * buf (len bytes, as t's plugin saved it, or a part of it) loaded by u's
 * plugin, then t's round, kept queries and workers' answer counts.
 * Returns load's status, its message in err. */
int algtest_load(struct algtest *u, const struct algtest *t, const void *buf,
                 size_t len, struct aia_error *err);

/* Async mode (algtest_async set): t answers before times, u is resumed
 * from it (algtest_resume), then both answer after times.  Returns the
 * state's size in bytes. */
size_t algtest_resume_async(struct algtest *t, struct algtest *u, int before,
                            int after);

/* The coordinator's state of t as its plugin saves it now, in a buffer
 * of *len bytes to free; bails out on any failure. */
double *algtest_state(const struct algtest *t, size_t *len);

/* Whether the coordinators of t and u save the same state, to the byte. */
int algtest_same_state(const struct algtest *t, const struct algtest *u);

/* Tests (three TAP assertions) that a run of algorithm name with
 * parameters yaml on prob over nworkers (at least 4; worker 3 lags 2
 * rounds all along), resumed after 37 rounds through algtest_resume, goes
 * on exactly as the uninterrupted one 50 rounds later, and that the
 * plugin refuses a state of the wrong size and one ending in a negative
 * number. */
void algtest_resume_check(const char *name, const char *yaml,
                          const struct plugtest *prob, int nworkers);

/* max_j |a_j - b_j| */
double algtest_maxdiff(const double *a, const double *b, size_t n);

#endif
