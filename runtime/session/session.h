/* session.h - a job's plugins from load to teardown, the same for both
 * drivers (session.c).  The MPI driver (mpi/run.c) calls each step on the
 * ranks that need it and agrees on the outcome; the simulator
 * (sim/simpool.c) calls them for the coordinator and each of its N
 * workers in one process.  A worker is named by its pool index w; -1 is
 * the coordinator.  Every function that can fail returns 0 or -1 with err
 * naming the file, line and key or the plugin. */
#ifndef AIARUN_SESSION_H
#define AIARUN_SESSION_H

#include "record/checkpoint.h"
#include "setup.h"

/* The context a plugin of worker w (-1: the coordinator) is called with:
 * args its parameters, prob_s the problem it sees (NULL before one is
 * open), data the rows it holds (NULL: none, or a generated problem). */
struct aia_context session_context(const struct setup *s, int w,
                                   const struct aia_value *args,
                                   void *prob_s, const struct aia_dataset *data);

/* The pool's ranks (s->ranks, s->nworkers; s->windex for this rank),
 * checked against s->size ranks: each a worker rank, none twice; and the
 * job's per-worker lists (stragglers, problem.weights) against them. */
int session_pool(struct setup *s, struct aia_error *err);

/* Load the problem and algorithm plugins (and the wait condition when
 * wait) and bind their parameters. */
int session_load(struct setup *s, int wait, struct aia_error *err);

/* The rules on which plugins go together with the job: a data file needs
 * a problem that reads one, a tree combinable answers, top-k additive
 * ones. */
int session_check(const struct setup *s, struct aia_error *err);

/* aiarun --check: the problem's own check of its parameters, where it
 * has one that opens nothing. */
int session_check_problem(struct setup *s, struct aia_error *err);

/* Open the problem on partition w (-1: the coordinator's view, every
 * partition) over data (NULL: none), and check what the instance offers;
 * opened into &s->prob_s, it is this rank's own (s->offers,
 * s->metric_name). */
int session_open(struct setup *s, int w, const struct aia_dataset *data,
                 void **prob_s, struct aia_error *err);

/* Split a model of dim values into s->shards contiguous slices
 * (s->slice, every rank alike) and, on a coordinator rank, set up the
 * slice's problem its algorithm is created on.  0, or -1 with err (out
 * of memory, or a slice would be empty). */
int session_slices(struct setup *s, size_t dim, struct aia_error *err);
/* With a sample due (output_sample_rows), draw it from rows (seeded by
 * the job's seed and w, the worker, -1 the coordinator) into s->sample
 * and open the problem on it as s->sample_s; else leave both empty.  0,
 * or -1 with err set. */
int session_open_sample(struct setup *s, int w, const struct aia_dataset *rows,
                        struct aia_error *err);

/* Create worker w's algorithm state (-1: the coordinator's, whose query
 * must then be the model unless the algorithm gives an iterate) on its
 * open problem, once the pool's facts are known. */
int session_create(const struct setup *s, int w, void *prob_s,
                   const struct aia_dataset *data, void **alg_s,
                   struct aia_shape *shape, struct aia_error *err);

/* Create the coordinator's wait condition. */
int session_create_wait(struct setup *s, struct aia_error *err);

/* Whether rank's message lengths and model (got, got_dim) are rank 0's
 * (want, want_dim): 0, or -1 with err naming the rank and both sides. */
int session_same_shape(int rank, const struct aia_shape *got, size_t got_dim,
                       const struct aia_shape *want, size_t want_dim,
                       struct aia_error *err);

/* The reading options of a data section (problem.data, problem.test);
 * features: a libsvm file's feature count (0: the section's). */
void session_data_opts(const struct job_data *d, size_t features,
                       struct data_opts *o);

/* A data_read filter (session_rows_own, with a struct session_rows as its
 * argument): the rows of total that partition part.index owns. */
struct session_rows {
    struct aia_partition part;
    size_t total;
};
int session_rows_own(size_t r, void *arg);

/* What a checkpoint of this job must have been written by, into
 * s->identity. */
void session_identity(struct setup *s);

/* Destroy and close what the steps above made, free the setup's arrays
 * and rows; the job stays the caller's.  Safe on a part-made setup. */
void session_close(struct setup *s);

#endif
