/* lrmse.c - linear regression with the mean squared error, optionally
 * ridge-regularised.
 *
 *     f(x) = 1/(2m) * sum_i (a_i . x - b_i)^2 + lambda/2 * ||x||^2
 *     grad f(x) = A'(Ax - b)/m + lambda x
 *
 * with lambda the `ridge` parameter (0 by default: plain least squares).
 *
 * Generated data come from the seed: a_ij ~ N(0, 1) * s_j, b = A x_true +
 * noise e with e ~ N(0, 1).  The column scales s_j = kappa^(-j/(2(n-1)))
 * (kappa the `condition` parameter, 1 by default) spread the eigenvalues
 * of A'A/m from about 1 down to about 1/kappa, so that its condition
 * number is about kappa: a badly conditioned problem on demand.  Row r is
 * drawn from its own random stream, so a worker builds exactly its own
 * rows, and every rank agrees on every row.
 *
 * Fault injection, for experiments: the workers named in `corrupt` (pool
 * indices) add noise of standard deviation corrupt_noise to the targets
 * of their generated rows (from a stream of their own), so that their
 * part is garbage while the coordinator's view, its loss and its optimum
 * stay those of the clean rows.  Rows from a data file are never touched.
 *
 * Rows from a data file (ctx->data: b is the target, a the features, dense
 * or sparse) replace the generated ones; a worker is handed its own rows
 * and uses them as they are.  Sparse rows are never expanded: the dot
 * products, gradients and Gram updates touch their stored entries only.
 *
 * The coordinator's view (AIA_PART_ALL) never stores A: on first need it
 * streams the rows once into G = A'A/m, c = A'b/m, and then the loss costs
 * O(n^2).  The optimum solves (G + lambda I) x = c by Cholesky; once it is
 * known the loss is computed as f* + (x - x*)' (G + lambda I) (x - x*) / 2
 * (exact for a quadratic), which keeps the suboptimality accurate down to
 * rounding of f* itself.  With a data file the coordinator holds no row:
 * each worker's summary is its sums of a a', b a and b^2, and the
 * coordinator's G, c and b'b/m are the pool's sums (combine).
 */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

/* A loop the compiler may vectorize freely (-fopenmp-simd, see
 * configure.ac); nothing without it. */
#ifdef AIA_OMP_SIMD
#define SIMD_LOOP _Pragma("omp simd")
#else
#define SIMD_LOOP
#endif

/* Above this dimension the Gram matrix is not built; the loss streams the
 * rows instead and the optimum is not computed. */
#define GRAM_MAX 4096

#define STREAM_XTRUE 0x4c524d5345000000ull
#define STREAM_CORRUPT 0x4c52434f52000000ull

enum { P_ROWS, P_COLS, P_NOISE, P_RIDGE, P_CONDITION, P_CORRUPT,
       P_CORRUPT_NOISE };

static const struct aia_param params[] = {
    {"rows", AIA_INT, "1000", "rows m of the generated data, over all workers",
     NULL, 1, 1e12},
    {"cols", AIA_INT, "10", "columns n: the model's dimension", NULL, 1, 1e9},
    {"noise", AIA_DOUBLE, "0.1", "standard deviation of the noise added to b",
     NULL, 0, 1e6},
    {"ridge", AIA_DOUBLE, "0",
     "L2 penalty lambda: the loss gains lambda/2 ||x||^2", NULL, 0, 1e12},
    {"condition", AIA_DOUBLE, "1",
     "condition number of the generated columns' Gram matrix (1: as drawn)",
     NULL, 1, 1e15},
    {"corrupt", AIA_INTS, "[]",
     "workers (pool indices) whose generated targets get corrupt_noise "
     "(a fault injected for experiments; the coordinator's loss stays the "
     "clean rows')",
     NULL, 0, 1e6},
    {"corrupt_noise", AIA_DOUBLE, "100",
     "standard deviation of the noise added to the corrupt workers' targets",
     NULL, 0, 1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

struct lrmse {
    size_t m, n;
    double noise, ridge;
    uint64_t seed;
    double *xtrue;
    double *scale; /* column scales; NULL when the condition is 1 */
    const struct aia_dataset *data; /* rows given, or NULL: generated */
    int all;       /* the coordinator's view */
    size_t k;      /* rows held */
    double *A, *b; /* generated rows of a worker: k x n row-major, k */
    double *row;   /* n scratch */
    /* coordinator */
    double *G, *c; /* n x n, n: A'A/m, A'b/m */
    double bb;     /* b'b/m */
    int opt;       /* 0 not tried, 1 known, -1 impossible */
    double *xopt, fopt, *d;
    struct aia_error why; /* why the optimum is not known */
};

/* One row, dense (a: n entries) or sparse (nnz entries col/val). */
struct row {
    const double *a;
    const uint32_t *col;
    const double *val;
    size_t nnz;
    double b;
};

static void gen_row(const struct lrmse *p, size_t r, double *a, double *b)
{
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, 2 * (uint64_t)r + 1);
    double dot = 0;
    for (size_t j = 0; j < p->n; j++) {
        a[j] = aia_rng_normal(&g);
        if (p->scale)
            a[j] *= p->scale[j];
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
    free(p->scale);
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

/* The rows given are complete and their sparse columns in range, so that
 * no later access can go astray.  Rows are named from 1 in messages. */
static int check_data(const struct aia_dataset *d, int all,
                      struct aia_error *err)
{
    const char *src = d->source ? d->source : "the data";
    if (d->cols == 0)
        return aia_seterr(err, "%s: no feature columns", src);
    if (all && d->rows != 0 && d->rows != d->total_rows)
        return aia_seterr(err,
                          "%s: the coordinator was given %zu of the %zu rows",
                          src, d->rows, d->total_rows);
    if (d->rows == 0)
        return 0;
    if (!d->y || (!d->x && (!d->row_start || !d->col || !d->val)))
        return aia_seterr(err, "%s: rows without targets or features", src);
    if (d->x)
        return 0;
    for (size_t i = 0; i < d->rows; i++)
        for (size_t k = d->row_start[i]; k < d->row_start[i + 1]; k++)
            if (d->col[k] >= d->cols)
                return aia_seterr(err, "%s: row %zu: column %lu of %zu", src,
                                  (d->row_ids ? d->row_ids[i] : i) + 1,
                                  (unsigned long)d->col[k] + 1, d->cols);
    return 0;
}

/* Say once, on the coordinator, that the generator's parameters given in
 * the job have no effect: the rows come from the data file. */
static void note_ignored(const struct aia_context *ctx)
{
    static const int gen[] = {P_ROWS,      P_COLS,    P_NOISE,
                              P_CONDITION, P_CORRUPT, P_CORRUPT_NOISE};
    if (ctx->role != AIA_ROLE_COORDINATOR || !ctx->host || !ctx->host->log)
        return;
    for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++)
        if (ctx->args[gen[i]].given)
            ctx->host->log(ctx->host, AIA_LOG_WARN,
                           "lrmse: %s is ignored: the rows come from %s",
                           ctx->args[gen[i]].name,
                           ctx->data->source ? ctx->data->source
                                             : "the data file");
}

static int open_data(struct lrmse *p, const struct aia_context *ctx,
                     struct aia_error *err)
{
    const struct aia_dataset *d = ctx->data;
    if (check_data(d, p->all, err) < 0)
        return -1;
    note_ignored(ctx);
    p->data = d;
    p->n = d->cols;
    p->m = d->total_rows;
    p->k = d->rows;
    return 0;
}

static int open_generated(struct lrmse *p, const struct aia_context *ctx,
                          const struct aia_partition *part)
{
    p->m = (size_t)ctx->args[P_ROWS].i;
    p->n = (size_t)ctx->args[P_COLS].i;
    p->noise = ctx->args[P_NOISE].d;
    double kappa = ctx->args[P_CONDITION].d;
    p->xtrue = malloc(p->n * sizeof *p->xtrue);
    if (!p->xtrue)
        return -1;
    struct aia_rng g;
    aia_rng_seed(&g, p->seed, STREAM_XTRUE);
    for (size_t j = 0; j < p->n; j++)
        p->xtrue[j] = aia_rng_normal(&g);
    /* Only scale when asked, so that condition 1 draws the very rows it
     * always drew. */
    if (kappa > 1 && p->n > 1) {
        if (!(p->scale = malloc(p->n * sizeof *p->scale)))
            return -1;
        for (size_t j = 0; j < p->n; j++)
            p->scale[j] = pow(kappa, -(double)j / (2.0 * (double)(p->n - 1)));
    }
    if (p->all) {
        p->k = p->m;
        return 0;
    }
    p->k = owned(part, p->m, NULL);
    size_t *rows = malloc((p->k ? p->k : 1) * sizeof *rows);
    p->A = malloc((p->k ? p->k : 1) * p->n * sizeof *p->A);
    p->b = malloc((p->k ? p->k : 1) * sizeof *p->b);
    if (!rows || !p->A || !p->b) {
        free(rows);
        return -1;
    }
    owned(part, p->m, rows);
    for (size_t i = 0; i < p->k; i++)
        gen_row(p, rows[i], p->A + i * p->n, &p->b[i]);
    free(rows);
    const struct aia_value *bad = &ctx->args[P_CORRUPT];
    for (size_t i = 0; i < bad->n; i++) {
        if (bad->ints[i] != part->index)
            continue;
        struct aia_rng bg;
        aia_rng_seed(&bg, p->seed, STREAM_CORRUPT + (uint64_t)part->index);
        for (size_t r = 0; r < p->k; r++)
            p->b[r] += ctx->args[P_CORRUPT_NOISE].d * aia_rng_normal(&bg);
        break;
    }
    return 0;
}

static int lrmse_open(const struct aia_context *ctx,
                      const struct aia_partition *part, void **state,
                      struct aia_error *err)
{
    struct lrmse *p = calloc(1, sizeof *p);
    if (!p)
        return aia_seterr(err, "out of memory");
    p->ridge = ctx->args[P_RIDGE].d;
    p->seed = ctx->seed;
    p->all = part->index == AIA_PART_ALL;
    if (ctx->data) {
        if (open_data(p, ctx, err) < 0) {
            lrmse_close(p);
            return -1;
        }
    } else if (open_generated(p, ctx, part) < 0) {
        lrmse_close(p);
        return aia_seterr(err,
                          "out of memory for this rank's rows of %zu columns",
                          (size_t)ctx->args[P_COLS].i);
    }
    if (!(p->row = malloc(p->n * sizeof *p->row))) {
        size_t n = p->n;
        lrmse_close(p);
        return aia_seterr(err, "out of memory for a row of %zu columns", n);
    }
    *state = p;
    return 0;
}

static size_t lrmse_dim(void *state)
{
    return ((struct lrmse *)state)->n;
}

static size_t lrmse_rows(void *state)
{
    return ((struct lrmse *)state)->k;
}

/* Row i of what this rank holds.  A generated row on the coordinator is
 * drawn again into the scratch row, valid until the next call. */
static void get_row(struct lrmse *p, size_t i, struct row *r)
{
    const struct aia_dataset *d = p->data;
    r->col = NULL;
    r->val = NULL;
    r->nnz = 0;
    if (d) {
        r->b = d->y[i];
        if (d->x) {
            r->a = d->x + i * p->n;
        } else {
            r->a = NULL;
            r->col = d->col + d->row_start[i];
            r->val = d->val + d->row_start[i];
            r->nnz = d->row_start[i + 1] - d->row_start[i];
        }
    } else if (!p->all) {
        r->b = p->b[i];
        r->a = p->A + i * p->n;
    } else {
        gen_row(p, i, p->row, &r->b);
        r->a = p->row;
    }
}

/* Four partial sums: the additions no longer wait on each other, so the
 * loop runs at memory speed (bench/: 2.9x under the bandwidth bound with
 * one sum). */
static inline double dot(const double *restrict a,
                         const double *restrict x, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += a[j] * x[j];
        s1 += a[j + 1] * x[j + 1];
        s2 += a[j + 2] * x[j + 2];
        s3 += a[j + 3] * x[j + 3];
    }
    for (; j < n; j++)
        s0 += a[j] * x[j];
    return (s0 + s1) + (s2 + s3);
}

static double row_dot(const struct row *r, const double *x, size_t n)
{
    if (r->a)
        return dot(r->a, x, n);
    double s = 0;
    for (size_t k = 0; k < r->nnz; k++)
        s += r->val[k] * x[r->col[k]];
    return s;
}

/* g += alpha * a, with no aliasing, so the compiler vectorizes it. */
static void axpy(double alpha, const double *restrict a, double *restrict g,
                 size_t n)
{
    for (size_t j = 0; j < n; j++)
        g[j] += alpha * a[j];
}

static void row_axpy(const struct row *r, double alpha, double *g, size_t n)
{
    if (r->a) {
        axpy(alpha, r->a, g, n);
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        g[r->col[k]] += alpha * r->val[k];
}

/* g += sum_i (a_i . x - b_i) a_i over k contiguous dense rows: the
 * gradient's hot loop, in one function so that nothing but the two vector
 * loops runs per row, four partial sums in the dot product, and (GCC)
 * compiled as at -O3 whatever the build's flags.  bench/ (case 4): 1.3x
 * under the memory bandwidth bound, against 1.7x for the general path. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static void dense_gradient(const double *restrict A, const double *restrict b,
                           size_t k, size_t n, const double *restrict x,
                           double *restrict g)
{
    for (size_t i = 0; i < k; i++) {
        const double *restrict a = A + i * n;
        double e = dot(a, x, n) - b[i];
        SIMD_LOOP
        for (size_t j = 0; j < n; j++)
            g[j] += e * a[j];
    }
}

/* The upper triangle of G += a a'.  A sparse row visits the ordered pairs
 * of its entries whose columns are in order, which is right even when a
 * column were stored twice. */
static void row_outer(const struct row *r, double *G, size_t n)
{
    if (r->a) {
        for (size_t j = 0; j < n; j++) {
            double aj = r->a[j];
            double *Gj = G + j * n;
            for (size_t l = j; l < n; l++)
                Gj[l] += aj * r->a[l];
        }
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        for (size_t q = 0; q < r->nnz; q++)
            if (r->col[k] <= r->col[q])
                G[r->col[k] * n + r->col[q]] += r->val[k] * r->val[q];
}

/* G = A'A/m, c = A'b/m, bb = b'b/m, once. */
static int gram(struct lrmse *p, struct aia_error *err)
{
    if (p->G)
        return 0;
    if (p->n > GRAM_MAX)
        return aia_seterr(err, "dimension %zu is above %d: no Gram matrix",
                          p->n, GRAM_MAX);
    if (p->k == 0)
        return aia_seterr(err, "no rows: no Gram matrix");
    size_t n = p->n;
    double *G = calloc(n * n, sizeof *G), *c = calloc(n, sizeof *c);
    if (!G || !c) {
        free(G);
        free(c);
        return aia_seterr(err, "out of memory for the %zu x %zu Gram matrix",
                          n, n);
    }
    double bb = 0;
    for (size_t i = 0; i < p->k; i++) {
        struct row r;
        get_row(p, i, &r);
        row_outer(&r, G, n);
        row_axpy(&r, r.b, c, n);
        bb += r.b * r.b;
    }
    double inv = 1.0 / (double)p->k;
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

/* Mean of half the squared residuals over the rows held, plus the
 * penalty. */
static double direct_loss(struct lrmse *p, const double *x)
{
    double s = 0;
    for (size_t i = 0; i < p->k; i++) {
        struct row r;
        get_row(p, i, &r);
        double e = row_dot(&r, x, p->n) - r.b;
        s += e * e;
    }
    double f = p->k ? 0.5 * s / (double)p->k : 0;
    if (p->ridge > 0)
        f += 0.5 * p->ridge * dot(x, x, p->n);
    return f;
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
    for (size_t j = 0; j < n; j++)
        L[j * n + j] += p->ridge;
    if (cholesky(L, n) < 0) {
        free(L);
        return aia_seterr(err,
                          "the normal equations are singular (%zu rows, "
                          "%zu columns, ridge %g)",
                          p->k, n, p->ridge);
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
    if (p->k) {
        p->fopt = direct_loss(p, x);
        return 0;
    }
    /* the coordinator of a data file: from the workers' sums */
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += x[j] * (0.5 * (dot(p->G + j * n, x, n) + p->ridge * x[j]) -
                     p->c[j]);
    p->fopt = q + 0.5 * p->bb;
    return 0;
}

/* A data file's summary: the sums of a a', b a and b^2 over the rows
 * held, and their count, so that the coordinator, which holds none, gets
 * the Gram matrix (and with it the optimum and the loss). */
static size_t lrmse_summary_len(void *state)
{
    struct lrmse *p = state;
    return p->data && p->n <= GRAM_MAX ? p->n * p->n + p->n + 2 : 0;
}

static int lrmse_summarize(void *state, double *out, struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->n;
    if (gram(p, err) < 0)
        return -1;
    double k = (double)p->k;
    for (size_t j = 0; j < n * n; j++)
        out[j] = p->G[j] * k;
    for (size_t j = 0; j < n; j++)
        out[n * n + j] = p->c[j] * k;
    out[n * n + n] = p->bb * k;
    out[n * n + n + 1] = k;
    /* a worker's loss and gradients go over its rows: the matrix would
     * only take memory */
    free(p->G);
    free(p->c);
    p->G = p->c = NULL;
    return 0;
}

static int lrmse_combine(void *state, const double *sum,
                         struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->n;
    double m = sum[n * n + n + 1];
    if (!(m > 0))
        return 0; /* no summary: the optimum stays unknown */
    free(p->G);
    free(p->c);
    p->G = malloc(n * n * sizeof *p->G);
    p->c = malloc(n * sizeof *p->c);
    if (!p->G || !p->c)
        return aia_seterr(err, "out of memory for the %zu x %zu Gram matrix",
                          n, n);
    for (size_t j = 0; j < n * n; j++)
        p->G[j] = sum[j] / m;
    for (size_t j = 0; j < n; j++)
        p->c[j] = sum[n * n + j] / m;
    p->bb = sum[n * n + n] / m;
    return 0;
}

static int lrmse_optimum(void *state, double *x, double *f,
                         struct aia_error *err)
{
    struct lrmse *p = state;
    if (!p->all)
        return aia_seterr(err, "the optimum is known to the coordinator only");
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

/* (G + lambda I) v, row j */
static double hess_row(const struct lrmse *p, size_t j, const double *v)
{
    return dot(p->G + j * p->n, v, p->n) + p->ridge * v[j];
}

static int lrmse_loss(void *state, const double *x, double *f,
                      struct aia_error *err)
{
    struct lrmse *p = state;
    size_t n = p->n;
    if (!p->all || gram(p, err) < 0) {
        *f = direct_loss(p, x);
        return 0;
    }
    if (p->opt == 1) {
        for (size_t j = 0; j < n; j++)
            p->d[j] = x[j] - p->xopt[j];
        double q = 0;
        for (size_t j = 0; j < n; j++)
            q += p->d[j] * hess_row(p, j, p->d);
        *f = p->fopt + 0.5 * q;
        return 0;
    }
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += x[j] * (0.5 * hess_row(p, j, x) - p->c[j]);
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
            g[j] = hess_row(p, j, x) - p->c[j];
        return 0;
    }
    /* contiguous dense rows, the common case, take the fast loop */
    const double *A = NULL, *y = NULL;
    if (!idx && p->data && p->data->x)
        A = p->data->x, y = p->data->y;
    else if (!idx && !p->data && !p->all)
        A = p->A, y = p->b;
    if (A) {
        dense_gradient(A, y, p->k, n, x, g);
        count = 0;
    }
    for (size_t t = 0; t < count; t++) {
        size_t i = idx ? idx[t] : t;
        if (i >= p->k)
            return aia_seterr(err, "row %zu is not among the %zu held", i,
                              p->k);
        struct row r;
        get_row(p, i, &r);
        row_axpy(&r, row_dot(&r, x, n) - r.b, g, n);
    }
    double inv = 1.0 / (double)(idx ? nidx : p->k);
    for (size_t j = 0; j < n; j++)
        g[j] = g[j] * inv + p->ridge * x[j];
    return 0;
}

const struct aia_problem_plugin aia_problem_plugin = {
    .h = AIA_HEADER(AIA_KIND_PROBLEM, struct aia_problem_plugin, "lrmse", "1.2",
                    "least-squares linear regression, optionally ridge, on "
                    "generated or given rows (loss: half the mean squared "
                    "error)",
                    params),
    .flags = AIA_PROBLEM_DATA,
    .open = lrmse_open,
    .close = lrmse_close,
    .dim = lrmse_dim,
    .rows = lrmse_rows,
    .loss = lrmse_loss,
    .gradient = lrmse_gradient,
    .optimum = lrmse_optimum,
    .summary_len = lrmse_summary_len,
    .summarize = lrmse_summarize,
    .combine = lrmse_combine,
};
