/* latency.c - the latency models of --simulate: links, compute per row,
 * the stragglers section read as virtual delays, the DSAG trace model,
 * and the simulate section's checks. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "sim/latency.h"
#include "tap.h"

static struct job *load(const char *text, struct aia_error *err)
{
    return job_load("dir/job.yaml", text, strlen(text), NULL, err);
}

#define BASE                                                                   \
    "algorithm: {plugin: gd}\nproblem: {plugin: lrmse}\n"                      \
    "stop: {iterations: 3}\n"

static void links_and_rows(void)
{
    struct aia_error err;
    struct job *job = load(BASE "simulate: {row_us: 2, latency_us: 100, "
                                "bandwidth_mbps: 8}\n"
                                "stragglers: {fixed: {ranks: [2], "
                                "delay_ms: [5]}}\n",
                           &err);
    if (!ok(job != NULL, "a simulate section loads"))
        diag("%s", err.text);
    if (!job)
        return;
    struct latency l;
    struct latency_draw d;
    latency_init(&l, job, 0, 1, 1000, job->simulate.row_s);
    latency_next(&l, 1000, 2000, 1.0, &d);
    is_double(d.down, 100e-6 + 1e-3, 1e-15,
              "down: latency + 1000 bytes at 8 Mbit/s");
    is_double(d.up, 100e-6 + 2e-3, 1e-15, "up: the answer's bytes");
    is_double(d.compute, 2e-3, 1e-15, "compute: 2 us a row, 1000 rows");
    latency_next(&l, 1000, 2000, 0.1, &d);
    is_double(d.compute, 2e-4, 1e-15, "a step that reads 100 of them: 0.2 ms");
    is_double(d.delay, 0, 0, "worker 0 (rank 1) is not a straggler");
    latency_init(&l, job, 1, 2, 500, job->simulate.row_s);
    latency_next(&l, 0, 0, 1.0, &d);
    is_double(d.delay, 5e-3, 1e-15,
              "worker 1 of rank 2: its fixed delay, as under mpirun");
    latency_init(&l, job, 0, 2, 500, job->simulate.row_s);
    latency_next(&l, 0, 0, 1.0, &d);
    is_double(d.delay, 5e-3, 1e-15,
              "the delays follow the rank (pool.workers), not the index");
    is_double(d.compute, 1e-3, 1e-15, "its own rows");
    job_free(job);

    job = load(BASE "stragglers: {link_mbps: 16}\n", &err);
    latency_init(&l, job, 0, 1, 10, job->simulate.row_s);
    is_double(latency_trip(&l, 2000), 50e-6 + 1e-3, 1e-15,
              "no bandwidth: stragglers.link_mbps's, default latency 50 us");
    job_free(job);

    job = load(BASE "stragglers: {hang: {ranks: [1], after: 1}}\n", &err);
    latency_init(&l, job, 0, 1, 10, job->simulate.row_s);
    latency_next(&l, 0, 0, 1.0, &d);
    ok(isfinite(d.delay), "a hanging worker answers first 'after' times");
    latency_next(&l, 0, 0, 1.0, &d);
    ok(isinf(d.delay), "then its answer never arrives");
    job_free(job);

    job = load(BASE "stragglers: {corrupt: {ranks: [1], after: 1}}\n", &err);
    latency_init(&l, job, 0, 1, 10, job->simulate.row_s);
    latency_next(&l, 0, 0, 1.0, &d);
    ok(!d.corrupt, "a corrupting worker answers well 'after' times");
    latency_next(&l, 0, 0, 1.0, &d);
    ok(d.corrupt, "then malformed");
    job_free(job);
}

static void same_as_straggle(void)
{
    struct aia_error err;
    struct job *job = load(BASE "stragglers: {markov: {p_slow: 0.1, "
                                "p_fast: 0.3, delay_ms: 7}, random: "
                                "{probability: 0.2, delay_ms: 3}}\n",
                           &err);
    struct latency l;
    struct straggle s;
    latency_init(&l, job, 2, 3, 10, 0);
    straggle_init(&s, &job->stragglers, job->seed, 3);
    int same = 1, delayed = 0;
    for (int i = 0; i < 1000; i++) {
        struct latency_draw d;
        latency_next(&l, 8, 8, 1.0, &d);
        double want = straggle_next(&s);
        same &= d.delay == want;
        delayed += d.delay > 0;
    }
    ok(same && delayed > 100,
       "the delays are the stragglers section's draws for rank w+1 (%d "
       "delayed)",
       delayed);
    job_free(job);
}

static void gamma_moments(void)
{
    struct aia_rng g;
    aia_rng_seed(&g, 5, 1);
    const double shapes[] = {0.5, 2, 100};
    for (int k = 0; k < 3; k++) {
        struct latency_gamma d = latency_gamma_of(3.0, 1 / sqrt(shapes[k]));
        double s = 0, s2 = 0;
        int n = 200000;
        for (int i = 0; i < n; i++) {
            double x = latency_gamma_draw(&g, d);
            s += x;
            s2 += x * x;
        }
        double mean = s / n, var = s2 / n - mean * mean;
        ok(fabs(mean - 3) < 0.03 && fabs(var / (9 / shapes[k]) - 1) < 0.05,
           "gamma, shape %g: mean 3 (%.4f), variance 9/shape (%.4f)", shapes[k],
           mean, var);
    }
    double s = 0;
    int n = 200000;
    for (int i = 0; i < n; i++)
        s += latency_lognormal(&g, 2.0, 0.5);
    is_double(s / n, 2.0, 0.02, "log-normal: the mean given");
}

static void dsag(void)
{
    struct aia_error err;
    struct job *job = load(BASE "simulate: {compute: dsag, dsag: "
                                "{compute_ms: 10, compute_spread: 0.5, "
                                "compute_cv: 0.2, p_slow: 0.05, p_fast: 0.25,"
                                " slow_factor: 5}}\n",
                           &err);
    if (!ok(job != NULL, "a dsag section loads"))
        diag("%s", err.text);
    if (!job)
        return;
    /* the workers' means spread log-normally around 10 ms */
    double sum = 0, lo = INFINITY, hi = 0;
    int workers = 400;
    for (int w = 0; w < workers; w++) {
        struct latency l;
        latency_init(&l, job, w, w + 1, 10, 0);
        double m = l.comp.shape * l.comp.scale;
        sum += m;
        lo = fmin(lo, m);
        hi = fmax(hi, m);
    }
    ok(fabs(sum / workers - 0.010) < 0.001 && hi / lo > 4,
       "workers' means: mean 10 ms (%.2f ms), spread %.1fx",
       sum / workers * 1e3, hi / lo);
    /* one worker's times: bursts take 1/(1+p_fast/p_slow) of answers */
    struct latency l;
    latency_init(&l, job, 7, 8, 10, 0);
    double mean = l.comp.shape * l.comp.scale;
    int slow = 0, n = 100000;
    for (int i = 0; i < n; i++) {
        struct latency_draw d;
        latency_next(&l, 0, 0, 1.0, &d);
        slow += l.slow;
        if (d.compute <= 0 || !isfinite(d.compute))
            break;
    }
    is_double((double)slow / n, 0.05 / 0.30, 0.02,
              "bursts: p_slow/(p_slow+p_fast) of the answers");
    struct latency a, b;
    latency_init(&a, job, 7, 8, 10, 0);
    latency_init(&b, job, 7, 8, 10, 0);
    int same = 1;
    for (int i = 0; i < 1000; i++) {
        struct latency_draw x, y;
        latency_next(&a, 0, 0, 1.0, &x);
        latency_next(&b, 0, 0, 1.0, &y);
        same &= x.down == y.down && x.compute == y.compute &&
                x.delay == y.delay && x.up == y.up && x.corrupt == y.corrupt;
    }
    ok(same, "the same worker and seed draw the same times");
    /* a step that reads a quarter of the rows (a sub-partition, a batch)
     * takes a quarter of the time, burst or not, the same draws */
    latency_init(&a, job, 7, 8, 10, 0);
    latency_init(&b, job, 7, 8, 10, 0);
    int quarter = 1;
    for (int i = 0; i < 1000; i++) {
        struct latency_draw x, y;
        latency_next(&a, 0, 0, 1.0, &x);
        latency_next(&b, 0, 0, 0.25, &y);
        quarter &= y.compute == 0.25 * x.compute && x.up == y.up &&
                   x.delay == y.delay;
    }
    ok(quarter, "dsag: a quarter of the rows, a quarter of the compute");
    ok(mean > 0, "worker 7's mean compute is %.3f ms", mean * 1e3);
    job_free(job);
}

static void refusals(void)
{
    struct aia_error err;
    struct job *job = load(BASE "simulate: {compute: dsag}\n", &err);
    ok(!job, "dsag without its section is refused");
    like(err.text, "dir/job.yaml:4:", "naming the file and line");
    like(err.text, "simulate.compute: dsag needs", "and the key");
    job = load(BASE "simulate: {dsag: {compute_ms: 1}}\n", &err);
    ok(!job, "a dsag section with another compute is refused");
    like(err.text, "simulate.dsag: the model is used only", "saying why");
    job = load(BASE "simulate: {row_us: -1}\n", &err);
    ok(!job, "a negative row time is refused");
    like(err.text, "row_us", "naming the key");
    job = load(BASE "simulate: {speed: 1}\n", &err);
    ok(!job, "an unknown key is refused");
    like(err.text, "speed", "naming it");
}

int main(void)
{
    plan(0);
    links_and_rows();
    same_as_straggle();
    gamma_moments();
    dsag();
    refusals();
    return done_testing();
}
