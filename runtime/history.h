/* history.h - the CSV history of a run: one row per saved iteration. */
#ifndef AIARUN_HISTORY_H
#define AIARUN_HISTORY_H

#include <stdint.h>

#include <aiarun/aiarun.h>

struct history;

/* One row of the history.  NaN values are written as empty fields
 * (suboptimality when the optimum is unknown, change at iteration 0). */
struct history_row {
    int64_t iteration, epoch;
    double time;   /* seconds since the run began */
    double loss;
    double subopt; /* loss - optimum */
    double change; /* norm of the query's change since the last iteration */
    double metric; /* the problem's metric, when it has one */
};

/* Open path for writing and write the header line: iteration, epoch,
 * time, loss, suboptimality, change, and metric_name when not NULL.
 * NULL with err. */
struct history *history_open(const char *path, const char *metric_name,
                             struct aia_error *err);

int history_write(struct history *h, const struct history_row *r,
                  struct aia_error *err);

/* Flush and close; 0, or -1 when a write failed.  NULL is a no-op. */
int history_close(struct history *h, struct aia_error *err);

#endif
