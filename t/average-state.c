/* average-state.c - the averaging plugin's exchanges that keep state past
 * a round, driven by hand over lrmse: the delay and preemption options
 * checked, delayed exchange with and without compensation, preemption by
 * score and restarts, the running sums of async mode, and checkpoints of
 * both.  The average itself: t/average.c. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/alg.h>

#include "algtest.h"
#include "avgtest.h"
#include "tap.h"

static void options_checked(void)
{
    struct aia_error err;
    ok(create("{local_steps: 2, delay: 3}", &err) < 0,
       "a delay beyond the local steps is refused");
    like(err.text, "delay: 3 is more than local_steps (2)",
         "with a message that names the key (%s)", err.text);
    ok(create("{local_steps: 3, delay: 3}", &err) == 0,
       "a delay of all the local steps is accepted");
    ok(create("{preempt_every: 2, preempt: 4}", &err) < 0,
       "replacing all 4 workers of a pool of 4 is refused");
    like(err.text, "preempt: 4 of a pool of 4 workers", "and says why (%s)",
         err.text);
    ok(create("{preempt_every: 2, memory: delta}", &err) < 0,
       "preemption with memory: delta is refused");
    like(err.text, "memory: delta", "and says why");
}

/* y <- y - 0.25 * grad_w(y), n times: by hand. */
static void steps(struct algtest *t, int w, double *y, int n)
{
    struct aia_error err;
    double g[N];
    for (int k = 0; k < n; k++) {
        t->prob->gradient(t->ps[w + 1], y, NULL, 0, g, &err);
        for (int j = 0; j < N; j++)
            y[j] -= 0.25 * g[j];
    }
}

/* Two exchanges of worker 1 with local_steps 3 and delay 2, against the
 * same steps by hand. */
static void delayed(int compensate)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;
    char yaml[120];
    snprintf(yaml, sizeof yaml,
             "{step: 0.25, local_steps: 3, delay: 2, compensate: %s}",
             compensate ? "true" : "false");
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    double q1[N], q2[N], y[N], sent[N], a1[N], a2[N];
    for (int j = 0; j < N; j++) {
        q1[j] = 0.1 * j - 0.3;
        q2[j] = 0.5 - 0.05 * j;
    }
    struct aia_step step = {.round = 1};
    /* First exchange: the model starts from the query. */
    memcpy(y, q1, sizeof y);
    memcpy(sent, q1, sizeof sent);
    steps(&t, 1, y, 2);
    for (int j = 0; j < N; j++)
        y[j] = compensate ? q1[j] + (y[j] - sent[j]) : q1[j];
    steps(&t, 1, y, 1);
    t.alg->worker(t.as[2], q1, a1, &step, &err);
    ok(memcmp(a1, y, sizeof y) == 0,
       "compensate %d: the first answer: 2 steps from the query, the query "
       "applied, 1 step",
       compensate);
    /* Second: 2 steps from the own model, then the average applied. */
    memcpy(sent, y, sizeof sent);
    steps(&t, 1, y, 2);
    for (int j = 0; j < N; j++)
        y[j] = compensate ? q2[j] + (y[j] - sent[j]) : q2[j];
    steps(&t, 1, y, 1);
    step.round = 2;
    t.alg->worker(t.as[2], q2, a2, &step, &err);
    ok(memcmp(a2, y, sizeof y) == 0,
       "compensate %d: the next: 2 steps from its own model, then %s, then "
       "1 step",
       compensate,
       compensate ? "y <- x + (y - y_sent)" : "the average replaces it");
    if (!compensate) {
        /* Replacement throws the d steps away: local_steps k - d. */
        memcpy(y, q2, sizeof y);
        steps(&t, 1, y, 1);
        ok(memcmp(a2, y, sizeof y) == 0,
           "compensate 0: the answer is that of 1 local step from the "
           "average");
    } else {
        memcpy(y, q2, sizeof y);
        steps(&t, 1, y, 1);
        ok(algtest_maxdiff(a2, y, N) > 1e-6,
           "compensate 1: the local progress counts: not 1 step from the "
           "average (differs by %.2g)",
           algtest_maxdiff(a2, y, N));
    }
    algtest_close(&t);
    plugtest_free(&a);
}

static void delayed_converges(void)
{
    static const char *const jobs[] = {
        "{step: 0.2, local_steps: 4, delay: 2}",
        "{step: 0.2, local_steps: 4, delay: 2, compensate: false}",
        "{step: 0.2, local_steps: 4, delay: 4, memory: delta}",
    };
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        struct plugtest a;
        struct algtest t;
        plugtest_load(&a, "average", AIA_KIND_ALGORITHM, jobs[k]);
        algtest_open(&t, &a, &Pb, W, NULL, 11);
        algtest_rounds(&t, 150, -1, 0);
        double gap = algtest_gap(&t);
        ok(gap < 1e-3, "%s converges near the optimum (gap %.2g)", jobs[k],
           gap);
        algtest_close(&t);
        plugtest_free(&a);
    }
}

/* Models with known scores: the 2 worst replaced by the best's. */
static void preemption(void)
{
    struct plugtest a;
    struct algtest t;
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{preempt_every: 1, preempt: 2}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    ok(t.qlen == 2 * N + W && t.alen == N + 1,
       "a query is [x, x_best, one count per worker], an answer the model "
       "and its score");
    double m[W][N + 1];
    static const double score[W] = {3, 1, 7, 5};
    for (int w = 0; w < W; w++) {
        for (int j = 0; j < N; j++)
            m[w][j] = (w + 1) * (j - 2);
        m[w][N] = score[w];
        give(&t, w, 1, m[w]);
    }
    algtest_end_round(&t);
    const double *q = algtest_query(&t, 2);
    int same = 1, best = 1;
    for (int j = 0; j < N; j++) {
        same = same && q[j] == 0.25 * (m[0][j] + 3 * m[1][j]);
        best = best && q[N + j] == m[1][j];
    }
    ok(same, "the models of the two worst scores (7 and 5) are replaced by "
             "the best one's (1) in the average");
    ok(best, "the query carries the best model");
    ok(q[2 * N] == 0 && q[2 * N + 1] == 0 && q[2 * N + 2] == 1 &&
           q[2 * N + 3] == 1,
       "and counts 0, 0, 1, 1: workers 2 and 3 are told to restart");
    const double *x = algtest_model(&t);
    ok(memcmp(x, q, N * sizeof *x) == 0, "the model reported is the average");

    /* Workers 2 and 3 are silent: their scores are forgotten, and two
     * scored workers are too few to replace two of them. */
    m[0][N] = 9;
    give(&t, 0, 1, m[0]);
    algtest_end_round(&t);
    q = algtest_query(&t, 3);
    ok(q[2 * N] == 0 && q[2 * N + 2] == 1 && q[2 * N + 3] == 1,
       "a replaced worker is not ranked again before it answers; fewer than "
       "preempt + 1 scored workers: no preemption");

    /* Checkpoint: the same next query after save and load. */
    size_t len = t.alg->state_size(t.as[0]);
    void *buf = malloc(len);
    struct aia_error err;
    struct algtest u;
    algtest_open(&u, &a, &Pb, W, NULL, 11);
    int rc = buf ? t.alg->save(t.as[0], buf, &err) : -1;
    rc = rc < 0 ? rc : u.alg->load(u.as[0], buf, len, &err);
    ok(rc == 0, "save and load (%zu bytes)", len);
    m[2][N] = 0.5;
    m[3][N] = 8;
    for (int w = 2; w < W; w++) {
        give(&t, w, 1, m[w]);
        give(&u, w, 1, m[w]);
    }
    algtest_end_round(&t);
    u.round = t.round - 1;
    algtest_end_round(&u);
    ok(memcmp(algtest_query(&t, t.round), algtest_query(&u, u.round),
              t.qlen * sizeof(double)) == 0,
       "after load, the scores, counts and models give the same query");
    q = algtest_query(&u, u.round);
    ok(q[2 * N + 0] == 1 && q[2 * N + 3] == 2 && q[N] == m[2][0],
       "worker 2 (0.5) is now the best; 3 (8) and 0 (9) are replaced");
    free(buf);
    algtest_close(&u);
    algtest_close(&t);
    plugtest_free(&a);
}

/* A worker told to restart drops its own model for the best one. */
static void restart(void)
{
    struct plugtest a;
    struct algtest t;
    struct aia_error err;
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                  "{step: 0.25, local_steps: 2, delay: 1, preempt_every: 1}");
    algtest_open(&t, &a, &Pb, W, NULL, 11);
    double q[2 * N + W] = {0}, ans[N + 1], y[N], yb[N];
    for (int j = 0; j < N; j++) {
        q[j] = 0.1 * j;
        q[N + j] = 1 - 0.1 * j;
    }
    struct aia_step step = {.round = 1};
    t.alg->worker(t.as[3], q, ans, &step, &err);
    double f;
    t.prob->loss(t.ps[3], ans, &f, &err);
    ok(ans[N] == f, "the answer's score is the loss of its model on the "
                    "worker's rows (%.4g)",
       f);
    q[2 * N + 2] = 1;
    memcpy(yb, q + N, sizeof yb);
    memcpy(y, yb, sizeof y);
    steps(&t, 2, y, 1);
    for (int j = 0; j < N; j++)
        y[j] = q[j] + (y[j] - yb[j]);
    steps(&t, 2, y, 1);
    t.alg->worker(t.as[3], q, ans, &step, &err);
    ok(memcmp(ans, y, sizeof y) == 0,
       "a replaced worker restarts from the best model, then applies the "
       "average as usual");
    algtest_close(&t);
    plugtest_free(&a);
}

/* Worker 3's targets are garbage: without preemption the average is
 * dragged far off, with it the models of the clean workers decide. */
static void corrupted(void)
{
    struct plugtest p, a;
    plugtest_load(&p, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1, corrupt: [3], "
                  "corrupt_noise: 100}");
    double gap[2];
    for (int k = 0; k < 2; k++) {
        struct algtest t;
        plugtest_load(&a, "average", AIA_KIND_ALGORITHM,
                      k ? "{step: 0.3, local_steps: 4, delay: 2, "
                          "preempt_every: 1}"
                        : "{step: 0.3, local_steps: 4, delay: 2}");
        algtest_open(&t, &a, &p, W, NULL, 11);
        algtest_rounds(&t, 100, -1, 0);
        gap[k] = algtest_gap(&t);
        algtest_close(&t);
        plugtest_free(&a);
    }
    ok(gap[0] > 10, "a corrupted part drags the average far off (gap %.3g)",
       gap[0]);
    ok(gap[1] < 0.05,
       "preemption every round keeps it near the clean optimum (gap %.3g)",
       gap[1]);
    plugtest_free(&p);
}

/* In async mode (every answer a round) the coordinator keeps the query's
 * weighted sum by difference, O(dim) an answer: over 200,000 answers of
 * W workers, some of them much smaller than the ones they replace, its
 * queries stay within 1e-12 of the same plugin's summed afresh each
 * round, for the staleness schemes that keep the sum (gd and none). */
static void running_sums(const char *staleness)
{
    char yaml[80];
    snprintf(yaml, sizeof yaml, "{staleness: %s}", staleness);
    struct plugtest a;
    struct aia_error err;
    struct aia_context ctx;
    void *ps, *as[2];
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    const struct aia_algorithm_plugin *alg =
        algtest_by_hand(&a, &Pb, W, 11, &ctx, &ps);
    struct aia_problem_facts facts = {
        .size = sizeof facts, .smoothness = 2, .largest = 4};
    ctx.facts = &facts;
    struct aia_shape shape;
    for (int k = 0; k < 2; k++) {
        ctx.async = k; /* 1: the running sum */
        if (alg->create(&ctx, &shape, &as[k], &err) < 0)
            bail_out("create: %s", err.text);
    }
    size_t q = shape.query_len, n = shape.answer_len;
    double *x[2], *y = calloc(n, sizeof *y);
    for (int k = 0; k < 2; k++) {
        x[k] = calloc(q, sizeof *x[k]);
        if (alg->init(as[k], x[k], &err) < 0)
            bail_out("init: %s", err.text);
    }
    struct aia_rng g;
    aia_rng_seed(&g, 5, 0);
    double worst = 0;
    for (uint64_t r = 1; r <= 200000; r++) {
        int w = (int)(aia_rng_u64(&g) % W);
        /* every 50,000 answers the answers shrink a millionfold */
        double scale = pow(1e-6, (double)(r / 50000));
        for (size_t j = 0; j < n; j++)
            y[j] = scale * (aia_rng_uniform(&g) - 0.5);
        struct aia_answer_info info = {.rank = w + 1,
                                       .worker = w,
                                       .round = r,
                                       .sent_round = r - 1,
                                       .staleness = 1,
                                       .rows = (size_t)(w + 1),
                                       .total_rows = 10};
        for (int k = 0; k < 2; k++)
            if (alg->absorb(as[k], y, &info, &err) < 0 ||
                alg->query(as[k], x[k], &err) < 0)
                bail_out("absorb or query: %s", err.text);
        double big = 0, off = 0;
        for (size_t j = 0; j < q; j++) {
            big = fmax(big, fabs(x[0][j]));
            off = tap_worst(off, fabs(x[1][j] - x[0][j]));
        }
        if (big > 0 || isnan(off))
            worst = tap_worst(worst, off / big);
    }
    ok(worst < 1e-12,
       "staleness %s in async mode: the running sum's queries stay within "
       "1e-12 of the ones summed afresh over 200,000 answers (worst %.3g)",
       staleness, worst);
    ok(worst > 0, "and are formed by difference, not summed afresh (they "
                  "differ in the last bits)");
    for (int k = 0; k < 2; k++) {
        alg->destroy(as[k]);
        free(x[k]);
    }
    free(y);
    ctx.problem->close(ps);
    plugtest_free(&a);
}

/* In async mode the models are a running table whose sums a checkpoint
 * holds: a run resumed between two sums afresh goes on to the bit, the
 * sums included; a state without them loads, and sums that are not the
 * table's are refused before anything is read. */
static void async_resume(void)
{
    struct plugtest a;
    struct algtest t, u;
    algtest_async = 1;
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, "{staleness: none}");
    algtest_open(&t, &a, &Pb, W, NULL, 3);
    algtest_open(&u, &a, &Pb, W, NULL, 3);
    size_t len = algtest_resume_async(&t, &u, 37, 50);
    struct aia_error err = {""};
    ok(algtest_same_state(&t, &u),
       "async mode: resumed after 37 answers (a state of %zu bytes), the "
       "same models, query and running sums 50 answers later, to the bit",
       len);
    double *st = algtest_state(&t, &len);
    size_t bare = len - (W + N + AIA_TABLE_SUMS_SCALARS) * sizeof(double);
    ok(u.alg->load(u.as[0], st, bare, &err) == 0,
       "a state without the steps and sums (%zu bytes) loads (%s)", bare,
       err.text);
    /* the total of the rows, the first value after the steps and sums */
    double total;
    unsigned char *at = (unsigned char *)st + bare + (W + N) * sizeof total;
    memcpy(&total, at, sizeof total);
    total += 1;
    memcpy(at, &total, sizeof total);
    ok(u.alg->load(u.as[0], st, len, &err) < 0 &&
           strstr(err.text, "running sums"),
       "sums whose rows are not the workers' weights are refused (%s)",
       err.text);
    free(st);
    algtest_close(&t);
    algtest_close(&u);
    plugtest_free(&a);
    algtest_async = 0;
}

int main(void)
{
    avgtest_begin();
    plan(0);
    options_checked();
    delayed(1);
    delayed(0);
    delayed_converges();
    preemption();
    restart();
    corrupted();
    running_sums("gd");
    running_sums("none");
    async_resume();
    avgtest_end();
    return done_testing();
}
