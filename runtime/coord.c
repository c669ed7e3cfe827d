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

#include "coord.h"
#include "host.h"
#include "params.h"
#include "poll.h"
#include "proto.h"
#include "tree.h"
#include "util.h"
#include "wire.h"

#define ERROR_TEXT 1024

void coord_fail(struct coord *c, const char *fmt, ...)
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
    const struct job *job = c->job;
    struct aia_error err;
    size_t alen = c->s->shape.answer_len;
    if (codec_init(&c->qcodec, job->codec_query, c->s->shape.query_len, 0,
                   job->codec_level, &err) < 0 ||
        codec_init(&c->acodec, job->codec_answer, alen,
                   codec_topk_count(job->codec_topk, alen),
                   job->codec_level, &err) < 0)
        return -1;
    c->qbytes = WIRE_BYTES(c->s->shape.query_len);
    c->qenc_bytes = sizeof(struct wire_hdr) + codec_bound(&c->qcodec);
    /* every receive can take the largest answer the codec makes */
    c->rbytes = sizeof(struct wire_hdr) + codec_bound(&c->acodec);
    if (job->codec_answer != CODEC_NONE &&
        !(c->adec = malloc((alen ? alen : 1) * sizeof *c->adec)))
        return -1;
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
    c->direct = calloc((size_t)n, 1);
    c->sent_at = calloc((size_t)n, sizeof *c->sent_at);
    c->latency = calloc((size_t)n, sizeof *c->latency);
    c->st = calloc((size_t)n, sizeof *c->st);
    c->idx = calloc((size_t)n, sizeof *c->idx);
    c->mst = calloc((size_t)n, sizeof *c->mst);
    c->x = calloc(c->s->dim ? c->s->dim : 1, sizeof *c->x);
    if (!c->rreq || !c->sreq || !c->rbuf || !c->sq || !c->repochs ||
        !c->sent || !c->busy || !c->alive || !c->fresh_now || !c->in_epoch ||
        !c->bye || !c->direct ||
        !c->sent_at || !c->latency || !c->st || !c->idx || !c->mst || !c->x)
        return -1;
    /* In tree mode the coordinator talks to its children only: the others
     * are reached through them. */
    int child[64], arity = c->job->arity;
    if (c->job->topology == JOB_TREE) {
        int k = tree_children(0, arity < 64 ? arity : 64, n, child);
        for (int i = 0; i < k; i++)
            c->direct[child[i] - 1] = 1;
    } else {
        memset(c->direct, 1, (size_t)n);
    }
    c->live = 0;
    for (int w = 0; w < n; w++) {
        c->rreq[w] = c->sreq[w] = MPI_REQUEST_NULL;
        c->alive[w] = c->direct[w];
        c->bye[w] = !c->direct[w];
        c->st[w].rank = c->s->ranks[w];
        c->st[w].hidden = !c->direct[w];
        c->live += c->direct[w];
        if (!(c->rbuf[w] = util_alloc_aligned(c->rbytes)))
            return -1;
    }
    return 0;
}

static void coord_free(struct coord *c)
{
    for (int w = 0; c->rbuf && w < c->n; w++)
        free(c->rbuf[w]);
    for (int i = 0; i < c->nq; i++) {
        free(c->q[i].buf);
        free(c->q[i].enc);
    }
    free(c->q);
    free(c->adec);
    codec_free(&c->qcodec);
    codec_free(&c->acodec);
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
    free(c->direct);
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
    q[c->nq] = (struct qbuf){0};
    if (!(q[c->nq].buf = util_alloc_aligned(c->qbytes)) ||
        (c->job->codec_query != CODEC_NONE &&
         !(q[c->nq].enc = util_alloc_aligned(c->qenc_bytes)))) {
        free(q[c->nq].buf);
        return -1;
    }
    return c->nq++;
}

static int send_query(struct coord *c, int w, double now)
{
    if (c->sreq[w] != MPI_REQUEST_NULL) {
        /* The worker answered this send's query, so it has completed. */
        MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
        c->q[c->sq[w]].refs--;
    }
    struct qbuf *q = &c->q[c->cur];
    if (MPI_Isend(q->enc ? q->enc : q->buf, (int)q->bytes, MPI_BYTE,
                  c->s->ranks[w], TAG_QUERY, MPI_COMM_WORLD,
                  &c->sreq[w]) != MPI_SUCCESS)
        return -1;
    c->st[w].sent_payload += c->s->shape.query_len * sizeof(double);
    c->st[w].sent_encoded += q->bytes - sizeof(struct wire_hdr);
    c->sq[w] = c->cur;
    c->q[c->cur].refs++;
    c->busy[w] = 1;
    c->sent[w] = c->round;
    c->sent_at[w] = now;
    c->st[w].queries++;
    return 0;
}

/* Give query buffer q, whose doubles are written, its header for round;
 * with a query codec, encode it into the buffer that is sent.  0 or -1
 * (the run is then failed). */
static int seal_query(struct coord *c, int q, uint64_t round)
{
    struct qbuf *b = &c->q[q];
    size_t n = c->s->shape.query_len, bytes = n * sizeof(double);
    struct wire_hdr h = {.magic = WIRE_MAGIC,
                         .kind = WIRE_QUERY,
                         .round = round,
                         .len = n,
                         .codec = (uint32_t)c->job->codec_query};
    if (b->enc) {
        struct aia_error err;
        if (codec_encode(&c->qcodec, WIRE_PAYLOAD(b->buf),
                         WIRE_PAYLOAD(b->enc), &bytes, &err) < 0) {
            coord_fail(c, "query of round %llu: %s",
                       (unsigned long long)round, err.text);
            return -1;
        }
    }
    h.bytes = (uint32_t)bytes;
    *(struct wire_hdr *)b->buf = h;
    if (b->enc)
        *(struct wire_hdr *)b->enc = h;
    b->bytes = sizeof h + bytes;
    return 0;
}

/* Close the round: the algorithm writes the next query into a free
 * buffer, which becomes current. */
static int finish_round(struct coord *c, double now)
{
    int q = acquire(c);
    if (q < 0) {
        coord_fail(c, "out of memory for a query buffer");
        return -1;
    }
    if (c->s->alg->query(c->s->alg_s, WIRE_PAYLOAD(c->q[q].buf), &c->err) <
        0) {
        struct aia_error e = c->err;
        coord_fail(c, "algorithm '%s': query: %s", c->s->alg->h.name, e.text);
        return -1;
    }
    if (seal_query(c, q, c->round + 1) < 0)
        return -1;
    c->prev = c->cur;
    c->cur = q;
    c->round++;
    c->iteration++;
    c->fresh = c->arrived = 0;
    memset(c->fresh_now, 0, (size_t)c->n);
    c->round_t0 = now;
    return 0;
}

/* Whether a stop condition holds at the end of an iteration. */
static enum stop_reason stop_reached(struct coord *c)
{
    const struct job *job = c->job;
    if (job->max_iterations && c->iteration >= job->max_iterations)
        return STOP_ITERATIONS;
    if (job->max_epochs && c->epoch >= job->max_epochs)
        return STOP_EPOCHS;
    if (job->precision > 0 && record_change(c) <= job->precision)
        return STOP_PRECISION;
    if ((job->target_loss > 0 || job->target_gap > 0) &&
        c->iteration % job->check_every == 0) {
        double loss;
        if (record_loss(c, &loss) < 0)
            return STOP_ERROR;
        if (job->target_loss > 0 && loss <= job->target_loss)
            return STOP_LOSS;
        if (job->target_gap > 0 &&
            (loss - c->fopt) <= job->target_gap * fabs(c->fopt))
            return STOP_GAP;
    }
    return STOP_NONE;
}

/* End the round and send its successor to every idle worker (in async
 * mode only the worker that just answered is idle). */
static void end_round(struct coord *c, double now)
{
    if (finish_round(c, now) < 0)
        return;
    record_iteration(c, 0);
    record_checkpoint(c, 0);
    if (!c->why)
        c->why = stop_reached(c);
    if (c->why)
        return;
    for (int w = 0; w < c->n; w++)
        if (c->alive[w] && !c->busy[w] && send_query(c, w, now) < 0)
            coord_fail(c, "cannot send a query to rank %d", c->s->ranks[w]);
}

/* An epoch ends when every live worker has answered in it. */
static void close_epoch(struct coord *c)
{
    if (c->live == 0 || c->epoch_count < c->live)
        return;
    c->epoch++;
    c->epoch_count = 0;
    memset(c->in_epoch, 0, (size_t)c->n);
}

static void count_epoch(struct coord *c, int w)
{
    if (c->in_epoch[w])
        return;
    c->in_epoch[w] = 1;
    c->epoch_count++;
    close_epoch(c);
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
    record_answer(c, w, h->round, staleness, h->compute_s, h->delay_s, rtt,
                  now);
    struct aia_answer_info info = {
        .rank = s->ranks[w],
        .worker = w,
        .round = c->round,
        .sent_round = h->round,
        .staleness = staleness,
        .rows = h->rows ? (size_t)h->rows : s->rows[w],
        .total_rows = s->total_rows,
        .compute_s = h->compute_s,
    };
    const double *a = c->adec ? c->adec : WIRE_PAYLOAD(h);
    if (s->alg->absorb(s->alg_s, a, &info, &c->err) < 0) {
        struct aia_error e = c->err;
        coord_fail(c, "algorithm '%s': absorb (answer of rank %d): %s",
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
        coord_fail(c, "cannot send a query to rank %d", s->ranks[w]);
    }
}

/* Why a received message cannot be trusted, or NULL when it can.  An
 * answer in a codec is decoded here, into c->adec: bytes that do not
 * decode are not trusted either. */
static const char *check(struct coord *c, int w, const MPI_Status *mst,
                         int *bytes)
{
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    *bytes = 0;
    MPI_Get_count(mst, MPI_BYTE, bytes);
    if ((size_t)*bytes < sizeof *h || h->magic != WIRE_MAGIC)
        return "not an aiarun message";
    if (h->kind != WIRE_ANSWER && h->kind != WIRE_ERROR && h->kind != WIRE_BYE)
        return "a message of unknown kind";
    if (h->kind != WIRE_ANSWER)
        return NULL;
    if (h->codec != (uint32_t)c->job->codec_answer)
        return "an answer in another codec";
    if (h->len != c->s->shape.answer_len ||
        (size_t)*bytes != sizeof *h + h->bytes ||
        (h->codec == CODEC_NONE && (size_t)*bytes != WIRE_BYTES(h->len)))
        return "an answer of the wrong length";
    if (!c->busy[w] || h->round != c->sent[w])
        return "an answer to a query it was not sent";
    struct aia_error err;
    if (c->adec && codec_decode(&c->acodec, WIRE_PAYLOAD(h), h->bytes,
                                c->adec, &err) < 0) {
        snprintf(c->why_text, sizeof c->why_text,
                 "an answer that does not decode (%s)", err.text);
        return c->why_text;
    }
    c->st[w].recv_payload += h->len * sizeof(double);
    c->st[w].recv_encoded += h->bytes;
    c->st[w].recv_msgs++;
    return NULL;
}

/* Worker w sent a message that failed its check: it gets no more queries
 * and counts no more for the wait condition and epochs, and what it sends
 * is discarded, but it is listened to until its goodbye, so that it stops
 * like the others. */
static void distrust(struct coord *c, int w, const char *why, int bytes)
{
    c->st[w].untrusted = 1;
    c->st[w].discarded++;
    c->alive[w] = 0;
    c->busy[w] = 0;
    c->live--;
    if (c->in_epoch[w]) {
        c->in_epoch[w] = 0;
        c->epoch_count--;
    }
    close_epoch(c);
    host_error("rank %d sent %s (%d bytes): not trusted any more; going on "
               "with %d workers",
               c->s->ranks[w], why, bytes, c->live);
    if (c->live == 0)
        coord_fail(c, "no worker of the pool is left to trust");
}

static void on_error(struct coord *c, int w, const struct wire_hdr *h)
{
    char *text = (char *)WIRE_PAYLOAD(h);
    text[ERROR_TEXT - 1] = '\0';
    coord_fail(c, "stopping: rank %d failed: %s", c->s->ranks[w], text);
}

/* One message from worker w: absorbed while the run goes on, counted as
 * late once the stop is decided (c->why set), the receive posted again
 * unless it was the worker's goodbye. */
static void take(struct coord *c, int w, const MPI_Status *mst, double now)
{
    int bytes;
    const char *why = check(c, w, mst, &bytes);
    const struct wire_hdr *h = (const void *)c->rbuf[w];
    if (!why && h->kind == WIRE_BYE) {
        c->bye[w] = 1;
        c->busy[w] = 0;
        struct wstats *st = &c->st[w];
        if (!c->why && !st->untrusted)
            coord_fail(c, "rank %d said goodbye before it was stopped",
                       c->s->ranks[w]);
        else if (h->seq != st->answers + st->late + st->discarded)
            host_error("rank %d sent %llu answers, %llu arrived",
                       c->s->ranks[w], (unsigned long long)h->seq,
                       (unsigned long long)(st->answers + st->late +
                                            st->discarded));
        return; /* its receive stays closed */
    }
    if (c->st[w].untrusted)
        c->st[w].discarded++;
    else if (why)
        distrust(c, w, why, bytes);
    else if (h->kind == WIRE_ANSWER && c->why) {
        c->st[w].late++;
        c->busy[w] = 0;
    } else if (h->kind == WIRE_ANSWER) {
        on_answer(c, w, h, now);
    } else if (h->kind == WIRE_ERROR) {
        on_error(c, w, h);
    }
    if (post_recv(c, w) != MPI_SUCCESS)
        coord_fail(c, "cannot post a receive for rank %d", c->s->ranks[w]);
}

/* Let worker w go at the shutdown: its requests are freed, not waited on. */
static void declare_silent(struct coord *c, int w)
{
    c->alive[w] = 0;
    if (c->rreq[w] != MPI_REQUEST_NULL) {
        MPI_Cancel(&c->rreq[w]);
        MPI_Request_free(&c->rreq[w]);
    }
    if (c->sreq[w] != MPI_REQUEST_NULL)
        MPI_Request_free(&c->sreq[w]);
}

/* Never wait on worker w again: its requests are let go (a send's buffer
 * stays pinned, as MPI may still read it), it stops counting for the wait
 * condition and epochs, and the shutdown does not wait for it. */
static void declare_dead(struct coord *c, int w, const char *why)
{
    c->alive[w] = 0;
    c->busy[w] = 0;
    c->live--;
    c->dead++;
    c->st[w].dead = 1;
    c->bye[w] = 1;
    declare_silent(c, w);
    host_error("rank %d %s; going on with %d workers", c->s->ranks[w], why,
               c->live);
    if (c->in_epoch[w]) {
        c->in_epoch[w] = 0;
        c->epoch_count--;
    }
    /* the others may all have answered already */
    close_epoch(c);
    if (c->live == 0)
        coord_fail(c, "every worker of the pool is dead");
    run_incomplete = 1;
}

/* Busy workers silent for longer than pool.dead_after are dead; returns
 * when the next one would be. */
static double reap(struct coord *c, double now)
{
    double next = INFINITY, after = c->job->dead_after;
    if (after <= 0)
        return next;
    for (int w = 0; w < c->n; w++) {
        if (!c->alive[w] || !c->busy[w])
            continue;
        double silent = now - c->sent_at[w];
        if (silent > after) {
            char why[96];
            snprintf(why, sizeof why,
                     "declared dead: silent for %.3g s (pool.dead_after)",
                     silent);
            declare_dead(c, w, why);
        }
        else if (c->sent_at[w] + after < next)
            next = c->sent_at[w] + after;
    }
    return next;
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
        if (c->progress_at < deadline)
            deadline = c->progress_at;
        double death = reap(c, now);
        if (death < deadline)
            deadline = death;
        if (c->why)
            break;
        int k = poll_some(c->n, c->rreq, c->idx, c->mst, deadline);
        if (k < 0) {
            coord_fail(c, "MPI error while waiting for answers");
            break;
        }
        now = util_now();
        if (poll_signal) {
            c->why = STOP_SIGNAL;
            break;
        }
        record_progress(c, now);
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
                record_iteration(c, 0);
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

/* STOP buffers that sends to ranks let go may still read: reachable from
 * here until the process exits (it does not finalize). */
static struct wire_hdr *volatile lent_stop;

/* Tell every rank still there whether to call MPI_Finalize: it waits for
 * every rank, so when one is dead or hung nobody calls it.  Sent once the
 * report is out: ranks that leave without finalizing make mpirun end the
 * job, this rank included.  The STOP buffers are reused for the message:
 * their sends have completed. */
static void finish(struct coord *c)
{
    const struct setup *s = c->s;
    const int *of_rank = c->of_rank;
    struct wire_hdr *buf = c->stop;
    int others = s->size - 1;
    if (!buf)
        return; /* the pool was not shut down: a signal stopped the run */
    fflush(stdout);
    fflush(stderr);
    MPI_Request *fr = malloc((size_t)others * sizeof *fr);
    if (!fr) {
        host_error("out of memory while stopping; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        fr[r - 1] = MPI_REQUEST_NULL;
        buf[r - 1] = (struct wire_hdr){
            .magic = WIRE_MAGIC,
            .kind = WIRE_FINISH,
            .status = (uint16_t)c->status,
            .flags = run_incomplete ? WIRE_NO_FINALIZE : 0};
        MPI_Isend(&buf[r - 1], sizeof *buf, MPI_BYTE, r, TAG_CTRL,
                  MPI_COMM_WORLD, &fr[r - 1]);
        if (w >= 0 && c->st[w].dead)
            MPI_Request_free(&fr[r - 1]); /* never waited on */
    }
    /* every receiver is waiting for it: this completes at once */
    MPI_Waitall(others, fr, MPI_STATUSES_IGNORE);
    free(fr);
    /* the STOP buffers of ranks let go stay allocated, MPI may read them */
    if (run_incomplete)
        lent_stop = c->stop;
    else
        free(c->stop);
    c->stop = NULL;
    free(c->of_rank);
    c->of_rank = NULL;
    if (run_incomplete)
        run_no_finalize = 1;
}

/* Stop every other rank and collect the pool's goodbyes (finish then
 * lets them go). */
static void shutdown_pool(struct coord *c)
{
    const struct setup *s = c->s;
    int others = s->size - 1;
    struct wire_hdr *stop = c->stop = calloc((size_t)others, sizeof *stop);
    MPI_Request *sr = malloc((size_t)others * sizeof *sr);
    int *of_rank = c->of_rank = calloc((size_t)s->size, sizeof *of_rank);
    if (!stop || !sr || !of_rank) {
        host_error("out of memory while stopping; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    for (int w = 0; w < c->n; w++)
        of_rank[s->ranks[w]] = w + 1;
    int tree = c->job->topology == JOB_TREE;
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        sr[r - 1] = MPI_REQUEST_NULL;
        if (tree && w >= 0 && !c->direct[w])
            continue; /* its parent passes the STOP on */
        stop[r - 1] = (struct wire_hdr){.magic = WIRE_MAGIC,
                                        .kind = WIRE_STOP,
                                        .status = (uint16_t)c->status,
                                        .seq = w >= 0 ? c->st[w].queries : 0};
        /* in a tree the STOP goes down with the queries, behind them */
        MPI_Isend(&stop[r - 1], sizeof *stop, MPI_BYTE, r,
                  tree && w >= 0 ? TAG_QUERY : TAG_CTRL, MPI_COMM_WORLD,
                  &sr[r - 1]);
        /* a worker declared dead may be alive after all (slow): tell it
         * to stop too, but never wait on it */
        if (w >= 0 && c->st[w].dead)
            MPI_Request_free(&sr[r - 1]);
    }
    /* Workers that answer their STOP do so at once; only a worker busy
     * with its usual work deserves the whole shutdown_timeout. */
    int usual = 0;
    for (int w = 0; w < c->n; w++)
        usual |= !c->bye[w] && !c->st[w].unresponsive;
    double deadline = util_now() + (usual ? c->job->shutdown_timeout
                                          : fmin(1.0, c->job->shutdown_timeout));
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
                   "(pool.shutdown_timeout); the run ends without them",
                   list, c->job->shutdown_timeout);
        run_incomplete = 1;
        /* their requests are let go, never waited on */
        for (int w = 0; w < c->n; w++)
            if (!c->bye[w])
                declare_silent(c, w);
    }
    /* the STOPs to ranks that stopped, and the queries they took */
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        if (sr[r - 1] == MPI_REQUEST_NULL)
            continue;
        if (w >= 0 && !c->bye[w])
            MPI_Request_free(&sr[r - 1]);
        else
            MPI_Wait(&sr[r - 1], MPI_STATUS_IGNORE);
    }
    for (int w = 0; w < c->n; w++)
        if (c->sreq[w] != MPI_REQUEST_NULL)
            MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
    free(sr);
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

/* Refuse what the job asks for that its algorithm cannot do. */
static int check_abilities(struct coord *c)
{
    const struct setup *s = c->s;
    char where[256];
    if (s->job->target_gap > 0 && !c->opt_known) {
        params_where(where, sizeof where, s->job->m->path, s->job->gap_node);
        coord_fail(c, "%s: stop.gap: problem '%s' cannot give its optimum "
                      "(%s)",
                   where, s->prob->h.name, c->opt_why.text);
        return -1;
    }
    if ((s->job->checkpoint || s->resume) && !s->alg->save) {
        params_where(where, sizeof where, s->job->m->path,
                     s->job->checkpoint_node);
        coord_fail(c, "%s: output.checkpoint: algorithm '%s' cannot save "
                      "its state",
                   where, s->alg->h.name);
        return -1;
    }
    if (s->resume && !s->job->checkpoint) {
        coord_fail(c, "%s: --resume: the job names no output.checkpoint",
                   s->job->m->path);
        return -1;
    }
    return 0;
}

/* The first query: the algorithm's, or the checkpoint's (its state is
 * loaded back and the counters and clock go on from it). */
static int first_query(struct coord *c, int q)
{
    const struct setup *s = c->s;
    struct aia_error err;
    double *query = WIRE_PAYLOAD(c->q[q].buf);
    c->round = 1;
    if (!c->resumed) {
        if (s->alg->init(s->alg_s, query, &err) == 0)
            return 0;
        coord_fail(c, "algorithm '%s': init: %s", s->alg->h.name, err.text);
        return -1;
    }
    const struct checkpoint *k = &c->resume;
    if (s->alg->load(s->alg_s, k->state, k->state_len, &err) < 0) {
        coord_fail(c, "cannot resume: algorithm '%s': load: %s",
                   s->alg->h.name, err.text);
        return -1;
    }
    memcpy(query, k->query, k->query_len * sizeof *query);
    c->iteration = c->saved = c->ckpt_iter = k->iteration;
    c->epoch = c->saved_epoch = k->epoch;
    c->round = k->round;
    return 0;
}

/* Stopped by a signal: mpirun takes the job down (SIGKILL follows within
 * a second), so save what can be saved and leave without the shutdown. */
static void signal_exit(struct coord *c)
{
    record_iteration(c, 1);
    record_checkpoint(c, 1);
    host_error("stopped by signal %d (when a worker dies, mpirun ends the "
               "job this way)%s%s%s",
               (int)poll_signal, c->job->checkpoint ? "; checkpoint in " : "",
               c->job->checkpoint ? c->job->checkpoint : "",
               c->job->checkpoint ? ": continue with aiarun --resume" : "");
    c->status = RUN_FAILED;
    run_no_finalize = 1;
}

int coord_run(struct setup *s)
{
    struct coord c = {.s = s, .job = s->job, .n = s->nworkers, .cur = -1,
                      .prev = -1, .saved = -1, .loss_at = -1,
                      .progress_at = INFINITY};
    /* A dead worker's requests must fail, not abort the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    poll_catch_signals();
    if (coord_alloc(&c) < 0) {
        host_error("out of memory for %d workers; aborting the job", c.n);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    /* Listen to every worker from the start: whatever fails from here on,
     * the shutdown hears each goodbye. */
    for (int w = 0; w < c.n; w++)
        if (c.direct[w] && post_recv(&c, w) != MPI_SUCCESS) {
            host_error("cannot post a receive for rank %d; aborting the job",
                       s->ranks[w]);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
    record_optimum(&c);
    if (check_abilities(&c) < 0 ||
        (s->resume && record_read_resume(&c) < 0)) {
        c.status = RUN_BAD_JOB;
        goto stop;
    }
    if (record_open(&c) < 0)
        goto stop;
    int q = acquire(&c);
    if (q < 0) {
        coord_fail(&c, "out of memory for a query buffer");
        goto stop;
    }
    if (first_query(&c, q) < 0)
        goto stop;
    if (seal_query(&c, q, c.round) < 0)
        goto stop;
    c.cur = q;
    c.t0 = c.round_t0 = util_now() - (c.resumed ? c.resume.elapsed : 0);
    c.progress_at = util_now() + 1.0; /* progress for runs over a second */
    c.ckpt_at = util_now() + s->job->checkpoint_seconds;
    record_iteration(&c, 1);
    for (int w = 0; w < c.n && !c.why; w++)
        if (c.direct[w] && send_query(&c, w, util_now()) < 0)
            coord_fail(&c, "cannot send a query to rank %d", s->ranks[w]);
    loop(&c);
    if (c.why == STOP_SIGNAL) {
        signal_exit(&c);
        record_finish(&c);
        coord_free(&c);
        checkpoint_free(&c.resume);
        return c.status;
    }
    if (c.why != STOP_ERROR) {
        record_iteration(&c, 1);
        record_checkpoint(&c, 1);
    }
stop:
    if (!c.t_end)
        c.t_end = util_now();
    flag_unresponsive(&c);
    shutdown_pool(&c);
    record_finish(&c);
    finish(&c);
    coord_free(&c);
    checkpoint_free(&c.resume);
    return c.status;
}
