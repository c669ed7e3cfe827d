/* newton.c - Newton-CG over the pool: the workers answer requests for the
 * loss and gradient of their rows at a point and for Hessian-vector
 * products (the problem's hvp), the coordinator solves H d = -g by
 * conjugate gradients, one Hessian-vector product a round, and takes a
 * backtracking line search along d (newton.h, struct aia_ncg).
 *
 * A Newton step costs one gradient round, one round per CG step (at most
 * cg; stopped at |r| <= min(0.5, sqrt|g|) |g|, which gives superlinear
 * convergence), and one gradient round per trial of the line search; the
 * trial's gradient is the next step's, so an accepted full step costs no
 * more.  With warm (the default) a trial also gives H d at it, and the
 * next step's CG starts from the best multiple of d: about one product
 * a step fewer on small problems, a few more rounds on others
 * (bench/RESULTS.md, "Second-order methods against liblinear").  Near
 * the optimum every trial is accepted and convergence is quadratic: tens
 * of rounds for 10 digits where gd needs thousands.
 *
 * Stragglers (plugins/second.h): a gradient request waits for every
 * worker, over as many rounds as it takes.  hessian: fastest (the
 * default) takes a step's Hessian-vector products from the workers that
 * answered its first one by the end of that round (with pool.wait nwait,
 * the nwait fastest): a subsampled Hessian, fixed for the step so that
 * CG solves one positive definite system and d stays a descent
 * direction, while the gradient and the line search stay exact, so the
 * iterates still converge to the optimum (Byrd, Chin, Neveitt and
 * Nocedal, "On the use of stochastic Hessian information in optimization
 * methods for machine learning", SIAM J. Optim. 2011).  hessian: all
 * waits for every worker there too.  A worker declared dead never
 * answers: the requests that need it wait until the job's limits.
 *
 * Checkpoints: the machine's block (scalars, x, g, d, r, p, the trial
 * point and H d) and the step's sample of workers; a resumed run asks
 * its current request again.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>
#include <aiarun/newton.h>

#include "second.h"

enum { H_ALL, H_FASTEST };
static const char *const hessians[] = {
    [H_ALL] = "all", [H_FASTEST] = "fastest"};

static const struct aia_param params[] = {
    {"cg", AIA_INT, "50",
     "most conjugate-gradient steps (Hessian-vector rounds) a Newton step",
     NULL, 1, 200},
    {"tolerance", AIA_DOUBLE, "0",
     "stop asking for new points once the gradient's norm is at most this "
     "(0: never)",
     NULL, 0, 1e300},
    {"warm", AIA_BOOL, "true",
     "start a step's conjugate gradients from the best multiple of the "
     "last step, with H d asked beside the trial's gradient (false: from "
     "0, answers of dim + 3 values)",
     NULL, 0, 0},
    {"hessian", AIA_ENUM, "fastest",
     "whose rows the Hessian-vector products of a step come from: all "
     "workers, or those that answered the step's first one in its round",
     "all|fastest", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct newton {
    struct second sc; /* first */
    struct aia_ncg m; /* coordinator */
    int fastest;
    unsigned char *sample; /* coordinator: the step's workers for H v */
};

static void destroy(void *state)
{
    struct newton *s = state;
    if (!s)
        return;
    second_close(&s->sc);
    aia_ncg_free(&s->m);
    free(s->sample);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    struct newton *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->fastest = aia_arg_enum(ctx->args, "hessian", hessians, 2) == H_FASTEST;
    int warm = (int)aia_arg(ctx->args, "warm")->i;
    if (second_open(&s->sc, ctx, 1 + warm, shape, err) < 0)
        goto fail;
    if (ctx->role == AIA_ROLE_COORDINATOR) {
        int cg = (int)aia_arg(ctx->args, "cg")->i;
        double tol = aia_arg(ctx->args, "tolerance")->d;
        if (aia_ncg_init(&s->m, s->sc.dim, cg, tol, NULL) < 0 ||
            !(s->sample = malloc((size_t)s->sc.nworkers))) {
            aia_seterr(err, "out of memory for Newton-CG of dimension %zu",
                       s->sc.dim);
            goto fail;
        }
        s->m.warm = warm;
        s->sc.model = s->m.x;
        memset(s->sample, 1, (size_t)s->sc.nworkers);
    }
    *state = s;
    return 0;
fail:
    destroy(s);
    return -1;
}

/* Collect the request the machine needs now: a gradient from every
 * worker; with hessian: fastest, a step's first product from whoever
 * answers by the round's end (none wanted), the others from the same
 * workers. */
static void start(struct newton *s, struct aia_need *need)
{
    const unsigned char *want = NULL;
    aia_ncg_need(&s->m, need);
    if (need->kind == AIA_REQ_HVP && s->fastest) {
        if (s->m.s[AIA_NCG_CGIT] == 0)
            memset(s->sample, 0, (size_t)s->sc.nworkers);
        want = s->sample;
    }
    aia_collect_start(&s->sc.col, s->m.s[AIA_NCG_REQ], want);
}

static void ask(struct newton *s, double *query)
{
    struct aia_need need;
    start(s, &need);
    second_write(&s->sc, &need, s->m.s[AIA_NCG_REQ], query);
}

static int init(void *state, double *query, struct aia_error *err)
{
    (void)err;
    ask(state, query);
    return 0;
}

static int query(void *state, double *query, struct aia_error *err)
{
    struct newton *s = state;
    struct aia_collect *c = &s->sc.col;
    double *sc = s->m.s;
    (void)err;
    if (!aia_collect_done(c)) { /* the same request, again */
        struct aia_need need;
        aia_ncg_need(&s->m, &need);
        second_write(&s->sc, &need, sc[AIA_NCG_REQ], query);
        return 0;
    }
    int first_hvp =
        (int)sc[AIA_NCG_PHASE] == AIA_PH_CG && sc[AIA_NCG_CGIT] == 0;
    if (first_hvp)
        memcpy(s->sample, c->got, (size_t)s->sc.nworkers);
    double f = aia_collect_mean(c, s->sc.mean);
    aia_ncg_feed(&s->m, f, s->sc.mean);
    sc[AIA_NCG_REQ] += 1;
    ask(s, query);
    return 0;
}

/* The machine's block, then the step's sample as 0/1 doubles. */
static size_t state_size(void *state)
{
    struct newton *s = state;
    return (aia_ncg_len(s->sc.dim) + (size_t)s->sc.nworkers) * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct newton *s = state;
    double *p = buf;
    size_t len = aia_ncg_len(s->sc.dim);
    (void)err;
    memcpy(p, s->m.mem, len * sizeof *p);
    for (int w = 0; w < s->sc.nworkers; w++)
        p[len + (size_t)w] = s->sample[w];
    return 0;
}

static int load(void *state, const void *buf, size_t size,
                struct aia_error *err)
{
    struct newton *s = state;
    const double *p = buf;
    size_t len = aia_ncg_len(s->sc.dim);
    if (aia_state_len(size, state_size(state), err) < 0)
        return -1;
    if (!aia_ncg_block_ok(&s->m, p))
        return aia_seterr(err, "not a Newton-CG state (phase %g, request %g)",
                          p[AIA_NCG_PHASE], p[AIA_NCG_REQ]);
    for (int w = 0; w < s->sc.nworkers; w++)
        if (p[len + (size_t)w] != 0 && p[len + (size_t)w] != 1)
            return aia_seterr(err, "worker %d's sample flag %g: not 0 or 1", w,
                              p[len + (size_t)w]);
    memcpy(s->m.mem, p, len * sizeof *p);
    for (int w = 0; w < s->sc.nworkers; w++)
        s->sample[w] = (unsigned char)p[len + (size_t)w];
    /* the current request starts over: its partial sums were not saved,
     * and the workers are asked again */
    struct aia_need need;
    start(s, &need);
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin, "newton",
                    "1.0",
                    "Newton-CG: the workers give gradients and "
                    "Hessian-vector products of their rows, the "
                    "coordinator solves for the step by conjugate "
                    "gradients and takes a line search",
                    params),
    .flags = AIA_ALG_HVP,
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = second_worker,
    .absorb = second_absorb,
    .query = query,
    .iterate = second_iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
