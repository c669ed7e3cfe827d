/* sgd.c - the SGD algorithm plugin, driven by hand over lrmse. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

    plugtest_free(&Pb);
    return done_testing();
}
