/* testhost.h - a host for testing a plugin without the runtime: a test
 * program dlopens the plugin, fills a context with aia_test_context and
 * calls the plugin's functions as aiarun would, without MPI.
 *
 * The host's rules (which rows a part holds, the derived step, a gradient
 * table's age factor) are the runtime's own code, compiled into the
 * library, so a plugin meets under test the rules it meets in a run.  A
 * context without a host gives aia_partition_owner no rule: it answers -1
 * and a part holds no row, so a check over the part's rows passes over
 * nothing.  Declarations only: link the library.
 *
 *     cc test.c $(pkg-config --cflags --libs aiarun-testhost) -ldl
 */
#ifndef AIARUN_TESTHOST_H
#define AIARUN_TESTHOST_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The host (static storage): log writes "aiarun-test: " lines on stderr
 * up to the level aia_test_verbosity sets (AIA_LOG_WARN at first); now is
 * a monotonic clock; note_step and note are kept for aia_test_step and
 * aia_test_note. */
const struct aia_host *aia_test_host(void);

/* Fill *ctx as the runtime fills it on the coordinator (role
 * AIA_ROLE_COORDINATOR, worker -1, rank 0) or on a worker (worker 0 ..
 * nworkers-1 at rank worker + 1): its size, the test host, the pool's
 * ranks 1 .. nworkers (up to 4096 workers; NULL past), jobdir ".".  No
 * data, facts or problem: set them after.  0, or -1 when the role or
 * worker is out of range. */
int aia_test_context(struct aia_context *ctx, int role, int worker,
                     int nworkers, uint64_t seed, const struct aia_value *args);

/* Rows of m that part holds by the runtime's rule: m for AIA_PART_ALL.
 * Compare a plugin's rows() with it; a check over zero rows is no
 * check. */
size_t aia_test_rows(const struct aia_partition *part, size_t m);

/* The step last noted (aia_note_step) and why; NaN when none. */
double aia_test_step(const char **why);

/* The text last noted under key (aia_note); NULL when none. */
const char *aia_test_note(const char *key);

/* Log lines up to this level are written (AIA_LOG_*). */
void aia_test_verbosity(int level);

#ifdef __cplusplus
}
#endif

#endif
