/* facts.h - what every rank learns of the problem's rows before the run
 * (facts.c): each function is collective over MPI_COMM_WORLD, except
 * facts_smoothness. */
#ifndef AIARUN_FACTS_H
#define AIARUN_FACTS_H

#include "setup.h"

/* Every rank learns L of the whole problem into s->facts (the row-weighted
 * mean of the workers' own, with the least and largest), when the
 * algorithm asks for it (a parameter given as a word, "auto") or bound
 * (the divergence message needs L and the coordinator holds no rows to
 * find it); active: this rank runs the job.  Returns 0. */
int facts_gather(struct setup *s, int active, int bound, struct aia_error *err);

/* L of the problem this rank holds: the combined one when the run
 * gathered it (step: auto, or rows on the workers only), else asked of this rank's problem once (the
 * coordinator's holds every row); 0 when unknown. */
double facts_smoothness(struct setup *s);

/* With the rows on the workers only (run.c asks then), the coordinator's
 * view of them is the sum of the workers' summaries, when the problem
 * gives them (summary_len, summarize, combine).  0, or -1 with err on
 * rank 0. */
int facts_combine(struct setup *s, struct aia_error *err);

/* The coordinator learns how many rows each worker holds (s->rows,
 * s->total_rows, allocated here).  0, or -1 with err: out of memory. */
int facts_rows(struct setup *s, struct aia_error *err);

#endif
