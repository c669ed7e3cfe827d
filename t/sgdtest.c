/* sgdtest.c - the SGD plugin's tests' problem, their coordinators of sgd
 * and their exact comparisons (sgdtest.h). */
#include <config.h>

#include "sgdtest.h"

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
    plugtest_load(&A, "sgd", AIA_KIND_ALGORITHM, yaml);
    c->alg = NULL;
    return algtest_by_hand(&A, &Pb, W, 11, ctx, &c->prob);
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
