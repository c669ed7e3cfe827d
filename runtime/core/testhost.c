/* testhost.c - the host of <aiarun/testhost.h>, for testing a plugin
 * without the runtime.  Its rules are host_rules.c's, the runtime's own;
 * the rest (log, clock, the notes) is what a test can read back. */
#include <config.h>

#include <aiarun/testhost.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <aiarun/rows.h>

#include "host_rules.h"

static int verbosity_ = AIA_LOG_WARN;

static void test_log(const struct aia_host *host, int level, const char *fmt,
                     ...)
{
    (void)host;
    if (level > verbosity_)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "aiarun-test: %s\n", line);
}

static double test_now(const struct aia_host *host)
{
    (void)host;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_note_step(const struct aia_host *host, double step,
                           const char *why)
{
    (void)host;
    host_rules_note_step(step, why);
}

static void test_note(const struct aia_host *host, const char *key,
                      const char *text)
{
    (void)host;
    size_t len;
    char *t = host_rules_note_slot(key, &len);
    if (t)
        snprintf(t, len, "%s", text ? text : "");
}

static const struct aia_host table = {
    .size = sizeof(struct aia_host),
    .abi = AIA_ABI_VERSION,
    .log = test_log,
    .now = test_now,
    .note_step = test_note_step,
    .partition_owner = host_rules_partition_owner,
    .partition_first = host_rules_partition_first,
    .auto_step = host_rules_auto_step,
    .age_factor = host_rules_age_factor,
    .note = test_note,
};

const struct aia_host *aia_test_host(void)
{
    return &table;
}

#define RANKS 4096
static int ranks_[RANKS];

int aia_test_context(struct aia_context *ctx, int role, int worker,
                     int nworkers, uint64_t seed, const struct aia_value *args)
{
    int coord = role == AIA_ROLE_COORDINATOR;
    if (nworkers < 1 || (!coord && role != AIA_ROLE_WORKER) ||
        (coord ? worker != -1 : worker < 0 || worker >= nworkers))
        return -1;
    for (int w = 0; w < RANKS; w++)
        ranks_[w] = w + 1;
    memset(ctx, 0, sizeof *ctx);
    ctx->size = sizeof *ctx;
    ctx->role = (uint32_t)role;
    ctx->rank = coord ? 0 : worker + 1;
    ctx->worker = worker;
    ctx->nworkers = nworkers;
    ctx->seed = seed;
    ctx->args = args;
    ctx->jobdir = ".";
    ctx->host = &table;
    ctx->pool_ranks = nworkers <= RANKS ? ranks_ : NULL;
    return 0;
}

size_t aia_test_rows(const struct aia_partition *part, size_t m)
{
    return aia_owned_rows(&table, part, m, NULL);
}

double aia_test_step(const char **why)
{
    return host_rules_step(why);
}

const char *aia_test_note(const char *key)
{
    const char *k, *text;
    for (int i = 0; (text = host_rules_note(i, &k)); i++)
        if (!strncmp(k, key, 15)) /* the 15 characters a key keeps */
            return text;
    return NULL;
}

void aia_test_verbosity(int level)
{
    verbosity_ = level;
}
