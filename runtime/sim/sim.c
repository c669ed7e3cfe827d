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
 */
#include <config.h>

#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/proto.h"
#include "record/record.h"
#include "record/report.h"
#include "simpool.h"
#include "simq.h"
#include "core/util.h"
#include "core/wire.h"

#define MAX_JOB_FILE (16u << 20)

/* What is in flight to and from one worker. */
struct flight {
    double compute_end;        /* when its compute ends (the delay follows) */
    double sent_end;           /* when its answer leaves it */
    double compute_s, delay_s; /* as its answer's header would say */
    size_t rows;               /* the rows its answer stands for */
    int corrupt;               /* it arrives malformed */
};

struct sim {
    struct simpool sp;
    struct setup *s;
    const struct job *job;
    int n;
    struct proto p;
    struct recorder r;
    struct wstats *st;
    struct flight *fl;
    unsigned char *dead; /* declared dead: its answers are not read */
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
    int status;
};

static void sim_fail(struct sim *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Stop the run with an error (printed at once); the first one wins. */
static void sim_fail(struct sim *m, const char *fmt, ...)
{
    if (!proto_fail(&m->p))
        return;
    char text[AIA_ERROR_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    host_error("%s", text);
    m->status = RUN_FAILED;
}

static void recorder_failed(struct sim *m, int rc)
{
    if (rc < 0)
        sim_fail(m, "%s", m->r.err.text);
}

/* Give the current query its encoding when the job has a query codec. */
static int seal(struct sim *m)
{
    m->qbytes = m->s->shape.query_len * sizeof(double);
    if (!m->qenc)
        return 0;
    struct aia_error err;
    if (codec_encode(&m->qcodec, m->qbuf[m->cur], m->qenc, &m->qbytes, &err) <
        0) {
        sim_fail(m, "query of round %llu: %s", (unsigned long long)m->p.round,
                 err.text);
        return -1;
    }
    return 0;
}

/* Tree mode: worker w, a child of the coordinator, is sent the current
 * query; its subtree's answer arrives when the slowest path allows. */
static void send_subtree(struct sim *m, int w)
{
    struct simsub sub;
    struct aia_error err;
    double t = util_now();
    double back = simpool_subtree(&m->sp, w, m->qbuf[m->cur], m->p.round,
                                  m->now, &sub, &err);
    m->plugin_s += util_now() - t;
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
        simq_push(&m->q, (struct simq_event){back, w, m->p.round}) < 0)
        sim_fail(m, "out of memory for the event queue");
}

/* Send worker w the current query: it answers at once, and the answer
 * arrives when its latency model says. */
static void send_query(struct sim *m, int w)
{
    struct simworker *k = &m->sp.w[w];
    struct aia_error err;
    m->st[w].sent_payload += m->s->shape.query_len * sizeof(double);
    m->st[w].sent_encoded += m->qbytes;
    m->st[w].queries++;
    proto_sent(&m->p, w, m->now);
    if (m->job->topology == JOB_TREE) {
        send_subtree(m, w);
        return;
    }
    double t = util_now();
    int rc = simpool_answer(&m->sp, w, m->qbuf[m->cur], m->qenc, m->qbytes,
                            m->p.round, &err);
    m->plugin_s += util_now() - t;
    if (rc < 0) {
        sim_fail(m, "stopping: %s", err.text);
        return;
    }
    struct latency_draw d;
    latency_next(&k->lat, sizeof(struct wire_hdr) + m->qbytes,
                 sizeof(struct wire_hdr) + k->bytes, &d);
    struct flight *f = &m->fl[w];
    f->compute_end = m->now + d.down + d.compute;
    f->sent_end = f->compute_end + d.delay;
    f->compute_s = d.compute + d.delay; /* a worker times both */
    f->delay_s = d.delay;
    f->rows = m->s->rows[w];
    f->corrupt = d.corrupt;
    if (isinf(d.delay))
        return; /* it hangs: its answer never comes */
    if (simq_push(&m->q,
                  (struct simq_event){f->sent_end + d.up, w, m->p.round}) < 0)
        sim_fail(m, "out of memory for the event queue");
}

/* The stop rules' measures: the recorder's, a failure failing the run. */
static double measure_change(void *ctx)
{
    return record_change(&((struct sim *)ctx)->r);
}

static int measure_loss(void *ctx, double *loss)
{
    struct sim *m = ctx;
    if (record_loss(&m->r, loss) == 0)
        return 0;
    sim_fail(m, "%s", m->r.err.text);
    return -1;
}

/* Close the round: the algorithm writes the next query, which becomes
 * current.  0 or -1 (the run is then failed). */
static int finish_round(struct sim *m)
{
    const struct setup *s = m->s;
    struct aia_error err = {""};
    int next = 1 - m->cur;
    double t = util_now();
    int rc = s->alg->query(s->alg_s, m->qbuf[next], &err);
    m->plugin_s += util_now() - t;
    if (rc < 0) {
        sim_fail(m, "algorithm '%s': query: %s", s->alg->h.name,
                 util_error_text(&err));
        return -1;
    }
    m->r.prev = m->qbuf[m->cur];
    m->r.query = m->qbuf[next];
    m->cur = next;
    proto_end_round(&m->p, m->now);
    return seal(m);
}

/* End the round and send its successor to every idle worker. */
static void end_round(struct sim *m)
{
    if (finish_round(m) < 0)
        return;
    recorder_failed(m, record_iteration(&m->r, 0, m->now));
    struct proto_measure measure = {m, measure_change, measure_loss, m->r.fopt};
    proto_stop_check(&m->p, &m->job->stop, &measure);
    if (m->p.why)
        return;
    for (int w = 0; w < m->n && !m->p.why; w++)
        if (proto_idle(&m->p, w))
            send_query(m, w);
}

static void on_answer(struct sim *m, int w, uint64_t round)
{
    const struct setup *s = m->s;
    struct simworker *k = &m->sp.w[w];
    const struct flight *f = &m->fl[w];
    struct aia_error err;
    double rtt;
    m->st[w].recv_payload += s->shape.answer_len * sizeof(double);
    m->st[w].recv_encoded += k->bytes;
    m->st[w].recv_msgs++;
    uint64_t staleness = proto_answer(&m->p, w, round, m->now, &rtt);
    stats_answer(&m->st[w], staleness, rtt, f->compute_s, f->delay_s);
    recorder_failed(m, record_answer(&m->r, w, round, staleness, f->compute_s,
                                     f->delay_s, rtt, m->now));
    const double *a = k->up ? k->up : k->answer;
    if (k->enc) {
        if (codec_decode(&m->acodec, k->enc, k->bytes, m->adec, &err) < 0) {
            sim_fail(m, "rank %d: an answer that does not decode (%s)",
                     s->ranks[w], err.text);
            return;
        }
        a = m->adec;
    }
    struct aia_answer_info info = {
        .rank = s->ranks[w],
        .worker = w,
        .round = m->p.round,
        .sent_round = round,
        .staleness = staleness,
        .rows = f->rows,
        .total_rows = s->total_rows,
        .compute_s = f->compute_s,
    };
    double t = util_now();
    err.text[0] = '\0';
    int rc = s->alg->absorb(s->alg_s, a, &info, &err);
    m->plugin_s += util_now() - t;
    if (rc < 0) {
        sim_fail(m, "algorithm '%s': absorb (answer of rank %d): %s",
                 s->alg->h.name, s->ranks[w], util_error_text(&err));
        return;
    }
    switch (proto_absorbed(&m->p, w, staleness)) {
    case PROTO_END_ROUND:
        end_round(m);
        break;
    case PROTO_RESEND:
        send_query(m, w);
        break;
    case PROTO_WAIT:
        break;
    }
}

/* Worker w sent a malformed answer (stragglers.corrupt): as under MPI,
 * it is not trusted any more and gets no more queries. */
static void distrust(struct sim *m, int w)
{
    size_t bytes = sizeof(struct wire_hdr) + m->sp.w[w].bytes;
    m->st[w].untrusted = 1;
    m->st[w].discarded++;
    int live = proto_distrust(&m->p, w);
    host_error("rank %d sent not an aiarun message (%zu bytes): not trusted "
               "any more; going on with %d workers",
               m->s->ranks[w], bytes, live);
    if (live == 0)
        sim_fail(m, "no worker of the pool is left to trust");
}

/* The answer of event ev arrives. */
static void take(struct sim *m, const struct simq_event *ev)
{
    int w = ev->w;
    if (m->dead[w])
        return; /* never read again, as under MPI */
    if (m->fl[w].corrupt && !m->st[w].untrusted) {
        distrust(m, w);
        return;
    }
    switch (proto_check(&m->p, w, ev->round)) {
    case PROTO_ACCEPT:
        on_answer(m, w, ev->round);
        break;
    case PROTO_LATE:
        m->st[w].late++;
        proto_late(&m->p, w);
        break;
    case PROTO_DISCARD:
        m->st[w].discarded++;
        break;
    case PROTO_DISTRUST:
        /* simulated workers answer only what they were sent */
        sim_fail(m, "rank %d: an answer to a query it was not sent",
                 m->s->ranks[w]);
    }
}

/* Busy workers silent past pool.dead_after are dead; returns when the
 * next one would be. */
static double reap(struct sim *m)
{
    double next = INFINITY;
    int w;
    while (!m->p.why &&
           (w = proto_overdue(&m->p, m->now, m->job->dead_after, &next)) >= 0) {
        m->dead[w] = 1;
        m->st[w].dead = 1;
        host_error("rank %d declared dead: silent for %.3g s "
                   "(pool.dead_after); going on with %d workers",
                   m->s->ranks[w], m->now - m->p.sent_at[w], m->p.live - 1);
        if (proto_dead(&m->p, w) == 0)
            sim_fail(m, "every worker of the pool is dead");
    }
    return next;
}

/* Whether the wait condition ends the round now.  A round that no answer
 * reached ends only once the clock has moved, so that a condition that
 * holds at once cannot end rounds forever at one instant. */
static int ready(struct sim *m)
{
    const struct setup *s = m->s;
    if (m->job->mode != JOB_ROUNDS ||
        (m->p.arrived == 0 && m->now <= m->p.round_t0))
        return 0;
    return proto_ready(&m->p, s->wait, s->wait_s, m->now);
}

/* The run: events in time order until a stop rule holds. */
static void loop(struct sim *m)
{
    const struct setup *s = m->s;
    while (!m->p.why) {
        /* a death may end the round as an answer does */
        double deadline = fmin(m->stop_at, reap(m));
        if (!m->p.why && ready(m)) {
            end_round(m);
            continue;
        }
        if (m->p.why)
            break;
        if (m->job->mode == JOB_ROUNDS)
            deadline = fmin(deadline,
                            proto_deadline(&m->p, s->wait, s->wait_s, m->now));
        const struct simq_event *top = simq_peek(&m->q);
        if (top && top->t <= deadline) {
            struct simq_event ev;
            simq_pop(&m->q, &ev);
            m->events++;
            if (ev.t > m->now)
                m->now = ev.t;
            take(m, &ev);
            recorder_failed(m, record_progress(&m->r, m->now));
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
        if (!m->p.why && proto_time_up(&m->p, &m->job->stop, m->now)) {
            /* answers absorbed since the last query make one more,
             * partial, round, as under MPI */
            if (m->p.arrived > 0 && finish_round(m) == 0)
                recorder_failed(m, record_iteration(&m->r, 0, m->now));
            proto_stop(&m->p, "time");
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
        if (m->dead[w] || !m->p.busy[w])
            continue;
        double stop =
            m->now + latency_trip(&m->sp.w[w].lat, sizeof(struct wire_hdr));
        if (f->compute_end >= stop || f->sent_end <= stop)
            m->st[w].late++;
        proto_late(&m->p, w);
    }
    for (int w = 0; w < m->n; w++) {
        struct wstats *st = &m->st[w];
        if (!m->p.busy[w] || m->dead[w])
            continue;
        double usual = st->rtt.count ? hist_quantile(&st->rtt, 0.99) : 0;
        if (m->now - m->p.sent_at[w] > fmax(10 * usual, 1.0))
            st->unresponsive = 1;
    }
}

static void end_failed(void *ctx, const char *text)
{
    sim_fail(ctx, "%s", text);
}

/* The final loss, files and report, as rank 0 of a run writes them. */
static void finish(struct sim *m)
{
    if (!proto_failed(&m->p))
        recorder_failed(m, record_iteration(&m->r, 1, m->now));
    m->r.t_end = m->now;
    drain(m);
    report_end(&m->r, !proto_failed(&m->p), end_failed, m);
}

static int alloc(struct sim *m, struct aia_error *err)
{
    const struct setup *s = m->s;
    const struct job *job = m->job;
    size_t qlen = s->shape.query_len, alen = s->shape.answer_len;
    if (codec_init(&m->qcodec, job->codec_query, qlen, 0, job->codec_level,
                   err) < 0 ||
        codec_init(&m->acodec, job->codec_answer, alen,
                   codec_topk_count(job->codec_topk, alen), job->codec_level,
                   err) < 0)
        return -1;
    m->st = calloc((size_t)m->n, sizeof *m->st);
    m->fl = calloc((size_t)m->n, sizeof *m->fl);
    m->dead = calloc((size_t)m->n, 1);
    m->qbuf[0] = calloc(qlen + 1, sizeof(double));
    m->qbuf[1] = calloc(qlen + 1, sizeof(double));
    if (!m->st || !m->fl || !m->dead || !m->qbuf[0] || !m->qbuf[1] ||
        (job->codec_query != CODEC_NONE &&
         !(m->qenc = malloc(codec_bound(&m->qcodec) + 1))) ||
        (job->codec_answer != CODEC_NONE &&
         !(m->adec = malloc((alen + 1) * sizeof *m->adec))))
        return aia_seterr(err, "out of memory for %d workers", m->n);
    for (int w = 0; w < m->n; w++)
        m->st[w].rank = s->ranks[w];
    if (proto_init(&m->p, m->n, job->mode,
                   job->topology == JOB_TREE ? job->arity : 0, s->ranks,
                   err) < 0 ||
        record_init(&m->r, s, &m->p, m->st, &m->acodec) < 0)
        return aia_seterr(err, "out of memory for %d workers", m->n);
    simq_init(&m->q);
    return 0;
}

static void sim_free(struct sim *m)
{
    record_free(&m->r);
    proto_free(&m->p);
    simq_free(&m->q);
    codec_free(&m->qcodec);
    codec_free(&m->acodec);
    free(m->st);
    free(m->fl);
    free(m->dead);
    free(m->qbuf[0]);
    free(m->qbuf[1]);
    free(m->qenc);
    free(m->adec);
    simpool_close(&m->sp);
}

/* Up to the first sends: plugins, buffers, the first query and, when
 * simulate.compute is measured, the compute time per row. */
static int start(struct sim *m, struct aia_error *err)
{
    const struct setup *s = m->s;
    const struct job *job = m->job;
    if (alloc(m, err) < 0)
        return -1;
    record_optimum(&m->r);
    if (record_check(&m->r) < 0)
        return aia_seterr(err, "%s", m->r.err.text);
    err->text[0] = '\0';
    if (s->alg->init(s->alg_s, m->qbuf[0], err) < 0) {
        char text[AIA_ERROR_LEN];
        snprintf(text, sizeof text, "%s", util_error_text(err));
        return aia_seterr(err, "algorithm '%s': init: %s", s->alg->h.name,
                          text);
    }
    if (job->simulate.compute == LATENCY_MEASURED) {
        double row_s;
        if (simpool_measure(&m->sp, m->qbuf[0], &row_s, err) < 0)
            return -1;
        for (int w = 0; w < m->n; w++)
            latency_init(&m->sp.w[w].lat, job, w, s->ranks[w], s->rows[w],
                         row_s);
        host_log(AIA_LOG_WARN,
                 "simulate.compute: measured %.4g us a row "
                 "(simulate.row_us: %.4g gives the same times "
                 "on any machine)",
                 row_s * 1e6, row_s * 1e6);
    }
    if (record_open(&m->r) < 0)
        return aia_seterr(err, "%s", m->r.err.text);
    return 0;
}

static int simulate(struct job *job, int n)
{
    struct sim m = {.job = job, .n = n, .status = RUN_OK};
    struct aia_error err;
    m.s = &m.sp.s;
    double t0 = util_now();
    if (simpool_open(&m.sp, job, n, &err) < 0 || start(&m, &err) < 0) {
        host_error("%s", err.text);
        sim_free(&m);
        return RUN_BAD_JOB;
    }
    double t1 = util_now();
    m.r.query = m.qbuf[0];
    m.r.progress_at = 1.0; /* progress for runs over a virtual second */
    proto_start(&m.p, 1, 0, 0);
    m.stop_at = job->stop.time > 0 ? job->stop.time : INFINITY;
    if (seal(&m) == 0) {
        recorder_failed(&m, record_iteration(&m.r, 1, m.now));
        for (int w = 0; w < n && !m.p.why; w++)
            if (m.p.direct[w])
                send_query(&m, w);
            else
                m.st[w].hidden = 1;
        loop(&m);
    }
    double t2 = util_now();
    finish(&m);
    double run = t2 - t1;
    host_log(AIA_LOG_INFO,
             "simulated %d workers: set up in %.3f s; %llu events, %.6g "
             "virtual s in %.3f s (%.0f events/s), of which the plugins' "
             "steps %.3f s, the simulator %.3f us an event",
             n, t1 - t0, (unsigned long long)m.events, m.now, run,
             run > 0 ? (double)m.events / run : 0.0, m.plugin_s,
             m.events ? (run - m.plugin_s) / (double)m.events * 1e6 : 0.0);
    int status = m.status;
    sim_free(&m);
    return status;
}

int sim_main(const char *path, const char *const *overrides, int n)
{
    struct aia_error err;
    size_t len;
    char *text = util_read_file(path, MAX_JOB_FILE, &len, &err);
    struct job *job = text ? job_load(path, text, len, overrides, &err) : NULL;
    free(text);
    if (!job) {
        host_error("%s", err.text);
        return RUN_BAD_JOB;
    }
    host_setup(0, host_verbosity());
    int status = simulate(job, n);
    job_free(job);
    return status;
}
