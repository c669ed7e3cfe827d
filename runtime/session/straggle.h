/* straggle.h - injected delays: what one worker adds to each answer.
 *
 * Every draw comes from the worker's own stream of the job's seed, in the
 * same order for every answer, so a run's delays are the same each time.
 */
#ifndef AIARUN_STRAGGLE_H
#define AIARUN_STRAGGLE_H

#include <stdint.h>

#include <aiarun/aiarun.h>

#include "conf/job.h"

struct straggle {
    double work;  /* seconds, every answer */
    double fixed; /* seconds, every answer of a persistent straggler */
    double factor; /* compute time factor (stragglers.slow), 1: none */
    double random_p, random_delay;
    int markov, slow;
    double p_slow, p_fast, markov_delay;
    int hang;
    int64_t hang_after;
    int corrupt;
    int64_t corrupt_after;
    uint64_t answers;
    struct aia_rng rng;
};

/* The delays of the worker of this rank under st. */
void straggle_init(struct straggle *s, const struct job_stragglers *st,
                   uint64_t seed, int rank);

/* Seconds to add to the next answer; INFINITY when the worker hangs. */
double straggle_next(struct straggle *s);

/* 1 when the answer just counted by straggle_next must be sent
 * malformed. */
int straggle_corrupt(const struct straggle *s);

/* 0 when every rank named in st is in the pool (ranks, n); else -1 with
 * err naming the file, line and rank. */
int straggle_check(const struct job *job, const int *ranks, int n,
                   struct aia_error *err);

#endif
