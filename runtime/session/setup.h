/* setup.h - what every rank of a job shares once it is set up: the job,
 * the pool's ranks, the plugins and their states, the rows this rank
 * holds and what every rank learnt of the problem; and the job's exit
 * statuses.  run.c fills it (run_job); the coordinator, the workers and
 * the simulator read it. */
#ifndef AIARUN_SETUP_H
#define AIARUN_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#include "record/checkpoint.h"
#include "data/data.h"
#include "conf/job.h"
#include "loader.h"

/* Exit statuses. */
enum { RUN_OK = 0, RUN_FAILED = 1, RUN_BAD_JOB = 2 };
/* The run ended, its outputs complete, but a rank was left behind
 * (declared dead, or never stopped) and the job had to be aborted. */
enum { RUN_INCOMPLETE = 3 };
/* The run ended, but the workers' evaluation of the final model missed
 * some rows: the summary's loss is nan, its partial_loss what came. */
enum { RUN_PARTIAL = 4 };

/* The reference optimum found over the workers' rows (refopt.h), or
 * why not: what the recorder compares the loss with. */
struct refopt {
    int known;
    double f;
    double *x;            /* dim */
    char how[200];        /* how it was found, for the report */
    struct aia_error why; /* when not known */
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
    /* What prob_s offers (loader_offers): AIA_OFFER_* bits, and its
     * metric's name (NULL without); the descriptor is the same for every
     * instance and does not tell. */
    uint32_t offers;
    const char *metric_name;
    struct aia_shape shape;
    size_t dim;
    size_t *rows;      /* coordinator: rows of each worker */
    size_t total_rows; /* coordinator: sum of rows */
    struct data_table data; /* rows of problem.data held by this rank */
    struct aia_problem_facts facts; /* every rank: L, rows */
    int smoothness_tried;           /* facts_smoothness asked the problem */
    struct checkpoint_id identity; /* what a checkpoint of this job carries */
    struct data_table test; /* rows of problem.test held by this rank */
    void *test_s;           /* worker: the problem opened on them */
    /* a sample of this rank's rows of problem.data, for the history's
     * evaluations (output.history_sample), and the problem opened on it;
     * empty and NULL when every row is read */
    struct data_table sample;
    void *sample_s;
    int resume;
    /* pool.shards: ranks 0 .. shards-1 are coordinators, each holding the
     * slice [slice[k], slice[k+1]) of the model (session_slices); shard
     * is this rank's k, -1 on a worker.  On a coordinator rank with
     * shards, shape is its slice's and full the pool's (what workers
     * send and take whole), and slice_prob the problem its algorithm is
     * created on: dim slice_len, no rows. */
    int shards, shard;
    size_t *slice;
    size_t slice_len;
    struct aia_shape full;
    struct aia_problem_plugin slice_prob;
    /* coordinator: the reference optimum found over the workers' rows
     * (session/refopt.h), NULL when none was sought */
    struct refopt *ref;
};

#endif
