/* refopt_mpi.h - the reference optimum over MPI (refopt.c). */
#ifndef AIARUN_REFOPT_MPI_H
#define AIARUN_REFOPT_MPI_H

#include "session/setup.h"

/* Collective: when the coordinator's job wants a reference optimum
 * (refopt_wanted; active: this rank runs the job, by_workers: the rows
 * are the workers'), rank 0 finds it into s->ref with every worker's
 * rows.  0, or -1 with err on rank 0. */
int refopt_mpi(struct setup *s, int active, int by_workers,
               struct aia_error *err);

#endif
