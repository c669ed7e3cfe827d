/* ringmaster.c - Ringmaster ASGD: asynchronous SGD that discards answers
 * whose delay is R or more.
 *
 * Maranjyan, Tyurin and Richtarik, "Ringmaster ASGD: The First
 * Asynchronous SGD with Optimal Time Complexity" (ICML 2025).  Every
 * answer computed at an iterate fewer than R steps old is applied at
 * once,
 *
 *     x <- x - step * (n m_i / m) * g
 *
 * (weighted by the worker's share m_i/m of the rows times the n workers,
 * 1 on even parts, as sgd does); an answer of delay R or more is dropped
 * and its sender re-tasked with the current iterate.  Bounding the delay
 * is what lets the step stay large (1/(2RL) rather than shrink with the
 * slowest worker's delay), and the dropped work is the stragglers' only.
 *
 * The delay is counted in steps of x, not in the runtime's rounds: a
 * query is the iterate and its version (steps taken so far), an answer
 * the gradient and the version it was computed at, delay = version now
 * - that version.  In async mode (pool.mode: async) every answer is an
 * iteration and its sender is re-tasked at once, as the method wants.
 *
 * R (max_delay) defaults from the theory when the noise level is given:
 * R = ceil(noise / epsilon), noise = sigma^2 the variance of an answer
 * and epsilon the target squared gradient norm; else R = the number of
 * workers.  step: auto is 1/(2RL), the paper's step at that R.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

static const struct aia_param params[] = {
    AIA_STEP_PARAM("step size applied to each answer kept (auto: 1/(2RL), "
                   "L the problem's smoothness)"),
    AIA_COUNT_PARAMS("max_delay",
                     "R: answers computed R or more steps ago are discarded",
                     "R"),
    AIA_BATCH_PARAM,
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct ringmaster {
    struct aia_method m; /* first: its descriptor functions take the state */
    uint64_t R;
    int nworkers;
};

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    uint64_t R = aia_count_from_noise(ctx, "max_delay");
    struct ringmaster *s =
        aia_method_create(ctx, sizeof *s, 1.0 / (2.0 * (double)R),
                          "1/(2RL), Ringmaster ASGD's step",
                          0x52494e0000000000ull, 1, shape, err);
    if (!s)
        return -1;
    s->R = R;
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    *state = s;
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct ringmaster *s = state;
    double delay = s->m.version - answer[s->m.dim];
    if (!(delay >= 0))
        return aia_seterr(err,
                          "an answer computed at version %g, after the "
                          "current %g",
                          answer[s->m.dim], s->m.version);
    if (delay >= (double)s->R)
        return 0;
    double h = s->m.step * aia_row_weight(info, s->nworkers);
    for (size_t j = 0; j < s->m.dim; j++)
        s->m.x[j] -= h * answer[j];
    s->m.version++;
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin,
                    "ringmaster", "1.0",
                    "Ringmaster ASGD: asynchronous SGD that discards answers "
                    "computed R or more steps ago",
                    params),
    .create = create,
    .destroy = aia_method_destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = aia_method_init,
    .iterate = aia_method_iterate,
    .state_size = aia_method_size,
    .save = aia_method_save,
    .load = aia_method_load,
};
