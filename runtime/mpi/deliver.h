/* deliver.h - a job's data file to every rank.
 *
 * Rank 0 checks the whole file once (data_scan) and tells every rank its
 * size.  Then, with delivery: read, every worker reads its own rows from
 * the file (a shared file system); with delivery: scatter, rank 0 reads
 * each worker's rows in turn and sends them, holding one worker's share
 * at a time.  Either way a worker holds only its rows, chosen by the job's
 * partition, and the coordinator none (only the file's shape) unless it
 * is asked for every row (a tree computes the loss on rank 0).
 */
#ifndef AIARUN_DELIVER_H
#define AIARUN_DELIVER_H

#include <stdint.h>

#include "data/data.h"
#include "session/setup.h"

/* Collective over MPI_COMM_WORLD: fill t with this rank's rows of the
 * file d (nothing for a rank outside the pool; on rank 0 the shape only,
 * or every row when all_on_root).  0, or -1 with err on the ranks that
 * failed (every rank returns; call agree() after). */
int deliver_data(const struct setup *s, const struct job_data *d,
                 int all_on_root, struct data_table *t,
                 struct aia_error *err);

/* A checksum of the rows t holds (ids, targets, values), the same for the
 * same rows however they arrived. */
uint64_t deliver_checksum(const struct data_table *t);

#endif
