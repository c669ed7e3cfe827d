/* record.c - the recorder (see record.h): the loss and the optimum, the
 * history's rows (their columns are history.c's), the answer log, saved
 * iterates and the checkpoint.  Its progress lines and the report at the
 * end of a run are report.c's. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/facts.h"
#include "core/host.h"
#include "conf/params.h"
#include "history.h"
#include "record.h"
#include "core/util.h"
#include "core/wire.h"

int record_init(struct recorder *r, const struct setup *s,
                const struct proto *p, const struct wstats *st,
                const struct codec *acodec)
{
    *r = (struct recorder){.s = s,
                           .job = s->job,
                           .p = p,
                           .st = st,
                           .acodec = acodec,
                           .saved = -1,
                           .loss_at = -1,
                           .ev_at = -1,
                           .judged_at = -1,
                           .hist_at = -1,
                           .progress_at = INFINITY,
                           .ev = {NAN, NAN, NAN, NAN},
                           .fail_loss = NAN,
                           .coord_busy = NAN};
    size_t total = s->data.d.total_rows;
    r->sampling = output_sample_rows(&s->job->output, s->job->data.path != NULL,
                                     s->job->stop.gap > 0, total, total) > 0;
    /* the model's copies, touched now (on huge pages when large), not by
     * the run's first record */
    r->x = util_alloc_aligned((s->dim ? s->dim : 1) * sizeof *r->x);
    if (!r->x)
        return -1;
    if (s->job->data.path && (s->job->stop.loss > 0 || s->job->stop.gap > 0) &&
        !(r->judged = util_alloc_aligned((s->dim ? s->dim : 1) *
                                         sizeof *r->judged)))
        return -1;
    return 0;
}

void record_free(struct recorder *r)
{
    free(r->x);
    free(r->judged);
    r->x = r->judged = NULL;
    checkpoint_free(&r->resume);
    if (r->ckpt_locked)
        checkpoint_unlock(r->job->output.checkpoint, r->ckpt_fd);
    r->ckpt_locked = 0;
}

int record_model(struct recorder *r)
{
    const struct setup *s = r->s;
    r->err.text[0] = '\0';
    if (r->end_judged) {
        memcpy(r->x, r->judged, s->dim * sizeof *r->x);
        return 0;
    }
    if (r->model)
        return r->model(r->model_ctx, r->x, &r->err);
    if (s->alg->iterate)
        return s->alg->iterate(s->alg_s, r->x, &r->err);
    memcpy(r->x, r->query, s->dim * sizeof *r->x);
    return 0;
}

/* The run diverged at iteration it with this loss: -1 with the error
 * line, the loss kept for the summary. */
static int diverged(struct recorder *r, int64_t it, double loss)
{
    char line[AIA_ERROR_LEN];
    const char *why;
    double step = host_step(&why);
    r->fail_loss = loss;
    return aia_seterr(&r->err, "%s",
                      diverge_message(line, sizeof line, it, 0, loss, &r->dv,
                                      r->job->stop.diverge, step, why,
                                      /* L is found once, then kept */
                                      facts_smoothness((struct setup *)r->s)));
}

int record_loss(struct recorder *r, double *loss)
{
    struct aia_error err = {""};
    if (r->loss_at == r->p->iteration) {
        *loss = r->loss;
        return 0;
    }
    if (record_model(r) < 0) {
        err = r->err;
        return aia_seterr(&r->err, "algorithm '%s': iterate: %s",
                          r->s->alg->h.name, util_error_text(&err));
    }
    if (r->evaluate) {
        /* the workers' latest, unless it missed rows or read a sample
         * (a stop rule never acts on a partial or a sampled loss); the
         * current model's, on every row, is asked for */
        *loss = r->ev_missing || r->ev_sampled ? NAN : r->ev[0];
        return r->evaluate(r->eval_ctx, r->x, NULL, 1);
    }
    double t = r->eval_timed ? util_now() : 0;
    int rc = r->s->prob->loss(r->s->prob_s, r->x, loss, &err);
    if (r->eval_timed)
        r->eval_s += util_now() - t;
    if (rc < 0)
        return aia_seterr(&r->err, "problem '%s': loss: %s",
                          r->s->prob->h.name, util_error_text(&err));
    if (diverge_loss(&r->dv, r->job->stop.diverge, *loss))
        return diverged(r, r->p->iteration, *loss);
    r->loss_at = r->p->iteration;
    r->loss = *loss;
    return 0;
}

double record_change(const struct recorder *r)
{
    /* The previous buffer is intact: the driver reuses a query buffer
     * only after it moved prev along. */
    if (!r->prev)
        return NAN;
    const double *a = r->query, *b = r->prev;
    size_t n = r->s->shape.query_len, j = 0;
    /* four sums, so that each add does not wait for the one before
     * (bench case large: one sum made this 14% of rank 0's time at 1e6
     * doubles) */
    double s[4] = {0, 0, 0, 0};
    for (; j + 4 <= n; j += 4)
        for (int k = 0; k < 4; k++)
            s[k] += (a[j + k] - b[j + k]) * (a[j + k] - b[j + k]);
    for (; j < n; j++)
        s[0] += (a[j] - b[j]) * (a[j] - b[j]);
    double sum = (s[0] + s[1]) + (s[2] + s[3]);
    if (r->shard_change) /* the other slices' */
        sum += r->shard_change(r->model_ctx);
    return sqrt(sum);
}

double record_change_watch(const struct recorder *r)
{
    size_t n = r->s->shape.query_len;
    if (!r->prev || n <= RECORD_CHANGE_EXACT)
        return record_change(r);
    const double *a = r->query, *b = r->prev;
    size_t stride = n / RECORD_CHANGE_SAMPLE, count = 0;
    double s = 0;
    /* the offset moves with the iteration: over stride iterations every
     * value is looked at once */
    for (size_t j = (size_t)r->p->iteration % stride; j < n; j += stride) {
        s += (a[j] - b[j]) * (a[j] - b[j]);
        count++;
    }
    return sqrt(s * (double)n / (double)count);
}

int record_metric(struct recorder *r, double *v)
{
    const struct setup *s = r->s;
    struct aia_error err = {""};
    *v = NAN;
    if (!(s->offers & AIA_OFFER_METRIC))
        return 0;
    double t = r->eval_timed ? util_now() : 0;
    int rc = s->prob->metric(s->prob_s, r->x, v, &err);
    if (r->eval_timed)
        r->eval_s += util_now() - t;
    if (rc < 0) {
        *v = NAN;
        return aia_seterr(&r->err, "problem '%s': %s: %s", s->prob->h.name,
                          s->metric_name, util_error_text(&err));
    }
    return 0;
}

void record_optimum(struct recorder *r)
{
    const struct setup *s = r->s;
    snprintf(r->opt_why.text, sizeof r->opt_why.text,
             "it has no optimum function");
    if (s->ref) { /* found by Newton-CG over the workers' rows */
        r->opt_known = s->ref->known;
        r->fopt = s->ref->f;
        if (!s->ref->known) {
            r->opt_why = s->ref->why;
            host_log(AIA_LOG_INFO, "no optimum to compare with: %s",
                     r->opt_why.text);
        }
        return;
    }
    if (!(s->offers & AIA_OFFER_OPTIMUM))
        return;
    if (r->evaluate && !s->prob->combine) {
        snprintf(r->opt_why.text, sizeof r->opt_why.text,
                 "the rows are the workers' and problem '%s' gives no "
                 "summary of them to combine",
                 s->prob->h.name);
        host_log(AIA_LOG_INFO, "no optimum to compare with: %s",
                 r->opt_why.text);
        return;
    }
    double *xs = calloc(s->dim ? s->dim : 1, sizeof *xs);
    if (xs && s->prob->optimum(s->prob_s, xs, &r->fopt, &r->opt_why) == 0)
        r->opt_known = 1;
    else if (xs)
        host_log(AIA_LOG_INFO, "no optimum to compare with: %s",
                 r->opt_why.text);
    free(xs);
}

static const struct output_column answer_cols[] = {
    {"time", OUT_TIME},     {"rank", OUT_INT},      {"sent_round", OUT_INT},
    {"round", OUT_INT},     {"staleness", OUT_INT}, {"iteration", OUT_INT},
    {"compute", OUT_SHORT}, {"delay", OUT_SHORT},   {"rtt", OUT_SHORT},
};

int record_open(struct recorder *r)
{
    const struct job *job = r->job;
    /* a resumed run appends, from where its checkpoint was written */
    const struct checkpoint *k = &r->resume;
    long long keep_h = r->resumed ? (long long)k->history_bytes : -1;
    long long keep_a = r->resumed ? (long long)k->answers_bytes : -1;
    long long keep_i = r->resumed ? (long long)k->iterates_bytes : -1;
    if (job->output.history && !(r->hist = history_open(r, keep_h, &r->err)))
        return -1;
    if (job->output.answers &&
        !(r->answers = output_open(job->output.answers, job->output.format,
                                   answer_cols, 9, keep_a, &r->err)))
        return -1;
    if (job->output.iterates &&
        !(r->iterates =
              iterates_open(job->output.iterates, r->s->dim, keep_i, &r->err)))
        return -1;
    int mode = host_progress();
    r->progress_tty = mode == HOST_PROGRESS_TTY ||
                      (mode == HOST_PROGRESS_AUTO && isatty(STDERR_FILENO));
    return 0;
}

static int eval_row(struct recorder *r, double *row, int sampled, int again);

/* The loss and the metric of r->x over rank 0's sample of the rows into
 * h (its loss through the divergence detector, as record_loss's).  0 or
 * -1 with r->err. */
static int sample_loss(struct recorder *r, struct sample *h)
{
    const struct setup *s = r->s;
    struct aia_error err = {""};
    double t = r->eval_timed ? util_now() : 0;
    int rc = s->prob->loss(s->sample_s, r->x, &h->loss, &err);
    if (rc < 0)
        aia_seterr(&r->err, "problem '%s': loss (sampled rows): %s",
                   s->prob->h.name, util_error_text(&err));
    else if ((s->offers & AIA_OFFER_METRIC) &&
             (rc = s->prob->metric(s->sample_s, r->x, &h->metric, &err)) < 0)
        aia_seterr(&r->err, "problem '%s': %s (sampled rows): %s",
                   s->prob->h.name, s->metric_name, util_error_text(&err));
    if (r->eval_timed)
        r->eval_s += util_now() - t;
    h->rows = (double)s->prob->rows(s->sample_s);
    if (rc == 0 && diverge_loss(&r->dv, r->job->stop.diverge, h->loss))
        return diverged(r, r->p->iteration, h->loss);
    return rc;
}

int record_iteration(struct recorder *r, int force, double now)
{
    const struct job *job = r->job;
    const struct proto *p = r->p;
    int last = force == RECORD_LAST;
    if (!r->hist && !r->iterates)
        return 0;
    /* the last row reads every row: one on a sample at this iteration is
     * followed by it */
    int again = r->saved == p->iteration;
    if (again && !(last && r->hist && r->saved_sampled))
        return 0;
    int sampled = r->sampling && !last;
    int epochs_due = job->output.every_epochs &&
                     p->epoch / job->output.every_epochs !=
                         r->saved_epoch / job->output.every_epochs;
    if (!force && p->iteration % job->output.every != 0 && !epochs_due)
        return 0;
    /* iteration, epoch, time, and the change once the model is taken */
    double row[4] = {(double)p->iteration, (double)p->epoch, now - p->t0};
    r->saved_sampled = sampled;
    if (r->evaluate)
        return eval_row(r, row, sampled, again);
    struct sample h = {row[0], row[1], row[2], NAN, NAN, NAN, NAN, NAN, NAN};
    int rc;
    if (sampled && r->s->sample_s) {
        if (record_model(r) < 0 || sample_loss(r, &h) < 0)
            return -1;
        rc = 0;
    } else {
        if (record_loss(r, &h.loss) < 0)
            return -1;
        h.rows = (double)r->s->prob->rows(r->s->prob_s);
        rc = record_metric(r, &h.metric);
    }
    h.change = record_change(r);
    struct aia_error err;
    if (r->hist && history_write(r, &h, &err) < 0 && rc == 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    if (r->iterates && !again &&
        iterates_write(r->iterates, p->iteration, p->epoch, row[2], r->x,
                       &err) < 0 &&
        rc == 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    r->saved = p->iteration;
    r->saved_epoch = p->epoch;
    return rc;
}

/* A history row of the workers' loss: the iterate is saved now, the row
 * written when their answers are in. */
static int eval_row(struct recorder *r, double *row, int sampled, int again)
{
    const struct proto *p = r->p;
    struct aia_error err;
    /* the result was evaluated already: its row, on every row, is the
     * last (unless it was written as such), and none of a model the run
     * did not end with */
    if (r->end_judged) {
        if (!r->hist || (r->hist_at == r->judged_at && r->hist_full))
            return 0;
        double at[4] = {r->judged_row[0], r->judged_row[1], r->judged_row[2],
                        NAN};
        return record_evaluated(r, at, r->ev, 0, r->ev_rows, 0);
    }
    if (record_model(r) < 0) {
        err = r->err;
        return aia_seterr(&r->err, "algorithm '%s': iterate: %s",
                          r->s->alg->h.name, util_error_text(&err));
    }
    row[3] = record_change(r);
    r->saved = p->iteration;
    r->saved_epoch = p->epoch;
    if (r->iterates && !again &&
        iterates_write(r->iterates, p->iteration, p->epoch, row[2], r->x,
                       &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return r->hist ? r->evaluate(r->eval_ctx, r->x, row, !sampled) : 0;
}

void record_judged(struct recorder *r, const double *x, const double *at)
{
    if (!r->judged || r->end_judged)
        return;
    memcpy(r->judged, x, r->s->dim * sizeof *x);
    memcpy(r->judged_row, at, sizeof r->judged_row);
    r->judged_at = (int64_t)at[0];
}

void record_stopped(struct recorder *r, const struct proto_stop_rule *why)
{
    if (r->evaluate && r->judged && r->judged_at >= 0 &&
        r->judged_at != r->p->iteration &&
        (why == proto_stop_rule("loss") || why == proto_stop_rule("gap")))
        r->end_judged = 1;
}

int record_evaluated(struct recorder *r, const double *row, const double *vals,
                     int missing, uint64_t rows, int sampled)
{
    /* the judged model's figures are the result's: later evaluations
     * still write their rows */
    if (vals && !r->end_judged) {
        memcpy(r->ev, vals, sizeof r->ev);
        r->ev_missing = missing;
        r->ev_rows = rows;
        r->ev_sampled = sampled;
    }
    /* the workers' loss goes through the divergence detector as the
     * coordinator's own would (a partial one too: its rows' loss grew) */
    if (vals && rows && diverge_loss(&r->dv, r->job->stop.diverge, vals[0]))
        return diverged(r, row ? (int64_t)row[0] : r->p->iteration, vals[0]);
    if (!row || !r->hist)
        return 0;
    /* the history ends with the result: rows of later iterates, asked
     * for while the workers evaluated it, are left out */
    if (r->end_judged && row[0] > (double)r->judged_at)
        return 0;
    /* the evaluation's columns stay empty where it is not the whole
     * loss: an empty loss marks the row (aiarun(5), Outputs) */
    struct sample h = {row[0], row[1], row[2], NAN, row[3],
                       NAN,    NAN,    NAN,    NAN};
    r->rows_behind += !vals;
    r->rows_partial += vals && missing;
    if (vals && !missing)
        h = (struct sample){row[0], row[1],  row[2],  vals[0],     row[3],
                            vals[1], vals[2], vals[3], (double)rows};
    struct aia_error err;
    if (history_write(r, &h, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    r->hist_at = (int64_t)row[0];
    r->hist_full = vals && !missing && !sampled;
    return 0;
}

int record_checkpoint(struct recorder *r, int force, double now)
{
    const struct job *job = r->job;
    const struct setup *s = r->s;
    const struct proto *p = r->p;
    if (!job->output.checkpoint || !r->query)
        return 0;
    int due = force ||
              (job->output.checkpoint_every &&
               p->iteration - r->ckpt_iter >= job->output.checkpoint_every) ||
              (job->output.checkpoint_seconds > 0 && now >= r->ckpt_at);
    if (!due)
        return 0;
    struct aia_error err;
    /* the sizes it records are of whole rows in the files */
    if (output_flush(r->hist, &err) < 0 || output_flush(r->answers, &err) < 0 ||
        iterates_flush(r->iterates, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    size_t len = 0, query_len = s->shape.query_len;
    void *state = NULL;
    double *whole = NULL; /* with shards: the query gathered */
    err.text[0] = '\0';
    if (r->shard_save) {
        if (r->shard_save(r->model_ctx, &state, &len, &whole, &err) < 0)
            return aia_seterr(&r->err, "algorithm '%s': save: %s",
                              s->alg->h.name, util_error_text(&err));
        query_len = s->full.query_len;
    } else {
        len = s->alg->state_size(s->alg_s);
        if (!(state = malloc(len ? len : 1)))
            return aia_seterr(&r->err, "out of memory for the checkpoint");
        if (s->alg->save(s->alg_s, state, &err) < 0) {
            free(state);
            return aia_seterr(&r->err, "algorithm '%s': save: %s",
                              s->alg->h.name, util_error_text(&err));
        }
    }
    struct checkpoint k = {
        .iteration = p->iteration,
        .epoch = p->epoch,
        .round = p->round,
        .elapsed = now - p->t0,
        .history_bytes = r->hist ? (uint64_t)output_size(r->hist) : 0,
        .answers_bytes = r->answers ? (uint64_t)output_size(r->answers) : 0,
        .iterates_bytes =
            r->iterates ? (uint64_t)iterates_size(r->iterates) : 0,
        .answers = record_answers(r),
        .query_len = query_len,
        .query = whole ? whole : (double *)r->query,
        .state_len = len,
        .state = state,
    };
    record_traffic(r, k.traffic);
    int rc = 0;
    if (checkpoint_write(job->output.checkpoint, &s->identity, &k, &err) < 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    free(state);
    free(whole);
    r->ckpt_iter = p->iteration;
    r->ckpt_at = now + job->output.checkpoint_seconds;
    return rc;
}

int record_check(struct recorder *r)
{
    const struct setup *s = r->s;
    const struct job *job = r->job;
    char where[256];
    if (job->stop.gap > 0 && !r->opt_known) {
        params_where(where, sizeof where, job->m->path,
                     job_value_node(job, "stop.gap"));
        return aia_seterr(&r->err,
                          "%s: stop.gap: problem '%s' cannot give "
                          "its optimum (%s)",
                          where, s->prob->h.name, r->opt_why.text);
    }
    if ((job->output.checkpoint || s->resume) && !s->alg->save) {
        params_where(where, sizeof where, job->m->path,
                     job->output.checkpoint_node);
        return aia_seterr(&r->err,
                          "%s: output.checkpoint: algorithm '%s' "
                          "cannot save its state",
                          where, s->alg->h.name);
    }
    if (s->resume && !job->output.checkpoint)
        return aia_seterr(&r->err,
                          "%s: --resume: the job names no "
                          "output.checkpoint",
                          job->m->path);
    if (job->output.checkpoint && !r->ckpt_locked) {
        struct aia_error err;
        if ((r->ckpt_fd = checkpoint_lock(job->output.checkpoint, &err)) < 0)
            return aia_seterr(&r->err, "%s%s",
                              s->resume ? "cannot resume: " : "", err.text);
        r->ckpt_locked = 1;
    }
    return 0;
}

int record_read_resume(struct recorder *r)
{
    const struct setup *s = r->s;
    struct aia_error err;
    size_t query_len =
        r->shard_save ? s->full.query_len : s->shape.query_len;
    if (checkpoint_read(r->job->output.checkpoint, &s->identity, query_len,
                        &r->resume, &err) < 0)
        return aia_seterr(&r->err, "cannot resume: %s", err.text);
    r->resumed = 1;
    /* rows of another width, or JSON Lines after CSV, are refused: the
     * files keep the layout they were begun with */
    if ((r->job->output.history &&
         history_check_layout(r, (long long)r->resume.history_bytes, &err) <
             0) ||
        (r->job->output.answers &&
         output_check_layout("output.answers", r->job->output.answers,
                             (long long)r->resume.answers_bytes,
                             r->job->output.format, answer_cols, 9, &err) < 0))
        return aia_seterr(&r->err, "cannot resume: %s", err.text);
    return 0;
}

int record_answer(struct recorder *r, int w, uint64_t sent_round,
                  uint64_t staleness, double compute, double delay, double rtt,
                  double now)
{
    const struct proto *p = r->p;
    if (!r->answers)
        return 0;
    double row[9] = {now - p->t0,
                     (double)r->s->ranks[w],
                     (double)sent_round,
                     (double)p->round,
                     (double)staleness,
                     (double)p->iteration,
                     compute,
                     delay,
                     rtt};
    struct aia_error err;
    if (output_row(r->answers, row, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return 0;
}

uint64_t record_answers(const struct recorder *r)
{
    /* from the start of the run, as iterations are: a resumed run goes
     * on from its checkpoint's count */
    uint64_t n = r->resumed ? r->resume.answers : 0;
    for (int w = 0; w < r->p->n; w++)
        n += r->st[w].answers;
    return n;
}

void record_traffic(const struct recorder *r, uint64_t t[CHECKPOINT_TRAFFIC])
{
    for (int i = 0; i < CHECKPOINT_TRAFFIC; i++)
        t[i] = r->resumed ? r->resume.traffic[i] : 0;
    for (int w = 0; w < r->p->n; w++) {
        const struct wstats *st = &r->st[w];
        t[0] += st->sent_payload;
        t[1] += st->sent_encoded;
        t[2] += st->sent_encoded + st->queries * sizeof(struct wire_hdr);
        t[3] += st->recv_payload;
        t[4] += st->recv_encoded;
        t[5] += st->recv_encoded + st->recv_msgs * sizeof(struct wire_hdr);
    }
}

int record_close(struct recorder *r)
{
    struct aia_error err;
    int rc = 0;
    if (output_close(r->hist, &err) < 0 || output_close(r->answers, &err) < 0 ||
        iterates_close(r->iterates, &err) < 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    r->hist = r->answers = NULL;
    r->iterates = NULL;
    if (r->progress_tty && r->progress_at > r->p->t0 + 1.0)
        fputs("\n", stderr); /* end the progress line */
    return rc;
}
