/* poll.h - waiting on MPI requests without taking a core from others. */
#ifndef AIARUN_POLL_H
#define AIARUN_POLL_H

#include <mpi.h>
#include <signal.h>

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

/* Make sleeps as precise as the kernel allows (timer slack of 1 ns). */
void poll_setup(void);

/* The signal that asked this process to stop (0: none), set by the
 * handler poll_catch_signals installs; poll_some then returns 0 at once. */
extern volatile sig_atomic_t poll_signal;

/* Catch SIGTERM, SIGINT and SIGHUP into poll_signal. */
void poll_catch_signals(void);

/* Ignore SIGTERM, SIGINT and SIGHUP (workers: mpirun SIGKILLs them a
 * second later anyway; a worker that died of the SIGTERM at once would
 * make Open MPI kill the coordinator at once too, before it saves). */
void poll_ignore_signals(void);

#endif
