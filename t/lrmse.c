/* lrmse.c - the least-squares problem: gradients, partitions, optimum,
 * ridge, conditioning, and rows given as a data set (dense and sparse). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define M 240
#define N 6
#define W 4

static const struct aia_problem_plugin *P;
static struct plugtest T;

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

/* G (n x n) and c of a plain least-squares problem from its workers'
 * gradients g(x) = G x - c, weighted by their rows. */
static void normal_equations(const struct plugtest *t, uint64_t seed, double *G,
                             double *c)
{
    double zero[N] = {0}, e[N], g[N], gj[N];
    memset(G, 0, N * N * sizeof *G);
    memset(c, 0, N * sizeof *c);
    for (int p = 0; p < W; p++) {
        void *s = probtest_open(t, p, W, NULL, seed);
        double w = (double)P->rows(s) / M;
        probtest_grad(P, s, zero, g);
        for (int j = 0; j < N; j++) {
            c[j] -= w * g[j];
            memset(e, 0, sizeof e);
            e[j] = 1;
            probtest_grad(P, s, e, gj);
            for (int i = 0; i < N; i++)
                G[i * N + j] += w * (gj[i] - g[i]);
        }
        P->close(s);
    }
}

/* The normal equations, built from the workers' own rows through their
 * gradients (g(x) = G x - c), solved independently of the plugin. */
static void optimum(void)
{
    double G[N * N], c[N], zero[N] = {0}, g[N];
    normal_equations(&T, 5, G, c);
    gauss(G, c, N);

    void *all = probtest_open(&T, AIA_PART_ALL, W, NULL, 5);
    double xs[N], fs;
    struct aia_error err;
    if (!ok(P->optimum(all, xs, &fs, &err) == 0, "the optimum is known"))
        diag("%s", err.text);
    ok(probtest_maxdiff(xs, c, N) < 1e-10,
       "it solves the normal equations built from the workers' rows "
       "(max diff %.2g)",
       probtest_maxdiff(xs, c, N));
    is_double(fs, probtest_parts_loss(&T, W, M, 5, xs), 1e-12,
              "its loss is the workers' loss there");
    ok(fs > 0.003 && fs < 0.008,
       "with noise 0.1 the optimal loss is near 0.1^2/2 (%g)", fs);
    probtest_grad(P, all, xs, g);
    double gmax = probtest_maxdiff(g, zero, N);
    ok(gmax < 1e-12, "the gradient vanishes at the optimum (%.2g)", gmax);
    double x[N];
    for (int j = 0; j < N; j++)
        x[j] = xs[j] + 0.01 * (j + 1);
    is_double(probtest_loss(P, all, x), probtest_parts_loss(&T, W, M, 5, x),
              1e-12,
              "the coordinator's loss near the optimum matches the rows'");
    P->close(all);
}

static void singular(void)
{
    struct plugtest t;
    plugtest_load(&t, "lrmse", AIA_KIND_PROBLEM, "{rows: 3, cols: 5}");
    struct aia_partition part = {AIA_PART_ALL, 1, 0, 0, NULL};
    struct aia_context ctx =
        plugtest_ctx(t.args, AIA_ROLE_COORDINATOR, 0, 1, 1);
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
    void *plain = probtest_open(&T, 1, W, NULL, 5);
    void *rid = probtest_open(&R, 1, W, NULL, 5);
    probtest_grad(P, plain, x, g0);
    probtest_grad(P, rid, x, gr);
    for (int j = 0; j < N; j++)
        gl[j] = g0[j] + lambda * x[j];
    ok(probtest_maxdiff(gr, gl, N) < 1e-14,
       "ridge: a worker's gradient is the plain one plus lambda x");
    is_double(probtest_loss(P, rid, x),
              probtest_loss(P, plain, x) + 0.5 * lambda * norm2(x, N), 1e-14,
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

    void *all = probtest_open(&R, AIA_PART_ALL, W, NULL, 5);
    double xs[N], fs, g[N], zero[N] = {0};
    struct aia_error err;
    if (!ok(P->optimum(all, xs, &fs, &err) == 0, "ridge: the optimum is known"))
        diag("%s", err.text);
    ok(probtest_maxdiff(xs, c, N) < 1e-12,
       "ridge: it solves (G + lambda I) x = c (max diff %.2g)",
       probtest_maxdiff(xs, c, N));
    ok(probtest_maxdiff(xs, xplain, N) > 1e-2,
       "ridge: and differs from the plain optimum (%.2g)",
       probtest_maxdiff(xs, xplain, N));
    probtest_grad(P, all, xs, g);
    ok(probtest_maxdiff(g, zero, N) < 1e-12,
       "ridge: the coordinator's gradient vanishes there (%.2g)",
       probtest_maxdiff(g, zero, N));
    double xn[N];
    for (int j = 0; j < N; j++)
        xn[j] = xs[j] - 0.02 * (j + 1);
    is_double(probtest_loss(P, all, xn), probtest_parts_loss(&R, W, M, 5, xn),
              1e-12,
              "ridge: the coordinator's loss near the optimum is the workers'");
    ok(probtest_loss(P, all, xn) > fs, "ridge: and above the optimal loss");
    P->close(all);
    plugtest_free(&R);

    /* More columns than rows: singular without a penalty, not with. */
    plugtest_load(&R, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 3, cols: 5, ridge: 0.1}");
    all = probtest_open(&R, AIA_PART_ALL, 1, NULL, 1);
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
        void *all = probtest_open(&C, AIA_PART_ALL, 1, NULL, 3);
        double G[CN * CN], zero[CN] = {0}, e[CN], g0[CN], g[CN], ev[CN];
        probtest_grad(P, all, zero, g0);
        for (int j = 0; j < CN; j++) {
            memset(e, 0, sizeof e);
            e[j] = 1;
            probtest_grad(P, all, e, g);
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

static void data(void)
{
    static double A[M * N], b[M], S[M * N];
    struct probtest_rows r1 = {0}, r2 = {0};
    double cmp[N];
    for (int j = 0; j < N; j++)
        cmp[j] = 0.5 - 0.2 * j;
    const struct probtest_at at = {cmp, N, 1e-13, 1e-12};
    replica(5, 0.1, A, b);

    /* The generated rows, then the same rows given dense. */
    probtest_rows_make(&r1, 0, A, b, N, 0, M, M);
    void *den = probtest_open(&T, AIA_PART_ALL, W, &r1.d, 5);
    is_int((long long)P->rows(den), M, "data: the coordinator holds %d rows",
           M);
    P->close(den);
    probtest_same_rows(&T, AIA_PART_ALL, W, NULL, &r1.d, 5, &at,
                       "data: coordinator, generated vs dense");
    probtest_rows_make(&r1, 0, A, b, N, M / W, M / W, M);
    probtest_same_rows(&T, 1, W, NULL, &r1.d, 5, &at,
                       "data: worker 1, generated vs dense");

    /* Half the entries zero: dense and sparse storage of the same rows. */
    for (int i = 0; i < M * N; i++)
        S[i] = (i * 7 + i / N) % 2 ? A[i] : 0;
    probtest_rows_make(&r1, 0, S, b, N, 0, M, M);
    probtest_rows_make(&r2, 1, S, b, N, 0, M, M);
    is_int((long long)r2.start[M], M * N / 2,
           "data: the sparse rows hold half the entries");
    probtest_same_rows(&T, AIA_PART_ALL, W, &r1.d, &r2.d, 5, &at,
                       "data: coordinator, dense vs sparse");
    probtest_rows_reverse(&r2, M);
    probtest_same_rows(&T, AIA_PART_ALL, W, &r1.d, &r2.d, 5, &at,
                       "data: coordinator, sparse columns out of order");
    probtest_rows_make(&r1, 0, S, b, N, 100, 37, M);
    probtest_rows_make(&r2, 1, S, b, N, 100, 37, M);
    probtest_same_rows(&T, 3, W, &r1.d, &r2.d, 5, &at,
                       "data: worker 3, dense vs sparse");

    /* A worker uses the rows it is given, whichever they are: 37 rows
     * from 100 on, though block part 2 of 4 would be rows 120 to 179. */
    for (int sp = 0; sp < 2; sp++) {
        probtest_rows_make(&r1, sp, S, b, N, 100, 37, M);
        void *s = probtest_open(&T, 2, W, &r1.d, 5);
        double x[N], want[N] = {0}, f = 0;
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
        probtest_holds(P, s, 37, x, N, f, want, 1e-13,
                       sp ? "data (sparse): worker 2"
                          : "data (dense): worker 2");
        P->close(s);
    }

    /* Data the problem cannot use. */
    struct aia_error err;
    probtest_rows_make(&r2, 1, S, b, N, 0, 20, M);
    r2.col[5] = N;
    ok(!probtest_try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r2.d, &err) &&
           strstr(err.text, "rows.svm: row 2: column 7 of 6"),
       "data: a column out of range is refused, naming the row (%s)", err.text);
    probtest_rows_make(&r1, 0, A, b, N, 0, 20, M);
    ok(!probtest_try_open(&T, AIA_PART_ALL, W, AIA_PART_BLOCK, NULL, 5, &r1.d,
                          &err) &&
           strstr(err.text, "20 of the 240 rows"),
       "data: a coordinator given only some rows says so (%s)", err.text);
    probtest_rows_free(&r1);
    probtest_rows_free(&r2);
}

/* smoothness: L = lambda_max(A'A/k) + ridge for the k rows held, against
 * the Hessian built column by column from the gradient; a problem
 * without rows of its own (the coordinator's view) is not asked. */
static void smoothness(void)
{
    struct plugtest r;
    plugtest_load(&r, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 240, cols: 6, condition: 50, ridge: 0.25}");
    void *s = probtest_open(&r, 2, W, NULL, 3);
    struct aia_error err;
    double L, H[N][N], g0[N], e[N] = {0};
    ok(P->smoothness && P->smoothness(s, &L, &err) == 0,
       "lrmse gives its smoothness");
    P->gradient(s, e, NULL, 0, g0, &err);
    for (int j = 0; j < N; j++) {
        e[j] = 1;
        P->gradient(s, e, NULL, 0, H[j], &err);
        for (int a = 0; a < N; a++)
            H[j][a] -= g0[a];
        e[j] = 0;
    }
    double lambda = probtest_top_eigenvalue(&H[0][0], N, 5000);
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
    double x[N];
    for (int j = 0; j < N; j++)
        x[j] = 0.3 * j - 0.7;
    probtest_claims(&T, W, x, N, M, 1e-7);
    optimum();
    singular();
    ridge();
    condition();
    data();
    smoothness();
    probtest_float32("lrmse", "{rows: 240, cols: 6, noise: 0.1}", "{rows: 240, cols: 6, noise: 0.1, precision: float32}", W, x, N);
    plugtest_free(&T);
    return done_testing();
}
