/* coord.c - the coordinator's MPI driver: MPI completions become the
 * protocol's events (proto.c), its decisions become sends.
 *
 * Rank 0 keeps one receive posted per worker at all times and talks to
 * workers only with nonblocking calls.  In rounds mode a round sends the
 * current query to every idle worker and ends when the wait condition
 * holds; an answer to an older round is absorbed like any other and its
 * worker is sent the current query at once.  In async mode every answer
 * is an iteration of its own and only its sender gets the next query.  In
 * tree mode the coordinator talks to its children only.  Query buffers
 * are query.c's, the end of the run shutdown.c's.
 */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "coord.h"
#include "session/facts.h"
#include "core/host.h"
#include "conf/params.h"
#include "poll.h"
#include "core/util.h"
#include "core/wire.h"

void coord_fail(struct coord *c, const char *fmt, ...)
{
    if (proto_failed(&c->p))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.text, sizeof c->err.text, fmt, ap);
    va_end(ap);
    host_error("%s", c->err.text);
    proto_fail(&c->p);
    c->status = RUN_FAILED;
}

/* Listen to worker w's next message (listen.c probes it). */
static int post_recv(struct coord *c, int w)
{
    c->listen[w] = 1;
    return MPI_SUCCESS;
}

static int send_query(struct coord *c, int w, double now)
{
    query_retire(c, w);
    struct qbuf *q = &c->q[c->cur];
    if (bell_isend(q->enc ? q->enc : q->buf, (int)q->bytes, c->s->ranks[w],
                   TAG_QUERY, &c->sreq[w]) != MPI_SUCCESS)
        return -1;
    c->st[w].sent_payload += c->s->shape.query_len * sizeof(double);
    c->st[w].sent_encoded += q->bytes - sizeof(struct wire_hdr);
    c->sq[w] = c->cur;
    c->q[c->cur].refs++;
    c->st[w].queries++;
    proto_sent(&c->p, w, now);
    return 0;
}

/* The stop rules' measures: the recorder's, a failure failing the run. */
static double measure_change(void *ctx)
{
    return record_change(&((struct coord *)ctx)->r);
}

static int measure_loss(void *ctx, double *loss)
{
    struct coord *c = ctx;
    if (record_loss(&c->r, loss) == 0)
        return 0;
    coord_fail(c, "%s", c->r.err.text);
    return -1;
}

/* End the round and send its successor to every idle worker (in async
 * mode only the worker that just answered is idle). */
static void end_round(struct coord *c, double now)
{
    if (query_next(c, now) < 0)
        return;
    if (record_iteration(&c->r, 0, util_now()) < 0)
        coord_fail(c, "%s", c->r.err.text);
    if (record_checkpoint(&c->r, 0, util_now()) < 0)
        coord_fail(c, "%s", c->r.err.text);
    /* a step far larger than the first ones: the loss says whether the
     * run diverged */
    if (diverge_change(&c->r.dv, c->job->stop.diverge,
                       record_change_watch(&c->r)) &&
        measure_loss(c, &(double){0}) < 0)
        return;
    struct proto_measure m = {.ctx = c,
                              .change = measure_change,
                              .loss = measure_loss,
                              .fopt = c->r.fopt};
    if (proto_stop_check(&c->p, &c->job->stop, &m))
        return;
    for (int w = 0; w < c->n; w++)
        if (proto_idle(&c->p, w) && send_query(c, w, now) < 0)
            coord_fail(c, "cannot send a query to rank %d", c->s->ranks[w]);
}

static void on_answer(struct coord *c, int w, const struct wire_hdr *h,
                      double now)
{
    const struct setup *s = c->s;
    double rtt;
    uint64_t staleness = proto_answer(&c->p, w, h->round, now, &rtt);
    stats_answer(&c->st[w], staleness, rtt, h->compute_s, h->delay_s);
    if (record_answer(&c->r, w, h->round, staleness, h->compute_s, h->delay_s,
                      rtt, now) < 0)
        coord_fail(c, "%s", c->r.err.text);
    struct aia_answer_info info = {
        .rank = s->ranks[w],
        .worker = w,
        .round = c->p.round,
        .sent_round = h->round,
        .staleness = staleness,
        .rows = h->rows ? (size_t)h->rows : s->rows[w],
        .total_rows = s->total_rows,
        .compute_s = h->compute_s,
    };
    /* finite: check() let no other answer through (wire_answer_values),
     * so it is not read again here */
    const double *a = c->adec ? c->adec : WIRE_PAYLOAD(h);
    c->err.text[0] = '\0';
    if (s->alg->absorb(s->alg_s, a, &info, &c->err) < 0) {
        struct aia_error e = c->err;
        util_error_text(&e);
        coord_fail(c, "algorithm '%s': absorb (answer of rank %d): %s",
                   s->alg->h.name, s->ranks[w], e.text);
        return;
    }
    switch (proto_absorbed(&c->p, w, staleness)) {
    case PROTO_END_ROUND:
        end_round(c, now);
        break;
    case PROTO_RESEND:
        if (send_query(c, w, now) < 0)
            coord_fail(c, "cannot send a query to rank %d", s->ranks[w]);
        break;
    case PROTO_WAIT:
        break;
    }
}

/* Why a received message cannot be trusted, or NULL when it can.  An
 * answer in a codec is decoded here, into c->adec: bytes that do not
 * decode are not trusted either. */
static const char *check(struct coord *c, int w, const MPI_Status *mst,
                         int *bytes)
{
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    struct wire_expect e = {.answer_len = c->s->shape.answer_len,
                            .codec = (uint32_t)c->job->codec_answer,
                            .eval_len = c->ev ? EVAL_LEN : 0};
    *bytes = c->rlen[w];
    (void)mst;
    const char *why = wire_check(h, (size_t)*bytes, c->rbytes, &e, c->why_text,
                                 sizeof c->why_text);
    if (why || h->kind != WIRE_ANSWER)
        return why;
    enum proto_verdict v = proto_check(&c->p, w, h->round);
    if (v == PROTO_DISTRUST || v == PROTO_DISCARD)
        return "an answer to a query it was not sent";
    if (!wire_answer_values(c->adec ? &c->acodec : NULL, h, c->adec,
                            c->why_text, sizeof c->why_text))
        return c->why_text;
    c->st[w].recv_payload += h->len * sizeof(double);
    c->st[w].recv_encoded += h->bytes;
    c->st[w].recv_msgs++;
    return NULL;
}

/* Worker w sent a message that failed its check: it gets no more queries
 * and counts no more for the wait condition and epochs, and what it sends
 * is discarded, but it is listened to until its goodbye, so that it stops
 * like the others. */
static void distrust(struct coord *c, int w, const char *why, int bytes)
{
    c->st[w].untrusted = 1;
    c->st[w].discarded++;
    int live = proto_distrust(&c->p, w);
    host_error("rank %d sent %s (%d bytes): not trusted any more; going on "
               "with %d workers",
               c->s->ranks[w], why, bytes, live);
    if (live == 0)
        coord_fail(c, "no worker of the pool is left to trust");
}

void coord_take(struct coord *c, int w, const MPI_Status *mst, double now)
{
    int bytes;
    const char *why = check(c, w, mst, &bytes);
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    struct wstats *st = &c->st[w];
    if (!why && h->kind == WIRE_BYE) {
        c->bye[w] = 1;
        proto_bye(&c->p, w);
        if (!c->p.why && !st->untrusted)
            coord_fail(c, "rank %d said goodbye before it was stopped",
                       c->s->ranks[w]);
        else if (h->seq != st->answers + st->late + st->discarded)
            host_error(
                "rank %d sent %llu answers, %llu arrived", c->s->ranks[w],
                (unsigned long long)h->seq,
                (unsigned long long)(st->answers + st->late + st->discarded));
        return; /* its receive stays closed */
    }
    if (st->untrusted) {
        st->discarded++;
    } else if (why) {
        distrust(c, w, why, bytes);
    } else if (h->kind == WIRE_EVALANS) {
        eval_take(c, w, h);
    } else if (h->kind == WIRE_ANSWER && c->p.why) {
        st->late++;
        proto_late(&c->p, w);
    } else if (h->kind == WIRE_ANSWER) {
        on_answer(c, w, h, now);
    } else if (h->kind == WIRE_ERROR) {
        const char *text = wire_error_text(c->rbuf[w], (size_t)bytes);
        coord_fail(c, "stopping: rank %d failed: %s", c->s->ranks[w], text);
    }
    if ((size_t)c->rlen[w] > LISTEN_DISCARD_MAX) {
        /* left unreceived (listen.c): its sender cannot get past that
         * send, so it is never waited for */
        c->bye[w] = 1;
        c->st[w].dead = 1;
        shutdown_let_go(c, w);
        return;
    }
    if (post_recv(c, w) != MPI_SUCCESS)
        coord_fail(c, "cannot post a receive for rank %d", c->s->ranks[w]);
}

/* Wait without sleeping until the latest answer expected from a busy
 * worker (its latency estimate, and a margin) where the node allows it
 * (poll.c): every step of a large message's rendezvous then goes on at
 * once instead of at the next wake-up. */
static void expect_answers(const struct coord *c, double now)
{
    double until = 0;
    for (int w = 0; w < c->n; w++)
        if (c->p.busy[w] && c->p.alive[w] && c->p.latency[w] > 0)
            until = fmax(until,
                         c->p.sent_at[w] + 1.5 * c->p.latency[w] + 100e-6);
    if (until > now)
        poll_expect(until);
    else
        poll_expect_clear();
}

static void loop(struct coord *c)
{
    const struct setup *s = c->s;
    double stop_at =
        c->job->stop.time > 0 ? c->p.t0 + c->job->stop.time : INFINITY;
    while (!c->p.why) {
        double now = util_now();
        double deadline =
            fmin(stop_at, proto_deadline(&c->p, s->wait, s->wait_s, now));
        deadline = fmin(deadline, c->r.progress_at);
        deadline = fmin(deadline, shutdown_reap(c, now));
        if (c->p.why)
            break;
        expect_answers(c, now);
        int k = listen_poll(c, deadline);
        if (k < 0) {
            coord_fail(c, "MPI error while waiting for answers");
            break;
        }
        now = util_now();
        if (poll_signal)
            proto_stop(&c->p, "signal");
        else if (record_progress(&c->r, now) < 0)
            coord_fail(c, "%s", c->r.err.text);
        /* every completed receive is taken, even after a stop decision (a
         * signal's too), so that each worker is listened to again: one
         * left out would never be heard saying goodbye */
        for (int i = 0; i < k; i++)
            coord_take(c, c->idx[i], &c->mst[i], now);
        if (c->p.why)
            break;
        if (proto_time_stop(&c->p, &c->job->stop, now))
            break;
        if (c->job->mode == JOB_ROUNDS &&
            proto_ready(&c->p, s->wait, s->wait_s, now))
            end_round(c, now);
    }
    c->r.t_end = util_now();
}

int coord_run(struct setup *s)
{
    struct coord c = {
        .s = s, .job = s->job, .n = s->nworkers, .cur = -1, .prev = -1};
    /* A dead worker's requests must fail, not abort the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    poll_catch_signals();
    poll_configure(s->job->poll, s->job->wake);
    host_log(AIA_LOG_INFO, "%s", poll_choice());
    if (coord_init(&c) < 0) {
        host_error("out of memory for %d workers; aborting the job", c.n);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    /* Listen to every worker from the start: whatever fails from here on,
     * the shutdown hears each goodbye. */
    for (int w = 0; w < c.n; w++)
        if (c.p.direct[w] && post_recv(&c, w) != MPI_SUCCESS) {
            host_error("cannot post a receive for rank %d; aborting the job",
                       s->ranks[w]);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
    record_optimum(&c.r);
    if (record_check(&c.r) < 0 || (s->resume && record_read_resume(&c.r) < 0)) {
        coord_fail(&c, "%s", c.r.err.text);
        c.status = RUN_BAD_JOB;
        goto stop;
    }
    if (record_open(&c.r) < 0) {
        coord_fail(&c, "%s", c.r.err.text);
        goto stop;
    }
    int q = query_acquire(&c);
    if (q < 0) {
        coord_fail(&c, "out of memory for a query buffer");
        goto stop;
    }
    if (query_first(&c, q) < 0 || query_seal(&c, q, c.p.round) < 0)
        goto stop;
    query_current(&c, q);
    proto_start(&c.p, c.p.round, util_now(),
                c.r.resumed ? c.r.resume.elapsed : 0);
    c.r.progress_at = util_now() + 1.0; /* progress for runs over a second */
    c.r.ckpt_at = util_now() + s->job->checkpoint_seconds;
    if (record_iteration(&c.r, 1, util_now()) < 0)
        coord_fail(&c, "%s", c.r.err.text);
    if (s->job->stop.diverge > 0 && /* the initial loss that bounds the others */
        measure_loss(&c, &(double){0}) < 0)
        goto stop;
    for (int w = 0; w < c.n && !c.p.why; w++)
        if (c.p.direct[w] && send_query(&c, w, util_now()) < 0)
            coord_fail(&c, "cannot send a query to rank %d", s->ranks[w]);
    loop(&c);
    /* SIGUSR1 asks for a stop while the job is whole: stop as at a limit */
    if (c.p.why == proto_stop_rule("signal") && poll_signal == SIGUSR1) {
        poll_signal = 0; /* so that the shutdown waits for the workers */
        host_error("stopped by SIGUSR1%s%s", s->job->checkpoint ?
                   "; checkpoint in " : "", s->job->checkpoint ?
                   s->job->checkpoint : "");
    }
    if (c.p.why == proto_stop_rule("signal") && poll_signal) {
        shutdown_signal(&c);
        shutdown_report(&c);
        coord_free(&c);
        return c.status;
    }
    if (!proto_failed(&c.p)) {
        if (record_iteration(&c.r, 1, util_now()) < 0)
            coord_fail(&c, "%s", c.r.err.text);
        if (record_checkpoint(&c.r, 1, util_now()) < 0)
            coord_fail(&c, "%s", c.r.err.text);
        eval_drain(&c);
    }
stop:
    if (!c.r.t_end)
        c.r.t_end = util_now();
    shutdown_flag_unresponsive(&c, c.r.t_end);
    shutdown_pool(&c);
    shutdown_report(&c);
    shutdown_finish(&c);
    coord_free(&c);
    return c.status;
}
