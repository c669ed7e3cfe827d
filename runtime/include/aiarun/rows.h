/* rows.h - helpers for problem plugins: the rows of a partition, dense and
 * sparse row access, dot/axpy, Cholesky, the smoothness of a loss by
 * power iteration.
 *
 * Plugins link nothing but libc and libm, so these are static inline
 * functions in portable C: a plugin that includes this header gets its own
 * copy of what it calls.  Every problem plugin of aiarun uses them, so a
 * fix here reaches them all.
 *
 *     #include <aiarun/aiarun.h>
 *     #include <aiarun/rows.h>
 */
#ifndef AIARUN_ROWS_H
#define AIARUN_ROWS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#ifdef __cplusplus
extern "C" {
#define AIA_RESTRICT __restrict
#else
#define AIA_RESTRICT restrict
#endif

/* One row, dense (a: n entries) or sparse (nnz entries col/val; a is
 * NULL). */
struct aia_row {
    const double *a;
    const uint32_t *col;
    const double *val;
    size_t nnz;
};

/* Rows of m that part holds, by the runtime's rule (host: ctx->host):
 * their count, and when rows is not NULL, their indices in increasing
 * order.  The coordinator's part (AIA_PART_ALL) holds every row, as its
 * open is told. */
static inline size_t aia_owned_rows(const struct aia_host *host,
                                    const struct aia_partition *part, size_t m,
                                    size_t *rows)
{
    if (part->index == AIA_PART_ALL) {
        for (size_t r = 0; rows && r < m; r++)
            rows[r] = r;
        return m;
    }
    if (part->scheme == AIA_PART_BLOCK) {
        size_t first = aia_partition_first(host, part, m, part->index);
        size_t last = aia_partition_first(host, part, m, part->index + 1);
        for (size_t r = first; rows && r < last; r++)
            rows[r - first] = r;
        return last > first ? last - first : 0;
    }
    size_t k = 0;
    for (size_t r = 0; r < m; r++)
        if (aia_partition_owner(host, part, m, r) == part->index) {
            if (rows)
                rows[k] = r;
            k++;
        }
    return k;
}

/* r is the dense row a. */
static inline void aia_dense_row(struct aia_row *r, const double *a)
{
    r->a = a;
    r->col = NULL;
    r->val = NULL;
    r->nnz = 0;
}

/* Row i of a dataset, pointing into it (no copy). */
static inline void aia_data_row(const struct aia_dataset *d, size_t i,
                                struct aia_row *r)
{
    if (d->x) {
        aia_dense_row(r, d->x + i * d->cols);
    } else {
        r->a = NULL;
        r->col = d->col + d->row_start[i];
        r->val = d->val + d->row_start[i];
        r->nnz = d->row_start[i + 1] - d->row_start[i];
    }
}

/* Check that the rows given are complete and their sparse columns in
 * range, so that no later access can go astray; all: the caller is the
 * coordinator, which must hold every row.  Rows are named from 1 in
 * messages.  0 or -1 with err set. */
static inline int aia_data_check(const struct aia_dataset *d, int all,
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

/* The parameter table's entries of a generated linear model's size: rows
 * m over all workers (default "1000") and columns n, the model's
 * dimension (default "10"), as lrmse and logreg read them. */
/* clang-format off */
#define AIA_GENERATED_SIZE_PARAMS                                              \
    {"rows", AIA_INT, "1000", "rows m of the generated data, over all workers",\
     NULL, 1, 1e12},                                                           \
    {"cols", AIA_INT, "10", "columns n: the model's dimension", NULL, 1, 1e9}
/* clang-format on */

/* Say once, on the coordinator, that the generator's parameters given in
 * the job have no effect: the rows come from the data file.  gen: the
 * names of those parameters, ngen of them. */
static inline void aia_note_ignored_names(const struct aia_context *ctx,
                                          const char *plugin,
                                          const char *const *gen, size_t ngen)
{
    if (ctx->role != AIA_ROLE_COORDINATOR || !ctx->host || !ctx->host->log)
        return;
    for (size_t i = 0; i < ngen; i++) {
        const struct aia_value *v = aia_arg(ctx->args, gen[i]);
        if (v && v->given)
            ctx->host->log(ctx->host, AIA_LOG_WARN,
                           "%s: %s is ignored: the rows come from %s", plugin,
                           v->name,
                           ctx->data && ctx->data->source ? ctx->data->source
                                                          : "the data file");
    }
}

/* The same with the parameters' indices in ctx->args, for plugins written
 * before aia_note_ignored_names; an index depends on the order of the
 * parameter table, a name does not. */
static inline void aia_note_ignored(const struct aia_context *ctx,
                                    const char *plugin, const int *gen,
                                    size_t ngen)
{
    for (size_t i = 0; i < ngen; i++) {
        const char *name = ctx->args[gen[i]].name;
        aia_note_ignored_names(ctx, plugin, &name, 1);
    }
}

/* a . x with four partial sums: the additions no longer wait on each
 * other, so the loop runs at memory speed (bench/: 2.9x under the
 * bandwidth bound with one sum). */
static inline double aia_dot(const double *AIA_RESTRICT a,
                             const double *AIA_RESTRICT x, size_t n)
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

/* g += alpha * a, with no aliasing, so the compiler vectorizes it. */
static inline void aia_axpy(double alpha, const double *AIA_RESTRICT a,
                            double *AIA_RESTRICT g, size_t n)
{
    for (size_t j = 0; j < n; j++)
        g[j] += alpha * a[j];
}

/* r . x over n columns. */
static inline double aia_row_dot(const struct aia_row *r, const double *x,
                                 size_t n)
{
    if (r->a)
        return aia_dot(r->a, x, n);
    double s = 0;
    for (size_t k = 0; k < r->nnz; k++)
        s += r->val[k] * x[r->col[k]];
    return s;
}

/* g += alpha * r over n columns. */
static inline void aia_row_axpy(const struct aia_row *r, double alpha,
                                double *g, size_t n)
{
    if (r->a) {
        aia_axpy(alpha, r->a, g, n);
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        g[r->col[k]] += alpha * r->val[k];
}

/* The upper triangle of H += w r r' (n x n, row-major).  A sparse row
 * visits the ordered pairs of its entries whose columns are in order,
 * which is right even when a column were stored twice. */
static inline void aia_row_outer(const struct aia_row *r, double w, double *H,
                                 size_t n)
{
    if (r->a) {
        for (size_t j = 0; j < n; j++) {
            double wa = w * r->a[j];
            double *Hj = H + j * n;
            for (size_t l = j; l < n; l++)
                Hj[l] += wa * r->a[l];
        }
        return;
    }
    for (size_t k = 0; k < r->nnz; k++)
        for (size_t q = 0; q < r->nnz; q++)
            if (r->col[k] <= r->col[q])
                H[r->col[k] * n + r->col[q]] += w * r->val[k] * r->val[q];
}

/* In place: H = L L' (lower triangle; n x n, row-major).  Returns 0, or
 * -1 when a pivot is not above floor_abs + floor_rel * |H_jj| (not
 * numerically positive definite). */
static inline int aia_cholesky(double *H, size_t n, double floor_rel,
                               double floor_abs)
{
    for (size_t j = 0; j < n; j++) {
        double s = H[j * n + j];
        double floor = floor_abs + floor_rel * fabs(s);
        for (size_t k = 0; k < j; k++)
            s -= H[j * n + k] * H[j * n + k];
        if (!(s > floor))
            return -1;
        double l = sqrt(s);
        H[j * n + j] = l;
        for (size_t i = j + 1; i < n; i++) {
            double t = H[i * n + j];
            for (size_t k = 0; k < j; k++)
                t -= H[i * n + k] * H[j * n + k];
            H[i * n + j] = t / l;
        }
    }
    return 0;
}

/* x = (L L')^-1 b from the factor aia_cholesky left in L; x may be b. */
static inline void aia_cholesky_solve(const double *L, const double *b,
                                      double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) { /* L y = b */
        double t = b[i];
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
}

/* ------------------------------------------------------------------ */
/* The rows a problem holds, and what every row problem keeps.         */

/* The first member of a row problem's state, so that the functions below
 * (and the descriptor's dim and rows) serve every such problem. */
struct aia_rowset {
    size_t m; /* rows over all parts */
    size_t n; /* columns: the features */
    size_t k; /* rows this rank holds */
    int all;  /* the coordinator's view (AIA_PART_ALL) */
    uint64_t seed;
    const struct aia_dataset *data; /* rows given, or NULL: generated */
    double *row;                    /* n doubles of scratch */
    /* the optimum, on the coordinator: computed once, on first need */
    int opt; /* 0 not tried, 1 known, -1 impossible */
    double *xopt, fopt;
    struct aia_error why; /* why the optimum is not known */
};

/* Start rs for ctx and part (everything else zero). */
static inline void aia_rowset_init(struct aia_rowset *rs,
                                   const struct aia_context *ctx,
                                   const struct aia_partition *part)
{
    memset(rs, 0, sizeof *rs);
    rs->seed = ctx->seed;
    rs->all = part->index == AIA_PART_ALL;
}

/* Take the rows of d (checked with aia_data_check).  0 or -1. */
static inline int aia_rowset_use(struct aia_rowset *rs,
                                 const struct aia_dataset *d,
                                 struct aia_error *err)
{
    if (aia_data_check(d, rs->all, err) < 0)
        return -1;
    rs->data = d;
    rs->n = d->cols;
    rs->m = d->total_rows;
    rs->k = d->rows;
    return 0;
}

/* Allocate the scratch row once n is known.  0 or -1. */
static inline int aia_rowset_scratch(struct aia_rowset *rs,
                                     struct aia_error *err)
{
    if (!(rs->row = (double *)malloc((rs->n ? rs->n : 1) * sizeof *rs->row)))
        return aia_seterr(err, "out of memory for a row of %zu columns", rs->n);
    return 0;
}

/* Free what rs owns (not rs). */
static inline void aia_rowset_free(struct aia_rowset *rs)
{
    free(rs->row);
    free(rs->xopt);
}

/* The descriptor's dim and rows for a state whose first member is a
 * struct aia_rowset. */
static inline size_t aia_rowset_dim(void *state)
{
    return ((struct aia_rowset *)state)->n;
}

static inline size_t aia_rowset_rows(void *state)
{
    return ((struct aia_rowset *)state)->k;
}

/* Both, for a problem descriptor's initializer. */
#define AIA_ROWSET_SIZES .dim = aia_rowset_dim, .rows = aia_rowset_rows

/* The optimum on the coordinator: solve(state, err) is called once (it
 * sets rs->xopt, dim doubles, and rs->fopt, or fails saying why); later
 * calls give its result again.  0 or -1. */
static inline int aia_rowset_optimum(
    struct aia_rowset *rs, int (*solve)(void *state, struct aia_error *err),
    void *state, double *x, double *f, size_t dim, struct aia_error *err)
{
    if (!rs->all)
        return aia_seterr(err, "the optimum is known to the coordinator only");
    if (rs->opt == 0)
        rs->opt = solve(state, &rs->why) == 0 ? 1 : -1;
    if (rs->opt < 0) {
        *err = rs->why;
        return -1;
    }
    memcpy(x, rs->xopt, dim * sizeof *x);
    *f = rs->fopt;
    return 0;
}

/* Start a gradient over the rows idx[0 .. nidx-1] (every held row when idx
 * is NULL): g (dim doubles) zeroed, every index checked against the k rows
 * held.  Returns the number of rows, or 0 with err set. */
static inline size_t aia_gradient_begin(const struct aia_rowset *rs,
                                        const size_t *idx, size_t nidx,
                                        double *g, size_t dim,
                                        struct aia_error *err)
{
    size_t count = idx ? nidx : rs->k;
    memset(g, 0, dim * sizeof *g);
    if (count == 0) {
        aia_seterr(err, "a gradient over no rows");
        return 0;
    }
    for (size_t t = 0; idx && t < nidx; t++)
        if (idx[t] >= rs->k) {
            aia_seterr(err, "row %zu is not among the %zu held", idx[t], rs->k);
            return 0;
        }
    return count;
}

/* End a gradient summed over count rows: g = g / count + l2 x.  Without
 * a penalty (l2 0) x is not read. */
static inline void aia_gradient_end(double *g, const double *x, size_t n,
                                    size_t count, double l2)
{
    double inv = 1.0 / (double)count;
    if (l2 == 0) {
        for (size_t j = 0; j < n; j++)
            g[j] *= inv;
        return;
    }
    for (size_t j = 0; j < n; j++)
        g[j] = g[j] * inv + l2 * x[j];
}

/* ------------------------------------------------------------------ */
/* Classifiers over C classes                                          */

/* Check that every target of d is a class index 0 .. classes-1 (a whole
 * number).  Rows are named from 1.  0 or -1 with err set. */
static inline int aia_class_labels(const struct aia_dataset *d, size_t classes,
                                   struct aia_error *err)
{
    const char *src = d->source ? d->source : "the data";
    for (size_t i = 0; i < d->rows; i++) {
        double y = d->y[i];
        if (!(y >= 0 && y < (double)classes && y == floor(y)))
            return aia_seterr(
                err, "%s: row %zu: label %g is not a class 0 to %zu", src,
                (d->row_ids ? d->row_ids[i] : i) + 1, y, classes - 1);
    }
    return 0;
}

/* Start rs on the rows of ctx->data, whose targets must be classes
 * 0 .. classes-1; plugin names the problem in the message when the job
 * gives no data file.  0 or -1 with err set. */
static inline int aia_rowset_classes(struct aia_rowset *rs,
                                     const struct aia_context *ctx,
                                     const struct aia_partition *part,
                                     const char *plugin, size_t classes,
                                     struct aia_error *err)
{
    aia_rowset_init(rs, ctx, part);
    if (!ctx->data)
        return aia_seterr(err,
                          "%s takes its rows from a data file: give "
                          "problem.data (targets: class indices)",
                          plugin);
    if (aia_rowset_use(rs, ctx->data, err) < 0)
        return -1;
    return aia_class_labels(ctx->data, classes, err);
}

/* Softmax cross-entropy of the scores z[0 .. c-1] for class y: returns
 * log(sum exp z) - z[y], and turns z into its gradient, softmax(z) -
 * onehot(y).  *argmax gets the highest score's class (the first on a
 * tie). */
static inline double aia_softmax_xent(double *z, size_t c, size_t y,
                                      size_t *argmax)
{
    size_t best = 0;
    for (size_t k = 1; k < c; k++)
        if (z[k] > z[best])
            best = k;
    double top = z[best], sum = 0, zy = z[y] - top;
    for (size_t k = 0; k < c; k++) {
        z[k] = exp(z[k] - top);
        sum += z[k];
    }
    for (size_t k = 0; k < c; k++)
        z[k] /= sum;
    z[y] -= 1;
    *argmax = best;
    return log(sum) - zy;
}

/* ------------------------------------------------------------------ */
/* Smoothness                                                          */

/* A product with a symmetric n x n matrix H: hv = H v.  0, or -1 with
 * err set. */
typedef int (*aia_hvp_fn)(void *ctx, const double *v, double *hv,
                          struct aia_error *err);

/* Cyclic Jacobi on the symmetric n x n matrix S (row-major, destroyed):
 * its eigenvalues in ev and its eigenvectors in the columns of Q
 * (row-major, n x n), unsorted.  For small n, or a build without
 * LAPACKE. */
static inline void aia_jacobi(double *S, double *Q, double *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            Q[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, all = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                all += S[i * n + j] * S[i * n + j];
                off += i != j ? S[i * n + j] * S[i * n + j] : 0;
            }
        if (off <= 1e-30 * all)
            break;
        for (size_t a = 0; a < n; a++)
            for (size_t c = a + 1; c < n; c++) {
                double sac = S[a * n + c];
                if (sac == 0)
                    continue;
                double th = (S[c * n + c] - S[a * n + a]) / (2 * sac);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (size_t i = 0; i < n; i++) { /* columns a, c */
                    double x = S[i * n + a], y = S[i * n + c];
                    S[i * n + a] = cs * x - sn * y;
                    S[i * n + c] = sn * x + cs * y;
                }
                for (size_t i = 0; i < n; i++) { /* rows a, c */
                    double x = S[a * n + i], y = S[c * n + i];
                    S[a * n + i] = cs * x - sn * y;
                    S[c * n + i] = sn * x + cs * y;
                }
                for (size_t i = 0; i < n; i++) {
                    double x = Q[i * n + a], y = Q[i * n + c];
                    Q[i * n + a] = cs * x - sn * y;
                    Q[i * n + c] = sn * x + cs * y;
                }
            }
    }
    for (size_t i = 0; i < n; i++)
        ev[i] = S[i * n + i];
}

/* Eigenpairs in descending order of ev: the eigenvalues ev (n) and the
 * eigenvectors in the columns of Q (row-major, n x n), as aia_jacobi or
 * LAPACKE's dsyev leave them, sorted together in place (a selection
 * sort: n column swaps at most). */
static inline void aia_eig_descending(double *Q, double *ev, size_t n)
{
    for (size_t a = 0; a < n; a++) {
        size_t best = a;
        for (size_t b = a + 1; b < n; b++)
            if (ev[b] > ev[best])
                best = b;
        if (best == a)
            continue;
        double t = ev[a];
        ev[a] = ev[best];
        ev[best] = t;
        for (size_t i = 0; i < n; i++) {
            t = Q[i * n + a];
            Q[i * n + a] = Q[i * n + best];
            Q[i * n + best] = t;
        }
    }
}

/* The largest eigenvalue (in magnitude) *lambda of the symmetric matrix H
 * that hv multiplies by, by power iteration from a fixed start (entries
 * 1 + sin(1 + j)/2, normalised): the same H gives the same figure on
 * every rank and every run.  It stops when the estimate |H v| moves by
 * less than rtol of itself, or after max_products products.  For a
 * positive semi-definite H the estimate grows towards the largest
 * eigenvalue from below.  0, or -1 with err set when a product fails,
 * memory runs out or no positive curvature is found. */
static inline int aia_power_iteration(size_t n, aia_hvp_fn hv, void *ctx,
                                      int max_products, double rtol,
                                      double *lambda, struct aia_error *err)
{
    double *v = (double *)calloc(2 * (n ? n : 1), sizeof *v), *w = v + n;
    double est = 0, norm = 0;
    if (!v)
        return aia_seterr(err, "out of memory for the smoothness estimate");
    for (size_t j = 0; j < n; j++)
        v[j] = 1.0 + 0.5 * sin(1.0 + (double)j), norm += v[j] * v[j];
    for (size_t j = 0; j < n; j++)
        v[j] /= sqrt(norm);
    for (int it = 0; it < max_products; it++) {
        if (hv(ctx, v, w, err) < 0) {
            free(v);
            return -1;
        }
        norm = 0;
        for (size_t j = 0; j < n; j++)
            norm += w[j] * w[j];
        norm = sqrt(norm);
        if (!(norm > 0) || !isfinite(norm))
            break;
        for (size_t j = 0; j < n; j++)
            v[j] = w[j] / norm;
        int done = fabs(norm - est) <= rtol * norm;
        est = norm;
        if (done)
            break;
    }
    free(v);
    if (!(est > 0) || !isfinite(est))
        return aia_seterr(err, "the power iteration found no positive "
                               "curvature");
    *lambda = est;
    return 0;
}

/* The Hessian of a problem's loss over its rows, through its gradient
 * alone, as an aia_hvp_fn.  t == 0: the gradient is affine (a quadratic
 * loss) and H v = grad(v) - grad(0) exactly, g holding grad(0).  t > 0:
 * the Hessian at 0 by central differences, (grad(t v) - grad(-t v)) /
 * (2t), exact for a quadratic and off by O(t^2) otherwise. */
struct aia_gradient_hvp {
    const struct aia_problem_plugin *problem;
    void *state;
    double t;
    double *x, *g; /* dim doubles each, the product's own */
};

static inline int aia_gradient_hvp(void *ctx, const double *v, double *hv,
                                   struct aia_error *err)
{
    struct aia_gradient_hvp *h = (struct aia_gradient_hvp *)ctx;
    size_t n = h->problem->dim(h->state);
    if (h->t > 0) {
        for (size_t j = 0; j < n; j++)
            h->x[j] = h->t * v[j];
        if (h->problem->gradient(h->state, h->x, NULL, 0, hv, err) < 0)
            return -1;
        for (size_t j = 0; j < n; j++)
            h->x[j] = -h->t * v[j];
        if (h->problem->gradient(h->state, h->x, NULL, 0, h->g, err) < 0)
            return -1;
        for (size_t j = 0; j < n; j++)
            hv[j] = (hv[j] - h->g[j]) / (2 * h->t);
        return 0;
    }
    if (h->problem->gradient(h->state, v, NULL, 0, hv, err) < 0)
        return -1;
    for (size_t j = 0; j < n; j++)
        hv[j] -= h->g[j];
    return 0;
}

/* A Lipschitz constant *L of the gradient of problem's loss over the rows
 * state holds: the largest eigenvalue of its Hessian, through
 * aia_gradient_hvp with this t, by aia_power_iteration (at most 200
 * products, to 1e-5).  The estimate is from below; a step 1/L keeps a
 * factor 2 of margin to the stable bound 2/L.  0 or -1 with err set. */
static inline int
aia_gradient_smoothness(const struct aia_problem_plugin *problem, void *state,
                        double t, double *L, struct aia_error *err)
{
    size_t n = problem->dim(state);
    double *buf = (double *)calloc(2 * (n ? n : 1), sizeof *buf);
    struct aia_gradient_hvp h = {problem, state, t, buf, buf + n};
    int rc = -1;
    if (!buf)
        return aia_seterr(err, "out of memory for the smoothness estimate");
    if (t > 0 || problem->gradient(state, h.x, NULL, 0, h.g, err) == 0)
        rc = aia_power_iteration(n, aia_gradient_hvp, &h, 200, 1e-5, L, err);
    free(buf);
    return rc;
}

#ifdef __cplusplus
}
#endif

#endif
