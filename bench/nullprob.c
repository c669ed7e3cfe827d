/* nullprob.c - a benchmark problem with no data: its dimension is a
 * parameter, its loss is 0 and its gradient is 0, so that a run under it
 * measures the runtime and nothing else.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

static const struct aia_param params[] = {
    {"dim", AIA_INT, "10", "length of the model (and of every message)", NULL,
     1, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct nullprob {
    size_t dim;
};

static int open_(const struct aia_context *ctx,
                 const struct aia_partition *part, void **state,
                 struct aia_error *err)
{
    (void)part;
    struct nullprob *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->dim = (size_t)aia_arg(ctx->args, "dim")->i;
    *state = p;
    return 0;
}

static void close_(void *state)
{
    free(state);
}

static size_t dim(void *state)
{
    return ((struct nullprob *)state)->dim;
}

static size_t rows(void *state)
{
    (void)state;
    return 1;
}

static int loss(void *state, const double *x, double *f, struct aia_error *err)
{
    (void)state;
    (void)x;
    (void)err;
    *f = 0;
    return 0;
}

static int gradient(void *state, const double *x, const size_t *idx,
                    size_t nidx, double *g, struct aia_error *err)
{
    struct nullprob *p = state;
    (void)x;
    (void)idx;
    (void)nidx;
    (void)err;
    memset(g, 0, p->dim * sizeof *g);
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "nullprob",
                    "1.0", "benchmark: no data, loss 0, gradient 0", params),
    .open = open_,
    .close = close_,
    .dim = dim,
    .rows = rows,
    .loss = loss,
    .gradient = gradient,
};
