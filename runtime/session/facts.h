/* facts.h - what a run learns of the problem's rows before it starts
 * (facts.c): each worker's share and the pool's facts made of them.  The
 * MPI driver gathers the shares (mpi/gather.h), the simulator
 * (sim/simpool.c) sums them itself. */
#ifndef AIARUN_FACTS_H
#define AIARUN_FACTS_H

#include "setup.h"

/* Whether the algorithm asks for a value from the problem: a number
 * parameter given (or defaulting to) a word, "auto", or any parameter of
 * a bridge (AIA_PARAMS_OPEN: the python algorithm), whose class may ask
 * for a step from L whatever its keys say. */
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

#endif
