/* shard_rank.c - a shard rank's loop (pool.shards, shard.h): it waits
 * for rank 0's word and for the answer slices it names without spinning
 * (poll.c), and a slice that does not come within pool.shutdown_timeout
 * ends the job with the worker named.  A slice that holds a value that is
 * not finite, or that the algorithm fails to absorb, is reported to rank
 * 0 (shard.c), and this rank serves its last good slice to the end. */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "bell.h"
#include "core/diverge.h"
#include "core/host.h"
#include "core/util.h"
#include "core/wire.h"
#include "poll.h"
#include "run.h"
#include "shard.h"

struct qslice {
    double *buf; /* the algorithm's query: the slice, then its tail */
    int refs;    /* sends in flight from it */
};

struct shard {
    struct setup *s;
    struct qslice *q;
    int nq, cur, prev; /* the current and the previous iteration's query */
    MPI_Request *sreq; /* each worker's query slice in flight */
    int *sq;           /* the qslice sreq[w] reads */
    double *abuf;      /* an answer slice and its tail */
    double *mbuf;      /* the model's slice, for rank 0 */
    uint64_t recv, sent;
    int failed; /* a failure was reported: absorb and query no more */
};

static void die(const char *what, const char *text)
{
    host_error("shard: %s: %s; aborting the job", what, text);
    MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
}

/* This rank's part of the run failed: rank 0 is told, once, and stops
 * the run; this rank keeps its last good state and goes on serving rank
 * 0's word (the query slices, the model) until the end. */
static void report(struct shard *k, const char *text)
{
    struct shard_fail f = {.magic = WIRE_MAGIC};
    if (k->failed)
        return;
    snprintf(f.text, sizeof f.text, "%s", text);
    if (bell_send(&f, (int)sizeof f, 0, TAG_SHARD_FAIL) != MPI_SUCCESS)
        die("a failure report", text);
    k->sent += sizeof f;
    k->failed = 1;
}

/* The one check of an answer slice's values before it is absorbed (the
 * worker does not check what it sends; rank 0 checks its own part): a
 * value that is not finite means the method diverged, which is reported
 * to rank 0.  0, or -1 when reported. */
static int check_slice(struct shard *k, const struct aia_answer_info *info)
{
    const struct setup *s = k->s;
    size_t n = s->shape.answer_len, i = wire_nonfinite(k->abuf, n);
    if (i == n)
        return 0;
    /* the index in the whole answer: this rank's slice, then the tail */
    size_t at = i < s->slice_len
                    ? s->slice[s->shard] + i
                    : s->full.answer_len - (n - s->slice_len) +
                          (i - s->slice_len);
    char text[AIA_ERROR_LEN];
    diverge_answer(text, sizeof text, info->rank, s->alg->h.name,
                   info->sent_round, at, k->abuf[i], s->facts.smoothness);
    report(k, text);
    return -1;
}

/* The algorithm's call (its name and whose answer) failed on this
 * rank's slice: reported in the words rank 0 uses for its own. */
static void fail_call(struct shard *k, const char *call,
                      struct aia_error *err)
{
    char text[AIA_ERROR_LEN + 128];
    snprintf(text, sizeof text, "algorithm '%s': %s: %s", k->s->alg->h.name,
             call, util_error_text(err));
    report(k, text);
}

static int acquire(struct shard *k)
{
    for (int i = 0; i < k->nq; i++)
        if (k->q[i].refs == 0 && i != k->cur && i != k->prev)
            return i;
    for (int w = 0; w < k->s->nworkers; w++) {
        int done = 0;
        if (k->sreq[w] == MPI_REQUEST_NULL)
            continue;
        MPI_Test(&k->sreq[w], &done, MPI_STATUS_IGNORE);
        if (done)
            k->q[k->sq[w]].refs--;
    }
    for (int i = 0; i < k->nq; i++)
        if (k->q[i].refs == 0 && i != k->cur && i != k->prev)
            return i;
    struct qslice *q = realloc(k->q, (size_t)(k->nq + 1) * sizeof *q);
    if (!q)
        die("query buffer", "out of memory");
    k->q = q;
    size_t len = k->s->shape.query_len;
    if (!(q[k->nq].buf = util_alloc_aligned((len ? len : 1) * sizeof(double))))
        die("query buffer", "out of memory");
    q[k->nq].refs = 0;
    return k->nq++;
}

/* Worker w's next answer slice into abuf, within the bound. */
static void take_slice(struct shard *k, int w)
{
    const struct setup *s = k->s;
    MPI_Request r;
    size_t bytes = s->shape.answer_len * sizeof(double);
    double bound = s->job->pool.shutdown_timeout;
    if (MPI_Irecv(k->abuf, (int)bytes, MPI_BYTE, s->ranks[w], TAG_SLICE,
                  MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
        shard_await(&r, bound) < 0) {
        host_error("shard: rank %d's answer slice did not come within %g s "
                   "of its answer to rank 0 (pool.shutdown_timeout); "
                   "aborting the job",
                   s->ranks[w], bound);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    k->recv += bytes;
}

static void send_slice(struct shard *k, int w)
{
    const struct setup *s = k->s;
    if (w < 0 || w >= s->nworkers)
        die("rank 0's word", "a worker outside the pool");
    if (k->sreq[w] != MPI_REQUEST_NULL) {
        /* it answered that query: the send is done */
        MPI_Wait(&k->sreq[w], MPI_STATUS_IGNORE);
        k->q[k->sq[w]].refs--;
    }
    size_t bytes = s->slice_len * sizeof(double);
    if (bell_isend(k->q[k->cur].buf, (int)bytes, s->ranks[w], TAG_SLICE,
                   &k->sreq[w]) != MPI_SUCCESS)
        die("a query slice", "MPI_Isend failed");
    k->sq[w] = k->cur;
    k->q[k->cur].refs++;
    k->sent += bytes;
}

/* The sum of the squared changes of this slice since the previous
 * iteration, as record_change sums rank 0's. */
static void send_change(struct shard *k)
{
    double sum = NAN;
    if (k->prev >= 0) {
        const double *a = k->q[k->cur].buf, *b = k->q[k->prev].buf;
        size_t n = k->s->slice_len, j = 0;
        double s[4] = {0, 0, 0, 0};
        for (; j + 4 <= n; j += 4)
            for (int i = 0; i < 4; i++)
                s[i] += (a[j + i] - b[j + i]) * (a[j + i] - b[j + i]);
        for (; j < n; j++)
            s[0] += (a[j] - b[j]) * (a[j] - b[j]);
        sum = (s[0] + s[1]) + (s[2] + s[3]);
    }
    bell_send(&sum, (int)sizeof sum, 0, TAG_SHARD);
    k->sent += sizeof sum;
}

/* SHARD_SAVE: this rank's state, then its query slice, to rank 0. */
static void send_state(struct shard *k)
{
    const struct setup *s = k->s;
    struct aia_error err = {""};
    if (k->failed) { /* its state is older than rank 0's: none to save */
        uint64_t none = SHARD_STATE_NONE;
        bell_send(&none, (int)sizeof none, 0, TAG_SHARD);
        k->sent += sizeof none;
        return;
    }
    uint64_t len = s->alg->state_size(s->alg_s);
    void *buf = malloc(len ? len : 1);
    if (!buf)
        die("save", "out of memory");
    if (s->alg->save(s->alg_s, buf, &err) < 0)
        die("save", util_error_text(&err));
    bell_send(&len, (int)sizeof len, 0, TAG_SHARD);
    bell_send(buf, (int)len, 0, TAG_SHARD);
    bell_send(k->q[k->cur].buf, (int)(s->slice_len * sizeof(double)), 0,
              TAG_SHARD);
    k->sent += sizeof len + len + s->slice_len * sizeof(double);
    free(buf);
}

/* Receive bytes from rank 0 on TAG_SHARD into buf; 0 or -1. */
static int recv_lead(void *buf, size_t bytes)
{
    MPI_Request r;
    if (MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, TAG_SHARD, MPI_COMM_WORLD,
                  &r) != MPI_SUCCESS)
        return -1;
    return shard_await(&r, INFINITY);
}

/* SHARD_LOAD: this rank's state and query slice from rank 0. */
static void load_state(struct shard *k)
{
    const struct setup *s = k->s;
    struct aia_error err = {""};
    uint64_t len = 0;
    if (recv_lead(&len, sizeof len) < 0)
        die("load", "MPI error");
    void *buf = malloc(len ? len : 1);
    if (!buf)
        die("load", "out of memory");
    if (recv_lead(buf, len) < 0 ||
        recv_lead(k->q[k->cur].buf, s->slice_len * sizeof(double)) < 0)
        die("load", "MPI error");
    if (s->alg->load(s->alg_s, buf, len, &err) < 0)
        die("load", util_error_text(&err));
    k->recv += sizeof len + len + s->slice_len * sizeof(double);
    free(buf);
}

static void send_model(struct shard *k)
{
    const struct setup *s = k->s;
    struct aia_error err = {""};
    const double *x = k->q[k->cur].buf;
    if (s->alg->iterate) {
        if (s->alg->iterate(s->alg_s, k->mbuf, &err) < 0)
            die("iterate", util_error_text(&err));
        x = k->mbuf;
    }
    size_t bytes = s->slice_len * sizeof *x;
    bell_send(x, (int)bytes, 0, TAG_SHARD);
    k->sent += bytes;
}

/* Query slices that sends to workers let go may still read: reachable
 * from here until the process exits. */
static struct qslice *volatile lent_q;

int shard_run(struct setup *s)
{
    struct shard k = {.s = s, .cur = -1, .prev = -1};
    struct aia_error err = {""};
    int n = s->nworkers;
    /* a dead worker's requests must fail, not abort the job (as on
     * rank 0) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    guard_ignore_signals();
    poll_configure(s->job->pool.poll, s->job->pool.wake);
    k.sreq = malloc((size_t)(n ? n : 1) * sizeof *k.sreq);
    k.sq = calloc((size_t)(n ? n : 1), sizeof *k.sq);
    k.abuf = util_alloc_aligned(
        (s->shape.answer_len ? s->shape.answer_len : 1) * sizeof(double));
    k.mbuf = malloc((s->slice_len ? s->slice_len : 1) * sizeof(double));
    if (!k.sreq || !k.sq || !k.abuf || !k.mbuf)
        die("set-up", "out of memory");
    for (int w = 0; w < n; w++)
        k.sreq[w] = MPI_REQUEST_NULL;
    k.cur = acquire(&k);
    if (s->alg->init(s->alg_s, k.q[k.cur].buf, &err) < 0)
        die("init", util_error_text(&err));
    struct shard_msg m;
    MPI_Request req;
    for (int done = 0; !done;) {
        if (MPI_Irecv(&m, sizeof m, MPI_BYTE, 0, TAG_SHARD, MPI_COMM_WORLD,
                      &req) != MPI_SUCCESS ||
            shard_await(&req, INFINITY) < 0)
            die("rank 0's word", "MPI error");
        k.recv += sizeof m;
        if (m.magic != WIRE_MAGIC)
            die("rank 0's word", "a malformed message");
        switch (m.cmd) {
        case SHARD_ABSORB:
        case SHARD_DROP:
            if (m.w < 0 || m.w >= n)
                die("rank 0's word", "a worker outside the pool");
            take_slice(&k, m.w);
            if (m.cmd == SHARD_ABSORB && !k.failed &&
                check_slice(&k, &m.info) == 0 &&
                s->alg->absorb(s->alg_s, k.abuf, &m.info, &err) < 0) {
                char call[64];
                snprintf(call, sizeof call, "absorb (answer of rank %d)",
                         m.info.rank);
                fail_call(&k, call, &err);
            }
            break;
        case SHARD_NEXT: {
            if (k.failed) /* the last good query stays */
                break;
            int q = acquire(&k);
            if (s->alg->query(s->alg_s, k.q[q].buf, &err) < 0) {
                fail_call(&k, "query", &err);
                break;
            }
            k.prev = k.cur;
            k.cur = q;
            break;
        }
        case SHARD_SEND:
            send_slice(&k, m.w);
            break;
        case SHARD_MODEL:
            send_model(&k);
            break;
        case SHARD_CHANGE:
            send_change(&k);
            break;
        case SHARD_SAVE:
            send_state(&k);
            break;
        case SHARD_LOAD:
            load_state(&k);
            break;
        case SHARD_BYTES: {
            uint64_t b[3] = {k.recv, k.sent + 3 * sizeof(uint64_t),
                             (uint64_t)k.failed};
            bell_send(b, (int)sizeof b, 0, TAG_SHARD);
            break;
        }
        case SHARD_PING: {
            uint64_t here = k.recv;
            bell_send(&here, (int)sizeof here, 0, TAG_SHARD);
            k.sent += sizeof here;
            break;
        }
        case SHARD_END:
            done = 1;
            break;
        default:
            die("rank 0's word", "an unknown command");
        }
    }
    /* a send to a worker let go may never complete: not waited on, and
     * its buffer stays */
    int lent = 0;
    for (int w = 0; w < n; w++) {
        int fin = 1;
        if (k.sreq[w] != MPI_REQUEST_NULL)
            MPI_Test(&k.sreq[w], &fin, MPI_STATUS_IGNORE);
        if (!fin) {
            MPI_Request_free(&k.sreq[w]);
            lent = 1;
        }
    }
    if (lent) {
        lent_q = k.q; /* MPI may still read them */
    } else {
        for (int i = 0; i < k.nq; i++)
            free(k.q[i].buf);
        free(k.q);
    }
    free(k.sreq);
    free(k.sq);
    free(k.abuf);
    free(k.mbuf);
    return worker_run(s);
}
