/* avgtest.c - the averaging plugin's tests' problem, the answers they give
 * the coordinator by hand, and create alone (avgtest.h). */
#include <config.h>

#include "avgtest.h"

#include "tap.h"

struct plugtest Pb;

void avgtest_begin(void)
{
    plugtest_load(&Pb, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 800, cols: 8, noise: 0.1}");
}

void avgtest_end(void)
{
    plugtest_free(&Pb);
}

void give(struct algtest *t, int w, size_t rows, const double *a)
{
    give_at(t, w, rows, a, t->round);
}

void give_at(struct algtest *t, int w, size_t rows, const double *a,
             uint64_t sent)
{
    struct aia_error err;
    if (algtest_give(t, w, a, rows, 4, sent, &err) < 0)
        bail_out("absorb: %s", err.text);
}

int create(const char *yaml, struct aia_error *err)
{
    struct plugtest a;
    struct aia_context ctx;
    void *ps, *as = NULL;
    plugtest_load(&a, "average", AIA_KIND_ALGORITHM, yaml);
    const struct aia_algorithm_plugin *alg =
        algtest_by_hand(&a, &Pb, W, 11, &ctx, &ps);
    struct aia_problem_facts facts = {.size = sizeof facts,
                                      .smoothness = 2,
                                      .largest = 4};
    ctx.facts = &facts;
    struct aia_shape shape;
    int rc = alg->create(&ctx, &shape, &as, err);
    if (rc == 0)
        alg->destroy(as);
    ctx.problem->close(ps);
    plugtest_free(&a);
    return rc;
}
