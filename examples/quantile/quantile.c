/* quantile.c - a wait condition that learns which workers are fast: a
 * plugin for aiarun built outside its tree (see aiarun-plugin(7)).
 *
 * Each round waits for the workers whose round-trip estimate is within
 * `slack` times the `quantile`-th quantile of the live workers' estimates,
 * and for no other.  A worker with no estimate yet (before its first
 * answer) is waited for, so the first round waits for everyone and learns
 * every latency.  A persistent straggler drops out of the set after its
 * first answer and is not waited for again until it speeds up (its
 * estimate falls within the bound: it keeps answering, stale, and each
 * answer updates the estimate).
 *
 * The built-in condition waits for a number of answers (nwait), whoever
 * gives them, or for named ranks; this one names the workers by what the
 * coordinator measured.  With -v it logs the set each time it changes:
 *
 *     aiarun[0]: quantile: from round 2 waiting for ranks 1 2 3
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags aiarun) quantile.c \
 *            -o quantile.so -lm
 */
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

static const struct aia_param params[] = {
    {"quantile", AIA_DOUBLE, "0.5",
     "quantile of the live workers' latencies that sets the bound "
     "(0: the fastest, 1: the slowest)",
     NULL, 0, 1},
    {"slack", AIA_DOUBLE, "2",
     "wait for workers whose latency is at most this times the quantile", NULL,
     1, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct quantile {
    double q, slack;
    int n;
    const struct aia_host *host;
    double *sorted;          /* scratch: the known latencies */
    unsigned char *expected; /* the set of the current round */
    unsigned char *logged;   /* the set last logged */
    uint64_t round;          /* round the set was computed for */
    char *line;              /* scratch for the log line */
};

static void destroy(void *state)
{
    struct quantile *s = state;
    if (!s)
        return;
    free(s->sorted);
    free(s->expected);
    free(s->logged);
    free(s->line);
    free(s);
}

static int create(const struct aia_context *ctx, void **state,
                  struct aia_error *err)
{
    struct quantile *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->q = aia_arg(ctx->args, "quantile")->d;
    s->slack = aia_arg(ctx->args, "slack")->d;
    s->n = ctx->nworkers;
    s->host = ctx->host;
    size_t n = (size_t)(s->n > 0 ? s->n : 1);
    s->sorted = calloc(n, sizeof *s->sorted);
    s->expected = calloc(n, 1);
    s->logged = calloc(n, 1);
    s->line = calloc(n * 12 + 64, 1);
    if (!s->sorted || !s->expected || !s->logged || !s->line) {
        destroy(s);
        return aia_seterr(err, "out of memory for %d workers", ctx->nworkers);
    }
    *state = s;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Say which ranks the rounds wait for, when that changed. */
static void log_set(struct quantile *s, const struct aia_pool_view *v)
{
    if (memcmp(s->logged, s->expected, (size_t)s->n) == 0)
        return;
    memcpy(s->logged, s->expected, (size_t)s->n);
    if (!s->host || !s->host->log)
        return;
    size_t len = 0;
    for (int w = 0; w < s->n; w++)
        if (s->expected[w])
            len += (size_t)sprintf(s->line + len, " %d", v->ranks[w]);
    s->host->log(s->host, AIA_LOG_INFO,
                 "quantile: from round %llu waiting for ranks%s",
                 (unsigned long long)v->round, s->line);
}

/* The set is fixed for a round when the round begins (the first call in
 * it), so that an answer arriving during the round cannot move the bound
 * the round is waiting for. */
static void choose(struct quantile *s, const struct aia_pool_view *v)
{
    int known = 0;
    for (int w = 0; w < v->nworkers; w++)
        if (v->alive[w] && v->latency[w] > 0)
            s->sorted[known++] = v->latency[w];
    double bound = 0;
    if (known > 0) {
        qsort(s->sorted, (size_t)known, sizeof *s->sorted, by_value);
        int at = (int)(s->q * (known - 1) + 0.5);
        bound = s->slack * s->sorted[at];
    }
    for (int w = 0; w < v->nworkers; w++)
        s->expected[w] =
            v->alive[w] && (v->latency[w] <= 0 || v->latency[w] <= bound);
    s->round = v->round;
    log_set(s, v);
}

/* The round may end once every expected worker that is still alive has
 * answered this round's query, and at least one answer came. */
static int ready(void *state, const struct aia_pool_view *v)
{
    struct quantile *s = state;
    if (v->nworkers != s->n)
        return 1; /* not the pool we were made for: never block it */
    if (s->round != v->round)
        choose(s, v);
    if (v->fresh == 0)
        return 0;
    for (int w = 0; w < v->nworkers; w++)
        if (s->expected[w] && v->alive[w] && !v->fresh_now[w])
            return 0;
    return 1;
}

const struct aia_wait_plugin aia_wait_plugin = {
    .h = AIA_HEADER(AIA_KIND_WAIT, struct aia_wait_plugin, "quantile", "1.0",
                    "wait for the workers whose latency is within slack "
                    "times a quantile of the pool's",
                    params),
    .create = create,
    .destroy = destroy,
    .ready = ready,
};
