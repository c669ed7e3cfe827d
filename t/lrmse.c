/* lrmse.c - the least-squares problem: gradients, partitions, optimum. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "tap.h"

#define M 240
#define N 6
#define W 4

static const struct aia_problem_plugin *P;
static struct plugtest T;

static void *open_part(int index, int count, int scheme,
                       const double *weights, uint64_t seed)
{
    struct aia_partition part = {index, count, scheme, 0, weights};
    struct aia_context ctx = plugtest_ctx(
        T.args, index == AIA_PART_ALL ? AIA_ROLE_COORDINATOR
                                      : AIA_ROLE_WORKER,
        index + 1, count, seed);
    void *s;
    struct aia_error err;
    if (P->open(&ctx, &part, &s, &err) < 0)
        bail_out("open: %s", err.text);
    return s;
}

static double loss(void *s, const double *x)
{
    double f;
    struct aia_error err;
    if (P->loss(s, x, &f, &err) < 0)
        bail_out("loss: %s", err.text);
    return f;
}

static void grad(void *s, const double *x, double *g)
{
    struct aia_error err;
    if (P->gradient(s, x, NULL, 0, g, &err) < 0)
        bail_out("gradient: %s", err.text);
}

static double maxdiff(const double *a, const double *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

static void gradient_vs_differences(void)
{
    void *s = open_part(1, W, AIA_PART_BLOCK, NULL, 5);
    double x[N], g[N], xp[N], xm[N], fd[N];
    for (int j = 0; j < N; j++)
        x[j] = 0.3 * j - 0.7;
    grad(s, x, g);
    for (int j = 0; j < N; j++) {
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[j] += 1e-5;
        xm[j] -= 1e-5;
        fd[j] = (loss(s, xp) - loss(s, xm)) / 2e-5;
    }
    ok(maxdiff(g, fd, N) < 1e-7,
       "a worker's gradient matches central differences of its loss "
       "(max diff %.2g)",
       maxdiff(g, fd, N));

    size_t idx[M / W];
    for (size_t i = 0; i < M / W; i++)
        idx[i] = i;
    double gi[N];
    struct aia_error err;
    P->gradient(s, x, idx, M / W, gi, &err);
    ok(maxdiff(g, gi, N) < 1e-14,
       "the gradient over every row by index equals the full one");
    double g0[N];
    size_t one = 3;
    P->gradient(s, x, &one, 1, g0, &err);
    ok(maxdiff(g, g0, N) > 1e-6, "a one-row gradient differs from the mean");
    ok(P->gradient(s, x, (size_t[]){M}, 1, g0, &err) < 0 &&
           strstr(err.text, "not among"),
       "a row the worker does not hold is refused");
    P->close(s);
}

/* Every row is in exactly one part; the parts' losses and gradients,
 * weighted by their rows, give the whole problem's. */
static void partitions(int scheme, const double *weights, const char *what)
{
    void *all = open_part(AIA_PART_ALL, W, scheme, weights, 5);
    is_int((long long)P->rows(all), M, "%s: the coordinator sees every row",
           what);
    double x[N], gall[N], g[N], gsum[N] = {0}, fsum = 0;
    for (int j = 0; j < N; j++)
        x[j] = sin(j + 1.0);
    grad(all, x, gall);
    size_t total = 0;
    for (int p = 0; p < W; p++) {
        void *s = open_part(p, W, scheme, weights, 5);
        size_t k = P->rows(s);
        total += k;
        grad(s, x, g);
        for (int j = 0; j < N; j++)
            gsum[j] += (double)k * g[j] / M;
        fsum += (double)k * loss(s, x) / M;
        P->close(s);
    }
    is_int((long long)total, M, "%s: the parts hold every row once", what);
    ok(maxdiff(gsum, gall, N) < 1e-12,
       "%s: weighted part gradients add up to the whole gradient", what);
    is_double(fsum, loss(all, x), 1e-12 * fabs(fsum),
              "%s: weighted part losses add up to the whole loss", what);
    P->close(all);
}

/* Solve A x = b (n x n) by Gaussian elimination with partial pivoting. */
static void gauss(double *A, double *b, int n)
{
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[piv * n + k]))
                piv = i;
        for (int j = 0; j < n; j++) {
            double t = A[k * n + j];
            A[k * n + j] = A[piv * n + j];
            A[piv * n + j] = t;
        }
        double t = b[k];
        b[k] = b[piv];
        b[piv] = t;
        for (int i = k + 1; i < n; i++) {
            double f = A[i * n + k] / A[k * n + k];
            for (int j = k; j < n; j++)
                A[i * n + j] -= f * A[k * n + j];
            b[i] -= f * b[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int j = i + 1; j < n; j++)
            b[i] -= A[i * n + j] * b[j];
        b[i] /= A[i * n + i];
    }
}

/* The normal equations, built from the workers' own rows through their
 * gradients (g(x) = G x - c), solved independently of the plugin. */
static void optimum(void)
{
    double G[N * N] = {0}, c[N] = {0}, zero[N] = {0}, e[N], g[N];
    for (int p = 0; p < W; p++) {
        void *s = open_part(p, W, AIA_PART_BLOCK, NULL, 5);
        double w = (double)P->rows(s) / M;
        grad(s, zero, g);
        for (int j = 0; j < N; j++)
            c[j] -= w * g[j];
        for (int j = 0; j < N; j++) {
            memset(e, 0, sizeof e);
            e[j] = 1;
            double gj[N];
            grad(s, e, gj);
            for (int i = 0; i < N; i++)
                G[i * N + j] += w * (gj[i] - g[i]);
        }
        P->close(s);
    }
    gauss(G, c, N);

    void *all = open_part(AIA_PART_ALL, W, AIA_PART_BLOCK, NULL, 5);
    double xs[N], fs;
    struct aia_error err;
    if (!ok(P->optimum(all, xs, &fs, &err) == 0, "the optimum is known"))
        diag("%s", err.text);
    ok(maxdiff(xs, c, N) < 1e-10,
       "it solves the normal equations built from the workers' rows "
       "(max diff %.2g)",
       maxdiff(xs, c, N));
    double fpart = 0;
    for (int p = 0; p < W; p++) {
        void *s = open_part(p, W, AIA_PART_BLOCK, NULL, 5);
        fpart += (double)P->rows(s) / M * loss(s, xs);
        P->close(s);
    }
    is_double(fs, fpart, 1e-12, "its loss is the workers' loss there");
    ok(fs > 0.003 && fs < 0.008,
       "with noise 0.1 the optimal loss is near 0.1^2/2 (%g)", fs);
    grad(all, xs, g);
    double gmax = maxdiff(g, zero, N);
    ok(gmax < 1e-12, "the gradient vanishes at the optimum (%.2g)", gmax);
    double x[N];
    for (int j = 0; j < N; j++)
        x[j] = xs[j] + 0.01 * (j + 1);
    double direct = 0;
    for (int p = 0; p < W; p++) {
        void *s = open_part(p, W, AIA_PART_BLOCK, NULL, 5);
        direct += (double)P->rows(s) / M * loss(s, x);
        P->close(s);
    }
    is_double(loss(all, x), direct, 1e-12,
              "the coordinator's loss near the optimum matches the rows'");
    P->close(all);
}

static void determinism(void)
{
    double x[N] = {1, 2, 3, 4, 5, 6}, g1[N], g2[N], g3[N];
    void *a = open_part(2, W, AIA_PART_BLOCK, NULL, 9);
    void *b = open_part(2, W, AIA_PART_BLOCK, NULL, 9);
    void *c = open_part(2, W, AIA_PART_BLOCK, NULL, 10);
    grad(a, x, g1);
    grad(b, x, g2);
    grad(c, x, g3);
    ok(memcmp(g1, g2, sizeof g1) == 0, "the same seed builds the same rows");
    ok(maxdiff(g1, g3, N) > 1e-3, "another seed builds other rows");
    P->close(a);
    P->close(b);
    P->close(c);
}

static void singular(void)
{
    struct plugtest t;
    plugtest_load(&t, "lrmse", AIA_KIND_PROBLEM, "{rows: 3, cols: 5}");
    struct aia_partition part = {AIA_PART_ALL, 1, 0, 0, NULL};
    struct aia_context ctx = plugtest_ctx(t.args, AIA_ROLE_COORDINATOR, 0, 1,
                                          1);
    void *s;
    struct aia_error err;
    P->open(&ctx, &part, &s, &err);
    double x[5], f;
    ok(P->optimum(s, x, &f, &err) < 0 && strstr(err.text, "singular"),
       "fewer rows than columns: no optimum, and it says why");
    ok(P->loss(s, (double[5]){0}, &f, &err) == 0 && f > 0,
       "the loss is still known");
    P->close(s);
    plugtest_free(&t);
}

int main(void)
{
    plugtest_load(&T, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 240, cols: 6, noise: 0.1}");
    P = (const void *)T.p->h;
    plan(0);
    gradient_vs_differences();
    partitions(AIA_PART_BLOCK, NULL, "block");
    partitions(AIA_PART_CYCLIC, NULL, "cyclic");
    partitions(AIA_PART_BLOCK, (double[]){1, 2, 3, 0.5}, "weighted block");
    partitions(AIA_PART_CYCLIC, (double[]){1, 2, 3, 0.5}, "weighted cyclic");
    optimum();
    determinism();
    singular();
    plugtest_free(&T);
    return done_testing();
}
