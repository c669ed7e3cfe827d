/* gd.c - the synchronous gradient descent plugin, driven by hand over
 * lrmse: the update rule on known answers, exact gradient descent with
 * uneven parts, stale and missing answers. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/alg.h>

#include "algtest.h"
#include "core/host.h"
#include "tap.h"

#define W 4
#define N 8

static struct plugtest A, Pb;

/* The coordinator absorbs answer g as worker w's, holding rows rows. */
static int give(struct algtest *t, int w, size_t rows, const double *g,
                struct aia_error *err)
{
    return algtest_give(t, w, g, rows, 4, t->round, err);
}

static void update_rule(void)
{
    struct algtest t;
    struct aia_error err;
    double ga[N], gb[N], gc[N], want[N], x[N];
    algtest_open(&t, &A, &Pb, W, NULL, 11);
    const double *q = algtest_query(&t, 1);
    double zero[N] = {0};
    ok(memcmp(q, zero, sizeof zero) == 0, "the first query is the origin");

    double local[N];
    struct aia_step step = {.round = 1};
    t.alg->worker(t.as[2], q, x, &step, &err);
    t.prob->gradient(t.ps[2], q, NULL, 0, local, &err);
    ok(memcmp(x, local, sizeof x) == 0,
       "a worker answers the full gradient of its rows");

    /* Small integers and powers of two: every value below is exact. */
    for (int j = 0; j < N; j++) {
        ga[j] = j + 1;
        gb[j] = 2 - j;
        gc[j] = 3 * j - 4;
    }
    give(&t, 0, 1, ga, &err);
    give(&t, 2, 3, gb, &err);
    algtest_end_round(&t);
    q = algtest_query(&t, 2);
    int same = 1;
    for (int j = 0; j < N; j++) {
        want[j] = -0.5 * (1 * ga[j] + 3 * gb[j]) / 4;
        same = same && q[j] == want[j];
    }
    ok(same, "a round steps by -step * (sum rows_i g_i) / (sum rows_i) over "
             "the workers heard from");

    give(&t, 0, 1, gc, &err);
    algtest_end_round(&t);
    q = algtest_query(&t, 3);
    same = 1;
    for (int j = 0; j < N; j++) {
        want[j] -= 0.5 * (1 * gc[j] + 3 * gb[j]) / 4;
        same = same && q[j] == want[j];
    }
    ok(same, "a new answer replaces its worker's gradient; a silent worker's "
             "latest one is used again");

    ok(give(&t, W, 1, ga, &err) < 0, "an answer from outside the pool is "
                                     "refused");
    like(err.text, "worker 4 of a pool of 4", "and named");
    ok(give(&t, 1, 0, ga, &err) < 0 && strstr(err.text, "no rows"),
       "an answer that stands for no rows is refused");
    algtest_close(&t);
}

/* Rounds of gd against gradient descent on the full gradient computed
 * independently by the coordinator's view of the problem. */
static void exact_descent(const double *weights, const char *what)
{
    struct algtest t;
    struct aia_error err;
    double ref[N] = {0}, g[N];
    algtest_open(&t, &A, &Pb, W, weights, 11);
    double worst = 0;
    for (int k = 0; k < 40; k++) {
        algtest_rounds(&t, 1, -1, 0);
        t.prob->gradient(t.ps[0], ref, NULL, 0, g, &err);
        for (int j = 0; j < N; j++)
            ref[j] -= 0.5 * g[j];
        worst = tap_worst(
            worst, algtest_maxdiff(algtest_query(&t, t.round), ref, N) /
                       (1 + fabs(ref[0])));
    }
    ok(worst < 1e-13,
       "%s: every iterate is that of gradient descent on the whole problem "
       "(max difference %.2g)",
       what, worst);
    algtest_rounds(&t, 60, -1, 0);
    double gap = algtest_gap(&t), dist = algtest_distance(&t);
    ok(fabs(gap) < 1e-12 && dist < 1e-9,
       "%s: it converges to the optimum (gap %.2g, distance %.2g)", what, gap,
       dist);
    algtest_close(&t);
}

static void stale_and_partial(void)
{
    struct algtest t;
    algtest_open(&t, &A, &Pb, W, NULL, 11);
    algtest_rounds(&t, 150, 2, 2);
    double gap = algtest_gap(&t), dist = algtest_distance(&t);
    ok(fabs(gap) < 1e-12 && dist < 1e-9,
       "with one worker two rounds stale it converges (gap %.2g, distance "
       "%.2g)",
       gap, dist);
    algtest_close(&t);

    /* Half the pool answers each round, the halves in turn. */
    double weights[W] = {1, 3, 2, 2};
    algtest_open(&t, &A, &Pb, W, weights, 11);
    for (int k = 0; k < 300; k++) {
        for (int w = k % 2; w < W; w += 2)
            algtest_answer(&t, w, t.round);
        algtest_end_round(&t);
    }
    gap = algtest_gap(&t);
    dist = algtest_distance(&t);
    ok(fabs(gap) < 1e-12 && dist < 1e-9,
       "with half the workers each round and uneven parts it still "
       "converges to the optimum (gap %.2g, distance %.2g)",
       gap, dist);
    algtest_close(&t);
}

/* step: auto is 1/L, L combined from the workers' own; a step past the
 * stable bound 2/L diverges, one below it converges, which checks L
 * itself; and auto with no L is refused. */
static void auto_step(void)
{
    struct plugtest a, p, q;
    struct algtest t;
    struct aia_error err;
    plugtest_load(&p, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 400, cols: 6, noise: 0.1, condition: 100}");
    plugtest_load(&a, "gd", AIA_KIND_ALGORITHM, "{}");
    algtest_open(&t, &a, &p, W, NULL, 7);
    double L = t.facts.smoothness;
    ok(L > 0, "the workers' L is combined into the facts (%g)", L);
    double g[N], x1[N];
    t.prob->gradient(t.ps[0], algtest_query(&t, 1), NULL, 0, g, &err);
    algtest_rounds(&t, 1, -1, 0);
    memcpy(x1, algtest_query(&t, 2), sizeof x1);
    double worst = 0;
    for (int j = 0; j < N && j < 6; j++)
        worst = tap_worst(worst, fabs(x1[j] + g[j] / L));
    ok(worst < 1e-12, "auto: the first step is -g/L (off by %g)", worst);
    algtest_rounds(&t, 3000, -1, 0);
    ok(algtest_gap(&t) < 1e-6, "auto: 3000 rounds reach a gap of 1e-6 at "
                               "condition 100 (%g)",
       algtest_gap(&t));
    algtest_close(&t);
    plugtest_free(&a);

    char yaml[64];
    snprintf(yaml, sizeof yaml, "{step: %.17g}", 1.9 / L);
    plugtest_load(&a, "gd", AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, &p, W, NULL, 7);
    algtest_rounds(&t, 4000, -1, 0);
    ok(algtest_gap(&t) < 1e-3, "a step 1.9/L still converges: L is not "
                               "an underestimate (gap %g)",
       algtest_gap(&t));
    algtest_close(&t);
    plugtest_free(&a);
    snprintf(yaml, sizeof yaml, "{step: %.17g}", 2.1 / L);
    plugtest_load(&a, "gd", AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, &p, W, NULL, 7);
    algtest_rounds(&t, 400, -1, 0);
    ok(!(algtest_gap(&t) < 1e3), "a step 2.1/L diverges: L is not an "
                                 "overestimate (gap %g)",
       algtest_gap(&t));
    algtest_close(&t);
    plugtest_free(&a);

    /* no L known (a context without facts): create refuses auto */
    plugtest_load(&q, "lrmse", AIA_KIND_PROBLEM, "{rows: 40, cols: 3}");
    plugtest_load(&a, "gd", AIA_KIND_ALGORITHM, "{step: auto}");
    struct aia_context ctx;
    void *ps, *as = NULL;
    const struct aia_algorithm_plugin *gd =
        algtest_by_hand(&a, &q, W, 11, &ctx, &ps);
    struct aia_shape shape;
    ok(gd->create(&ctx, &shape, &as, &err) < 0,
       "auto without a known L is refused");
    like(err.text, "step: auto needs the problem's smoothness L",
         "with a message naming the key (%s)", err.text);
    ctx.problem->close(ps);
    plugtest_free(&a);
    plugtest_free(&q);
    plugtest_free(&p);
}

/* aia_table_step sums a block at a time (AIA_SUM_BLOCK values), with
 * vector loops where built with AIA_OMP_SIMD, as this test is: the result
 * is the plain loop's, to the bit, over lengths that are not a multiple
 * of the block, with an entry not filled yet. */
static void table_blocks(void)
{
    size_t dims[] = {1, AIA_SUM_BLOCK - 1, AIA_SUM_BLOCK,
                     2 * AIA_SUM_BLOCK + 37};
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        size_t dim = dims[k];
        struct aia_table t;
        double *g = malloc(dim * sizeof *g), *x = malloc(dim * sizeof *x),
               *want = malloc(dim * sizeof *want),
               *sum = calloc(dim, sizeof *sum);
        if (aia_table_init(&t, 4, dim) < 0 || !g || !x || !want || !sum)
            bail_out("out of memory");
        double rows[4] = {3, 0, 7, 1}, total = 0;
        struct aia_rng r = {0};
        aia_rng_seed(&r, 5, k);
        for (size_t e = 0; e < 4; e++) {
            for (size_t j = 0; j < dim; j++)
                g[j] = aia_rng_normal(&r) * 1e3;
            if (rows[e] > 0)
                aia_table_put(&t, e, g, rows[e], 1);
            /* the plain loop: entry by entry over the whole vector */
            for (size_t j = 0; rows[e] > 0 && j < dim; j++)
                sum[j] += rows[e] * g[j];
            total += rows[e];
        }
        for (size_t j = 0; j < dim; j++)
            x[j] = want[j] = 1.0 / (double)(j + 3);
        for (size_t j = 0; j < dim; j++)
            want[j] -= 0.3 * (sum[j] / total);
        double got = aia_table_step(&t, x, 0.3);
        ok(got == total && memcmp(x, want, dim * sizeof *x) == 0,
           "a step over %zu values in blocks of %d is the plain loop's, to "
           "the bit",
           dim, AIA_SUM_BLOCK);
        aia_table_free(&t);
        free(g);
        free(x);
        free(want);
        free(sum);
    }
    struct aia_table t;
    double x[3] = {1, 2, 3};
    if (aia_table_init(&t, 2, 3) < 0)
        bail_out("out of memory");
    ok(aia_table_step(&t, x, 0.5) == 0 && x[0] == 1 && x[2] == 3,
       "with no entry filled the step leaves x");
    aia_table_free(&t);
}

/* A running table (async mode: aia_table_add after every answer) keeps
 * its mean within 1e-12 of the mean summed afresh over a million
 * replacements of entries of every size of value, and its age factor is
 * the one found entry by entry (the host's rule over the same ages). */
static void running_sums(size_t E)
{
    enum { D = 5 };
    struct aia_table t, plain;
    double g[D];
    if (aia_table_init(&t, E, D) < 0 || aia_table_init(&plain, E, D) < 0)
        bail_out("out of memory");
    t.running = 1;
    struct aia_rng r = {0};
    aia_rng_seed(&r, 11, 0);
    double worst = 0;
    int factors_agree = 1, below_one = 0;
    uint64_t step = 1;
    const struct aia_host *host = host_get();
    for (long i = 0; i < 1000000; i++) {
        size_t e = (size_t)(aia_rng_uniform(&r) * E) % E;
        double scale = pow(10, (double)((i / 97) % 9) - 4);
        for (size_t j = 0; j < D; j++)
            g[j] = aia_rng_normal(&r) * scale;
        double rows = 1 + (double)(i % 5);
        /* answers to queries up to 5 steps old */
        uint64_t sent = step > 5 ? step - (uint64_t)(i % 6) : step;
        aia_table_heard(&t, step);
        aia_table_store(&t, e, g, rows, sent);
        if (i % 3 == 0)
            step++;
        if (i % 9973 != 0)
            continue;
        /* the same entries summed afresh, entry by entry */
        memcpy(plain.g, t.g, sizeof g * E);
        memcpy(plain.n, t.n, sizeof *t.n * E);
        memcpy(plain.when, t.when, sizeof *t.when * E);
        plain.now = t.now;
        double total = 0, sum[D] = {0};
        for (size_t k = 0; k < E; k++) {
            total += t.n[k];
            for (size_t j = 0; j < D; j++)
                sum[j] += t.n[k] * t.g[k * D + j];
        }
        for (size_t j = 0; j < D; j++) {
            double mean = sum[j] / total, got = t.sum[j] / t.total;
            double norm = 0;
            for (size_t k = 0; k < E; k++)
                norm += t.n[k] * fabs(t.g[k * D + j]);
            worst = tap_worst(worst, fabs(got - mean) / (norm / total));
        }
        for (double most = 0.5; most < 3; most *= 2) {
            double f = aia_table_age_factor(host, &t, most);
            factors_agree &= f == aia_table_age_factor(host, &plain, most);
            /* factors of 1 on both sides would agree whatever the sums */
            below_one += f < 1;
        }
    }
    ok(worst < 1e-12,
       "%zu entries: a running table's mean stays within 1e-12 (relative "
       "to the mean of |g|) of the mean summed afresh over 1e6 updates "
       "(worst %.3g)",
       E, worst);
    ok(factors_agree && below_one > 0,
       "%zu entries: its age factor from the running sums is the factor "
       "found entry by entry, at every check (%d of them below 1)",
       E, below_one);
    aia_table_free(&t);
    aia_table_free(&plain);
}

/* In async mode gd's table keeps running sums, summed afresh once every
 * AIA_TABLE_RESUM_MIN answers with 4 workers: a checkpoint holds them,
 * so that a run resumed between two sums afresh goes on to the bit. */
static void async_resume(void)
{
    struct algtest a, b;
    algtest_async = 1;
    algtest_open(&a, &A, &Pb, W, NULL, 7);
    algtest_open(&b, &A, &Pb, W, NULL, 7);
    size_t len = algtest_resume_async(&a, &b, 37, 50);
    size_t d = a.dim;
    ok(len == (d + W * (d + 2) + d + AIA_TABLE_SUMS_SCALARS) * sizeof(double),
       "async mode: the state is the iterate, the table and its running "
       "sums (%zu bytes)",
       len);
    /* the states saved again: the iterate, and the sums, whose last bits
     * a sum afresh at the load would change */
    ok(algtest_same_state(&a, &b),
       "async mode: resumed after 37 answers, the same iterate and running "
       "sums 50 answers later, to the bit");
    algtest_close(&a);
    algtest_close(&b);
    algtest_async = 0;
}

int main(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1}");
    plan(0);
    plugtest_load(&A, "gd", AIA_KIND_ALGORITHM, "{step: 0.5}");
    update_rule();
    exact_descent(NULL, "equal parts");
    double uneven[W] = {1, 2, 3, 4};
    exact_descent(uneven, "parts of 80, 160, 240 and 320 rows");
    stale_and_partial();
    auto_step();
    table_blocks();
    running_sums(1);
    running_sums(2);
    running_sums(64);
    /* a checkpoint: the iterate, every worker's gradient, rows and round */
    algtest_resume_check("gd", "{step: 0.5}", &Pb, W);
    async_resume();
    plugtest_free(&A);
    plugtest_free(&Pb);
    return done_testing();
}
