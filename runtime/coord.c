/* coord.c - the coordinator: rounds, the wait condition, absorb, stop.
 *
 * Rank 0 keeps one receive posted per worker at all times and talks to
 * workers only with nonblocking calls.  In rounds mode a round sends the
 * current query to every idle worker and ends when the wait condition
 * holds; an answer to an older round is absorbed like any other and its
 * worker is sent the current query at once.  In async mode every answer
 * is an iteration of its own and only its sender gets the next query.
 * Query buffers are shared by all sends of a round and reused only when
 * every send from them has completed.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "host.h"
#include "poll.h"
#include "run.h"
#include "stats.h"
#include "util.h"
#include "wire.h"

#define ERROR_TEXT 1024
#define ALIGN 64

struct qbuf {
    char *buf;
    int refs; /* sends in flight from it */
};

enum stop_reason { STOP_NONE, STOP_ITERATIONS, STOP_TIME, STOP_ERROR };

static const char *const reason_names[] = {"none", "iterations", "time",
                                           "error"};

struct coord {
    struct setup *s;
    const struct job *job;
    int n;
    size_t qbytes, rbytes;
    MPI_Request *rreq; /* the answer receive of each worker */
    char **rbuf;
    MPI_Request *sreq; /* the query send of each worker */
    int *sq;           /* the qbuf sreq[w] reads */
    struct qbuf *q;
    int nq, cur;
    uint64_t round;
    int64_t iteration, epoch;
    uint64_t *repochs, *sent;
    unsigned char *busy, *alive, *fresh_now, *in_epoch, *bye;
    double *sent_at, *latency;
    int fresh, arrived, live, epoch_count;
    double t0, round_t0, t_end;
    struct wstats *st;
    FILE *answers; /* the per-answer log, or NULL */
    int *idx;
    MPI_Status *mst;
    double *x; /* the model, for the loss */
    double fopt;
    int opt_known;
    struct history *hist;
    int64_t saved; /* last iteration written to the history */
    enum stop_reason why;
    int status;
    struct aia_error err;
};

static void *alloc_aligned(size_t bytes)
{
    size_t rounded = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    void *p = aligned_alloc(ALIGN, rounded);
    if (p)
        memset(p, 0, rounded);
    return p;
}

/* Stop the run with an error; the first one wins. */
static void fail(struct coord *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(struct coord *c, const char *fmt, ...)
{
    if (c->why == STOP_ERROR)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.text, sizeof c->err.text, fmt, ap);
    va_end(ap);
    host_error("%s", c->err.text);
    c->why = STOP_ERROR;
    c->status = RUN_FAILED;
}

static int coord_alloc(struct coord *c)
{
    int n = c->n;
    c->qbytes = WIRE_BYTES(c->s->shape.query_len);
    c->rbytes = WIRE_BYTES(c->s->shape.answer_len);
    if (c->rbytes < sizeof(struct wire_hdr) + ERROR_TEXT)
        c->rbytes = sizeof(struct wire_hdr) + ERROR_TEXT;
    c->rreq = malloc((size_t)n * sizeof *c->rreq);
    c->sreq = malloc((size_t)n * sizeof *c->sreq);
    c->rbuf = calloc((size_t)n, sizeof *c->rbuf);
    c->sq = calloc((size_t)n, sizeof *c->sq);
    c->repochs = calloc((size_t)n, sizeof *c->repochs);
    c->sent = calloc((size_t)n, sizeof *c->sent);
    c->busy = calloc((size_t)n, 1);
    c->alive = calloc((size_t)n, 1);
    c->fresh_now = calloc((size_t)n, 1);
    c->in_epoch = calloc((size_t)n, 1);
    c->bye = calloc((size_t)n, 1);
    c->sent_at = calloc((size_t)n, sizeof *c->sent_at);
    c->latency = calloc((size_t)n, sizeof *c->latency);
    c->st = calloc((size_t)n, sizeof *c->st);
    c->idx = calloc((size_t)n, sizeof *c->idx);
    c->mst = calloc((size_t)n, sizeof *c->mst);
    c->x = calloc(c->s->dim ? c->s->dim : 1, sizeof *c->x);
    if (!c->rreq || !c->sreq || !c->rbuf || !c->sq || !c->repochs ||
        !c->sent || !c->busy || !c->alive || !c->fresh_now || !c->in_epoch ||
        !c->bye ||
        !c->sent_at || !c->latency || !c->st || !c->idx || !c->mst || !c->x)
        return -1;
    for (int w = 0; w < n; w++) {
        c->rreq[w] = c->sreq[w] = MPI_REQUEST_NULL;
        c->alive[w] = 1;
        c->st[w].rank = c->s->ranks[w];
        if (!(c->rbuf[w] = alloc_aligned(c->rbytes)))
            return -1;
    }
    c->live = n;
    return 0;
}

static void coord_free(struct coord *c)
{
    for (int w = 0; c->rbuf && w < c->n; w++)
        free(c->rbuf[w]);
    for (int i = 0; i < c->nq; i++)
        free(c->q[i].buf);
    free(c->q);
    free(c->rreq);
    free(c->sreq);
    free(c->rbuf);
    free(c->sq);
    free(c->repochs);
    free(c->sent);
    free(c->busy);
    free(c->alive);
    free(c->fresh_now);
    free(c->in_epoch);
    free(c->bye);
    free(c->sent_at);
    free(c->latency);
    free(c->st);
    free(c->idx);
    free(c->mst);
    free(c->x);
}

static int post_recv(struct coord *c, int w)
{
    return MPI_Irecv(c->rbuf[w], (int)c->rbytes, MPI_BYTE, c->s->ranks[w],
                     TAG_ANSWER, MPI_COMM_WORLD, &c->rreq[w]);
}

/* A query buffer no send reads, other than the current round's. */
static int acquire(struct coord *c)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < c->nq; i++)
            if (c->q[i].refs == 0 && i != c->cur)
                return i;
        /* Retire completed sends, then look again. */
        for (int w = 0; w < c->n && pass == 0; w++) {
            int done = 0;
            if (c->sreq[w] == MPI_REQUEST_NULL)
                continue;
            MPI_Test(&c->sreq[w], &done, MPI_STATUS_IGNORE);
            if (done)
                c->q[c->sq[w]].refs--;
        }
    }
    struct qbuf *q = realloc(c->q, (size_t)(c->nq + 1) * sizeof *q);
    if (!q)
        return -1;
    c->q = q;
    if (!(q[c->nq].buf = alloc_aligned(c->qbytes)))
        return -1;
    q[c->nq].refs = 0;
    return c->nq++;
}

static int send_query(struct coord *c, int w, double now)
{
    if (c->sreq[w] != MPI_REQUEST_NULL) {
        /* The worker answered this send's query, so it has completed. */
        MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
        c->q[c->sq[w]].refs--;
    }
    if (MPI_Isend(c->q[c->cur].buf, (int)c->qbytes, MPI_BYTE,
                  c->s->ranks[w], TAG_QUERY, MPI_COMM_WORLD,
                  &c->sreq[w]) != MPI_SUCCESS)
        return -1;
    c->sq[w] = c->cur;
    c->q[c->cur].refs++;
    c->busy[w] = 1;
    c->sent[w] = c->round;
    c->sent_at[w] = now;
    c->st[w].queries++;
    return 0;
}

/* The model after the latest update, into c->x. */
static int model(struct coord *c)
{
    const struct setup *s = c->s;
    if (s->alg->iterate)
        return s->alg->iterate(s->alg_s, c->x, &c->err);
    memcpy(c->x, WIRE_PAYLOAD(c->q[c->cur].buf), s->dim * sizeof *c->x);
    return 0;
}

static int evaluate(struct coord *c, double *loss)
{
    struct aia_error err;
    if (model(c) < 0) {
        fail(c, "algorithm '%s': iterate: %s", c->s->alg->h.name,
             c->err.text);
        return -1;
    }
    if (c->s->prob->loss(c->s->prob_s, c->x, loss, &err) < 0) {
        fail(c, "problem '%s': loss: %s", c->s->prob->h.name, err.text);
        return -1;
    }
    if (!isfinite(*loss)) {
        fail(c, "the loss is %g at iteration %lld: the method diverged "
                "(try a smaller step)",
             *loss, (long long)c->iteration);
        return -1;
    }
    return 0;
}

/* A history row for the current iteration when one is due (force: the
 * first and last). */
static void record(struct coord *c, int force)
{
    if (!c->hist || c->saved == c->iteration)
        return;
    if (!force && c->iteration % c->job->every != 0)
        return;
    double loss;
    if (evaluate(c, &loss) < 0)
        return;
    struct aia_error err;
    double subopt = c->opt_known ? loss - c->fopt : NAN;
    if (history_row(c->hist, c->iteration, c->epoch, util_now() - c->t0,
                    loss, subopt, &err) < 0)
        fail(c, "%s", err.text);
    c->saved = c->iteration;
}

/* Close the round: the algorithm writes the next query into a free
 * buffer, which becomes current. */
static int finish_round(struct coord *c, double now)
{
    int q = acquire(c);
    if (q < 0) {
        fail(c, "out of memory for a query buffer");
        return -1;
    }
    if (c->s->alg->query(c->s->alg_s, WIRE_PAYLOAD(c->q[q].buf), &c->err) <
        0) {
        struct aia_error e = c->err;
        fail(c, "algorithm '%s': query: %s", c->s->alg->h.name, e.text);
        return -1;
    }
    struct wire_hdr *h = (struct wire_hdr *)c->q[q].buf;
    *h = (struct wire_hdr){.magic = WIRE_MAGIC,
                           .kind = WIRE_QUERY,
                           .round = c->round + 1,
                           .len = c->s->shape.query_len};
    c->cur = q;
    c->round++;
    c->iteration++;
    c->fresh = c->arrived = 0;
    memset(c->fresh_now, 0, (size_t)c->n);
    c->round_t0 = now;
    return 0;
}

/* End the round and send its successor to every idle worker (in async
 * mode only the worker that just answered is idle). */
static void end_round(struct coord *c, double now)
{
    if (finish_round(c, now) < 0)
        return;
    record(c, 0);
    if (c->job->max_iterations && c->iteration >= c->job->max_iterations)
        c->why = STOP_ITERATIONS;
    if (c->why)
        return;
    for (int w = 0; w < c->n; w++)
        if (c->alive[w] && !c->busy[w] && send_query(c, w, now) < 0)
            fail(c, "cannot send a query to rank %d", c->s->ranks[w]);
}

static void count_epoch(struct coord *c, int w)
{
    if (c->in_epoch[w])
        return;
    c->in_epoch[w] = 1;
    if (++c->epoch_count < c->live)
        return;
    c->epoch++;
    c->epoch_count = 0;
    memset(c->in_epoch, 0, (size_t)c->n);
}

static void log_answer(struct coord *c, int w, const struct wire_hdr *h,
                       uint64_t staleness, double rtt, double now)
{
    fprintf(c->answers, "%.6f,%d,%llu,%llu,%llu,%lld,%.9f,%.9f,%.9f\n",
            now - c->t0, c->s->ranks[w], (unsigned long long)h->round,
            (unsigned long long)c->round, (unsigned long long)staleness,
            (long long)c->iteration, h->compute_s, h->delay_s, rtt);
}

static void on_answer(struct coord *c, int w, const struct wire_hdr *h,
                      double now)
{
    const struct setup *s = c->s;
    double rtt = now - c->sent_at[w];
    uint64_t staleness = c->round - h->round;
    c->busy[w] = 0;
    c->repochs[w] = h->round;
    c->latency[w] = c->latency[w] == 0 ? rtt : 0.75 * c->latency[w] +
                                                   0.25 * rtt;
    stats_answer(&c->st[w], staleness, rtt, h->compute_s, h->delay_s);
    if (c->answers)
        log_answer(c, w, h, staleness, rtt, now);
    struct aia_answer_info info = {
        .rank = s->ranks[w],
        .worker = w,
        .round = c->round,
        .sent_round = h->round,
        .staleness = staleness,
        .rows = s->rows[w],
        .total_rows = s->total_rows,
        .compute_s = h->compute_s,
    };
    if (s->alg->absorb(s->alg_s, WIRE_PAYLOAD(h), &info, &c->err) < 0) {
        struct aia_error e = c->err;
        fail(c, "algorithm '%s': absorb (answer of rank %d): %s",
             s->alg->h.name, s->ranks[w], e.text);
        return;
    }
    c->arrived++;
    count_epoch(c, w);
    if (c->job->mode == JOB_ASYNC) {
        end_round(c, now);
    } else if (staleness == 0) {
        c->fresh++;
        c->fresh_now[w] = 1;
    } else if (send_query(c, w, now) < 0) {
        fail(c, "cannot send a query to rank %d", s->ranks[w]);
    }
}

/* Check a received message; NULL when it cannot be trusted. */
static const struct wire_hdr *check(struct coord *c, int w,
                                    const MPI_Status *mst)
{
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    int bytes = 0;
    MPI_Get_count(mst, MPI_BYTE, &bytes);
    const char *why = NULL;
    if ((size_t)bytes < sizeof *h || h->magic != WIRE_MAGIC)
        why = "not an aiarun message";
    else if (h->kind == WIRE_ANSWER &&
             (h->len != c->s->shape.answer_len ||
              (size_t)bytes != WIRE_BYTES(h->len)))
        why = "an answer of the wrong length";
    else if (h->kind == WIRE_ANSWER &&
             (!c->busy[w] || h->round != c->sent[w]))
        why = "an answer to a query it was not sent";
    else if (h->kind != WIRE_ANSWER && h->kind != WIRE_ERROR &&
             h->kind != WIRE_BYE)
        why = "a message of unknown kind";
    if (!why)
        return h;
    fail(c, "rank %d sent %s (%d bytes); stopping", c->s->ranks[w], why,
         bytes);
    return NULL;
}

static void on_error(struct coord *c, int w, const struct wire_hdr *h)
{
    char *text = (char *)WIRE_PAYLOAD(h);
    text[ERROR_TEXT - 1] = '\0';
    fail(c, "stopping: rank %d failed: %s", c->s->ranks[w], text);
}

/* One message from worker w: absorbed while the run goes on, counted as
 * late once the stop is decided (c->why set), the receive posted again
 * unless it was the worker's goodbye. */
static void take(struct coord *c, int w, const MPI_Status *mst, double now)
{
    const struct wire_hdr *h = check(c, w, mst);
    if (h && h->kind == WIRE_BYE) {
        c->bye[w] = 1;
        c->busy[w] = 0;
        if (!c->why)
            fail(c, "rank %d said goodbye before it was stopped",
                 c->s->ranks[w]);
        else if (h->seq != c->st[w].answers + c->st[w].late)
            host_error("rank %d sent %llu answers, %llu arrived",
                       c->s->ranks[w], (unsigned long long)h->seq,
                       (unsigned long long)(c->st[w].answers +
                                            c->st[w].late));
        return; /* its receive stays closed */
    }
    if (h && h->kind == WIRE_ANSWER && c->why) {
        c->st[w].late++;
        c->busy[w] = 0;
    } else if (h && h->kind == WIRE_ANSWER) {
        on_answer(c, w, h, now);
    } else if (h && h->kind == WIRE_ERROR) {
        on_error(c, w, h);
    }
    /* a message that failed its check is reported; keep listening for
     * the worker's goodbye */
    if (post_recv(c, w) != MPI_SUCCESS)
        fail(c, "cannot post a receive for rank %d", c->s->ranks[w]);
}

static void pool_view(const struct coord *c, struct aia_pool_view *v,
                      double now)
{
    *v = (struct aia_pool_view){
        .nworkers = c->n,
        .fresh = c->fresh,
        .arrived = c->arrived,
        .live = c->live,
        .round = c->round,
        .ranks = c->s->ranks,
        .repochs = c->repochs,
        .sent = c->sent,
        .busy = c->busy,
        .alive = c->alive,
        .fresh_now = c->fresh_now,
        .latency = c->latency,
        .elapsed = now - c->round_t0,
    };
}

static void loop(struct coord *c)
{
    const struct setup *s = c->s;
    double stop_at = c->job->max_time > 0 ? c->t0 + c->job->max_time
                                          : INFINITY;
    while (!c->why) {
        double now = util_now();
        struct aia_pool_view v;
        pool_view(c, &v, now);
        double deadline = stop_at;
        if (c->job->mode == JOB_ROUNDS && s->wait->deadline) {
            double d = s->wait->deadline(s->wait_s, &v);
            if (d >= 0 && c->round_t0 + d < deadline)
                deadline = c->round_t0 + d;
        }
        int k = poll_some(c->n, c->rreq, c->idx, c->mst, deadline);
        if (k < 0) {
            fail(c, "MPI error while waiting for answers");
            break;
        }
        now = util_now();
        /* every completed receive is taken, even after a stop decision,
         * so that each one is posted again */
        for (int i = 0; i < k; i++)
            take(c, c->idx[i], &c->mst[i], now);
        if (c->why)
            break;
        if (now >= stop_at) {
            /* Answers absorbed since the last query make one more,
             * partial, round: nothing absorbed is left out of the model. */
            if (c->arrived > 0 && finish_round(c, now) == 0)
                record(c, 0);
            if (!c->why)
                c->why = STOP_TIME;
            break;
        }
        if (c->job->mode == JOB_ASYNC)
            continue;
        pool_view(c, &v, now);
        if (s->wait->ready(s->wait_s, &v))
            end_round(c, now);
    }
    c->t_end = util_now();
}

/* Stop every other rank and collect the pool's goodbyes. */
static void shutdown_pool(struct coord *c)
{
    const struct setup *s = c->s;
    int others = s->size - 1;
    struct wire_hdr *stop = calloc((size_t)others, sizeof *stop);
    MPI_Request *sr = malloc((size_t)others * sizeof *sr);
    int *of_rank = calloc((size_t)s->size, sizeof *of_rank);
    if (!stop || !sr || !of_rank) {
        host_error("out of memory while stopping; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    for (int w = 0; w < c->n; w++)
        of_rank[s->ranks[w]] = w + 1;
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        stop[r - 1] = (struct wire_hdr){.magic = WIRE_MAGIC,
                                        .kind = WIRE_STOP,
                                        .status = (uint16_t)c->status,
                                        .seq = w >= 0 ? c->st[w].queries : 0};
        MPI_Isend(&stop[r - 1], sizeof *stop, MPI_BYTE, r, TAG_CTRL,
                  MPI_COMM_WORLD, &sr[r - 1]);
    }
    double deadline = util_now() + c->job->shutdown_timeout;
    int byes = 0;
    for (int w = 0; w < c->n; w++)
        byes += c->bye[w];
    while (byes < c->n) {
        int k = poll_some(c->n, c->rreq, c->idx, c->mst, deadline);
        if (k <= 0)
            break;
        for (int i = 0; i < k; i++) {
            take(c, c->idx[i], &c->mst[i], util_now());
            byes += c->bye[c->idx[i]];
        }
    }
    if (byes < c->n) {
        char list[256] = "";
        size_t used = 0;
        for (int w = 0; w < c->n; w++)
            if (!c->bye[w] && used < sizeof list - 12)
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%d", used ? ", " : "",
                                         s->ranks[w]);
        host_error("rank(s) %s did not stop within %g s "
                   "(pool.shutdown_timeout); aborting the job",
                   list, c->job->shutdown_timeout);
        fflush(stdout);
        /* keep what the run wrote so far: MPI_Abort flushes nothing */
        history_flush(c->hist);
        if (c->answers)
            fflush(c->answers);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    MPI_Waitall(others, sr, MPI_STATUSES_IGNORE);
    for (int w = 0; w < c->n; w++)
        if (c->sreq[w] != MPI_REQUEST_NULL)
            MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
    free(stop);
    free(sr);
    free(of_rank);
}

/* Workers still busy at the stop for far longer than they usually take
 * (or that never answered in a second) are reported as unresponsive. */
static void flag_unresponsive(struct coord *c)
{
    for (int w = 0; w < c->n; w++) {
        struct wstats *st = &c->st[w];
        if (!c->busy[w])
            continue;
        double out = c->t_end - c->sent_at[w];
        double usual = st->rtt.count ? hist_quantile(&st->rtt, 0.99) : 0;
        if (out > fmax(10 * usual, 1.0))
            st->unresponsive = 1;
    }
}

static void summary(struct coord *c)
{
    uint64_t answers = 0, late = 0;
    for (int w = 0; w < c->n; w++) {
        answers += c->st[w].answers;
        late += c->st[w].late;
    }
    double loss = NAN;
    if (c->status == RUN_OK && evaluate(c, &loss) < 0)
        loss = NAN;
    if (host_verbosity() > AIA_LOG_ERROR)
        stats_table(stdout, c->st, c->n);
    for (int w = 0; w < c->n; w++)
        if (c->st[w].unresponsive)
            host_error("rank %d is unresponsive: busy with the query of "
                       "round %llu for %.3g s at the stop",
                       c->s->ranks[w], (unsigned long long)c->sent[w],
                       c->t_end - c->sent_at[w]);
    printf("stop=%s iterations=%lld epochs=%lld answers=%llu late=%llu "
           "time=%.6f loss=%.10g",
           reason_names[c->why], (long long)c->iteration,
           (long long)c->epoch, (unsigned long long)answers,
           (unsigned long long)late, c->t_end - c->t0, loss);
    if (c->opt_known)
        printf(" optimum=%.10g gap=%.3e", c->fopt,
               c->fopt != 0 ? (loss - c->fopt) / fabs(c->fopt)
                            : loss - c->fopt);
    printf("\n");
    fflush(stdout);
    struct aia_error err;
    if (c->job->workers_csv &&
        stats_write(c->job->workers_csv, c->st, c->n, &err) < 0) {
        host_error("%s", err.text);
        c->status = RUN_FAILED;
    }
}

/* The exact optimum, when the problem can give it. */
static void optimum(struct coord *c)
{
    const struct setup *s = c->s;
    if (!s->prob->optimum)
        return;
    double *xs = calloc(s->dim ? s->dim : 1, sizeof *xs);
    struct aia_error err;
    if (xs && s->prob->optimum(s->prob_s, xs, &c->fopt, &err) == 0)
        c->opt_known = 1;
    else if (xs)
        host_log(AIA_LOG_INFO, "no optimum to compare with: %s", err.text);
    free(xs);
}

int coord_run(struct setup *s)
{
    struct coord c = {.s = s, .job = s->job, .n = s->nworkers, .cur = -1,
                      .saved = -1};
    struct aia_error err;
    if (coord_alloc(&c) < 0) {
        host_error("out of memory for %d workers; aborting the job", c.n);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    optimum(&c);
    if (s->job->history &&
        !(c.hist = history_open(s->job->history, &err))) {
        fail(&c, "%s", err.text);
        goto stop;
    }
    if (s->job->answers) {
        if (!(c.answers = fopen(s->job->answers, "w"))) {
            fail(&c, "%s: cannot write the answer log: %s", s->job->answers,
                 strerror(errno));
            goto stop;
        }
        fputs("time,rank,sent_round,round,staleness,iteration,compute,delay,"
              "rtt\n",
              c.answers);
    }
    for (int w = 0; w < c.n; w++)
        if (post_recv(&c, w) != MPI_SUCCESS) {
            fail(&c, "cannot post a receive for rank %d", s->ranks[w]);
            goto stop;
        }
    int q = acquire(&c);
    if (q < 0) {
        fail(&c, "out of memory for a query buffer");
        goto stop;
    }
    if (s->alg->init(s->alg_s, WIRE_PAYLOAD(c.q[q].buf), &err) < 0) {
        fail(&c, "algorithm '%s': init: %s", s->alg->h.name, err.text);
        goto stop;
    }
    *(struct wire_hdr *)c.q[q].buf =
        (struct wire_hdr){.magic = WIRE_MAGIC,
                          .kind = WIRE_QUERY,
                          .round = 1,
                          .len = s->shape.query_len};
    c.cur = q;
    c.round = 1;
    c.t0 = c.round_t0 = util_now();
    record(&c, 1);
    for (int w = 0; w < c.n && !c.why; w++)
        if (send_query(&c, w, c.t0) < 0)
            fail(&c, "cannot send a query to rank %d", s->ranks[w]);
    loop(&c);
    if (c.why != STOP_ERROR)
        record(&c, 1);
stop:
    if (!c.t_end)
        c.t_end = util_now();
    flag_unresponsive(&c);
    shutdown_pool(&c);
    if (c.answers && (ferror(c.answers) | (fclose(c.answers) != 0)))
        fail(&c, "%s: write failed", s->job->answers);
    if (history_close(c.hist, &err) < 0)
        fail(&c, "%s", err.text);
    if (c.cur >= 0)
        summary(&c);
    coord_free(&c);
    return c.status;
}
