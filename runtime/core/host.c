/* host.c - diagnostics and the services table for plugins, with the rules
 * that the runtime and plugins must agree on (which rows a part holds) or
 * that a fix should reach plugins already built (a step derived from L
 * and the words that explain it, a gradient table's age factor): plugins
 * reach them through the table, never compile their own copy. */
#include <config.h>

#include "host.h"

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

static double step_ = NAN;
static char step_why_[AIA_ERROR_LEN];

static void plugin_note_step(const struct aia_host *host, double step,
                             const char *why)
{
    (void)host;
    step_ = step;
    snprintf(step_why_, sizeof step_why_, "%s", why ? why : "");
}

double host_step(const char **why)
{
    if (why)
        *why = step_why_;
    return step_;
}

/* The plugins' report lines (aia_note), in the order their keys came. */
#define NOTES 8
static struct {
    char key[16];
    char text[1024];
} notes_[NOTES];
static int nnotes_;

static void plugin_note(const struct aia_host *host, const char *key,
                        const char *text)
{
    (void)host;
    int i;
    for (i = 0; i < nnotes_; i++)
        if (!strncmp(notes_[i].key, key, sizeof notes_[i].key - 1))
            break;
    if (i == NOTES)
        return;
    if (i == nnotes_) {
        nnotes_++;
        snprintf(notes_[i].key, sizeof notes_[i].key, "%s", key);
    }
    util_shown(notes_[i].text, sizeof notes_[i].text, text, strlen(text) + 1);
}

const char *host_note(int i, const char **key)
{
    if (i < 0 || i >= nnotes_)
        return NULL;
    *key = notes_[i].key;
    return notes_[i].text;
}

static size_t partition_first(const struct aia_host *host,
                              const struct aia_partition *part, size_t m,
                              int p)
{
    (void)host;
    if (p <= 0)
        return 0;
    if (p >= part->count)
        return m;
    if (!part->weights) {
        /* floor(m * p / count) without overflow: m = q * count + r */
        size_t c = (size_t)part->count;
        return m / c * (size_t)p + m % c * (size_t)p / c;
    }
    double total = 0, upto = 0;
    for (int i = 0; i < part->count; i++) {
        total += part->weights[i];
        if (i < p)
            upto += part->weights[i];
    }
    double f = (double)m * (upto / total);
    size_t r = (size_t)(f + 0.5);
    return r > m ? m : r;
}

/* Cyclic with weights places row r at frac(r * golden ratio), which is
 * equidistributed over [0, 1), and gives it to the part whose weighted
 * share holds that point: each part gets its share, spread over the
 * whole file. */
static int partition_owner(const struct aia_host *host,
                           const struct aia_partition *part, size_t m,
                           size_t r)
{
    if (part->count <= 0)
        return -1;
    if (part->scheme == AIA_PART_CYCLIC && !part->weights)
        return (int)(r % (size_t)part->count);
    size_t pos = r;
    if (part->scheme == AIA_PART_CYCLIC) {
        double u = (double)r * 0.6180339887498949;
        u -= floor(u);
        pos = (size_t)(u * (double)m);
        if (pos >= m)
            pos = m - 1;
    }
    int lo = 0, hi = part->count - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (partition_first(host, part, m, mid) <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int auto_step(const struct aia_host *host, const struct aia_context *ctx,
                     const struct aia_value *v, double scale, const char *rule,
                     double *step, struct aia_error *err)
{
    char why[AIA_ERROR_LEN];
    int has = AIA_HAS(struct aia_context, ctx, facts) && ctx->facts &&
              ctx->facts->size >= sizeof *ctx->facts;
    double L = has ? ctx->facts->smoothness : 0;
    if (!isnan(v->d)) {
        *step = v->d;
        if (L > 0)
            snprintf(why, sizeof why, "%s %s; auto would be %.6g",
                     v->given ? "given" : "default", v->name, scale / L);
        else
            snprintf(why, sizeof why, "%s %s",
                     v->given ? "given" : "default", v->name);
    } else {
        if (!(L > 0))
            return aia_seterr(err,
                              "%s: auto needs the problem's smoothness L, "
                              "which it does not give: set a number",
                              v->name);
        *step = scale / L;
        snprintf(why, sizeof why, "auto: %s, with L = %.6g from the problem",
                 rule, L);
    }
    if (ctx->role == AIA_ROLE_COORDINATOR)
        aia_note_step(host, *step, why);
    return 0;
}

/* See aia_table_age_factor (alg.h) for the rule and its reasons. */
static double age_factor(const struct aia_host *host, double rows,
                         double age_rows, double recent_rows, double most)
{
    (void)host;
    if (!(rows > 0) || recent_rows > rows / 2)
        return 1.0;
    double a = age_rows / rows;
    return a > most ? most / a : 1.0;
}

static const struct aia_host table = {
    .size = sizeof(struct aia_host),
    .abi = AIA_ABI_VERSION,
    .log = plugin_log,
    .now = plugin_now,
    .note_step = plugin_note_step,
    .partition_owner = partition_owner,
    .partition_first = partition_first,
    .auto_step = auto_step,
    .age_factor = age_factor,
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
