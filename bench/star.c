/* star.c - the plain MPI program aiarun's protocol is measured against.
 *
 *     mpirun -np P star DIM ROUNDS [NWAIT [waitsome|poll|persistent|huge
 *                                          [WORK_MS]]]
 *
 * Rank 0 sends a query of 64 + 8*DIM bytes (aiarun's header and payload)
 * to every idle worker with MPI_Isend, then waits until NWAIT workers
 * (0: all) answered this round's query; an answer to an older query gets
 * the current one at once, as in aiarun.  A worker copies the query into
 * its answer (what bench/noop.c does) and sends it back at once, or
 * after sleeping WORK_MS (aiarun's stragglers.work_ms).
 *
 * The coordinator waits the way an MPI programmer would, with
 * MPI_Waitsome on the receives it keeps posted, and the workers with a
 * blocking MPI_Recv and MPI_Send ("waitsome", the default).  "poll" waits
 * on both sides as aiarun does (runtime/poll.c): MPI_Testsome alone for
 * 20 us, then with sched_yield until 50 us, then sleeps of 1/32 of the
 * time waited (2 us to 100 us), with a timer slack of 1 ns, to tell the
 * cost of that strategy from the cost of the rest of the runtime.
 * "persistent" is "waitsome" with persistent requests: every send and
 * receive is set up once (MPI_Send_init, MPI_Recv_init, one send per
 * worker and query buffer) and started each round (MPI_Start), the MPI
 * means made for a loop that repeats the same exchange.  "huge" is
 * "waitsome" with every message buffer of 2 MiB or more on huge pages
 * (aligned to 2 MiB and madvise(MADV_HUGEPAGE)), as aiarun allocates
 * them (runtime/core/util.c): the plain star given the same pages.
 *
 * Rank 0 prints one line: rounds=R time=SECONDS us_per_round=U, the time
 * taken from the first send to the end of the last round, as aiarun's
 * summary line does.
 */
#include <config.h>

#define _DEFAULT_SOURCE 1 /* posix_memalign, madvise */

#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "benchlib.h"

#define HDR 64
#define TAG_QUERY 1
#define TAG_STOP 2
#define TAG_ANSWER 3

static int use_poll, use_persistent, use_huge;
static double work_s;

/* A zeroed message buffer: malloc's, or with "huge" one on huge pages
 * from 2 MiB up. */
static char *buffer(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;
    if (!use_huge || bytes < huge)
        return calloc(1, bytes);
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes / huge * huge, MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes);
    return p;
}

/* runtime/poll.c's strategy, for the "poll" variant: keep it in step. */
static int poll_some(int n, MPI_Request *reqs, int *idx, MPI_Status *st)
{
    double start = 0;
    for (;;) {
        int count = 0;
        MPI_Testsome(n, reqs, &count, idx, st);
        if (count == MPI_UNDEFINED)
            return 0;
        if (count > 0)
            return count;
        double now = bench_now();
        if (start == 0)
            start = now;
        if (now - start < 20e-6)
            continue;
        if (now - start < 50e-6) {
            sched_yield();
            continue;
        }
        bench_sleep(fmin(fmax((now - start) / 32, 2e-6), 100e-6));
    }
}

static int wait_some(int n, MPI_Request *reqs, int *idx, MPI_Status *st)
{
    int count = 0;
    if (use_poll)
        return poll_some(n, reqs, idx, st);
    MPI_Waitsome(n, reqs, &count, idx, st);
    return count == MPI_UNDEFINED ? 0 : count;
}

static uint64_t round_of(const char *msg)
{
    uint64_t r;
    memcpy(&r, msg, sizeof r);
    return r;
}

/* Send query buffer q (number cur) to worker w once its previous send
 * is done: MPI_Isend, or the persistent send of that buffer (sreq[w]
 * then names it). */
static void send_query(char *q, size_t bytes, int w, int cur,
                       MPI_Request *ps, MPI_Request *sreq)
{
    MPI_Wait(&sreq[w], MPI_STATUS_IGNORE);
    if (use_persistent) {
        sreq[w] = ps[2 * w + cur];
        MPI_Start(&sreq[w]);
        ps[2 * w + cur] = sreq[w];
    } else {
        MPI_Isend(q, (int)bytes, MPI_BYTE, w + 1, TAG_QUERY, MPI_COMM_WORLD,
                  &sreq[w]);
    }
}

static void coordinator(int nw, size_t bytes, long rounds, int nwait)
{
    char *qb[2] = {buffer(bytes), buffer(bytes)};
    int *from = calloc((size_t)nw, sizeof *from); /* the buffer sreq[w] reads */
    char **a = calloc((size_t)nw, sizeof *a);
    MPI_Request *rreq = malloc((size_t)nw * sizeof *rreq);
    MPI_Request *sreq = malloc((size_t)nw * sizeof *sreq);
    MPI_Status *st = malloc((size_t)nw * sizeof *st);
    int *idx = malloc((size_t)nw * sizeof *idx);
    int *busy = calloc((size_t)nw, sizeof *busy);
    /* persistent: the sends of each query buffer to each worker */
    MPI_Request *ps = malloc(2 * (size_t)nw * sizeof *ps);
    if (!qb[0] || !qb[1] || !from || !a || !rreq || !sreq || !st || !idx ||
        !busy || !ps)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int w = 0; w < nw; w++) {
        if (!(a[w] = buffer(bytes)))
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (use_persistent) {
            MPI_Recv_init(a[w], (int)bytes, MPI_BYTE, w + 1, TAG_ANSWER,
                          MPI_COMM_WORLD, &rreq[w]);
            MPI_Start(&rreq[w]);
            for (int b = 0; b < 2; b++)
                MPI_Send_init(qb[b], (int)bytes, MPI_BYTE, w + 1, TAG_QUERY,
                              MPI_COMM_WORLD, &ps[2 * w + b]);
        } else {
            MPI_Irecv(a[w], (int)bytes, MPI_BYTE, w + 1, TAG_ANSWER,
                      MPI_COMM_WORLD, &rreq[w]);
        }
        sreq[w] = MPI_REQUEST_NULL;
    }
    if (nwait <= 0 || nwait > nw)
        nwait = nw;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (uint64_t round = 1; round <= (uint64_t)rounds; round++) {
        /* a buffer no send in flight reads, as in aiarun */
        int cur = (int)(round & 1);
        char *q = qb[cur];
        for (int w = 0; w < nw; w++)
            if (from[w] == cur)
                MPI_Wait(&sreq[w], MPI_STATUS_IGNORE);
        memcpy(q, &round, sizeof round);
        for (int w = 0; w < nw; w++) {
            if (busy[w])
                continue;
            send_query(q, bytes, w, cur, ps, sreq);
            from[w] = cur;
            busy[w] = 1;
        }
        int fresh = 0;
        while (fresh < nwait) {
            int k = wait_some(nw, rreq, idx, st);
            for (int i = 0; i < k; i++) {
                int w = idx[i];
                busy[w] = 0;
                if (round_of(a[w]) == round) {
                    fresh++;
                } else { /* stale: the current query at once */
                    send_query(q, bytes, w, cur, ps, sreq);
                    from[w] = cur;
                    busy[w] = 1;
                }
                if (use_persistent)
                    MPI_Start(&rreq[w]);
                else
                    MPI_Irecv(a[w], (int)bytes, MPI_BYTE, w + 1, TAG_ANSWER,
                              MPI_COMM_WORLD, &rreq[w]);
            }
        }
    }
    double t = MPI_Wtime() - t0;
    /* Collect the answers still coming, then stop every worker. */
    for (int w = 0; w < nw; w++) {
        if (busy[w])
            MPI_Wait(&rreq[w], MPI_STATUS_IGNORE);
        else
            MPI_Cancel(&rreq[w]);
        if (!busy[w])
            MPI_Wait(&rreq[w], MPI_STATUS_IGNORE);
        MPI_Wait(&sreq[w], MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, w + 1, TAG_STOP, MPI_COMM_WORLD);
        if (use_persistent) {
            MPI_Request_free(&rreq[w]);
            MPI_Request_free(&ps[2 * w]);
            MPI_Request_free(&ps[2 * w + 1]);
        }
    }
    printf("rounds=%ld time=%.6f us_per_round=%.3f\n", rounds, t,
           1e6 * t / (double)rounds);
    for (int w = 0; w < nw; w++)
        free(a[w]);
    free(a);
    free(qb[0]);
    free(qb[1]);
    free(from);
    free(rreq);
    free(sreq);
    free(st);
    free(idx);
    free(busy);
    free(ps);
}

static void worker(size_t bytes)
{
    char *q = buffer(bytes), *a = buffer(bytes);
    if (!q || !a)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Request pr = MPI_REQUEST_NULL, ps = MPI_REQUEST_NULL;
    if (use_persistent) {
        MPI_Recv_init(q, (int)bytes, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &pr);
        MPI_Send_init(a, (int)bytes, MPI_BYTE, 0, TAG_ANSWER, MPI_COMM_WORLD,
                      &ps);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
        MPI_Status st;
        if (use_persistent) {
            MPI_Start(&pr);
            MPI_Wait(&pr, &st);
        } else if (use_poll) {
            MPI_Request r;
            int idx;
            MPI_Irecv(q, (int)bytes, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &r);
            poll_some(1, &r, &idx, &st);
        } else {
            MPI_Recv(q, (int)bytes, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &st);
        }
        if (st.MPI_TAG == TAG_STOP)
            break;
        memcpy(a, q, bytes); /* answer = query */
        bench_sleep(work_s);
        if (use_persistent) {
            MPI_Start(&ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
        } else if (use_poll) {
            MPI_Request r;
            int idx;
            MPI_Isend(a, (int)bytes, MPI_BYTE, 0, TAG_ANSWER, MPI_COMM_WORLD,
                      &r);
            poll_some(1, &r, &idx, &st);
        } else {
            MPI_Send(a, (int)bytes, MPI_BYTE, 0, TAG_ANSWER, MPI_COMM_WORLD);
        }
    }
    if (use_persistent) {
        MPI_Request_free(&pr);
        MPI_Request_free(&ps);
    }
    free(q);
    free(a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np P star DIM ROUNDS [NWAIT "
                            "[waitsome|poll|persistent|huge [WORK_MS]]] (P >= "
                            "2)\n");
        MPI_Finalize();
        return 2;
    }
    size_t dim = (size_t)strtoull(argv[1], NULL, 10);
    long rounds = strtol(argv[2], NULL, 10);
    int nwait = argc > 3 ? atoi(argv[3]) : 0;
    use_poll = argc > 4 && strcmp(argv[4], "poll") == 0;
    use_persistent = argc > 4 && strcmp(argv[4], "persistent") == 0;
    use_huge = argc > 4 && strcmp(argv[4], "huge") == 0;
    work_s = argc > 5 ? strtod(argv[5], NULL) / 1e3 : 0;
    bench_sleep_setup();
    size_t bytes = HDR + dim * sizeof(double);
    if (rank == 0)
        coordinator(size - 1, bytes, rounds, nwait);
    else
        worker(bytes);
    MPI_Finalize();
    return 0;
}
