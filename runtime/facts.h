/* facts.h - what every rank learns of the problem's rows before the run
 * (facts.c): facts_gather, facts_combine and facts_rows are collective
 * over MPI_COMM_WORLD; the simulator (simpool.c) sums the workers' parts
 * itself. */
#ifndef AIARUN_FACTS_H
#define AIARUN_FACTS_H

#include "setup.h"

/* Every rank learns L of the whole problem into s->facts (the row-weighted
 * mean of the workers' own, with the least and largest), when the
 * algorithm asks for it (a parameter given as a word, "auto") or bound
 * (the divergence message needs L and the coordinator holds no rows to
 * find it); active: this rank runs the job.  Returns 0. */
int facts_gather(struct setup *s, int active, int bound, struct aia_error *err);

/* Whether the algorithm asks for a value from the problem: a number
 * parameter given (or defaulting to) a word, "auto". */
int facts_wanted(const struct setup *s);

/* One worker's share of the facts, from its problem: part gets its rows,
 * rows * L, and 1 when its L is unknown (0 when it has no rows); lo and hi
 * its L (INFINITY and 0 when unknown).  L is asked of the problem only
 * when smoothness is 1 (else it is 0, not unknown: the power iteration
 * is not free).  Summed over the workers (least of lo, largest of hi),
 * facts_set makes them the pool's facts. */
void facts_part(const struct aia_problem_plugin *prob, void *prob_s,
                int smoothness, double part[3], double *lo, double *hi);
void facts_set(struct setup *s, const double sum[3], double least, double most);

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
