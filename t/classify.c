/* classify.c - the multi-class problems (softmax, mlp) through the real
 * loader: gradients against central differences of the loss, gradients
 * over chosen rows, dense and sparse rows alike, the accuracy against a
 * direct computation, and refused labels. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define M 60 /* rows */
#define N 4  /* features */
#define C 3  /* classes */

/* The rows, dense and as CSR with the zeros left out. */
static double X[M * N], Y[M];
static size_t ids[M], start[M + 1];
static uint32_t cols[M * N];
static double vals[M * N];

static struct aia_dataset dense(size_t first, size_t rows)
{
    struct aia_dataset d = {0};
    d.rows = rows;
    d.cols = N;
    d.total_rows = M;
    d.row_ids = ids + first;
    d.y = Y + first;
    d.x = X + first * N;
    d.source = "rows.csv";
    return d;
}

static struct aia_dataset sparse(void)
{
    struct aia_dataset d = dense(0, M);
    d.x = NULL;
    d.row_start = start;
    d.col = cols;
    d.val = vals;
    return d;
}

static void make_rows(void)
{
    struct aia_rng g;
    aia_rng_seed(&g, 5, 1);
    size_t k = 0;
    for (size_t i = 0; i < M; i++) {
        ids[i] = i;
        start[i] = k;
        Y[i] = (double)aia_rng_below(&g, C);
        for (size_t j = 0; j < N; j++) {
            double v = aia_rng_uniform(&g) < 0.3 ? 0 : aia_rng_normal(&g);
            v += (j == (size_t)Y[i]) ? 1.5 : 0; /* learnable */
            X[i * N + j] = v;
            if (v != 0) {
                cols[k] = (uint32_t)j;
                vals[k++] = v;
            }
        }
    }
    start[M] = k;
}

struct prob {
    const char *name;
    const struct aia_problem_plugin *p;
    struct plugtest t;
};

static void *open_on(struct prob *pr, const struct aia_dataset *d, int index,
                     struct aia_error *err)
{
    struct aia_partition part = {index, 1, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(
        pr->t.args,
        index == AIA_PART_ALL ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER, 1, 1,
        11);
    ctx.data = d;
    void *s;
    return pr->p->open(&ctx, &part, &s, err) < 0 ? NULL : s;
}

static void *must_open(struct prob *pr, const struct aia_dataset *d)
{
    struct aia_error err;
    void *s = open_on(pr, d, 0, &err);
    if (!s)
        bail_out("%s: open: %s", pr->name, err.text);
    return s;
}

/* What every classifier must do; x0 a model to test at. */
static void common(struct prob *pr, const double *x0)
{
    struct aia_dataset d = dense(0, M), sp = sparse();
    void *s = must_open(pr, &d);
    size_t n = pr->p->dim(s);
    double *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g);
    double *fd = malloc(n * sizeof *fd), *g2 = malloc(n * sizeof *g2);
    memcpy(x, x0, n * sizeof *x);
    struct aia_error err;
    ok(pr->p->gradient(s, x, NULL, 0, g, &err) == 0, "%s: a gradient",
       pr->name);
    double h = 1e-5, scale = 0;
    for (size_t j = 0; j < n; j++) {
        double keep = x[j];
        x[j] = keep + h;
        double fp = probtest_loss(pr->p, s, x);
        x[j] = keep - h;
        double fm = probtest_loss(pr->p, s, x);
        x[j] = keep;
        fd[j] = (fp - fm) / (2 * h);
        scale = fmax(scale, fabs(fd[j]));
    }
    double diff = probtest_maxdiff(g, fd, n);
    ok(diff < 1e-7 * (1 + scale),
       "%s: the gradient matches central differences of the loss (max diff "
       "%.1e, largest entry %.2g)",
       pr->name, diff, scale);
    size_t all[M];
    for (size_t i = 0; i < M; i++)
        all[i] = i;
    pr->p->gradient(s, x, all, M, g2, &err);
    ok(probtest_maxdiff(g, g2, n) < 1e-14,
       "%s: the gradient over every row by index "
       "is the full one",
       pr->name);
    size_t bad = M;
    ok(pr->p->gradient(s, x, &bad, 1, g2, &err) < 0,
       "%s: a row not held is refused (%s)", pr->name, err.text);
    /* sparse rows: the same numbers */
    void *ss = must_open(pr, &sp);
    double fs = probtest_loss(pr->p, ss, x), f = probtest_loss(pr->p, s, x);
    pr->p->gradient(ss, x, NULL, 0, g2, &err);
    ok(fabs(fs - f) < 1e-13 && probtest_maxdiff(g, g2, n) < 1e-13,
       "%s: sparse rows give the dense rows' loss and gradient", pr->name);
    double a1, a2;
    pr->p->metric(s, x, &a1, &err);
    pr->p->metric(ss, x, &a2, &err);
    ok(a1 == a2, "%s: and their accuracy", pr->name);
    pr->p->close(ss);
    /* a worker's part: the mean over its rows */
    struct aia_dataset part = dense(20, 15);
    void *sw = must_open(pr, &part);
    size_t sel[15];
    for (size_t i = 0; i < 15; i++)
        sel[i] = 20 + i;
    pr->p->gradient(sw, x, NULL, 0, g2, &err);
    pr->p->gradient(s, x, sel, 15, g, &err);
    ok(probtest_maxdiff(g, g2, n) < 1e-14,
       "%s: a worker holding rows 20-34 gives the gradient over them",
       pr->name);
    pr->p->close(sw);
    pr->p->close(s);
    /* labels */
    double keep = Y[7];
    Y[7] = C;
    ok(open_on(pr, &d, 0, &err) == NULL &&
           strstr(err.text, "rows.csv: row 8: label 3 is not a class 0 to 2"),
       "%s: a label out of range is refused, naming the row (%s)", pr->name,
       err.text);
    Y[7] = 0.5;
    ok(open_on(pr, &d, 0, &err) == NULL, "%s: a label 0.5 is refused",
       pr->name);
    Y[7] = keep;
    ok(open_on(pr, NULL, 0, &err) == NULL && strstr(err.text, "problem.data"),
       "%s: without a data file it asks for one (%s)", pr->name, err.text);
    free(x);
    free(g);
    free(fd);
    free(g2);
}

static void softmax(void)
{
    struct prob pr = {"softmax", NULL, {0}};
    plugtest_load(&pr.t, "softmax", AIA_KIND_PROBLEM, "{classes: 3, l2: 0.1}");
    pr.p = (const struct aia_problem_plugin *)pr.t.p->h;
    struct aia_dataset d = dense(0, M);
    void *s = must_open(&pr, &d);
    size_t n = pr.p->dim(s);
    is_int((long long)n, C * (N + 1), "softmax: dim is C (n + 1)");
    double *x = calloc(n, sizeof *x);
    is_double(probtest_loss(pr.p, s, x), log(C), 1e-14,
              "softmax: the loss at 0 is log C");
    struct aia_rng g;
    aia_rng_seed(&g, 3, 3);
    for (size_t j = 0; j < n; j++)
        x[j] = aia_rng_normal(&g);
    /* the accuracy, directly */
    size_t good = 0;
    for (size_t i = 0; i < M; i++) {
        size_t best = 0;
        double z[C];
        for (size_t k = 0; k < C; k++) {
            z[k] = x[C * N + k];
            for (size_t j = 0; j < N; j++)
                z[k] += x[k * N + j] * X[i * N + j];
            if (z[k] > z[best])
                best = k;
        }
        good += best == (size_t)Y[i];
    }
    double acc;
    struct aia_error err;
    pr.p->metric(s, x, &acc, &err);
    is_double(acc, (double)good / M, 0,
              "softmax: the accuracy is the share "
              "of rows whose top score is their "
              "class (%zu of %d)",
              good, M);
    ok(strcmp(pr.p->metric_name, "accuracy") == 0,
       "softmax: the metric is named accuracy");
    pr.p->close(s);
    common(&pr, x);
    free(x);
    plugtest_free(&pr.t);
}

/* The network's loss and accuracy computed here, from the documented
 * initialisation (He's, stream 0x4d4c5000000000000 + layer) plus x. */
static void mlp_direct(const size_t *width, size_t nl, uint64_t seed,
                       const double *x, double *loss, double *acc)
{
    size_t dim = 0, off[8];
    for (size_t l = 1; l <= nl; l++) {
        off[l - 1] = dim;
        dim += width[l] * (width[l - 1] + 1);
    }
    double *w = calloc(dim, sizeof *w);
    for (size_t l = 1; l <= nl; l++) {
        struct aia_rng g;
        aia_rng_seed(&g, seed, 0x4d4c500000000000ull + l);
        for (size_t j = 0; j < width[l] * width[l - 1]; j++)
            w[off[l - 1] + j] =
                sqrt(2.0 / (double)width[l - 1]) * aia_rng_normal(&g);
    }
    for (size_t j = 0; j < dim; j++)
        w[j] += x[j];
    double sum = 0;
    size_t good = 0;
    for (size_t i = 0; i < M; i++) {
        double a[16], h[16];
        memcpy(a, X + i * N, N * sizeof *a);
        for (size_t l = 1; l <= nl; l++) {
            const double *W = w + off[l - 1], *b = W + width[l] * width[l - 1];
            for (size_t o = 0; o < width[l]; o++) {
                h[o] = b[o];
                for (size_t k = 0; k < width[l - 1]; k++)
                    h[o] += W[o * width[l - 1] + k] * a[k];
                if (l < nl && h[o] < 0)
                    h[o] = 0;
            }
            memcpy(a, h, width[l] * sizeof *a);
        }
        size_t best = 0;
        double top = a[0], se = 0;
        for (size_t k = 1; k < C; k++)
            if (a[k] > a[best])
                best = k, top = a[k];
        for (size_t k = 0; k < C; k++)
            se += exp(a[k] - top);
        sum += log(se) + top - a[(size_t)Y[i]];
        good += best == (size_t)Y[i];
    }
    double ww = 0;
    for (size_t j = 0; j < dim; j++)
        ww += w[j] * w[j];
    *loss = sum / M + 0.5 * 0.01 * ww;
    *acc = (double)good / M;
    free(w);
}

static void mlp(void)
{
    struct prob pr = {"mlp", NULL, {0}};
    plugtest_load(&pr.t, "mlp", AIA_KIND_PROBLEM,
                  "{classes: 3, hidden: [5, 4], l2: 0.01}");
    pr.p = (const struct aia_problem_plugin *)pr.t.p->h;
    struct aia_dataset d = dense(0, M);
    void *s = must_open(&pr, &d);
    size_t n = pr.p->dim(s), width[] = {N, 5, 4, C};
    is_int((long long)n, 5 * (N + 1) + 4 * 6 + C * 5,
           "mlp: dim counts every weight and bias");
    double *x = calloc(n, sizeof *x);
    struct aia_rng g;
    aia_rng_seed(&g, 4, 4);
    for (size_t j = 0; j < n; j++)
        x[j] = 0.1 * aia_rng_normal(&g);
    double f, acc, fd, accd;
    struct aia_error err;
    pr.p->metric(s, x, &acc, &err);
    f = probtest_loss(pr.p, s, x);
    mlp_direct(width, 3, 11, x, &fd, &accd);
    is_double(f, fd, 1e-12,
              "mlp: the loss is the network's computed "
              "directly from the seeded initial weights + x");
    is_double(acc, accd, 0, "mlp: so is the accuracy (%g)", accd);
    double *x0 = calloc(n, sizeof *x0);
    void *s2;
    struct aia_partition part = {0, 1, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(pr.t.args, AIA_ROLE_WORKER, 1, 1, 12);
    ctx.data = &d;
    pr.p->open(&ctx, &part, &s2, &err);
    ok(probtest_loss(pr.p, s2, x0) != probtest_loss(pr.p, s, x0),
       "mlp: another seed starts from other weights");
    pr.p->close(s2);
    ok(pr.p->optimum == NULL, "mlp: no optimum (non-convex)");
    pr.p->close(s);
    common(&pr, x);
    free(x);
    free(x0);
    plugtest_free(&pr.t);
}

/* precision: float32: the loss, the gradient and the accuracy within
 * float's rounding of float64's, and not equal to them (the products are
 * in float); sparse rows refused.  args: the problem's parameters but the
 * precision, as the inside of a YAML mapping. */
static void float32(const char *name, const char *args)
{
    struct prob p64 = {name, NULL, {0}}, p32 = {name, NULL, {0}};
    char a64[160], a32[160];
    snprintf(a64, sizeof a64, "{%s}", args);
    snprintf(a32, sizeof a32, "{%s, precision: float32}", args);
    plugtest_load(&p64.t, name, AIA_KIND_PROBLEM, a64);
    plugtest_load(&p32.t, name, AIA_KIND_PROBLEM, a32);
    p64.p = (const struct aia_problem_plugin *)p64.t.p->h;
    p32.p = (const struct aia_problem_plugin *)p32.t.p->h;
    struct aia_dataset d = dense(0, M), sp = sparse();
    void *s64 = must_open(&p64, &d), *s32 = must_open(&p32, &d);
    size_t n = p64.p->dim(s64);
    double *x = malloc(n * sizeof *x), *g64 = malloc(n * sizeof *g64);
    double *g32 = malloc(n * sizeof *g32);
    struct aia_rng g;
    aia_rng_seed(&g, 5, 5);
    for (size_t j = 0; j < n; j++)
        x[j] = 0.3 * aia_rng_normal(&g);
    probtest_grad(p64.p, s64, x, g64);
    probtest_grad(p32.p, s32, x, g32);
    double f64 = probtest_loss(p64.p, s64, x), f32 = probtest_loss(p32.p, s32, x);
    double dg = probtest_maxdiff(g32, g64, n), big = 0;
    for (size_t j = 0; j < n; j++)
        big = fmax(big, fabs(g64[j]));
    ok(dg <= 1e-5 * big && dg > 0,
       "%s, float32: the gradient within float's rounding of float64's "
       "(%.1e of %.2g)",
       name, dg, big);
    ok(fabs(f32 - f64) <= 1e-5 * fabs(f64),
       "%s, float32: so is the loss (%.17g, %.17g)", name, f32, f64);
    double m64, m32;
    struct aia_error err;
    p64.p->metric(s64, x, &m64, &err);
    p32.p->metric(s32, x, &m32, &err);
    ok(fabs(m32 - m64) <= 2.0 / M, "%s, float32: and the accuracy (%g, %g)",
       name, m32, m64);
    ok(open_on(&p32, &sp, 0, &err) == NULL && strstr(err.text, "dense"),
       "%s, float32: sparse rows are refused (%s)", name, err.text);
    p64.p->close(s64);
    p32.p->close(s32);
    plugtest_free(&p64.t);
    plugtest_free(&p32.t);
    free(x);
    free(g64);
    free(g32);
}

int main(void)
{
    make_rows();
    softmax();
    float32("softmax", "classes: 3");
    mlp();
    float32("mlp", "classes: 3, hidden: [7, 5]");
    /* with a penalty, float32 keeps w = w0 + x in double for it */
    float32("mlp", "classes: 3, hidden: [7, 5], l2: 0.01");
    return done_testing();
}
