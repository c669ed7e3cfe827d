/* poll.h - waiting on MPI requests without taking a core from others. */
#ifndef AIARUN_POLL_H
#define AIARUN_POLL_H

#include <mpi.h>
#include <signal.h>

#include "session/guard.h" /* guard_signal: poll_some returns at once */

/* Wait until at least one of the n requests completes or the clock
 * (util_now) passes deadline (INFINITY: no deadline).  Returns how many
 * completed, their indices in idx and statuses in st (both n long), 0 when
 * the deadline passed first or no request is active, or -1 on an MPI
 * error.  It tests in a loop for 20 us, then yields between tests up to
 * 50 us, then sleeps in steps of 1/32 of the time waited so far (at most
 * 100 us), so an oversubscribed node keeps its cores for work and a
 * message is noticed late by little. */
int poll_some(int n, MPI_Request *reqs, int *idx, MPI_Status *st,
              double deadline);

/* poll_some's waiting for any test: test(ctx) is called until it returns
 * non-zero or the deadline passes (or a signal came); returns what it
 * returned (a count, or -1 for an error), 0 at the deadline, and 0 at once
 * when it returns POLL_NOTHING (nothing can come). */
int poll_wait(int (*test)(void *ctx), void *ctx, double deadline);
#define POLL_NOTHING (-2)

/* pool.poll: how a rank waits for a message it expects soon. */
enum poll_mode {
    POLL_AUTO = 0, /* spin when the node has a core for every rank and
                      its cores are not taken by other work */
    POLL_SPIN = 1, /* spin for the expected time, whatever the node */
    POLL_SLEEP = 2 /* never spin past the first microseconds */
};

/* Count the ranks on this node (MPI_COMM_TYPE_SHARED) and the cores this
 * process may run on; collective over MPI_COMM_WORLD, right after
 * MPI_Init. */
void poll_node(void);

/* Set the counts poll_node finds (tests: a node of any shape). */
void poll_node_counts(int ranks, int cores);

/* Choose, by mode (enum poll_mode) and poll_node's counts, whether waits
 * test without sleeping while a message is expected, and by wake (0: bell,
 * 1: timer, pool.wake) whether sleeps wait on this rank's doorbell
 * (bell.h); returns 1 when waits spin. */
int poll_configure(int mode, int wake);

/* poll_configure's choice and why, as a line for the log (static). */
const char *poll_choice(void);

/* A message is expected by until (util_now's clock): waits test without
 * yielding or sleeping up to then (at most 20 ms from now), where
 * poll_configure allowed it and, under auto, while this process is
 * seldom preempted (outside load); a no-op otherwise.  A later call
 * replaces the window. */
void poll_expect(double until);
/* poll_expect, with the clock read the caller made (now). */
void poll_expect_at(double until, double now);

/* poll_expect for a message that comes after other ranks of this node
 * have worked in turn (a tree worker's next query, after its ancestors
 * aggregated and forwarded): where the node has fewer cores than ranks,
 * auto yields until then instead of sleeping, unless yields give the
 * core away for long (other work holds the cores); poll_expect's window
 * elsewhere. */
void poll_expect_yield(double until);

/* End poll_expect's window. */
void poll_expect_clear(void);

/* auto's measure of outside load: the moving share of sampled spins in
 * which this thread was preempted (spinning stops above 0.25). */
double poll_contended(void);

/* auto's measure for poll_expect_yield: the moving share of yielding
 * waits in which a yield gave the core away for long (no yielding above
 * 0.25). */
double poll_yield_slow(void);

/* Make sleeps as precise as the kernel allows (timer slack of 1 ns). */
void poll_setup(void);

#endif
