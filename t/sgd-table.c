/* sgd-table.c - the SGD algorithm plugin, driven by hand over lrmse: the
 * table of latest answers (update: table) against the answer alone in an
 * asynchronous order, the table's age factor and checkpoints, and
 * momentum applied once a round (momentum_every: round).  The update
 * rule and its schedules: t/sgd.c. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/alg.h>

#include "algtest.h"
#include "plugtest.h"
#include "sgdtest.h"
#include "tap.h"

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
    struct aia_context ctx;
    const struct aia_algorithm_plugin *alg = coordinator_by_hand(yaml, &ctx, &c);
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
    size_t len = algtest_resume_async(&a, &b, 37, 50);
    ok(len == (N + W * (N + 2) + N + AIA_TABLE_SUMS_SCALARS) * sizeof(double),
       "the state is the iterate, the table, its weights and rounds, and "
       "its running sums (%zu bytes)",
       len);
    ok(algtest_maxdiff(algtest_model(&a), algtest_model(&b), N) == 0,
       "resumed from it, the table's run goes on to the same iterate");

    /* A state without the sums (as written before they were kept) loads
     * too: they are summed afresh, and the run goes on to within
     * rounding of the uninterrupted one. */
    {
        struct algtest c;
        size_t bare = len - (N + AIA_TABLE_SUMS_SCALARS) * sizeof(double);
        double *st = algtest_state(&a, &len);
        struct aia_error e = {""};
        algtest_open(&c, &A, &Pb, W, NULL, 11);
        ok(algtest_load(&c, &a, st, bare, &e) == 0,
           "a state without the running sums (%zu bytes) loads (%s)", bare,
           e.text);
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
    struct aia_context ctx;
    const struct aia_algorithm_plugin *sgd =
        coordinator_by_hand("{step: 0.1, momentum_every: round}", &ctx, &c);
    ok(sgd->create(&ctx, &shape, &c.alg, &err) < 0 && !c.alg &&
           strstr(err.text, "momentum_every: round needs a momentum"),
       "momentum_every: round with momentum 0 is refused (%s)", err.text);
    prob->close(c.prob);
    plugtest_free(&A);
}

int main(void)
{
    sgdtest_begin();
    plan(0);
    table();
    round_rule();
    round_refused();
    sgdtest_end();
    return done_testing();
}
