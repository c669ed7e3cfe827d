/* rennala.c - the Rennala SGD and Ringmaster ASGD plugins, driven by hand
 * over lrmse: what each keeps and discards by the version an answer was
 * computed at, the defaults of S and R, and convergence to the optimum. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algtest.h"
#include "tap.h"

#define W 4
#define N 6

static struct plugtest Pb;

static void open_alg(struct algtest *t, struct plugtest *a, const char *name,
                     const char *yaml)
{
    plugtest_load(a, name, AIA_KIND_ALGORITHM, yaml);
    algtest_open(t, a, &Pb, W, NULL, 5);
}

static void close_alg(struct algtest *t, struct plugtest *a)
{
    algtest_close(t);
    plugtest_free(a);
}

/* Absorb g computed at version v from worker w (100 of 400 rows). */
static void give(struct algtest *t, int w, const double *g, double v)
{
    struct aia_error err;
    double a[N + 1];
    memcpy(a, g, N * sizeof *a);
    a[N] = v;
    if (algtest_give(t, w, a, 100, 400, t->round, &err) < 0)
        bail_out("absorb: %s", err.text);
}

static double version(struct algtest *t)
{
    return algtest_query(t, t->round)[N];
}

static void rennala_rule(void)
{
    struct algtest t;
    struct plugtest a;
    double g[N], h[N];
    for (int j = 0; j < N; j++)
        g[j] = j + 1, h[j] = 3 - j;
    open_alg(&t, &a, "rennala", "{step: 0.5, gradients: 3}");
    give(&t, 0, g, 0);
    give(&t, 0, h, 0);
    algtest_end_round(&t);
    const double *x = algtest_model(&t);
    ok(x[0] == 0 && x[5] == 0 && version(&t) == 0,
       "two gradients of S = 3: no step, the same iterate and version");
    give(&t, 1, g, 7); /* computed at another iterate */
    algtest_end_round(&t);
    ok(algtest_model(&t)[0] == 0, "an answer at another version is "
                                  "discarded");
    give(&t, 2, g, 0);
    algtest_end_round(&t);
    x = algtest_model(&t);
    int same = 1;
    for (int j = 0; j < N; j++)
        same = same && x[j] == -0.5 * (2 * g[j] + h[j]) / 3;
    ok(same && version(&t) == 1, "the third fresh one completes the batch: "
                                 "one step with the mean, version 1");
    const double *q = algtest_query(&t, t.round);
    ok(algtest_maxdiff(q, x, N) == 0, "the query is the iterate and its "
                                      "version");
    give(&t, 3, g, 0);
    algtest_end_round(&t);
    ok(algtest_maxdiff(algtest_model(&t), x, N) == 0,
       "an answer at the previous iterate no longer counts");
    close_alg(&t, &a);

    open_alg(&t, &a, "rennala", "{noise: 10, epsilon: 1}");
    give(&t, 0, g, 0);
    for (int k = 0; k < 8; k++)
        give(&t, 1, g, 0);
    algtest_end_round(&t);
    ok(version(&t) == 0, "S = ceil(noise / epsilon) = 10: 9 are not enough");
    give(&t, 2, g, 0);
    algtest_end_round(&t);
    ok(version(&t) == 1, "and 10 are");
    close_alg(&t, &a);
}

static void ringmaster_rule(void)
{
    struct algtest t;
    struct plugtest a;
    double g[N];
    for (int j = 0; j < N; j++)
        g[j] = j - 2;
    open_alg(&t, &a, "ringmaster", "{step: 0.25, max_delay: 2}");
    give(&t, 0, g, 0);
    give(&t, 1, g, 0);
    give(&t, 2, g, 0);
    algtest_end_round(&t);
    const double *x = algtest_model(&t);
    int same = 1;
    for (int j = 0; j < N; j++)
        same = same && x[j] == -0.5 * g[j];
    ok(same && version(&t) == 2, "R = 2: answers of delay 0 and 1 are "
                                 "applied at once, that of delay 2 is not");
    close_alg(&t, &a);

    open_alg(&t, &a, "ringmaster", "{step: 0.25}");
    for (int k = 0; k < 4; k++)
        give(&t, k, g, 0);
    give(&t, 0, g, 0);
    algtest_end_round(&t);
    ok(version(&t) == 4, "R defaults to the 4 workers: delays 0 to 3 "
                         "applied, 4 discarded");
    close_alg(&t, &a);

    open_alg(&t, &a, "ringmaster", "{max_delay: 3}");
    double L = t.facts.smoothness;
    give(&t, 0, g, 0);
    algtest_end_round(&t);
    x = algtest_model(&t);
    double worst = 0;
    for (int j = 0; j < N; j++)
        worst = tap_worst(worst, fabs(x[j] + g[j] / (6 * L)));
    ok(worst < 1e-15, "step: auto is 1/(2RL) (R = 3, L = %g)", L);
    close_alg(&t, &a);
}

static void converge(void)
{
    struct algtest t;
    struct plugtest a;
    open_alg(&t, &a, "rennala", "{}");
    algtest_rounds(&t, 800, -1, 0);
    ok(algtest_gap(&t) < 1e-9,
       "rennala, S = 4, every worker fresh: the "
       "optimum (gap %.2e)",
       algtest_gap(&t));
    close_alg(&t, &a);
    open_alg(&t, &a, "ringmaster", "{}");
    algtest_rounds(&t, 800, -1, 0);
    ok(algtest_gap(&t) < 1e-9,
       "ringmaster, every worker fresh: the "
       "optimum (gap %.2e)",
       algtest_gap(&t));
    close_alg(&t, &a);
    open_alg(&t, &a, "ringmaster", "{max_delay: 8}");
    algtest_rounds(&t, 800, 2, 1);
    ok(algtest_gap(&t) < 1e-9,
       "ringmaster, R = 8, a worker a round "
       "late: the optimum (gap %.2e)",
       algtest_gap(&t));
    close_alg(&t, &a);
}

int main(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 400, cols: 6, noise: 0.1, condition: 10}");
    plan(0);
    rennala_rule();
    ringmaster_rule();
    converge();
    algtest_resume_check("rennala", "{gradients: 6}", &Pb, W);
    algtest_resume_check("ringmaster", "{max_delay: 3}", &Pb, W);
    plugtest_free(&Pb);
    return done_testing();
}
