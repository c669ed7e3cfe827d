/* history.h - the CSV history of a run: one row per saved iteration. */
#ifndef AIARUN_HISTORY_H
#define AIARUN_HISTORY_H

#include <stdint.h>

#include <aiarun/aiarun.h>

struct history;

/* Open path for writing and write the header line.  NULL with err. */
struct history *history_open(const char *path, struct aia_error *err);

/* One row.  subopt is written empty when NaN (optimum unknown). */
int history_row(struct history *h, int64_t iteration, int64_t epoch,
                double time, double loss, double subopt,
                struct aia_error *err);

/* Write out the rows buffered so far, before the job is aborted (the
 * file stays open).  NULL is a no-op. */
void history_flush(struct history *h);

/* Flush and close; 0, or -1 when a write failed.  NULL is a no-op. */
int history_close(struct history *h, struct aia_error *err);

#endif
