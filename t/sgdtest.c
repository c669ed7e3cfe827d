/* sgdtest.c - the SGD plugin's tests' problem, their coordinators of sgd
 * and their exact comparisons (sgdtest.h). */
#include <config.h>

#include "sgdtest.h"
#include "tap.h"

struct plugtest A, Pb;
const struct aia_problem_plugin *prob;

void sgdtest_begin(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1}");
    prob = (const void *)Pb.p->h;
}

void sgdtest_end(void)
{
    plugtest_free(&Pb);
}

void coordinator(struct algtest *t, const char *yaml)
{
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml);
    algtest_open(t, &A, &Pb, W, NULL, 11);
}

void coordinator_close(struct algtest *t)
{
    algtest_close(t);
    plugtest_free(&A);
}

const struct aia_algorithm_plugin *
coordinator_by_hand(const char *yaml, struct aia_context *ctx, struct rank *c)
{
    /* static: a problem may keep its partition past open */
    static const struct aia_partition part = {AIA_PART_ALL, W, AIA_PART_BLOCK,
                                              0, NULL};
    struct aia_error err;
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml);
    *ctx = plugtest_ctx(Pb.args, AIA_ROLE_COORDINATOR, 0, W, 11);
    if (prob->open(ctx, &part, &c->prob, &err) < 0)
        bail_out("open: %s", err.text);
    ctx->args = A.args;
    ctx->problem = prob;
    ctx->problem_state = c->prob;
    c->alg = NULL;
    return (const void *)A.p->h;
}

int is_multiple(const double *x, double c, const double *g)
{
    for (int j = 0; j < N; j++)
        if (x[j] != c * g[j])
            return 0;
    return 1;
}

double converge(const char *yaml, int rounds, int lagging, int lag)
{
    struct algtest t;
    coordinator(&t, yaml);
    algtest_rounds(&t, rounds, lagging, lag);
    double gap = algtest_gap(&t);
    coordinator_close(&t);
    return gap;
}
