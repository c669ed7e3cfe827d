/* subspace.c - subspace (block power) iteration with Rayleigh-Ritz, for a
 * problem whose model is a block of columns and that offers the rows'
 * Gram matrix applied to a block (struct aia_block: pca).
 *
 * The query is an orthonormal n x c block V, c = k + oversample (k the
 * model's columns), tagged with the number of the block modulo 256, which
 * every rounding codec keeps exact.  A worker answers with W_i = A_i'A_i V
 * over its rows, tagged the same; the coordinator takes the tag for the
 * newest block with that remainder, which is the block answered as long
 * as the answer is less than 256 blocks old (one older is left out, by
 * its staleness in rounds, a block a round).  The coordinator
 * keeps the latest W_i of every worker (DSAG's table) and at the end of a
 * round forms
 *
 *     S = sum_i W_i,  H = V'S = U diag(theta) U' (theta descending),
 *     V <- orth(S U)
 *
 * (Gram-Schmidt, twice): the Ritz rotation U orders the columns by their
 * Ritz values, so V's first k columns converge to the top k eigenvectors
 * of A'A, at the rate lambda_(c+1)/lambda_k a round; oversampling trades
 * wider products for fewer rounds.  The model reported is V's first k
 * columns (x = V - base).
 *
 * Stale answers: a round may end at nwait answers, and a worker's latest
 * W_i may then be of an older block V_s.  It is kept, carried into the
 * current basis as W_i (V_s'V), which is A_i'A_i P_s V (P_s the projection
 * on span V_s): exactly A_i'A_i V when the spans agree, as they do more
 * and more as the iteration converges; without the carry a Ritz rotation
 * or a sign flip between V_s and V would add columns that stand for other
 * directions.  The coordinator keeps the last `window` blocks for this; an
 * answer to an older block is left out of the sum (the log says how many)
 * until that worker's next answer.  The iteration reaches the exact
 * subspace as long as every worker is heard from within the window.
 *
 * The coordinator holds (nworkers + window + 2) n c doubles; a round costs
 * it n c per worker plus n c^2 per stale entry and the Ritz step
 * (n c^2 + c^3), nothing per answer beyond a copy.  The sum is formed
 * afresh each round in worker order, not kept by difference as answers
 * arrive, so that the same answers give the same block whatever order
 * they came in: a resumed run under mpirun ends where an uninterrupted
 * one does (sums by block updated on arrival broke that in their last
 * bits).
 *
 * Checkpoints: the block's tag, V, the window's blocks and the table.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#define STREAM_EXTRA 0x5355425300000000ull
#define TAGS 256 /* the blocks' tags are their numbers modulo TAGS */

static const struct aia_param params[] = {
    {"oversample", AIA_INT, "10",
     "extra columns q of the block (c = k + q, at most n): the top k "
     "converge at lambda_(k+q+1)/lambda_k a round",
     NULL, 0, 1e6},
    {"window", AIA_INT, "32",
     "blocks kept to carry a stale answer into the current basis; an "
     "answer to an older block is left out until its worker's next",
     NULL, 1, TAGS},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct subspace {
    const struct aia_block *blk;
    void *pstate;
    size_t n, k, c, nc;
    int nworkers;
    size_t window;
    /* coordinator */
    uint64_t tag;     /* the current block's number, 1 the first */
    double *v;        /* n x c: the current block */
    double *ring;     /* window x nc: recent blocks, by tag mod window */
    uint64_t *rtag;   /* their tags, 0: none */
    double *w;        /* nworkers x nc: the latest W_i */
    uint64_t *wtag;   /* their blocks' tags, 0: none yet */
    double *s, *y;    /* nc: the sum, S U */
    double *h, *u, *m; /* c x c: V'S, its eigenvectors, V_s'V */
    double *ev;       /* c */
    uint64_t left_out; /* answers too old for the window, so far */
    struct aia_rng rng;
    const struct aia_host *host;
};

static void destroy(void *state)
{
    struct subspace *s = state;
    if (!s)
        return;
    if (s->left_out && s->host && s->host->log)
        s->host->log(s->host, AIA_LOG_INFO,
                     "subspace: %llu answers were older than the window "
                     "of %zu blocks and left out",
                     (unsigned long long)s->left_out, s->window);
    free(s->v);
    free(s->ring);
    free(s->rtag);
    free(s->w);
    free(s->wtag);
    free(s->s);
    free(s->y);
    free(s->h);
    free(s->u);
    free(s->m);
    free(s->ev);
    free(s);
}

static int create(const struct aia_context *ctx, struct aia_shape *shape,
                  void **state, struct aia_error *err)
{
    const struct aia_problem_plugin *p = ctx->problem;
    if (!p->block)
        return aia_seterr(err, "problem '%s' gives no block (the rows' Gram "
                               "matrix applied to a block), which subspace "
                               "asks of the workers",
                          p->h.name);
    if (p->offers) {
        const char *name;
        if (!(p->offers(ctx->problem_state, &name) & AIA_OFFER_BLOCK))
            return aia_seterr(err, "this instance of problem '%s' offers no "
                                   "block, which subspace asks of the "
                                   "workers",
                              p->h.name);
    }
    const struct aia_block *b = p->block(ctx->problem_state);
    if (!b || !b->gram || b->n == 0 || b->cols == 0)
        return aia_seterr(err, "problem '%s' offers no block",
                          p->h.name);
    if (b->n * b->cols != p->dim(ctx->problem_state))
        return aia_seterr(err, "problem '%s': its block of %zu x %zu is not "
                               "its model of %zu",
                          p->h.name, b->n, b->cols,
                          p->dim(ctx->problem_state));
    struct subspace *s = calloc(1, sizeof *s);
    if (!s)
        return aia_seterr(err, "out of memory");
    s->blk = b;
    s->pstate = ctx->problem_state;
    s->host = ctx->host;
    s->n = b->n;
    s->k = b->cols;
    size_t q = (size_t)aia_arg(ctx->args, "oversample")->i;
    s->c = s->k + q < s->n ? s->k + q : s->n;
    s->nc = s->n * s->c;
    s->nworkers = ctx->nworkers > 0 ? ctx->nworkers : 1;
    s->window = (size_t)aia_arg(ctx->args, "window")->i;
    shape->query_len = 1 + s->nc;
    shape->answer_len = 1 + s->nc;
    *state = s;
    if (ctx->role != AIA_ROLE_COORDINATOR)
        return 0;
    size_t c = s->c, nc = s->nc;
    s->v = malloc(nc * sizeof *s->v);
    s->ring = malloc(s->window * nc * sizeof *s->ring);
    s->rtag = calloc(s->window, sizeof *s->rtag);
    s->w = malloc((size_t)s->nworkers * nc * sizeof *s->w);
    s->wtag = calloc((size_t)s->nworkers, sizeof *s->wtag);
    s->s = malloc(nc * sizeof *s->s);
    s->y = malloc(nc * sizeof *s->y);
    s->h = malloc(c * c * sizeof *s->h);
    s->u = malloc(c * c * sizeof *s->u);
    s->m = malloc(c * c * sizeof *s->m);
    s->ev = malloc(c * sizeof *s->ev);
    if (!s->v || !s->ring || !s->rtag || !s->w || !s->wtag || !s->s ||
        !s->y || !s->h || !s->u || !s->m || !s->ev) {
        destroy(s);
        *state = NULL;
        return aia_seterr(err, "out of memory for %d blocks of %zu x %zu",
                          s->nworkers, s->n, c);
    }
    aia_rng_seed(&s->rng, ctx->seed, STREAM_EXTRA);
    return 0;
}

/* Column j of the n x c block a, made orthogonal to columns 0 .. j-1 and
 * of norm 1 (Gram-Schmidt, twice: one pass loses orthogonality when the
 * columns are nearly dependent, as converging power iterates are); a
 * column that vanishes is replaced by a seeded random one.  */
static void orth_column(struct subspace *s, double *a, size_t j)
{
    size_t n = s->n, c = s->c;
    for (int tries = 0;; tries++) {
        double before = 0;
        for (size_t r = 0; r < n; r++)
            before += a[r * c + j] * a[r * c + j];
        for (int pass = 0; pass < 2; pass++)
            for (size_t l = 0; l < j; l++) {
                double d = 0;
                for (size_t r = 0; r < n; r++)
                    d += a[r * c + l] * a[r * c + j];
                for (size_t r = 0; r < n; r++)
                    a[r * c + j] -= d * a[r * c + l];
            }
        double nn = 0;
        for (size_t r = 0; r < n; r++)
            nn += a[r * c + j] * a[r * c + j];
        if (nn > 1e-28 * before && nn > 0) {
            double f = 1 / sqrt(nn);
            for (size_t r = 0; r < n; r++)
                a[r * c + j] *= f;
            return;
        }
        for (size_t r = 0; r < n; r++)
            a[r * c + j] = aia_rng_normal(&s->rng);
        if (tries > 8) /* n columns already span everything: cannot be */
            return;
    }
}

static void orth(struct subspace *s, double *a)
{
    for (size_t j = 0; j < s->c; j++)
        orth_column(s, a, j);
}

/* Keep the current block in the window. */
static void remember(struct subspace *s)
{
    size_t e = (size_t)(s->tag % s->window);
    memcpy(s->ring + e * s->nc, s->v, s->nc * sizeof *s->v);
    s->rtag[e] = s->tag;
}

static void write_query(const struct subspace *s, double *query)
{
    query[0] = (double)(s->tag % TAGS);
    memcpy(query + 1, s->v, s->nc * sizeof *query);
}

static int init(void *state, double *query, struct aia_error *err)
{
    struct subspace *s = state;
    size_t n = s->n, k = s->k, c = s->c;
    (void)err;
    for (size_t r = 0; r < n; r++)
        for (size_t j = 0; j < c; j++)
            s->v[r * c + j] = j < k && s->blk->base
                                  ? s->blk->base[r * k + j]
                                  : aia_rng_normal(&s->rng);
    orth(s, s->v);
    s->tag = 1;
    remember(s);
    write_query(s, query);
    return 0;
}

static int worker(void *state, const double *query, double *answer,
                  const struct aia_step *step, struct aia_error *err)
{
    struct subspace *s = state;
    (void)step;
    answer[0] = query[0];
    return s->blk->gram(s->pstate, query + 1, s->c, answer + 1, err);
}

static int absorb(void *state, const double *answer,
                  const struct aia_answer_info *info, struct aia_error *err)
{
    struct subspace *s = state;
    if (info->worker < 0 || info->worker >= s->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          info->worker, s->nworkers);
    double r = answer[0];
    if (!(r >= 0 && r < TAGS) || r != floor(r))
        return aia_seterr(err, "an answer from worker %d tagged %g, which "
                               "no block is",
                          info->worker, r);
    /* the newest block with that remainder */
    uint64_t back = (s->tag - (uint64_t)r) % TAGS;
    if (back >= s->tag)
        return aia_seterr(err, "an answer from worker %d tagged %g, but "
                               "block %llu is the first",
                          info->worker, r, (unsigned long long)s->tag);
    uint64_t t = s->tag - back;
    if (info->staleness >= TAGS) {
        s->left_out++;
        return 0;
    }
    size_t i = (size_t)info->worker;
    memcpy(s->w + i * s->nc, answer + 1, s->nc * sizeof *answer);
    s->wtag[i] = t;
    return 0;
}

/* The eigenvalues (ev, descending) and eigenvectors (the columns of u,
 * row-major c x c) of the symmetric c x c matrix h (destroyed): cyclic
 * Jacobi, then sorted. */
static void eigen(double *h, double *u, double *ev, size_t c)
{
    aia_jacobi(h, u, ev, c);
    /* each vector's largest entry positive: near convergence U is then
     * near a permutation, not a random flip of V's columns */
    for (size_t a = 0; a < c; a++) {
        size_t big = 0;
        for (size_t i = 1; i < c; i++)
            if (fabs(u[i * c + a]) > fabs(u[big * c + a]))
                big = i;
        if (u[big * c + a] < 0)
            for (size_t i = 0; i < c; i++)
                u[i * c + a] = -u[i * c + a];
    }
    aia_eig_descending(u, ev, c);
}

/* out (n x c) += a (n x c) times b (c x c). */
static void mul_add(const double *a, const double *b, double *out, size_t n,
                    size_t c)
{
    for (size_t r = 0; r < n; r++)
        for (size_t l = 0; l < c; l++) {
            double x = a[r * c + l];
            if (x != 0)
                for (size_t j = 0; j < c; j++)
                    out[r * c + j] += x * b[l * c + j];
        }
}

/* g (c x c) = a' b, a and b n x c. */
static void tmul(const double *a, const double *b, double *g, size_t n,
                 size_t c)
{
    memset(g, 0, c * c * sizeof *g);
    for (size_t r = 0; r < n; r++)
        for (size_t l = 0; l < c; l++) {
            double x = a[r * c + l];
            for (size_t j = 0; j < c; j++)
                g[l * c + j] += x * b[r * c + j];
        }
}

static int query(void *state, double *q, struct aia_error *err)
{
    struct subspace *s = state;
    size_t n = s->n, c = s->c, nc = s->nc;
    (void)err;
    memset(s->s, 0, nc * sizeof *s->s);
    for (size_t i = 0; i < (size_t)s->nworkers; i++) {
        uint64_t t = s->wtag[i];
        const double *w = s->w + i * nc;
        if (t == 0)
            continue;
        if (t == s->tag) {
            for (size_t j = 0; j < nc; j++)
                s->s[j] += w[j];
            continue;
        }
        size_t e = (size_t)(t % s->window);
        if (s->rtag[e] != t) {
            s->left_out++;
            continue;
        }
        tmul(s->ring + e * nc, s->v, s->m, n, c); /* V_s'V */
        mul_add(w, s->m, s->s, n, c);
    }
    tmul(s->v, s->s, s->h, n, c);
    for (size_t a = 0; a < c; a++) /* symmetric: stale parts may not be */
        for (size_t b = a + 1; b < c; b++)
            s->h[a * c + b] = s->h[b * c + a] =
                0.5 * (s->h[a * c + b] + s->h[b * c + a]);
    eigen(s->h, s->u, s->ev, c);
    memset(s->y, 0, nc * sizeof *s->y);
    mul_add(s->s, s->u, s->y, n, c);
    orth(s, s->y);
    memcpy(s->v, s->y, nc * sizeof *s->v);
    s->tag++;
    remember(s);
    write_query(s, q);
    return 0;
}

/* The model: V's first k columns, less the problem's base. */
static int iterate(void *state, double *x, struct aia_error *err)
{
    struct subspace *s = state;
    size_t n = s->n, k = s->k, c = s->c;
    (void)err;
    for (size_t r = 0; r < n; r++)
        for (size_t j = 0; j < k; j++)
            x[r * k + j] = s->v[r * c + j] -
                           (s->blk->base ? s->blk->base[r * k + j] : 0);
    return 0;
}

/* Checkpoint: tag, left_out, the rng, V, the window's tags and blocks,
 * the table's tags and blocks; tags as doubles (exact below 2^53). */
static size_t state_size(void *state)
{
    struct subspace *s = state;
    size_t words = 2 + 4 + s->nc + s->window * (1 + s->nc) +
                   (size_t)s->nworkers * (1 + s->nc);
    return words * sizeof(double);
}

static int save(void *state, void *buf, struct aia_error *err)
{
    struct subspace *s = state;
    double *p = buf;
    (void)err;
    *p++ = (double)s->tag;
    *p++ = (double)s->left_out;
    for (int i = 0; i < 4; i++) /* the bits, as they are */
        memcpy(p++, &s->rng.s[i], sizeof *p);
    memcpy(p, s->v, s->nc * sizeof *p);
    p += s->nc;
    for (size_t e = 0; e < s->window; e++) {
        *p++ = (double)s->rtag[e];
        memcpy(p, s->ring + e * s->nc, s->nc * sizeof *p);
        p += s->nc;
    }
    for (size_t i = 0; i < (size_t)s->nworkers; i++) {
        *p++ = (double)s->wtag[i];
        memcpy(p, s->w + i * s->nc, s->nc * sizeof *p);
        p += s->nc;
    }
    return 0;
}

/* Whether v is a whole count from least to most. */
static int count_in(double v, double least, double most)
{
    return v >= least && v <= most && v == floor(v);
}

/* What in the checkpoint at p is out of bounds: its name, with its
 * index in *at (a window slot or a worker) and its value in *v; NULL
 * when nothing is.  Every field is checked before any is used: each tag
 * becomes a uint64_t (a double past 2^64 or below 0 is undefined there),
 * and a window slot holds only the blocks whose number is its index
 * modulo the window. */
static const char *fields_bad(const struct subspace *s, const double *p,
                              size_t *at, double *v)
{
    const double exact = AIA_EXACT_BELOW, tag = p[0];
    *at = 0;
    if (!count_in(tag, 1, exact - 1))
        return *v = tag, "block number";
    if (!count_in(p[1], 0, exact - 1))
        return *v = p[1], "count of answers left out";
    p += 6;
    for (size_t j = 0; j < s->nc; j++)
        if (!isfinite(p[j]))
            return *at = j, *v = p[j], "block";
    p += s->nc;
    for (size_t e = 0; e < s->window; e++, p += 1 + s->nc) {
        *at = e;
        if (!count_in(p[0], 0, tag) ||
            (p[0] > 0 && (uint64_t)p[0] % s->window != e))
            return *v = p[0], "window's block number";
        for (size_t j = 0; j < s->nc; j++)
            if (!isfinite(p[1 + j]))
                return *v = p[1 + j], "window's block";
    }
    for (size_t i = 0; i < (size_t)s->nworkers; i++, p += 1 + s->nc) {
        *at = i;
        if (!count_in(p[0], 0, tag))
            return *v = p[0], "worker's block number";
        for (size_t j = 0; j < s->nc; j++)
            if (!isfinite(p[1 + j]))
                return *v = p[1 + j], "worker's block";
    }
    return NULL;
}

static int load(void *state, const void *buf, size_t len,
                struct aia_error *err)
{
    struct subspace *s = state;
    if (len != state_size(s))
        return aia_seterr(err, "a checkpoint of %zu bytes for a state of %zu "
                               "(another block, window or pool)",
                          len, state_size(s));
    const double *p = buf;
    size_t at;
    double v;
    const char *bad = fields_bad(s, p, &at, &v);
    if (bad)
        return aia_seterr(err, "damaged: its %s (%zu) is %g: out of bounds",
                          bad, at, v);
    s->tag = (uint64_t)*p++;
    s->left_out = (uint64_t)*p++;
    for (int i = 0; i < 4; i++)
        memcpy(&s->rng.s[i], p++, sizeof *p);
    memcpy(s->v, p, s->nc * sizeof *p);
    p += s->nc;
    for (size_t e = 0; e < s->window; e++) {
        s->rtag[e] = (uint64_t)*p++;
        memcpy(s->ring + e * s->nc, p, s->nc * sizeof *p);
        p += s->nc;
    }
    for (size_t i = 0; i < (size_t)s->nworkers; i++) {
        s->wtag[i] = (uint64_t)*p++;
        memcpy(s->w + i * s->nc, p, s->nc * sizeof *p);
        p += s->nc;
    }
    return 0;
}

const struct aia_algorithm_plugin aia_algorithm_plugin = {
    .h = AIA_HEADER(AIA_KIND_ALGORITHM, struct aia_algorithm_plugin,
                    "subspace", "1.0",
                    "subspace iteration with Rayleigh-Ritz over the "
                    "workers' latest A_i'A_i V (DSAG's table, stale "
                    "answers carried into the current basis)",
                    params),
    .flags = AIA_ALG_BLOCK,
    .create = create,
    .destroy = destroy,
    .init = init,
    .worker = worker,
    .absorb = absorb,
    .query = query,
    .iterate = iterate,
    .state_size = state_size,
    .save = save,
    .load = load,
};
