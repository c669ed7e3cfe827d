/* report.h - the end of a run on rank 0: files closed, final loss and
 * iterate, report and summary, per-worker table (report.c). */
#ifndef AIARUN_REPORT_H
#define AIARUN_REPORT_H

#include "record.h"

/* End the run recorded by r, as mpirun's coordinator and --simulate both
 * do: close the files; when the run ended well (ok, or stopped by a
 * signal) take its final loss and write output.final, whether or not the
 * loss is known; say why it stopped (-v), print the report (unless quiet),
 * the per-worker table and the summary line; write output.workers.  Each
 * failure is passed to fail(ctx, text) and the end goes on.  Sets
 * r->incomplete when the workers' evaluation of the final model missed
 * rows (the summary then has loss=nan and partial_loss). */
void report_end(struct recorder *r, int ok,
                void (*fail)(void *ctx, const char *text), void *ctx);

#endif
