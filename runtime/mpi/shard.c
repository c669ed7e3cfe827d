/* shard.c - shard ranks (pool.shards, shard.h), rank 0's side: its word
 * to the shard ranks, the model and the checkpoint gathered from them,
 * their byte counts and their failures.  Rank 0 talks to shard ranks with
 * nonblocking sends only.  A shard rank's failure report (shard_rank.c)
 * stops the run as rank 0's own slice would (exit 1, the history and
 * summary kept), and so does a shard rank lost: no word back (a reply,
 * or to a ping every third of it) within pool.shard_timeout.  Idle
 * workers are kept alive while rank 0 waits for a shard rank. */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "coord.h"
#include "core/host.h"
#include "core/util.h"
#include "core/wire.h"
#include "poll.h"
#include "session/guard.h"
#include "run.h"
#include "shard.h"

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
    double timeout;          /* pool.shard_timeout */
    char *gone;              /* n: each shard rank lost or not */
    int lost;                /* the first shard rank lost, or 0 */
    uint64_t *pong;          /* n: each one's word back to SHARD_PING */
    MPI_Request *preq;       /* n: their receives */
    double asked_at;         /* when the pings in flight went out; 0: none */
    double ping_at;          /* when the next ones are due */
};

/* Seconds rank 0 waits for a shard rank once a signal came: mpirun,
 * which sends it when a rank died, kills the job within moments. */
#define SHARD_SIGNAL_S 0.5

int shard_await(MPI_Request *req, double seconds)
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

/* A receive that will not be waited on: cancelled, its request let go. */
static void drop_recv(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    MPI_Cancel(r);
    MPI_Request_free(r);
}

/* Shard rank j had no word for rank 0 within pool.shard_timeout: it is
 * stopped, dead or hung.  Nothing is sent to it or waited on from it any
 * more (a request to a dead rank may never complete; the ring's buffers
 * stay), the run stops (exit 1, history and summary kept, no checkpoint
 * without its slice), and the job, which cannot finalize with it, is
 * ended after the outputs (shutdown.c). */
static void lose(struct coord *c, int j)
{
    struct shard_lead *sh = c->sh;
    if (sh->gone[j - 1])
        return;
    sh->gone[j - 1] = 1;
    sh->lost = sh->lost ? sh->lost : j;
    for (unsigned slot = 0; slot < SHARD_RING; slot++) {
        MPI_Request *r = &sh->req[(size_t)slot * (size_t)sh->n + j - 1];
        if (*r != MPI_REQUEST_NULL)
            MPI_Request_free(r);
    }
    drop_recv(&sh->freq[j - 1]);
    drop_recv(&sh->preq[j - 1]);
    run_incomplete = 1;
    if (guard_signal) /* the signal stops the run (shutdown_signal) */
        host_error("shard rank %d lost: no word from it within %g s of a "
                   "signal", j, SHARD_SIGNAL_S);
    else
        lead_fail(&c->l, "stopping: shard rank %d lost: no word from it "
                         "for %g s (pool.shard_timeout); the run ends "
                         "without it", j, sh->timeout);
}

int shard_lost(const struct coord *c, int rank)
{
    const struct shard_lead *sh = c->sh;
    return sh && rank >= 1 && rank <= sh->n && sh->gone[rank - 1];
}

/* Rank 0 waits for request *r to or from shard rank j, keeping idle
 * workers alive; j is lost when it is not done within pool.shard_timeout
 * (SHARD_SIGNAL_S after a signal).  0, or -1 (j lost, *r let go). */
static int await_shard(struct coord *c, int j, MPI_Request *r, int recv)
{
    struct shard_lead *sh = c->sh;
    double now = util_now(), until = now + sh->timeout;
    while (*r != MPI_REQUEST_NULL) {
        int idx, n;
        MPI_Status st;
        if (guard_signal) { /* poll_some returns at once: do not spin */
            until = fmin(until, now + SHARD_SIGNAL_S);
            int done = 0;
            n = MPI_Test(r, &done, &st) == MPI_SUCCESS ? done : -1;
            if (!done && n == 0)
                util_sleep(1e-3);
        } else {
            n = poll_some(1, r, &idx, &st,
                          fmin(until, coord_keep_alive(c, now)));
        }
        now = util_now();
        if (n < 0 || (*r != MPI_REQUEST_NULL && now >= until)) {
            if (recv)
                drop_recv(r);
            else if (*r != MPI_REQUEST_NULL)
                MPI_Request_free(r);
            lose(c, j);
            return -1;
        }
    }
    return 0;
}

/* bytes from shard rank j on TAG_SHARD into buf; 0 or -1 (j lost) */
static int recv_shard(struct coord *c, void *buf, size_t bytes, int j)
{
    MPI_Request r;
    if (c->sh->gone[j - 1])
        return -1;
    if (MPI_Irecv(buf, (int)bytes, MPI_BYTE, j, TAG_SHARD, MPI_COMM_WORLD,
                  &r) != MPI_SUCCESS) {
        lose(c, j);
        return -1;
    }
    return await_shard(c, j, &r, 1);
}

void shard_tell(struct coord *c, enum shard_cmd cmd, int w,
                const struct aia_answer_info *info)
{
    struct shard_lead *sh = c->sh;
    if (!sh || sh->ended)
        return;
    unsigned slot = sh->next++ % SHARD_RING;
    MPI_Request *req = sh->req + (size_t)slot * (size_t)sh->n;
    /* a message of SHARD_RING ago still in flight: its shard rank has
     * not taken it */
    for (int j = 0; j < sh->n; j++)
        if (req[j] != MPI_REQUEST_NULL)
            await_shard(c, j + 1, &req[j], 0);
    struct shard_msg *m = &sh->ring[slot];
    *m = (struct shard_msg){.magic = WIRE_MAGIC, .cmd = cmd, .w = w};
    if (info)
        m->info = *info;
    for (int j = 0; j < sh->n; j++) {
        if (sh->gone[j])
            continue;
        if (bell_isend(m, sizeof *m, j + 1, TAG_SHARD, &req[j]) !=
            MPI_SUCCESS) {
            lose(c, j + 1);
            continue;
        }
        sh->sent += sizeof *m;
    }
}

double shard_watch(struct coord *c, double now)
{
    struct shard_lead *sh = c->sh;
    if (!sh || sh->ended || sh->lost)
        return INFINITY;
    if (sh->asked_at > 0) {
        int waiting = 0;
        for (int j = 0; j < sh->n; j++) {
            int done = 0;
            if (sh->preq[j] == MPI_REQUEST_NULL)
                continue;
            if (MPI_Test(&sh->preq[j], &done, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS)
                lose(c, j + 1);
            else if (done)
                sh->recv += sizeof sh->pong[j];
            else
                waiting = 1;
        }
        if (waiting && now < sh->asked_at + sh->timeout)
            return sh->asked_at + sh->timeout;
        for (int j = 0; j < sh->n; j++)
            if (sh->preq[j] != MPI_REQUEST_NULL)
                lose(c, j + 1);
        sh->asked_at = 0;
        if (sh->lost)
            return INFINITY;
    }
    if (now < sh->ping_at)
        return sh->ping_at;
    /* posted before the ping goes: a reply to a later word is received
     * after it (MPI keeps the order of messages between two ranks) */
    for (int j = 0; j < sh->n; j++)
        if (MPI_Irecv(&sh->pong[j], (int)sizeof sh->pong[j], MPI_BYTE, j + 1,
                      TAG_SHARD, MPI_COMM_WORLD, &sh->preq[j]) != MPI_SUCCESS)
            lose(c, j + 1);
    shard_tell(c, SHARD_PING, -1, NULL);
    sh->asked_at = now;
    sh->ping_at = now + sh->timeout / 3;
    return sh->ping_at;
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
    if (*r == MPI_REQUEST_NULL || sh->gone[j - 1])
        return;
    if (wait ? shard_await(r, c->l.job->pool.shutdown_timeout) < 0
             : MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        /* no report will be read into f once the receive is cancelled;
         * one that came as the wait gave up is read below */
        MPI_Status st;
        int cancelled = 1;
        MPI_Cancel(r);
        if (MPI_Wait(r, &st) == MPI_SUCCESS)
            MPI_Test_cancelled(&st, &cancelled);
        *r = MPI_REQUEST_NULL;
        if (cancelled) {
            sh->failed = sh->failed ? sh->failed : j;
            lead_fail(&c->l, "stopping: shard rank %d: its failure report %s",
                      j, wait ? "did not come within pool.shutdown_timeout"
                              : "could not be received");
            return;
        }
        done = 1;
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
    if (sh->lost)
        return aia_seterr(err, "shard rank %d lost: no model", sh->lost);
    shard_tell(c, SHARD_MODEL, -1, NULL);
    /* from every rank, a lost one's past: the others' replies are taken */
    for (int j = 1; j <= sh->n; j++) {
        size_t len = s->slice[j + 1] - s->slice[j];
        if (recv_shard(c, x + s->slice[j], len * sizeof *x, j) < 0)
            continue;
        sh->recv += len * sizeof *x;
        /* a failure it reported came before its slice */
        take_report(c, j, 0);
    }
    if (sh->lost)
        return aia_seterr(err, "shard rank %d lost: no model", sh->lost);
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
    if (sh->lost)
        return NAN;
    shard_tell(c, SHARD_CHANGE, -1, NULL);
    for (int j = 1; j <= sh->n; j++) {
        double part = NAN;
        if (recv_shard(c, &part, sizeof part, j) == 0)
            sh->recv += sizeof part;
        sum += part;
    }
    return sum;
}

/* The recorder's shard_save (record_checkpoint). */
static int save(void *ctx, void **state, size_t *len, double **query,
                struct aia_error *err)
{
    struct coord *c = ctx;
    const struct setup *s = c->l.s;
    struct shard_lead *sh = c->sh;
    int ranks = s->shards;
    size_t n0 = s->slice[1], tail = s->shape.query_len - n0;
    uint64_t *lens = calloc((size_t)ranks, sizeof *lens);
    void **parts = calloc((size_t)ranks, sizeof *parts);
    double *whole = malloc(s->full.query_len * sizeof *whole);
    int rc = -1;
    *state = NULL;
    *query = NULL;
    if (sh->lost) {
        aia_seterr(err, "shard rank %d lost: no checkpoint", sh->lost);
        goto out;
    }
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
        if (recv_shard(c, &lens[j], sizeof lens[j], j) < 0)
            continue; /* lost: the others' replies are still taken */
        if (lens[j] == SHARD_STATE_NONE) { /* it failed: no more */
            sh->recv += sizeof lens[j];
            lens[j] = 0;
            failed = failed ? failed : j;
            continue;
        }
        if (!(parts[j] = malloc(lens[j] ? lens[j] : 1))) {
            /* the replies not taken would be taken for the next ones:
             * the job cannot go on */
            host_error("out of memory for shard rank %d's state; aborting "
                       "the job", j);
            MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
        }
        if (recv_shard(c, parts[j], lens[j], j) < 0 ||
            recv_shard(c, whole + s->slice[j], slen * sizeof *whole, j) < 0)
            continue;
        sh->recv += sizeof lens[j] + lens[j] + slen * sizeof *whole;
    }
    if (sh->lost) { /* the last good checkpoint stays */
        aia_seterr(err, "shard rank %d lost: no checkpoint", sh->lost);
        goto out;
    }
    if (failed) { /* its slice is older than the others: no checkpoint */
        take_report(c, failed, 1);
        aia_seterr(err, "shard rank %d failed: no checkpoint of a model "
                        "whose slices are from different iterations",
                   failed);
        goto out;
    }
    size_t total = checkpoint_shards_head(ranks);
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
    size_t off = checkpoint_shards_head(ranks);
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
    /* every rank's length checked before any is used */
    size_t *off = malloc(2 * (size_t)ranks * sizeof *off);
    if (!off)
        return aia_seterr(err, "out of memory");
    size_t *lens = off + ranks;
    if (checkpoint_shards(k, ranks, off, lens, err) < 0) {
        free(off);
        return -1;
    }
    /* rank 0's state, aligned for the plugin */
    void *mine = malloc(lens[0] ? lens[0] : 1);
    if (!mine) {
        free(off);
        return aia_seterr(err, "out of memory");
    }
    memcpy(mine, b + off[0], lens[0]);
    int rc = s->alg->load(s->alg_s, mine, lens[0], err);
    free(mine);
    if (rc < 0) {
        free(off);
        return -1;
    }
    size_t n0 = s->slice[1], tail = s->shape.query_len - n0;
    memcpy(query, k->query, n0 * sizeof *query);
    memcpy(query + n0, k->query + s->dim, tail * sizeof *query);
    shard_tell(c, SHARD_LOAD, -1, NULL);
    for (int j = 1; j < ranks; j++) {
        size_t slen = s->slice[j + 1] - s->slice[j];
        uint64_t len = lens[j];
        bell_send(&len, (int)sizeof len, j, TAG_SHARD);
        bell_send(b + off[j], (int)lens[j], j, TAG_SHARD);
        bell_send(k->query + s->slice[j], (int)(slen * sizeof *query), j,
                  TAG_SHARD);
        c->sh->sent += sizeof len + lens[j] + slen * sizeof *query;
    }
    free(off);
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
    sh->gone = calloc((size_t)sh->n, 1);
    sh->pong = calloc((size_t)sh->n, sizeof *sh->pong);
    sh->preq = malloc((size_t)sh->n * sizeof *sh->preq);
    if (!sh->fail || !sh->freq || !sh->gone || !sh->pong || !sh->preq)
        return -1;
    sh->timeout = c->l.job->pool.shard_timeout;
    sh->ping_at = util_now() + sh->timeout / 3;
    for (int j = 0; j < sh->n; j++)
        sh->freq[j] = sh->preq[j] = MPI_REQUEST_NULL;
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
    for (int j = 0; sh->preq && j < sh->n; j++)
        if (sh->preq[j] != MPI_REQUEST_NULL) {
            MPI_Cancel(&sh->preq[j]);
            MPI_Wait(&sh->preq[j], MPI_STATUS_IGNORE);
        }
    free(sh->req);
    free(sh->freq);
    free(sh->gone);
    free(sh->pong);
    free(sh->preq);
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
        uint64_t got[3] = {0, 0, 0};
        if (recv_shard(c, got, sizeof got, j) < 0)
            continue; /* lost: its counts stay 0 */
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
