/* lrmse.c - linear regression with the mean squared error.
 *
 *     f(x) = 1/(2m) * sum_i (a_i . x - b_i)^2,   grad f(x) = A'(Ax - b)/m
 *
 * Data are generated from the seed: a_ij ~ N(0, 1), b = A x_true + noise e
 * with e ~ N(0, 1).  Row r is drawn from its own random stream, so a worker
 * builds exactly its own rows, and every rank agrees on every row.
 *
 * The coordinator's view (AIA_PART_ALL) never stores A: on first need it
 * streams the rows once into G = A'A/m, c = A'b/m, and then the loss costs
 * O(n^2).  The optimum solves G x = c by Cholesky; once it is known the
 * loss is computed as f* + (x - x*)' G (x - x*) / 2, which keeps the
 * suboptimality accurate down to rounding of f* itself.
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

/* Above this dimension the Gram matrix is not built; the loss streams the
 * rows instead and the optimum is not computed. */
#define GRAM_MAX 4096

#define STREAM_XTRUE 0x4c524d5345000000ull

enum { P_ROWS, P_COLS, P_NOISE };

static const struct aia_param params[] = {
    {"rows", AIA_INT, "1000", "rows m of the generated data, over all "
                              "workers", NULL, 1, 1e12},
    {"cols", AIA_INT, "10", "columns n: the model's dimension", NULL, 1,
     1e9},
    {"noise", AIA_DOUBLE, "0.1", "standard deviation of the noise added to "
                                 "b", NULL, 0, 1e6},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct lrmse {
    size_t m, n;
    double noise;
    uint64_t seed;
    double *xtrue;
    int all;       /* the coordinator's view */
    size_t k;      /* rows held */
    double *A, *b; /* k x n row-major, k (workers) */
    double *row;   /* n scratch */
    /* coordinator */
    double *G, *c; /* n x n, n: A'A/m, A'b/m */
    double bb;     /* b'b/m */
    int opt;       /* 0 not tried, 1 known, -1 impossible */
    double *xopt, fopt, *d;
    struct aia_error why; /* why the optimum is not known */
};

static void gen_row(const struct lrmse *p, size_t r, double *a, double *b)
{
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, 2 * (uint64_t)r + 1);
    double dot = 0;
    for (size_t j = 0; j < p->n; j++) {
        a[j] = aia_rng_normal(&g);
        dot += a[j] * p->xtrue[j];
    }
    *b = dot + p->noise * aia_rng_normal(&g);
}

static void lrmse_close(void *state)
{
    struct lrmse *p = state;
    if (!p)
        return;
    free(p->xtrue);
    free(p->A);
    free(p->b);
    free(p->row);
    free(p->G);
    free(p->c);
    free(p->xopt);
    free(p->d);
    free(p);
}

/* Rows of part that this rank holds: their count, and when rows is not
 * NULL, their indices. */
static size_t owned(const struct aia_partition *part, size_t m, size_t *rows)
{
    if (part->scheme == AIA_PART_BLOCK) {
        size_t first = aia_partition_first(part, m, part->index);
        size_t last = aia_partition_first(part, m, part->index + 1);
        for (size_t r = first; rows && r < last; r++)
            rows[r - first] = r;
        return last - first;
    }
    size_t k = 0;
    for (size_t r = 0; r < m; r++)
        if (aia_partition_owner(part, m, r) == part->index) {
            if (rows)
                rows[k] = r;
            k++;
        }
    return k;
}

static int lrmse_open(const struct aia_context *ctx,
                      const struct aia_partition *part, void **state,
                      struct aia_error *err)
{
    struct lrmse *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->m = (size_t)ctx->args[P_ROWS].i;
    p->n = (size_t)ctx->args[P_COLS].i;
    p->noise = ctx->args[P_NOISE].d;
    p->seed = ctx->seed;
    p->all = part->index == AIA_PART_ALL;
    p->xtrue = malloc(p->n * sizeof *p->xtrue);
    p->row = malloc(p->n * sizeof *p->row);
    if (!p->xtrue || !p->row)
        goto nomem;
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, STREAM_XTRUE);
    for (size_t j = 0; j < p->n; j++)
        p->xtrue[j] = aia_rng_normal(&g);
    if (p->all) {
        p->k = p->m;
        *state = p;
        return 0;
    }
    p->k = owned(part, p->m, NULL);
    size_t *rows = malloc((p->k ? p->k : 1) * sizeof *rows);
    p->A = malloc((p->k ? p->k : 1) * p->n * sizeof *p->A);
    p->b = malloc((p->k ? p->k : 1) * sizeof *p->b);
    if (!rows || !p->A || !p->b) {
        free(rows);
        goto nomem;
    }
    owned(part, p->m, rows);
    for (size_t i = 0; i < p->k; i++)
        gen_row(p, rows[i], p->A + i * p->n, &p->b[i]);
    free(rows);
    *state = p;
    return 0;
nomem:
    lrmse_close(p);
    return aia_seterr(err, "out of memory for this rank's rows of %zu "
                           "columns",
                      (size_t)ctx->args[P_COLS].i);
}

static size_t lrmse_dim(void *state)
{
    return ((struct lrmse *)state)->n;
}

static size_t lrmse_rows(void *state)
{
    return ((struct lrmse *)state)->k;
}

/* Row i of what this rank holds, into a and *b. */
static const double *row(struct lrmse *p, size_t i, double *b)
{
    if (!p->all) {
        *b = p->b[i];
        return p->A + i * p->n;
    }
    gen_row(p, i, p->row, b);
    return p->row;
}

static double dot(const double *a, const double *x, size_t n)
{
    double s = 0;
    for (size_t j = 0; j < n; j++)
        s += a[j] * x[j];
    return s;
}

/* G = A'A/m, c = A'b/m, bb = b'b/m, once. */
static int gram(struct lrmse *p, struct aia_error *err)
{
    if (p->G)
        return 0;
    if (p->n > GRAM_MAX)
        return aia_seterr(err, "dimension %zu is above %d: no Gram matrix",
                          p->n, GRAM_MAX);
    size_t n = p->n;
    double *G = calloc(n * n, sizeof *G), *c = calloc(n, sizeof *c);
    if (!G || !c) {
        free(G);
        free(c);
        return aia_seterr(err, "out of memory for the %zu x %zu Gram matrix",
                          n, n);
    }
    double bb = 0;
    for (size_t r = 0; r < p->m; r++) {
        double b;
        gen_row(p, r, p->row, &b);
        const double *a = p->row;
        for (size_t j = 0; j < n; j++) {
            double aj = a[j];
            double *Gj = G + j * n;
            for (size_t l = j; l < n; l++)
                Gj[l] += aj * a[l];
            c[j] += aj * b;
        }
        bb += b * b;
    }
    double inv = 1.0 / (double)p->m;
    for (size_t j = 0; j < n; j++) {
        for (size_t l = j; l < n; l++)
            G[l * n + j] = G[j * n + l] *= inv;
        c[j] *= inv;
    }
    p->G = G;
    p->c = c;
    p->bb = bb * inv;
    return 0;
}

/* Mean of half the squared residuals over the rows held. */
static double residual_loss(struct lrmse *p, const double *x)
{
    double s = 0;
    for (size_t i = 0; i < p->k; i++) {
        double b;
        const double *a = row(p, i, &b);
        double r = dot(a, x, p->n) - b;
        s += r * r;
    }
    return p->k ? 0.5 * s / (double)p->k : 0;
}

/* In place: G = L L' (lower triangle), 0 or -1 when not positive
 * definite. */
static int cholesky(double *G, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double s = G[j * n + j];
        for (size_t k = 0; k < j; k++)
            s -= G[j * n + k] * G[j * n + k];
        if (!(s > 1e-12 * (1 + fabs(G[j * n + j]))))
            return -1;
        double l = sqrt(s);
        G[j * n + j] = l;
        for (size_t i = j + 1; i < n; i++) {
            double t = G[i * n + j];
            for (size_t k = 0; k < j; k++)
                t -= G[i * n + k] * G[j * n + k];
            G[i * n + j] = t / l;
        }
    }
    return 0;
}

static int solve(struct lrmse *p, struct aia_error *err)
{
    size_t n = p->n;
    if (gram(p, err) < 0)
        return -1;
    double *L = malloc(n * n * sizeof *L);
    p->xopt = malloc(n * sizeof *p->xopt);
    p->d = malloc(n * sizeof *p->d);
    if (!L || !p->xopt || !p->d) {
        free(L);
        return aia_seterr(err, "out of memory for the normal equations");
    }
    memcpy(L, p->G, n * n * sizeof *L);
    if (cholesky(L, n) < 0) {
        free(L);
        return aia_seterr(err, "the normal equations are singular (%zu rows, "
                               "%zu columns)",
                          p->m, n);
    }
    double *x = p->xopt;
    for (size_t i = 0; i < n; i++) { /* L y = c */
        double t = p->c[i];
        for (size_t k = 0; k < i; k++)
            t -= L[i * n + k] * x[k];
        x[i] = t / L[i * n + i];
    }
    for (size_t i = n; i-- > 0;) { /* L' x = y */
        double t = x[i];
        for (size_t k = i + 1; k < n; k++)
            t -= L[k * n + i] * x[k];
        x[i] = t / L[i * n + i];
    }
    free(L);
    p->fopt = residual_loss(p, x);
    return 0;
}

static int lrmse_optimum(void *state, double *x, double *f,
                         struct aia_error *err)
{
    struct lrmse *p = state;
    if (!p->all)
        return aia_seterr(err, "the optimum is known to the coordinator "
                               "only");
    if (p->opt == 0)
        p->opt = solve(p, &p->why) == 0 ? 1 : -1;
    if (p->opt < 0) {
        *err = p->why;
        return -1;
    }
    memcpy(x, p->xopt, p->n * sizeof *x);
    *f = p->fopt;
    return 0;
}

static int lrmse_loss(void *state, const double *x, double *f,
                      struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->n;
    if (!p->all || gram(p, err) < 0) {
        *f = residual_loss(p, x);
        return 0;
    }
    const double *G = p->G;
    if (p->opt == 1) {
        for (size_t j = 0; j < n; j++)
            p->d[j] = x[j] - p->xopt[j];
        double q = 0;
        for (size_t j = 0; j < n; j++)
            q += p->d[j] * dot(G + j * n, p->d, n);
        *f = p->fopt + 0.5 * q;
        return 0;
    }
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += x[j] * (0.5 * dot(G + j * n, x, n) - p->c[j]);
    *f = q + 0.5 * p->bb;
    return 0;
}

static int lrmse_gradient(void *state, const double *x, const size_t *idx,
                          size_t nidx, double *g, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->n, count = idx ? nidx : p->k;
    memset(g, 0, n * sizeof *g);
    if (count == 0)
        return aia_seterr(err, "a gradient over no rows");
    if (p->all && !idx && gram(p, err) == 0) {
        for (size_t j = 0; j < n; j++)
            g[j] = dot(p->G + j * n, x, n) - p->c[j];
        return 0;
    }
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        if (i >= p->k)
            return aia_seterr(err, "row %zu is not among the %zu held", i,
                              p->k);
        double b;
        const double *a = row(p, i, &b);
        double r = dot(a, x, n) - b;
        for (size_t j = 0; j < n; j++)
            g[j] += r * a[j];
    }
    double inv = 1.0 / (double)count;
    for (size_t j = 0; j < n; j++)
        g[j] *= inv;
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "lrmse",
                    "1.0",
                    "least-squares linear regression on generated data "
                    "(loss: half the mean squared error)",
                    params),
    .open = lrmse_open,
    .close = lrmse_close,
    .dim = lrmse_dim,
    .rows = lrmse_rows,
    .loss = lrmse_loss,
    .gradient = lrmse_gradient,
    .optimum = lrmse_optimum,
};
