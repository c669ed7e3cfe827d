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
 * Rank 0's own work moves the clock too (simclock.c); the set-up and
 * the end around the loop are simsetup.c's.
 */
#include <config.h>

#include "sim.h"

#include <math.h>
#include <stdlib.h>

#include "core/host.h"
#include "core/proto.h"
#include "session/guard.h"
#include "record/record.h"
#include "session/lead.h"
#include "latency.h"
#include "simpool.h"
#include "simint.h"
#include "simq.h"
#include "core/util.h"
#include "core/wire.h"

#define MAX_JOB_FILE (16u << 20)

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
    simclock_charge(m, 1, 0, 0);
    m->now = simclock_now(m); /* it leaves once the work before it is done */
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
    simclock_charge(m, 0, m->l.s->shape.query_len, 0);
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
    simclock_charge(m, 0, m->l.s->shape.answer_len, 1);
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
    simclock_charge(m, 1, 0, 1);
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
            simclock_begin(m);
            lead_end_round(&m->l, m->now);
            simclock_end(m);
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
            simclock_begin(m);
            take(m, &ev);
            simclock_end(m);
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
            simclock_begin(m);
            if (m->l.p.arrived > 0 && finish_round(m) == 0)
                recorder_failed(m, record_iteration(&m->l.r, 0, m->now));
            simclock_end(m);
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

static int simulate(struct job *job, int n, int resume)
{
    struct sim m = {.l.status = RUN_OK};
    struct aia_error err;
    double t0 = util_now();
    guard_catch_signals(); /* before any plugin is opened */
    sim_watch("pool.setup_timeout", job->pool.setup_timeout);
    int opened = simpool_open(&m.sp, job, n, &err) == 0;
    m.sp.s.resume = resume;
    if (!opened || sim_start(&m, &sim_ops, &err) < 0) {
        guard_unwatch();
        host_error("%s", err.text);
        sim_free(&m);
        return RUN_BAD_JOB;
    }
    /* a call of the run holds every simulated rank, as a silent
     * coordinator holds a run's workers: bounded as they wait for it
     * (pool.dead_after counts virtual seconds here, and a real call
     * stalled by a loaded machine must not end a healthy run) */
    sim_watch("pool.coordinator_timeout", job->pool.coordinator_timeout);
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
        simclock_begin(&m);
        for (int w = 0; w < n && !m.l.p.why; w++)
            if (m.l.p.direct[w])
                send_query(&m, w);
        simclock_end(&m);
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
    sim_signalled(&m);
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
