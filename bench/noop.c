/* noop.c - a benchmark algorithm that does nothing: the worker answers
 * with the query it was sent, the coordinator absorbs nothing and leaves
 * the query as it is.  Under it, a round of aiarun costs what the protocol
 * costs: the messages, the polling, the bookkeeping.  The message length
 * is the problem's dimension (bench/nullprob.c makes it a parameter).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

struct noop {
    size_t dim;
};

static void destroy(void *state)
{
    free(state);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct noop *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->dim = ctx->problem->dim(ctx->problem_state);
    shape->query_len = shape->answer_len = s->dim;
    *state = s;
    return 0;
}

/* The query buffers start zeroed; nothing ever writes them again. */
static int init(void *state, double *query, struct aia_error *err)
{
    (void)state;
    (void)query;
    (void)err;
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct noop *s = state;
    (void)step;
    (void)err;
    memcpy(answer, query, s->dim * sizeof *answer);
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    (void)state;
    (void)answer;
    (void)info;
    (void)err;
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(
        AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "noop", "1.0",
        "benchmark: answer = query, absorb and query do nothing", NULL),
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = init,
};
