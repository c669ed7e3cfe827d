/* sim.c - the virtual-time driver of the protocol (aiarun --simulate).
 *
 * Like coord.c it turns events into the inputs of the state machine in
 * proto.c and carries out its decisions, but the events are popped from a
 * queue in virtual time rather than received over MPI.  A worker's answer
 * is computed when its query is sent (a worker's answer depends only on
 * the query and its own state, so the moment of computing it does not
 * matter) and kept until its arrival, at the time the latency model draws.
 * Between events the clock jumps to the next arrival, or to the earliest
 * deadline: the wait condition's, a worker's pool.dead_after, stop.time.
 *
 * Rank 0's own work (taking an answer, absorbing it, writing the next
 * query, sending it) moves the clock too (simulate.coordinator): a query
 * leaves when the work before it is done, and answers that arrive while
 * rank 0 works wait in the queue, so that a saturated coordinator shows
 * as one, busy near all of the run (the summary's coordinator_busy).
 * With pool.shards the algorithm runs whole here (its iterate is the
 * same), but each coordinator rank's share of the work (its slice of
 * every message taken, absorbed, written and sent) is charged to a clock
 * of its own: a query leaves when every rank has done its part, and the
 * busiest rank's share of the run is the summary's coordinator_busy.
 * With simulate.cores the ranks share one node's cores: the workers sent
 * a query in one piece of rank 0's work are planned together at its end,
 * their copies and steps sharing the cores with those still computing
 * and with rank 0's piece (each of k running ranks at cores/k of its
 * speed); a piece of rank 0's work takes k/cores times as long when k
 * ranks run as it starts; an answer's bytes are rank 0's to copy as it
 * takes it.
 */
#include <config.h>

#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/host.h"
#include "core/proto.h"
#include "session/guard.h"
#include "record/record.h"
#include "session/lead.h"
#include "latency.h"
#include "session/refopt.h"
#include "simpool.h"
#include "simq.h"
#include "core/util.h"
#include "core/wire.h"

#define MAX_JOB_FILE (16u << 20)

/* What is in flight to and from one worker. */
struct flight {
    double busy_from;          /* simulate.cores: when its compute begins */
    double compute_end;        /* when its compute ends (the delay follows) */
    double sent_end;           /* when its answer leaves it */
    double compute_s, delay_s; /* as its answer's header would say */
    double copy_up;            /* simulate.cores: rank 0's copy of it */
    double work, up;           /* simulate.cores, until it is planned: its
                                  copy and compute alone, its trip up */
    uint64_t round;            /* the round of its query */
    size_t rows;               /* the rows its answer stands for */
    int corrupt;               /* it arrives malformed */
};

struct sim {
    struct lead l; /* first: the session's side (s, job, n, p, r, st) */
    struct simpool sp;
    struct flight *fl;
    struct simq q;
    struct codec qcodec, acodec; /* queries' encoder, answers' decoder */
    double *qbuf[2];             /* the current and the previous query */
    int cur;
    char *qenc;    /* the current query, encoded */
    size_t qbytes; /* its payload's bytes as it travels */
    double *adec;  /* an answer decoded */
    double now, stop_at;
    uint64_t events;
    double plugin_s; /* wall seconds in the plugins' steps, for the
                        simulator's own overhead */
    double worker_s; /* of which the simulated workers' */
    int timed;       /* the two kept (-v, or simulate.coordinator:
                        measured): two clock reads a call */
    /* rank 0's work (simulate.coordinator): what the current piece began
     * at (virtual; wall; the wall seconds not its own), what the model
     * has charged it, and the virtual seconds it was busy in all */
    int working;
    double work_f; /* simulate.cores: the piece's stretch, fixed at its
                      start */
    double copied; /* simulate.cores: the answers' bytes it copied */
    int *pend;     /* simulate.cores: the workers sent a query in the
                      current piece, planned together at its end */
    int npend;
    double work_t0, work_wall0, work_skip0, charged, busy_s;
    double msgs, doubles; /* what it handled in all (any mode) */
    /* pool.shards: ranks 1 .. shards-1, each free of its earlier work at
     * free_at[k], charged charged_k[k] in the current piece, busy busy_k[k]
     * virtual seconds in all (rank 0's are the fields above) */
    int shards;
    double *free_at, *charged_k, *busy_k;
};

/* Stop the run with an error (printed at once); the first one wins. */
#define sim_fail(m, ...) lead_fail(&(m)->l, __VA_ARGS__)

static void recorder_failed(struct sim *m, int rc)
{
    if (rc < 0)
        sim_fail(m, "%s", m->l.r.err.text);
}

/* Give the current query its encoding when the job has a query codec. */
static int seal(struct sim *m)
{
    m->qbytes = m->l.s->shape.query_len * sizeof(double);
    if (!m->qenc)
        return 0;
    struct aia_error err;
    if (codec_encode(&m->qcodec, m->qbuf[m->cur], m->qenc, &m->qbytes, &err) <
        0) {
        sim_fail(m, "query of round %llu: %s", (unsigned long long)m->l.p.round,
                 err.text);
        return -1;
    }
    return 0;
}

/* The wall clock, where the plugins' time is kept. */
static double tick(const struct sim *m)
{
    return m->timed ? util_now() : 0;
}

/* Wall seconds of this process that are not rank 0's own work: the
 * simulated workers' steps, and the loss and metric that rank 0 computes
 * here on every row where a run's workers evaluate their own. */
static double not_rank0(const struct sim *m)
{
    return m->worker_s + m->l.r.eval_s;
}

/* simulate.cores: how many of the workers computing, not in the
 * current plan, are still at it at time t (as a piece of rank 0's work
 * starts there is none in a plan: each piece's end plans its queries). */
static int planned_at(const struct sim *m, double t)
{
    int k = 0;
    for (int w = 0; w < m->l.n; w++)
        k += m->fl[w].busy_from <= t && t < m->fl[w].compute_end &&
             !isinf(m->fl[w].compute_end);
    return k;
}

/* simulate.cores: how many times as long work takes that starts when k
 * ranks (itself included) are running on the node's cores. */
static double stretch(const struct sim *m, int k)
{
    int cores = m->l.job->simulate.cores;
    return cores > 0 && k > cores ? (double)k / cores : 1.0;
}

/* Rank 0 starts a piece of work (an answer taken, a round ended) at the
 * current time, which its earlier work has already moved on: answers
 * that arrived meanwhile waited.  With simulate.cores it shares the
 * cores with the workers computing now, for the whole piece. */
static void work_begin(struct sim *m)
{
    if (m->l.job->simulate.coordinator == LATENCY_COORD_NONE)
        return;
    m->working = 1;
    m->work_f = m->l.job->simulate.cores > 0
                    ? stretch(m, 1 + planned_at(m, m->now))
                    : 1.0;
    m->work_t0 = m->now;
    m->charged = 0;
    m->copied = 0;
    for (int k = 1; k < m->shards; k++)
        m->charged_k[k] = 0;
    if (m->l.job->simulate.coordinator == LATENCY_COORD_MEASURED) {
        m->work_skip0 = not_rank0(m);
        m->work_wall0 = util_now();
    }
}

/* The model's charge for messages taken or sent and doubles absorbed or
 * written. */
static void charge(struct sim *m, size_t msgs, size_t doubles)
{
    const struct job_simulate *js = &m->l.job->simulate;
    m->msgs += (double)msgs;
    m->doubles += (double)doubles;
    if (m->working && js->coordinator == LATENCY_COORD_MODEL)
        m->charged +=
            (double)msgs * js->coord_msg_s + (double)doubles * js->coord_double_s;
}

/* pool.shards: a piece of work of msgs messages of len doubles each (a
 * query's or an answer's), tail: the values past the model's go to every
 * rank (an answer's) or to rank 0 only (a query's).  Each coordinator
 * rank is charged its slice; rank 0 as charge does. */
static void charge_slices(struct sim *m, size_t msgs, size_t len, int tail)
{
    const struct setup *s = m->l.s;
    if (m->shards <= 1) {
        charge(m, msgs, len);
        return;
    }
    const struct job_simulate *js = &m->l.job->simulate;
    size_t extra = len > s->dim ? len - s->dim : 0;
    for (int k = 0; k < m->shards; k++) {
        size_t d = len ? s->slice[k + 1] - s->slice[k] +
                             (tail || k == 0 ? extra : 0)
                       : 0;
        if (k == 0) {
            charge(m, msgs, d);
            continue;
        }
        m->msgs += (double)msgs;
        m->doubles += (double)d;
        if (m->working && js->coordinator == LATENCY_COORD_MODEL)
            m->charged_k[k] +=
                (double)msgs * js->coord_msg_s + (double)d * js->coord_double_s;
    }
}

/* pool.shards: where shard rank k's clock is within the current work. */
static double shard_clock(const struct sim *m, int k)
{
    return fmax(m->work_t0, m->free_at[k]) + m->charged_k[k];
}

/* Where rank 0's clock is within its current work; with shards, when
 * every rank has done its part so far (a query leaves then). */
static double work_clock(struct sim *m)
{
    if (!m->working)
        return m->now;
    if (m->shards > 1 && m->l.job->simulate.coordinator == LATENCY_COORD_MODEL) {
        double t = fmax(m->now, m->work_t0 + m->charged);
        for (int k = 1; k < m->shards; k++)
            t = fmax(t, shard_clock(m, k));
        return t;
    }
    double busy = m->charged;
    if (m->l.job->simulate.coordinator == LATENCY_COORD_MEASURED)
        busy = fmax(
            (util_now() - m->work_wall0) - (not_rank0(m) - m->work_skip0), 0);
    return fmax(m->now, m->work_t0 + (busy + m->copied) * m->work_f);
}

/* simulate.cores: the workers sent a query in the piece that ends at
 * rank 0's time r0_end share the cores from their queries' arrival, with
 * the workers still computing (as planned before) and rank 0 until
 * r0_end: each of k running ranks goes at min(1, cores/k).  Their
 * answers are then queued. */
static void plan(struct sim *m, double r0_end)
{
    const double cores = m->l.job->simulate.cores;
    int left = m->npend;
    double t = INFINITY;
    for (int i = 0; i < m->npend; i++)
        t = fmin(t, m->fl[m->pend[i]].busy_from);
    while (left > 0) {
        int k = planned_at(m, t) + (t < r0_end);
        double next = INFINITY;
        for (int i = 0; i < m->npend; i++) {
            const struct flight *f = &m->fl[m->pend[i]];
            if (!isinf(f->compute_end))
                continue;
            if (f->busy_from <= t)
                k++;
            else
                next = fmin(next, f->busy_from);
        }
        double rate = k > cores ? cores / k : 1.0;
        if (t < r0_end)
            next = fmin(next, r0_end);
        for (int w = 0; w < m->l.n; w++) /* the others' ends */
            if (m->fl[w].compute_end > t && !isinf(m->fl[w].compute_end))
                next = fmin(next, m->fl[w].compute_end);
        for (int i = 0; i < m->npend; i++) {
            const struct flight *f = &m->fl[m->pend[i]];
            if (isinf(f->compute_end) && f->busy_from <= t)
                next = fmin(next, t + f->work / rate);
        }
        for (int i = 0; i < m->npend; i++) {
            struct flight *f = &m->fl[m->pend[i]];
            if (!isinf(f->compute_end) || f->busy_from > t)
                continue;
            if (t + f->work / rate <= next) { /* done at next */
                f->compute_end = next;
                left--;
            } else {
                f->work -= (next - t) * rate;
            }
        }
        t = next;
    }
    for (int i = 0; i < m->npend; i++) {
        int w = m->pend[i];
        struct flight *f = &m->fl[w];
        f->sent_end = f->compute_end + f->delay_s;
        /* a worker times its step and the delay after it */
        f->compute_s = f->compute_end - f->busy_from + f->delay_s;
        if (isinf(f->delay_s))
            continue; /* it hangs: its answer never comes */
        if (simq_push(&m->q,
                      (struct simq_event){f->sent_end + f->up, w, f->round}) <
            0)
            sim_fail(m, "out of memory for the event queue");
    }
    m->npend = 0;
}

/* The work is done: the clock stands at its end. */
static void work_end(struct sim *m)
{
    if (!m->working) {
        if (m->npend)
            plan(m, m->now);
        return;
    }
    if (m->shards > 1 && m->l.job->simulate.coordinator == LATENCY_COORD_MODEL) {
        /* rank 0 goes on at its own end; a shard rank still busy
         * delays only the queries it must send */
        for (int k = 1; k < m->shards; k++) {
            m->free_at[k] = shard_clock(m, k);
            m->busy_k[k] += m->charged_k[k];
        }
        m->now = fmax(m->now, m->work_t0 + m->charged);
        m->busy_s += m->charged;
        m->working = 0;
        return;
    }
    m->now = work_clock(m);
    m->busy_s += m->now - m->work_t0;
    m->working = 0;
    if (m->npend)
        plan(m, m->now);
}

/* pool.shards: the bytes a message to or from worker w moves on each
 * coordinator rank (the recorder's rank_bytes; rank 0's with the workers
 * are its per-worker counts): an answer (up) or a query (down) of len
 * doubles, and rank 0's word to each shard rank about it. */
static void count_slices(struct sim *m, size_t len, int up)
{
    const struct setup *s = m->l.s;
    uint64_t *b = m->l.r.rank_bytes;
    if (!b)
        return;
    size_t extra = len > s->dim ? len - s->dim : 0;
    for (int k = 1; k < m->shards; k++) {
        size_t d = s->slice[k + 1] - s->slice[k] + (up ? extra : 0);
        b[2 * k] += sizeof(struct shard_msg) + (up ? d * sizeof(double) : 0);
        b[2 * k + 1] += up ? 0 : d * sizeof(double);
        b[1] += sizeof(struct shard_msg);
    }
}

/* The bytes of rank 0's part of a message of len doubles. */
static size_t rank0_bytes(const struct sim *m, size_t len)
{
    const struct setup *s = m->l.s;
    if (m->shards <= 1)
        return len * sizeof(double);
    return (s->slice[1] + len - s->dim) * sizeof(double);
}

/* Tree mode: worker w, a child of the coordinator, is sent the current
 * query; its subtree's answer arrives when the slowest path allows. */
static void send_subtree(struct sim *m, int w)
{
    struct simsub sub;
    struct aia_error err;
    double t = tick(m);
    double back = simpool_subtree(&m->sp, w, m->qbuf[m->cur], m->l.p.round,
                                  m->now, &sub, &err);
    t = tick(m) - t;
    m->plugin_s += t;
    m->worker_s += t;
    if (isnan(back)) {
        sim_fail(m, "stopping: %s", err.text);
        return;
    }
    struct flight *f = &m->fl[w];
    f->compute_end = f->sent_end = back; /* a node ends a round at once */
    f->compute_s = sub.compute_s;
    f->delay_s = sub.delay_s;
    f->rows = (size_t)sub.rows;
    f->corrupt = 0;
    if (!isinf(back) &&
        simq_push(&m->q, (struct simq_event){back, w, m->l.p.round}) < 0)
        sim_fail(m, "out of memory for the event queue");
}

/* Send worker w the current query: it answers at once, and the answer
 * arrives when its latency model says. */
static void send_query(struct sim *m, int w)
{
    struct simworker *k = &m->sp.w[w];
    struct aia_error err;
    charge_slices(m, 1, 0, 0);
    m->now = work_clock(m); /* it leaves once the work before it is done */
    if (m->shards > 1) {
        size_t b = rank0_bytes(m, m->l.s->shape.query_len);
        m->l.st[w].sent_payload += b;
        m->l.st[w].sent_encoded += b;
        count_slices(m, m->l.s->shape.query_len, 0);
    } else {
        m->l.st[w].sent_payload += m->l.s->shape.query_len * sizeof(double);
        m->l.st[w].sent_encoded += m->qbytes;
    }
    m->l.st[w].queries++;
    proto_sent(&m->l.p, w, m->now);
    if (m->l.job->pool.topology == JOB_TREE) {
        send_subtree(m, w);
        return;
    }
    double t = tick(m);
    int rc = simpool_answer(&m->sp, w, m->qbuf[m->cur], m->qenc, m->qbytes,
                            m->l.p.round, &err);
    t = tick(m) - t;
    m->plugin_s += t;
    m->worker_s += t;
    if (rc < 0) {
        sim_fail(m, "stopping: %s", err.text);
        return;
    }
    struct latency_draw d;
    latency_next(&k->lat, sizeof(struct wire_hdr) + m->qbytes,
                 sizeof(struct wire_hdr) + k->bytes, k->work, &d);
    struct flight *f = &m->fl[w];
    if (m->l.job->simulate.cores > 0) {
        /* the query's bytes are copied, then the step computed, on a
         * share of the cores: planned with the piece's other queries
         * when it ends (plan) */
        f->busy_from = m->now + latency_trip(&k->lat, 0);
        f->work = d.down - (f->busy_from - m->now) + d.compute;
        f->compute_end = INFINITY;
        /* the answer's bytes are rank 0's to copy as it takes it */
        f->copy_up = latency_trip(&k->lat, sizeof(struct wire_hdr) + k->bytes) -
                     latency_trip(&k->lat, 0);
        f->up = d.up - f->copy_up;
        f->delay_s = d.delay;
        f->rows = m->l.s->rows[w];
        f->corrupt = d.corrupt;
        f->round = m->l.p.round;
        m->pend[m->npend++] = w;
        return;
    }
    f->compute_end = m->now + d.down + d.compute;
    f->sent_end = f->compute_end + d.delay;
    f->compute_s = d.compute + d.delay; /* a worker times both */
    f->delay_s = d.delay;
    f->rows = m->l.s->rows[w];
    f->corrupt = d.corrupt;
    if (isinf(d.delay))
        return; /* it hangs: its answer never comes */
    if (simq_push(&m->q,
                  (struct simq_event){f->sent_end + d.up, w, m->l.p.round}) < 0)
        sim_fail(m, "out of memory for the event queue");
}

/* Close the round: the algorithm writes the next query, which becomes
 * current.  0 or -1 (the run is then failed). */
static int finish_round(struct sim *m)
{
    int next = 1 - m->cur;
    charge_slices(m, 0, m->l.s->shape.query_len, 0);
    if (m->l.r.rank_bytes) /* SHARD_NEXT */
        for (int k = 1; k < m->shards; k++) {
            m->l.r.rank_bytes[2 * k] += sizeof(struct shard_msg);
            m->l.r.rank_bytes[1] += sizeof(struct shard_msg);
        }
    double t = tick(m);
    guard_call("the algorithm's query", 0);
    int rc = lead_query(&m->l, m->qbuf[next]);
    guard_call(NULL, 0);
    m->plugin_s += tick(m) - t;
    if (rc < 0)
        return -1;
    m->l.r.prev = m->qbuf[m->cur];
    m->l.r.query = m->qbuf[next];
    m->cur = next;
    proto_end_round(&m->l.p, m->now);
    return seal(m);
}

/* lead_ops: the simulator's transport (session/lead.h); its clock is
 * m->now, which every call's time equals. */
static int op_send(struct lead *l, int w, double now)
{
    (void)now;
    send_query((struct sim *)l, w); /* a failure fails the run itself */
    return 0;
}

static int op_next(struct lead *l, double now)
{
    (void)now;
    return finish_round((struct sim *)l);
}

static const struct lead_ops sim_ops = {.send = op_send, .next = op_next};

static void on_answer(struct sim *m, int w, uint64_t round)
{
    struct simworker *k = &m->sp.w[w];
    const struct flight *f = &m->fl[w];
    struct aia_error err;
    if (m->shards > 1) {
        size_t b = rank0_bytes(m, m->l.s->shape.answer_len);
        m->l.st[w].recv_payload += b;
        m->l.st[w].recv_encoded += b;
    } else {
        m->l.st[w].recv_payload += m->l.s->shape.answer_len * sizeof(double);
        m->l.st[w].recv_encoded += k->bytes;
    }
    m->l.st[w].recv_msgs++;
    charge_slices(m, 0, m->l.s->shape.answer_len, 1);
    struct lead_answer a = {.round = round,
                            .compute_s = f->compute_s,
                            .delay_s = f->delay_s,
                            .rows = f->rows,
                            .values = k->up ? k->up : k->answer};
    if (k->enc) {
        if (codec_decode(&m->acodec, k->enc, k->bytes, m->adec, &err) < 0) {
            sim_fail(m, "rank %d: an answer that does not decode (%s)",
                     m->l.s->ranks[w], err.text);
            return;
        }
        a.values = m->adec;
    }
    guard_call("the algorithm's absorb (or the end of the round after it)",
               0);
    lead_answer(&m->l, w, &a, m->now);
    guard_call(NULL, 0);
}

/* The answer of event ev arrives. */
static void take(struct sim *m, const struct simq_event *ev)
{
    int w = ev->w;
    if (proto_lost_worker(&m->l.p, w))
        return; /* never read again, as under MPI */
    charge_slices(m, 1, 0, 1);
    count_slices(m, m->l.s->shape.answer_len, 1);
    if (m->working)
        m->copied += m->fl[w].copy_up; /* simulate.cores */
    if (m->fl[w].corrupt && !proto_untrusted(&m->l.p, w)) {
        /* stragglers.corrupt: as under MPI, not trusted any more */
        lead_distrust(&m->l, w, "not an aiarun message",
                      sizeof(struct wire_hdr) + m->sp.w[w].bytes);
        return;
    }
    switch (proto_check(&m->l.p, w, ev->round)) {
    case PROTO_ACCEPT:
        on_answer(m, w, ev->round);
        break;
    case PROTO_LATE:
        m->l.st[w].late++;
        proto_late(&m->l.p, w);
        break;
    case PROTO_DISCARD:
        m->l.st[w].discarded++;
        break;
    case PROTO_DISTRUST:
        /* simulated workers answer only what they were sent */
        sim_fail(m, "rank %d: an answer to a query it was not sent",
                 m->l.s->ranks[w]);
    }
}

/* A worker declared dead (lead_reap): its answers are never read, as the
 * MPI driver never reads them; nothing is left to let go. */
static void let_dead_go(struct lead *l, int w)
{
    (void)l;
    (void)w;
}

/* Whether the wait condition ends the round now.  A round that no answer
 * reached ends only once the clock has moved, so that a condition that
 * holds at once cannot end rounds forever at one instant. */
static int ready(struct sim *m)
{
    const struct setup *s = m->l.s;
    if (m->l.job->pool.mode != JOB_ROUNDS ||
        (m->l.p.arrived == 0 && m->now <= m->l.p.round_t0))
        return 0;
    return proto_ready(&m->l.p, s->wait, s->wait_s, m->now);
}

/* The run: events in time order until a stop rule holds. */
static void loop(struct sim *m)
{
    const struct setup *s = m->l.s;
    while (!m->l.p.why) {
        if (guard_signal) { /* as the MPI driver's loop: a stop rule */
            proto_stop(&m->l.p, "signal");
            break;
        }
        /* a death may end the round as an answer does */
        double deadline =
            fmin(m->stop_at, lead_reap(&m->l, m->now, let_dead_go));
        if (!m->l.p.why && ready(m)) {
            guard_call("the end of a round (query, loss, checkpoint)", 0);
            work_begin(m);
            lead_end_round(&m->l, m->now);
            work_end(m);
            guard_call(NULL, 0);
            continue;
        }
        if (m->l.p.why)
            break;
        if (m->l.job->pool.mode == JOB_ROUNDS)
            deadline = fmin(deadline,
                            proto_deadline(&m->l.p, s->wait, s->wait_s, m->now));
        const struct simq_event *top = simq_peek(&m->q);
        if (top && top->t <= deadline) {
            struct simq_event ev;
            simq_pop(&m->q, &ev);
            m->events++;
            if (ev.t > m->now)
                m->now = ev.t; /* else it waited for rank 0 */
            work_begin(m);
            take(m, &ev);
            work_end(m);
            recorder_failed(m, record_progress(&m->l.r, m->now));
        } else if (isinf(deadline)) {
            sim_fail(m, "no answer can come: every busy worker hangs, and "
                        "neither pool.dead_after nor stop.time ends the "
                        "run");
            break;
        } else {
            /* a deadline is met only strictly after it, as a clock that
             * moves on would meet it */
            m->now = deadline > m->now ? deadline : nextafter(m->now, INFINITY);
        }
        if (!m->l.p.why && proto_time_up(&m->l.p, &m->l.job->stop, m->now)) {
            /* answers absorbed since the last query make one more,
             * partial, round, as under MPI */
            work_begin(m);
            if (m->l.p.arrived > 0 && finish_round(m) == 0)
                recorder_failed(m, record_iteration(&m->l.r, 0, m->now));
            work_end(m);
            proto_stop(&m->l.p, "time");
        }
    }
}

/* After the stop: the answers in flight that a worker still sends are
 * late (its compute was running, or its answer had left, when the STOP
 * reached it); one in an injected delay is dropped, as a worker under
 * MPI drops it.  A hung worker busy for far longer than it usually takes
 * is unresponsive, as the MPI driver reports it. */
static void drain(struct sim *m)
{
    struct simq_event ev;
    while (simq_pop(&m->q, &ev) == 0) {
        int w = ev.w;
        const struct flight *f = &m->fl[w];
        if (proto_lost_worker(&m->l.p, w) || !m->l.p.busy[w])
            continue;
        double stop =
            m->now + latency_trip(&m->sp.w[w].lat, sizeof(struct wire_hdr));
        if (f->compute_end >= stop || f->sent_end <= stop)
            m->l.st[w].late++;
        proto_late(&m->l.p, w);
    }
    lead_flag_unresponsive(&m->l, m->now);
}

/* A worker a run under mpirun could not stop: declared dead, or hung in
 * its step at the stop. */
static int sim_left(struct lead *l, int w)
{
    const struct sim *m = (const struct sim *)l;
    return proto_lost_worker(&l->p, w) ||
           (l->p.busy[w] && isinf(m->fl[w].sent_end));
}

/* The final loss, files and report, as rank 0 of a run writes them; then,
 * as there, the ranks a real run would leave behind. */
static void finish(struct sim *m)
{
    guard_call("the end of the run (final loss, checkpoint, report)", 0);
    lead_final(&m->l, m->now);
    m->l.r.t_end = m->now;
    drain(m);
    lead_report(&m->l);
    lead_left_behind(&m->l, sim_left);
    guard_call(NULL, 0);
}

/* Stopped by a signal (the stop rule "signal"): SIGUSR1 asks for a stop
 * as at a limit, exit status 0; any other ends the run as under mpirun,
 * its history, checkpoint and summary written, exit status 1. */
static void signalled(struct sim *m)
{
    const char *ck = m->l.job->output.checkpoint;
    if (m->l.p.why != proto_stop_rule("signal"))
        return;
    if (guard_signal == SIGUSR1) {
        host_error("stopped by SIGUSR1%s%s", ck ? "; checkpoint in " : "",
                   ck ? ck : "");
        return;
    }
    host_error("stopped by signal %d%s%s", (int)guard_signal,
               ck ? "; checkpoint in " : "", ck ? ck : "");
    m->l.status = RUN_FAILED;
}

/* Which key bounds a plugin call now, for the watchdog's message. */
static const char *bound_key;

/* The watchdog (guard.c): one plugin call has not returned.  A
 * simulation runs every rank in this thread, so nothing can go on past
 * it: say which call of which rank, keep the history rows written so far
 * (stdio holds whole rows between plugin calls) and end the process. */
static void hung(const char *what, int rank, double seconds)
{
    host_error("%s of rank %d has not returned after %g s (%s): a "
               "simulation cannot go past a call that never returns; "
               "ending it with exit status %d, no summary",
               what, rank, seconds, bound_key, RUN_FAILED);
    fflush(NULL);
    _exit(RUN_FAILED);
}

/* Bound every plugin call from here on by the key name's seconds. */
static void watch(const char *name, double seconds)
{
    guard_unwatch();
    bound_key = name;
    if (guard_watch(seconds, hung) < 0)
        host_error("cannot start the watchdog: plugin calls unbounded");
}

static int alloc(struct sim *m, struct aia_error *err)
{
    struct setup *s = &m->sp.s;
    const struct job *job = s->job;
    if (lead_init(&m->l, s, &m->acodec, &sim_ops, err) < 0)
        return -1;
    m->timed = host_verbosity() >= AIA_LOG_INFO ||
               job->simulate.coordinator == LATENCY_COORD_MEASURED;
    m->l.timed = m->timed;
    m->l.r.eval_timed = job->simulate.coordinator == LATENCY_COORD_MEASURED;
    size_t qlen = s->shape.query_len, alen = s->shape.answer_len;
    if (codec_init(&m->qcodec, job->codec.query, qlen, 0, job->codec.level,
                   err) < 0 ||
        codec_init(&m->acodec, job->codec.answer, alen,
                   codec_topk_count(job->codec.topk, alen), job->codec.level,
                   err) < 0)
        return -1;
    m->shards = s->shards > 1 ? s->shards : 1;
    if (m->shards > 1) {
        m->free_at = calloc((size_t)m->shards, sizeof *m->free_at);
        m->charged_k = calloc((size_t)m->shards, sizeof *m->charged_k);
        m->busy_k = calloc((size_t)m->shards, sizeof *m->busy_k);
        m->l.r.rank_bytes = calloc(2 * (size_t)m->shards, sizeof(uint64_t));
        m->l.r.nranks = m->shards;
        if (!m->free_at || !m->charged_k || !m->busy_k || !m->l.r.rank_bytes)
            return aia_seterr(err, "out of memory for %d shards", m->shards);
    }
    m->fl = calloc((size_t)m->l.n, sizeof *m->fl);
    m->pend = calloc((size_t)m->l.n, sizeof *m->pend);
    m->qbuf[0] = calloc(qlen + 1, sizeof(double));
    m->qbuf[1] = calloc(qlen + 1, sizeof(double));
    if (!m->fl || !m->pend || !m->qbuf[0] || !m->qbuf[1] ||
        (job->codec.query != CODEC_NONE &&
         !(m->qenc = malloc(codec_bound(&m->qcodec) + 1))) ||
        (job->codec.answer != CODEC_NONE &&
         !(m->adec = malloc((alen + 1) * sizeof *m->adec))))
        return aia_seterr(err, "out of memory for %d workers", m->l.n);
    simq_init(&m->q);
    return 0;
}

static void sim_free(struct sim *m)
{
    free(m->free_at);
    free(m->charged_k);
    free(m->busy_k);
    free(m->l.r.rank_bytes);
    m->l.r.rank_bytes = NULL;
    lead_free(&m->l);
    simq_free(&m->q);
    codec_free(&m->qcodec);
    codec_free(&m->acodec);
    free(m->fl);
    free(m->pend);
    free(m->qbuf[0]);
    free(m->qbuf[1]);
    free(m->qenc);
    free(m->adec);
    simpool_close(&m->sp);
}

/* A request summed over the simulated workers' rows. */
static int pool_sum(void *ctx, const double *q, double *sum,
                    struct aia_error *err)
{
    struct simpool *sp = ctx;
    size_t dim = sp->s.dim;
    size_t len = REFOPT_PART_LEN(dim);
    double *part = malloc(len * sizeof *part);
    if (!part)
        return aia_seterr(err, "out of memory");
    memset(sum, 0, len * sizeof *sum);
    for (int w = 0; w < sp->n; w++) {
        struct aia_error e = {""};
        refopt_part(sp->s.prob, sp->w[w].prob_s, dim, q, part, &e);
        if (e.text[0])
            host_log(AIA_LOG_INFO, "problem '%s': the reference optimum: %s",
                     sp->s.prob->h.name, util_error_text(&e));
        for (size_t j = 0; j < len; j++)
            sum[j] += part[j];
    }
    free(part);
    return 0;
}

/* The reference optimum over the workers' rows, when the job wants one
 * (session/refopt.h): the coordinator's problem is the same rows, but
 * the workers' are what an mpirun would use. */
static int reference(struct sim *m, struct aia_error *err)
{
    struct setup *s = &m->sp.s;
    if (!refopt_wanted(s, 0))
        return 0;
    if (!(s->ref = calloc(1, sizeof *s->ref)))
        return aia_seterr(err, "out of memory");
    return refopt_solve(s->ref, s->dim, pool_sum, &m->sp, err);
}

/* Up to the first sends: plugins, buffers, the first query and, when
 * simulate.compute is measured, the compute time per row. */
static int start(struct sim *m, struct aia_error *err)
{
    const struct setup *s = &m->sp.s;
    const struct job *job = s->job;
    if (alloc(m, err) < 0 || reference(m, err) < 0)
        return -1;
    record_optimum(&m->l.r);
    if (record_check(&m->l.r) < 0 ||
        (s->resume && record_read_resume(&m->l.r) < 0))
        return aia_seterr(err, "%s", m->l.r.err.text);
    err->text[0] = '\0';
    const struct checkpoint *k = &m->l.r.resume;
    guard_call(s->resume ? "the algorithm's load" : "the algorithm's init", 0);
    int rc = s->resume ? s->alg->load(s->alg_s, k->state, k->state_len, err)
                       : s->alg->init(s->alg_s, m->qbuf[0], err);
    guard_call(NULL, 0);
    if (rc < 0) {
        char text[AIA_ERROR_LEN];
        snprintf(text, sizeof text, "%s", util_error_text(err));
        return aia_seterr(err, "%salgorithm '%s': %s: %s",
                          s->resume ? "cannot resume: " : "", s->alg->h.name,
                          s->resume ? "load" : "init", text);
    }
    if (s->resume) {
        /* on from the checkpoint, as under mpirun (query.c): the
         * algorithm's state and query, the counters; the workers and the
         * simulated machine start afresh */
        memcpy(m->qbuf[0], k->query, k->query_len * sizeof *k->query);
        lead_resume_counters(&m->l);
    }
    if (job->simulate.compute == LATENCY_MEASURED) {
        double row_s;
        if (simpool_measure(&m->sp, m->qbuf[0], &row_s, err) < 0)
            return -1;
        for (int w = 0; w < m->l.n; w++)
            latency_init(&m->sp.w[w].lat, job, w, s->ranks[w], s->rows[w],
                         row_s);
        host_log(AIA_LOG_WARN,
                 "simulate.compute: measured %.4g us a row "
                 "(simulate.row_us: %.4g gives the same times "
                 "on any machine)",
                 row_s * 1e6, row_s * 1e6);
    }
    if (record_open(&m->l.r) < 0)
        return aia_seterr(err, "%s", m->l.r.err.text);
    return 0;
}

static int simulate(struct job *job, int n, int resume)
{
    struct sim m = {.l.status = RUN_OK};
    struct aia_error err;
    double t0 = util_now();
    guard_catch_signals(); /* before any plugin is opened */
    watch("pool.setup_timeout", job->pool.setup_timeout);
    int opened = simpool_open(&m.sp, job, n, &err) == 0;
    m.sp.s.resume = resume;
    if (!opened || start(&m, &err) < 0) {
        guard_unwatch();
        host_error("%s", err.text);
        sim_free(&m);
        return RUN_BAD_JOB;
    }
    /* a call of the run holds every simulated rank, as a silent
     * coordinator holds a run's workers: bounded as they wait for it
     * (pool.dead_after counts virtual seconds here, and a real call
     * stalled by a loaded machine must not end a healthy run) */
    watch("pool.coordinator_timeout", job->pool.coordinator_timeout);
    double t1 = util_now();
    m.l.r.query = m.qbuf[0];
    m.l.r.progress_at = 1.0; /* progress for runs over a virtual second */
    m.l.r.ckpt_at = job->output.checkpoint_seconds;
    /* a resumed run's clock goes on from the checkpoint's (virtual
     * seconds when a simulation wrote it), its time limit with it */
    double elapsed = m.l.r.resumed ? m.l.r.resume.elapsed : 0;
    proto_start(&m.l.p, m.l.r.resumed ? m.l.p.round : 1, 0, elapsed);
    m.stop_at = job->stop.time > 0 ? job->stop.time - elapsed : INFINITY;
    guard_call("the first history row (the loss)", 0);
    int begun = seal(&m) == 0 && lead_begin(&m.l, m.now) == 0;
    guard_call(NULL, 0);
    if (begun) {
        work_begin(&m);
        for (int w = 0; w < n && !m.l.p.why; w++)
            if (m.l.p.direct[w])
                send_query(&m, w);
        work_end(&m);
        loop(&m);
    }
    if (job->simulate.coordinator != LATENCY_COORD_NONE && m.now > 0)
        m.l.r.coord_busy = fmin(1.0, m.busy_s / m.now);
    for (int k = 1; k < m.shards && m.now > 0 &&
                    job->simulate.coordinator != LATENCY_COORD_NONE;
         k++) /* the busiest rank's */
        m.l.r.coord_busy = fmax(m.l.r.coord_busy, fmin(1.0, m.busy_k[k] / m.now));
    if (job->simulate.coordinator == LATENCY_COORD_MEASURED && m.doubles > 0 &&
        m.msgs > 0)
        host_log(AIA_LOG_WARN,
                 "simulate.coordinator: measured rank 0 busy %.4g s for %.0f "
                 "messages and %.4g doubles (simulate.coordinator_us: %.4g "
                 "with coordinator_ns: 0, or coordinator_us: 0 with "
                 "coordinator_ns: %.4g, give the same busy time on any "
                 "machine)",
                 m.busy_s, m.msgs, m.doubles, m.busy_s / m.msgs * 1e6,
                 m.busy_s / m.doubles * 1e9);
    if (m.l.r.coord_busy >= 0.9)
        host_log(AIA_LOG_WARN,
                 "rank 0 was busy %.0f%% of the virtual time "
                 "(simulate.coordinator): the coordinator, not the workers, "
                 "set the pace",
                 100 * m.l.r.coord_busy);
    double t2 = util_now();
    signalled(&m);
    finish(&m);
    guard_unwatch();
    double run = t2 - t1, plugin_s = m.plugin_s + m.l.plugin_s;
    host_log(AIA_LOG_INFO,
             "simulated %d workers: set up in %.3f s; %llu events, %.6g "
             "virtual s in %.3f s (%.0f events/s), of which the plugins' "
             "steps %.3f s, the simulator %.3f us an event (with the clock "
             "read around each plugin call, for these figures)",
             n, t1 - t0, (unsigned long long)m.events, m.now, run,
             run > 0 ? (double)m.events / run : 0.0, plugin_s,
             m.events ? (run - plugin_s) / (double)m.events * 1e6 : 0.0);
    int status = m.l.status;
    sim_free(&m);
    return status;
}

int sim_main(const char *path, const char *const *overrides, int n,
             int resume)
{
    struct aia_error err;
    size_t len;
    host_setup(0, host_verbosity()); /* speaks as rank 0 of a run */
    char *text = util_read_file(path, MAX_JOB_FILE, &len, &err);
    struct job *job = text ? job_load(path, text, len, overrides, &err) : NULL;
    free(text);
    /* the outputs checked as mpirun's start checks them: none an input
     * (a history over the job file overwrote it) */
    if (!job || job_check_outputs(job, &err) < 0) {
        host_error("%s", err.text);
        job_free(job);
        return RUN_BAD_JOB;
    }
    int status = simulate(job, n, resume);
    job_free(job);
    return status;
}
