/* average.c - the aggregation and averaging plugin, driven by hand over
 * lrmse: local steps, the weighted average on known answers, latest and
 * delta memory giving the same queries, convergence, weights and
 * mini-batches, the staleness schemes, the weights check.  Delayed
 * exchange, preemption and checkpoints: t/average-state.c. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "algtest.h"
#include "avgtest.h"
#include "tap.h"

static void weights_checked(void)
{
    struct aia_error err;
    ok(create("{weights: [1, 2, 3]}", &err) < 0,
       "3 weights for a pool of 4 are refused");
    like(err.text, "weights: 3 weights for a pool of 4 workers",
         "with a message that says so (%s)", err.text);
    ok(create("{weights: [1, 2, 3, 4, 5]}", &err) < 0, "and so are 5");
    ok(create("{weights: [0, 0, 0, 0]}", &err) < 0,
       "weights that add up to 0 are refused");
    like(err.text, "add up to 0", "with a message that says so");
    ok(create("{weights: [0, 1, 0, 0]}", &err) == 0 && create("{}", &err) == 0,
       "4 weights, or none, are accepted");
}

static void local_steps(void)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.25, local_steps: 3, staleness: none}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    double x[N], y[N], g[N], ans[N];
    for (int j = 0; j < N; j++)
        x[j] = y[j] = 0.1 * j - 0.3;
    for (int k = 0; k < 3; k++) {
        t.prob->gradient(t.ps[2], y, NULL, 0, g, &err);
        for (int j = 0; j < N; j++)
            y[j] -= 0.25 * g[j];
    }
    struct aia_step step = {.round = 1};
    t.alg->worker(t.as[2], x, ans, &step, &err);
    ok(memcmp(ans, y, sizeof y) == 0,
       "a worker answers the model after local_steps steps of -step * its "
       "full gradient");
    algtest_close(&t);
    plugtest_free(&a);
}

/* The weighted average over known answers; in delta memory the answers
 * are the differences of the same models. */
static void averaging(const char *memory)
{
    struct plugtest a;
    struct algtest t;
    char yaml[80];
    snprintf(yaml, sizeof yaml, "{memory: %s, staleness: none}", memory);
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    int delta = strcmp(memory, "delta") == 0;
    double ma[N], mb[N], mc[N], d[N];
    for (int j = 0; j < N; j++) {
        ma[j] = j + 1;
        mb[j] = 2 - j;
        mc[j] = 3 * j - 4;
        d[j] = mc[j] - ma[j];
    }
    /* Small integers and quarters: every value below is exact. */
    give(&t, 0, 1, ma);
    give(&t, 2, 3, mb);
    algtest_end_round(&t);
    const double *q = algtest_query(&t, 2);
    int same = 1;
    for (int j = 0; j < N; j++)
        same = same && q[j] == 0.25 * ma[j] + 0.75 * mb[j];
    ok(same,
       "%s: the query is the average of the models heard from, weighted by "
       "rows (1 and 3 of 4)",
       memory);
    give(&t, 0, 1, delta ? d : mc);
    algtest_end_round(&t);
    q = algtest_query(&t, 3);
    same = 1;
    for (int j = 0; j < N; j++)
        same = same && q[j] == 0.25 * mc[j] + 0.75 * mb[j];
    ok(same,
       "%s: a new model replaces its worker's; the silent worker's latest "
       "one still counts",
       memory);
    algtest_close(&t);
    plugtest_free(&a);

    snprintf(yaml, sizeof yaml,
             "{memory: %s, weights: [1, 5, 7, 3], staleness: none}", memory);
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    give(&t, 0, 3, ma);
    give(&t, 3, 1, mb);
    algtest_end_round(&t);
    q = algtest_query(&t, 2);
    same = 1;
    for (int j = 0; j < N; j++)
        same = same && q[j] == (1 * ma[j] + 3 * mb[j]) / 4;
    ok(same, "%s: with weights, the job's weights count, not the rows", memory);
    algtest_close(&t);
    plugtest_free(&a);
}

static void delta_answers(void)
{
    struct plugtest la, da;
    struct algtest l, d;
    plugtest_load(&la, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.5, staleness: none}");
    plugtest_load(&da, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.5, memory: delta}");
    algtest_open(&l, &la, &Pb, W, NULL, 11);
    algtest_open(&d, &da, &Pb, W, NULL, 11);
    struct aia_error err;
    double x1[N], x2[N], l1[N], l2[N], d1[N], d2[N], want[N];
    for (int j = 0; j < N; j++) {
        x1[j] = 0.5 * j;
        x2[j] = 1 - 0.25 * j;
    }
    struct aia_step step = {.round = 1};
    l.alg->worker(l.as[1], x1, l1, &step, &err);
    d.alg->worker(d.as[1], x1, d1, &step, &err);
    l.alg->worker(l.as[1], x2, l2, &step, &err);
    d.alg->worker(d.as[1], x2, d2, &step, &err);
    for (int j = 0; j < N; j++)
        want[j] = l2[j] - l1[j];
    ok(memcmp(d1, l1, sizeof l1) == 0,
       "delta: a worker's first answer is its model");
    ok(memcmp(d2, want, sizeof want) == 0,
       "delta: then the difference from the model it sent before");
    algtest_close(&l);
    algtest_close(&d);
    plugtest_free(&la);
    plugtest_free(&da);
}

/* The same staged answers, fresh, stale and missing, to latest and delta:
 * the same queries up to rounding. */
static void latest_is_delta(void)
{
    struct plugtest la, da;
    struct algtest l, d;
    plugtest_load(&la, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.3, local_steps: 3, batch: 20, staleness: none}");
    plugtest_load(&da, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.3, local_steps: 3, batch: 20, memory: delta}");
    double weights[W] = {1, 2, 3, 4};
    algtest_open(&l, &la, &Pb, W, weights, 11);
    algtest_open(&d, &da, &Pb, W, weights, 11);
    double worst = 0;
    for (int k = 0; k < 60; k++) {
        for (int w = 0; w < W; w++) {
            if (k < 30 && (k + w) % 3 == 0)
                continue; /* missing from this round */
            uint64_t lag = w == 1 && l.round > 2 ? 2 : 0;
            algtest_answer(&l, w, l.round - lag);
            algtest_answer(&d, w, d.round - lag);
        }
        algtest_end_round(&l);
        algtest_end_round(&d);
        const double *ql = algtest_query(&l, l.round);
        const double *qd = algtest_query(&d, d.round);
        double scale = 0;
        for (int j = 0; j < N; j++)
            scale = fmax(scale, fabs(ql[j]));
        worst = tap_worst(worst, algtest_maxdiff(ql, qd, N) / scale);
    }
    ok(worst < 1e-13,
       "latest and delta memory give the same queries for the same "
       "answers, fresh, stale and missing (relative difference %.2g)",
       worst);
    algtest_close(&l);
    algtest_close(&d);
    plugtest_free(&la);
    plugtest_free(&da);
}

/* With one local step, the average of the workers' models is a step of
 * gradient descent on the whole problem. */
static void descent(const char *memory)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;
    char yaml[80];
    snprintf(yaml, sizeof yaml, "{step: 0.5, memory: %s}", memory);
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    double weights[W] = {1, 2, 3, 4};
    algtest_open(&t, &a, &Pb, W, weights, 11);
    double ref[N] = {0}, g[N], worst = 0;
    for (int k = 0; k < 40; k++) {
        algtest_rounds(&t, 1, -1, 0);
        t.prob->gradient(t.ps[0], ref, NULL, 0, g, &err);
        for (int j = 0; j < N; j++)
            ref[j] -= 0.5 * g[j];
        worst = tap_worst(
            worst, algtest_maxdiff(algtest_query(&t, t.round), ref, N));
    }
    ok(worst < 1e-12,
       "%s, one local step, uneven parts: every query is that of gradient "
       "descent on the whole problem (max difference %.2g)",
       memory, worst);
    algtest_rounds(&t, 60, -1, 0);
    double gap = algtest_gap(&t), dist = algtest_distance(&t);
    ok(fabs(gap) < 1e-12 && dist < 1e-9,
       "%s: it converges to the optimum (gap %.2g, distance %.2g)", memory, gap,
       dist);
    algtest_close(&t);

    algtest_open(&t, &a, &Pb, W, NULL, 11);
    algtest_rounds(&t, 150, 2, 2);
    gap = algtest_gap(&t);
    dist = algtest_distance(&t);
    ok(fabs(gap) < 1e-12 && dist < 1e-9,
       "%s: with one worker two rounds stale it converges too (gap %.2g, "
       "distance %.2g)",
       memory, gap, dist);
    algtest_close(&t);
    plugtest_free(&a);
}

/* staleness: decay and gd on known answers; gd against none with a
 * worker 8 rounds stale in every round. */
static void staleness(void)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;
    double ma[N], mb[N], mc[N];
    for (int j = 0; j < N; j++) {
        ma[j] = j + 1;
        mb[j] = 2 - j;
        mc[j] = 3 * j - 4;
    }
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{staleness: decay, decay: 0.5}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    algtest_end_round(&t);
    algtest_end_round(&t); /* round 3 */
    give_at(&t, 0, 1, ma, 3);
    give_at(&t, 2, 3, mb, 1); /* 2 rounds old: weight 3/4 * 0.5^2 */
    algtest_end_round(&t);
    const double *q = algtest_query(&t, 4);
    double worst = 0;
    for (int j = 0; j < N; j++)
        worst = tap_worst(worst, fabs(q[j] - (0.25 * ma[j] + 0.1875 * mb[j]) /
                                                 0.4375));
    ok(worst < 1e-15,
       "decay 0.5: a model 2 rounds old weighs its rows' share times 0.25 "
       "(off by %.2g)",
       worst);
    algtest_close(&t);
    plugtest_free(&a);

    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, "{step: 0.5}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    double x0[N], y[N], g[N], ans[N];
    memcpy(x0, algtest_query(&t, 1), sizeof x0);
    struct aia_step step = {.round = 1};
    t.alg->worker(t.as[2], x0, ans, &step, &err);
    t.prob->gradient(t.ps[2], x0, NULL, 0, g, &err);
    for (int j = 0; j < N; j++)
        y[j] = -0.5 * g[j];
    ok(algtest_maxdiff(ans, y, N) < 1e-15,
       "default (gd): a worker answers its progress from the query, "
       "-step * its gradient");
    give_at(&t, 0, 1, ma, 1);
    give_at(&t, 2, 3, mb, 1);
    algtest_end_round(&t);
    double x1[N];
    memcpy(x1, algtest_query(&t, 2), sizeof x1);
    worst = 0;
    for (int j = 0; j < N; j++)
        worst = tap_worst(worst, fabs(x1[j] - (x0[j] + 0.25 * ma[j] +
                                                0.75 * mb[j])));
    ok(worst < 1e-15, "gd: the query steps from the iterate by the "
                      "rows-weighted progress (off by %.2g)", worst);
    give_at(&t, 0, 1, mc, 2);
    algtest_end_round(&t);
    q = algtest_query(&t, 3);
    worst = 0;
    for (int j = 0; j < N; j++)
        worst = tap_worst(worst, fabs(q[j] - (x1[j] + 0.25 * mc[j] +
                                               0.75 * mb[j])));
    ok(worst < 1e-15, "gd: the silent worker's latest progress counts again, "
                      "from the new iterate (off by %.2g)", worst);
    algtest_close(&t);
    plugtest_free(&a);

    /* a persistent straggler: worker 3 answers every 10th round, the
     * query it was sent 10 rounds before, as in bench case 3, on a badly
     * conditioned problem (on a well-conditioned one every scheme gets
     * there at once) */
    struct plugtest pc;
    plugtest_load(&pc, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1, condition: 100}");
    double gap[3];
    static const char *const jobs[] = {"{}", "{staleness: none}",
                                       "{staleness: decay}"};
    for (int k = 0; k < 3; k++) {
        plugtest_load(&a, "average", AIA_KIND_ALGORITHM, jobs[k]);
        algtest_open(&t, &a, &pc, W, NULL, 11);
        for (int r = 0; r < 2000; r++) {
            for (int w = 0; w < 3; w++)
                algtest_answer(&t, w, t.round);
            if (r % 10 == 9)
                algtest_answer(&t, 3, t.round - 9);
            algtest_end_round(&t);
        }
        gap[k] = algtest_gap(&t);
        algtest_close(&t);
        plugtest_free(&a);
    }
    plugtest_free(&pc);
    diag("gaps after 2000 rounds: gd %.3g, none %.3g, decay %.3g", gap[0],
         gap[1], gap[2]);
    ok(fabs(gap[0]) < 1e-9,
       "default (gd), condition 100, a worker that answers every 10th "
       "round: it reaches the optimum in 2000 rounds (gap %.2g)",
       gap[0]);
    ok(gap[1] > 100 * fabs(gap[0]) && gap[2] > 100 * fabs(gap[0]),
       "where none and decay are still off (gap %.2g and %.2g)", gap[1],
       gap[2]);
    ok(create("{staleness: gd, memory: delta}", &err) < 0 &&
           strstr(err.text, "staleness: gd"),
       "staleness: gd with memory: delta is refused (%s)", err.text);
    ok(create("{staleness: gd, local_steps: 2, delay: 1}", &err) < 0,
       "staleness: gd with a delay is refused");
    ok(create("{staleness: decay, memory: delta}", &err) < 0 &&
           strstr(err.text, "staleness: decay"),
       "staleness: decay with memory: delta is refused (%s)", err.text);
    ok(create("{memory: delta}", &err) == 0 &&
           create("{local_steps: 2, delay: 1}", &err) == 0,
       "auto falls back to none with memory: delta or a delay");
}

static void variants(void)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;

    /* Each worker drifts toward its own optimum for local_steps steps:
     * the fixed point is near the optimum, not at it. */
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.2, local_steps: 5}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    algtest_rounds(&t, 100, -1, 0);
    double gap = algtest_gap(&t);
    ok(gap < 1e-3, "five local steps get near the optimum (gap %.2g)", gap);
    algtest_close(&t);
    plugtest_free(&a);

    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.5, weights: [1, 0, 0, 0]}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    algtest_rounds(&t, 100, -1, 0);
    double g[N], zero[N] = {0};
    t.prob->gradient(t.ps[1], algtest_query(&t, t.round), NULL, 0, g, &err);
    double d = algtest_maxdiff(g, zero, N);
    ok(d < 1e-12,
       "with weights [1, 0, 0, 0] it minimises worker 0's loss "
       "alone (gradient %.2g)",
       d);
    algtest_close(&t);
    plugtest_free(&a);

    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, "{step: 0.1, batch: 16}");
    struct algtest u;
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    algtest_open(&u, &a, &Pb, W, NULL, 11);
    double x[N], a1[N], a2[N], a3[N], full[N];
    for (int j = 0; j < N; j++)
        x[j] = 0.1 * j;
    struct aia_step step = {.round = 1};
    t.alg->worker(t.as[1], x, a1, &step, &err);
    u.alg->worker(u.as[1], x, a2, &step, &err);
    t.alg->worker(t.as[1], x, a3, &step, &err);
    t.prob->gradient(t.ps[1], x, NULL, 0, full, &err);
    for (int j = 0; j < N; j++)
        full[j] = x[j] - 0.1 * full[j];
    ok(memcmp(a1, a2, sizeof a1) == 0 && memcmp(a1, a3, sizeof a1) != 0,
       "mini-batches are drawn from the seed: the same on a rerun, new on "
       "each answer");
    ok(algtest_maxdiff(a1, full, N) > 1e-6,
       "a mini-batch step is not the full gradient step");
    algtest_close(&u);
    algtest_rounds(&t, 200, -1, 0);
    gap = algtest_gap(&t);
    ok(gap < 0.05, "mini-batch averaging gets near the optimum (gap %.2g)",
       gap);
    algtest_close(&t);
    plugtest_free(&a);
}

int main(void)
{
    avgtest_begin();
    plan(0);
    weights_checked();
    local_steps();
    averaging("latest");
    averaging("delta");
    delta_answers();
    latest_is_delta();
    descent("latest");
    descent("delta");
    variants();
    staleness();
    avgtest_end();
    return done_testing();
}
