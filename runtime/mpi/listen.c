/* listen.c - the coordinator's receiving side: each worker's next
 * message is probed before it is received, so that its size is known
 * first.  A worker is untrusted whatever it sends; a receive posted in
 * advance would take a message larger than its buffer, which Open MPI
 * answers by crashing (measured: a 1 MiB message into a smaller posted
 * receive ends rank 0 with SIGSEGV inside the shared-memory transport).
 * A probed message that is too large is received into a buffer of its
 * own size and discarded (up to LISTEN_DISCARD_MAX bytes), or left
 * unreceived: its sender is named and distrusted either way (coord.c).
 */
#include <config.h>

#include <stdlib.h>

#include "coord.h"
#include "poll.h"
#include "core/util.h"
#include "core/wire.h"

/* Receives of more bytes than this are timed as rank 0's work */
#define LISTEN_TIMED_BYTES 4096

int listen_init(struct coord *c)
{
    c->listen = calloc((size_t)c->l.n, 1);
    c->w_of_rank = calloc((size_t)c->l.s->size, sizeof *c->w_of_rank);
    c->held = MPI_MESSAGE_NULL;
    if (!c->listen || !c->w_of_rank)
        return -1;
    for (int w = 0; w < c->l.n; w++)
        if (c->l.s->ranks[w] > 0 && c->l.s->ranks[w] < c->l.s->size)
            c->w_of_rank[c->l.s->ranks[w]] = w + 1;
    return 0;
}

void listen_free(struct coord *c)
{
    free(c->listen);
    free(c->w_of_rank);
}

/* Receive a probed message of bytes into a buffer of its own and drop it;
 * one too large to receive stays matched and unreceived (its sender is
 * stuck in its send and is never waited for).  0, or -1 on an MPI
 * error. */
static int discard(MPI_Message *msg, int bytes, MPI_Status *st)
{
    if ((size_t)bytes > LISTEN_DISCARD_MAX)
        return 0;
    void *buf = malloc(bytes ? (size_t)bytes : 1);
    if (!buf)
        return 0;
    int rc = MPI_Mrecv(buf, bytes, MPI_BYTE, msg, st);
    free(buf);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* Receive the messages that have arrived, at most one per worker.  One
 * MPI_Improbe on any source matches a message and takes it off the
 * queue at once (a probe before it would cost as much again, every
 * answer); a second message from a worker already taken in this call is
 * held, matched, for the next call. */
static int probe(void *ctx)
{
    struct coord *c = ctx;
    int k = 0, any = c->held != MPI_MESSAGE_NULL;
    for (int w = 0; w < c->l.n && !any; w++)
        any = c->listen[w];
    if (!any)
        return POLL_NOTHING;
    while (k < c->l.n) {
        int flag = 0, bytes = 0;
        MPI_Status st;
        MPI_Message msg;
        if (c->held != MPI_MESSAGE_NULL) {
            msg = c->held;
            st = c->held_st;
            c->held = MPI_MESSAGE_NULL;
            flag = 1;
        } else if (MPI_Improbe(MPI_ANY_SOURCE, TAG_ANSWER, MPI_COMM_WORLD,
                               &flag, &msg, &st) != MPI_SUCCESS) {
            return k ? k : -1;
        }
        if (!flag)
            break;
        int src = st.MPI_SOURCE;
        int w = src > 0 && src < c->l.s->size ? c->w_of_rank[src] - 1 : -1;
        int seen = 0;
        for (int i = 0; i < k && w >= 0; i++)
            seen |= c->idx[i] == w;
        if (seen) {
            c->held = msg; /* rbuf[w] holds this call's message */
            c->held_st = st;
            break;
        }
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        if (w < 0 || !c->listen[w]) {
            /* not a worker listened to (gone, let go, or outside the
             * pool): what it sends is dropped */
            if (discard(&msg, bytes, &st) < 0)
                return k ? k : -1;
            continue;
        }
        /* an answer's receive, which copies its bytes, is rank 0's
         * work; one of a few KiB (Open MPI's eager size on a node) is
         * cheaper than the two clock reads that would time it, and a
         * message discarded is not an answer */
        int fits = (size_t)bytes <= c->rbytes;
        int timed = fits && bytes > LISTEN_TIMED_BYTES;
        double t0 = timed ? util_now() : 0;
        int rc = fits ? MPI_Mrecv(c->rbuf[w], bytes, MPI_BYTE, &msg, &st)
                      : discard(&msg, bytes, &st);
        if (timed)
            c->recv_s += util_now() - t0;
        if (rc != MPI_SUCCESS)
            return k ? k : -1;
        c->listen[w] = 0;
        c->rlen[w] = bytes;
        c->mst[k] = st;
        c->idx[k++] = w;
    }
    return k;
}

int listen_poll(struct coord *c, double deadline)
{
    return poll_wait(probe, c, deadline);
}
