/* shard.c - shard ranks (pool.shards, shard.h): rank 0's side (its word
 * to the shard ranks, the model gathered from them, their failures) and
 * a shard rank's loop.  Rank 0 talks to shard ranks with nonblocking
 * sends only; a shard rank waits for rank 0's word and for the answer
 * slices it names without spinning (poll.c), and a slice that does not
 * come within pool.shutdown_timeout ends the job with the worker named.
 * A slice that holds a value that is not finite, or that the algorithm
 * fails to absorb, is reported to rank 0, which stops the run as it does
 * for its own slice (exit 1, the history and summary kept). */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "coord.h"
#include "core/diverge.h"
#include "core/host.h"
#include "core/util.h"
#include "core/wire.h"
#include "poll.h"
#include "run.h"
#include "shard.h"

/* A failed shard rank's answer to SHARD_SAVE, in place of its state's
 * length: nothing follows. */
#define SHARD_STATE_NONE UINT64_MAX

/* Rank 0's messages in flight: a ring of them, each sent to every shard
 * rank.  Small messages complete at once (eager); a slot is waited on
 * only when it comes round again. */
#define SHARD_RING 256

struct shard_lead {
    int n; /* shard ranks besides rank 0 */
    struct shard_msg ring[SHARD_RING];
    MPI_Request *req; /* SHARD_RING x n */
    unsigned next;
    uint64_t sent, recv; /* rank 0's bytes to and from shard ranks */
    int ended;
    struct shard_fail *fail; /* n: each shard rank's failure, if it comes */
    MPI_Request *freq;       /* n: their receives, posted at the start */
    int failed;              /* the first shard rank heard to fail, or 0 */
};

/* Wait for one request within seconds; 0, or -1 when it did not
 * complete (or MPI failed). */
static int await(MPI_Request *req, double seconds)
{
    int idx;
    MPI_Status st;
    double until = util_now() + seconds;
    while (*req != MPI_REQUEST_NULL) {
        int n = poll_some(1, req, &idx, &st, until);
        if (n < 0 || (n == 0 && util_now() >= until))
            return -1;
    }
    return 0;
}

void shard_tell(struct coord *c, enum shard_cmd cmd, int w,
                const struct aia_answer_info *info)
{
    struct shard_lead *sh = c->sh;
    if (!sh || sh->ended)
        return;
    unsigned slot = sh->next++ % SHARD_RING;
    MPI_Request *req = sh->req + (size_t)slot * (size_t)sh->n;
    for (int j = 0; j < sh->n; j++)
        if (req[j] != MPI_REQUEST_NULL)
            MPI_Wait(&req[j], MPI_STATUS_IGNORE);
    struct shard_msg *m = &sh->ring[slot];
    *m = (struct shard_msg){.magic = WIRE_MAGIC, .cmd = cmd, .w = w};
    if (info)
        m->info = *info;
    for (int j = 0; j < sh->n; j++)
        if (bell_isend(m, sizeof *m, j + 1, TAG_SHARD, &req[j]) !=
            MPI_SUCCESS) {
            host_error("cannot send to shard rank %d; aborting the job",
                       j + 1);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
    sh->sent += (uint64_t)sh->n * sizeof *m;
}

/* Shard rank j's failure report (j >= 1), if it has come, or with wait
 * once it comes (its rank said it sent one): the run fails with it, and
 * as well when the report cannot be received or does not come. */
static void take_report(struct coord *c, int j, int wait)
{
    struct shard_lead *sh = c->sh;
    MPI_Request *r = &sh->freq[j - 1];
    struct shard_fail *f = &sh->fail[j - 1];
    int done = 1;
    if (*r == MPI_REQUEST_NULL)
        return;
    if (wait ? await(r, c->l.job->pool.shutdown_timeout) < 0
             : MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        /* no report will be read into f once the receive is cancelled */
        MPI_Cancel(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
        *r = MPI_REQUEST_NULL;
        sh->failed = sh->failed ? sh->failed : j;
        lead_fail(&c->l, "stopping: shard rank %d: its failure report %s", j,
                  wait ? "did not come within pool.shutdown_timeout"
                       : "could not be received");
        return;
    }
    if (!done)
        return;
    *r = MPI_REQUEST_NULL;
    sh->recv += sizeof *f;
    sh->failed = sh->failed ? sh->failed : j;
    f->text[sizeof f->text - 1] = '\0';
    if (f->magic != WIRE_MAGIC)
        lead_fail(&c->l, "shard rank %d sent a malformed report", j);
    else
        lead_fail(&c->l, "stopping: shard rank %d: %s", j, f->text);
}

void shard_heard(struct coord *c)
{
    if (!c->sh)
        return;
    for (int j = 1; j <= c->sh->n; j++)
        take_report(c, j, 0);
}

/* The recorder's model (record_model): rank 0's slice, then each shard
 * rank's. */
static int gather(void *ctx, double *x, struct aia_error *err)
{
    struct coord *c = ctx;
    const struct setup *s = c->l.s;
    struct shard_lead *sh = c->sh;
    if (s->alg->iterate) {
        if (s->alg->iterate(s->alg_s, x, err) < 0)
            return -1;
    } else {
        memcpy(x, c->l.r.query, s->slice[1] * sizeof *x);
    }
    shard_tell(c, SHARD_MODEL, -1, NULL);
    for (int j = 1; j <= sh->n; j++) {
        MPI_Request r;
        size_t len = s->slice[j + 1] - s->slice[j];
        if (MPI_Irecv(x + s->slice[j], (int)(len * sizeof *x), MPI_BYTE, j,
                      TAG_SHARD, MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
            await(&r, c->l.job->pool.shutdown_timeout) < 0)
            return aia_seterr(err, "shard rank %d did not send its slice of "
                                   "the model within %g s "
                                   "(pool.shutdown_timeout)",
                              j, c->l.job->pool.shutdown_timeout);
        sh->recv += len * sizeof *x;
        /* a failure it reported came before its slice */
        take_report(c, j, 0);
    }
    if (sh->failed)
        return aia_seterr(err, "shard rank %d failed: no model whose slices "
                               "are from different iterations",
                          sh->failed);
    return 0;
}

/* The recorder's shard_change (record_change): each shard rank's sum,
 * added in rank order. */
static double change(void *ctx)
{
    struct coord *c = ctx;
    struct shard_lead *sh = c->sh;
    double sum = 0;
    shard_tell(c, SHARD_CHANGE, -1, NULL);
    for (int j = 1; j <= sh->n; j++) {
        MPI_Request r;
        double part = NAN;
        if (MPI_Irecv(&part, (int)sizeof part, MPI_BYTE, j, TAG_SHARD,
                      MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
            await(&r, c->l.job->pool.shutdown_timeout) < 0) {
            host_error("shard rank %d did not send the change of its slice; "
                       "aborting the job", j);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        sh->recv += sizeof part;
        sum += part;
    }
    return sum;
}

/* Receive bytes from rank src into buf within seconds; 0 or -1. */
static int recv_within(void *buf, size_t bytes, int src, double seconds)
{
    MPI_Request r;
    if (MPI_Irecv(buf, (int)bytes, MPI_BYTE, src, TAG_SHARD, MPI_COMM_WORLD,
                  &r) != MPI_SUCCESS)
        return -1;
    return await(&r, seconds);
}

/* A checkpoint's state with shards: the count of ranks, each rank's
 * length, then each rank's state, in rank order. */
static size_t block_head(int ranks)
{
    return (size_t)(ranks + 1) * sizeof(uint64_t);
}

/* The recorder's shard_save (record_checkpoint). */
static int save(void *ctx, void **state, size_t *len, double **query,
                struct aia_error *err)
{
    struct coord *c = ctx;
    const struct setup *s = c->l.s;
    struct shard_lead *sh = c->sh;
    int ranks = s->shards;
    double bound = c->l.job->pool.shutdown_timeout;
    size_t n0 = s->slice[1], tail = s->shape.query_len - n0;
    uint64_t *lens = calloc((size_t)ranks, sizeof *lens);
    void **parts = calloc((size_t)ranks, sizeof *parts);
    double *whole = malloc(s->full.query_len * sizeof *whole);
    int rc = -1;
    *state = NULL;
    *query = NULL;
    if (!lens || !parts || !whole) {
        aia_seterr(err, "out of memory for the checkpoint");
        goto out;
    }
    lens[0] = s->alg->state_size(s->alg_s);
    if (!(parts[0] = malloc(lens[0] ? lens[0] : 1))) {
        aia_seterr(err, "out of memory for the checkpoint");
        goto out;
    }
    if (s->alg->save(s->alg_s, parts[0], err) < 0)
        goto out;
    memcpy(whole, c->l.r.query, n0 * sizeof *whole);
    memcpy(whole + s->dim, c->l.r.query + n0, tail * sizeof *whole);
    shard_tell(c, SHARD_SAVE, -1, NULL);
    int failed = 0;
    for (int j = 1; j < ranks; j++) {
        size_t slen = s->slice[j + 1] - s->slice[j];
        int got = recv_within(&lens[j], sizeof lens[j], j, bound) == 0;
        if (got && lens[j] == SHARD_STATE_NONE) { /* it failed: no more */
            sh->recv += sizeof lens[j];
            lens[j] = 0;
            failed = failed ? failed : j;
            continue;
        }
        if (!got || !(parts[j] = malloc(lens[j] ? lens[j] : 1)) ||
            recv_within(parts[j], lens[j], j, bound) < 0 ||
            recv_within(whole + s->slice[j], slen * sizeof *whole, j,
                        bound) < 0) {
            /* the replies that did not come would be taken for the next
             * ones: the job cannot go on */
            host_error("shard rank %d did not send its state for the "
                       "checkpoint; aborting the job", j);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        sh->recv += sizeof lens[j] + lens[j] + slen * sizeof *whole;
    }
    if (failed) { /* its slice is older than the others: no checkpoint */
        take_report(c, failed, 1);
        aia_seterr(err, "shard rank %d failed: no checkpoint of a model "
                        "whose slices are from different iterations",
                   failed);
        goto out;
    }
    size_t total = block_head(ranks);
    for (int j = 0; j < ranks; j++)
        total += lens[j];
    char *b = malloc(total);
    if (!b) {
        aia_seterr(err, "out of memory for the checkpoint");
        goto out;
    }
    uint64_t head = (uint64_t)ranks;
    memcpy(b, &head, sizeof head);
    memcpy(b + sizeof head, lens, (size_t)ranks * sizeof *lens);
    size_t off = block_head(ranks);
    for (int j = 0; j < ranks; j++) {
        memcpy(b + off, parts[j], lens[j]);
        off += lens[j];
    }
    *state = b;
    *len = total;
    *query = whole;
    whole = NULL;
    rc = 0;
out:
    for (int j = 0; parts && j < ranks; j++)
        free(parts[j]);
    free(parts);
    free(lens);
    free(whole);
    return rc;
}

int shard_load(struct coord *c, const struct checkpoint *k, double *query,
               struct aia_error *err)
{
    const struct setup *s = c->l.s;
    int ranks = s->shards;
    const char *b = k->state;
    uint64_t head = 0;
    if (k->state_len >= sizeof head)
        memcpy(&head, b, sizeof head);
    if (head != (uint64_t)ranks || k->state_len < block_head(ranks))
        return aia_seterr(err, "the checkpoint holds the states of %llu "
                               "coordinator ranks, this run has %d "
                               "(pool.shards)",
                          (unsigned long long)head, ranks);
    uint64_t *lens = malloc((size_t)ranks * sizeof *lens);
    if (!lens)
        return aia_seterr(err, "out of memory");
    memcpy(lens, b + sizeof head, (size_t)ranks * sizeof *lens);
    size_t total = block_head(ranks);
    for (int j = 0; j < ranks; j++)
        total += lens[j];
    if (total != k->state_len) {
        free(lens);
        return aia_seterr(err, "the checkpoint's states are %zu bytes, "
                               "their lengths say %zu",
                          k->state_len, total);
    }
    /* rank 0's state, aligned for the plugin */
    size_t off = block_head(ranks);
    void *mine = malloc(lens[0] ? lens[0] : 1);
    if (!mine) {
        free(lens);
        return aia_seterr(err, "out of memory");
    }
    memcpy(mine, b + off, lens[0]);
    int rc = s->alg->load(s->alg_s, mine, lens[0], err);
    free(mine);
    if (rc < 0) {
        free(lens);
        return -1;
    }
    size_t n0 = s->slice[1], tail = s->shape.query_len - n0;
    memcpy(query, k->query, n0 * sizeof *query);
    memcpy(query + n0, k->query + s->dim, tail * sizeof *query);
    off += lens[0];
    shard_tell(c, SHARD_LOAD, -1, NULL);
    for (int j = 1; j < ranks; j++) {
        size_t slen = s->slice[j + 1] - s->slice[j];
        bell_send(&lens[j], (int)sizeof lens[j], j, TAG_SHARD);
        bell_send(b + off, (int)lens[j], j, TAG_SHARD);
        bell_send(k->query + s->slice[j], (int)(slen * sizeof *query), j,
                  TAG_SHARD);
        c->sh->sent += sizeof lens[j] + lens[j] + slen * sizeof *query;
        off += lens[j];
    }
    free(lens);
    return 0;
}

int shard_lead_init(struct coord *c)
{
    const struct setup *s = c->l.s;
    if (s->shards <= 1)
        return 0;
    struct shard_lead *sh = c->sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    sh->n = s->shards - 1;
    sh->req = malloc((size_t)SHARD_RING * (size_t)sh->n * sizeof *sh->req);
    c->l.r.rank_bytes = calloc(2 * (size_t)s->shards, sizeof(uint64_t));
    if (!sh->req || !c->l.r.rank_bytes)
        return -1;
    for (size_t i = 0; i < (size_t)SHARD_RING * (size_t)sh->n; i++)
        sh->req[i] = MPI_REQUEST_NULL;
    sh->fail = calloc((size_t)sh->n, sizeof *sh->fail);
    sh->freq = malloc((size_t)sh->n * sizeof *sh->freq);
    if (!sh->fail || !sh->freq)
        return -1;
    for (int j = 0; j < sh->n; j++)
        sh->freq[j] = MPI_REQUEST_NULL;
    for (int j = 0; j < sh->n; j++)
        if (MPI_Irecv(&sh->fail[j], (int)sizeof sh->fail[j], MPI_BYTE, j + 1,
                      TAG_SHARD_FAIL, MPI_COMM_WORLD,
                      &sh->freq[j]) != MPI_SUCCESS)
            return -1;
    c->l.r.nranks = s->shards;
    c->l.r.model = gather;
    c->l.r.shard_change = change;
    c->l.r.shard_save = save;
    c->l.r.model_ctx = c;
    return 0;
}

void shard_lead_free(struct coord *c)
{
    struct shard_lead *sh = c->sh;
    if (!sh)
        return;
    for (size_t i = 0; sh->req && i < (size_t)SHARD_RING * (size_t)sh->n;
         i++)
        if (sh->req[i] != MPI_REQUEST_NULL)
            MPI_Wait(&sh->req[i], MPI_STATUS_IGNORE);
    for (int j = 0; sh->freq && j < sh->n; j++)
        if (sh->freq[j] != MPI_REQUEST_NULL) {
            MPI_Cancel(&sh->freq[j]);
            MPI_Wait(&sh->freq[j], MPI_STATUS_IGNORE);
        }
    free(sh->req);
    free(sh->freq);
    free(sh->fail);
    free(sh);
    c->sh = NULL;
    free(c->l.r.rank_bytes);
    c->l.r.rank_bytes = NULL;
    c->l.r.model = NULL;
    c->l.r.shard_change = NULL;
    c->l.r.shard_save = NULL;
}

void shard_bytes(struct coord *c)
{
    struct shard_lead *sh = c->sh;
    if (!sh || sh->ended)
        return;
    shard_tell(c, SHARD_BYTES, -1, NULL);
    uint64_t *b = c->l.r.rank_bytes;
    for (int j = 1; j <= sh->n; j++) {
        MPI_Request r;
        uint64_t got[3] = {0, 0, 0};
        if (MPI_Irecv(got, (int)sizeof got, MPI_BYTE, j, TAG_SHARD,
                      MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
            await(&r, c->l.job->pool.shutdown_timeout) < 0) {
            host_error("shard rank %d did not send its byte counts; "
                       "aborting the job", j);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        sh->recv += sizeof got;
        b[2 * j] = got[0];
        b[2 * j + 1] = got[1];
        /* it reported a failure: the report was sent, so it comes (a
         * rank that did not says so here: nothing more is to come) */
        if (got[2])
            take_report(c, j, 1);
    }
    /* rank 0's own traffic with the workers is the report's to add */
    b[0] = sh->recv;
    b[1] = sh->sent;
}

void shard_end(struct coord *c)
{
    if (c->sh && !c->sh->ended) {
        shard_tell(c, SHARD_END, -1, NULL);
        c->sh->ended = 1;
    }
}

/* ------------------------------------------------------------------ */
/* A shard rank                                                        */

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
        await(&r, bound) < 0) {
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

/* SHARD_LOAD: this rank's state and query slice from rank 0. */
static void load_state(struct shard *k)
{
    const struct setup *s = k->s;
    struct aia_error err = {""};
    uint64_t len = 0;
    if (recv_within(&len, sizeof len, 0, INFINITY) < 0)
        die("load", "MPI error");
    void *buf = malloc(len ? len : 1);
    if (!buf)
        die("load", "out of memory");
    if (recv_within(buf, len, 0, INFINITY) < 0 ||
        recv_within(k->q[k->cur].buf, s->slice_len * sizeof(double), 0,
                    INFINITY) < 0)
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
            await(&req, INFINITY) < 0)
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
