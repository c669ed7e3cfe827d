/* second.h - what the algorithms newton and lbfgs share: a worker answers
 * a request (newton.h), the coordinator collects the answers to its
 * current request and, at the end of a round where the request is
 * complete, feeds their row-weighted means to its machine and asks for
 * the next one.
 *
 * Stragglers: a round may end at nwait fresh answers, and a request stays
 * the query until the workers it needs have answered it (in any round:
 * its answer depends on the query only), so the fast workers' rounds go
 * on while a slow one finishes.  An answer to an earlier request is
 * dropped: its point is no longer the iterate, and a loss, gradient or
 * curvature pair from another point would make the line search compare
 * two functions.  A gradient request needs every worker (the line search
 * and the curvature pairs need the whole problem's loss and gradient);
 * newton's Hessian-vector products may come from the rows of the workers
 * that answered its step's first one (hessian: fastest).
 */
#ifndef AIARUN_PLUGINS_SECOND_H
#define AIARUN_PLUGINS_SECOND_H

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/newton.h>

struct second {
    const struct aia_problem_plugin *prob;
    void *pstate;
    const double *model; /* coordinator: the machine's iterate (dim) */
    size_t dim;
    size_t width; /* values after an answer's loss: dim, or 2 dim with
                     products beside gradients (AIA_REQ_GRAD_HVP) */
    int nworkers;
    struct aia_collect col; /* coordinator */
    double *mean;           /* coordinator: width */
    /* worker: the last query answered and its answer, given again when
     * the same query comes again (a request waiting for a slow worker is
     * sent to the others in every round: they need not compute it) */
    double *lastq, *lasta;
    size_t qlen, alen;
    int have_last;
};

/* Open the part shared by both methods; hvp: the method asks for
 * Hessian-vector products, so a worker whose problem has none is
 * refused (2: also beside gradients, AIA_REQ_GRAD_HVP, so its answers
 * are 2 dim wide).  0, or -1 with err set (call second_close either way). */
static inline int second_open(struct second *s, const struct aia_context *ctx,
                              int hvp, struct aia_shape *shape,
                              struct aia_error *err)
{
    s->prob = ctx->problem;
    s->pstate = ctx->problem_state;
    s->dim = s->prob->dim(s->pstate);
    s->width = hvp > 1 ? 2 * s->dim : s->dim;
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    shape->query_len = AIA_REQ_QUERY_LEN(s->dim);
    shape->answer_len = AIA_REQ_ANSWER_LEN(s->width);
    if (ctx->role != AIA_ROLE_COORDINATOR) {
        if (hvp && !aia_problem_has_hvp(s->prob, s->pstate))
            return aia_seterr(err,
                              "problem '%s' gives no Hessian-vector "
                              "product (hvp), which this method asks of "
                              "the workers",
                              s->prob->h.name);
        if (s->prob->rows(s->pstate) == 0)
            return aia_seterr(err, "worker %d holds no rows of the problem",
                              ctx->rank);
        s->qlen = shape->query_len;
        s->alen = shape->answer_len;
        if (!(s->lastq = malloc(s->qlen * sizeof *s->lastq)) ||
            !(s->lasta = malloc(s->alen * sizeof *s->lasta)))
            return aia_seterr(err, "out of memory");
        return 0;
    }
    if (aia_collect_init(&s->col, s->width, s->nworkers) < 0 ||
        !(s->mean = calloc(s->width ? s->width : 1, sizeof *s->mean)))
        return aia_seterr(err,
                          "out of memory for the sums of %d answers "
                          "of dimension %zu",
                          s->nworkers, s->dim);
    return 0;
}

static inline void second_close(struct second *s)
{
    aia_collect_free(&s->col);
    free(s->mean);
    free(s->lastq);
    free(s->lasta);
    s->mean = s->lastq = s->lasta = NULL;
}

/* The query of request id: what the machine needs. */
static inline void second_write(const struct second *s,
                                const struct aia_need *need, double id,
                                double *q)
{
    q[0] = need->kind;
    q[1] = aia_req_tag(id);
    memcpy(q + 2, need->x, s->dim * sizeof *q);
    if (need->v)
        memcpy(q + 2 + s->dim, need->v, s->dim * sizeof *q);
    else
        memset(q + 2 + s->dim, 0, s->dim * sizeof *q);
}

static inline int second_worker_answer(struct second *s, const double *query,
                                       double *answer, struct aia_error *err)
{
    /* a worker sent the query it has just answered gives that answer */
    if (s->have_last && memcmp(query, s->lastq, s->qlen * sizeof *query) == 0) {
        memcpy(answer, s->lasta, s->alen * sizeof *answer);
        return 0;
    }
    if (query[0] == AIA_REQ_GRAD_HVP && s->width < 2 * s->dim)
        return aia_seterr(err, "a request for a product beside the gradient "
                               "to a method whose answers have no room "
                               "for it");
    if (s->width > s->dim && query[0] != AIA_REQ_GRAD_HVP)
        memset(answer + 3 + s->dim, 0, s->dim * sizeof *answer);
    s->have_last = 0;
    if (aia_request_answer(s->prob, s->pstate, s->dim, query, answer, err) < 0)
        return -1;
    memcpy(s->lastq, query, s->qlen * sizeof *query);
    memcpy(s->lasta, answer, s->alen * sizeof *answer);
    s->have_last = 1;
    return 0;
}

/* The descriptor functions both methods share, for a state whose first
 * member is its struct second: the worker's answer, the coordinator's
 * absorb (an answer to the current request is collected, any other
 * dropped) and the model (the machine's iterate, s->model). */
static inline int second_worker(void *state, const double *query,
                                double *answer, const struct aia_step *step,
                                struct aia_error *err)
{
    (void)step;
    return second_worker_answer((struct second *)state, query, answer, err);
}

static inline int second_absorb(void *state, const double *answer,
                                const struct aia_answer_info *info,
                                struct aia_error *err)
{
    struct second *s = (struct second *)state;
    return aia_collect_take(&s->col, answer, info->worker, (double)info->rows,
                            err) < 0
               ? -1
               : 0;
}

static inline int second_iterate(void *state, double *x, struct aia_error *err)
{
    const struct second *s = (const struct second *)state;
    (void)err;
    memcpy(x, s->model, s->dim * sizeof *x);
    return 0;
}

#endif
