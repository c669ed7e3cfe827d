/* bell.c - the doorbells between a node's ranks (runtime/bell.c): a ring
 * wakes a rank asleep on its bell at once, a sleep with no ring lasts its
 * time, a ring between arming and sleeping is not lost, and pool.wake:
 * timer (bell_use(0)) sleeps the whole time.
 *
 * Run by the test harness without arguments, it starts itself on 2 ranks
 * under $MPIRUN; rank 0 prints the TAP, rank 1 is the sleeper. */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/bell.h"
#include "core/util.h"
#include "selflaunch.h"
#include "tap.h"

enum { READY = 1, RUNG, TOOK };

/* Rank 1: arm, say so, then sleep up to s seconds; when wait_rung, first
 * wait for rank 0 to say it rang.  Sends rank 0 the time slept. */
static void sleeper(double s, int wait_rung)
{
    long ticket = bell_arm();
    int dummy = 0;
    MPI_Send(&dummy, 1, MPI_INT, 0, READY, MPI_COMM_WORLD);
    if (wait_rung)
        MPI_Recv(&dummy, 1, MPI_INT, 0, RUNG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    double t0 = util_now();
    bell_sleep(ticket, s);
    double took = util_now() - t0;
    MPI_Send(&took, 1, MPI_DOUBLE, 0, TOOK, MPI_COMM_WORLD);
}

/* Rank 0's side of sleeper(): wait until rank 1 armed, then after delay
 * seconds ring it (ring) and, when told, say so; returns the time it
 * slept. */
static double waker(double delay, int ring, int say_rung)
{
    int dummy = 0;
    double took = -1;
    MPI_Recv(&dummy, 1, MPI_INT, 1, READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    util_sleep(delay);
    if (ring)
        bell_ring(1);
    if (say_rung)
        MPI_Send(&dummy, 1, MPI_INT, 1, RUNG, MPI_COMM_WORLD);
    MPI_Recv(&took, 1, MPI_DOUBLE, 1, TOOK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return took;
}

int main(int argc, char **argv)
{
    int launched = selflaunch(argc, argv, 2);
    if (launched >= 0)
        return launched;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &node);
    bell_setup(node);
    MPI_Comm_free(&node);
    int on = strncmp(bell_state(), "doorbells: on", 13) == 0;
    if (rank == 1) {
        if (on) {
            sleeper(5.0, 0);
            sleeper(0.2, 0);
            sleeper(5.0, 1);
            bell_use(0);
            sleeper(0.3, 0);
        }
        MPI_Finalize();
        return 0;
    }
    if (size != 2)
        bail_out("run on 2 ranks, not %d", size);
    if (!on) {
        /* a system without futexes or shared memory: plain sleeps */
        printf("1..0 # SKIP %s\n", bell_state());
        MPI_Finalize();
        return 0;
    }
    plan(5);
    like(bell_state(), "doorbells: on (2 ranks on this node)",
         "the node's 2 ranks share their bells");
    double t = waker(0.05, 1, 0);
    ok(t >= 0.03 && t < 2.5,
       "a ring 50 ms after the sleeper armed ends its 5 s sleep (%.3f s)", t);
    t = waker(0, 0, 0);
    ok(t >= 0.19 && t < 2.5, "with no ring a 0.2 s sleep lasts (%.3f s)", t);
    t = waker(0, 1, 1);
    ok(t < 1.0,
       "a ring between arming and sleeping is not lost: the 5 s sleep "
       "returns at once (%.3f s)",
       t);
    /* a rank out of range rings no one (and reads nothing out of the
     * table: the sanitizer build would say) */
    bell_ring(-1);
    bell_ring(size + 5);
    t = waker(0.05, 1, 0);
    ok(t >= 0.29 && t < 2.5,
       "pool.wake: timer (bell_use(0)): a ring does not shorten a 0.3 s "
       "sleep (%.3f s)",
       t);
    MPI_Finalize();
    return done_testing();
}
