/* stats.c - latency histograms and per-worker counts. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/proto.h"
#include "core/stats.h"
#include "tap.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Past STATS_ALL answers a worker's latencies reach the buckets one in
 * STATS_SAMPLE at random: counts, means and extremes stay exact, the
 * quantiles close to the exact ones even for a periodic pattern, and the
 * table says so. */
static void sampled(void)
{
    static struct wstats w;
    enum { K = 40000 };
    double sum = 0;
    for (int i = 0; i < K; i++) {
        /* a saw tooth of period 1000: 1 us .. 1 ms */
        double rtt = (double)(i % 1000 + 1) * 1e-6;
        sum += rtt;
        stats_answer(&w, 0, rtt, rtt / 2, 0);
        if (i + 1 == STATS_ALL)
            is_int((long long)w.rtt.sampled, STATS_ALL,
                   "the first %d answers are all in the buckets", STATS_ALL);
    }
    is_int((long long)w.rtt.count, K, "every answer is counted");
    uint64_t want = STATS_ALL + (K - STATS_ALL) / STATS_SAMPLE;
    ok(w.rtt.sampled > want * 9 / 10 && w.rtt.sampled < want * 11 / 10,
       "then about 1 in %d (%llu, about %llu)", STATS_SAMPLE,
       (unsigned long long)w.rtt.sampled, (unsigned long long)want);
    is_double(hist_mean(&w.rtt), sum / K, 1e-12, "the mean is exact");
    is_double(w.rtt.max, 1e-3, 0, "and so is the largest");
    double p50 = hist_quantile(&w.rtt, 0.5), p99 = hist_quantile(&w.rtt, 0.99);
    ok(fabs(p50 / 500e-6 - 1) < 0.05, "p50 from the sample within 5%% (%g)",
       p50);
    ok(fabs(p99 / 990e-6 - 1) < 0.03, "p99 from the sample within 3%% (%g)",
       p99);
    ok(w.compute.sampled == w.rtt.sampled && w.comm.sampled == w.rtt.sampled,
       "the three histograms take the same answers");

    struct proto p;
    struct aia_error err;
    int ranks[1] = {1};
    if (proto_init(&p, 1, PROTO_ROUNDS, 0, ranks, &err) < 0)
        bail_out("proto_init: %s", err.text);
    char text[4096] = "";
    FILE *f = fmemopen(text, sizeof text - 1, "w");
    if (!f)
        bail_out("fmemopen");
    w.rank = 1;
    stats_table(f, &w, &p);
    fclose(f);
    char line[200];
    snprintf(line, sizeof line,
             "latency quantiles from a sample: each worker's first %d "
             "answers, then a random 1 in %d (%llu of %d answers)",
             STATS_ALL, STATS_SAMPLE, (unsigned long long)w.rtt.sampled, K);
    like(text, line, "the table says the quantiles are sampled, and how");
    static struct wstats few;
    few.rank = 1;
    stats_answer(&few, 0, 1e-3, 5e-4, 0);
    text[0] = '\0';
    f = fmemopen(text, sizeof text - 1, "w");
    stats_table(f, &few, &p);
    fclose(f);
    ok(strstr(text, "sample") == NULL, "and says nothing when they are not");
    proto_free(&p);
}

int main(void)
{
    plan(0);
    static struct hist h;
    enum { N = 20001 };
    static double v[N];
    struct aia_rng g;
    aia_rng_seed(&g, 1, 2);
    for (int i = 0; i < N; i++) {
        /* log-normal latencies around 1 ms, with a tail */
        v[i] = 1e-3 * exp(0.8 * aia_rng_normal(&g));
        hist_add(&h, v[i]);
    }
    qsort(v, N, sizeof *v, cmp);
    is_int((long long)h.count, N, "every value is counted");
    is_double(h.min, v[0], 0, "the minimum is exact");
    is_double(h.max, v[N - 1], 0, "the maximum is exact");
    double q[] = {0.5, 0.9, 0.99, 0.999};
    for (int i = 0; i < 4; i++) {
        double exact = v[(size_t)ceil(q[i] * N) - 1];
        double got = hist_quantile(&h, q[i]);
        ok(fabs(got - exact) / exact < 0.023,
           "quantile %g within 2.3%% (%.4g against %.4g)", q[i], got, exact);
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += v[i];
    is_double(hist_mean(&h), sum / N, 1e-12, "the mean is exact");

    static struct hist one;
    hist_add(&one, 0.05);
    is_double(hist_quantile(&one, 0.5), 0.05, 0, "one value is its own "
                                                 "median");
    static struct hist empty;
    is_double(hist_quantile(&empty, 0.5), 0, 0, "an empty histogram gives 0");
    static struct hist tiny;
    hist_add(&tiny, 0);
    hist_add(&tiny, 1e-12);
    ok(hist_quantile(&tiny, 0.5) <= 1e-12, "values below the floor stay "
                                           "bounded by the maximum");

    static struct wstats w;
    stats_answer(&w, 0, 1e-3, 5e-4, 0);
    stats_answer(&w, 3, 2e-3, 1.5e-3, 1e-3);
    stats_answer(&w, 40, 2e-3, 2.5e-3, 0);
    ok(w.answers == 3 && w.fresh == 1 && w.stale == 2, "fresh and stale "
                                                       "counts");
    is_int((long long)w.max_staleness, 40, "the largest staleness");
    ok(w.staleness[0] == 1 && w.staleness[3] == 1 &&
           w.staleness[STALENESS_BUCKETS - 1] == 1,
       "the staleness histogram, with an overflow bucket");
    is_double(w.comm.min, 0, 0, "communication never goes negative");
    is_double(w.delay, 1e-3, 1e-15, "injected delay is summed");
    sampled();
    return done_testing();
}
