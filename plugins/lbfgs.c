/* lbfgs.c - L-BFGS over the pool: the workers answer requests for the
 * loss and gradient of their rows at a point, the coordinator keeps the
 * last memory curvature pairs (s, y) = (x' - x, g' - g), takes the
 * direction -H g by the two-loop recursion and a backtracking line search
 * along it (newton.h, struct aia_lbfgs).  It needs nothing of the problem
 * but its loss and gradient.
 *
 * Every round is one gradient request: the first trial of a line search
 * is the full quasi-Newton step, accepted almost always once the pairs
 * describe the curvature, so a step costs about one round.
 *
 * Stragglers (plugins/second.h): with stale_pairs: drop (the default) a
 * request waits for every worker, over as many rounds as it takes (the
 * fast workers' rounds answer the same request again meanwhile, and only
 * the first answer of each counts).  Stale answers, to an earlier
 * request, are dropped, and so no curvature pair is ever made of
 * gradients at other points than its s: a pair from mixed points can
 * have s'y <= 0 or a y that belongs to no step, and spoils every
 * direction while it stays in memory.  A pair whose curvature is too
 * small to use (s'y <= 1e-10 |s||y|) is dropped too; the report's log
 * says how many.
 *
 * stale_pairs: keep ends a request at the end of any round in which
 * every worker has answered it or an earlier one: a worker that has not
 * answered this one counts with its latest answer (a stale answer that
 * arrives replaces it), so a straggler no longer holds every step.  The
 * loss and gradient of such a round mix points: y = g' - g then holds,
 * for a straggler's rows, the difference of two gradients at points
 * other than x' and x (zero when both are the same stale answer), not
 * their curvature along s, so the secant condition y = H s fails on
 * those rows: s'y can fall to 0 or below (the pair is then dropped, as
 * any such pair is) or describe no step, and the line search compares
 * losses partly from other points.  Every pair made from a mixed round
 * is kept all the same; the log says how many rounds were mixed.  It is
 * for stragglers whose rows differ little from the others'.
 *
 * Checkpoints: the machine's block (scalars, x, g, d, the trial point,
 * the pairs); a resumed run asks its current request again.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>
#include <aiarun/newton.h>

#include "second.h"

static const struct aia_param params[] = {
    {"memory", AIA_INT, "10", "curvature pairs kept", NULL, 1, 1000},
    {"tolerance", AIA_DOUBLE, "0",
     "stop asking for new points once the gradient's norm is at most this "
     "(0: never)",
     NULL, 0, 1e300},
    {"stale_pairs", AIA_ENUM, "drop",
     "drop: a request waits for every worker, so no pair mixes points; "
     "keep: a round ends a request once every worker answered it or an "
     "earlier one (its latest answer stands in), and pairs from such "
     "rounds are kept, although their y is no secant of s on the stale "
     "rows",
     "drop|keep", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

enum { PAIRS_DROP, PAIRS_KEEP };
static const char *const pairs_names[] = {[PAIRS_DROP] = "drop",
                                          [PAIRS_KEEP] = "keep"};

struct lbfgs {
    struct second sc;   /* first */
    struct aia_lbfgs l; /* coordinator */
    int keep;           /* stale_pairs: keep */
    unsigned char *heard; /* keep: the worker's latest answer is in col */
    double mixed;       /* keep: requests ended with stale answers in */
    const struct aia_host *host;
};

static void destroy(void *state)
{
    struct lbfgs *s = state;
    if (!s)
        return;
    if (s->mixed > 0 && s->host && s->host->log)
        s->host->log(s->host, AIA_LOG_INFO,
                     "lbfgs: %.0f requests ended with stale answers in "
                     "(stale_pairs: keep)",
                     s->mixed);
    second_close(&s->sc);
    aia_lbfgs_free(&s->l);
    free(s->heard);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct lbfgs *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    if (second_open(&s->sc, ctx, 0, shape, err) < 0)
        goto fail;
    if (ctx->role == AIA_ROLE_COORDINATOR &&
        aia_lbfgs_init(&s->l, s->sc.dim, (int)aia_arg(ctx->args, "memory")->i,
                       aia_arg(ctx->args, "tolerance")->d, NULL) < 0) {
        aia_seterr(err, "out of memory for L-BFGS of dimension %zu", s->sc.dim);
        goto fail;
    }
    s->keep = aia_arg_enum(ctx->args, "stale_pairs", pairs_names, 2) ==
              PAIRS_KEEP;
    s->host = ctx->host;
    if (ctx->role == AIA_ROLE_COORDINATOR) {
        s->sc.model = s->l.x;
        if (!(s->heard = calloc((size_t)s->sc.nworkers, 1))) {
            aia_seterr(err, "out of memory");
            goto fail;
        }
    }
    *state = s;
    return 0;
fail:
    destroy(s);
    return -1;
}

static void ask(struct lbfgs *s, double *query, int start)
{
    struct aia_need need;
    aia_lbfgs_need(&s->l, &need);
    if (start)
        aia_collect_start(&s->sc.col, s->l.s[AIA_LB_REQ], NULL);
    if (query)
        second_write(&s->sc, &need, s->l.s[AIA_LB_REQ], query);
}

static int init(void *state, double *query, struct aia_error *err)
{
    (void)err;
    ask(state, query, 1);
    return 0;
}

/* keep: an answer to an earlier request stands in for its worker until
 * it answers the current one (answers of a worker come in order, so the
 * last is the newest). */
static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct lbfgs *s = state;
    struct aia_collect *c = &s->sc.col;
    int w = info->worker;
    int rc = aia_collect_take(c, answer, w, (double)info->rows, err);
    if (rc < 0 || !s->keep)
        return rc < 0 ? -1 : 0;
    if (rc == 0 && !c->got[w] && isfinite(answer[2])) {
        c->rows[w] = (double)info->rows;
        c->loss[w] = answer[2];
        memcpy(c->vec + (size_t)w * c->width, answer + 3,
               c->width * sizeof *answer);
        rc = 1;
    }
    s->heard[w] |= rc == 1;
    return 0;
}

/* keep: whether every worker is heard, and if some only by an earlier
 * answer, count those in (got) so that the mean takes them. */
static int mixed_done(struct lbfgs *s)
{
    struct aia_collect *c = &s->sc.col;
    int stale = 0;
    for (int w = 0; w < c->nworkers; w++)
        if (!s->heard[w])
            return 0;
    for (int w = 0; w < c->nworkers; w++)
        if (!c->got[w]) {
            c->got[w] = 1;
            stale = 1;
        }
    s->mixed += stale;
    return 1;
}

static int query(void *state, double *query, struct aia_error *err)
{
    struct lbfgs *s = state;
    (void)err;
    if (!aia_collect_done(&s->sc.col) && !(s->keep && mixed_done(s))) {
        ask(s, query, 0); /* the same request, again */
        return 0;
    }
    double f = aia_collect_mean(&s->sc.col, s->sc.mean);
    aia_lbfgs_feed(&s->l, f, s->sc.mean);
    s->l.s[AIA_LB_REQ] += 1;
    ask(s, query, 1);
    return 0;
}

static size_t state_size(void *state)
{
    struct lbfgs *s = state;
    return aia_lbfgs_len(s->sc.dim, s->l.m) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct lbfgs *s = state;
    (void)err;
    memcpy(buf, s->l.mem, state_size(state));
    return 0;
}

static int load(void *state, const void *buf, size_t size,
                struct aia_error *err)
{
    struct lbfgs *s = state;
    const double *p = buf;
    if (aia_state_len(size, state_size(state), err) < 0)
        return -1;
    if (!aia_lbfgs_block_ok(&s->l, p))
        return aia_seterr(err,
                          "not an L-BFGS state (phase %g, request %g, "
                          "pairs %g)",
                          p[AIA_LB_PHASE], p[AIA_LB_REQ], p[AIA_LB_COUNT]);
    memcpy(s->l.mem, p, size);
    /* the current request starts over: its partial sums were not saved */
    ask(s, NULL, 1);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "lbfgs",
                    "1.0",
                    "L-BFGS: the workers give the loss and gradient of "
                    "their rows, the coordinator keeps curvature pairs "
                    "and takes a line search along the quasi-Newton "
                    "direction",
                    params),
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = second_worker,
    .absorb = absorb,
    .query = query,
    .iterate = second_iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
