/* stats.c - latency histograms and per-worker counts. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "tap.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
    return done_testing();
}
