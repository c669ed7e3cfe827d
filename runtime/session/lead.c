/* lead.c - the coordinator's side of a session, for both drivers.
 *
 * The protocol's decisions are proto.c's and the outputs record.c's; what
 * lies between them and the algorithm (an answer absorbed, a round ended,
 * a worker distrusted or declared dead, the run failed) is written here
 * once, so that mpirun and --simulate end a job the same way.  The drivers
 * supply sends and the next query's buffer (struct lead_ops) and the
 * clock (every call takes its time).
 */
#include <config.h>

#include "lead.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/diverge.h"
#include "core/host.h"
#include "core/util.h"
#include "facts.h"
#include "record/report.h"

int lead_init(struct lead *l, struct setup *s, const struct codec *acodec,
              const struct lead_ops *ops, struct aia_error *err)
{
    const struct job *job = s->job;
    l->s = s;
    l->job = job;
    l->n = s->nworkers;
    l->ops = ops;
    l->status = RUN_OK;
    memset(&l->call_err, 0, sizeof l->call_err);
    if (!(l->st = calloc((size_t)l->n, sizeof *l->st)) ||
        proto_init(&l->p, l->n, job->pool.mode,
                   job->pool.topology == JOB_TREE ? job->pool.arity : 0,
                   s->ranks, err) < 0 ||
        record_init(&l->r, s, &l->p, l->st, acodec) < 0)
        return aia_seterr(err, "out of memory for %d workers", l->n);
    for (int w = 0; w < l->n; w++) {
        l->st[w].rank = s->ranks[w];
        l->st[w].hidden = !l->p.direct[w];
    }
    return 0;
}

void lead_free(struct lead *l)
{
    record_free(&l->r);
    proto_free(&l->p);
    free(l->st);
    l->st = NULL;
}

void lead_fail(struct lead *l, const char *fmt, ...)
{
    if (proto_failed(&l->p))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err.text, sizeof l->err.text, fmt, ap);
    va_end(ap);
    host_error("%s", l->err.text);
    proto_fail(&l->p);
    l->status = RUN_FAILED;
}

/* The recorder's failure fails the run. */
static int recorded(struct lead *l, int rc)
{
    if (rc < 0)
        lead_fail(l, "%s", l->r.err.text);
    return rc;
}

int lead_query(struct lead *l, double *query)
{
    const struct setup *s = l->s;
    struct aia_error *e = &l->call_err;
    e->text[0] = '\0';
    if (s->alg->query(s->alg_s, query, e) == 0)
        return 0;
    lead_fail(l, "algorithm '%s': query: %s", s->alg->h.name,
              util_error_text(e));
    return -1;
}

/* The stop rules' measures: the recorder's, a failure failing the run. */
static double measure_change(void *ctx)
{
    return record_change(&((struct lead *)ctx)->r);
}

static int measure_loss(void *ctx, double *loss)
{
    struct lead *l = ctx;
    return recorded(l, record_loss(&l->r, loss));
}

void lead_resume_counters(struct lead *l)
{
    const struct checkpoint *k = &l->r.resume;
    l->p.iteration = l->r.saved = l->r.ckpt_iter = k->iteration;
    l->p.epoch = l->r.saved_epoch = k->epoch;
    l->p.round = k->round;
}

int lead_begin(struct lead *l, double now)
{
    if (recorded(l, record_iteration(&l->r, RECORD_FIRST, now)) < 0)
        return -1;
    /* the initial loss that bounds the others */
    if (l->job->stop.diverge > 0 && measure_loss(l, &(double){0}) < 0)
        return -1;
    return 0;
}

void lead_end_round(struct lead *l, double now)
{
    if (l->ops->next(l, now) < 0)
        return;
    recorded(l, record_iteration(&l->r, 0, now));
    recorded(l, record_checkpoint(&l->r, 0, now));
    /* a step far larger than the first ones: the loss says whether the
     * run diverged */
    if (diverge_change(&l->r.dv, l->job->stop.diverge,
                       record_change_watch(&l->r)) &&
        measure_loss(l, &(double){0}) < 0)
        return;
    struct proto_measure m = {.ctx = l,
                              .change = measure_change,
                              .loss = measure_loss,
                              .fopt = l->r.fopt};
    const struct proto_stop_rule *why = proto_stop_check(&l->p, &l->job->stop, &m);
    if (why) {
        record_stopped(&l->r, why);
        return;
    }
    for (int w = proto_next_idle(&l->p, 0); w >= 0 && !l->p.why;
         w = proto_next_idle(&l->p, w + 1))
        if (l->ops->send(l, w, now) < 0)
            lead_fail(l, "cannot send a query to rank %d", l->s->ranks[w]);
}

void lead_answer(struct lead *l, int w, const struct lead_answer *a,
                 double now)
{
    const struct setup *s = l->s;
    double rtt;
    uint64_t staleness = proto_answer(&l->p, w, a->round, now, &rtt);
    stats_answer(&l->st[w], staleness, rtt, a->compute_s, a->delay_s);
    recorded(l, record_answer(&l->r, w, a->round, staleness, a->compute_s,
                              a->delay_s, rtt, now));
    struct aia_answer_info info = {
        .rank = s->ranks[w],
        .worker = w,
        .round = l->p.round,
        .sent_round = a->round,
        .staleness = staleness,
        .rows = a->rows,
        .total_rows = s->total_rows,
        .compute_s = a->compute_s,
    };
    struct aia_error *e = &l->call_err;
    e->text[0] = '\0';
    if (l->ops->absorbed)
        l->ops->absorbed(l, w, &info);
    double t = l->timed ? util_now() : 0;
    int rc = s->alg->absorb(s->alg_s, a->values, &info, e);
    if (l->timed) /* two clock reads an answer only where they are used */
        l->plugin_s += util_now() - t;
    if (rc < 0) {
        lead_fail(l, "algorithm '%s': absorb (answer of rank %d): %s",
                  s->alg->h.name, s->ranks[w], util_error_text(e));
        return;
    }
    switch (proto_absorbed(&l->p, w, staleness)) {
    case PROTO_END_ROUND:
        lead_end_round(l, now);
        break;
    case PROTO_RESEND:
        if (l->ops->send(l, w, now) < 0)
            lead_fail(l, "cannot send a query to rank %d", s->ranks[w]);
        break;
    case PROTO_WAIT:
        break;
    }
}

void lead_distrust(struct lead *l, int w, const char *why, size_t bytes)
{
    l->st[w].discarded++;
    int live = proto_distrust(&l->p, w);
    host_error("rank %d sent %s (%zu bytes): not trusted any more; going on "
               "with %d workers",
               l->s->ranks[w], why, bytes, live);
    if (live == 0)
        lead_fail(l, "no worker of the pool is left to trust");
}

void lead_nonfinite(struct lead *l, int w, uint64_t round, size_t index,
                    double value)
{
    char text[AIA_ERROR_LEN];
    l->st[w].discarded++; /* received, not absorbed */
    /* L is found once, then kept (as for the loss's divergence) */
    diverge_answer(text, sizeof text, l->s->ranks[w], l->s->alg->h.name,
                   round, index, value,
                   facts_smoothness((struct setup *)l->s));
    lead_fail(l, "stopping: %s", text);
}

void lead_dead(struct lead *l, int w, const char *why)
{
    int live = proto_dead(&l->p, w);
    host_error("rank %d %s; going on with %d workers", l->s->ranks[w], why,
               live);
    if (live == 0)
        lead_fail(l, "every worker of the pool is dead");
}

double lead_reap(struct lead *l, double now, void (*dead)(struct lead *, int))
{
    double next = INFINITY;
    int w;
    while ((w = proto_overdue(&l->p, now, l->job->pool.dead_after, &next)) >=
           0) {
        char why[96];
        snprintf(why, sizeof why,
                 "declared dead: silent for %.3g s (pool.dead_after)",
                 now - l->p.sent_at[w]);
        lead_dead(l, w, why);
        dead(l, w);
    }
    return next;
}

void lead_final(struct lead *l, double now)
{
    if (proto_failed(&l->p))
        return;
    recorded(l, record_iteration(&l->r, RECORD_LAST, now));
    recorded(l, record_checkpoint(&l->r, 1, now));
}

void lead_flag_unresponsive(struct lead *l, double t_end)
{
    for (int w = 0; w < l->n; w++) {
        struct wstats *st = &l->st[w];
        if (!l->p.busy[w] || proto_lost_worker(&l->p, w))
            continue;
        double out = t_end - l->p.sent_at[w];
        double usual = st->rtt.count ? hist_quantile(&st->rtt, 0.99) : 0;
        if (out > fmax(10 * usual, 1.0))
            st->unresponsive = 1;
    }
}

static void report_failed(void *ctx, const char *text)
{
    lead_fail(ctx, "%s", text);
}

void lead_report(struct lead *l)
{
    report_end(&l->r, l->status == RUN_OK, report_failed, l);
    if (l->r.incomplete && l->status == RUN_OK)
        l->status = RUN_PARTIAL;
}

int lead_left_behind(struct lead *l, int (*left)(struct lead *, int))
{
    char list[256] = "";
    size_t used = 0;
    int any = 0;
    for (int w = 0; w < l->n; w++) {
        if (!left(l, w))
            continue;
        any = 1;
        if (used < sizeof list - 12)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d",
                                     used ? ", " : "", l->s->ranks[w]);
    }
    if (!any)
        return 0;
    if (l->status == RUN_OK)
        l->status = RUN_INCOMPLETE;
    host_error("the run ended (its outputs above are complete), but rank(s) "
               "%s were left behind (declared dead or not stopped) and may "
               "still be running: the job cannot end normally, so it is "
               "aborted with exit status %d",
               list, l->status);
    return 1;
}
