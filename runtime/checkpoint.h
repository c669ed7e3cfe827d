/* checkpoint.h - the coordinator's state on disk, to resume a job.
 *
 * Layout (native byte order, as written): magic "AIACKPT1"; uint32 layout
 * version; uint32 plugin ABI; uint64 job identity; int64 iteration; int64
 * epoch; uint64 round; float64 seconds run; uint64 bytes of the history,
 * the answer log and the iterate file when it was written; uint64
 * query_len and the query's doubles; uint64 state_len and the algorithm's
 * state; uint64 FNV-1a checksum of everything before it.
 *
 * A checkpoint is written to PATH.tmp, synced, and renamed over PATH, so
 * PATH is always a whole checkpoint, old or new.
 */
#ifndef AIARUN_CHECKPOINT_H
#define AIARUN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

struct checkpoint {
    int64_t iteration, epoch;
    uint64_t round;
    double elapsed;
    uint64_t history_bytes, answers_bytes, iterates_bytes;
    size_t query_len;
    double *query;
    size_t state_len;
    void *state;
};

/* Write c to path atomically.  0 or -1 with err. */
int checkpoint_write(const char *path, uint64_t identity,
                     const struct checkpoint *c, struct aia_error *err);

/* Read path into c (owned: checkpoint_free), refusing a file of another
 * layout, ABI or job (identity), a damaged one (checksum, length) or one
 * whose query is not query_len long.  0 or -1 with err naming the file
 * and the reason. */
int checkpoint_read(const char *path, uint64_t identity, size_t query_len,
                    struct checkpoint *c, struct aia_error *err);

void checkpoint_free(struct checkpoint *c);

/* Mix bytes into an FNV-1a hash (start with CHECKPOINT_HASH0). */
#define CHECKPOINT_HASH0 0xcbf29ce484222325ull
uint64_t checkpoint_hash(uint64_t h, const void *p, size_t n);

#endif
