/* poll.h - waiting on MPI requests without taking a core from others. */
#ifndef AIARUN_POLL_H
#define AIARUN_POLL_H

#include <mpi.h>

/* Wait until at least one of the n requests completes or the clock
 * (util_now) passes deadline (INFINITY: no deadline).  Returns how many
 * completed, their indices in idx and statuses in st (both n long), 0 when
 * the deadline passed first or no request is active, or -1 on an MPI
 * error.  It tests at once,
 * then yields for a few microseconds, then sleeps in steps of an eighth of
 * the time waited so far (at most a millisecond), so an oversubscribed
 * node keeps its cores for work and a message is noticed late by little. */
int poll_some(int n, MPI_Request *reqs, int *idx, MPI_Status *st,
              double deadline);

/* Make sleeps as precise as the kernel allows (timer slack of 1 ns). */
void poll_setup(void);

#endif
