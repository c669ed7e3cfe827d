/* eval.c - the workers compute the loss and the metric of their rows, the
 * coordinator combines them (see eval.h).
 *
 * Evaluations wait in a queue, oldest first.  A worker answers its EVALs
 * in the order they came (one tag, one source), so the oldest evaluation
 * completes first and history rows keep their order.  The queue grows as
 * rows come due: what it bounds is the models its sends read (64 MB of
 * them, at least two), each held only until its sends complete.  A
 * history row due while every model buffer is still read is queued
 * without an evaluation and written in its turn with the figures it has
 * (its loss columns empty): a row is never left out, and a slow worker
 * never stalls a round.
 *
 * The end of a run waits for every live worker's evaluations: for as long
 * as it takes, up to pool.shutdown_timeout, or, with pool.dead_after, until
 * the worker has been silent past both dead_after and four times the
 * slowest evaluation it made (an evaluation is a pass over all of a
 * worker's rows, far longer than an answer, and the worker makes it after
 * the query it holds, so no figure of the answers can size this wait).
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
    int sampled;   /* the training figures are the workers' samples' */
    int sent;      /* 0: queued without an evaluation (no model buffer) */
    double row[4]; /* iteration, epoch, time, change */
    char *msg;     /* header and the model, while the sends read it */
    MPI_Request *req;
    unsigned char *got;
    int absent; /* workers gone before it was sent */
    double at_row[3]; /* its model's iteration, epoch and time */
    double sent_at;
    double sum[EVAL_LEN];
};

struct evals {
    struct pending *q;
    int cap, head, count;
    uint64_t next;
    int64_t asked_at; /* iteration of the latest evaluation asked for */
    int64_t full_at;  /* the same, of the latest on every training row */
    int closed;
    int held, models; /* model buffers the sends read, and the most */
    char **spare;     /* model buffers no send reads, to reuse */
    int nspare;
    uint64_t behind; /* history rows queued without an evaluation */
    double *slowest; /* each worker's slowest evaluation, request to answer */
    double *heard;   /* when each worker was last heard from (the end) */
    unsigned char *gone; /* given up at the end: silent past its wait */
    char **lost;         /* models a dead worker's send may still read */
    int nlost;
};

int eval_by_workers(const struct setup *s)
{
    return s->job->data.path && s->job->pool.topology != JOB_TREE;
}

int eval_rows(const struct setup *s, const double *x, int sample, double *out,
              struct aia_error *err)
{
    struct aia_error e;
    memset(out, 0, EVAL_LEN * sizeof *out);
    void *st[2] = {sample && s->sample_s ? s->sample_s : s->prob_s,
                   s->test_s};
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

/* A model buffer for an evaluation's sends: a spare one, or a new one
 * while fewer than e->models are held (extra: the final model's, which
 * is always sent).  NULL when none may be had. */
static char *take_model(struct evals *e, size_t bytes, int extra)
{
    if (e->held >= e->models && !extra)
        return NULL;
    char *m = e->nspare ? e->spare[--e->nspare] : util_alloc_aligned(bytes);
    if (m)
        e->held++;
    return m;
}

/* p's model, which no send reads any more, back to the spares. */
static void give_model(struct evals *e, struct pending *p)
{
    if (!p->msg)
        return;
    if (e->nspare < e->models)
        e->spare[e->nspare++] = p->msg;
    else
        free(p->msg);
    p->msg = NULL;
    e->held--;
}

/* Take back the models of pending evaluations whose sends completed (a
 * small model's at once: it travels eagerly). */
static void reclaim(struct coord *c)
{
    struct evals *e = c->ev;
    for (int i = 0; i < e->count && e->held >= e->models; i++) {
        struct pending *p = &e->q[(e->head + i) % e->cap];
        int done = 1;
        for (int w = 0; p->msg && w < c->l.n && done; w++)
            if (p->req[w] != MPI_REQUEST_NULL)
                MPI_Test(&p->req[w], &done, MPI_STATUS_IGNORE);
        if (p->msg && done)
            give_model(e, p);
    }
}

/* A new entry at the queue's tail (the queue doubles when full); NULL
 * when out of memory. */
static struct pending *push(struct evals *e, const double *row)
{
    if (e->count == e->cap) {
        struct pending *q = calloc((size_t)e->cap * 2, sizeof *q);
        if (!q)
            return NULL;
        for (int i = 0; i < e->cap; i++)
            q[i] = e->q[(e->head + i) % e->cap];
        free(e->q);
        e->q = q;
        e->head = 0;
        e->cap *= 2;
    }
    struct pending *p = &e->q[(e->head + e->count) % e->cap];
    p->id = e->next++;
    p->has_row = row != NULL;
    if (row)
        memcpy(p->row, row, sizeof p->row);
    memset(p->sum, 0, sizeof p->sum);
    p->absent = 0;
    p->sent = 0;
    e->count++;
    return p;
}

static void settle(struct coord *c, int force);

/* Send the model x to every live worker; row: a history row's figures,
 * or NULL (a loss alone, which is not asked for while no model buffer
 * is free); extra: the final model's; all: on every training row, else
 * on the workers' samples. */
static int send_eval(struct coord *c, const double *x, const double *row,
                     int extra, int all)
{
    struct evals *e = c->ev;
    size_t dim = c->l.s->dim;
    if (e->held >= e->models)
        reclaim(c);
    char *msg = take_model(e, WIRE_BYTES(dim), extra);
    if (!msg && !row && !extra)
        return 0;
    struct pending *p = push(e, row);
    if (p) {
        p->at_row[0] = (double)c->l.p.iteration;
        p->at_row[1] = (double)c->l.p.epoch;
        p->at_row[2] = util_now() - c->l.p.t0;
        p->sampled = !all;
    }
    if (p && !msg && !extra) {
        /* queued without an evaluation: written in its turn */
        e->behind++;
        settle(c, 0);
        return 0;
    }
    if (p && !p->req)
        p->req = malloc((size_t)c->l.n * sizeof *p->req);
    if (p && !p->got)
        p->got = malloc((size_t)c->l.n);
    if (!p || !msg || !p->req || !p->got) {
        if (msg) {
            free(msg);
            e->held--;
        }
        return aia_seterr(&c->l.r.err, "out of memory for an evaluation");
    }
    p->msg = msg;
    p->sent = 1;
    p->sent_at = util_now();
    *(struct wire_hdr *)p->msg = (struct wire_hdr){
        .magic = WIRE_MAGIC, .kind = WIRE_EVAL, .len = dim, .seq = p->id,
        .flags = all ? 0 : WIRE_EVAL_SAMPLE};
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
                              "cannot send an evaluation to rank %d",
                              c->l.s->ranks[w]);
        p->got[w] = 0;
        c->l.st[w].evals++;
    }
    e->asked_at = c->l.p.iteration;
    if (all)
        e->full_at = c->l.p.iteration;
    return 0;
}

/* The recorder's hook: a history row is always queued (evaluated when a
 * model buffer is free); a loss alone (for a stop rule or a progress
 * line) is asked for when nothing is pending. */
static int start(void *ctx, const double *x, const double *row, int all)
{
    struct coord *c = ctx;
    struct evals *e = c->ev;
    if (e->closed ||
        (!row && (e->count > 0 || e->asked_at == c->l.p.iteration)))
        return 0;
    return send_eval(c, x, row, 0, all);
}

/* p's sends are done with: completed where the worker answered, let go
 * where it did not (its model is then kept, as that send may read it
 * yet). */
static void release(struct evals *e, int n, struct pending *p)
{
    int loose = 0;
    for (int w = 0; w < n; w++)
        if (p->got[w] && p->req[w] != MPI_REQUEST_NULL)
            MPI_Wait(&p->req[w], MPI_STATUS_IGNORE);
        else if (p->req[w] != MPI_REQUEST_NULL) {
            MPI_Request_free(&p->req[w]);
            loose = 1;
        }
    if (!loose || !p->msg) {
        give_model(e, p);
        return;
    }
    char **lost = realloc(e->lost, (size_t)(e->nlost + 1) * sizeof *lost);
    if (!lost)
        return; /* the slot keeps it, never reused with a send in flight */
    e->lost = lost;
    lost[e->nlost++] = p->msg;
    p->msg = NULL;
    e->held--;
}

/* Complete the oldest evaluations whose every worker answered or is
 * gone (dead, distrusted, or given up at the end); force: count the
 * silent ones missing too. */
static void settle(struct coord *c, int force)
{
    struct evals *e = c->ev;
    while (e->count > 0) {
        struct pending *p = &e->q[e->head];
        int missing = 0, waiting = 0;
        for (int w = 0; p->sent && w < c->l.n; w++)
            if (p->got[w])
                continue;
            else if (force || !c->l.p.alive[w] || e->gone[w])
                missing++;
            else
                waiting++;
        if (waiting)
            return;
        /* a model evaluated on every row is what a loss rule judges */
        if (p->sent && !p->sampled && !missing && !p->absent && p->msg)
            record_judged(&c->l.r, (const double *)WIRE_PAYLOAD(p->msg), p->at_row);
        if (p->sent)
            release(e, c->l.n, p);
        e->head = (e->head + 1) % e->cap;
        e->count--;
        double v[4] = {p->sum[0] / p->sum[2], p->sum[1] / p->sum[2],
                       p->sum[3] / p->sum[5], p->sum[4] / p->sum[5]};
        if (p->sent) /* the progress line's loss's age */
            c->l.r.ev_at = (int64_t)p->at_row[0];
        if (record_evaluated(&c->l.r, p->has_row ? p->row : NULL,
                             p->sent ? v : NULL, missing + p->absent,
                             (uint64_t)p->sum[2], p->sent && p->sampled) < 0)
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
    size_t models = (64u << 20) / WIRE_BYTES(c->l.s->dim);
    e->models = models < 2 ? 2 : models > 4096 ? 4096 : (int)models;
    e->cap = 16;
    e->asked_at = e->full_at = -1;
    size_t n = (size_t)c->l.n;
    if (!(e->q = calloc((size_t)e->cap, sizeof *e->q)) ||
        !(e->spare = calloc((size_t)e->models, sizeof *e->spare)) ||
        !(e->slowest = calloc(n, sizeof *e->slowest)) ||
        !(e->heard = calloc(n, sizeof *e->heard)) || !(e->gone = calloc(n, 1)))
        return -1;
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
    for (int i = 0; i < e->nspare; i++)
        free(e->spare[i]);
    for (int i = 0; i < e->nlost; i++)
        free(e->lost[i]);
    free(e->spare);
    free(e->lost);
    free(e->slowest);
    free(e->heard);
    free(e->gone);
    free(e->q);
    free(e);
    c->ev = NULL;
}

void eval_take(struct coord *c, int w, const struct wire_hdr *h)
{
    struct evals *e = c->ev;
    for (int i = 0; e && i < e->count; i++) {
        struct pending *p = &e->q[(e->head + i) % e->cap];
        if (!p->sent || p->id != h->seq || p->got[w])
            continue;
        const double *v = WIRE_PAYLOAD(h);
        for (int k = 0; k < EVAL_LEN; k++)
            p->sum[k] += v[k];
        p->got[w] = 1;
        e->slowest[w] = fmax(e->slowest[w], util_now() - p->sent_at);
        settle(c, 0);
        return;
    }
    host_log(AIA_LOG_INFO, "rank %d answered an evaluation not asked for",
             c->l.s->ranks[w]);
}

/* Whether worker w owes an answer to a pending evaluation: it answers in
 * order, so it owes one when it owes the newest sent. */
static int owes(const struct coord *c, int w)
{
    const struct evals *e = c->ev;
    for (int i = e->count - 1; i >= 0; i--) {
        const struct pending *p = &e->q[(e->head + i) % e->cap];
        if (p->sent)
            return !p->got[w] && c->l.p.alive[w] && !e->gone[w];
    }
    return 0;
}

/* The ranks that owe an evaluation, listed into text ("1, 2, 3");
 * returns how many. */
static int owing(const struct coord *c, char *text, size_t len)
{
    size_t used = 0;
    int n = 0;
    text[0] = '\0';
    for (int w = 0; w < c->l.n; w++) {
        if (!owes(c, w))
            continue;
        if (used + 16 < len)
            used += (size_t)snprintf(text + used, len - used, "%s%d",
                                     n ? ", " : "", c->l.s->ranks[w]);
        else if (used + 5 < len && text[used - 1] != '.')
            used += (size_t)snprintf(text + used, len - used, ", ...");
        n++;
    }
    return n;
}

/* With pool.dead_after: give up the workers that owe an evaluation and
 * have been silent past both dead_after and four times their slowest
 * evaluation; returns when the next one would be given up. */
static double give_up(struct coord *c, double now)
{
    struct evals *e = c->ev;
    double after = c->l.job->pool.dead_after, next = INFINITY;
    for (int w = 0; after > 0 && w < c->l.n; w++) {
        if (!owes(c, w))
            continue;
        double wait = fmax(after, 4 * e->slowest[w]);
        if (now - e->heard[w] < wait) {
            next = fmin(next, e->heard[w] + wait);
            continue;
        }
        e->gone[w] = 1;
        host_error("rank %d sent no evaluation of the final model and "
                   "nothing else for %.3g s (pool.dead_after %g s; its "
                   "slowest evaluation took %.3g s): its rows are left out",
                   c->l.s->ranks[w], now - e->heard[w], after, e->slowest[w]);
    }
    return next;
}

/* A progress line naming the ranks waited for, when one is due. */
static double note(const struct coord *c, double now, double t0)
{
    char list[160];
    if (host_verbosity() <= AIA_LOG_ERROR ||
        host_progress() == HOST_PROGRESS_OFF || !owing(c, list, sizeof list))
        return INFINITY;
    host_log(AIA_LOG_WARN,
             "progress: waiting for the evaluation of the final model by "
             "rank(s) %s (%.0f s so far; at most %g s: "
             "pool.shutdown_timeout)",
             list, now - t0, c->l.job->pool.shutdown_timeout);
    return now + (now - t0 < 10 ? 1 : 10);
}

void eval_drain(struct coord *c)
{
    struct evals *e = c->ev;
    if (!e || e->closed)
        return;
    /* the final model on every row, for the report, unless it was asked
     * for already */
    if (e->full_at != c->l.p.iteration && !c->l.r.end_judged &&
        (record_model(&c->l.r) < 0 || send_eval(c, c->l.r.x, NULL, 1, 1) < 0))
        coord_fail(c, "%s", c->l.r.err.text);
    double t0 = util_now(), until = t0 + c->l.job->pool.shutdown_timeout;
    double note_at = t0 + 1;
    for (int w = 0; w < c->l.n; w++)
        e->heard[w] = t0;
    settle(c, 0);
    while (e->count > 0 && !proto_failed(&c->l.p)) {
        double now = util_now();
        if (now >= until)
            break;
        if (now >= note_at)
            note_at = note(c, now, t0);
        double wake = fmin(fmin(until, note_at), give_up(c, now));
        settle(c, 0);
        if (e->count == 0)
            break;
        /* idle workers hear the coordinator is there while it waits */
        wake = fmin(wake, coord_keep_alive(c, now));
        int k = listen_poll(c, fmin(wake, shutdown_reap(c, now)));
        if (k < 0)
            break;
        now = util_now();
        for (int i = 0; i < k; i++) {
            e->heard[c->idx[i]] = now;
            coord_take(c, c->idx[i], &c->mst[i], now);
        }
        settle(c, 0);
    }
    char list[160];
    if (e->count > 0 && owing(c, list, sizeof list))
        host_error("the workers' evaluation of the final model is "
                   "incomplete: rank(s) %s did not answer within %g s "
                   "(pool.shutdown_timeout); their rows are left out",
                   list, c->l.job->pool.shutdown_timeout);
    settle(c, 1);
    e->closed = 1;
    const struct recorder *r = &c->l.r;
    if (r->rows_behind)
        host_log(AIA_LOG_WARN,
                 "%llu history rows have an empty loss: they came due while "
                 "the workers' evaluations were %d models behind",
                 (unsigned long long)r->rows_behind, e->models);
    if (r->rows_partial)
        host_log(AIA_LOG_WARN,
                 "%llu history rows have an empty loss: their evaluation "
                 "missed some worker's rows",
                 (unsigned long long)r->rows_partial);
}
