/* record.c - what the coordinator writes and prints: the loss and the
 * optimum, the history, the answer log, saved iterates, progress lines,
 * and the report at the end of a run. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord.h"
#include "host.h"
#include "util.h"
#include "wire.h"

static const char *const reason_names[] = {
    "none", "iterations", "time", "epochs",
    "precision", "loss", "gap", "signal", "error"};

/* The model after the latest update, into c->x. */
static int model(struct coord *c)
{
    const struct setup *s = c->s;
    if (s->alg->iterate)
        return s->alg->iterate(s->alg_s, c->x, &c->err);
    memcpy(c->x, WIRE_PAYLOAD(c->q[c->cur].buf), s->dim * sizeof *c->x);
    return 0;
}

int record_loss(struct coord *c, double *loss)
{
    struct aia_error err;
    if (c->loss_at == c->iteration) {
        *loss = c->loss;
        return 0;
    }
    if (model(c) < 0) {
        err = c->err;
        coord_fail(c, "algorithm '%s': iterate: %s", c->s->alg->h.name,
                   err.text);
        return -1;
    }
    if (c->s->prob->loss(c->s->prob_s, c->x, loss, &err) < 0) {
        coord_fail(c, "problem '%s': loss: %s", c->s->prob->h.name,
                   err.text);
        return -1;
    }
    if (diverge_loss(&c->dv, c->job->diverge, *loss)) {
        char line[AIA_ERROR_LEN];
        const char *why;
        double step = host_step(&why);
        coord_fail(c, "%s", diverge_message(line, sizeof line, c->iteration,
                                            0, *loss, &c->dv,
                                            c->job->diverge, step, why,
                                            run_smoothness(c->s)));
        return -1;
    }
    c->loss_at = c->iteration;
    c->loss = *loss;
    return 0;
}

double record_change(const struct coord *c)
{
    /* The previous buffer is intact: only finish_round reuses buffers,
     * and it moves prev along. */
    if (c->prev < 0)
        return NAN;
    const double *a = WIRE_PAYLOAD(c->q[c->cur].buf);
    const double *b = WIRE_PAYLOAD(c->q[c->prev].buf);
    double s = 0;
    for (size_t j = 0; j < c->s->shape.query_len; j++)
        s += (a[j] - b[j]) * (a[j] - b[j]);
    return sqrt(s);
}

/* The problem's metric of c->x (set by record_loss); NaN when it has
 * none. */
static double metric(struct coord *c)
{
    const struct setup *s = c->s;
    double v = NAN;
    struct aia_error err;
    if (s->prob->metric && s->prob->metric(s->prob_s, c->x, &v, &err) < 0) {
        coord_fail(c, "problem '%s': %s: %s", s->prob->h.name,
                   s->prob->metric_name, err.text);
        return NAN;
    }
    return v;
}

void record_optimum(struct coord *c)
{
    const struct setup *s = c->s;
    snprintf(c->opt_why.text, sizeof c->opt_why.text,
             "it has no optimum function");
    if (!s->prob->optimum)
        return;
    double *xs = calloc(s->dim ? s->dim : 1, sizeof *xs);
    if (xs && s->prob->optimum(s->prob_s, xs, &c->fopt, &c->opt_why) == 0)
        c->opt_known = 1;
    else if (xs)
        host_log(AIA_LOG_INFO, "no optimum to compare with: %s",
                 c->opt_why.text);
    free(xs);
}

static const struct output_column history_cols[] = {
    {"iteration", OUT_INT}, {"epoch", OUT_INT},  {"time", OUT_TIME},
    {"loss", OUT_REAL},     {"suboptimality", OUT_REAL},
    {"change", OUT_REAL},   {NULL, OUT_REAL}, /* the metric's */
};

static const struct output_column answer_cols[] = {
    {"time", OUT_TIME},      {"rank", OUT_INT},     {"sent_round", OUT_INT},
    {"round", OUT_INT},      {"staleness", OUT_INT}, {"iteration", OUT_INT},
    {"compute", OUT_SHORT},  {"delay", OUT_SHORT},  {"rtt", OUT_SHORT},
};

int record_open(struct coord *c)
{
    const struct job *job = c->job;
    struct aia_error err;
    static struct output_column cols[7];
    memcpy(cols, history_cols, sizeof cols);
    cols[6].name = c->s->prob->metric_name;
    int ncols = cols[6].name ? 7 : 6;
    /* a resumed run appends, from where its checkpoint was written */
    const struct checkpoint *k = &c->resume;
    long long keep_h = c->resumed ? (long long)k->history_bytes : -1;
    long long keep_a = c->resumed ? (long long)k->answers_bytes : -1;
    long long keep_i = c->resumed ? (long long)k->iterates_bytes : -1;
    if (job->history &&
        !(c->hist = output_open(job->history, job->format, cols, ncols,
                                keep_h, &err)))
        goto fail;
    if (job->answers &&
        !(c->answers = output_open(job->answers, job->format, answer_cols,
                                   9, keep_a, &err)))
        goto fail;
    if (job->iterates && !(c->iterates = iterates_open(
                               job->iterates, c->s->dim, keep_i, &err)))
        goto fail;
    int mode = host_progress();
    c->progress_tty = mode == HOST_PROGRESS_TTY ||
                      (mode == HOST_PROGRESS_AUTO && isatty(STDERR_FILENO));
    return 0;
fail:
    coord_fail(c, "%s", err.text);
    return -1;
}

void record_iteration(struct coord *c, int force)
{
    const struct job *job = c->job;
    if ((!c->hist && !c->iterates) || c->saved == c->iteration)
        return;
    int epochs_due = job->every_epochs &&
                     c->epoch / job->every_epochs !=
                         c->saved_epoch / job->every_epochs;
    if (!force && c->iteration % job->every != 0 && !epochs_due)
        return;
    double row[7] = {(double)c->iteration, (double)c->epoch,
                     util_now() - c->t0};
    if (record_loss(c, &row[3]) < 0)
        return;
    row[4] = c->opt_known ? row[3] - c->fopt : NAN;
    row[5] = record_change(c);
    row[6] = metric(c);
    struct aia_error err;
    if (c->hist && output_row(c->hist, row, &err) < 0)
        coord_fail(c, "%s", err.text);
    if (c->iterates && iterates_write(c->iterates, c->iteration, c->epoch,
                                      row[2], c->x, &err) < 0)
        coord_fail(c, "%s", err.text);
    c->saved = c->iteration;
    c->saved_epoch = c->epoch;
}

void record_checkpoint(struct coord *c, int force)
{
    const struct job *job = c->job;
    const struct setup *s = c->s;
    if (!job->checkpoint || c->cur < 0)
        return;
    double now = util_now();
    int due = force ||
              (job->checkpoint_every &&
               c->iteration - c->ckpt_iter >= job->checkpoint_every) ||
              (job->checkpoint_seconds > 0 && now >= c->ckpt_at);
    if (!due)
        return;
    struct aia_error err;
    size_t len = s->alg->state_size(s->alg_s);
    void *state = malloc(len ? len : 1);
    if (!state) {
        coord_fail(c, "out of memory for the checkpoint");
        return;
    }
    if (s->alg->save(s->alg_s, state, &err) < 0) {
        free(state);
        coord_fail(c, "algorithm '%s': save: %s", s->alg->h.name, err.text);
        return;
    }
    struct checkpoint k = {
        .iteration = c->iteration,
        .epoch = c->epoch,
        .round = c->round,
        .elapsed = now - c->t0,
        .history_bytes = c->hist ? (uint64_t)output_size(c->hist) : 0,
        .answers_bytes = c->answers ? (uint64_t)output_size(c->answers) : 0,
        .iterates_bytes =
            c->iterates ? (uint64_t)iterates_size(c->iterates) : 0,
        .query_len = s->shape.query_len,
        .query = WIRE_PAYLOAD(c->q[c->cur].buf),
        .state_len = len,
        .state = state,
    };
    if (checkpoint_write(job->checkpoint, s->identity, &k, &err) < 0)
        coord_fail(c, "%s", err.text);
    free(state);
    c->ckpt_iter = c->iteration;
    c->ckpt_at = now + job->checkpoint_seconds;
}

int record_read_resume(struct coord *c)
{
    const struct setup *s = c->s;
    struct aia_error err;
    if (checkpoint_read(c->job->checkpoint, s->identity, s->shape.query_len,
                        &c->resume, &err) < 0) {
        coord_fail(c, "cannot resume: %s", err.text);
        return -1;
    }
    c->resumed = 1;
    return 0;
}

void record_answer(struct coord *c, int w, uint64_t sent_round,
                   uint64_t staleness, double compute, double delay,
                   double rtt, double now)
{
    if (!c->answers)
        return;
    double row[9] = {now - c->t0,         (double)c->s->ranks[w],
                     (double)sent_round,  (double)c->round,
                     (double)staleness,   (double)c->iteration,
                     compute,             delay,
                     rtt};
    struct aia_error err;
    if (output_row(c->answers, row, &err) < 0)
        coord_fail(c, "%s", err.text);
}

static uint64_t total_answers(const struct coord *c)
{
    uint64_t n = 0;
    for (int w = 0; w < c->n; w++)
        n += c->st[w].answers;
    return n;
}

void record_progress(struct coord *c, double now)
{
    if (now < c->progress_at)
        return;
    if (host_verbosity() <= AIA_LOG_ERROR ||
        host_progress() == HOST_PROGRESS_OFF) {
        /* never due: the wait loop must not wake for it */
        c->progress_at = INFINITY;
        return;
    }
    double elapsed = now - c->t0, loss;
    if (record_loss(c, &loss) < 0)
        return;
    char line[256];
    snprintf(line, sizeof line,
             "iteration %lld, epoch %lld, %.1f s, loss %.6g, %.0f answers/s",
             (long long)c->iteration, (long long)c->epoch, elapsed, loss,
             (double)total_answers(c) / elapsed);
    if (c->progress_tty) {
        /* one line, rewritten in place */
        fprintf(stderr, "\raiarun[0]: progress: %s\033[K", line);
        fflush(stderr);
        c->progress_at = now + 0.25;
    } else {
        host_log(AIA_LOG_WARN, "progress: %s", line);
        c->progress_at = now + (elapsed < 10 ? 1 : 10);
    }
}

/* "name=value" for each parameter, on one line. */
static void print_args(const struct aia_value *v)
{
    for (; v && v->name; v++) {
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
    print_args(args);
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

static struct traffic traffic(const struct coord *c)
{
    struct traffic t = {0};
    for (int w = 0; w < c->n; w++) {
        const struct wstats *st = &c->st[w];
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

static void print_traffic(const struct coord *c)
{
    const struct job *job = c->job;
    struct traffic t = traffic(c);
    printf("  %-10s sent %llu (queries as %s; %llu as doubles), received "
           "%llu (answers as %s",
           "bytes", (unsigned long long)t.sent_wire,
           codec_name(job->codec_query), (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire, codec_name(job->codec_answer));
    if (job->codec_answer == CODEC_TOPK)
        printf(" %zu of %zu", c->acodec.k, c->acodec.n);
    printf("; %llu as doubles); compression ratio %.3g\n",
           (unsigned long long)t.recv_payload, t.ratio);
}

/* What ran, why it stopped, and where it ended. */
static void report(struct coord *c, double loss)
{
    const struct setup *s = c->s;
    const struct job *job = c->job;
    printf("aiarun %s: %s, %d ranks: coordinator 0, %d workers, %s mode",
           PACKAGE_VERSION, job->m->path, s->size, s->nworkers,
           job->mode == JOB_ASYNC ? "async" : "rounds");
    if (job->topology == JOB_TREE)
        printf(", a tree of arity %d (the table's rows are the "
               "coordinator's children, each for its subtree)",
               job->arity);
    printf("\n");
    print_plugin("algorithm", s->alg_p, s->alg_args);
    print_plugin("problem", s->prob_p, s->prob_args);
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
    const char *why;
    double h = host_step(&why);
    if (!isnan(h))
        printf("  %-10s %.6g: %s\n", "step", h, why);
    if (job->mode == JOB_ROUNDS)
        print_plugin("wait", s->wait_p, s->wait_args);
    print_stragglers(&job->stragglers);
    if (c->resumed)
        printf("  %-10s from %s at iteration %lld (%.3f s)\n", "resumed",
               job->checkpoint, (long long)c->resume.iteration,
               c->resume.elapsed);
    printf("  %-10s %s after %.3f s: %lld iterations, %lld epochs, %llu "
           "answers\n",
           "stopped", reason_names[c->why], c->t_end - c->t0,
           (long long)c->iteration, (long long)c->epoch,
           (unsigned long long)total_answers(c));
    print_traffic(c);
    if (c->dead)
        printf("  %-10s %d worker%s declared dead; the run went on with "
               "the others\n",
               "dead", c->dead, c->dead > 1 ? "s" : "");
    if (!isnan(loss) && c->opt_known)
        printf("  %-10s %.10g (optimum %.10g, suboptimality %.3e)\n", "loss",
               loss, c->fopt, loss - c->fopt);
    else if (!isnan(loss))
        printf("  %-10s %.10g (optimum unknown: %s)\n", "loss", loss,
               c->opt_why.text);
}

/* The final model as text, one value a line. */
static void write_final(struct coord *c)
{
    FILE *f = fopen(c->job->final, "w");
    if (!f) {
        coord_fail(c, "%s: cannot write the final iterate: %s",
                   c->job->final, strerror(errno));
        return;
    }
    for (size_t j = 0; j < c->s->dim; j++)
        fprintf(f, "%.17g\n", c->x[j]);
    if (ferror(f) | (fclose(f) != 0))
        coord_fail(c, "%s: write failed", c->job->final);
}

void record_finish(struct coord *c)
{
    struct aia_error err;
    if (output_close(c->hist, &err) < 0 ||
        output_close(c->answers, &err) < 0 ||
        iterates_close(c->iterates, &err) < 0)
        coord_fail(c, "%s", err.text);
    c->hist = c->answers = NULL;
    c->iterates = NULL;
    if (c->progress_tty && c->progress_at > c->t0 + 1.0)
        fputs("\n", stderr); /* end the progress line */
    if (c->cur < 0)
        return; /* failed before the first query */
    double loss = NAN;
    if ((c->status == RUN_OK || c->why == STOP_SIGNAL) &&
        record_loss(c, &loss) < 0)
        loss = NAN;
    if (!isnan(loss) && c->job->final)
        write_final(c);
    if (host_verbosity() > AIA_LOG_ERROR) {
        report(c, loss);
        stats_table(stdout, c->st, c->n);
    }
    for (int w = 0; w < c->n; w++)
        if (c->st[w].unresponsive)
            host_error("rank %d is unresponsive: busy with the query of "
                       "round %llu for %.3g s at the stop",
                       c->s->ranks[w], (unsigned long long)c->sent[w],
                       c->t_end - c->sent_at[w]);
    uint64_t late = 0;
    for (int w = 0; w < c->n; w++)
        late += c->st[w].late;
    printf("stop=%s iterations=%lld epochs=%lld answers=%llu late=%llu "
           "time=%.6f loss=%.10g",
           reason_names[c->why], (long long)c->iteration,
           (long long)c->epoch, (unsigned long long)total_answers(c),
           (unsigned long long)late, c->t_end - c->t0, loss);
    if (c->opt_known)
        printf(" optimum=%.10g gap=%.3e", c->fopt,
               c->fopt != 0 ? (loss - c->fopt) / fabs(c->fopt)
                            : loss - c->fopt);
    if (c->s->prob->metric && !isnan(loss)) {
        double m = metric(c);
        if (!isnan(m))
            printf(" %s=%.10g", c->s->prob->metric_name, m);
    }
    struct traffic t = traffic(c);
    printf(" sent_bytes=%llu sent_payload=%llu recv_bytes=%llu "
           "recv_payload=%llu ratio=%.4f",
           (unsigned long long)t.sent_wire,
           (unsigned long long)t.sent_payload,
           (unsigned long long)t.recv_wire,
           (unsigned long long)t.recv_payload, t.ratio);
    printf("\n");
    fflush(stdout);
    if (c->job->workers_csv &&
        stats_write(c->job->workers_csv, c->st, c->n, &err) < 0) {
        host_error("%s", err.text);
        c->status = RUN_FAILED;
    }
}
