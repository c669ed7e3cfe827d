/* stats.c - per-worker counts, staleness and latency histograms. */
#include <config.h>

#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Buckets split each octave from HIST_FLOOR up into HIST_PER_OCTAVE equal
 * parts, read straight from a double's exponent and leading mantissa
 * bits: three of them an answer, no logarithm. */
#define HIST_FLOOR_EXP (-23) /* 2^-23 s (0.12 us): the bottom of bucket 0 */
#define HIST_SUB_BITS 5      /* log2(HIST_PER_OCTAVE) */

static int bucket_of(double s)
{
    if (!(s > 0x1p-23))
        return 0;
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    int64_t octave = (int64_t)((bits >> 52) & 0x7ff) - 1023 - HIST_FLOOR_EXP;
    if (octave >= HIST_OCTAVES)
        return HIST_BUCKETS - 1;
    int sub = (int)((bits >> (52 - HIST_SUB_BITS)) & (HIST_PER_OCTAVE - 1));
    return (int)octave * HIST_PER_OCTAVE + sub;
}

/* The middle of bucket b. */
static double bucket_mid(int b)
{
    int octave = b / HIST_PER_OCTAVE, sub = b % HIST_PER_OCTAVE;
    return ldexp(1.0 + (sub + 0.5) / HIST_PER_OCTAVE, octave + HIST_FLOOR_EXP);
}

static inline void note(struct hist *h, double seconds)
{
    if (!(seconds >= 0))
        seconds = 0;
    if (h->count == 0 || seconds < h->min)
        h->min = seconds;
    if (h->count == 0 || seconds > h->max)
        h->max = seconds;
    h->count++;
    h->sum += seconds;
}

void hist_add(struct hist *h, double seconds)
{
    note(h, seconds);
    h->sampled++;
    h->bucket[bucket_of(seconds > 0 ? seconds : 0)]++;
}

double hist_mean(const struct hist *h)
{
    return h->count ? h->sum / (double)h->count : 0;
}

double hist_quantile(const struct hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q <= 0)
        return h->min;
    if (q >= 1 || h->sampled == 0)
        return h->max;
    /* The smallest value with at least ceil(q * sampled) values at or
     * below it, as the nearest-rank definition has it. */
    uint64_t rank = (uint64_t)ceil(q * (double)h->sampled), seen = 0;
    for (int b = 0; b < HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            double v = bucket_mid(b);
            return v < h->min ? h->min : v > h->max ? h->max : v;
        }
    }
    return h->max;
}

void stats_answer(struct wstats *w, uint64_t staleness, double rtt,
                  double compute, double delay)
{
    w->answers++;
    if (staleness == 0)
        w->fresh++;
    else
        w->stale++;
    if (staleness > w->max_staleness)
        w->max_staleness = staleness;
    w->staleness[staleness < STALENESS_BUCKETS - 1 ? staleness
                                                   : STALENESS_BUCKETS - 1]++;
    w->delay += delay;
    double comm = rtt > compute ? rtt - compute : 0;
    int keep = w->answers <= STATS_ALL;
    if (!keep) {
        /* xorshift64, seeded by the rank: a uniform draw for a few
         * instructions */
        uint64_t x = w->draw ? w->draw
                             : 0x9e3779b97f4a7c15u ^ (uint64_t)w->rank;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w->draw = x;
        keep = (x >> 32 & (STATS_SAMPLE - 1)) == 0;
    }
    if (keep) {
        hist_add(&w->rtt, rtt);
        hist_add(&w->compute, compute);
        hist_add(&w->comm, comm);
    } else {
        note(&w->rtt, rtt);
        note(&w->compute, compute);
        note(&w->comm, comm);
    }
}

/* A duration for people: "850 us", "1.24 ms", "2.10 s". */
static const char *dur(char *buf, size_t len, double s)
{
    if (s < 1e-3)
        snprintf(buf, len, "%.0f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g s", s);
    return buf;
}

void stats_table(FILE *out, const struct wstats *w, const struct proto *p)
{
    int n = p->n;
    char a[24], b[24], c[24], d[24], e[24];
    fprintf(out, "%5s %8s %8s %8s %6s %5s %10s %10s %10s %10s %10s  %s\n",
            "rank", "answers", "fresh", "stale", "stale%", "max", "rtt p50",
            "rtt p99", "compute", "comm p50", "delay", "staleness");
    for (int i = 0; i < n; i++) {
        const struct wstats *s = &w[i];
        if (s->hidden)
            continue;
        char hist[160] = "";
        size_t used = 0;
        for (int k = 0; k < STALENESS_BUCKETS && used < sizeof hist - 24;
             k++)
            if (s->staleness[k])
                used += (size_t)snprintf(
                    hist + used, sizeof hist - used, "%s%d%s:%llu",
                    used ? " " : "", k, k == STALENESS_BUCKETS - 1 ? "+" : "",
                    (unsigned long long)s->staleness[k]);
        fprintf(out,
                "%5d %8llu %8llu %8llu %5.1f%% %5llu %10s %10s %10s %10s "
                "%10s  %s%s\n",
                s->rank, (unsigned long long)s->answers,
                (unsigned long long)s->fresh, (unsigned long long)s->stale,
                s->answers ? 100.0 * (double)s->stale / (double)s->answers
                           : 0.0,
                (unsigned long long)s->max_staleness,
                dur(a, sizeof a, hist_quantile(&s->rtt, 0.5)),
                dur(b, sizeof b, hist_quantile(&s->rtt, 0.99)),
                dur(c, sizeof c, hist_quantile(&s->compute, 0.5)),
                dur(d, sizeof d, hist_quantile(&s->comm, 0.5)),
                dur(e, sizeof e, s->delay), hist,
                proto_untrusted(p, i)     ? "  UNTRUSTED"
                : proto_lost_worker(p, i) ? "  DEAD"
                : s->unresponsive ? "  UNRESPONSIVE"
                                  : "");
    }
    uint64_t all = 0, kept = 0;
    for (int i = 0; i < n; i++)
        if (!w[i].hidden) {
            all += w[i].rtt.count;
            kept += w[i].rtt.sampled;
        }
    if (kept < all)
        fprintf(out,
                "latency quantiles from a sample: each worker's first %d "
                "answers, then a random 1 in %d (%llu of %llu answers); "
                "means and largest from all\n",
                STATS_ALL, STATS_SAMPLE, (unsigned long long)kept,
                (unsigned long long)all);
}

char *stats_csv(const struct wstats *w, int n, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    fprintf(f, "rank,queries,answers,fresh,stale,late,max_staleness,"
               "rtt_mean,rtt_p50,rtt_p90,rtt_p99,rtt_max,compute_mean,"
               "compute_p50,compute_p99,comm_mean,comm_p50,comm_p99,"
               "delay_total,unresponsive");
    for (int k = 0; k < STALENESS_BUCKETS; k++)
        fprintf(f, ",staleness_%d%s", k, k == STALENESS_BUCKETS - 1 ? "+" : "");
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        const struct wstats *s = &w[i];
        if (s->hidden)
            continue;
        fprintf(f, "%d,%llu,%llu,%llu,%llu,%llu,%llu", s->rank,
                (unsigned long long)s->queries,
                (unsigned long long)s->answers, (unsigned long long)s->fresh,
                (unsigned long long)s->stale, (unsigned long long)s->late,
                (unsigned long long)s->max_staleness);
        fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g", hist_mean(&s->rtt),
                hist_quantile(&s->rtt, 0.5), hist_quantile(&s->rtt, 0.9),
                hist_quantile(&s->rtt, 0.99), s->rtt.max);
        fprintf(f, ",%.9g,%.9g,%.9g", hist_mean(&s->compute),
                hist_quantile(&s->compute, 0.5),
                hist_quantile(&s->compute, 0.99));
        fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%d", hist_mean(&s->comm),
                hist_quantile(&s->comm, 0.5), hist_quantile(&s->comm, 0.99),
                s->delay, s->unresponsive);
        for (int k = 0; k < STALENESS_BUCKETS; k++)
            fprintf(f, ",%llu", (unsigned long long)s->staleness[k]);
        fputc('\n', f);
    }
    if (ferror(f) | (fclose(f) != 0)) {
        free(text);
        return NULL;
    }
    return text;
}
