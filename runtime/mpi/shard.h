/* shard.h - shard ranks (pool.shards): coordinator ranks 1 .. shards-1
 * each hold a contiguous slice of the model and of the algorithm's state,
 * rank 0 the first slice and every decision.
 *
 * Rank 0 tells each shard rank, on TAG_SHARD, what it decided, in order:
 * absorb worker w's next answer slice with this info, drop it, make the
 * next query, send the current query slice to worker w, send rank 0 the
 * slice of the model, end.  MPI keeps the order of messages between two
 * ranks, so the k-th answer slice a shard receives from worker w is the
 * slice of the k-th answer rank 0 received from it.  Workers send each
 * slice of an answer (and the answer's tail after the model's values) to
 * its rank on TAG_SLICE and take each slice of a query from it.  Private
 * to the runtime. */
#ifndef AIARUN_SHARD_H
#define AIARUN_SHARD_H

#include <mpi.h>
#include <stdint.h>

#include "core/wire.h"
#include "session/setup.h"

struct coord;

/* Rank 0: set up the messages to the shard ranks (c->sh) and the
 * recorder's hooks (the model gathered, the bytes of each rank).  0, or
 * -1 when out of memory.  Does nothing without shards. */
int shard_lead_init(struct coord *c);
void shard_lead_free(struct coord *c);

/* Rank 0: tell every shard rank cmd about worker w (info: SHARD_ABSORB's).
 * Does nothing without shards. */
void shard_tell(struct coord *c, enum shard_cmd cmd, int w,
                const struct aia_answer_info *info);

/* Rank 0, in its loop: ask every shard rank for a word every third of
 * pool.shard_timeout; one whose word has not come within it is lost,
 * which stops the run (exit 1).  Returns when it is next due (INFINITY:
 * never).  Does nothing without shards. */
double shard_watch(struct coord *c, double now);

/* Rank 0: 1 when rank is a shard rank declared lost (never sent to or
 * waited on again), else 0. */
int shard_lost(const struct coord *c, int rank);

/* Rank 0: a shard rank's failure that has come (an answer slice not
 * finite, absorb or query failed on its slice) fails the run with its
 * text.  Does nothing without shards. */
void shard_heard(struct coord *c);

/* Rank 0, resuming: load each coordinator rank's state and query slice
 * from checkpoint k (written by the recorder's shard_save: every rank's
 * state, the whole query), rank 0's into its algorithm and query (its
 * slice and the tail).  0, or -1 with err (the checkpoint's states are
 * not those of as many ranks). */
int shard_load(struct coord *c, const struct checkpoint *k, double *query,
               struct aia_error *err);

/* Rank 0, after the pool's goodbyes: take each shard rank's byte counts
 * into the recorder (r.rank_bytes). */
void shard_bytes(struct coord *c);

/* Rank 0, once the report is out: the shard ranks stop. */
void shard_end(struct coord *c);

/* A failed shard rank's answer to SHARD_SAVE, in place of its state's
 * length: nothing follows. */
#define SHARD_STATE_NONE UINT64_MAX

/* Wait for one request within seconds, without spinning; 0, or -1 when
 * it did not complete (or MPI failed). */
int shard_await(MPI_Request *req, double seconds);

/* A shard rank (1 .. shards-1, shard_rank.c): carry out rank 0's word
 * until it ends, then stop as a rank outside the pool.  Returns the job's
 * exit status. */
int shard_run(struct setup *s);

#endif
