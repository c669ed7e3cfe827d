/* eval.c - the workers compute the loss and the metric of their rows, the
 * coordinator combines them (see eval.h).
 *
 * Evaluations wait in a queue, oldest first; each has its own copy of the
 * model, which its sends read until every live worker has answered.  A
 * worker answers its EVALs in the order they came (one tag, one source),
 * so the oldest evaluation completes first and history rows keep their
 * order.  The queue holds at most 64 evaluations and 64 MB of models; a
 * history row due while it is full is left out (and counted), so a slow
 * worker never stalls a round.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "coord.h"
#include "eval.h"
#include "core/host.h"
#include "poll.h"
#include "core/util.h"

struct pending {
    uint64_t id;
    int has_row;
    double row[4]; /* iteration, epoch, time, change */
    char *msg;     /* header and the model: what the sends read */
    MPI_Request *req;
    unsigned char *got;
    int absent; /* workers gone before it was sent */
    double sum[EVAL_LEN];
};

struct evals {
    struct pending *q;
    int cap, head, count;
    uint64_t next;
    int64_t asked_at; /* iteration of the latest evaluation asked for */
    int closed;
    uint64_t skipped; /* history rows left out: the queue was full */
    char **lost;      /* models a dead worker's send may still read */
    int nlost;
};

int eval_by_workers(const struct setup *s)
{
    return s->job->data.path && s->job->pool.topology != JOB_TREE;
}

int eval_rows(const struct setup *s, const double *x, double *out,
              struct aia_error *err)
{
    struct aia_error e;
    memset(out, 0, EVAL_LEN * sizeof *out);
    void *st[2] = {s->prob_s, s->test_s};
    for (int t = 0; t < 2 && st[t]; t++) {
        double f, m = 0, rows = (double)s->prob->rows(st[t]);
        e.text[0] = '\0';
        if (s->prob->loss(st[t], x, &f, &e) < 0)
            return aia_seterr(err, "problem '%s': loss%s: %s", s->prob->h.name,
                              t ? " (test rows)" : "", util_error_text(&e));
        if (loader_offered(s->prob, st[t], AIA_OFFER_METRIC) &&
            s->prob->metric(st[t], x, &m, &e) < 0)
            return aia_seterr(err, "problem '%s': %s%s: %s", s->prob->h.name,
                              s->metric_name, t ? " (test rows)" : "",
                              util_error_text(&e));
        out[3 * t] = f * rows;
        out[3 * t + 1] = m * rows;
        out[3 * t + 2] = rows;
    }
    return 0;
}

/* Send the model x to every live worker; row: a history row's figures,
 * or NULL.  The queue has room. */
static int send_eval(struct coord *c, const double *x, const double *row)
{
    struct evals *e = c->ev;
    int64_t it = c->l.p.iteration;
    struct pending *p = &e->q[(e->head + e->count) % e->cap];
    size_t dim = c->l.s->dim;
    p->id = e->next++;
    p->has_row = row != NULL;
    if (row)
        memcpy(p->row, row, sizeof p->row);
    memset(p->sum, 0, sizeof p->sum);
    p->absent = 0;
    if (!p->msg && !(p->msg = util_alloc_aligned(WIRE_BYTES(dim))))
        return aia_seterr(&c->l.r.err, "out of memory for an evaluation");
    *(struct wire_hdr *)p->msg = (struct wire_hdr){
        .magic = WIRE_MAGIC, .kind = WIRE_EVAL, .len = dim, .seq = p->id};
    memcpy(WIRE_PAYLOAD(p->msg), x, dim * sizeof *x);
    for (int w = 0; w < c->l.n; w++) {
        p->req[w] = MPI_REQUEST_NULL;
        p->got[w] = 1;
        p->absent += c->l.p.direct[w] && !c->l.p.alive[w];
        if (!c->l.p.alive[w] || c->bye[w])
            continue;
        if (bell_isend(p->msg, (int)WIRE_BYTES(dim), c->l.s->ranks[w],
                       TAG_QUERY, &p->req[w]) != MPI_SUCCESS)
            return aia_seterr(&c->l.r.err,
                              "cannot send an evaluation to "
                              "rank %d",
                              c->l.s->ranks[w]);
        p->got[w] = 0;
        c->l.st[w].evals++;
    }
    e->count++;
    e->asked_at = it;
    return 0;
}

/* The recorder's hook: a history row is evaluated when the queue has
 * room; a loss alone (for a stop rule or a progress line) when nothing
 * is pending. */
static int start(void *ctx, const double *x, const double *row)
{
    struct coord *c = ctx;
    struct evals *e = c->ev;
    if (e->closed || (!row && (e->count > 0 || e->asked_at == c->l.p.iteration)))
        return 0;
    if (e->count == e->cap) {
        if (row)
            e->skipped++;
        return 0;
    }
    return send_eval(c, x, row);
}

/* Complete the oldest evaluations whose every worker answered or is
 * gone; force: count the silent ones missing too. */
static void settle(struct coord *c, int force)
{
    struct evals *e = c->ev;
    while (e->count > 0) {
        struct pending *p = &e->q[e->head];
        int missing = 0, waiting = 0;
        for (int w = 0; w < c->l.n; w++)
            if (!p->got[w] && (force || !c->l.p.alive[w]))
                missing++;
            else if (!p->got[w])
                waiting++;
        if (waiting)
            return;
        for (int w = 0; w < c->l.n; w++)
            if (p->got[w] && p->req[w] != MPI_REQUEST_NULL)
                MPI_Wait(&p->req[w], MPI_STATUS_IGNORE);
            else if (p->req[w] != MPI_REQUEST_NULL)
                MPI_Request_free(&p->req[w]);
        if (missing) {
            /* the silent worker's send may read the model yet */
            char **lost =
                realloc(e->lost, (size_t)(e->nlost + 1) * sizeof *lost);
            if (lost) {
                e->lost = lost;
                lost[e->nlost++] = p->msg;
                p->msg = NULL;
            }
        }
        double v[4] = {p->sum[0] / p->sum[2], p->sum[1] / p->sum[2],
                       p->sum[3] / p->sum[5], p->sum[4] / p->sum[5]};
        e->head = (e->head + 1) % e->cap;
        e->count--;
        if (record_evaluated(&c->l.r, p->has_row ? p->row : NULL, v,
                             missing + p->absent, (uint64_t)p->sum[2]) < 0)
            coord_fail(c, "%s", c->l.r.err.text);
    }
}

int eval_init(struct coord *c)
{
    if (!eval_by_workers(c->l.s))
        return 0;
    struct evals *e = c->ev = calloc(1, sizeof *e);
    if (!e)
        return -1;
    size_t bytes = WIRE_BYTES(c->l.s->dim);
    size_t cap = (64u << 20) / bytes;
    e->cap = cap < 2 ? 2 : cap > 64 ? 64 : (int)cap;
    e->asked_at = -1;
    if (!(e->q = calloc((size_t)e->cap, sizeof *e->q)))
        return -1;
    for (int i = 0; i < e->cap; i++) {
        e->q[i].req = malloc((size_t)c->l.n * sizeof *e->q[i].req);
        e->q[i].got = calloc((size_t)c->l.n, 1);
        if (!e->q[i].req || !e->q[i].got)
            return -1;
    }
    c->l.r.evaluate = start;
    c->l.r.eval_ctx = c;
    return 0;
}

void eval_free(struct coord *c)
{
    struct evals *e = c->ev;
    if (!e)
        return;
    for (int i = 0; e->q && i < e->cap; i++) {
        free(e->q[i].msg);
        free(e->q[i].req);
        free(e->q[i].got);
    }
    for (int i = 0; i < e->nlost; i++)
        free(e->lost[i]);
    free(e->lost);
    free(e->q);
    free(e);
    c->ev = NULL;
}

void eval_take(struct coord *c, int w, const struct wire_hdr *h)
{
    struct evals *e = c->ev;
    for (int i = 0; e && i < e->count; i++) {
        struct pending *p = &e->q[(e->head + i) % e->cap];
        if (p->id != h->seq || p->got[w])
            continue;
        const double *v = WIRE_PAYLOAD(h);
        for (int k = 0; k < EVAL_LEN; k++)
            p->sum[k] += v[k];
        p->got[w] = 1;
        settle(c, 0);
        return;
    }
    host_log(AIA_LOG_INFO, "rank %d answered an evaluation not asked for",
             c->l.s->ranks[w]);
}

/* How long the end waits for the evaluations: workers answer after the
 * query they hold, so ten times the slowest usual round trip, at least a
 * second, at most pool.shutdown_timeout. */
static double drain_time(const struct coord *c)
{
    double usual = 0;
    for (int w = 0; w < c->l.n; w++)
        if (c->l.st[w].rtt.count)
            usual = fmax(usual, hist_quantile(&c->l.st[w].rtt, 0.99));
    return fmin(fmax(10 * usual, 1.0), c->l.job->pool.shutdown_timeout);
}

void eval_drain(struct coord *c)
{
    struct evals *e = c->ev;
    if (!e || e->closed)
        return;
    /* the final model, for the report, unless it was asked for already */
    if (e->asked_at != c->l.p.iteration) {
        if (e->count == e->cap)
            settle(c, 1);
        if (record_model(&c->l.r) < 0 || send_eval(c, c->l.r.x, NULL) < 0)
            coord_fail(c, "%s", c->l.r.err.text);
    }
    double until = util_now() + drain_time(c);
    while (e->count > 0 && !proto_failed(&c->l.p)) {
        double now = util_now();
        if (now >= until)
            break;
        int k = listen_poll(c, fmin(until, shutdown_reap(c, now)));
        if (k < 0)
            break;
        now = util_now();
        for (int i = 0; i < k; i++)
            coord_take(c, c->idx[i], &c->mst[i], now);
        settle(c, 0);
    }
    if (e->count > 0)
        host_error("the workers' evaluation of the final model is "
                   "incomplete: %s",
                   "the silent workers' rows are left out");
    settle(c, 1);
    e->closed = 1;
    if (e->skipped)
        host_log(AIA_LOG_WARN,
                 "%llu history rows were left out: the "
                 "workers' evaluations fell behind",
                 (unsigned long long)e->skipped);
}
