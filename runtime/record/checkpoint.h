/* checkpoint.h - the coordinator's state on disk, to resume a job.
 *
 * Layout (native byte order, as written): magic "AIACKPT1"; uint32 layout
 * version (4); uint32 plugin ABI; uint64 job identity; uint32 parts, uint32
 * 0 and, per part of the identity, its name in 16 bytes (NUL-padded) and
 * its uint64 hash; int64 iteration; int64
 * epoch; uint64 round; float64 seconds run; uint64 bytes of the history,
 * the answer log and the iterate file when it was written; uint64
 * answers; CHECKPOINT_TRAFFIC uint64 byte counts; uint64 query_len and
 * the query's doubles; uint64 state_len and the algorithm's state;
 * uint64 FNV-1a checksum of everything before it.
 *
 * A checkpoint is written to PATH.tmp (created exclusively, never through
 * a link: a stale one is removed first), synced, and renamed over PATH,
 * so PATH is always a whole checkpoint, old or new.
 */
#ifndef AIARUN_CHECKPOINT_H
#define AIARUN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

/* What a checkpoint must have been written by, part by part, so that a
 * refusal can name what differs. */
#define CHECKPOINT_PARTS 16
#define CHECKPOINT_NAME 16
struct checkpoint_id {
    uint64_t all; /* every part's hash, mixed */
    int n;
    char name[CHECKPOINT_PARTS][CHECKPOINT_NAME]; /* "algorithm" */
    uint64_t part[CHECKPOINT_PARTS];
};

/* Add a part named name (at most 15 bytes) with hash h to id (zeroed
 * first); parts past CHECKPOINT_PARTS are mixed into all only. */
void checkpoint_id_add(struct checkpoint_id *id, const char *name,
                       uint64_t h);

/* Bounds a checkpoint's counters and file sizes must keep. */
#define CHECKPOINT_MAX_COUNT (1ll << 53)
#define CHECKPOINT_MAX_BYTES (1ull << 50)

/* The coordinator's byte counts kept across a resume, in this order:
 * sent as doubles, encoded, on the wire; received the same three. */
#define CHECKPOINT_TRAFFIC 6

struct checkpoint {
    int64_t iteration, epoch;
    uint64_t round;
    double elapsed;
    uint64_t history_bytes, answers_bytes, iterates_bytes;
    uint64_t answers; /* answers absorbed up to it, from the start */
    uint64_t traffic[CHECKPOINT_TRAFFIC]; /* bytes, from the start */
    size_t query_len;
    double *query;
    size_t state_len;
    void *state;
};

/* Write c to path atomically.  0 or -1 with err. */
int checkpoint_write(const char *path, const struct checkpoint_id *identity,
                     const struct checkpoint *c, struct aia_error *err);

/* Read path into c (owned: checkpoint_free), refusing a file of another
 * layout, ABI or job (identity: the message names the parts that
 * differ), a damaged one (checksum, length), one whose query is not
 * query_len long or one whose fields are out of bounds (a negative or
 * huge count, a time that is not a finite number of seconds, a file size
 * of more than CHECKPOINT_MAX_BYTES).  0 or -1 with err naming the file
 * and the reason. */
int checkpoint_read(const char *path, const struct checkpoint_id *identity,
                    size_t query_len, struct checkpoint *c,
                    struct aia_error *err);

/* checkpoint_read on the len bytes at p, read from path. */
int checkpoint_parse(const char *path, const void *p, size_t len,
                     const struct checkpoint_id *identity, size_t query_len,
                     struct checkpoint *c, struct aia_error *err);

void checkpoint_free(struct checkpoint *c);

/* A state written by coordinator ranks (pool.shards): the count of ranks
 * (uint64), each rank's length (uint64), then each rank's state, in rank
 * order.  checkpoint_shards reads c's as ranks states: each rank's offset
 * in c->state into off[rank] and its length into len[rank], 0; or -1 with
 * err naming what is out of bounds (another count of ranks, a length past
 * what is left of the states or past what a message carries (2^31 - 1),
 * lengths that do not fill them). */
#define CHECKPOINT_SHARD_MAX 2147483647ull
size_t checkpoint_shards_head(int ranks);
int checkpoint_shards(const struct checkpoint *c, int ranks, size_t *off,
                      size_t *len, struct aia_error *err);

/* Take the lock of the checkpoint at path for as long as this run writes
 * or resumes from it: an advisory flock on PATH.lock (the checkpoint
 * itself is replaced by a rename at each write, so it cannot hold one).
 * Returns the lock's descriptor, or -1 with err set, naming the file,
 * when another run holds it or it cannot be made. */
int checkpoint_lock(const char *path, struct aia_error *err);

/* Remove PATH.lock and release the lock fd (from checkpoint_lock). */
void checkpoint_unlock(const char *path, int fd);

/* Mix bytes into an FNV-1a hash (start with CHECKPOINT_HASH0). */
#define CHECKPOINT_HASH0 0xcbf29ce484222325ull
uint64_t checkpoint_hash(uint64_t h, const void *p, size_t n);

#endif
