/* report.c - what rank 0 says of a run, the same under mpirun and
 * --simulate: its progress lines while it runs; at its end the files
 * closed, the final loss and iterate, what ran and why it stopped (-v),
 * the summary line and the per-worker table. */
#include <config.h>

#include "report.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/stats.h"

/* "name=value" for each parameter (only_given: each the job sets), on
 * one line. */
static void print_args(const struct aia_value *v, int only_given)
{
    for (; v && v->name; v++) {
        if (only_given && !v->given)
            continue;
        printf(" %s=", v->name);
        switch (v->type) {
        case AIA_INT:
            printf("%lld", (long long)v->i);
            break;
        case AIA_BOOL:
            printf("%s", v->i ? "true" : "false");
            break;
        case AIA_DOUBLE:
            if (v->s) /* a word in place of a number ("auto") */
                printf("%s", v->s);
            else
                printf("%g", v->d);
            break;
        case AIA_STRING:
        case AIA_ENUM:
            printf("%s", v->s);
            break;
        case AIA_INTS:
        case AIA_DOUBLES:
            printf("[");
            for (size_t i = 0; i < v->n; i++) {
                if (v->type == AIA_INTS)
                    printf("%s%lld", i ? ", " : "", (long long)v->ints[i]);
                else
                    printf("%s%g", i ? ", " : "", v->doubles[i]);
            }
            printf("]");
            break;
        }
    }
    printf("\n");
}

static void print_plugin(const char *what, const struct plugin *p,
                         const struct aia_value *args)
{
    printf("  %-10s %s %s (%s):", what, p->h->name, p->h->version, p->path);
    print_args(args, 0);
}

static void print_stragglers(const struct job_stragglers *st)
{
    printf("  %-10s", "stragglers");
    if (!st->work && !st->nfixed && !st->random_p && !st->markov &&
        !st->nhang && !st->nslow) {
        printf(" none\n");
        return;
    }
    if (st->work)
        printf(" work %g ms;", st->work * 1e3);
    for (size_t i = 0; i < st->nfixed; i++)
        printf(" rank %lld +%g ms;", (long long)st->fixed[i],
               st->fixed_delay[st->nfixed_delay == 1 ? 0 : i]);
    if (st->random_p)
        printf(" any answer +%g ms with p %g;", st->random_delay * 1e3,
               st->random_p);
    if (st->markov)
        printf(" bursts +%g ms (p_slow %g, p_fast %g);", st->markov_delay * 1e3,
               st->p_slow, st->p_fast);
    for (size_t i = 0; i < st->nslow; i++)
        printf(" rank %lld x%g per row;", (long long)st->slow[i],
               st->slow_factor[st->nslow_factor == 1 ? 0 : i]);
    for (size_t i = 0; i < st->nhang; i++)
        printf(" rank %lld hangs after %lld answers;", (long long)st->hang[i],
               (long long)st->hang_after);
    printf("\n");
}

/* Bytes the coordinator sent and received: payloads as doubles, encoded,
 * and on the wire (headers included). */
struct traffic {
    uint64_t sent_payload, sent_encoded, sent_wire;
    uint64_t recv_payload, recv_encoded, recv_wire;
    double ratio; /* payloads as doubles over encoded, headers apart */
};

static struct traffic traffic(const struct recorder *r)
{
    /* from the start of the run: a resumed one's go on from its
     * checkpoint's, as its iterations and time do */
    uint64_t c[CHECKPOINT_TRAFFIC];
    record_traffic(r, c);
    struct traffic t = {.sent_payload = c[0],
                        .sent_encoded = c[1],
                        .sent_wire = c[2],
                        .recv_payload = c[3],
                        .recv_encoded = c[4],
                        .recv_wire = c[5]};
    uint64_t enc = t.sent_encoded + t.recv_encoded;
    t.ratio =
        enc ? (double)(t.sent_payload + t.recv_payload) / (double)enc : 1.0;
    return t;
}

/* pool.shards: the bytes coordinator rank k received (sent: 1) over
 * the run: rank 0's with the workers and with the shard ranks, a shard
 * rank's as it counted them. */
static uint64_t rank_bytes(const struct recorder *r, const struct traffic *t,
                           int k, int sent)
{
    uint64_t b = r->rank_bytes[2 * k + sent];
    if (k == 0)
        b += sent ? t->sent_wire : t->recv_wire;
    return b;
}

static void print_rank_bytes(const struct recorder *r, const char *sep)
{
    struct traffic t = traffic(r);
    for (int sent = 0; sent < 2; sent++) {
        printf("%scoord_%s_bytes=", sep, sent ? "sent" : "recv");
        for (int k = 0; k < r->nranks; k++)
            printf("%s%llu", k ? "," : "",
                   (unsigned long long)rank_bytes(r, &t, k, sent));
    }
}

static void print_traffic(const struct recorder *r)
{
    const struct job *job = r->job;
    struct traffic t = traffic(r);
    printf("  %-10s sent %llu (queries as %s; %llu as doubles), received "
           "%llu (answers as %s",
           "bytes", (unsigned long long)t.sent_wire,
           codec_name(job->codec.query), (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire, codec_name(job->codec.answer));
    if (job->codec.answer == CODEC_TOPK)
        printf(" %zu of %zu", r->acodec->k, r->acodec->n);
    printf("; %llu as doubles); compression ratio %.3g\n",
           (unsigned long long)t.recv_payload, t.ratio);
    if (!r->rank_bytes)
        return;
    for (int k = 0; k < r->nranks; k++)
        printf("  %-10s rank %d (slice %zu to %zu): received %llu, sent "
               "%llu\n",
               k ? "" : "shards", k, r->s->slice[k], r->s->slice[k + 1],
               (unsigned long long)rank_bytes(r, &t, k, 0),
               (unsigned long long)rank_bytes(r, &t, k, 1));
}

/* loss - optimum, 0 where it is within the rounding of the two: each is
 * a mean over the rows, whose sum of m terms is exact to about m units
 * in the last place, so a difference below (rows + columns) x epsilon x
 * their size is no difference (a negative gap of 4e-13 on 2,000 rows was
 * rounding, not a loss below the optimum).  A larger negative one is
 * printed as it is: the optimum is then wrong. */
static double suboptimality(const struct recorder *r, double loss)
{
    double d = loss - r->fopt;
    double tol = (double)(r->s->total_rows + r->s->dim) * DBL_EPSILON *
                 fmax(fabs(loss), fabs(r->fopt));
    return fabs(d) <= tol ? 0 : d;
}

/* What ran, why it stopped, and where it ended. */
static void report(struct recorder *r, const char *why, double loss)
{
    const struct setup *s = r->s;
    const struct job *job = r->job;
    const struct proto *p = r->p;
    printf("aiarun %s: %s, %d ranks: coordinator 0, %d workers, %s mode",
           PACKAGE_VERSION, job->m->path, s->size, s->nworkers,
           job->pool.mode == JOB_ASYNC ? "async" : "rounds");
    if (job->pool.topology == JOB_TREE)
        printf(", a tree of arity %d (the table's rows are the "
               "coordinator's children, each for its subtree)",
               job->pool.arity);
    printf("\n");
    print_plugin("algorithm", s->alg_p, s->alg_args);
    if (job->data.path) { /* a generator's parameters do not apply */
        printf("  %-10s %s %s (%s): reads problem.data", "problem",
               s->prob_p->h->name, s->prob_p->h->version, s->prob_p->path);
        print_args(s->prob_args, 1);
    } else {
        print_plugin("problem", s->prob_p, s->prob_args);
    }
    /* the file's features and the model's length differ (pca's is cols
     * x k): each named for what it is; a generator's are the problem's */
    printf("  %-10s %zu rows", "data", s->total_rows);
    if (job->data.path)
        printf(" of %zu features", s->data.d.cols);
    printf(", a model of %zu values, %s partition%s%s\n", s->dim,
           job->part.scheme == AIA_PART_CYCLIC ? "cyclic" : "block",
           job->data.path ? ", from " : " (generated)",
           job->data.path ? job->data.path : "");
    if (s->facts.smoothness > 0 && s->facts.largest > 0)
        printf("  %-10s L = %.6g, the row-weighted mean of the workers' "
               "(%.6g to %.6g)\n",
               "smoothness", s->facts.smoothness, s->facts.smallest,
               s->facts.largest);
    else if (s->facts.smoothness > 0) /* facts_smoothness, on rank 0 */
        printf("  %-10s L = %.6g, the problem's, computed on the "
               "coordinator's rows\n",
               "smoothness", s->facts.smoothness);
    const char *rule;
    double h = host_step(&rule);
    if (!isnan(h))
        printf("  %-10s %.6g: %s\n", "step", h, rule);
    const char *key, *note;
    for (int i = 0; (note = host_note(i, &key)); i++)
        printf("  %-10s %s\n", key, note);
    if (job->pool.mode == JOB_ROUNDS)
        print_plugin("wait", s->wait_p, s->wait_args);
    print_stragglers(&job->stragglers);
    if (r->resumed)
        printf("  %-10s from %s at iteration %lld (%.3f s)\n", "resumed",
               job->output.checkpoint, (long long)r->resume.iteration,
               r->resume.elapsed);
    printf("  %-10s %s after %.3f s: %lld iterations, %lld epochs, %llu "
           "answers\n",
           "stopped", why, r->t_end - p->t0, (long long)p->iteration,
           (long long)p->epoch, (unsigned long long)record_answers(r));
    if (r->end_judged)
        printf("  %-10s the iterate of iteration %lld, whose evaluation on "
               "every row met the stop rule (the run went on to iteration "
               "%lld while the workers evaluated it)\n",
               "result", (long long)r->judged_at, (long long)p->iteration);
    print_traffic(r);
    if (p->dead)
        printf("  %-10s %d worker%s declared dead; the run went on with "
               "the others\n",
               "dead", p->dead, p->dead > 1 ? "s" : "");
    if (!isnan(loss) && r->opt_known)
        printf("  %-10s %.10g (optimum %.10g, suboptimality %.3e)\n", "loss",
               loss, r->fopt, suboptimality(r, loss));
    else if (!isnan(loss))
        printf("  %-10s %.10g (optimum unknown: %s)\n", "loss", loss,
               r->opt_why.text);
    if (r->opt_known && r->s->ref)
        printf("  %-10s found by %s\n", "optimum", r->s->ref->how);
    if (r->evaluate && r->ev_missing)
        printf("  %-10s by the workers on %llu of the %zu rows (%d "
               "worker%s missing: %s rows are left out): the loss is "
               "incomplete, partial loss %.10g\n",
               "evaluated", (unsigned long long)r->ev_rows, s->total_rows,
               r->ev_missing, r->ev_missing > 1 ? "s" : "",
               r->ev_missing > 1 ? "their" : "its", r->ev[0]);
    else if (r->evaluate)
        printf("  %-10s by the workers on their %llu rows\n", "evaluated",
               (unsigned long long)r->ev_rows);
    if (r->evaluate && job->test.path) {
        printf("  %-10s %s: %sloss %.10g", "test", job->test.path,
               r->ev_missing ? "partial " : "", r->ev[2]);
        if (s->metric_name)
            printf(", %s %.10g", s->metric_name, r->ev[3]);
        printf("\n");
    }
}

/* Write the final model (r->x, set by record_loss) to output.final. */
static int write_final(struct recorder *r)
{
    struct aia_error err;
    if (output_values(r->job->output.final, r->x, r->s->dim, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return 0;
}

/* output.workers: the per-worker table, in whole rows (a full disk cuts
 * it back to the last one written).  0, or -1 with r->err. */
static int write_workers(struct recorder *r)
{
    size_t len;
    char *text = stats_csv(r->st, r->p->n, &len);
    struct aia_error err;
    if (!text)
        return aia_seterr(&r->err, "%s: out of memory for the worker table",
                          r->job->output.workers);
    int rc = output_text(r->job->output.workers, text, len, &err);
    free(text);
    return rc < 0 ? aia_seterr(&r->err, "%s", err.text) : 0;
}

/* The report (unless quiet), the per-worker table and the summary line
 * on stdout.  0, or -1 with r->err when the metric failed. */
static int summary(struct recorder *r, const char *why, double loss)
{
    const struct proto *p = r->p;
    int rc = 0;
    if (host_verbosity() > AIA_LOG_ERROR) {
        report(r, why, loss);
        stats_table(stdout, r->st, p);
    }
    for (int w = 0; w < p->n; w++)
        if (r->st[w].unresponsive)
            host_error("rank %d is unresponsive: busy with the query of "
                       "round %llu for %.3g s at the stop",
                       r->s->ranks[w], (unsigned long long)p->sent[w],
                       r->t_end - p->sent_at[w]);
    uint64_t late = 0;
    for (int w = 0; w < p->n; w++)
        late += r->st[w].late;
    /* NaN as "nan" whatever its sign (0/0 is -nan) */
    printf("stop=%s iterations=%lld epochs=%lld answers=%llu late=%llu "
           "time=%.6f loss=%.10g",
           why, (long long)p->iteration, (long long)p->epoch,
           (unsigned long long)record_answers(r), (unsigned long long)late,
           r->t_end - p->t0, isnan(loss) ? NAN : loss);
    if (r->end_judged)
        printf(" result_iteration=%lld", (long long)r->judged_at);
    if (r->opt_known) {
        /* proto_gap's, but 0 where the difference is rounding */
        double gap = isnan(loss)                   ? NAN
                     : suboptimality(r, loss) == 0 ? 0
                                                   : proto_gap(loss, r->fopt);
        printf(" optimum=%.10g gap=%.3e", r->fopt, gap);
    }
    if (r->evaluate) {
        /* an evaluation that missed rows is no loss: its figures go
         * under names of their own (aiarun(1), Summary line) */
        const char *mn = r->s->metric_name, *pre = "";
        if (r->ev_missing) {
            pre = "partial_";
            printf(" partial_loss=%.10g evaluated_rows=%llu rows=%zu",
                   isnan(r->ev[0]) ? NAN : r->ev[0],
                   (unsigned long long)r->ev_rows, r->s->total_rows);
        }
        if (mn && !isnan(r->ev[1]))
            printf(" %s%s=%.10g", pre, mn, r->ev[1]);
        if (r->job->test.path && !isnan(r->ev[2]))
            printf(" %stest_loss=%.10g", pre, r->ev[2]);
        if (r->job->test.path && mn && !isnan(r->ev[3]))
            printf(" %stest_%s=%.10g", pre, mn, r->ev[3]);
        if (r->ev_missing)
            printf(" missing=%d", r->ev_missing);
    } else if (r->s->offers & AIA_OFFER_METRIC && !isnan(loss)) {
        double m;
        rc = record_metric(r, &m);
        if (!isnan(m))
            printf(" %s=%.10g", r->s->metric_name, m);
    }
    if (!isnan(r->coord_busy))
        printf(" coordinator_busy=%.4f", r->coord_busy);
    struct traffic t = traffic(r);
    printf(" sent_bytes=%llu sent_payload=%llu recv_bytes=%llu "
           "recv_payload=%llu ratio=%.4f",
           (unsigned long long)t.sent_wire, (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire, (unsigned long long)t.recv_payload,
           t.ratio);
    if (r->rank_bytes)
        print_rank_bytes(r, " ");
    printf("\n");
    fflush(stdout);
    return rc;
}

void report_end(struct recorder *r, int ok,
                void (*fail)(void *ctx, const char *text), void *ctx)
{
    const struct job *job = r->job;
    const struct proto_stop_rule *why = r->p->why;
    int signal = why == proto_stop_rule("signal");
    double loss = NAN;
    if (record_close(r) < 0) {
        fail(ctx, r->err.text);
        ok = 0;
    }
    if ((ok || signal) && record_loss(r, &loss) < 0) {
        fail(ctx, r->err.text);
        ok = 0;
        loss = NAN;
    }
    /* a run stopped as diverged names the loss that stopped it, as its
     * error line does */
    if (!ok && !signal && isnan(loss))
        loss = r->fail_loss;
    r->incomplete = r->evaluate && r->ev_missing;
    /* the model is written whenever the run ended well, also when its
     * loss is unknown (the workers' evaluation of it did not come back in
     * time): the loss is then unknown, not wrong */
    if ((ok || signal) && job->output.final && write_final(r) < 0)
        fail(ctx, r->err.text);
    if (why && why->keyed)
        host_log(AIA_LOG_INFO, "stopped: %s (stop.%s)", why->text, why->name);
    else if (why)
        host_log(AIA_LOG_INFO, "stopped: %s", why->text);
    if (summary(r, why ? why->name : "none", loss) < 0)
        fail(ctx, r->err.text);
    if (job->output.workers && write_workers(r) < 0)
        fail(ctx, r->err.text);
}

/* The progress line's share of the run: " of N, P%, S s left" after the
 * iteration, from the stop limits (iterations, epochs, time) that make
 * one computable; the largest share done, and the time left by the
 * limit that comes first at the pace so far. */
static void progress_done(const struct recorder *r, double elapsed, char *buf,
                          size_t len)
{
    const struct proto_limits *lim = &r->job->stop;
    double f[3] = {-1, -1, -1};
    if (lim->iterations > 0)
        f[0] = (double)r->p->iteration / (double)lim->iterations;
    if (lim->epochs > 0)
        f[1] = (double)r->p->epoch / (double)lim->epochs;
    if (lim->time > 0)
        f[2] = elapsed / lim->time;
    double most = -1, left = INFINITY;
    for (int i = 0; i < 3; i++) {
        if (f[i] < 0)
            continue;
        most = fmax(most, fmin(f[i], 1.0));
        if (f[i] > 0)
            left = fmin(left, elapsed * fmax(0.0, 1.0 - f[i]) / f[i]);
    }
    size_t n = 0;
    if (lim->iterations > 0)
        n = (size_t)snprintf(buf, len, " of %lld", (long long)lim->iterations);
    if (most >= 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", %.0f%%", 100 * most);
    if (isfinite(left) && n < len)
        snprintf(buf + n, len - n, ", %.0f s left", left);
}

int record_progress(struct recorder *r, double now)
{
    if (now < r->progress_at)
        return 0;
    if (host_verbosity() <= AIA_LOG_ERROR ||
        host_progress() == HOST_PROGRESS_OFF) {
        /* never due: the wait loop must not wake for it */
        r->progress_at = INFINITY;
        return 0;
    }
    double elapsed = now - r->p->t0, loss;
    if (record_loss(r, &loss) < 0)
        return -1;
    /* the latest evaluation read a sample: its loss, so marked */
    const char *on = r->evaluate && r->ev_sampled && !r->ev_missing
                         ? " (sampled rows)" : "";
    if (*on)
        loss = r->ev[0];
    /* the workers' loss is their latest evaluation's, up to
     * output.every iterations old: the line says of which iteration */
    int64_t loss_it = r->evaluate ? r->ev_at : r->p->iteration;
    char line[320], done[80] = "", at[48] = "";
    progress_done(r, elapsed, done, sizeof done);
    if (loss_it != r->p->iteration)
        snprintf(at, sizeof at, loss_it < 0 ? " (none yet)" : " at iteration %lld",
                 (long long)loss_it);
    snprintf(line, sizeof line,
             "iteration %lld%s, epoch %lld, %.1f s, loss %.6g%s%s, %.0f "
             "answers/s",
             (long long)r->p->iteration, done, (long long)r->p->epoch, elapsed,
             loss, on, at, (double)record_answers(r) / elapsed);
    if (r->progress_tty) {
        /* one line, rewritten in place */
        fprintf(stderr, "\raiarun[0]: progress: %s\033[K", line);
        fflush(stderr);
        r->progress_at = now + 0.25;
    } else {
        host_log(AIA_LOG_WARN, "progress: %s", line);
        r->progress_at = now + (elapsed < 10 ? 1 : 10);
    }
    return 0;
}
