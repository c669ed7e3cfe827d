/* sgd.c - the SGD algorithm plugin, driven by hand over lrmse: the
 * update rule under each step schedule, momentum and staleness scaling,
 * convergence with fresh, stale and mini-batch gradients, and the table
 * of latest answers (update: table) against the answer alone in an
 * asynchronous order, and momentum applied once a round (momentum_every:
 * round). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/alg.h>

#include "algtest.h"
#include "plugtest.h"
#include "tap.h"

#define W 4
#define N 8

static struct plugtest A, Pb;
static const struct aia_algorithm_plugin *alg;
static const struct aia_problem_plugin *prob;

struct rank {
    void *prob, *alg;
};

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

/* The coordinator of a pool of W for sgd with these parameters. */
static void coordinator(struct algtest *t, const char *yaml)
{
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml);
    algtest_open(t, &A, &Pb, W, NULL, 11);
}

static void coordinator_close(struct algtest *t)
{
    algtest_close(t);
    plugtest_free(&A);
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

/* x == c * g, entry by entry (every value in these tests is exact). */
static int is_multiple(const double *x, double c, const double *g)
{
    for (int j = 0; j < N; j++)
        if (x[j] != c * g[j])
            return 0;
    return 1;
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
        worst = fmax(worst, fabs(x1[j] + g[j] / (2 * W * L)));
    ok(L > 0 && worst < 1e-15, "auto: an answer moves x by g / (2 W L)");
    coordinator_close(&t);

    coordinator(&t, "{step: 1, schedule: invsqrt, staleness_scaling: true}");
    ok(is_multiple(step_with(&t, g, 16, 1), -0.125, g),
       "invsqrt and staleness scaling: step / sqrt(16) / 2");
    coordinator_close(&t);
}

/* Rounds of every worker answering, one lagging lag rounds: the gap. */
static double converge(const char *yaml, int rounds, int lagging, int lag)
{
    struct algtest t;
    coordinator(&t, yaml);
    algtest_rounds(&t, rounds, lagging, lag);
    double gap = algtest_gap(&t);
    coordinator_close(&t);
    return gap;
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

/* The gap of sgd with these parameters after answers async answers. */
static double async_gap(const char *yaml, int answers)
{
    struct algtest t;
    coordinator(&t, yaml);
    algtest_run_async(&t, answers);
    double gap = algtest_gap(&t);
    coordinator_close(&t);
    return gap;
}

/* A coordinator created by hand, so that the context can say async and
 * give L: whether a first answer g from worker 0, then h from worker 1,
 * moved x by the table's mean (x = -s g - s (g + h) / 2) or by each. */
static void auto_update(const char *yaml, int async, int *table)
{
    struct aia_error err;
    struct aia_problem_facts facts = {.size = sizeof facts,
                                      .smoothness = 1.0 / (2.0 * W),
                                      .rows = 800};
    struct aia_shape shape;
    struct rank c;
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml);
    alg = (const void *)A.p->h; /* the plugin loaded now, not main's */
    struct aia_partition part = {AIA_PART_ALL, W, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(Pb.args, AIA_ROLE_COORDINATOR, 0,
                                          W, 11);
    if (prob->open(&ctx, &part, &c.prob, &err) < 0)
        bail_out("open: %s", err.text);
    ctx.args = A.args;
    ctx.problem = prob;
    ctx.problem_state = c.prob;
    ctx.facts = &facts;
    ctx.async = async;
    if (alg->create(&ctx, &shape, &c.alg, &err) < 0)
        bail_out("create: %s", err.text);
    double g[N], h[N], x[N];
    for (int j = 0; j < N; j++)
        g[j] = j + 1, h[j] = 2 * (j + 1);
    struct aia_answer_info info = {.rank = 1, .worker = 0, .round = 1,
                                   .sent_round = 1, .rows = 200,
                                   .total_rows = 800};
    alg->absorb(c.alg, g, &info, &err);
    info.rank = 2, info.worker = 1;
    alg->absorb(c.alg, h, &info, &err);
    alg->query(c.alg, x, &err);
    /* step auto = 1/(2nL) = 1 here; explicit steps are 1 too */
    *table = is_multiple(x, -2.5, g);
    if (!*table && !is_multiple(x, -3.0, g))
        bail_out("x moved neither along the table nor along each answer");
    alg->destroy(c.alg);
    prob->close(c.prob);
    plugtest_free(&A);
}

static void table(void)
{
    int t;
    auto_update("{}", 1, &t);
    ok(t, "update: auto, step auto, async: x moves along the mean of the "
          "workers' latest answers");
    auto_update("{}", 0, &t);
    ok(t, "update: auto, step auto, rounds: the table too");
    auto_update("{step: 1}", 1, &t);
    ok(!t, "update: auto, an explicit step, async: along each answer, as "
           "before the table");
    auto_update("{step: 1, update: table}", 0, &t);
    ok(t, "update: table: the table whatever the mode and step");

    /* The age factor: worker 0's entry from round 1, worker 1's fresh in
     * round 101, equal rows: the mean age is 50 rounds, past 2n = 8, so
     * the step is multiplied by 8/50; fresh entries keep it whole. */
    {
        struct algtest c;
        struct aia_error err;
        double g[N], want[N];
        for (int j = 0; j < N; j++)
            g[j] = j + 1, want[j] = -(1 + 8.0 / 50) * g[j];
        coordinator(&c, "{step: 1, update: table}");
        struct aia_answer_info info = {.rank = 1, .worker = 0, .round = 1,
                                       .sent_round = 1, .rows = 200,
                                       .total_rows = 800};
        c.alg->absorb(c.as[0], g, &info, &err);
        info.rank = 2, info.worker = 1, info.round = info.sent_round = 101;
        c.alg->absorb(c.as[0], g, &info, &err);
        algtest_end_round(&c);
        double d = algtest_maxdiff(algtest_query(&c, c.round), want, N);
        ok(d < 1e-14,
           "an entry 100 rounds old beside a fresh one: the step times "
           "2n / mean age = 8/50 (off by %.2g)",
           d);
        coordinator_close(&c);
    }

    /* In an async order, parts that differ pull x apart: along each
     * answer it wanders near the optimum, along the table it reaches it. */
    double each = async_gap("{step: 0.1, update: answer}", 4000);
    double tab = async_gap("{step: 0.1, update: table}", 4000);
    ok(each > 1e-6,
       "async, a constant step along each answer stays off the optimum "
       "(gap %.2g)",
       each);
    ok(fabs(tab) < 1e-12,
       "along the table's mean it converges to it (gap %.2g)", tab);
    tab = async_gap("{step: 0.1, update: table, momentum: 0.5}", 4000);
    ok(fabs(tab) < 1e-12, "with momentum too (gap %.2g)", tab);

    /* Uneven parts: the table's mean weighs each entry by its rows. */
    const double weights[W] = {4, 2, 1, 1};
    struct algtest a, b;
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, "{step: 0.1, update: table}");
    algtest_open(&a, &A, &Pb, W, weights, 11);
    algtest_run_async(&a, 4000);
    double gap = algtest_gap(&a);
    ok(fabs(gap) < 1e-12, "on parts of 4:2:1:1 it reaches the optimum "
                          "(gap %.2g)",
       gap);
    algtest_close(&a);

    /* A checkpoint holds the table and its running sums: the resumed run
     * goes on as the uninterrupted one, to the bit, though 37 answers
     * leave the sums 5 answers past their last sum afresh (a period of
     * AIA_TABLE_RESUM_MIN answers: summed afresh at load instead, they
     * would differ in their last bits). */
    algtest_open(&a, &A, &Pb, W, NULL, 11);
    algtest_open(&b, &A, &Pb, W, NULL, 11);
    algtest_run_async(&a, 37);
    size_t len = algtest_resume(&b, &a);
    ok(len == (N + W * (N + 2) + N + AIA_TABLE_SUMS_SCALARS) * sizeof(double),
       "the state is the iterate, the table, its weights and rounds, and "
       "its running sums (%zu bytes)",
       len);
    algtest_run_async(&a, 50);
    algtest_run_async(&b, 50);
    ok(algtest_maxdiff(algtest_model(&a), algtest_model(&b), N) == 0,
       "resumed from it, the table's run goes on to the same iterate");

    /* A state without the sums (as written before they were kept) loads
     * too: they are summed afresh, and the run goes on to within
     * rounding of the uninterrupted one. */
    {
        struct algtest c;
        size_t bare = len - (N + AIA_TABLE_SUMS_SCALARS) * sizeof(double);
        double *st = malloc(len);
        struct aia_error e = {""};
        if (!st)
            bail_out("out of memory");
        algtest_open(&c, &A, &Pb, W, NULL, 11);
        a.alg->save(a.as[0], st, &e);
        ok(c.alg->load(c.as[0], st, bare, &e) == 0,
           "a state without the running sums (%zu bytes) loads (%s)", bare,
           e.text);
        c.round = a.round;
        memcpy(c.hist, a.hist, ALGTEST_HISTORY * a.qlen * sizeof *a.hist);
        memcpy(c.answers, a.answers, sizeof c.answers);
        algtest_run_async(&a, 50);
        algtest_run_async(&c, 50);
        double d = algtest_maxdiff(algtest_model(&a), algtest_model(&c), N);
        ok(d < 1e-12, "and goes on to within %.2g of the same iterate", d);
        st[len / sizeof *st - 8] = 99; /* the answers since a sum afresh */
        ok(c.alg->load(c.as[0], st, len, &e) < 0 &&
               strstr(e.text, "running sums"),
           "running sums past their period are refused (%s)", e.text);
        a.alg->save(a.as[0], st, &e);
        st[len / sizeof *st - 10] = 0; /* the rows, while entries hold some */
        ok(c.alg->load(c.as[0], st, len, &e) < 0 &&
               strstr(e.text, "table's sums"),
           "so are sums of rows that are not the entries' (%s)", e.text);
        free(st);
        algtest_close(&c);
    }

    /* A checkpoint whose entry has rows that are no count is refused
     * before anything is read: a state saved again is the same bytes. */
    double *bad = malloc(len), *before = malloc(len), *after = malloc(len);
    struct aia_error err = {""};
    if (!bad || !before || !after)
        bail_out("out of memory");
    a.alg->save(a.as[0], bad, &err);
    b.alg->save(b.as[0], before, &err);
    bad[0] += 1;                   /* the iterate, so that a read shows */
    bad[N + W * N + 1] = INFINITY; /* worker 1's rows */
    ok(b.alg->load(b.as[0], bad, len, &err) < 0 &&
           strstr(err.text, "table entry 1"),
       "an entry of infinite rows is refused (%s)", err.text);
    b.alg->save(b.as[0], after, &err);
    ok(memcmp(before, after, len) == 0, "and the state is as it was");
    free(bad);
    free(before);
    free(after);
    algtest_close(&a);
    algtest_close(&b);
    plugtest_free(&A);
    algtest_resume_check("sgd", "{step: 0.1, update: table, momentum: 0.5}",
                         &Pb, W);
}


/* momentum_every: round.  The round's answers' steps are summed, and the
 * round's end applies v <- beta v - sum, x <- x + v: x does not move
 * before the query. */
static void round_rule(void)
{
    struct algtest t;
    struct aia_error err;
    double g[N], h[N], want_v[N], want_x[N], x0[N];
    for (int j = 0; j < N; j++)
        g[j] = j - 3, h[j] = 2 * (j + 1);
    coordinator(&t, "{step: 0.5, momentum: 0.5, momentum_every: round}");
    struct aia_answer_info info = {.rank = 1, .worker = 0, .round = 1,
                                   .sent_round = 1, .rows = 200,
                                   .total_rows = 800};
    t.alg->absorb(t.as[0], g, &info, &err);
    info.rank = 2, info.worker = 1;
    t.alg->absorb(t.as[0], h, &info, &err);
    size_t len = t.alg->state_size(t.as[0]);
    double *st = malloc(len);
    if (!st)
        bail_out("out of memory");
    t.alg->save(t.as[0], st, &err);
    memcpy(x0, st, sizeof x0);
    double zero[N] = {0};
    ok(memcmp(x0, zero, sizeof x0) == 0,
       "momentum_every: round: absorbing leaves x where it was");
    ok(len == (3 * N + 1) * sizeof(double) && st[3 * N] == 2,
       "the state is x, v, the round's sum and its count of answers (%zu "
       "bytes, count %g)",
       len, st[3 * N]);
    free(st);
    algtest_end_round(&t);
    for (int j = 0; j < N; j++) {
        want_v[j] = 0.5 * 0 - (0.5 * g[j] + 0.5 * h[j]);
        want_x[j] = want_v[j];
    }
    ok(memcmp(algtest_query(&t, t.round), want_x, sizeof want_x) == 0,
       "the round's end: v = beta v - (step g + step h), x = x + v");
    info.round = info.sent_round = 2, info.rank = 1, info.worker = 0;
    t.alg->absorb(t.as[0], g, &info, &err);
    info.rank = 3, info.worker = 2;
    t.alg->absorb(t.as[0], g, &info, &err);
    info.rank = 4, info.worker = 3, info.sent_round = 1, info.staleness = 1;
    t.alg->absorb(t.as[0], h, &info, &err);
    algtest_end_round(&t);
    for (int j = 0; j < N; j++) {
        want_v[j] = 0.5 * want_v[j] - (0.5 * g[j] + 0.5 * g[j] + 0.5 * h[j]);
        want_x[j] += want_v[j];
    }
    ok(memcmp(algtest_query(&t, t.round), want_x, sizeof want_x) == 0,
       "the next round of 3 answers, one stale: v decays once, by beta");
    algtest_end_round(&t);
    ok(memcmp(algtest_query(&t, t.round), want_x, sizeof want_x) == 0,
       "a round without answers leaves x and v as they were");
    coordinator_close(&t);

    /* With a staleness-scaled step and a schedule, each answer's step is
     * the per-answer rule's: one answer a round is that rule. */
    const char *pairs[][2] = {
        {"{step: 0.1, momentum: 0.5, staleness_scaling: true, "
         "schedule: step, decay_every: 7}",
         "{step: 0.1, momentum: 0.5, staleness_scaling: true, "
         "schedule: step, decay_every: 7, momentum_every: round}"},
        {"{step: 0.1, momentum: 0.5, update: table}",
         "{step: 0.1, momentum: 0.5, update: table, momentum_every: round}"},
    };
    for (int k = 0; k < 2; k++) {
        struct algtest a, b;
        struct plugtest pb;
        coordinator(&a, pairs[k][0]);
        plugtest_load(&pb, "sgd", AIA_KIND_ALGORITHM, pairs[k][1]);
        algtest_open(&b, &pb, &Pb, W, NULL, 11);
        algtest_run_async(&a, 300);
        algtest_run_async(&b, 300);
        ok(memcmp(algtest_model(&a), algtest_model(&b), N * sizeof(double)) ==
               0,
           "async order, %s: momentum_every: round is the per-answer rule, "
           "to the bit",
           k ? "update: table" : "staleness scaling and a schedule");
        algtest_close(&b);
        plugtest_free(&pb);
        coordinator_close(&a);
    }

    /* Rounds of 4: the velocity decays once a round, not 4 times, and
     * both converge. */
    double each = converge("{step: 0.02, momentum: 0.5}", 30, -1, 0),
           once = converge("{step: 0.02, momentum: 0.5, momentum_every: "
                           "round}",
                           30, -1, 0);
    ok(each != once, "rounds of 4 answers: the two rules differ (gap %.3g "
                     "against %.3g per answer)",
       once, each);
    once = converge("{step: 0.05, momentum: 0.5, momentum_every: round}", 150,
                    2, 3);
    ok(fabs(once) < 1e-3,
       "momentum_every: round with a worker 3 rounds stale gets near the "
       "optimum (gap %.2g)",
       once);

    /* A state saved within a round (2 answers absorbed) resumes the round:
     * the run goes on as the uninterrupted one, to the bit. */
    struct algtest u;
    coordinator(&t, "{step: 0.05, momentum: 0.5, momentum_every: round}");
    algtest_open(&u, &A, &Pb, W, NULL, 11);
    algtest_rounds(&t, 10, 2, 1);
    algtest_answer(&t, 0, t.round);
    algtest_answer(&t, 1, t.round - 1);
    algtest_resume(&u, &t);
    for (int k = 0; k < 2; k++) {
        struct algtest *c = k ? &u : &t;
        algtest_answer(c, 2, c->round);
        algtest_answer(c, 3, c->round);
        algtest_end_round(c);
        algtest_rounds(c, 20, 2, 1);
    }
    ok(memcmp(algtest_model(&t), algtest_model(&u), N * sizeof(double)) == 0,
       "a state saved between two answers of a round resumes it to the bit");
    algtest_close(&u);
    coordinator_close(&t);
    algtest_resume_check("sgd", "{step: 0.1, momentum: 0.5, "
                         "momentum_every: round}",
                         &Pb, W);
    algtest_resume_check("sgd", "{step: 0.1, momentum: 0.5, update: table, "
                         "momentum_every: round}",
                         &Pb, W);
}

/* momentum_every: round without momentum is refused by create. */
static void round_refused(void)
{
    struct aia_error err = {""};
    struct aia_shape shape;
    struct rank c;
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM,
                  "{step: 0.1, momentum_every: round}");
    const struct aia_algorithm_plugin *sgd = (const void *)A.p->h;
    struct aia_partition part = {AIA_PART_ALL, W, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(Pb.args, AIA_ROLE_COORDINATOR, 0,
                                          W, 11);
    if (prob->open(&ctx, &part, &c.prob, &err) < 0)
        bail_out("open: %s", err.text);
    ctx.args = A.args;
    ctx.problem = prob;
    ctx.problem_state = c.prob;
    c.alg = NULL;
    ok(sgd->create(&ctx, &shape, &c.alg, &err) < 0 && !c.alg &&
           strstr(err.text, "momentum_every: round needs a momentum"),
       "momentum_every: round with momentum 0 is refused (%s)", err.text);
    prob->close(c.prob);
    plugtest_free(&A);
}

int main(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1}");
    prob = (const void *)Pb.p->h;
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
    table();
    round_rule();
    round_refused();

    plugtest_free(&Pb);
    return done_testing();
}
