/* listen.c - the coordinator's receiving side (runtime/listen.c): one
 * message per worker a call, in each worker's order; a second message
 * from a worker already taken is held for the next call, not lost and
 * not received into the buffer still in use; a message from a worker not
 * listened to is dropped, one larger than the buffers is received
 * elsewhere and its size reported.
 *
 * Run by the test harness without arguments, it starts itself on 3 ranks
 * under $MPIRUN; rank 0 prints the TAP, ranks 1 and 2 are the workers,
 * sending what rank 0 asks for in a control message. */
#include <config.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coord.h"
#include "core/util.h"
#include "core/wire.h"
#include "selflaunch.h"
#include "tap.h"

#define TAG_ORDER 7
#define RBYTES 64

/* Worker: send messages of the sizes rank 0 lists (0 ends a list), each
 * filled with its index + 1, then say done; an empty list ends. */
static void worker(void)
{
    for (;;) {
        int sizes[4];
        MPI_Recv(sizes, 4, MPI_INT, 0, TAG_ORDER, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (sizes[0] == 0)
            return;
        for (int i = 0; i < 4 && sizes[i] > 0; i++) {
            char *buf = malloc((size_t)sizes[i]);
            memset(buf, i + 1, (size_t)sizes[i]);
            MPI_Send(buf, sizes[i], MPI_BYTE, 0, TAG_ANSWER, MPI_COMM_WORLD);
            free(buf);
        }
        int done = 1;
        MPI_Send(&done, 1, MPI_INT, 0, TAG_ORDER, MPI_COMM_WORLD);
    }
}

/* Ask rank r to send messages of sizes a, b (0: none) and wait until it
 * has: its messages are then on their way or in. */
static void order(int r, int a, int b)
{
    int sizes[4] = {a, b, 0, 0}, done;
    MPI_Send(sizes, 4, MPI_INT, r, TAG_ORDER, MPI_COMM_WORLD);
    MPI_Recv(&done, 1, MPI_INT, r, TAG_ORDER, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

/* Let rank r go. */
static void finish(int r)
{
    int sizes[4] = {0, 0, 0, 0};
    MPI_Send(sizes, 4, MPI_INT, r, TAG_ORDER, MPI_COMM_WORLD);
}

/* What coord.c does after a call: note each message taken (worker, size,
 * fill byte) and listen to its worker again.  How many were taken. */
struct seen {
    int w, bytes, fill;
};

static int take_call(struct coord *c, struct seen *log, int *nlog, int max)
{
    int k = listen_poll(c, util_now() + 0.05);
    for (int i = 0; i < k; i++) {
        int w = c->idx[i];
        if (*nlog < max)
            log[(*nlog)++] = (struct seen){w, c->rlen[w],
                                           (unsigned char)c->rbuf[w][0]};
        c->listen[w] = 1;
    }
    return k;
}

int main(int argc, char **argv)
{
    int launched = selflaunch(argc, argv, 3);
    if (launched >= 0)
        return launched;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0) {
        worker();
        MPI_Finalize();
        return 0;
    }
    if (size != 3)
        bail_out("run on 3 ranks, not %d", size);
    int ranks[2] = {1, 2};
    struct setup s = {.rank = 0, .size = 3, .nworkers = 2, .ranks = ranks};
    int rlen[2], idx[2];
    char b0[RBYTES], b1[RBYTES];
    char *rbuf[2] = {b0, b1};
    MPI_Status mst[2];
    struct coord c = {.l = {.s = &s, .n = 2},
                      .rbytes = RBYTES,
                      .rlen = rlen,
                      .rbuf = rbuf,
                      .idx = idx,
                      .mst = mst};
    if (listen_init(&c) < 0)
        bail_out("out of memory");
    plan(11);

    /* worker 0 sends two messages before rank 0 looks (its done comes
     * after them on the same channel, so both are in); worker 1 sends
     * one after the first call */
    c.listen[0] = c.listen[1] = 1;
    order(1, 10, 20);
    struct seen log[8];
    int nlog = 0, calls = 1, most = 0;
    int k = take_call(&c, log, &nlog, 8);
    ok(k == 1 && c.held != MPI_MESSAGE_NULL,
       "a call takes worker 0's first message and holds its second (took "
       "%d)",
       k);
    order(2, 30, 0);
    double until = util_now() + 5;
    while (nlog < 3 && util_now() < until) {
        int before = nlog;
        take_call(&c, log, &nlog, 8);
        for (int i = before; i < nlog; i++)
            for (int j = before; j < i; j++)
                most |= log[i].w == log[j].w;
        calls++;
    }
    ok(nlog == 3, "all three messages are taken (%d, in %d calls)", nlog,
       calls);
    ok(!most, "no call takes two messages from one worker");
    int first = -1, second = -1, other = -1;
    for (int i = 0; i < nlog; i++)
        if (log[i].w == 0 && first < 0)
            first = i;
        else if (log[i].w == 0)
            second = i;
        else
            other = i;
    ok(first >= 0 && log[first].bytes == 10 && log[first].fill == 1,
       "worker 0's first message is taken first, whole (%d bytes)",
       first >= 0 ? log[first].bytes : -1);
    ok(second >= 0 && log[second].bytes == 20 && log[second].fill == 2,
       "then its second, received after the buffer was free (%d bytes, "
       "filled with %d)",
       second >= 0 ? log[second].bytes : -1,
       second >= 0 ? log[second].fill : -1);
    ok(other >= 0 && log[other].bytes == 30,
       "worker 1's message is taken too");
    ok(c.held == MPI_MESSAGE_NULL, "and nothing is held at the end");

    /* a message from a worker not listened to is dropped */
    c.listen[0] = 0;
    c.listen[1] = 1;
    order(1, 12, 0);
    order(2, 14, 0);
    k = listen_poll(&c, util_now() + 1);
    ok(k == 1 && idx[0] == 1 && rlen[1] == 14,
       "a message from a worker not listened to is dropped, the other's "
       "taken (%d taken)",
       k);
    c.listen[0] = 1;
    c.listen[1] = 0;
    k = listen_poll(&c, util_now() + 0.1);
    ok(k == 0, "and it does not come back later (%d)", k);

    /* a message larger than the buffers: received elsewhere, its size
     * said */
    memset(b0, 0, sizeof b0);
    order(1, 1000, 0);
    k = listen_poll(&c, util_now() + 1);
    ok(k == 1 && idx[0] == 0 && rlen[0] == 1000, "a 1000-byte message into %d-byte buffers "
                                  "is taken with its size (%d)",
       RBYTES, rlen[0]);
    ok(b0[0] == 0, "and not written into the worker's buffer");

    finish(1);
    finish(2);
    listen_free(&c);
    MPI_Finalize();
    return done_testing();
}
