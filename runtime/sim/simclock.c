/* simclock.c - rank 0's time in the simulator (simulate.coordinator).
 *
 * Rank 0's own work (taking an answer, absorbing it, writing the next
 * query, sending it) moves the virtual clock: a query leaves when the
 * work before it is done, and answers that arrive while rank 0 works wait
 * in the queue, so that a saturated coordinator shows as one, busy near
 * all of the run (the summary's coordinator_busy).  With pool.shards the
 * algorithm runs whole (its iterate is the same), but each coordinator
 * rank's share of the work (its slice of every message taken, absorbed,
 * written and sent) is charged to a clock of its own: a query leaves when
 * every rank has done its part, and the busiest rank's share of the run
 * is the summary's coordinator_busy.  With simulate.cores the ranks share
 * one node's cores: the workers sent a query in one piece of rank 0's
 * work are planned together at its end, their copies and steps sharing
 * the cores with those still computing and with rank 0's piece (each of
 * k running ranks at cores/k of its speed); a piece of rank 0's work
 * takes k/cores times as long when k ranks run as it starts; an answer's
 * bytes are rank 0's to copy as it takes it.
 */
#include <config.h>

#include <math.h>

#include "core/util.h"
#include "latency.h"
#include "simint.h"

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
void simclock_begin(struct sim *m)
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
void simclock_charge(struct sim *m, size_t msgs, size_t len, int tail)
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
double simclock_now(struct sim *m)
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
void simclock_end(struct sim *m)
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
    m->now = simclock_now(m);
    m->busy_s += m->now - m->work_t0;
    m->working = 0;
    if (m->npend)
        plan(m, m->now);
}
