/* probtest.c - a problem plugin opened part by part for the unit tests of
 * problem plugins (probtest.h). */
#include <config.h>

#include "probtest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static const struct aia_problem_plugin *plugin_of(const struct plugtest *t)
{
    return (const void *)t->p->h;
}

void *probtest_try_open(const struct plugtest *t, int index, int count,
                        int scheme, const double *weights, uint64_t seed,
                        const struct aia_dataset *data, struct aia_error *err)
{
    struct aia_partition part = {index, count, scheme, 0, weights};
    struct aia_context ctx = plugtest_ctx(
        t->args, index == AIA_PART_ALL ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER,
        index + 1, count, seed);
    ctx.data = data;
    void *s;
    return plugin_of(t)->open(&ctx, &part, &s, err) < 0 ? NULL : s;
}

void *probtest_open(const struct plugtest *t, int index, int count,
                    const struct aia_dataset *data, uint64_t seed)
{
    struct aia_error err;
    void *s = probtest_try_open(t, index, count, AIA_PART_BLOCK, NULL, seed,
                                data, &err);
    if (!s)
        bail_out("open: %s", err.text);
    return s;
}

double probtest_loss(const struct aia_problem_plugin *p, void *s,
                     const double *x)
{
    double f;
    struct aia_error err;
    if (p->loss(s, x, &f, &err) < 0)
        bail_out("loss: %s", err.text);
    return f;
}

void probtest_grad(const struct aia_problem_plugin *p, void *s, const double *x,
                   double *g)
{
    struct aia_error err;
    if (p->gradient(s, x, NULL, 0, g, &err) < 0)
        bail_out("gradient: %s", err.text);
}

double probtest_parts_loss(const struct plugtest *t, int count, size_t total,
                           uint64_t seed, const double *x)
{
    const struct aia_problem_plugin *p = plugin_of(t);
    double f = 0;
    for (int k = 0; k < count; k++) {
        void *s = probtest_open(t, k, count, NULL, seed);
        f += (double)p->rows(s) / (double)total * probtest_loss(p, s, x);
        p->close(s);
    }
    return f;
}

void probtest_holds(const struct aia_problem_plugin *p, void *s, size_t k,
                    const double *x, size_t n, double f, const double *want,
                    double tol, const char *what)
{
    double *g = calloc(n ? n : 1, sizeof *g);
    if (!g)
        bail_out("out of memory");
    is_int((long long)p->rows(s), (long long)k, "%s holds the %zu rows given",
           what, k);
    probtest_grad(p, s, x, g);
    ok(probtest_maxdiff(g, want, n) < tol, "%s: its gradient is theirs", what);
    is_double(probtest_loss(p, s, x), f, tol, "%s: its loss is theirs", what);
    free(g);
}

double probtest_maxdiff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = tap_worst(d, fabs(a[i] - b[i]));
    return d;
}

double probtest_top_eigenvalue(const double *A, size_t n, int iterations)
{
    double *v = malloc(2 * n * sizeof *v), *w = v + n, lambda = 0;
    if (!v)
        bail_out("out of memory");
    for (size_t j = 0; j < n; j++)
        v[j] = 1;
    for (int it = 0; it < iterations; it++) {
        double norm = 0;
        for (size_t a = 0; a < n; a++) {
            w[a] = 0;
            for (size_t b = 0; b < n; b++)
                w[a] += A[a * n + b] * v[b];
            norm += w[a] * w[a];
        }
        lambda = sqrt(norm);
        for (size_t a = 0; a < n; a++)
            v[a] = w[a] / lambda;
    }
    free(v);
    return lambda;
}

/* Scratch of n doubles for the checks below. */
static double *scratch(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        bail_out("out of memory");
    return p;
}

void probtest_gradient_check(const struct plugtest *t, int count,
                             const double *x, size_t n, size_t rows,
                             size_t total, double tol)
{
    const struct aia_problem_plugin *p = plugin_of(t);
    void *s = probtest_open(t, 1, count, NULL, 5);
    /* differences over a part of no rows compare 0 with 0 */
    ok(rows > 0 && p->rows(s) == rows,
       "worker 1 of %d holds its %zu rows (%zu)", count, rows, p->rows(s));
    double *g = scratch(5 * n), *xp = g + n, *xm = xp + n, *fd = xm + n,
           *gi = fd + n;
    probtest_grad(p, s, x, g);
    for (size_t j = 0; j < n; j++) {
        memcpy(xp, x, n * sizeof *x);
        memcpy(xm, x, n * sizeof *x);
        xp[j] += 1e-5;
        xm[j] -= 1e-5;
        fd[j] = (probtest_loss(p, s, xp) - probtest_loss(p, s, xm)) / 2e-5;
    }
    ok(probtest_maxdiff(g, fd, n) < tol,
       "a worker's gradient matches central differences of its loss "
       "(max diff %.2g)",
       probtest_maxdiff(g, fd, n));

    size_t *idx = malloc(rows * sizeof *idx);
    if (!idx)
        bail_out("out of memory");
    for (size_t i = 0; i < rows; i++)
        idx[i] = i;
    struct aia_error err;
    p->gradient(s, x, idx, rows, gi, &err);
    ok(probtest_maxdiff(g, gi, n) < 1e-14,
       "the gradient over every row by index equals the full one");
    size_t one = 3;
    p->gradient(s, x, &one, 1, gi, &err);
    ok(probtest_maxdiff(g, gi, n) > 1e-6,
       "a one-row gradient differs from the mean");
    ok(p->gradient(s, x, &total, 1, gi, &err) < 0 &&
           strstr(err.text, "not among"),
       "a row the worker does not hold is refused");
    free(idx);
    free(g);
    p->close(s);
}

double probtest_metric(const struct aia_problem_plugin *p, void *s,
                       const double *x)
{
    double a;
    struct aia_error err;
    if (p->metric(s, x, &a, &err) < 0)
        bail_out("metric: %s", err.text);
    return a;
}

void probtest_partitions(const struct plugtest *t, int count, int scheme,
                         const double *weights, const double *x, size_t n,
                         size_t total, const char *what)
{
    const struct aia_problem_plugin *p = plugin_of(t);
    struct aia_error err;
    void *all = probtest_try_open(t, AIA_PART_ALL, count, scheme, weights, 5,
                                  NULL, &err);
    if (!all)
        bail_out("open: %s", err.text);
    is_int((long long)p->rows(all), (long long)total,
           "%s: the coordinator sees every row", what);
    double *gall = scratch(3 * n), *g = gall + n, *gsum = g + n;
    double fsum = 0, asum = 0, m = (double)total;
    probtest_grad(p, all, x, gall);
    size_t held = 0;
    for (int k = 0; k < count; k++) {
        void *s =
            probtest_try_open(t, k, count, scheme, weights, 5, NULL, &err);
        if (!s)
            bail_out("open: %s", err.text);
        size_t rows = p->rows(s);
        held += rows;
        probtest_grad(p, s, x, g);
        for (size_t j = 0; j < n; j++)
            gsum[j] += (double)rows * g[j] / m;
        fsum += (double)rows * probtest_loss(p, s, x) / m;
        if (p->metric)
            asum += (double)rows * probtest_metric(p, s, x) / m;
        p->close(s);
    }
    is_int((long long)held, (long long)total,
           "%s: the parts hold every row once", what);
    ok(probtest_maxdiff(gsum, gall, n) < 1e-12,
       "%s: weighted part gradients add up to the whole gradient", what);
    is_double(fsum, probtest_loss(p, all, x), 1e-12 * fabs(fsum),
              "%s: weighted part losses add up to the whole loss", what);
    if (p->metric)
        is_double(asum, probtest_metric(p, all, x), 1e-12,
                  "%s: weighted part metrics (%s) add up to the whole one",
                  what, p->metric_name);
    free(gall);
    p->close(all);
}

void probtest_determinism(const struct plugtest *t, int index, int count,
                          const double *x, size_t n)
{
    const struct aia_problem_plugin *p = plugin_of(t);
    double *g1 = scratch(3 * n), *g2 = g1 + n, *g3 = g2 + n;
    void *a = probtest_open(t, index, count, NULL, 9);
    void *b = probtest_open(t, index, count, NULL, 9);
    void *c = probtest_open(t, index, count, NULL, 10);
    probtest_grad(p, a, x, g1);
    probtest_grad(p, b, x, g2);
    probtest_grad(p, c, x, g3);
    ok(memcmp(g1, g2, n * sizeof *g1) == 0,
       "the same seed builds the same rows");
    ok(probtest_maxdiff(g1, g3, n) > 1e-3, "another seed builds other rows");
    p->close(a);
    p->close(b);
    p->close(c);
    free(g1);
}

void probtest_same(const struct aia_problem_plugin *p, void *a, void *b,
                   int all, const struct probtest_at *at, const char *what)
{
    const double *x = at->x;
    size_t n = at->n;
    double *ga = scratch(4 * n), *gb = ga + n, *xa = gb + n, *xb = xa + n;
    double fa = probtest_loss(p, a, x), fb = probtest_loss(p, b, x);
    struct aia_error err;
    is_double(fa, fb, at->tol * fmax(1, fabs(fa)), "%s: the same loss", what);
    probtest_grad(p, a, x, ga);
    probtest_grad(p, b, x, gb);
    ok(probtest_maxdiff(ga, gb, n) < at->tol, "%s: the same gradient", what);
    size_t idx[] = {0, 7, 3, 3};
    if (p->gradient(a, x, idx, 4, ga, &err) < 0 ||
        p->gradient(b, x, idx, 4, gb, &err) < 0)
        bail_out("gradient: %s", err.text);
    ok(probtest_maxdiff(ga, gb, n) < at->tol,
       "%s: the same gradient over some rows", what);
    if (p->metric)
        is_double(probtest_metric(p, a, x), probtest_metric(p, b, x), 0,
                  "%s: the same %s", what, p->metric_name);
    if (all) {
        if (p->optimum(a, xa, &fa, &err) < 0 ||
            p->optimum(b, xb, &fb, &err) < 0)
            bail_out("optimum: %s", err.text);
        ok(probtest_maxdiff(xa, xb, n) < at->xtol && fabs(fa - fb) < at->tol,
           "%s: the same optimum", what);
    }
    free(ga);
}

void probtest_same_rows(const struct plugtest *t, int index, int count,
                        const struct aia_dataset *a,
                        const struct aia_dataset *b, uint64_t seed,
                        const struct probtest_at *at, const char *what)
{
    const struct aia_problem_plugin *p = plugin_of(t);
    void *sa = probtest_open(t, index, count, a, seed);
    void *sb = probtest_open(t, index, count, b, seed);
    probtest_same(p, sa, sb, index == AIA_PART_ALL, at, what);
    p->close(sa);
    p->close(sb);
}

void probtest_rows_free(struct probtest_rows *r)
{
    free(r->ids);
    free(r->start);
    free(r->col);
    free(r->val);
    memset(r, 0, sizeof *r);
}

void probtest_rows_make(struct probtest_rows *r, int sparse, const double *A,
                        const double *y, size_t cols, size_t first, size_t k,
                        size_t total)
{
    size_t nz = 0, need = k * cols + 1;
    if (r->cap < need) {
        free(r->ids);
        free(r->start);
        free(r->col);
        free(r->val);
        r->ids = malloc(need * sizeof *r->ids);
        r->start = malloc((need + 1) * sizeof *r->start);
        r->col = malloc(need * sizeof *r->col);
        r->val = malloc(need * sizeof *r->val);
        if (!r->ids || !r->start || !r->col || !r->val)
            bail_out("out of memory");
        r->cap = need;
    }
    for (size_t i = 0; i < k; i++) {
        r->ids[i] = first + i;
        r->start[i] = nz;
        for (size_t j = 0; j < cols && sparse; j++)
            if (A[(first + i) * cols + j] != 0) {
                r->col[nz] = (uint32_t)j;
                r->val[nz++] = A[(first + i) * cols + j];
            }
    }
    r->start[k] = nz;
    r->d = (struct aia_dataset){.rows = k,
                                .cols = cols,
                                .total_rows = total,
                                .row_ids = r->ids,
                                .y = y + first,
                                .source = sparse ? "rows.svm" : "rows.csv"};
    if (sparse) {
        r->d.row_start = r->start;
        r->d.col = r->col;
        r->d.val = r->val;
    } else {
        r->d.x = A + first * cols;
    }
}

void probtest_rows_reverse(struct probtest_rows *r, size_t k)
{
    for (size_t i = 0; i < k; i++)
        for (size_t a = r->start[i], b = r->start[i + 1]; a + 1 < b; a++, b--) {
            uint32_t c = r->col[a];
            double v = r->val[a];
            r->col[a] = r->col[b - 1];
            r->val[a] = r->val[b - 1];
            r->col[b - 1] = c;
            r->val[b - 1] = v;
        }
}

void probtest_claims(const struct plugtest *t, int count, const double *x,
                     size_t n, size_t total, double tol)
{
    static const double uneven[] = {1, 2, 3, 0.5};
    double *at = scratch(n), *w = scratch((size_t)count);
    for (int k = 0; k < count; k++)
        w[k] = uneven[k % 4];
    probtest_gradient_check(t, count, x, n, total / (size_t)count, total, tol);
    for (size_t j = 0; j < n; j++)
        at[j] = sin(j + 1.0);
    probtest_partitions(t, count, AIA_PART_BLOCK, NULL, at, n, total, "block");
    probtest_partitions(t, count, AIA_PART_CYCLIC, NULL, at, n, total,
                        "cyclic");
    probtest_partitions(t, count, AIA_PART_BLOCK, w, at, n, total,
                        "weighted block");
    probtest_partitions(t, count, AIA_PART_CYCLIC, w, at, n, total,
                        "weighted cyclic");
    for (size_t j = 0; j < n; j++)
        at[j] = (double)j + 1;
    probtest_determinism(t, 2, count, at, n);
    free(w);
    free(at);
}

void probtest_float32(const char *name, const char *args, const char *args32,
                      int count, const double *x, size_t n)
{
    struct plugtest t64, t32;
    plugtest_load(&t64, name, AIA_KIND_PROBLEM, args);
    plugtest_load(&t32, name, AIA_KIND_PROBLEM, args32);
    const struct aia_problem_plugin *p = plugin_of(&t64);
    double *g64 = malloc(3 * n * sizeof *g64), *g32 = g64 + n, *A = g64 + 2 * n;
    if (!g64)
        bail_out("out of memory");
    size_t idx[] = {0, 2, 3};
    struct aia_error err;
    for (int sel = 0; sel < 2; sel++) {
        void *s64 = probtest_open(&t64, 0, count, NULL, 1);
        void *s32 = probtest_open(&t32, 0, count, NULL, 1);
        if (p->gradient(s64, x, sel ? idx : NULL, sel ? 3 : 0, g64, &err) < 0 ||
            p->gradient(s32, x, sel ? idx : NULL, sel ? 3 : 0, g32, &err) < 0)
            bail_out("%s: gradient: %s", name, err.text);
        double d = probtest_maxdiff(g64, g32, n), big = 0;
        for (size_t j = 0; j < n; j++)
            big = fmax(big, fabs(g64[j]));
        ok(d > 0 && d <= 1e-5 * big,
           "%s, precision: float32: the gradient over %s is float64's to "
           "%.2g relative, and not the same bits",
           name, sel ? "3 rows by index" : "every row", d / big);
        is_double(probtest_loss(p, s32, x), probtest_loss(p, s64, x), 0,
                  "%s, precision: float32: the loss stays float64's", name);
        p->close(s64);
        p->close(s32);
    }
    /* rows from a sparse data file have no dense rows to keep as floats */
    for (size_t j = 0; j < n; j++)
        A[j] = j % 2 ? 1 : 0;
    double y[] = {1};
    struct probtest_rows r = {0};
    probtest_rows_make(&r, 1, A, y, n, 0, 1, 1);
    void *s = probtest_try_open(&t32, 0, 1, AIA_PART_BLOCK, NULL, 1, &r.d,
                                &err);
    ok(!s && strstr(err.text, "precision: float32 takes dense rows"),
       "%s, precision: float32 on sparse rows: refused (%s)", name,
       s ? "opened" : err.text);
    if (s)
        p->close(s);
    probtest_rows_free(&r);
    free(g64);
    plugtest_free(&t64);
    plugtest_free(&t32);
}
