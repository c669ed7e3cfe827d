/* lrmse.c - the least-squares problem: gradients, partitions, optimum,
 * ridge, conditioning, and rows given as a data set (dense and sparse). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "tap.h"

#define M 240
#define N 6
#define W 4

static const struct aia_problem_plugin *P;
static struct plugtest T;

/* Open part index of count with t's parameters, on rows given by data
 * (NULL: generated); NULL when open fails, with err filled. */
static void *try_open(const struct plugtest *t, int index, int count,
                      int scheme, const double *weights, uint64_t seed,
                      const struct aia_dataset *data, struct aia_error *err)
{
    struct aia_partition part = {index, count, scheme, 0, weights};
    struct aia_context ctx = plugtest_ctx(
        t->args, index == AIA_PART_ALL ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER,
        index + 1, count, seed);
    ctx.data = data;
    void *s;
    return P->open(&ctx, &part, &s, err) < 0 ? NULL : s;
}

static void *open_with(const struct plugtest *t, int index, int count,
                       const struct aia_dataset *data, uint64_t seed)
{
    struct aia_error err;
    void *s = try_open(t, index, count, AIA_PART_BLOCK, NULL, seed, data, &err);
    if (!s)
        bail_out("open: %s", err.text);
    return s;
}

static void *open_part(int index, int count, int scheme, const double *weights,
                       uint64_t seed)
{
    struct aia_error err;
    void *s = try_open(&T, index, count, scheme, weights, seed, NULL, &err);
    if (!s)
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

static double norm2(const double *x, size_t n)
{
    double s = 0;
    for (size_t j = 0; j < n; j++)
        s += x[j] * x[j];
    return s;
}

/* G (n x n) and c of a plain least-squares problem from its workers'
 * gradients g(x) = G x - c, weighted by their rows. */
static void normal_equations(const struct plugtest *t, uint64_t seed, double *G,
                             double *c)
{
    double zero[N] = {0}, e[N], g[N], gj[N];
    memset(G, 0, N * N * sizeof *G);
    memset(c, 0, N * sizeof *c);
    for (int p = 0; p < W; p++) {
        void *s = open_with(t, p, W, NULL, seed);
        double w = (double)P->rows(s) / M;
        grad(s, zero, g);
        for (int j = 0; j < N; j++) {
            c[j] -= w * g[j];
            memset(e, 0, sizeof e);
            e[j] = 1;
            grad(s, e, gj);
            for (int i = 0; i < N; i++)
                G[i * N + j] += w * (gj[i] - g[i]);
        }
        P->close(s);
    }
}

/* Ridge: the gradient gains lambda x, the loss lambda/2 ||x||^2, and the
 * optimum solves (G + lambda I) x = c with G, c from the plain problem. */
static void ridge(void)
{
    const double lambda = 0.5;
    struct plugtest R;
    plugtest_load(&R, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 240, cols: 6, noise: 0.1, ridge: 0.5}");
    double x[N], g0[N], gr[N], gl[N];
    for (int j = 0; j < N; j++)
        x[j] = cos(j + 0.5);
    void *plain = open_with(&T, 1, W, NULL, 5);
    void *rid = open_with(&R, 1, W, NULL, 5);
    grad(plain, x, g0);
    grad(rid, x, gr);
    for (int j = 0; j < N; j++)
        gl[j] = g0[j] + lambda * x[j];
    ok(maxdiff(gr, gl, N) < 1e-14,
       "ridge: a worker's gradient is the plain one plus lambda x");
    is_double(loss(rid, x), loss(plain, x) + 0.5 * lambda * norm2(x, N), 1e-14,
              "ridge: its loss is the plain one plus lambda/2 |x|^2");
    P->close(plain);
    P->close(rid);

    double G[N * N], c[N], xplain[N];
    normal_equations(&T, 5, G, c);
    memcpy(xplain, c, sizeof c);
    double Gp[N * N];
    memcpy(Gp, G, sizeof G);
    gauss(Gp, xplain, N);
    for (int j = 0; j < N; j++)
        G[j * N + j] += lambda;
    gauss(G, c, N);

    void *all = open_with(&R, AIA_PART_ALL, W, NULL, 5);
    double xs[N], fs, g[N], zero[N] = {0};
    struct aia_error err;
    if (!ok(P->optimum(all, xs, &fs, &err) == 0, "ridge: the optimum is known"))
        diag("%s", err.text);
    ok(maxdiff(xs, c, N) < 1e-12,
       "ridge: it solves (G + lambda I) x = c (max diff %.2g)",
       maxdiff(xs, c, N));
    ok(maxdiff(xs, xplain, N) > 1e-2,
       "ridge: and differs from the plain optimum (%.2g)",
       maxdiff(xs, xplain, N));
    grad(all, xs, g);
    ok(maxdiff(g, zero, N) < 1e-12,
       "ridge: the coordinator's gradient vanishes there (%.2g)",
       maxdiff(g, zero, N));
    double direct = 0, xn[N];
    for (int j = 0; j < N; j++)
        xn[j] = xs[j] - 0.02 * (j + 1);
    for (int p = 0; p < W; p++) {
        void *s = open_with(&R, p, W, NULL, 5);
        direct += (double)P->rows(s) / M * loss(s, xn);
        P->close(s);
    }
    is_double(loss(all, xn), direct, 1e-12,
              "ridge: the coordinator's loss near the optimum is the workers'");
    ok(loss(all, xn) > fs, "ridge: and above the optimal loss");
    P->close(all);
    plugtest_free(&R);

    /* More columns than rows: singular without a penalty, not with. */
    plugtest_load(&R, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 3, cols: 5, ridge: 0.1}");
    all = open_with(&R, AIA_PART_ALL, 1, NULL, 1);
    ok(P->optimum(all, xs, &fs, &err) == 0,
       "ridge: 3 rows of 5 columns have an optimum");
    P->close(all);
    plugtest_free(&R);
}

/* Eigenvalues of the symmetric n x n matrix A (destroyed) by cyclic
 * Jacobi rotations, into ev. */
static void jacobi(double *A, int n, double *ev)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                off += A[i * n + j] * A[i * n + j];
        if (off < 1e-300)
            break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (apq == 0)
                    continue;
                double th = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = cs * akp - sn * akq;
                    A[k * n + q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = cs * apk - sn * aqk;
                    A[q * n + k] = sn * apk + cs * aqk;
                }
            }
    }
    for (int i = 0; i < n; i++)
        ev[i] = A[i * n + i];
}

/* condition: kappa: the coordinator's Gram matrix (read off its gradient,
 * G e_j = g(e_j) - g(0)) has a condition number near kappa. */
static void condition(void)
{
    enum { CN = 8 };
    static const double kappas[] = {1, 100, 1e4, 1e6};
    for (size_t t = 0; t < sizeof kappas / sizeof kappas[0]; t++) {
        char yaml[128];
        snprintf(yaml, sizeof yaml, "{rows: 4000, cols: %d, condition: %g}", CN,
                 kappas[t]);
        struct plugtest C;
        plugtest_load(&C, "lrmse", AIA_KIND_PROBLEM, yaml);
        void *all = open_with(&C, AIA_PART_ALL, 1, NULL, 3);
        double G[CN * CN], zero[CN] = {0}, e[CN], g0[CN], g[CN], ev[CN];
        grad(all, zero, g0);
        for (int j = 0; j < CN; j++) {
            memset(e, 0, sizeof e);
            e[j] = 1;
            grad(all, e, g);
            for (int i = 0; i < CN; i++)
                G[i * CN + j] = g[i] - g0[i];
        }
        jacobi(G, CN, ev);
        double lo = ev[0], hi = ev[0];
        for (int i = 1; i < CN; i++) {
            lo = fmin(lo, ev[i]);
            hi = fmax(hi, ev[i]);
        }
        double cond = hi / lo;
        ok(cond > kappas[t] / 2 && cond < kappas[t] * 2,
           "condition %g: the Gram matrix's condition number is %.4g",
           kappas[t], cond);
        P->close(all);
        plugtest_free(&C);
    }
}

/* The generator's contract, restated so that data sets of the very rows
 * can be built: x_true from its own stream, row r from stream 2r + 1
 * (a_j ~ N(0, 1), then the noise of b). */
static void replica(uint64_t seed, double noise, double *A, double *b)
{
    double xt[N];
    struct aia_rng g;
    aia_rng_seed(&g, seed, 0x4c524d5345000000ull);
    for (int j = 0; j < N; j++)
        xt[j] = aia_rng_normal(&g);
    for (int r = 0; r < M; r++) {
        aia_rng_seed(&g, seed, 2 * (uint64_t)r + 1);
        double d = 0;
        for (int j = 0; j < N; j++) {
            A[r * N + j] = aia_rng_normal(&g);
            d += A[r * N + j] * xt[j];
        }
        b[r] = d + noise * aia_rng_normal(&g);
    }
}

/* Storage for a data set of rows [first, first + k) of A, b. */
struct rows {
    size_t ids[M], start[M + 1];
    uint32_t col[M * N];
    double val[M * N];
    struct aia_dataset d;
};

static void dense(struct rows *r, const double *A, const double *b,
                  size_t first, size_t k)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < k; i++)
        r->ids[i] = first + i;
    r->d = (struct aia_dataset){.rows = k,
                                .cols = N,
                                .total_rows = M,
                                .row_ids = r->ids,
                                .y = b + first,
                                .x = A + first * N,
                                .source = "dense.csv"};
}

static void sparse(struct rows *r, const double *A, const double *b,
                   size_t first, size_t k)
{
    memset(r, 0, sizeof *r);
    size_t nz = 0;
    for (size_t i = 0; i < k; i++) {
        r->ids[i] = first + i;
        r->start[i] = nz;
        for (size_t j = 0; j < N; j++)
            if (A[(first + i) * N + j] != 0) {
                r->col[nz] = (uint32_t)j;
                r->val[nz++] = A[(first + i) * N + j];
            }
    }
    r->start[k] = nz;
    r->d = (struct aia_dataset){.rows = k,
                                .cols = N,
                                .total_rows = M,
                                .row_ids = r->ids,
                                .y = b + first,
                                .row_start = r->start,
                                .col = r->col,
                                .val = r->val,
                                .source = "sparse.svm"};
}

/* Store each sparse row's entries in descending column order. */
static void reverse_rows(struct rows *r, size_t k)
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

/* Loss, gradient, a gradient over some rows and, on the coordinator, the
 * optimum of two states on the same rows agree to rounding. */
static void same(void *a, void *b, int all, const char *what)
{
    double x[N], ga[N], gb[N], fa, fb;
    for (int j = 0; j < N; j++)
        x[j] = 0.5 - 0.2 * j;
    fa = loss(a, x);
    fb = loss(b, x);
    is_double(fa, fb, 1e-13 * fabs(fa), "%s: the same loss", what);
    grad(a, x, ga);
    grad(b, x, gb);
    ok(maxdiff(ga, gb, N) < 1e-13, "%s: the same gradient", what);
    struct aia_error err;
    size_t idx[] = {0, 7, 3, 3};
    if (P->gradient(a, x, idx, 4, ga, &err) < 0 ||
        P->gradient(b, x, idx, 4, gb, &err) < 0)
        bail_out("gradient: %s", err.text);
    ok(maxdiff(ga, gb, N) < 1e-13, "%s: the same gradient over some rows",
       what);
    if (!all)
        return;
    double xa[N], xb[N];
    if (P->optimum(a, xa, &fa, &err) < 0 || P->optimum(b, xb, &fb, &err) < 0)
        bail_out("optimum: %s", err.text);
    ok(maxdiff(xa, xb, N) < 1e-12 && fabs(fa - fb) < 1e-13,
       "%s: the same optimum", what);
}

static void data(void)
{
    static double A[M * N], b[M], S[M * N];
    static struct rows r1, r2;
    replica(5, 0.1, A, b);

    /* The generated rows, then the same rows given dense. */
    void *gen = open_with(&T, AIA_PART_ALL, W, NULL, 5);
    dense(&r1, A, b, 0, M);
    void *den = open_with(&T, AIA_PART_ALL, W, &r1.d, 5);
    is_int((long long)P->rows(den), M, "data: the coordinator holds %d rows",
           M);
    same(gen, den, 1, "data: coordinator, generated vs dense");
    P->close(gen);
    P->close(den);
    gen = open_with(&T, 1, W, NULL, 5);
    dense(&r1, A, b, M / W, M / W);
    den = open_with(&T, 1, W, &r1.d, 5);
    same(gen, den, 0, "data: worker 1, generated vs dense");
    P->close(gen);
    P->close(den);

    /* Half the entries zero: dense and sparse storage of the same rows. */
    for (int i = 0; i < M * N; i++)
        S[i] = (i * 7 + i / N) % 2 ? A[i] : 0;
    dense(&r1, S, b, 0, M);
    sparse(&r2, S, b, 0, M);
    is_int((long long)r2.start[M], M * N / 2,
           "data: the sparse rows hold half the entries");
    den = open_with(&T, AIA_PART_ALL, W, &r1.d, 5);
    void *spa = open_with(&T, AIA_PART_ALL, W, &r2.d, 5);
    same(den, spa, 1, "data: coordinator, dense vs sparse");
    P->close(spa);
    reverse_rows(&r2, M);
    spa = open_with(&T, AIA_PART_ALL, W, &r2.d, 5);
    same(den, spa, 1, "data: coordinator, sparse columns out of order");
    P->close(den);
    P->close(spa);
    dense(&r1, S, b, 100, 37);
    sparse(&r2, S, b, 100, 37);
    den = open_with(&T, 3, W, &r1.d, 5);
    spa = open_with(&T, 3, W, &r2.d, 5);
    same(den, spa, 0, "data: worker 3, dense vs sparse");
    P->close(den);
    P->close(spa);

    /* A worker uses the rows it is given, whichever they are: 37 rows
     * from 100 on, though block part 2 of 4 would be rows 120 to 179. */
    for (int sp = 0; sp < 2; sp++) {
        (sp ? sparse : dense)(&r1, S, b, 100, 37);
        void *s = open_with(&T, 2, W, &r1.d, 5);
        double x[N], g[N], want[N] = {0}, f = 0;
        for (int j = 0; j < N; j++)
            x[j] = 0.1 * j;
        for (int i = 100; i < 137; i++) {
            double e = -b[i];
            for (int j = 0; j < N; j++)
                e += S[i * N + j] * x[j];
            f += 0.5 * e * e / 37;
            for (int j = 0; j < N; j++)
                want[j] += e * S[i * N + j] / 37;
        }
        is_int((long long)P->rows(s), 37,
               "data (%s): worker 2 holds the 37 rows given",
               sp ? "sparse" : "dense");
        grad(s, x, g);
        ok(maxdiff(g, want, N) < 1e-13, "data (%s): its gradient is theirs",
           sp ? "sparse" : "dense");
        is_double(loss(s, x), f, 1e-13, "data (%s): its loss is theirs",
                  sp ? "sparse" : "dense");
        P->close(s);
    }

    /* Data the problem cannot use. */
    struct aia_error err;
    sparse(&r2, S, b, 0, 20);
    r2.col[5] = N;
    ok(!try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r2.d, &err) &&
           strstr(err.text, "sparse.svm: row 2: column 7 of 6"),
       "data: a column out of range is refused, naming the row (%s)", err.text);
    dense(&r1, A, b, 0, 20);
    ok(!try_open(&T, AIA_PART_ALL, W, AIA_PART_BLOCK, NULL, 5, &r1.d, &err) &&
           strstr(err.text, "20 of the 240 rows"),
       "data: a coordinator given only some rows says so (%s)", err.text);
}

/* smoothness: L = lambda_max(A'A/k) + ridge for the k rows held, against
 * the Hessian built column by column from the gradient; a problem
 * without rows of its own (the coordinator's view) is not asked. */
static void smoothness(void)
{
    struct plugtest r;
    plugtest_load(&r, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 240, cols: 6, condition: 50, ridge: 0.25}");
    void *s = open_with(&r, 2, W, NULL, 3);
    struct aia_error err;
    double L, H[N][N], g0[N], e[N] = {0}, v[N], w[N], lambda = 0;
    ok(P->smoothness && P->smoothness(s, &L, &err) == 0,
       "lrmse gives its smoothness");
    P->gradient(s, e, NULL, 0, g0, &err);
    for (int j = 0; j < N; j++) {
        e[j] = 1;
        P->gradient(s, e, NULL, 0, H[j], &err);
        for (int a = 0; a < N; a++)
            H[j][a] -= g0[a];
        e[j] = 0;
        v[j] = 1;
    }
    for (int it = 0; it < 5000; it++) {
        double norm = 0;
        for (int a = 0; a < N; a++) {
            w[a] = 0;
            for (int b = 0; b < N; b++)
                w[a] += H[a][b] * v[b];
            norm += w[a] * w[a];
        }
        lambda = sqrt(norm);
        for (int a = 0; a < N; a++)
            v[a] = w[a] / lambda;
    }
    is_double(L, lambda, 1e-5 * lambda,
              "L is the Hessian's largest eigenvalue, ridge included (%g)",
              lambda);
    ok(lambda > 0.25, "which the ridge raises above 0.25");
    P->close(s);
    plugtest_free(&r);
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
    ridge();
    condition();
    data();
    smoothness();
    plugtest_free(&T);
    return done_testing();
}
