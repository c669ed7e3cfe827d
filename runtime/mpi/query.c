/* query.c - the coordinator's state, allocated and freed as one
 * (coord_init, coord_free), and its message buffers: one receive buffer
 * per worker, the query buffers, and the codecs between them and the wire.
 *
 * A round's query is written once and sent from the same buffer to every
 * worker that gets it; a buffer is reused only when every send from it
 * has completed, and never while it is the current or the previous
 * iteration's query (the recorder measures the change between the two).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "shard.h"
#include "core/util.h"
#include "core/wire.h"

int query_init(struct coord *c)
{
    const struct job *job = c->l.job;
    struct aia_error err;
    size_t alen = c->l.s->shape.answer_len;
    if (codec_init(&c->qcodec, job->codec.query, c->l.s->shape.query_len, 0,
                   job->codec.level, &err) < 0 ||
        codec_init(&c->acodec, job->codec.answer, alen,
                   codec_topk_count(job->codec.topk, alen), job->codec.level,
                   &err) < 0)
        return -1;
    c->qbytes = WIRE_BYTES(c->l.s->shape.query_len);
    c->qenc_bytes = sizeof(struct wire_hdr) + codec_bound(&c->qcodec);
    /* every receive can take the largest answer the codec makes, and an
     * error's text */
    c->rbytes = sizeof(struct wire_hdr) + codec_bound(&c->acodec);
    if (c->rbytes < sizeof(struct wire_hdr) + WIRE_ERROR_TEXT)
        c->rbytes = sizeof(struct wire_hdr) + WIRE_ERROR_TEXT;
    if (job->codec.answer != CODEC_NONE &&
        !(c->adec = malloc((alen ? alen : 1) * sizeof *c->adec)))
        return -1;
    c->sq = calloc((size_t)c->l.n, sizeof *c->sq);
    c->rbuf = calloc((size_t)c->l.n, sizeof *c->rbuf);
    if (!c->sq || !c->rbuf)
        return -1;
    for (int w = 0; w < c->l.n; w++)
        if (!(c->rbuf[w] = util_alloc_aligned(c->rbytes)))
            return -1;
    return 0;
}

void query_free(struct coord *c)
{
    for (int w = 0; c->rbuf && w < c->l.n; w++)
        free(c->rbuf[w]);
    for (int i = 0; i < c->nq; i++) {
        free(c->q[i].buf);
        free(c->q[i].enc);
    }
    free(c->q);
    free(c->adec);
    codec_free(&c->qcodec);
    codec_free(&c->acodec);
    free(c->rbuf);
    free(c->sq);
}

int query_acquire(struct coord *c)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < c->nq; i++)
            if (c->q[i].refs == 0 && i != c->cur)
                return i;
        /* Retire completed sends, then look again. */
        for (int w = 0; w < c->l.n && pass == 0; w++) {
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
        (c->l.job->codec.query != CODEC_NONE &&
         !(q[c->nq].enc = util_alloc_aligned(c->qenc_bytes)))) {
        free(q[c->nq].buf);
        return -1;
    }
    return c->nq++;
}

void query_retire(struct coord *c, int w)
{
    if (c->sreq[w] == MPI_REQUEST_NULL)
        return;
    MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
    c->q[c->sq[w]].refs--;
}

int query_seal(struct coord *c, int q, uint64_t round)
{
    struct qbuf *b = &c->q[q];
    size_t n = c->l.s->shape.query_len, bytes = n * sizeof(double);
    struct wire_hdr h = {.magic = WIRE_MAGIC,
                         .kind = WIRE_QUERY,
                         .round = round,
                         .len = n,
                         .codec = (uint32_t)c->l.job->codec.query};
    if (b->enc) {
        struct aia_error err;
        if (codec_encode(&c->qcodec, WIRE_PAYLOAD(b->buf), WIRE_PAYLOAD(b->enc),
                         &bytes, &err) < 0) {
            coord_fail(c, "query of round %llu: %s", (unsigned long long)round,
                       err.text);
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

void query_current(struct coord *c, int q)
{
    c->prev = c->cur;
    c->cur = q;
    c->l.r.query = WIRE_PAYLOAD(c->q[q].buf);
    c->l.r.prev = c->prev >= 0 ? WIRE_PAYLOAD(c->q[c->prev].buf) : NULL;
}

int query_next(struct coord *c, double now)
{
    int q = query_acquire(c);
    if (q < 0) {
        coord_fail(c, "out of memory for a query buffer");
        return -1;
    }
    if (lead_query(&c->l, WIRE_PAYLOAD(c->q[q].buf)) < 0)
        return -1;
    if (query_seal(c, q, c->l.p.round + 1) < 0)
        return -1;
    query_current(c, q);
    proto_end_round(&c->l.p, now);
    return 0;
}

int query_first(struct coord *c, int q)
{
    const struct setup *s = c->l.s;
    struct aia_error err = {""};
    double *query = WIRE_PAYLOAD(c->q[q].buf);
    c->l.p.round = 1;
    if (!c->l.r.resumed) {
        if (s->alg->init(s->alg_s, query, &err) == 0)
            return 0;
        coord_fail(c, "algorithm '%s': init: %s", s->alg->h.name,
                   util_error_text(&err));
        return -1;
    }
    const struct checkpoint *k = &c->l.r.resume;
    if (c->sh) {
        if (shard_load(c, k, query, &err) < 0) {
            coord_fail(c, "cannot resume: algorithm '%s': load: %s",
                       s->alg->h.name, util_error_text(&err));
            return -1;
        }
    } else if (s->alg->load(s->alg_s, k->state, k->state_len, &err) < 0) {
        coord_fail(c, "cannot resume: algorithm '%s': load: %s", s->alg->h.name,
                   util_error_text(&err));
        return -1;
    } else {
        memcpy(query, k->query, k->query_len * sizeof *query);
    }
    lead_resume_counters(&c->l);
    return 0;
}

int coord_init(struct coord *c)
{
    int n = c->l.n;
    if (query_init(c) < 0)
        return -1;
    c->rlen = calloc((size_t)n, sizeof *c->rlen);
    c->sreq = malloc((size_t)n * sizeof *c->sreq);
    c->bye = calloc((size_t)n, 1);
    c->idx = calloc((size_t)n, sizeof *c->idx);
    c->mst = calloc((size_t)n, sizeof *c->mst);
    if (!c->rlen || listen_init(c) < 0 || !c->sreq || !c->bye || !c->idx ||
        !c->mst || eval_init(c) < 0)
        return -1;
    for (int w = 0; w < n; w++) {
        c->sreq[w] = MPI_REQUEST_NULL;
        c->bye[w] = !c->l.p.direct[w];
    }
    return 0;
}

void coord_free(struct coord *c)
{
    query_free(c);
    free(c->rlen);
    listen_free(c);
    free(c->sreq);
    free(c->bye);
    free(c->idx);
    free(c->mst);
    eval_free(c);
    shard_lead_free(c);
    lead_free(&c->l);
}
