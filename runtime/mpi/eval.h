/* eval.h - the loss and the metric of a data file's rows, computed by the
 * workers on their own rows and combined by the coordinator, which holds
 * none.
 *
 * When a history row (or a loss for a stop rule) is due, the coordinator
 * sends every live worker the model (WIRE_EVAL) and goes on with the run;
 * each worker answers, after the query it is busy with, the sums of its
 * rows' loss and metric and its row count (and the same for its share of
 * problem.test).  The coordinator combines them row-weighted when every
 * live worker has answered; a worker declared dead or distrusted meanwhile
 * is counted missing, never waited for.  Rows are written in the order
 * they were asked for, every one of them (an empty loss marks a row whose
 * evaluation missed rows or fell behind).  At the end the evaluation of
 * the final model is waited for as long as each live worker takes, up to
 * pool.shutdown_timeout (eval.c says how pool.dead_after shortens it).
 */
#ifndef AIARUN_EVAL_H
#define AIARUN_EVAL_H

#include "session/setup.h"
#include "core/wire.h"

/* 1 when the job's loss is computed by the workers: a data file in the
 * star topology (in a tree the coordinator still holds every row). */
int eval_by_workers(const struct setup *s);

/* Worker: the sums over this rank's rows at x into out[EVAL_LEN] (test
 * sums 0 without problem.test); sample: the training sums over its
 * sample of them (s->sample_s) where it holds one.  0 or -1 with err. */
int eval_rows(const struct setup *s, const double *x, int sample, double *out,
              struct aia_error *err);

#endif
