/* rennala.c - Rennala SGD: a batch of S gradients, all at the current
 * iterate.
 *
 * Tyurin and Richtarik, "Optimal Time Complexities of Parallel Stochastic
 * Optimization Methods Under a Fixed Computation Model" (NeurIPS 2023).
 * The coordinator collects S gradients computed at its current iterate x
 * (a fast worker may give several), then steps with their mean:
 *
 *     x <- x - step * (sum_k n_k g_k) / (sum_k n_k)
 *
 * weighted by the rows n_k behind each gradient.  An answer computed at an
 * older iterate is discarded, and every worker that answers is sent the
 * current iterate again at once.  Under heterogeneous worker speeds this
 * is optimal: the batch fills at the pace of the workers that are fast
 * now, and a straggler never holds a step back nor brings a stale
 * gradient into it.
 *
 * Run it in async mode (pool.mode: async): there every answer is an
 * iteration of the runtime and only its sender gets the next query, at
 * once, which is Rennala's re-tasking; the query changes only when S
 * fresh gradients are in, so the sender gets the same iterate again
 * until then.  In rounds mode it works too, with a fresh worker waiting
 * for the round's end before it is re-tasked.
 *
 * A query is the iterate and its version (the number of steps taken); an
 * answer is the gradient and the version it was computed at, so that
 * "computed at the current iterate" does not depend on how the runtime
 * counts rounds.
 *
 * S (gradients) defaults from the theory when the noise level is given:
 * S = ceil(noise / epsilon), noise = sigma^2 the variance of an answer
 * and epsilon the target squared gradient norm; else S = the number of
 * workers.  step: auto is 1/(2L), the paper's step at that S.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

static const struct aia_param params[] = {
    AIA_STEP_PARAM("step size applied to the mean of a batch (auto: "
                   "1/(2L), L the problem's smoothness)"),
    AIA_COUNT_PARAMS("gradients", "S, the fresh gradients a step waits for",
                     "S"),
    AIA_BATCH_PARAM,
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct rennala {
    struct aia_method m; /* first: its descriptor functions take the state */
    uint64_t S;
    /* coordinator */
    double *acc;    /* sum of n_k g_k of the batch */
    uint64_t count; /* fresh gradients in the batch */
    double weight;  /* sum of n_k */
};

static void destroy(void *state)
{
    struct rennala *s = state;
    if (s)
        free(s->acc);
    aia_method_destroy(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct rennala *s =
        aia_method_create(ctx, sizeof *s, 0.5, "1/(2L), Rennala SGD's step",
                          0x52454e0000000000ull, 1, shape, err);
    if (!s)
        return -1;
    s->S = aia_count_from_noise(ctx, "gradients");
    if (ctx->role == AIA_ROLE_COORDINATOR &&
        !(s->acc = calloc(s->m.dim ? s->m.dim : 1, sizeof *s->acc))) {
        destroy(s);
        return aia_seterr(err, "out of memory");
    }
    *state = s;
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct rennala *s = state;
    (void)err;
    /* a full batch waits for query(), which takes the step; until then
     * more fresh answers only make the batch larger */
    if (answer[s->m.dim] != s->m.version)
        return 0;
    double n = info->rows > 0 ? (double)info->rows : 1;
    for (size_t j = 0; j < s->m.dim; j++)
        s->acc[j] += n * answer[j];
    s->weight += n;
    s->count++;
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    struct rennala *s = state;
    if (s->count >= s->S) {
        for (size_t j = 0; j < s->m.dim; j++) {
            s->m.x[j] -= s->m.step * (s->acc[j] / s->weight);
            s->acc[j] = 0;
        }
        s->weight = 0;
        s->count = 0;
        s->m.version++;
    }
    return aia_method_init(state, query, err);
}

/* Checkpoints: the iterate, the batch's weighted sum, then its version,
 * its count of gradients and their rows. */
static size_t state_size(void *state)
{
    struct rennala *s = state;
    return (2 * s->m.dim + 3) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct rennala *s = state;
    double *p = buf;
    (void)err;
    memcpy(p, s->m.x, s->m.dim * sizeof *p);
    memcpy(p + s->m.dim, s->acc, s->m.dim * sizeof *p);
    p[2 * s->m.dim] = s->m.version;
    p[2 * s->m.dim + 1] = (double)s->count;
    p[2 * s->m.dim + 2] = s->weight;
    return 0;
}

static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct rennala *s = state;
    const double *p = buf;
    if (aia_state_len(len, state_size(state), err) < 0)
        return -1;
    double version = p[2 * s->m.dim], count = p[2 * s->m.dim + 1],
           weight = p[2 * s->m.dim + 2];
    /* each field within its bounds before any is used: counts whole and
     * exact as doubles, the batch's weight a finite sum of rows */
    if (!(version >= 0 && version < AIA_EXACT_BELOW &&
          version == floor(version) && count >= 0 &&
          count < AIA_EXACT_BELOW && count == floor(count) && weight >= 0 &&
          isfinite(weight)))
        return aia_seterr(err,
                          "damaged: version %g, %g gradients of %g rows in "
                          "the batch: not a state of rennala",
                          version, count, weight);
    if (aia_state_finite(p, s->m.dim, "iterate", err) < 0 ||
        aia_state_finite(p + s->m.dim, s->m.dim, "batch's sum", err) < 0)
        return -1;
    memcpy(s->m.x, p, s->m.dim * sizeof *p);
    memcpy(s->acc, p + s->m.dim, s->m.dim * sizeof *p);
    s->m.version = version;
    s->count = (uint64_t)count;
    s->weight = weight;
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "rennala",
                    "1.0",
                    "Rennala SGD: a step with the mean of S gradients all "
                    "at the current iterate; older answers are discarded",
                    params),
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = query,
    .iterate = aia_method_iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
