/* sgd.c - the SGD algorithm plugin, driven by hand over lrmse: the
 * update rule under each step schedule, momentum and staleness scaling,
 * and convergence with fresh, stale and mini-batch gradients and on
 * uneven parts.  The table of latest answers (update: table) and
 * momentum applied once a round: t/sgd-table.c. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "algtest.h"
#include "plugtest.h"
#include "sgdtest.h"
#include "tap.h"

static const struct aia_algorithm_plugin *alg;

static void open_rank(struct rank *r, int rank, const struct aia_value *args)
{
    struct aia_error err;
    struct aia_partition part = {rank == 0 ? AIA_PART_ALL : rank - 1, W,
                                 AIA_PART_BLOCK, 0, NULL};
    int role = rank == 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER;
    struct aia_context ctx = plugtest_ctx(Pb.args, role, rank, W, 11);
    if (prob->open(&ctx, &part, &r->prob, &err) < 0)
        bail_out("open: %s", err.text);
    ctx.args = args;
    ctx.problem = prob;
    ctx.problem_state = r->prob;
    struct aia_shape shape;
    if (alg->create(&ctx, &shape, &r->alg, &err) < 0)
        bail_out("create: %s", err.text);
    if (shape.query_len != N || shape.answer_len != N)
        bail_out("sgd's messages are not the model's size");
}

static void close_rank(struct rank *r)
{
    alg->destroy(r->alg);
    prob->close(r->prob);
}

static double gap(struct rank *c, const double *x)
{
    double f, fs, xs[N];
    struct aia_error err;
    prob->loss(c->prob, x, &f, &err);
    prob->optimum(c->prob, xs, &fs, &err);
    return (f - fs) / fs;
}

/* Run rounds; worker `late` answers the query of `lag` rounds before. */
static double run(const struct aia_value *args, int rounds, int late,
                  int lag)
{
    struct rank r[W + 1];
    for (int i = 0; i <= W; i++)
        open_rank(&r[i], i, args);
    double hist[64][N], a[N];
    struct aia_error err;
    alg->init(r[0].alg, hist[0], &err);
    for (int t = 0; t < rounds; t++) {
        for (int w = 1; w <= W; w++) {
            int back = w == late ? lag : 0;
            const double *q = hist[(t - (back > t ? t : back)) % 64];
            struct aia_step step = {.round = (uint64_t)t + 1};
            if (alg->worker(r[w].alg, q, a, &step, &err) < 0)
                bail_out("worker: %s", err.text);
            struct aia_answer_info info = {.rank = w, .worker = w - 1};
            alg->absorb(r[0].alg, a, &info, &err);
        }
        alg->query(r[0].alg, hist[(t + 1) % 64], &err);
    }
    double g = gap(&r[0], hist[rounds % 64]);
    for (int i = 0; i <= W; i++)
        close_rank(&r[i]);
    return g;
}

/* Absorb g in round round, sent staleness rounds before, then end the
 * round: the new query, which is the iterate. */
static const double *step_with(struct algtest *t, const double *g,
                               uint64_t round, uint64_t staleness)
{
    struct aia_error err;
    struct aia_answer_info info = {.rank = 1,
                                   .worker = 0,
                                   .round = round,
                                   .sent_round = round - staleness,
                                   .staleness = staleness,
                                   .rows = 200,
                                   .total_rows = 800};
    if (t->alg->absorb(t->as[0], g, &info, &err) < 0)
        bail_out("absorb: %s", err.text);
    algtest_end_round(t);
    return algtest_query(t, t->round);
}

static void update_rules(void)
{
    struct algtest t;
    double g[N];
    for (int j = 0; j < N; j++)
        g[j] = j - 3;

    coordinator(&t, "{step: 0.5, staleness_scaling: false}");
    ok(is_multiple(step_with(&t, g, 400, 3), -0.5, g),
       "constant: the step ignores the round and, by default, staleness");
    coordinator_close(&t);

    coordinator(&t, "{step: 0.5, schedule: invsqrt}");
    ok(is_multiple(step_with(&t, g, 4, 0), -0.25, g),
       "invsqrt: in round 4 the step is step / 2");
    ok(is_multiple(step_with(&t, g, 16, 0), -0.375, g),
       "invsqrt: in round 16, step / 4");
    coordinator_close(&t);

    coordinator(&t, "{step: 1, schedule: step, decay: 0.5, "
                    "decay_every: 100}");
    ok(is_multiple(step_with(&t, g, 99, 0), -1, g),
       "step schedule: until round 99 the full step");
    ok(is_multiple(step_with(&t, g, 100, 0), -1.5, g),
       "step schedule: from round 100, step * decay");
    ok(is_multiple(step_with(&t, g, 250, 0), -1.75, g),
       "step schedule: in round 250, step * decay^2");
    coordinator_close(&t);

    coordinator(&t, "{step: 1, schedule: step}");
    ok(is_multiple(step_with(&t, g, 200, 0), -0.25, g),
       "step schedule: decay 0.5 every 100 rounds by default");
    coordinator_close(&t);

    coordinator(&t, "{step: 0.5, momentum: 0.5}");
    ok(is_multiple(step_with(&t, g, 1, 0), -0.5, g),
       "momentum: the first step is -step * g");
    ok(is_multiple(step_with(&t, g, 2, 0), -1.25, g),
       "momentum: then v <- beta v - step g, x <- x + v");
    ok(is_multiple(step_with(&t, g, 3, 0), -2.125, g), "momentum: and again");
    coordinator_close(&t);

    coordinator(&t, "{step: 1, staleness_scaling: true}");
    ok(is_multiple(step_with(&t, g, 10, 3), -0.25, g),
       "staleness scaling: an answer 3 rounds stale moves by step / 4");
    ok(is_multiple(step_with(&t, g, 11, 0), -1.25, g),
       "staleness scaling: a fresh one by the whole step");
    coordinator_close(&t);

    /* delay-adaptive: the full step up to the pool's size W = 4, then
     * step * W / staleness (rows 200 of 800 make the weight 1) */
    coordinator(&t, "{step: 1, staleness_scaling: adaptive}");
    ok(is_multiple(step_with(&t, g, 10, 4), -1, g),
       "adaptive: an answer 4 rounds stale, the pool's size, gets the step");
    ok(is_multiple(step_with(&t, g, 20, 16), -1.25, g),
       "adaptive: one 16 rounds stale gets step * 4 / 16");
    ok(is_multiple(step_with(&t, g, 40, 32), -1.375, g),
       "adaptive: one 32 rounds stale, step * 4 / 32");
    coordinator_close(&t);

    /* auto: 1/(2 W L) per answer, L combined from the workers' */
    coordinator(&t, "{}");
    double x1[N], L = t.facts.smoothness, worst = 0;
    memcpy(x1, step_with(&t, g, 1, 0), sizeof x1);
    for (int j = 0; j < N; j++)
        worst = tap_worst(worst, fabs(x1[j] + g[j] / (2 * W * L)));
    ok(L > 0 && worst < 1e-15, "auto: an answer moves x by g / (2 W L)");
    coordinator_close(&t);

    coordinator(&t, "{step: 1, schedule: invsqrt, staleness_scaling: true}");
    ok(is_multiple(step_with(&t, g, 16, 1), -0.125, g),
       "invsqrt and staleness scaling: step / sqrt(16) / 2");
    coordinator_close(&t);
}

/* One worker always 3 rounds stale, its steps scaled by 1/4: the iterates
 * settle where the scaled block gradients cancel, sum_i h_i g_i(x) = 0,
 * which is near the optimum but, with the blocks' optima apart, not at
 * it. */
static void stale_scaled(void)
{
    struct algtest t;
    struct aia_error err;
    coordinator(&t, "{step: 0.2, staleness_scaling: true}");
    algtest_rounds(&t, 150, 2, 3);
    const double *x = algtest_query(&t, t.round);
    double sum[N] = {0}, g[N], zero[N] = {0};
    for (int w = 0; w < W; w++) {
        double h = w == 2 ? 0.05 : 0.2;
        t.prob->gradient(t.ps[w + 1], x, NULL, 0, g, &err);
        for (int j = 0; j < N; j++)
            sum[j] += h * g[j];
    }
    double rest = algtest_maxdiff(sum, zero, N), gap = algtest_gap(&t);
    ok(rest < 1e-13,
       "staleness scaling with a worker 3 rounds stale settles where the "
       "block gradients with steps 0.2, 0.2, 0.05, 0.2 cancel (%.2g)",
       rest);
    ok(gap < 1e-3, "which is near the optimum (gap %.2g)", gap);
    coordinator_close(&t);
}

static void schedules_converge(void)
{
    double gap = converge("{step: 0.2, schedule: invsqrt}", 300, -1, 0);
    ok(fabs(gap) < 1e-12, "invsqrt converges to the optimum (gap %.2g)", gap);
    gap = converge("{step: 0.2, schedule: step, decay: 0.5, "
                   "decay_every: 40}",
                   200, -1, 0);
    ok(fabs(gap) < 1e-12, "the step schedule converges (gap %.2g)", gap);
    gap = converge("{step: 0.1, momentum: 0.5}", 100, -1, 0);
    ok(fabs(gap) < 1e-12, "momentum converges (gap %.2g)", gap);
    double plain = converge("{step: 0.02}", 30, -1, 0);
    gap = converge("{step: 0.02, momentum: 0.5}", 30, -1, 0);
    ok(gap < plain / 10,
       "with a small step, momentum gets closer in 30 rounds (gap %.2g, "
       "%.2g without)",
       gap, plain);
    stale_scaled();
    gap = converge("{step: 0.05, batch: 16, schedule: invsqrt}", 400, -1, 0);
    ok(gap < 0.01,
       "mini-batch SGD with invsqrt steps gets near the optimum (gap %.2g)",
       gap);
}

/* Uneven parts (4:2:1:1): weighted by rows, a round of answers is a step
 * along the whole gradient, so sgd reaches the optimum; with equal steps
 * the small parts weigh as much as the large and it settles elsewhere. */
static void uneven(void)
{
    const double weights[W] = {4, 2, 1, 1};
    double gaps[2];
    const char *yaml[2] = {"{step: 0.1}", "{step: 0.1, weighting: equal}"};
    for (int i = 0; i < 2; i++) {
        struct algtest t;
        plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml[i]);
        algtest_open(&t, &A, &Pb, W, weights, 11);
        algtest_rounds(&t, 300, -1, 0);
        gaps[i] = algtest_gap(&t);
        algtest_close(&t);
        plugtest_free(&A);
    }
    ok(gaps[0] < 1e-10,
       "weighting: rows on parts of 4:2:1:1 reaches the optimum (gap %.2g)",
       gaps[0]);
    ok(gaps[1] > 1e-4,
       "weighting: equal settles off it (gap %.2g)", gaps[1]);

    struct algtest t;
    coordinator(&t, "{step: 1}");
    double g[N];
    for (int j = 0; j < N; j++)
        g[j] = j + 1;
    struct aia_error err;
    struct aia_answer_info info = {.rank = 1, .round = 1, .sent_round = 1,
                                   .rows = 400, .total_rows = 800};
    t.alg->absorb(t.as[0], g, &info, &err);
    algtest_end_round(&t);
    ok(is_multiple(algtest_query(&t, t.round), -2.0, g),
       "a worker with half the rows of a pool of 4 moves by 4 * 1/2 * step");
    coordinator_close(&t);
}

int main(void)
{
    sgdtest_begin();
    plan(0);

    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, "{step: 0.5}");
    alg = (const void *)A.p->h;
    struct rank c;
    open_rank(&c, 0, A.args);
    double q[N], g[N];
    struct aia_error err;
    alg->init(c.alg, q, &err);
    double zero[N] = {0};
    ok(memcmp(q, zero, sizeof q) == 0, "the first query is the origin");
    for (int j = 0; j < N; j++)
        g[j] = j + 1;
    struct aia_answer_info info = {.rank = 1};
    alg->absorb(c.alg, g, &info, &err);
    alg->absorb(c.alg, g, &info, &err);
    alg->query(c.alg, q, &err);
    ok(q[0] == -1.0 && q[N - 1] == -(double)N,
       "each answer moves the iterate by -step * answer");
    close_rank(&c);
    plugtest_free(&A);

    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, "{step: 0.2}");
    double fresh = run(A.args, 60, 0, 0);
    ok(fresh < 1e-10,
       "with every worker fresh each round it converges like gradient "
       "descent (gap %.2g)",
       fresh);
    double stale = run(A.args, 60, 2, 2);
    ok(stale < 1e-8, "with one worker two rounds stale it converges too "
                     "(gap %.2g)",
       stale);
    double fresh8 = run(A.args, 8, 0, 0), stale8 = run(A.args, 8, 2, 2);
    ok(stale8 > fresh8, "but early on staleness costs progress (%.2g > %.2g)",
       stale8, fresh8);
    plugtest_free(&A);

    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, "{step: 0.05, batch: 16}");
    struct rank w1, w2;
    open_rank(&w1, 1, A.args);
    open_rank(&w2, 1, A.args);
    double x[N], a1[N], a2[N], full[N];
    for (int j = 0; j < N; j++)
        x[j] = 0.1 * j;
    struct aia_step step = {.round = 1};
    alg->worker(w1.alg, x, a1, &step, &err);
    alg->worker(w2.alg, x, a2, &step, &err);
    prob->gradient(w1.prob, x, NULL, 0, full, &err);
    ok(memcmp(a1, a2, sizeof a1) == 0,
       "mini-batches are drawn from the seed: the same on a rerun");
    double d = 0;
    for (int j = 0; j < N; j++)
        d = fmax(d, fabs(a1[j] - full[j]));
    ok(d > 1e-6, "a mini-batch gradient is not the full gradient");
    alg->worker(w1.alg, x, a2, &step, &err);
    ok(memcmp(a1, a2, sizeof a1) != 0, "successive batches differ");
    close_rank(&w1);
    close_rank(&w2);
    double mb = run(A.args, 60, 0, 0);
    ok(mb < 0.05, "mini-batch SGD gets near the optimum (gap %.2g)", mb);
    plugtest_free(&A);

    update_rules();
    schedules_converge();
    uneven();

    sgdtest_end();
    return done_testing();
}
