/* history.h - the history's columns (output.history): a row is a
 * sample of the loss, written as the columns this run's job and problem
 * call for.  Private to runtime/record. */
#ifndef AIARUN_HISTORY_H
#define AIARUN_HISTORY_H

#include "output.h"
#include "record.h"

/* What a history row is made of, before it is columns: the coordinator's
 * own loss (record_iteration) or the workers' evaluation
 * (record_evaluated) fills one. */
struct sample {
    double iteration, epoch, time, loss, change, metric, test_loss, test_metric;
    double rows; /* the training rows that loss and metric read */
};

/* Open the history at job->output.history with this run's columns,
 * keeping its first keep bytes (-1: a new file; a resumed run's
 * checkpoint says how many).  NULL with err. */
struct output *history_open(const struct recorder *r, long long keep,
                            struct aia_error *err);

/* Whether the history a resumed run keeps keep bytes of holds rows of
 * this run's columns and format (output_check_layout).  0 or -1 with
 * err. */
int history_check_layout(const struct recorder *r, long long keep,
                         struct aia_error *err);

/* Write the history row of sample h.  0, or -1 with err. */
int history_write(const struct recorder *r, const struct sample *h,
                  struct aia_error *err);

#endif
