/* gather.h - the pool's facts gathered over MPI_COMM_WORLD before the run
 * (gather.c; the facts themselves: session/facts.h).  Each call is
 * collective. */
#ifndef AIARUN_GATHER_H
#define AIARUN_GATHER_H

#include "session/setup.h"

/* Every rank learns L of the whole problem into s->facts (the row-weighted
 * mean of the workers' own, with the least and largest), when the
 * algorithm asks for it (a parameter given as a word, "auto") or bound
 * (the divergence message needs L and the coordinator holds no rows to
 * find it); active: this rank runs the job.  Returns 0. */
int facts_gather(struct setup *s, int active, int bound, struct aia_error *err);

/* With the rows on the workers only (run.c asks then), the coordinator's
 * view of them is the sum of the workers' summaries, when the problem
 * gives them (summary_len, summarize, combine).  0, or -1 with err on
 * rank 0. */
int facts_combine(struct setup *s, struct aia_error *err);

/* The coordinator learns how many rows each worker holds (s->rows,
 * s->total_rows, allocated here).  0, or -1 with err: out of memory. */
int facts_rows(struct setup *s, struct aia_error *err);

#endif
