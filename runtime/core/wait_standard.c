/* wait_standard.c - the built-in wait condition.
 *
 * The round may end when
 *
 *     (enough fresh answers and every `include` worker fresh
 *      or `timeout_ms` passed with at least one answer)
 *     and no busy worker would become more than `staleness` rounds stale,
 *
 * and, with `grace`, once that first held after T seconds, it ends at
 * T * (1 + grace) so that answers about to come are collected too
 * (MPIAsyncPools' latency_tol), or earlier when every live worker has
 * answered.  The staleness bound is hard: neither the timeout nor grace
 * overrides it (stale synchronous parallel).
 */
#include <config.h>

#include <stdlib.h>

#include "builtin.h"

enum { P_NWAIT, P_ALL, P_INCLUDE, P_STALENESS, P_TIMEOUT, P_GRACE };

static const struct aia_param params[] = {
    {"nwait", AIA_INT, "0",
     "fresh answers that end a round (0: every live worker)", NULL, 0, 1e6},
    {"all", AIA_BOOL, "false",
     "wait for every live worker (synchronous); same as nwait 0", NULL, 0,
     0},
    {"include", AIA_INTS, "[]",
     "ranks whose fresh answer every round waits for", NULL, 1, 1e9},
    {"staleness", AIA_INT, "-1",
     "never let an answer be more than this many rounds stale (-1: no "
     "bound)",
     NULL, -1, 1e9},
    {"timeout_ms", AIA_DOUBLE, "0",
     "end a round after this long with whatever has arrived, at least one "
     "answer (0: never)",
     NULL, 0, 1e9},
    {"grace", AIA_DOUBLE, "0",
     "once the round could end after T, keep collecting until T * (1 + "
     "grace)",
     NULL, 0, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct standard {
    int nwait;       /* 0: every live worker */
    int *include;    /* pool indices */
    int ninclude;
    long staleness;  /* < 0: no bound */
    double timeout;  /* seconds, 0: none */
    double grace;
    uint64_t held_round; /* round in which the condition first held */
    double held_at;      /* and when, in seconds into that round */
};

static void destroy(void *state)
{
    struct standard *s = state;
    if (s)
        free(s->include);
    free(s);
}

static int create(const struct aia_context *ctx, void **state,
                  struct aia_error *err)
{
    const struct aia_value *a = ctx->args;
    int nwait = (int)a[P_NWAIT].i;
    if (a[P_ALL].i && a[P_NWAIT].given && nwait != 0)
        return aia_seterr(err, "give nwait or all, not both");
    if (nwait > ctx->nworkers)
        return aia_seterr(err, "nwait: %d exceeds the %d workers in the pool",
                          nwait, ctx->nworkers);
    struct standard *s = calloc(1, sizeof *s);
    if (!s || !(s->include = calloc(a[P_INCLUDE].n + 1, sizeof(int)))) {
        destroy(s);
        return aia_seterr(err, "out of memory");
    }
    s->nwait = a[P_ALL].i ? 0 : nwait;
    for (size_t i = 0; i < a[P_INCLUDE].n; i++) {
        int64_t r = a[P_INCLUDE].ints[i];
        int w = -1;
        for (int k = 0; k < ctx->nworkers && ctx->pool_ranks; k++)
            if (ctx->pool_ranks[k] == r)
                w = k;
        if (w < 0) {
            destroy(s);
            return aia_seterr(err, "include: rank %lld is not in the pool",
                              (long long)r);
        }
        s->include[s->ninclude++] = w;
    }
    s->staleness = (long)a[P_STALENESS].i;
    s->timeout = a[P_TIMEOUT].d / 1e3;
    s->grace = a[P_GRACE].d;
    *state = s;
    return 0;
}

/* Ending the round now keeps every answer within the staleness bound:
 * a busy worker's answer will come in round + 1 or later. */
static int staleness_ok(const struct standard *s, const struct aia_pool_view *v)
{
    if (s->staleness < 0)
        return 1;
    for (int w = 0; w < v->nworkers; w++)
        if (v->alive[w] && v->busy[w] &&
            v->round - v->sent[w] >= (uint64_t)s->staleness)
            return 0;
    return 1;
}

static int enough(const struct standard *s, const struct aia_pool_view *v)
{
    int need = s->nwait == 0 || s->nwait > v->live ? v->live : s->nwait;
    if (v->fresh < need)
        return 0;
    for (int i = 0; i < s->ninclude; i++) {
        int w = s->include[i];
        if (v->alive[w] && !v->fresh_now[w])
            return 0;
    }
    return 1;
}

static int condition(const struct standard *s, const struct aia_pool_view *v)
{
    int timed = s->timeout > 0 && v->elapsed >= s->timeout && v->arrived > 0;
    return (enough(s, v) || timed) && staleness_ok(s, v);
}

static int ready(void *state, const struct aia_pool_view *v)
{
    struct standard *s = state;
    if (!condition(s, v))
        return 0;
    if (s->grace <= 0 || v->fresh >= v->live)
        return 1;
    if (s->held_round != v->round) {
        s->held_round = v->round;
        s->held_at = v->elapsed;
    }
    return v->elapsed >= s->held_at * (1 + s->grace);
}

static double deadline(void *state, const struct aia_pool_view *v)
{
    const struct standard *s = state;
    if (s->grace > 0 && s->held_round == v->round)
        return s->held_at * (1 + s->grace);
    if (s->timeout > 0 && v->elapsed < s->timeout)
        return s->timeout;
    return -1;
}

const struct aia_wait_plugin builtin_wait_standard = {
    .h = AIA_HEADER(AIA_KIND_WAIT, struct aia_wait_plugin, "standard", "1.1",
                    "built-in: nwait fastest, all, include, staleness bound, "
                    "timeout and grace",
                    params),
    .create = create,
    .destroy = destroy,
    .ready = ready,
    .deadline = deadline,
};
