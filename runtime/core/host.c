/* host.c - diagnostics and the services table for plugins.  The table's
 * rules that the runtime and plugins must agree on (which rows a part
 * holds) or that a fix should reach plugins already built (a step derived
 * from L, a gradient table's age factor) are host_rules.c's, shared with
 * the test host: plugins reach them through the table, never compile
 * their own copy. */
#include <config.h>

#include "host.h"
#include "host_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static int host_rank_ = -1;
static int verbosity_ = AIA_LOG_WARN;
static int progress_ = HOST_PROGRESS_AUTO;

static void vlog(int level, const char *fmt, va_list ap)
{
    if (level > verbosity_)
        return;
    char raw[1024], line[1024];
    vsnprintf(raw, sizeof raw, fmt, ap);
    /* texts from plugins and paths from users: no control characters */
    util_shown(line, sizeof line, raw, sizeof raw);
    /* One write per line, so lines of different ranks do not mix. */
    if (host_rank_ >= 0)
        fprintf(stderr, "aiarun[%d]: %s\n", host_rank_, line);
    else
        fprintf(stderr, "aiarun: %s\n", line);
    fflush(stderr);
}

static void plugin_log(const struct aia_host *host, int level,
                       const char *fmt, ...)
{
    (void)host;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

static double plugin_now(const struct aia_host *host)
{
    (void)host;
    return util_now();
}

static void plugin_note_step(const struct aia_host *host, double step,
                             const char *why)
{
    (void)host;
    host_rules_note_step(step, why);
}

double host_step(const char **why)
{
    return host_rules_step(why);
}

/* A report line, its control characters shown escaped. */
static void plugin_note(const struct aia_host *host, const char *key,
                        const char *text)
{
    (void)host;
    size_t len;
    char *t = host_rules_note_slot(key, &len);
    if (!text)
        text = "";
    if (t)
        util_shown(t, len, text, strlen(text) + 1);
}

const char *host_note(int i, const char **key)
{
    return host_rules_note(i, key);
}

static const struct aia_host table = {
    .size = sizeof(struct aia_host),
    .abi = AIA_ABI_VERSION,
    .log = plugin_log,
    .now = plugin_now,
    .note_step = plugin_note_step,
    .partition_owner = host_rules_partition_owner,
    .partition_first = host_rules_partition_first,
    .auto_step = host_rules_auto_step,
    .age_factor = host_rules_age_factor,
    .note = plugin_note,
};

void host_setup(int rank, int verbosity)
{
    host_rank_ = rank;
    verbosity_ = verbosity;
}

const struct aia_host *host_get(void)
{
    return &table;
}

void host_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void host_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(AIA_LOG_ERROR, fmt, ap);
    va_end(ap);
}

int host_verbosity(void)
{
    return verbosity_;
}

int host_rank(void)
{
    return host_rank_;
}

void host_set_progress(int mode)
{
    progress_ = mode;
}

int host_progress(void)
{
    return progress_;
}
