/* simpool.h - the plugins of a simulated run, in one process: the
 * coordinator's problem, algorithm and wait condition as rank 0 holds
 * them, and N workers, each with its own partition of the problem and its
 * own algorithm state, answering queries with the real worker step.
 */
#ifndef AIARUN_SIMPOOL_H
#define AIARUN_SIMPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "latency.h"
#include "session/setup.h"

/* One simulated worker. */
struct simworker {
    void *prob_s, *alg_s;
    struct codec qc, ac; /* queries' decoder, answers' encoder */
    double *answer;      /* the answer as doubles */
    char *enc;           /* with an answer codec: it encoded */
    size_t bytes;        /* of the answer's payload as it travels */
    uint64_t answers;    /* answers given */
    struct latency lat;
    double *up; /* tree: its subtree's answer */
    /* the rows its last step read through the problem's gradient and
     * loss, as a share of its partition (1 when it read none that way):
     * what its compute time scales with */
    double work;
};

/* What a subtree's answer says of itself, as its header would. */
struct simsub {
    double compute_s, delay_s; /* the largest of its nodes' */
    double rows;               /* the rows it stands for */
};

struct simpool {
    struct setup s; /* the coordinator's, as rank 0 of an mpirun holds it */
    /* the problem as the algorithms see it: the plugin's functions, with
     * gradient and loss counting the rows a worker's step reads */
    struct aia_problem_plugin counted;
    int n;
    struct simworker *w;
    double *qdec;            /* a query decoded, for workers (query codec) */
    struct data_table *data; /* problem.data: each worker's rows */
};

/* Load the job's plugins and open the coordinator's view and n workers
 * (ranks 1..n, or pool.workers when it lists n ranks).  0, or -1 with err
 * naming the file, line and key; sp is then ready for simpool_close. */
int simpool_open(struct simpool *sp, struct job *job, int n,
                 struct aia_error *err);

void simpool_close(struct simpool *sp);

/* Seconds per row of the real worker step: worker 0 answers query a few
 * times (its state is then thrown away and made again).  0 or -1. */
int simpool_measure(struct simpool *sp, const double *query, double *row_s,
                    struct aia_error *err);

/* Worker w answers the query of round (the doubles sent, encoded in bytes
 * when the job has a query codec: qenc).  Its answer is left in
 * w->answer (and w->enc, w->bytes).  0, or -1 with err. */
int simpool_answer(struct simpool *sp, int w, const double *query,
                   const void *qenc, size_t qbytes, uint64_t round,
                   struct aia_error *err);

/* Tree mode: the subtree of worker w answers the query of round, sent
 * to w at time sent by its parent.  Each node forwards the query to its
 * children as it arrives, answers it, and sends its parent the rows-
 * weighted mean of its answer and its children's (the arithmetic of the
 * MPI tree, in the same order) once it has them all.  The mean is left in
 * w->up; returns when it reaches the parent (INFINITY when a node of the
 * subtree hangs), or NAN with err. */
double simpool_subtree(struct simpool *sp, int w, const double *query,
                       uint64_t round, double sent, struct simsub *sub,
                       struct aia_error *err);

#endif
