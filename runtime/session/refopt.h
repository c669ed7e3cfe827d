/* refopt.h - the reference optimum of a problem whose rows are the
 * workers' and that gives Hessian-vector products (refopt.c): Newton-CG
 * (aiarun/newton.h, the algorithm newton's machine) on the loss summed
 * over every worker's rows, before the run, for stop.gap and the
 * history's gap.  The drivers sum a request over the pool: the MPI one by
 * a broadcast and a reduction (mpi/refopt.c), the simulator over its
 * workers in one process. */
#ifndef AIARUN_REFOPT_H
#define AIARUN_REFOPT_H

#include <stddef.h>

#include <aiarun/aiarun.h>

#include "setup.h"

/* Whether the job wants one: stop.gap is set, the coordinator's problem
 * cannot give its optimum (none, or the rows are the workers' and it
 * gives no summary to combine: by_workers), and it offers hvp.  On the
 * coordinator. */
int refopt_wanted(const struct setup *s, int by_workers);

/* Requests give up to 2 dim values (AIA_REQ_GRAD_HVP); a part is the
 * loss, those and the rows. */
#define REFOPT_WIDTH(dim) (2 * (size_t)(dim))
#define REFOPT_PART_LEN(dim) (REFOPT_WIDTH(dim) + 2)

/* One worker's part of a request q (newton.h's query layout): out[0] its
 * rows times the loss, out[1 .. width] its rows times the values,
 * out[width + 1] its rows (REFOPT_PART_LEN doubles).  NaN everywhere when its
 * problem fails (err set); zeros for a rank that holds no rows. */
void refopt_part(const struct aia_problem_plugin *p, void *ps, size_t dim,
                 const double *q, double *out, struct aia_error *err);

/* Sum request q over the pool into sum (REFOPT_PART_LEN doubles,
 * refopt_part's layout).  0 or -1. */
typedef int (*refopt_sum_fn)(void *ctx, const double *q, double *sum,
                             struct aia_error *err);

/* Newton-CG from 0 until |grad| <= 1e-10 max(1, |grad at 0|), at most
 * 100 Newton steps: ref->known and ref->how, or ref->why.  0, or -1 when
 * a sum failed (err set). */
int refopt_solve(struct refopt *ref, size_t dim, refopt_sum_fn sum, void *ctx,
                 struct aia_error *err);

void refopt_free(struct refopt *ref);

#endif
