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
 * momentum_every: round applies the momentum once a round instead, to the
 * sum of the steps of the round's k answers:
 *
 *     a <- sum_i step_t,i * g_i   (absorb),   v <- beta * v - a,
 *     x <- x + v                  (the round's end, query)
 *
 * which is heavy-ball momentum on the round's summed gradient, i.e.
 * PyTorch's momentum on a batch k times an answer's: the velocity decays
 * once a round rather than k times, and the coordinator writes one array
 * an answer rather than two.  In async mode every answer is a round and
 * the two rules are the same to the bit.  Each answer's step is the one
 * the per-answer rule would take (schedule, staleness, weighting, and
 * with update: table the table's mean as its direction).
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
 *
 * update: table moves x along an aggregate instead of the answer alone:
 * the coordinator keeps the latest gradient g_i of every worker and its
 * rows m_i, an answer replaces its worker's entry, and x moves by
 *
 *     step_t * (sum_i m_i g_i) / (sum_i m_i)
 *
 * over the workers heard from so far.  This is the incremental aggregated
 * gradient method (IAG: Blatt, Hero and Gauchman, "A Convergent
 * Incremental Gradient Method with a Constant Step Size", SIAM J. Optim.
 * 2007), run asynchronously on a parameter server as in Aytekin,
 * Feyzmahdavian and Johansson, "Analysis and Implementation of an
 * Asynchronous Optimization Algorithm for the Parameter Server" (2016),
 * whose linear convergence under bounded delays Vanli, Gurbuzbalaban
 * and Ozdaglar proved for any order of the answers (SIAM J. Optim. 2018):
 * the stochastic gradient of SAG, with a worker's part for a sample.
 * Why: with a constant step, each answer one worker's gradient, x never
 * settles at the optimum when the parts differ (their gradients there
 * are not zero, only their weighted sum is): it wanders in a
 * neighbourhood whose size grows with the step, and which a badly
 * conditioned problem magnifies (bench/ANALYSIS.md, case autostep, has
 * the gaps measured).  The table's mean is zero at the optimum, so a
 * constant step converges to it.  A decreasing step would too, but
 * slowly: the step must shrink by the ratio of the gaps' square roots
 * and the slowest direction then needs as many times more updates.  The
 * step is the same 1/(2nL) (a round of n updates along the whole
 * problem's gradient moves x by 1/(2L)), the schedule, momentum and
 * staleness scaling apply as for answers, and weighting: equal gives
 * every entry the weight 1.
 * The table's direction is as old as its entries: with a the entries'
 * weighted mean age (rounds since their queries; updates in async mode),
 * the step is multiplied by min(1, 2n/a).  Steady, a is about 1.5n and
 * the step whole; a starved worker's entry (a loaded machine may leave
 * one unscheduled for seconds) or irregular delays make a grow, and the
 * step shrinks with it, so that step * L * (2a + 1) stays below pi, the
 * stability bound of x' = -step L x(t - a) (the rule of the delay-
 * adaptive steps above, on the table's mean delay), and a stale entry,
 * applied at every update until its worker answers, drives x less.
 * update: auto (the default) is table when the step is auto, in rounds
 * and async mode alike (on a badly conditioned problem the per-answer
 * rule stops far from the optimum where the table reaches it: case
 * autostep in bench/ANALYSIS.md), and answer when the job names a step,
 * so that an explicit step keeps the per-answer rule.  The table costs
 * the coordinator one gradient per worker; the running sum is refreshed
 * from the table every max(n, 16) answers (aia_table_add), so an update
 * costs O(dim) as the per-answer one does and rounding does not drift.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

/* Each choice parameter's values, bound by name (aia_arg_enum), so that
 * the order of the choices in params does not matter. */
enum { SCHED_CONSTANT, SCHED_INVSQRT, SCHED_STEP };
static const char *const schedules[] = {[SCHED_CONSTANT] = "constant",
                                        [SCHED_INVSQRT] = "invsqrt",
                                        [SCHED_STEP] = "step"};

enum { SCALE_NONE, SCALE_DIVIDE, SCALE_ADAPTIVE };
static const char *const scalings[] = {[SCALE_NONE] = "false",
                                       [SCALE_DIVIDE] = "true",
                                       [SCALE_ADAPTIVE] = "adaptive"};

enum { WEIGH_ROWS, WEIGH_EQUAL };
static const char *const weightings[] = {
    [WEIGH_ROWS] = "rows", [WEIGH_EQUAL] = "equal"};

enum { EVERY_ANSWER, EVERY_ROUND };
static const char *const everys[] = {[EVERY_ANSWER] = "answer",
                                     [EVERY_ROUND] = "round"};

enum { UPDATE_AUTO, UPDATE_ANSWER, UPDATE_TABLE };
static const char *const updates[] = {[UPDATE_AUTO] = "auto",
                                      [UPDATE_ANSWER] = "answer",
                                      [UPDATE_TABLE] = "table"};

static const struct aia_param params[] = {
    {"step", AIA_DOUBLE, "auto",
     "step size applied to each gradient (auto: 1/(2nL), n workers, L the "
     "problem's smoothness)",
     "auto", 1e-300, 1e300},
    {"batch", AIA_INT, "0",
     "rows per gradient, drawn with replacement (0: all the worker's rows)",
     NULL, 0, 1e12},
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
    {"momentum_every", AIA_ENUM, "answer",
     "answer: the momentum step at each answer; round: once a round, along "
     "the sum of the round's answers' steps (the same in async mode, where "
     "every answer is a round)",
     "answer|round", 0, 0},
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
    {"update", AIA_ENUM, "auto",
     "answer: x moves along each answer as it arrives; table: along the "
     "row-weighted mean of every worker's latest answer (incremental "
     "aggregated gradient, converges with a constant step); auto: table "
     "when the step is auto, else answer",
     "auto|answer|table", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct sgd {
    struct aia_method m; /* first: its descriptor functions take the state */
    double decay, momentum;
    int schedule, scale, by_rows, nworkers, by_table, per_round;
    uint64_t decay_every;
    double *v; /* coordinator: the velocity (momentum only) */
    /* coordinator, momentum_every: round: the sum of the round's steps
     * h * g, valid in its first `pending` answers' worth (the first
     * answer of a round assigns it) */
    double *acc;
    uint64_t pending;
    /* coordinator, update: table: every worker's latest answer, its
     * weight (rows) and round, in running sums */
    struct aia_table table;
};

static void destroy(void *state)
{
    struct sgd *s = state;
    if (s) {
        aia_table_free(&s->table);
        free(s->v);
        free(s->acc);
    }
    aia_method_destroy(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    const struct aia_value *a = ctx->args;
    int n = ctx->nworkers > 0 ? ctx->nworkers : 1;
    int update = aia_arg_enum(a, "update", updates, 3);
    int by_table = update == UPDATE_TABLE ||
                   (update == UPDATE_AUTO && isnan(aia_arg(a, "step")->d));
    struct sgd *s = aia_method_create(
        ctx, sizeof *s, 1.0 / (2.0 * n),
        by_table ? "1/(2nL), n workers, along the mean of their latest "
                   "answers (update: table): a round of updates is a step "
                   "1/(2L)"
                 : "1/(2nL), n workers: a round of answers is a step 1/(2L)",
        0x5347440000000000ull, 0, shape, err);
    if (!s)
        return -1;
    s->nworkers = n;
    s->by_table = by_table;
    s->schedule = aia_arg_enum(a, "schedule", schedules, 3);
    s->decay = aia_arg(a, "decay")->d;
    s->decay_every = (uint64_t)aia_arg(a, "decay_every")->i;
    s->momentum = aia_arg(a, "momentum")->d;
    s->scale = aia_arg_enum(a, "staleness_scaling", scalings, 3);
    int weighting = aia_arg_enum(a, "weighting", weightings, 2);
    s->by_rows = weighting == WEIGH_ROWS;
    int every = aia_arg_enum(a, "momentum_every", everys, 2);
    s->per_round = every == EVERY_ROUND;
    if (s->schedule < 0 || s->scale < 0 || weighting < 0 || update < 0 ||
        every < 0) {
        destroy(s);
        return aia_seterr(err, "schedule, staleness_scaling, weighting, "
                               "update or momentum_every: a value sgd does "
                               "not know");
    }
    if (s->per_round && !(s->momentum > 0)) {
        destroy(s);
        return aia_seterr(err, "momentum_every: round needs a momentum "
                               "above 0 (momentum: 0 applies every answer "
                               "as it arrives)");
    }
    if (ctx->role == AIA_ROLE_COORDINATOR) {
        size_t d = s->m.dim;
        if ((s->momentum > 0 && !(s->v = calloc(d ? d : 1, sizeof *s->v))) ||
            (s->per_round && !(s->acc = calloc(d ? d : 1, sizeof *s->acc)))) {
            destroy(s);
            return aia_seterr(err, "out of memory");
        }
        if (s->by_table &&
            aia_table_init(&s->table, (size_t)s->nworkers, d) < 0) {
            destroy(s);
            return aia_seterr(err,
                              "out of memory for a table of %d gradients "
                              "of dimension %zu",
                              ctx->nworkers, d);
        }
        /* every answer goes through aia_table_add: its sums are kept */
        s->table.running = s->by_table;
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

/* update: table: the answer replaces its worker's entry; the direction
 * is the entries' weighted mean, sum / total.  Returned in scale: 1/total
 * times the age factor min(1, 2n / age), age the entries' weighted mean
 * age in rounds (updates, in async mode). */
static int table_absorb(struct sgd *s, const double *answer,
                        const struct aia_answer_info *info, double *scale,
                        struct aia_error *err)
{
    struct aia_table *t = &s->table;
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    double w = s->by_rows && info->rows > 0 ? (double)info->rows : 1.0;
    aia_table_add(t, (size_t)info->worker, answer, w, info->sent_round);
    aia_table_heard(t, info->round);
    double age = aia_table_mean_age(t), most = 2.0 * s->nworkers;
    *scale = (age > most ? most / age : 1.0) / t->total;
    return 0;
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct sgd *s = state;
    double h = step_size(s, info->round, info->staleness);
    double *x = s->m.x;
    if (s->by_table) {
        double scale = 0;
        if (table_absorb(s, answer, info, &scale, err) < 0)
            return -1;
        h *= scale;
        answer = s->table.sum;
    } else if (s->by_rows)
        /* Each worker's answer is the mean gradient of its own rows:
         * weighted by its share, a round of answers adds up to the whole
         * gradient. */
        h *= aia_row_weight(info, s->nworkers);
    if (s->per_round) {
        /* the round's end applies the momentum to the sum (query) */
        double *acc = s->acc;
        if (s->pending++ == 0)
            for (size_t j = 0; j < s->m.dim; j++)
                acc[j] = h * answer[j];
        else
            for (size_t j = 0; j < s->m.dim; j++)
                acc[j] += h * answer[j];
        return 0;
    }
    if (!s->v) {
        for (size_t j = 0; j < s->m.dim; j++)
            x[j] -= h * answer[j];
        return 0;
    }
    for (size_t j = 0; j < s->m.dim; j++) {
        s->v[j] = s->momentum * s->v[j] - h * answer[j];
        x[j] += s->v[j];
    }
    return 0;
}

/* momentum_every: round: the end of a round, v <- beta v - acc (acc the
 * sum of the round's steps h g), x <- x + v; then the query, x.  The
 * first answer of a round assigns acc, so that a round of one answer
 * (every round, in async mode) is the per-answer rule to the bit. */
static int query(void *state, double *q, struct aia_error *err)
{
    struct sgd *s = state;
    if (s->per_round && s->pending > 0) {
        double *x = s->m.x, *v = s->v, beta = s->momentum;
        const double *acc = s->acc;
        for (size_t j = 0; j < s->m.dim; j++) {
            v[j] = beta * v[j] - acc[j];
            x[j] += v[j];
        }
        s->pending = 0;
    }
    return aia_method_init(state, q, err);
}

/* Checkpoints: the iterate, then the velocity when there is momentum,
 * then with update: table the table (aia_table_save: its gradients,
 * their rows and their rounds), then with momentum_every: round the
 * round's sum and the count of answers in it (a state saved within a
 * round resumes it), then with update: table the table's running sums
 * (aia_table_save_sums; a state without them loads too, summed afresh). */
static size_t sums_size(const struct sgd *s)
{
    return s->by_table ? aia_table_sums_len(&s->table) * sizeof(double) : 0;
}

static size_t state_size(void *state)
{
    struct sgd *s = state;
    size_t n = s->by_table ? (size_t)s->nworkers : 0;
    size_t r = s->per_round ? s->m.dim + 1 : 0;
    return ((s->v ? 2 : 1) * s->m.dim + n * (s->m.dim + 2) + r) *
               sizeof(double) +
           sums_size(s);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct sgd *s = state;
    double *p = buf;
    (void)err;
    memcpy(p, s->m.x, s->m.dim * sizeof *p);
    p += s->m.dim;
    if (s->v) {
        memcpy(p, s->v, s->m.dim * sizeof *p);
        p += s->m.dim;
    }
    if (s->by_table) {
        aia_table_save(&s->table, p);
        p += (size_t)s->nworkers * (s->m.dim + 2);
    }
    if (s->per_round) {
        memcpy(p, s->acc, s->m.dim * sizeof *p);
        p[s->m.dim] = (double)s->pending;
        p += s->m.dim + 1;
    }
    if (s->by_table)
        aia_table_save_sums(&s->table, p);
    return 0;
}

/* The round's count and the table first: a bad one leaves the state as
 * it was. */
static int load(void *state, const void *buf, size_t len, struct aia_error *err)
{
    struct sgd *s = state;
    const double *p = buf;
    size_t dim = s->m.dim, head = (s->v ? 2 : 1) * dim;
    const double *round =
        p + head + (s->by_table ? (size_t)s->nworkers * (dim + 2) : 0);
    const double *sums = round + (s->per_round ? dim + 1 : 0);
    size_t full = state_size(state), bare = full - sums_size(s);
    int with = aia_state_len_sums(len, full, bare, err);
    if (with < 0)
        return -1;
    if (with && aia_table_sums_check(&s->table, p + head, sums, err) < 0)
        return -1;
    if (aia_state_finite(p, dim, "iterate", err) < 0 ||
        (s->v && aia_state_finite(p + dim, dim, "velocity", err) < 0) ||
        (s->per_round && aia_state_finite(round, dim, "round's sum", err) < 0))
        return -1;
    double pending = s->per_round ? round[dim] : 0;
    if (!(pending >= 0 && pending <= AIA_EXACT_BELOW &&
          pending == floor(pending)))
        return aia_seterr(err, "the round's count of answers is %g, not a "
                               "count",
                          pending);
    if (s->by_table && !aia_table_restore(&s->table, p + head, err))
        return -1;
    if (with)
        aia_table_load_sums(&s->table, sums);
    memcpy(s->m.x, p, dim * sizeof *p);
    if (s->v)
        memcpy(s->v, p + dim, dim * sizeof *p);
    if (s->per_round) {
        memcpy(s->acc, round, dim * sizeof *p);
        s->pending = (uint64_t)pending;
    }
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "sgd",
                    "1.0",
                    "asynchronous SGD: each answer is a gradient, applied "
                    "as it arrives, alone or in the mean of every worker's "
                    "latest (update)",
                    params),
    .flags = AIA_ALG_ADDITIVE | AIA_ALG_SEPARABLE,
    .create = create,
    .destroy = destroy,
    .init = aia_method_init,
    .worker = aia_method_worker,
    .absorb = absorb,
    .query = query,
    .state_size = state_size,
    .save = save,
    .load = load,
};
