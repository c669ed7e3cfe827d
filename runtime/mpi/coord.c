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
#include "shard.h"
#include "core/util.h"
#include "core/wire.h"

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
    if (bell_isend(q->enc ? q->enc : q->buf, (int)q->bytes, c->l.s->ranks[w],
                   TAG_QUERY, &c->sreq[w]) != MPI_SUCCESS)
        return -1;
    c->l.st[w].sent_payload += c->l.s->shape.query_len * sizeof(double);
    c->l.st[w].sent_encoded += q->bytes - sizeof(struct wire_hdr);
    c->sq[w] = c->cur;
    c->q[c->cur].refs++;
    c->l.st[w].queries++;
    proto_sent(&c->l.p, w, now);
    if (c->l.job->pool.dead_after > 0) /* its wait may be the next due */
        c->timers_at = fmin(c->timers_at, now + c->l.job->pool.dead_after);
    if (c->sh)
        shard_tell(c, SHARD_SEND, w, NULL);
    return 0;
}

/* lead_ops: the MPI transport of a session (session/lead.h). */
static int op_send(struct lead *l, int w, double now)
{
    return send_query((struct coord *)l, w, now);
}

static int op_next(struct lead *l, double now)
{
    struct coord *c = (struct coord *)l;
    /* before query_next: the recorder may gather the new model at once */
    if (c->sh)
        shard_tell(c, SHARD_NEXT, -1, NULL);
    return query_next(c, now);
}

static void op_absorbed(struct lead *l, int w,
                        const struct aia_answer_info *info)
{
    struct coord *c = (struct coord *)l;
    if (c->sh)
        shard_tell(c, SHARD_ABSORB, w, info);
}

static const struct lead_ops mpi_ops = {
    .send = op_send, .next = op_next, .absorbed = op_absorbed};

/* Why a received message cannot be trusted, or NULL when it can.  An
 * answer in a codec is decoded here, into c->adec: bytes that do not
 * decode are not trusted either.  The index of an answer's first value
 * that is not finite goes to c->bad (its length when none): the one
 * check of the values (the worker does not check what it sends). */
static const char *check(struct coord *c, int w, const MPI_Status *mst,
                         int *bytes)
{
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    struct wire_expect e = {.answer_len = c->l.s->shape.answer_len,
                            .codec = (uint32_t)c->l.job->codec.answer,
                            .eval_len = c->ev ? EVAL_LEN : 0};
    *bytes = c->rlen[w];
    (void)mst;
    const char *why = wire_check(h, (size_t)*bytes, c->rbytes, &e, c->why_text,
                                 sizeof c->why_text);
    if (why || h->kind != WIRE_ANSWER)
        return why;
    enum proto_verdict v = proto_check(&c->l.p, w, h->round);
    if (v == PROTO_DISTRUST || v == PROTO_DISCARD)
        return "an answer to a query it was not sent";
    if (!wire_answer_values(c->adec ? &c->acodec : NULL, h, c->adec,
                            &c->bad, c->why_text, sizeof c->why_text))
        return c->why_text;
    c->l.st[w].recv_payload += h->len * sizeof(double);
    c->l.st[w].recv_encoded += h->bytes;
    c->l.st[w].recv_msgs++;
    return NULL;
}

void coord_take(struct coord *c, int w, const MPI_Status *mst, double now)
{
    int bytes;
    const char *why = check(c, w, mst, &bytes);
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    struct wstats *st = &c->l.st[w];
    /* with shards, every answer's slices are on their way to the shard
     * ranks, which take each one as told: absorbed or dropped */
    int answer = c->sh && (size_t)bytes >= sizeof *h &&
                 (size_t)c->rlen[w] <= c->rbytes && h->kind == WIRE_ANSWER;
    if (!why && h->kind == WIRE_BYE) {
        c->bye[w] = 1;
        proto_bye(&c->l.p, w);
        if (!c->l.p.why && !proto_untrusted(&c->l.p, w))
            coord_fail(c, "rank %d said goodbye before it was stopped",
                       c->l.s->ranks[w]);
        else if (h->seq != st->answers + st->late + st->discarded)
            host_error(
                "rank %d sent %llu answers, %llu arrived", c->l.s->ranks[w],
                (unsigned long long)h->seq,
                (unsigned long long)(st->answers + st->late + st->discarded));
        return; /* its receive stays closed */
    }
    if (proto_untrusted(&c->l.p, w)) {
        st->discarded++;
    } else if (why) {
        lead_distrust(&c->l, w, why, (size_t)bytes);
    } else if (h->kind == WIRE_EVALANS) {
        eval_take(c, w, h);
    } else if (h->kind == WIRE_ANSWER && c->l.p.why) {
        st->late++;
        proto_late(&c->l.p, w);
    } else if (h->kind == WIRE_ANSWER && c->bad < h->len) {
        const double *x = c->adec ? c->adec : WIRE_PAYLOAD(h);
        lead_nonfinite(&c->l, w, h->round, c->bad, x[c->bad]);
    } else if (h->kind == WIRE_ANSWER) {
        /* finite (check, wire_answer_values): not read again */
        struct lead_answer a = {
            .round = h->round,
            .compute_s = h->compute_s,
            .delay_s = h->delay_s,
            .rows = h->rows ? (size_t)h->rows : c->l.s->rows[w],
            .values = c->adec ? c->adec : WIRE_PAYLOAD(h),
        };
        lead_answer(&c->l, w, &a, now);
        answer = 0; /* absorbed: lead_answer told the shards */
    } else if (h->kind == WIRE_ERROR) {
        const char *text = wire_error_text(c->rbuf[w], (size_t)bytes);
        coord_fail(c, "stopping: rank %d failed: %s", c->l.s->ranks[w], text);
    }
    if (answer)
        shard_tell(c, SHARD_DROP, w, NULL);
    if ((size_t)c->rlen[w] > LISTEN_DISCARD_MAX) {
        /* left unreceived (listen.c): its sender cannot get past that
         * send, so it is never waited for */
        c->bye[w] = 1;
        proto_lost(&c->l.p, w);
        shutdown_let_go(c, w);
        return;
    }
    if (post_recv(c, w) != MPI_SUCCESS)
        coord_fail(c, "cannot post a receive for rank %d", c->l.s->ranks[w]);
}

/* Wait without sleeping until the latest answer expected from a busy
 * worker (its latency estimate, and a margin) where the node allows it
 * (poll.c): every step of a large message's rendezvous then goes on at
 * once instead of at the next wake-up. */
static void expect_answers(const struct coord *c, double now)
{
    double until = 0;
    for (int w = 0; w < c->l.n; w++)
        if (c->l.p.busy[w] && c->l.p.alive[w] && c->l.p.latency[w] > 0)
            until = fmax(until,
                         c->l.p.sent_at[w] + 1.5 * c->l.p.latency[w] + 100e-6);
    if (until > now)
        poll_expect_at(until, now);
    else
        poll_expect_clear();
}

/* Workers wait for the coordinator's word at most
 * pool.coordinator_timeout; a round may outlast it while rank 0 waits
 * on a slow worker.  Every third of it, each worker that is not busy
 * gets a keep-alive on the control tag (taken and ignored; counted
 * nowhere), so that only a coordinator really stopped or gone makes
 * them leave; a busy worker silent that long is named once, as the
 * likely reason the run waits. */
double coord_keep_alive(struct coord *c, double now)
{
    static const struct wire_hdr alive = {.magic = WIRE_MAGIC,
                                          .kind = WIRE_ALIVE};
    double quiet = c->l.job->pool.coordinator_timeout;
    if (!(quiet > 0))
        return INFINITY;
    if (c->alive_at == 0) {
        c->alive_prev = now;
        c->alive_at = now + quiet / 3;
    }
    if (now < c->alive_at)
        return c->alive_at;
    for (int w = 0; w < c->l.n; w++) {
        int rank = c->l.s->ranks[w];
        if (proto_lost_worker(&c->l.p, w))
            continue; /* never sent to again */
        double due = c->l.p.sent_at[w] + quiet;
        if (c->l.p.direct[w] && c->l.p.busy[w]) {
            if (due > c->alive_prev && due <= now)
                host_error("rank %d has been busy for %.3g s with no answer "
                           "(pool.coordinator_timeout): the run waits on it "
                           "(pool.dead_after or stop.time ends the wait)",
                           rank, now - c->l.p.sent_at[w]);
            continue;
        }
        MPI_Request r;
        if (bell_isend(&alive, sizeof alive, rank, TAG_CTRL, &r) ==
            MPI_SUCCESS)
            MPI_Request_free(&r);
    }
    c->alive_prev = now;
    c->alive_at = now + quiet / 3;
    return c->alive_at;
}

static void loop(struct coord *c)
{
    const struct setup *s = c->l.s;
    double stop_at =
        c->l.job->stop.time > 0 ? c->l.p.t0 + c->l.job->stop.time : INFINITY;
    while (!c->l.p.why) {
        double now = util_now();
        /* what only time moves is looked at when it is due, not at every
         * answer (c->timers_at; proto_overdue, the keep-alive) */
        if (now >= c->timers_at) {
            c->timers_at = fmin(stop_at, shutdown_reap(c, now));
            c->timers_at = fmin(c->timers_at, coord_keep_alive(c, now));
            c->timers_at = fmin(c->timers_at, shard_watch(c, now));
        }
        double deadline =
            fmin(c->timers_at,
                 proto_deadline(&c->l.p, s->wait, s->wait_s, now));
        deadline = fmin(deadline, c->l.r.progress_at);
        if (c->l.p.why)
            break;
        expect_answers(c, now);
        double waited = now; /* the same clock read: nothing waits between */
        double recv_before = c->recv_s;
        int k = listen_poll(c, deadline);
        if (k < 0) {
            coord_fail(c, "MPI error while waiting for answers");
            break;
        }
        now = util_now();
        c->wait_s += now - waited - (c->recv_s - recv_before);
        if (guard_signal)
            proto_stop(&c->l.p, "signal");
        else if (record_progress(&c->l.r, now) < 0)
            coord_fail(c, "%s", c->l.r.err.text);
        /* a shard rank's failure first: the answers that came with it
         * are then late, not absorbed */
        shard_heard(c);
        /* every completed receive is taken, even after a stop decision (a
         * signal's too), so that each worker is listened to again: one
         * left out would never be heard saying goodbye */
        for (int i = 0; i < k; i++)
            coord_take(c, c->idx[i], &c->mst[i], now);
        if (c->l.p.why)
            break;
        if (proto_time_stop(&c->l.p, &c->l.job->stop, now))
            break;
        if (c->l.job->pool.mode == JOB_ROUNDS &&
            proto_ready(&c->l.p, s->wait, s->wait_s, now))
            lead_end_round(&c->l, now);
    }
    c->l.r.t_end = util_now();
    double run = c->l.r.t_end - c->l.p.t0;
    if (run > 0)
        c->l.r.coord_busy = fmax(0.0, 1.0 - c->wait_s / run);
}

int coord_run(struct setup *s)
{
    struct coord c = {.cur = -1, .prev = -1};
    struct aia_error err;
    /* A dead worker's requests must fail, not abort the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    guard_catch_signals();
    poll_configure(s->job->pool.poll, s->job->pool.wake);
    host_log(AIA_LOG_INFO, "%s", poll_choice());
    if (lead_init(&c.l, s, &c.acodec, &mpi_ops, &err) < 0 ||
        coord_init(&c) < 0 || shard_lead_init(&c) < 0) {
        host_error("out of memory for %d workers; aborting the job", c.l.n);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    /* Listen to every worker from the start: whatever fails from here on,
     * the shutdown hears each goodbye. */
    for (int w = 0; w < c.l.n; w++)
        if (c.l.p.direct[w] && post_recv(&c, w) != MPI_SUCCESS) {
            host_error("cannot post a receive for rank %d; aborting the job",
                       s->ranks[w]);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
    record_optimum(&c.l.r);
    if (record_check(&c.l.r) < 0 || (s->resume && record_read_resume(&c.l.r) < 0)) {
        coord_fail(&c, "%s", c.l.r.err.text);
        c.l.status = RUN_BAD_JOB;
        goto stop;
    }
    if (record_open(&c.l.r) < 0) {
        coord_fail(&c, "%s", c.l.r.err.text);
        goto stop;
    }
    int q = query_acquire(&c);
    if (q < 0) {
        coord_fail(&c, "out of memory for a query buffer");
        goto stop;
    }
    if (query_first(&c, q) < 0 || query_seal(&c, q, c.l.p.round) < 0)
        goto stop;
    query_current(&c, q);
    proto_start(&c.l.p, c.l.p.round, util_now(),
                c.l.r.resumed ? c.l.r.resume.elapsed : 0);
    c.l.r.progress_at = util_now() + 1.0; /* progress for runs over a second */
    c.l.r.ckpt_at = util_now() + s->job->output.checkpoint_seconds;
    if (lead_begin(&c.l, util_now()) < 0)
        goto stop;
    for (int w = 0; w < c.l.n && !c.l.p.why; w++)
        if (c.l.p.direct[w] && send_query(&c, w, util_now()) < 0)
            coord_fail(&c, "cannot send a query to rank %d", s->ranks[w]);
    loop(&c);
    /* SIGUSR1 asks for a stop while the job is whole: stop as at a limit */
    if (c.l.p.why == proto_stop_rule("signal") && guard_signal == SIGUSR1) {
        guard_signal = 0; /* so that the shutdown waits for the workers */
        host_error("stopped by SIGUSR1%s%s",
                   s->job->output.checkpoint ? "; checkpoint in " : "",
                   s->job->output.checkpoint ? s->job->output.checkpoint : "");
    }
    if (c.l.p.why == proto_stop_rule("signal") && guard_signal) {
        shutdown_signal(&c);
        shutdown_report(&c);
        coord_free(&c);
        return c.l.status;
    }
    lead_final(&c.l, util_now());
    if (!proto_failed(&c.l.p))
        eval_drain(&c);
stop:
    if (!c.l.r.t_end)
        c.l.r.t_end = util_now();
    lead_flag_unresponsive(&c.l, c.l.r.t_end);
    shutdown_pool(&c);
    shutdown_report(&c);
    shard_end(&c);
    shutdown_finish(&c);
    coord_free(&c);
    return c.l.status;
}
