/* run.h - a job under MPI: setting it up (setup.h), and the two roles.
 *
 * run_job sets the job up collectively (every rank parses the same bytes,
 * loads its plugins, and all ranks agree on success before going on, so a
 * bad job or plugin ends every rank with one clear message and no hang),
 * then runs coord_run on rank 0 and worker_run on the others.
 */
#ifndef AIARUN_RUN_H
#define AIARUN_RUN_H

#include "session/setup.h"

struct run_opts {
    const char *path;
    const char *const *overrides;
    int verbosity;
    int resume; /* --resume: continue from output.checkpoint */
};

/* Set by the coordinator when MPI_Finalize must not be called (a signal
 * ends the job: mpirun is taking it down) or may not return (a rank never
 * stopped): main then exits at once, or finalizes under a watchdog. */
extern int run_no_finalize;
extern int run_incomplete;

/* aiarun under mpirun: MPI_Init, the job (run_job), then MPI_Finalize,
 * under a watchdog when a rank never stopped.  Returns the exit status. */
int run_main(int *argc, char ***argv, const struct run_opts *opts);

/* Called between MPI_Init and MPI_Finalize by run_main.  Returns the exit
 * status, the same on every rank. */
int run_job(const struct run_opts *opts);


/* The worker's role (the coordinator's is coord_run, coord.h); it returns
 * the job's exit status. */
int worker_run(struct setup *s);

/* Load, bind and create a job's plugins without MPI (aiarun --check):
 * nworkers is the pool size when known, else 0 (the wait condition is
 * then not created).  0 or -1 with err. */
int run_check(struct job *job, int nworkers, struct aia_error *err);

#endif
