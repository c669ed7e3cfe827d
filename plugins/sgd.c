/* sgd.c - asynchronous stochastic gradient descent.
 *
 * Workers answer a query x with a gradient of their rows' loss at x (all
 * rows, or a mini-batch drawn with replacement); the coordinator applies
 * each answer g as it arrives, with heavy-ball momentum beta:
 *
 *     v <- beta * v - step_t * g,   x <- x + v
 *
 * which for beta = 0 (the default) is plain x <- x - step_t * g.  With
 * every answer applied at once this is the per-answer asynchronous SGD of
 * parameter servers; the round-based pool decides how stale the x behind
 * a gradient may be.
 *
 * The step of an answer depends on the current round t (first is 1):
 *
 *     constant   step_t = step
 *     invsqrt    step_t = step / sqrt(t)
 *     step       step_t = step * decay^floor(t / decay_every)
 *
 * and with staleness_scaling: true it is divided by staleness + 1, so
 * that a gradient taken at an old iterate moves the current one less.
 *
 * staleness_scaling: adaptive is the delay-adaptive rule of Koloskova,
 * Stich and Jaggi, "Sharper Convergence Guarantees for Asynchronous SGD
 * for Distributed and Federated Learning" (NeurIPS 2022), and Mishchenko,
 * Bach, Even and Woodworth, "Asynchronous SGD Beats Minibatch SGD Under
 * Arbitrary Delays" (NeurIPS 2022): with n workers, an answer of
 * staleness tau is applied with
 *
 *     step_tau = step                 tau <= n
 *     step_tau = step * n / tau       tau >  n
 *
 * which with step = 1/(4nL) is their min(1/(4 L n), 1/(4 L tau)): a
 * gradient older than the pool is deep is damped in proportion to its
 * delay, and asynchronous SGD converges whatever the delays, where a
 * fixed step may diverge when load makes the delays grow.  The staleness
 * is the runtime's: updates since the query in async mode (the papers'
 * delay), rounds in rounds mode.
 *
 * step: auto (the default) is 1/(2nL), L the problem's smoothness: a
 * round of n fresh answers, each weighted by its worker's share of the
 * rows, then moves x by at most a gradient step 1/(2L) whatever the pool
 * size (a fixed per-answer step would move it n times as far).  With
 * weighting: rows (the default) it is also multiplied by n * m_i / m,
 * worker i's share of the m rows times the n workers: 1 on even
 * partitions, and on uneven ones a round of answers adds up to the whole
 * problem's gradient instead of favouring the small parts.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

enum { SCHED_CONSTANT, SCHED_INVSQRT, SCHED_STEP };
static const char *const schedules[] = {[SCHED_CONSTANT] = "constant",
                                        [SCHED_INVSQRT] = "invsqrt",
                                        [SCHED_STEP] = "step"};

enum { SCALE_NONE, SCALE_DIVIDE, SCALE_ADAPTIVE };
static const char *const scalings[] = {[SCALE_NONE] = "false",
                                       [SCALE_DIVIDE] = "true",
                                       [SCALE_ADAPTIVE] = "adaptive"};

enum { WEIGH_ROWS, WEIGH_EQUAL };
static const char *const weightings[] = {[WEIGH_ROWS] = "rows",
                                         [WEIGH_EQUAL] = "equal"};

static const struct aia_param params[] = {
    AIA_STEP_PARAM("step size applied to each gradient (auto: 1/(2nL), n "
                   "workers, L the problem's smoothness)"),
    AIA_BATCH_PARAM,
    {"schedule", AIA_ENUM, "constant",
     "step size over rounds t: step, step/sqrt(t), or step decayed every "
     "decay_every rounds",
     "constant|invsqrt|step", 0, 0},
    {"decay", AIA_DOUBLE, "0.5",
     "factor of the step schedule: step * decay^floor(t/decay_every)", NULL, 0,
     1},
    {"decay_every", AIA_INT, "100",
     "rounds between decays of the step (schedule: step)", NULL, 1, 1e12},
    {"momentum", AIA_DOUBLE, "0",
     "heavy-ball momentum beta on the coordinator (0: none)", NULL, 0, 0.9999},
    {"staleness_scaling", AIA_ENUM, "false",
     "true: divide the step of an answer by its staleness + 1; adaptive: "
     "multiply it by min(1, n/staleness), n workers (delay-adaptive, "
     "Koloskova et al. 2022, Mishchenko et al. 2022)",
     "false|true|adaptive", 0, 0},
    {"weighting", AIA_ENUM, "rows",
     "rows: scale each answer's step by its worker's share of the rows "
     "times the pool size (1 on even partitions), so that uneven ones "
     "converge to the optimum; equal: the same step for every answer",
     "rows|equal", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct sgd {
    struct aia_method m; /* first: its descriptor functions take the state */
    double decay, momentum;
    int schedule, scale, by_rows, nworkers;
    uint64_t decay_every;
    double *v; /* coordinator: the velocity (momentum only) */
};

static void destroy(void *state)
{
    struct sgd *s = state;
    if (!s)
        return;
    aia_method_close(&s->m);
    free(s->v);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct sgd *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    const struct aia_value *a = ctx->args;
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    s->schedule = aia_arg_enum(a, "schedule", schedules, 3);
    s->decay = aia_arg(a, "decay")->d;
    s->decay_every = (uint64_t)aia_arg(a, "decay_every")->i;
    s->momentum = aia_arg(a, "momentum")->d;
    s->scale = aia_arg_enum(a, "staleness_scaling", scalings, 3);
    int weighting = aia_arg_enum(a, "weighting", weightings, 2);
    s->by_rows = weighting == WEIGH_ROWS;
    if (s->schedule < 0 || s->scale < 0 || weighting < 0) {
        destroy(s);
        return aia_seterr(err, "schedule, staleness_scaling or weighting: "
                               "a value sgd does not know");
    }
    if (aia_method_open(&s->m, ctx, 1.0 / (2.0 * s->nworkers),
                        "1/(2nL), n workers: a round of answers is a step "
                        "1/(2L)",
                        (size_t)aia_arg(a, "batch")->i, 0x5347440000000000ull,
                        0, shape, err) < 0) {
        destroy(s);
        return -1;
    }
    if (ctx->role == AIA_ROLE_COORDINATOR && s->momentum > 0 &&
        !(s->v = calloc(s->m.dim ? s->m.dim : 1, sizeof *s->v))) {
        destroy(s);
        return aia_seterr(err, "out of memory");
    }
    *state = s;
    return 0;
}

/* The step for an answer absorbed in round t with this staleness. */
static double step_size(const struct sgd *s, uint64_t round, uint64_t staleness)
{
    /* Rounds count from 1; a caller that leaves the round at 0 gets the
     * first round's step rather than a division by zero. */
    double t = round > 0 ? (double)round : 1.0;
    double h = s->m.step;
    if (s->schedule == SCHED_INVSQRT)
        h /= sqrt(t);
    else if (s->schedule == SCHED_STEP)
        h *= pow(s->decay, (double)(round / s->decay_every));
    if (s->scale == SCALE_DIVIDE)
        h /= (double)staleness + 1.0;
    else if (s->scale == SCALE_ADAPTIVE && staleness > (uint64_t)s->nworkers)
        h *= (double)s->nworkers / (double)staleness;
    return h;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sgd *s = state;
    (void)err;
    double h = step_size(s, info->round, info->staleness);
    /* Each worker's answer is the mean gradient of its own rows: weighted
     * by its share, a round of answers adds up to the whole gradient. */
    if (s->by_rows)
        h *= aia_row_weight(info, s->nworkers);
    if (!s->v) {
        for (size_t j = 0; j < s->m.dim; j++)
            s->m.x[j] -= h * answer[j];
        return 0;
    }
    for (size_t j = 0; j < s->m.dim; j++) {
        s->v[j] = s->momentum * s->v[j] - h * answer[j];
        s->m.x[j] += s->v[j];
    }
    return 0;
}

/* Checkpoints: the iterate, then the velocity when there is momentum. */
static size_t state_size(void *state)
{
    struct sgd *s = state;
    return (s->v ? 2 : 1) * s->m.dim * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct sgd *s = state;
    (void)err;
    memcpy(buf, s->m.x, s->m.dim * sizeof *s->m.x);
    if (s->v)
        memcpy((double *)buf + s->m.dim, s->v, s->m.dim * sizeof *s->v);
    return 0;
}

static int load(void *state, const void *buf, size_t len,
                struct aia_error *err)
{
    struct sgd *s = state;
    if (aia_state_len(len, state_size(state), err) < 0)
        return -1;
    memcpy(s->m.x, buf, s->m.dim * sizeof *s->m.x);
    if (s->v)
        memcpy(s->v, (const double *)buf + s->m.dim, s->m.dim * sizeof *s->v);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "sgd",
                    "1.0",
                    "asynchronous SGD: each answer is a gradient, applied "
                    "as it arrives",
                    params),
    .flags = AIA_ALG_ADDITIVE,
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = aia_method_init,
    .state_size = state_size,
    .save = save,
    .load = load,
};
