/* record.c - the recorder: the loss and the optimum, the history, the
 * answer log, saved iterates, progress lines, the checkpoint, and the
 * report at the end of a run (see record.h). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "params.h"
#include "record.h"
#include "util.h"
#include "wire.h"

int record_init(struct recorder *r, const struct setup *s,
                const struct proto *p, const struct wstats *st,
                const struct codec *acodec)
{
    *r = (struct recorder){.s = s, .job = s->job, .p = p, .st = st,
                           .acodec = acodec, .saved = -1, .loss_at = -1,
                           .progress_at = INFINITY,
                           .ev = {NAN, NAN, NAN, NAN}};
    r->x = calloc(s->dim ? s->dim : 1, sizeof *r->x);
    return r->x ? 0 : -1;
}

void record_free(struct recorder *r)
{
    free(r->x);
    r->x = NULL;
    checkpoint_free(&r->resume);
    if (r->ckpt_locked)
        checkpoint_unlock(r->job->checkpoint, r->ckpt_fd);
    r->ckpt_locked = 0;
}

int record_model(struct recorder *r)
{
    const struct setup *s = r->s;
    r->err.text[0] = '\0';
    if (s->alg->iterate)
        return s->alg->iterate(s->alg_s, r->x, &r->err);
    memcpy(r->x, r->query, s->dim * sizeof *r->x);
    return 0;
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
        /* the workers' latest; the current model's is asked for */
        *loss = r->ev[0];
        return r->evaluate(r->eval_ctx, r->x, NULL);
    }
    if (r->s->prob->loss(r->s->prob_s, r->x, loss, &err) < 0)
        return aia_seterr(&r->err, "problem '%s': loss: %s",
                          r->s->prob->h.name, util_error_text(&err));
    if (diverge_loss(&r->dv, r->job->diverge, *loss)) {
        char line[AIA_ERROR_LEN];
        const char *why;
        double step = host_step(&why);
        return aia_seterr(&r->err, "%s",
                          diverge_message(line, sizeof line, r->p->iteration,
                                          0, *loss, &r->dv, r->job->diverge,
                                          step, why,
                                          /* L is found once, then kept */
                                          run_smoothness((struct setup *)r->s)));
    }
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
    double s = 0;
    for (size_t j = 0; j < r->s->shape.query_len; j++)
        s += (a[j] - b[j]) * (a[j] - b[j]);
    return sqrt(s);
}

/* The problem's metric of r->x (set by record_loss) into *v; NaN when it
 * has none. */
static int metric(struct recorder *r, double *v)
{
    const struct setup *s = r->s;
    struct aia_error err = {""};
    *v = NAN;
    if (s->prob->metric && s->prob->metric(s->prob_s, r->x, v, &err) < 0) {
        *v = NAN;
        return aia_seterr(&r->err, "problem '%s': %s: %s", s->prob->h.name,
                          s->prob->metric_name, util_error_text(&err));
    }
    return 0;
}

void record_optimum(struct recorder *r)
{
    const struct setup *s = r->s;
    snprintf(r->opt_why.text, sizeof r->opt_why.text,
             "it has no optimum function");
    if (!s->prob->optimum)
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

static const struct output_column history_cols[] = {
    {"iteration", OUT_INT}, {"epoch", OUT_INT},  {"time", OUT_TIME},
    {"loss", OUT_REAL},     {"suboptimality", OUT_REAL},
    {"change", OUT_REAL},   {NULL, OUT_REAL}, /* the metric's */
    {"test_loss", OUT_REAL}, {NULL, OUT_REAL}, /* test_ and the metric's */
};

/* Columns of a history row: 6, the metric's, then test_loss and the test
 * metric with problem.test. */
static int history_ncols(const struct recorder *r)
{
    int metric = r->s->prob->metric_name != NULL;
    return 6 + metric + (r->job->test.path ? 1 + metric : 0);
}

static const struct output_column answer_cols[] = {
    {"time", OUT_TIME},      {"rank", OUT_INT},     {"sent_round", OUT_INT},
    {"round", OUT_INT},      {"staleness", OUT_INT}, {"iteration", OUT_INT},
    {"compute", OUT_SHORT},  {"delay", OUT_SHORT},  {"rtt", OUT_SHORT},
};

int record_open(struct recorder *r)
{
    const struct job *job = r->job;
    static struct output_column cols[9];
    static char test_metric[64];
    const char *mname = r->s->prob->metric_name;
    int ncols = history_ncols(r);
    memcpy(cols, history_cols, sizeof cols);
    snprintf(test_metric, sizeof test_metric, "test_%s", mname ? mname : "");
    if (mname) {
        cols[6].name = mname;
        cols[8].name = test_metric;
    } else {
        cols[6] = history_cols[7]; /* test_loss only */
    }
    /* a resumed run appends, from where its checkpoint was written */
    const struct checkpoint *k = &r->resume;
    long long keep_h = r->resumed ? (long long)k->history_bytes : -1;
    long long keep_a = r->resumed ? (long long)k->answers_bytes : -1;
    long long keep_i = r->resumed ? (long long)k->iterates_bytes : -1;
    if (job->history &&
        !(r->hist = output_open(job->history, job->format, cols, ncols,
                                keep_h, &r->err)))
        return -1;
    if (job->answers &&
        !(r->answers = output_open(job->answers, job->format, answer_cols,
                                   9, keep_a, &r->err)))
        return -1;
    if (job->iterates && !(r->iterates = iterates_open(
                               job->iterates, r->s->dim, keep_i, &r->err)))
        return -1;
    int mode = host_progress();
    r->progress_tty = mode == HOST_PROGRESS_TTY ||
                      (mode == HOST_PROGRESS_AUTO && isatty(STDERR_FILENO));
    return 0;
}

static int eval_row(struct recorder *r, double *row);

int record_iteration(struct recorder *r, int force, double now)
{
    const struct job *job = r->job;
    const struct proto *p = r->p;
    if ((!r->hist && !r->iterates) || r->saved == p->iteration)
        return 0;
    int epochs_due = job->every_epochs &&
                     p->epoch / job->every_epochs !=
                         r->saved_epoch / job->every_epochs;
    if (!force && p->iteration % job->every != 0 && !epochs_due)
        return 0;
    double row[9] = {(double)p->iteration, (double)p->epoch, now - p->t0};
    if (r->evaluate)
        return eval_row(r, row);
    if (record_loss(r, &row[3]) < 0)
        return -1;
    row[4] = r->opt_known ? row[3] - r->fopt : NAN;
    row[5] = record_change(r);
    int rc = metric(r, &row[6]);
    struct aia_error err;
    if (r->hist && output_row(r->hist, row, &err) < 0 && rc == 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    if (r->iterates && iterates_write(r->iterates, p->iteration, p->epoch,
                                      row[2], r->x, &err) < 0 && rc == 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    r->saved = p->iteration;
    r->saved_epoch = p->epoch;
    return rc;
}

/* A history row of the workers' loss: the iterate is saved now, the row
 * written when their answers are in. */
static int eval_row(struct recorder *r, double *row)
{
    const struct proto *p = r->p;
    struct aia_error err;
    if (record_model(r) < 0) {
        err = r->err;
        return aia_seterr(&r->err, "algorithm '%s': iterate: %s",
                          r->s->alg->h.name, util_error_text(&err));
    }
    row[3] = record_change(r);
    r->saved = p->iteration;
    r->saved_epoch = p->epoch;
    if (r->iterates && iterates_write(r->iterates, p->iteration, p->epoch,
                                      row[2], r->x, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return r->hist ? r->evaluate(r->eval_ctx, r->x, row) : 0;
}

int record_evaluated(struct recorder *r, const double *row,
                     const double *vals, int missing, uint64_t rows)
{
    memcpy(r->ev, vals, sizeof r->ev);
    r->ev_missing = missing;
    r->ev_rows = rows;
    /* the workers' loss goes through the divergence detector as the
     * coordinator's own would */
    if (rows && diverge_loss(&r->dv, r->job->diverge, vals[0])) {
        char line[AIA_ERROR_LEN];
        const char *why;
        double step = host_step(&why);
        return aia_seterr(&r->err, "%s",
                          diverge_message(line, sizeof line,
                                          row ? (int64_t)row[0]
                                              : r->p->iteration,
                                          0, vals[0], &r->dv, r->job->diverge,
                                          step, why,
                                          run_smoothness((struct setup *)r->s)));
    }
    if (!row || !r->hist)
        return 0;
    double out[9] = {row[0], row[1], row[2], vals[0],
                     r->opt_known ? vals[0] - r->fopt : NAN, row[3]};
    int k = 6;
    if (r->s->prob->metric_name)
        out[k++] = vals[1];
    if (r->job->test.path) {
        out[k++] = vals[2];
        if (r->s->prob->metric_name)
            out[k++] = vals[3];
    }
    struct aia_error err;
    if (output_row(r->hist, out, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return 0;
}

int record_checkpoint(struct recorder *r, int force, double now)
{
    const struct job *job = r->job;
    const struct setup *s = r->s;
    const struct proto *p = r->p;
    if (!job->checkpoint || !r->query)
        return 0;
    int due = force ||
              (job->checkpoint_every &&
               p->iteration - r->ckpt_iter >= job->checkpoint_every) ||
              (job->checkpoint_seconds > 0 && now >= r->ckpt_at);
    if (!due)
        return 0;
    struct aia_error err;
    size_t len = s->alg->state_size(s->alg_s);
    void *state = malloc(len ? len : 1);
    if (!state)
        return aia_seterr(&r->err, "out of memory for the checkpoint");
    err.text[0] = '\0';
    if (s->alg->save(s->alg_s, state, &err) < 0) {
        free(state);
        return aia_seterr(&r->err, "algorithm '%s': save: %s",
                          s->alg->h.name, util_error_text(&err));
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
        .query_len = s->shape.query_len,
        .query = (double *)r->query,
        .state_len = len,
        .state = state,
    };
    int rc = 0;
    if (checkpoint_write(job->checkpoint, &s->identity, &k, &err) < 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    free(state);
    r->ckpt_iter = p->iteration;
    r->ckpt_at = now + job->checkpoint_seconds;
    return rc;
}

int record_check(struct recorder *r)
{
    const struct setup *s = r->s;
    const struct job *job = r->job;
    char where[256];
    if (job->target_gap > 0 && !r->opt_known) {
        params_where(where, sizeof where, job->m->path, job->gap_node);
        return aia_seterr(&r->err, "%s: stop.gap: problem '%s' cannot give "
                                   "its optimum (%s)",
                          where, s->prob->h.name, r->opt_why.text);
    }
    if ((job->checkpoint || s->resume) && !s->alg->save) {
        params_where(where, sizeof where, job->m->path,
                     job->checkpoint_node);
        return aia_seterr(&r->err, "%s: output.checkpoint: algorithm '%s' "
                                   "cannot save its state",
                          where, s->alg->h.name);
    }
    if (s->resume && !job->checkpoint)
        return aia_seterr(&r->err, "%s: --resume: the job names no "
                                   "output.checkpoint",
                          job->m->path);
    if (job->checkpoint && !r->ckpt_locked) {
        struct aia_error err;
        if ((r->ckpt_fd = checkpoint_lock(job->checkpoint, &err)) < 0)
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
    if (checkpoint_read(r->job->checkpoint, &s->identity, s->shape.query_len,
                        &r->resume, &err) < 0)
        return aia_seterr(&r->err, "cannot resume: %s", err.text);
    r->resumed = 1;
    return 0;
}

int record_answer(struct recorder *r, int w, uint64_t sent_round,
                  uint64_t staleness, double compute, double delay,
                  double rtt, double now)
{
    const struct proto *p = r->p;
    if (!r->answers)
        return 0;
    double row[9] = {now - p->t0,         (double)r->s->ranks[w],
                     (double)sent_round,  (double)p->round,
                     (double)staleness,   (double)p->iteration,
                     compute,             delay,
                     rtt};
    struct aia_error err;
    if (output_row(r->answers, row, &err) < 0)
        return aia_seterr(&r->err, "%s", err.text);
    return 0;
}

static uint64_t total_answers(const struct recorder *r)
{
    uint64_t n = 0;
    for (int w = 0; w < r->p->n; w++)
        n += r->st[w].answers;
    return n;
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
    char line[256];
    snprintf(line, sizeof line,
             "iteration %lld, epoch %lld, %.1f s, loss %.6g, %.0f answers/s",
             (long long)r->p->iteration, (long long)r->p->epoch, elapsed,
             loss, (double)total_answers(r) / elapsed);
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
        !st->nhang) {
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
        printf(" bursts +%g ms (p_slow %g, p_fast %g);",
               st->markov_delay * 1e3, st->p_slow, st->p_fast);
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
    struct traffic t = {0};
    for (int w = 0; w < r->p->n; w++) {
        const struct wstats *st = &r->st[w];
        t.sent_payload += st->sent_payload;
        t.sent_encoded += st->sent_encoded;
        t.sent_wire += st->sent_encoded + st->queries * sizeof(struct wire_hdr);
        t.recv_payload += st->recv_payload;
        t.recv_encoded += st->recv_encoded;
        t.recv_wire += st->recv_encoded +
                       st->recv_msgs * sizeof(struct wire_hdr);
    }
    uint64_t enc = t.sent_encoded + t.recv_encoded;
    t.ratio = enc ? (double)(t.sent_payload + t.recv_payload) / (double)enc
                  : 1.0;
    return t;
}

static void print_traffic(const struct recorder *r)
{
    const struct job *job = r->job;
    struct traffic t = traffic(r);
    printf("  %-10s sent %llu (queries as %s; %llu as doubles), received "
           "%llu (answers as %s",
           "bytes", (unsigned long long)t.sent_wire,
           codec_name(job->codec_query), (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire, codec_name(job->codec_answer));
    if (job->codec_answer == CODEC_TOPK)
        printf(" %zu of %zu", r->acodec->k, r->acodec->n);
    printf("; %llu as doubles); compression ratio %.3g\n",
           (unsigned long long)t.recv_payload, t.ratio);
}

/* What ran, why it stopped, and where it ended. */
static void report(struct recorder *r, const char *why, double loss)
{
    const struct setup *s = r->s;
    const struct job *job = r->job;
    const struct proto *p = r->p;
    printf("aiarun %s: %s, %d ranks: coordinator 0, %d workers, %s mode",
           PACKAGE_VERSION, job->m->path, s->size, s->nworkers,
           job->mode == JOB_ASYNC ? "async" : "rounds");
    if (job->topology == JOB_TREE)
        printf(", a tree of arity %d (the table's rows are the "
               "coordinator's children, each for its subtree)",
               job->arity);
    printf("\n");
    print_plugin("algorithm", s->alg_p, s->alg_args);
    if (job->data.path) { /* a generator's parameters do not apply */
        printf("  %-10s %s %s (%s): reads problem.data", "problem",
               s->prob_p->h->name, s->prob_p->h->version, s->prob_p->path);
        print_args(s->prob_args, 1);
    } else {
        print_plugin("problem", s->prob_p, s->prob_args);
    }
    printf("  %-10s %zu rows, %zu columns, %s partition%s%s\n", "data",
           s->total_rows, s->dim,
           job->part_scheme == AIA_PART_CYCLIC ? "cyclic" : "block",
           job->data.path ? ", from " : " (generated)",
           job->data.path ? job->data.path : "");
    if (s->facts.smoothness > 0)
        printf("  %-10s L = %.6g, the row-weighted mean of the workers' "
               "(%.6g to %.6g)\n",
               "smoothness", s->facts.smoothness, s->facts.smallest,
               s->facts.largest);
    const char *rule;
    double h = host_step(&rule);
    if (!isnan(h))
        printf("  %-10s %.6g: %s\n", "step", h, rule);
    if (job->mode == JOB_ROUNDS)
        print_plugin("wait", s->wait_p, s->wait_args);
    print_stragglers(&job->stragglers);
    if (r->resumed)
        printf("  %-10s from %s at iteration %lld (%.3f s)\n", "resumed",
               job->checkpoint, (long long)r->resume.iteration,
               r->resume.elapsed);
    printf("  %-10s %s after %.3f s: %lld iterations, %lld epochs, %llu "
           "answers\n",
           "stopped", why, r->t_end - p->t0, (long long)p->iteration,
           (long long)p->epoch, (unsigned long long)total_answers(r));
    print_traffic(r);
    if (p->dead)
        printf("  %-10s %d worker%s declared dead; the run went on with "
               "the others\n",
               "dead", p->dead, p->dead > 1 ? "s" : "");
    if (!isnan(loss) && r->opt_known)
        printf("  %-10s %.10g (optimum %.10g, suboptimality %.3e)\n", "loss",
               loss, r->fopt, loss - r->fopt);
    else if (!isnan(loss))
        printf("  %-10s %.10g (optimum unknown: %s)\n", "loss", loss,
               r->opt_why.text);
    if (r->evaluate && r->ev_missing)
        printf("  %-10s by the workers on %llu of the %zu rows (%d "
               "worker%s missing: %s rows are left out)\n",
               "evaluated", (unsigned long long)r->ev_rows, s->total_rows,
               r->ev_missing, r->ev_missing > 1 ? "s" : "",
               r->ev_missing > 1 ? "their" : "its");
    else if (r->evaluate)
        printf("  %-10s by the workers on their %llu rows\n", "evaluated",
               (unsigned long long)r->ev_rows);
    if (r->evaluate && job->test.path) {
        printf("  %-10s %s: loss %.10g", "test", job->test.path, r->ev[2]);
        if (s->prob->metric_name)
            printf(", %s %.10g", s->prob->metric_name, r->ev[3]);
        printf("\n");
    }
}

int record_final(struct recorder *r)
{
    FILE *f = fopen(r->job->final, "w");
    if (!f)
        return aia_seterr(&r->err, "%s: cannot write the final iterate: %s",
                          r->job->final, strerror(errno));
    for (size_t j = 0; j < r->s->dim; j++)
        fprintf(f, "%.17g\n", r->x[j]);
    if (ferror(f) | (fclose(f) != 0))
        return aia_seterr(&r->err, "%s: write failed", r->job->final);
    return 0;
}

int record_close(struct recorder *r)
{
    struct aia_error err;
    int rc = 0;
    if (output_close(r->hist, &err) < 0 ||
        output_close(r->answers, &err) < 0 ||
        iterates_close(r->iterates, &err) < 0)
        rc = aia_seterr(&r->err, "%s", err.text);
    r->hist = r->answers = NULL;
    r->iterates = NULL;
    if (r->progress_tty && r->progress_at > r->p->t0 + 1.0)
        fputs("\n", stderr); /* end the progress line */
    return rc;
}

int record_report(struct recorder *r, const char *why, double loss)
{
    const struct proto *p = r->p;
    int rc = 0;
    if (host_verbosity() > AIA_LOG_ERROR) {
        report(r, why, loss);
        stats_table(stdout, r->st, p->n);
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
    printf("stop=%s iterations=%lld epochs=%lld answers=%llu late=%llu "
           "time=%.6f loss=%.10g",
           why, (long long)p->iteration, (long long)p->epoch,
           (unsigned long long)total_answers(r), (unsigned long long)late,
           r->t_end - p->t0, loss);
    if (r->opt_known)
        printf(" optimum=%.10g gap=%.3e", r->fopt,
               r->fopt != 0 ? (loss - r->fopt) / fabs(r->fopt)
                            : loss - r->fopt);
    if (r->evaluate) {
        const char *mn = r->s->prob->metric_name;
        if (mn && !isnan(r->ev[1]))
            printf(" %s=%.10g", mn, r->ev[1]);
        if (r->job->test.path && !isnan(r->ev[2]))
            printf(" test_loss=%.10g", r->ev[2]);
        if (r->job->test.path && mn && !isnan(r->ev[3]))
            printf(" test_%s=%.10g", mn, r->ev[3]);
        if (r->ev_missing)
            printf(" missing=%d", r->ev_missing);
    } else if (r->s->prob->metric && !isnan(loss)) {
        double m;
        rc = metric(r, &m);
        if (!isnan(m))
            printf(" %s=%.10g", r->s->prob->metric_name, m);
    }
    struct traffic t = traffic(r);
    printf(" sent_bytes=%llu sent_payload=%llu recv_bytes=%llu "
           "recv_payload=%llu ratio=%.4f",
           (unsigned long long)t.sent_wire,
           (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire,
           (unsigned long long)t.recv_payload, t.ratio);
    printf("\n");
    fflush(stdout);
    return rc;
}
