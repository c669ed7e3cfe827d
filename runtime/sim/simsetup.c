/* simsetup.c - the simulator's set-up and end around its event loop
 * (sim.c): its buffers, the plugins' first call or a checkpoint's load,
 * the reference optimum over the simulated workers' rows, the measured
 * compute time per row, the watchdog over plugin calls, and a stop by
 * signal. */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/host.h"
#include "core/util.h"
#include "latency.h"
#include "record/record.h"
#include "session/guard.h"
#include "session/refopt.h"
#include "simint.h"

/* As under mpirun, the history, checkpoint and summary are written
 * either way. */
void sim_signalled(struct sim *m)
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

void sim_watch(const char *name, double seconds)
{
    guard_unwatch();
    bound_key = name;
    if (guard_watch(seconds, hung) < 0)
        host_error("cannot start the watchdog: plugin calls unbounded");
}

static int alloc(struct sim *m, const struct lead_ops *ops,
                 struct aia_error *err)
{
    struct setup *s = &m->sp.s;
    const struct job *job = s->job;
    if (lead_init(&m->l, s, &m->acodec, ops, err) < 0)
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

void sim_free(struct sim *m)
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

int sim_start(struct sim *m, const struct lead_ops *ops,
              struct aia_error *err)
{
    const struct setup *s = &m->sp.s;
    const struct job *job = s->job;
    if (alloc(m, ops, err) < 0 || reference(m, err) < 0)
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
