/* run.h - a job under MPI: the setup every rank shares, and the two roles.
 *
 * run_job sets the job up collectively (every rank parses the same bytes,
 * loads its plugins, and all ranks agree on success before going on, so a
 * bad job or plugin ends every rank with one clear message and no hang),
 * then runs coord_run on rank 0 and worker_run on the others.
 */
#ifndef AIARUN_RUN_H
#define AIARUN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#include "checkpoint.h"
#include "data.h"
#include "job.h"
#include "loader.h"

/* Exit statuses. */
enum { RUN_OK = 0, RUN_FAILED = 1, RUN_BAD_JOB = 2 };
/* The run ended, its outputs complete, but a rank was left behind
 * (declared dead, or never stopped) and the job had to be aborted. */
enum { RUN_INCOMPLETE = 3 };

struct run_opts {
    const char *path;
    const char *const *overrides;
    int verbosity;
    int resume; /* --resume: continue from output.checkpoint */
};

struct setup {
    struct job *job;
    int rank, size;
    int nworkers;
    int *ranks;     /* pool index -> rank */
    int windex;     /* this rank's pool index; -1 for the coordinator and
                       ranks outside the pool */
    struct plugin *alg_p, *prob_p, *wait_p;
    const struct aia_algorithm_plugin *alg;
    const struct aia_problem_plugin *prob;
    const struct aia_wait_plugin *wait;
    struct aia_value *alg_args, *prob_args, *wait_args;
    void *alg_s, *prob_s, *wait_s; /* plugin states */
    struct aia_shape shape;
    size_t dim;
    size_t *rows;      /* coordinator: rows of each worker */
    size_t total_rows; /* coordinator: sum of rows */
    struct data_table data; /* rows of problem.data held by this rank */
    struct aia_problem_facts facts; /* every rank: L, rows */
    int smoothness_tried;           /* run_smoothness asked the problem */
    struct checkpoint_id identity; /* what a checkpoint of this job carries */
    struct data_table test; /* rows of problem.test held by this rank */
    void *test_s;           /* worker: the problem opened on them */
    int resume;
};

/* Set by the coordinator when MPI_Finalize must not be called (a signal
 * ends the job: mpirun is taking it down) or may not return (a rank never
 * stopped): main then exits at once, or finalizes under a watchdog. */
extern int run_no_finalize;
extern int run_incomplete;

/* Called between MPI_Init and MPI_Finalize by main.  Returns the exit
 * status, the same on every rank. */
int run_job(const struct run_opts *opts);

/* L of the problem this rank holds: the combined one when the run
 * gathered it (step: auto, or rows on the workers only), else asked of this rank's problem once (the
 * coordinator's holds every row); 0 when unknown. */
double run_smoothness(struct setup *s);

/* The two roles; both return the job's exit status. */
int coord_run(struct setup *s);
int worker_run(struct setup *s);

/* Load, bind and create a job's plugins without MPI (aiarun --check):
 * nworkers is the pool size when known, else 0 (the wait condition is
 * then not created).  0 or -1 with err. */
int run_check(struct job *job, int nworkers, struct aia_error *err);

#endif
