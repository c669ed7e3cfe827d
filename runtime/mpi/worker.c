/* worker.c - a worker: answer queries until the coordinator says stop.
 *
 * A worker keeps a receive posted for queries and one for the control tag.
 * It answers each query with the algorithm's worker step, sends the answer
 * without waiting for it to be received, and on STOP collects the queries
 * still on their way (the STOP says how many were sent), then says BYE
 * with the number of answers it sent, so the coordinator knows when
 * nothing is left in flight.  Injected delays are waited out while
 * watching the control tag, so a delayed (or hung) worker stops at once.
 */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "core/codec.h"
#include "eval.h"
#include "core/host.h"
#include "poll.h"
#include "run.h"
#include "session/straggle.h"
#include "tree.h"
#include "core/util.h"
#include "core/wire.h"

struct worker {
    struct setup *s;
    char *qbuf, *abuf;
    size_t qbytes;     /* the largest query message */
    struct codec qc, ac; /* queries' decoder, answers' encoder */
    double *qdec;      /* with a query codec: the query, decoded */
    char *araw;        /* with an answer codec: the answer as doubles */
    struct wire_hdr ctrl;
    MPI_Request req[2]; /* 0: query, 1: control */
    MPI_Request areq;   /* the answer in flight */
    char ebuf[WIRE_BYTES(EVAL_LEN)]; /* the evaluation in flight */
    MPI_Request ereq;
    uint64_t queries, answers;
    int failed;
    struct straggle delays;
    double sent_at; /* when the last answer left; 0: none since a query */
    double gap;     /* moving average of answer sent -> next query */
    /* pool.shards: the query assembled from its slices, the whole answer,
     * the answer's part for each shard rank and its send */
    double *qfull, *afull;
    double **part;
    MPI_Request *preq;
    MPI_Request *sreq; /* the query slices' receives, then the control's */
    int *sidx;
    MPI_Status *sst;
    int stopped; /* a STOP came while the slices were awaited */
};

/* The answer's values past the model's (a version, a part's index):
 * every shard rank gets them after its slice. */
static size_t answer_tail(const struct setup *s)
{
    return s->shape.answer_len - s->dim;
}

static int control(struct worker *k);

/* With shards, the query whose rank 0 part is in qbuf: each shard rank's
 * slice, received into qfull beside rank 0's (slice 0 and the tail).  A
 * shard rank may be lost (stopped or dead) and its slice never come, so
 * the control tag is watched meanwhile: a STOP that says so
 * (WIRE_NO_FINALIZE) drops the query, 1; another STOP is noted
 * (k->stopped) and the slices still taken, 0.  -1 when rank 0 was silent
 * for pool.coordinator_timeout (each keep-alive starts it again). */
static int take_slices(struct worker *k, int got)
{
    const struct setup *s = k->s;
    const struct wire_hdr *q = (const void *)k->qbuf;
    size_t n0 = s->slice[1], tail = s->shape.query_len - s->dim;
    int n = s->shards, left = n - 1, rc = 0;
    MPI_Request *r = k->sreq; /* 0: control, j: shard rank j's slice */
    double quiet = s->job->pool.coordinator_timeout;
    double until = quiet > 0 ? util_now() + quiet : INFINITY;
    if (k->stopped && (k->ctrl.flags & WIRE_NO_FINALIZE))
        return 1;
    if ((size_t)got == sizeof *q + (n0 + tail) * sizeof(double) &&
        q->len == n0 + tail) {
        memcpy(k->qfull, WIRE_PAYLOAD(q), n0 * sizeof(double));
        memcpy(k->qfull + s->dim, (const double *)WIRE_PAYLOAD(q) + n0,
               tail * sizeof(double));
    }
    for (int j = 1; j < n; j++)
        MPI_Irecv(k->qfull + s->slice[j],
                  (int)((s->slice[j + 1] - s->slice[j]) * sizeof(double)),
                  MPI_BYTE, j, TAG_SLICE, MPI_COMM_WORLD, &r[j]);
    r[0] = k->req[1];
    while (left > 0 && rc == 0) {
        int m = poll_some(n, r, k->sidx, k->sst, until);
        if (m < 0) {
            host_error("MPI error while waiting for a query's slices");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (m == 0 && util_now() >= until)
            rc = -1;
        for (int i = 0; i < m; i++) {
            if (k->sidx[i] > 0) {
                left--;
                continue;
            }
            k->req[1] = MPI_REQUEST_NULL;
            if (!control(k)) { /* a keep-alive: its receive posted again */
                r[0] = k->req[1];
                /* rank 0 is alive and still waits on a shard rank (for
                 * up to pool.shard_timeout, which may be the longer) */
                if (quiet > 0)
                    until = util_now() + quiet;
                continue;
            }
            k->stopped = 1;
            if (k->ctrl.flags & WIRE_NO_FINALIZE)
                rc = 1;
        }
    }
    k->req[1] = r[0];
    for (int j = 1; j < n; j++) /* a lost rank's slice is not waited for */
        if (r[j] != MPI_REQUEST_NULL) {
            MPI_Cancel(&r[j]);
            MPI_Request_free(&r[j]);
        }
    return rc;
}

/* The answer parts in flight were received (a new query proves it);
 * after a STOP saying a shard rank is lost, they are let go instead. */
static void parts_done(struct worker *k)
{
    int lost = k->stopped && (k->ctrl.flags & WIRE_NO_FINALIZE);
    for (int j = 1; k->preq && j < k->s->shards; j++)
        if (k->preq[j] != MPI_REQUEST_NULL) {
            if (lost)
                MPI_Request_free(&k->preq[j]);
            else
                MPI_Wait(&k->preq[j], MPI_STATUS_IGNORE);
        }
}

static int post_query(struct worker *k)
{
    return MPI_Irecv(k->qbuf, (int)k->qbytes, MPI_BYTE, 0, TAG_QUERY,
                     MPI_COMM_WORLD, &k->req[0]);
}

/* The control message in k->ctrl came: a keep-alive (the coordinator
 * waits on other workers) is taken and the receive posted again, 0;
 * anything else (a STOP) is for the caller, 1. */
static int control(struct worker *k)
{
    if (k->ctrl.magic != WIRE_MAGIC || k->ctrl.kind != WIRE_ALIVE)
        return 1;
    MPI_Irecv(&k->ctrl, sizeof k->ctrl, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD,
              &k->req[1]);
    return 0;
}

/* Tell the coordinator this worker failed; the text is also printed
 * here, so it is not lost if the coordinator is gone. */
static void report(struct worker *k, const char *text)
{
    /* the coordinator prints it, naming this rank: one line, not one a
     * rank (-v shows each rank's own) */
    host_log(AIA_LOG_INFO, "%s", text);
    size_t len = strlen(text) + 1;
    if (len > WIRE_ERROR_TEXT)
        len = WIRE_ERROR_TEXT;
    char *msg = calloc(1, sizeof(struct wire_hdr) + WIRE_ERROR_TEXT);
    if (!msg)
        return;
    *(struct wire_hdr *)msg = (struct wire_hdr){
        .magic = WIRE_MAGIC, .kind = WIRE_ERROR, .len = len};
    memcpy(msg + sizeof(struct wire_hdr), text, len - 1);
    if (k->areq != MPI_REQUEST_NULL)
        MPI_Wait(&k->areq, MPI_STATUS_IGNORE);
    bell_send(msg, (int)(sizeof(struct wire_hdr) + len), 0, TAG_ANSWER);
    free(msg);
    k->failed = 1;
}

/* Wait out an injected delay; 1 when a STOP came meanwhile. */
static int delay(struct worker *k, double seconds)
{
    if (!(seconds > 0))
        return 0;
    int idx;
    MPI_Status st;
    double until = isinf(seconds) ? INFINITY : util_now() + seconds;
    for (;;) {
        int n = poll_some(1, &k->req[1], &idx, &st, until);
        if (n < 0) {
            host_error("MPI error while waiting out a delay");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (n == 0 || control(k))
            return n > 0;
    }
}

/* Answer the query in qbuf (got: its bytes); 1 when a STOP came during
 * an injected delay (the answer is then not sent). */
static int answer(struct worker *k, int got)
{
    const struct setup *s = k->s;
    const struct wire_hdr *q = (const void *)k->qbuf;
    char text[WIRE_ERROR_TEXT];
    struct aia_error err;
    size_t qlen = s->shards > 1
                      ? s->slice[1] + s->shape.query_len - s->dim
                      : s->shape.query_len;
    if ((size_t)got < sizeof *q || q->magic != WIRE_MAGIC ||
        q->kind != WIRE_QUERY || q->len != qlen ||
        q->codec != (uint32_t)s->job->codec.query ||
        (size_t)got != sizeof *q + q->bytes) {
        snprintf(text, sizeof text, "received a malformed query");
        report(k, text);
        return 0;
    }
    const double *query = k->qfull ? k->qfull : WIRE_PAYLOAD(q);
    if (k->qdec) {
        if (codec_decode(&k->qc, WIRE_PAYLOAD(q), q->bytes, k->qdec,
                         &err) < 0) {
            snprintf(text, sizeof text, "received a query that does not "
                                        "decode: %s",
                     err.text);
            report(k, text);
            return 0;
        }
        query = k->qdec;
    }
    /* The previous answer was received: this query proves it. */
    if (k->areq != MPI_REQUEST_NULL)
        MPI_Wait(&k->areq, MPI_STATUS_IGNORE);
    parts_done(k);
    struct aia_step step = {.round = q->round, .answers = k->answers};
    double *out = k->afull  ? k->afull
                  : k->araw ? (double *)k->araw
                            : WIRE_PAYLOAD(k->abuf);
    double t = util_now();
    err.text[0] = '\0';
    if (s->alg->worker(s->alg_s, query, out, &step, &err) < 0) {
        snprintf(text, sizeof text, "algorithm '%s': worker step: %s",
                 s->alg->h.name, util_error_text(&err));
        report(k, text);
        return 0;
    }
    /* what it sends is checked where it is received, once (coord.c,
     * tree.c, shard_rank.c): a value that is not finite stops the run there */
    size_t bytes = s->shape.answer_len * sizeof(double);
    if (k->araw && codec_encode(&k->ac, out, WIRE_PAYLOAD(k->abuf), &bytes,
                                &err) < 0) {
        snprintf(text, sizeof text, "answer to round %llu: %s",
                 (unsigned long long)q->round, err.text);
        report(k, text);
        return 0;
    }
    /* stragglers.slow: the step took factor times as long */
    double injected =
        straggle_next(&k->delays) + (k->delays.factor - 1) * (util_now() - t);
    /* the emulated link: the query came over it, the answer goes */
    double link = s->job->stragglers.link_bps > 0
                      ? 8.0 * (double)(got + sizeof *q + bytes) /
                            s->job->stragglers.link_bps
                      : 0;
    if (delay(k, injected + link))
        return 1;
    double compute = util_now() - t;
    size_t alen = s->shape.answer_len;
    if (k->afull) {
        /* each shard rank its slice and the tail, rank 0 the first */
        size_t tail = answer_tail(s);
        for (int j = 1; j < s->shards; j++) {
            size_t len = s->slice[j + 1] - s->slice[j];
            memcpy(k->part[j], out + s->slice[j], len * sizeof *out);
            memcpy(k->part[j] + len, out + s->dim, tail * sizeof *out);
            bell_isend(k->part[j], (int)((len + tail) * sizeof *out), j,
                       TAG_SLICE, &k->preq[j]);
        }
        double *p = WIRE_PAYLOAD(k->abuf);
        memcpy(p, out, s->slice[1] * sizeof *out);
        memcpy(p + s->slice[1], out + s->dim, tail * sizeof *out);
        alen = s->slice[1] + tail;
        bytes = alen * sizeof *out;
    }
    *(struct wire_hdr *)k->abuf =
        (struct wire_hdr){.magic = WIRE_MAGIC,
                          .kind = WIRE_ANSWER,
                          .round = q->round,
                          .len = alen,
                          .seq = k->answers,
                          .compute_s = compute,
                          .delay_s = injected + link,
                          .codec = (uint32_t)s->job->codec.answer,
                          .bytes = (uint32_t)bytes};
    if (straggle_corrupt(&k->delays)) /* an injected fault */
        ((struct wire_hdr *)k->abuf)->magic ^= 0xdeadbeefu;
    bell_isend(k->abuf, (int)(sizeof *q + bytes), 0, TAG_ANSWER, &k->areq);
    k->answers++;
    /* the next query is due about as long after this answer as the last
     * one was: wait for it without sleeping, where the node allows */
    k->sent_at = util_now();
    if (k->gap > 0)
        poll_expect(k->sent_at + 1.5 * k->gap + 100e-6);
    return 0;
}

/* Answer the EVAL in qbuf (got: its bytes) with the sums over this
 * rank's rows. */
static void evaluate(struct worker *k, int got)
{
    const struct setup *s = k->s;
    const struct wire_hdr *q = (const void *)k->qbuf;
    char text[WIRE_ERROR_TEXT];
    struct aia_error err;
    if (q->len != s->dim || (size_t)got != WIRE_BYTES(s->dim)) {
        report(k, "received a malformed evaluation");
        return;
    }
    if (k->ereq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ereq, MPI_STATUS_IGNORE);
    if (eval_rows(s, WIRE_PAYLOAD(q), !!(q->flags & WIRE_EVAL_SAMPLE),
                  WIRE_PAYLOAD(k->ebuf), &err) < 0) {
        snprintf(text, sizeof text, "%s", err.text);
        report(k, text);
        return;
    }
    *(struct wire_hdr *)k->ebuf = (struct wire_hdr){
        .magic = WIRE_MAGIC, .kind = WIRE_EVALANS, .len = EVAL_LEN,
        .seq = q->seq};
    bell_isend(k->ebuf, (int)sizeof k->ebuf, 0, TAG_ANSWER, &k->ereq);
}

/* After STOP: take the queries still on their way, then say goodbye. */
static void goodbye(struct worker *k, uint64_t sent)
{
    while (k->queries < sent) {
        MPI_Status st;
        int got = 0;
        if (k->req[0] == MPI_REQUEST_NULL)
            post_query(k);
        MPI_Wait(&k->req[0], &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        const struct wire_hdr *q = (const void *)k->qbuf;
        if (k->qfull && (size_t)got >= sizeof *q && q->kind == WIRE_QUERY &&
            !(k->ctrl.flags & WIRE_NO_FINALIZE))
            take_slices(k, got);
        k->queries++;
    }
    k->stopped = 1;
    parts_done(k);
    if (k->req[0] != MPI_REQUEST_NULL) {
        MPI_Cancel(&k->req[0]);
        MPI_Wait(&k->req[0], MPI_STATUS_IGNORE);
    }
    if (k->areq != MPI_REQUEST_NULL)
        MPI_Wait(&k->areq, MPI_STATUS_IGNORE);
    if (k->ereq != MPI_REQUEST_NULL)
        MPI_Wait(&k->ereq, MPI_STATUS_IGNORE);
    struct wire_hdr bye = {.magic = WIRE_MAGIC, .kind = WIRE_BYE,
                           .seq = k->answers};
    bell_send(&bye, sizeof bye, 0, TAG_ANSWER);
}

/* After the goodbye: the coordinator says whether every rank is there to
 * call MPI_Finalize (it waits for all of them).  No word in time means no:
 * the coordinator is gone. */
static int await_finish(const struct setup *s, int status)
{
    struct wire_hdr fin;
    MPI_Request req;
    int idx;
    MPI_Status st;
    MPI_Irecv(&fin, sizeof fin, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD, &req);
    double until = util_now() + s->job->pool.shutdown_timeout + 10;
    int n;
    /* keep-alives all came before the STOP: none is expected here */
    while ((n = poll_some(1, &req, &idx, &st, until)) == 1 &&
           fin.magic == WIRE_MAGIC && fin.kind == WIRE_ALIVE)
        MPI_Irecv(&fin, sizeof fin, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD,
                  &req);
    if (n != 1 ||
        fin.magic != WIRE_MAGIC || fin.kind != WIRE_FINISH) {
        if (req != MPI_REQUEST_NULL) {
            MPI_Cancel(&req);
            MPI_Request_free(&req);
        }
        host_error("no word from the coordinator after the stop; leaving");
        run_no_finalize = 1;
        return RUN_FAILED;
    }
    if (fin.flags & WIRE_NO_FINALIZE)
        run_no_finalize = 1;
    return status;
}

int worker_run(struct setup *s)
{
    if (s->windex >= 0 && s->job->pool.topology == JOB_TREE)
        return tree_worker_run(s);
    struct worker k = {.s = s, .req = {MPI_REQUEST_NULL, MPI_REQUEST_NULL},
                       .areq = MPI_REQUEST_NULL, .ereq = MPI_REQUEST_NULL};
    int in_pool = s->windex >= 0;
    guard_ignore_signals();
    poll_configure(s->job->pool.poll, s->job->pool.wake);
    if (in_pool) {
        const struct job *job = s->job;
        size_t alen = s->shape.answer_len, qlen = s->shape.query_len;
        struct aia_error err;
        if (codec_init(&k.qc, job->codec.query, qlen, 0, job->codec.level,
                       &err) < 0 ||
            codec_init(&k.ac, job->codec.answer, alen,
                       codec_topk_count(job->codec.topk, alen),
                       job->codec.level, &err) < 0) {
            host_error("%s; aborting the job", err.text);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        /* receives take the largest query the codec makes */
        k.qbytes = sizeof(struct wire_hdr) + codec_bound(&k.qc);
        if (eval_by_workers(s) && k.qbytes < WIRE_BYTES(s->dim))
            k.qbytes = WIRE_BYTES(s->dim); /* an EVAL holds the model */
        size_t abytes = sizeof(struct wire_hdr) + codec_bound(&k.ac);
        k.qbuf = util_alloc_aligned(k.qbytes);
        k.abuf = util_alloc_aligned(abytes);
        if (job->codec.query != CODEC_NONE)
            k.qdec = malloc((qlen ? qlen : 1) * sizeof *k.qdec);
        if (job->codec.answer != CODEC_NONE)
            k.araw = util_alloc_aligned(alen * sizeof(double));
        if (!k.qbuf || !k.abuf || (job->codec.query != CODEC_NONE && !k.qdec) ||
            (job->codec.answer != CODEC_NONE && !k.araw)) {
            host_error("out of memory for message buffers; aborting the "
                       "job");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (s->shards > 1) {
            k.qfull = malloc((qlen ? qlen : 1) * sizeof *k.qfull);
            k.afull = malloc((alen ? alen : 1) * sizeof *k.afull);
            k.part = calloc((size_t)s->shards, sizeof *k.part);
            k.preq = malloc((size_t)s->shards * sizeof *k.preq);
            k.sreq = malloc((size_t)s->shards * sizeof *k.sreq);
            k.sidx = malloc((size_t)s->shards * sizeof *k.sidx);
            k.sst = malloc((size_t)s->shards * sizeof *k.sst);
            if (!k.qfull || !k.afull || !k.part || !k.preq || !k.sreq ||
                !k.sidx || !k.sst) {
                host_error("out of memory for message buffers; aborting "
                           "the job");
                MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
            }
            for (int j = 0; j < s->shards; j++) {
                size_t len = s->slice[j + 1] - s->slice[j] + answer_tail(s);
                k.preq[j] = MPI_REQUEST_NULL;
                if (j > 0 && !(k.part[j] = malloc(len * sizeof(double)))) {
                    host_error("out of memory for message buffers; "
                               "aborting the job");
                    MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
                }
            }
        }
        post_query(&k);
        straggle_init(&k.delays, &s->job->stragglers, s->job->seed, s->rank);
    }
    MPI_Irecv(&k.ctrl, sizeof k.ctrl, MPI_BYTE, 0, TAG_CTRL, MPI_COMM_WORLD,
              &k.req[1]);
    /* A worker of the pool hears from the coordinator every round, and
     * while idle a keep-alive every third of pool.coordinator_timeout;
     * one silent for that long is stopped or gone. */
    double quiet = s->job->pool.coordinator_timeout;
    for (;;) {
        int idx[2];
        MPI_Status st[2];
        double until = in_pool && quiet > 0 ? util_now() + quiet : INFINITY;
        int n = poll_some(2, k.req, idx, st, until);
        if (n < 0) {
            host_error("MPI error while waiting for the coordinator");
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (n == 0 && util_now() >= until) {
            host_error("no word from the coordinator for %g s "
                       "(pool.coordinator_timeout): it is stopped or gone; "
                       "leaving",
                       quiet);
            run_no_finalize = 1;
            return RUN_FAILED;
        }
        int stop = 0;
        /* the control message first: a STOP that says a shard rank is
         * lost tells take_slices not to wait for a query's slices */
        for (int i = 0; i < n; i++)
            if (idx[i] == 1 && control(&k))
                stop = k.stopped = 1;
        for (int i = 0; i < n; i++) {
            if (idx[i] == 1)
                continue;
            k.queries++;
            poll_expect_clear();
            if (k.sent_at > 0) {
                double gap = util_now() - k.sent_at;
                k.gap = k.gap == 0 ? gap : 0.75 * k.gap + 0.25 * gap;
                k.sent_at = 0;
            }
            int got = 0;
            MPI_Get_count(&st[i], MPI_BYTE, &got);
            const struct wire_hdr *q = (const void *)k.qbuf;
            int sl = 0;
            if (k.qfull && (size_t)got >= sizeof *q &&
                q->kind == WIRE_QUERY)
                sl = take_slices(&k, got); /* whatever becomes of it */
            if (sl < 0) {
                host_error("no slice of a query from the shard ranks and "
                           "no word from the coordinator for %g s "
                           "(pool.coordinator_timeout); leaving",
                           quiet);
                run_no_finalize = 1;
                return RUN_FAILED;
            }
            if (sl > 0) { /* a STOP: a shard rank is lost */
                stop = 1;
                break;
            }
            if ((size_t)got >= sizeof *q && q->magic == WIRE_MAGIC &&
                q->kind == WIRE_EVAL) {
                if (!k.failed)
                    evaluate(&k, got);
            } else if (!k.failed && answer(&k, got)) {
                /* the STOP is in: leave its request for the check below */
                stop = 1;
                break;
            }
            post_query(&k);
            if (k.stopped) { /* it came while the slices were awaited */
                stop = 1;
                break;
            }
        }
        if (stop)
            break;
    }
    if (k.ctrl.magic != WIRE_MAGIC || k.ctrl.kind != WIRE_STOP) {
        host_error("received a malformed control message; aborting the "
                   "job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    if (in_pool)
        goodbye(&k, k.ctrl.seq);
    int status = await_finish(s, k.ctrl.status);
    free(k.qbuf);
    free(k.abuf);
    free(k.qdec);
    free(k.araw);
    free(k.qfull);
    free(k.afull);
    for (int j = 0; k.part && j < s->shards; j++)
        free(k.part[j]);
    free(k.part);
    free(k.preq);
    free(k.sreq);
    free(k.sidx);
    free(k.sst);
    codec_free(&k.qc);
    codec_free(&k.ac);
    return status;
}
