/* host_rules.c - the rules of the services table (see host_rules.h): the
 * runtime's host and the test host hand plugins these very functions. */
#include <config.h>

#include "host_rules.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t host_rules_partition_first(const struct aia_host *host,
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
int host_rules_partition_owner(const struct aia_host *host,
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
        if (host_rules_partition_first(host, part, m, mid) <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int host_rules_auto_step(const struct aia_host *host,
                         const struct aia_context *ctx,
                         const struct aia_value *v, double scale,
                         const char *rule, double *step, struct aia_error *err)
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
            snprintf(why, sizeof why, "%s %s", v->given ? "given" : "default",
                     v->name);
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
double host_rules_age_factor(const struct aia_host *host, double rows,
                             double age_rows, double recent_rows, double most)
{
    (void)host;
    if (!(rows > 0) || recent_rows > rows / 2)
        return 1.0;
    double a = age_rows / rows;
    return a > most ? most / a : 1.0;
}

static double step_ = NAN;
static char step_why_[AIA_ERROR_LEN];

void host_rules_note_step(double step, const char *why)
{
    step_ = step;
    snprintf(step_why_, sizeof step_why_, "%s", why ? why : "");
}

double host_rules_step(const char **why)
{
    if (why)
        *why = step_why_;
    return step_;
}

static struct {
    char key[16];
    char text[1024];
} notes_[HOST_RULES_NOTES];
static int nnotes_;

char *host_rules_note_slot(const char *key, size_t *len)
{
    int i;
    for (i = 0; i < nnotes_; i++)
        if (!strncmp(notes_[i].key, key, sizeof notes_[i].key - 1))
            break;
    if (i == HOST_RULES_NOTES)
        return NULL;
    if (i == nnotes_) {
        nnotes_++;
        snprintf(notes_[i].key, sizeof notes_[i].key, "%s", key);
    }
    *len = sizeof notes_[i].text;
    return notes_[i].text;
}

const char *host_rules_note(int i, const char **key)
{
    if (i < 0 || i >= nnotes_)
        return NULL;
    *key = notes_[i].key;
    return notes_[i].text;
}
