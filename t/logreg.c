/* logreg.c - the logistic-regression problem: gradients, stable losses,
 * labels, generated separable rows, accuracy, the Newton optimum,
 * partitions, and rows given as a data set (dense and sparse). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define M 400
#define N 5
#define W 4

static const struct aia_problem_plugin *P;
static struct plugtest T; /* rows 400, cols 5, l2 0.05, flip 0.1 */

static double maxabs(const double *a, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs(a[i]));
    return d;
}

/* Row i as held by s, times its label's sign: the gradient of row i alone
 * at 0 is -sigma(0) s_i a_i = -s_i a_i / 2, exactly. */
static void signed_row(void *s, size_t i, double *sa)
{
    double zero[N] = {0};
    struct aia_error err;
    if (P->gradient(s, zero, &i, 1, sa, &err) < 0)
        bail_out("gradient: %s", err.text);
    for (int j = 0; j < N; j++)
        sa[j] *= -2;
}

/* Margins of a thousand: the loss is 0 or 1000, never inf or NaN. */
static void stability(void)
{
    static const double A[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    static const double y[] = {1, 0};
    struct plugtest t;
    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM, "{}");
    struct probtest_rows r = {0};
    probtest_rows_make(&r, 0, A, y, N, 0, 2, 2);
    void *s = probtest_open(&t, AIA_PART_ALL, 1, &r.d, 1);
    double x[N] = {1000, 0, 0, 0, 0}, g[N], f;
    f = probtest_loss(P, s, x);
    is_double(f, 500, 1e-9,
              "margins +1000 and -1000: the mean loss is (0 + 1000)/2");
    probtest_grad(P, s, x, g);
    ok(isfinite(g[0]) && fabs(g[0] - 0.5) < 1e-15 && maxabs(g + 1, N - 1) == 0,
       "and the gradient is finite: (0.5, 0, ...) (got %g)", g[0]);
    size_t first = 0, second = 1;
    struct aia_error err;
    P->gradient(s, x, &first, 1, g, &err);
    ok(maxabs(g, N) == 0, "a row at margin +1000 has a zero gradient");
    P->gradient(s, x, &second, 1, g, &err);
    ok(g[0] == 1, "a row at margin -1000 has gradient a (%g)", g[0]);
    x[0] = -1e6;
    f = probtest_loss(P, s, x);
    is_double(f, 5e5, 1e-6, "margins of a million: %g", f);
    P->close(s);

    probtest_rows_make(&r, 0, A, y, N, 0, 1, 1);
    s = probtest_open(&t, AIA_PART_ALL, 1, &r.d, 1);
    x[0] = 1000;
    f = probtest_loss(P, s, x);
    ok(f >= 0 && f < 1e-300, "one row right by 1000: a loss of 0 (%g)", f);
    x[0] = 30;
    is_double(probtest_loss(P, s, x), exp(-30), 1e-25,
              "right by 30: exp(-30), not rounded away by 1 + exp(-30)");
    P->close(s);
    probtest_rows_free(&r);
    plugtest_free(&t);
}

/* Hand-made rows at x = (1, -1): a . x is 1, -1, 0, 3, 2 against labels
 * 1, 0, 1, 0, 1: rows 1, 2 and 5 are right, row 3 lies on the boundary
 * and row 4 is wrong, so the accuracy is 3/5. */
static void metric(void)
{
    static const double A[] = {2, 1, 0, 0, 0, 1, 2, 0, 0,  0, 1, 1, 0,
                               0, 0, 3, 0, 0, 0, 0, 0, -2, 0, 0, 0};
    static const double y01[] = {1, 0, 1, 0, 1}, ypm[] = {1, -1, 1, -1, 1};
    struct plugtest t;
    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM, "{}");
    is_string(P->metric_name, "accuracy", "the metric is named accuracy");
    double x[N] = {1, -1, 0, 0, 0};
    struct probtest_rows r = {0};
    for (int sp = 0; sp < 2; sp++)
        for (int pm = 0; pm < 2; pm++) {
            probtest_rows_make(&r, sp, A, pm ? ypm : y01, N, 0, 5, 5);
            void *s = probtest_open(&t, AIA_PART_ALL, 1, &r.d, 1);
            is_double(probtest_metric(P, s, x), 0.6, 0,
                      "%s rows, labels %s: accuracy 3/5",
                      sp ? "sparse" : "dense", pm ? "-1/+1" : "0/1");
            x[0] = -1;
            x[1] = 1;
            is_double(probtest_metric(P, s, x), 0.2, 0,
                      "%s rows, labels %s: 1/5 at the opposite model",
                      sp ? "sparse" : "dense", pm ? "-1/+1" : "0/1");
            x[0] = 1;
            x[1] = -1;
            P->close(s);
        }
    probtest_rows_make(&r, 0, A, y01, N, 0, 5, 5);
    void *s = probtest_open(&t, AIA_PART_ALL, 1, &r.d, 1);
    double zero[N] = {0};
    is_double(probtest_metric(P, s, zero), 0, 0,
              "at 0 every row is on the boundary");
    P->close(s);
    probtest_rows_free(&r);
    plugtest_free(&t);
}

/* Labels 0/1 and -1/+1 are the same problem; others are refused. */
static void labels(void)
{
    static double A[M * N], y01[M], ypm[M], ybad[M];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            A[i * N + j] = sin(i * N + j + 1.0);
        y01[i] = (i * 5) % 3 == 0;
        ypm[i] = y01[i] ? 1 : -1;
    }
    struct probtest_rows r1 = {0}, r2 = {0};
    probtest_rows_make(&r1, 0, A, y01, N, 0, M, M);
    probtest_rows_make(&r2, 0, A, ypm, N, 0, M, M);
    void *a = probtest_open(&T, AIA_PART_ALL, W, &r1.d, 5);
    void *b = probtest_open(&T, AIA_PART_ALL, W, &r2.d, 5);
    double x[N] = {0.3, -0.2, 0.1, 0.5, -0.4}, ga[N], gb[N];
    probtest_grad(P, a, x, ga);
    probtest_grad(P, b, x, gb);
    ok(probtest_loss(P, a, x) == probtest_loss(P, b, x) &&
           memcmp(ga, gb, sizeof ga) == 0 &&
           probtest_metric(P, a, x) == probtest_metric(P, b, x),
       "labels -1/+1 give the very loss, gradient and accuracy of 0/1");
    P->close(a);
    P->close(b);

    struct aia_error err;
    memcpy(ybad, y01, sizeof ybad);
    ybad[12] = 2;
    probtest_rows_make(&r1, 1, A, ybad, N, 10, 20, M);
    ok(!probtest_try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r1.d, &err) &&
           strstr(err.text, "rows.svm: row 13: label 2 "),
       "a label 2 is refused, naming the row (%s)", err.text);
    ybad[12] = 0.5;
    ok(!probtest_try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r1.d, &err) &&
           strstr(err.text, "label 0.5 "),
       "a label 0.5 is refused");
    ybad[12] = NAN;
    ok(!probtest_try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r1.d, &err) &&
           strstr(err.text, "label nan "),
       "a label NaN is refused");
    memcpy(ybad, y01, sizeof ybad);
    ybad[30] = -1;
    probtest_rows_make(&r1, 0, A, ybad, N, 0, M, M);
    ok(!probtest_try_open(&T, AIA_PART_ALL, W, AIA_PART_BLOCK, NULL, 5, &r1.d,
                          &err) &&
           strstr(err.text, "0 and -1 both"),
       "labels 0, -1 and 1 together are three classes: refused (%s)", err.text);
    probtest_rows_free(&r1);
    probtest_rows_free(&r2);
}

/* The hidden plane: w_true from its own stream (the generator's contract,
 * restated). */
static void wtrue(uint64_t seed, double *w)
{
    struct aia_rng g;
    aia_rng_seed(&g, seed, 0x4c4f475257000000ull);
    for (int j = 0; j < N; j++)
        w[j] = aia_rng_normal(&g);
}

/* Generated rows with flip 0 are separable by w_true with the margin;
 * flip changes labels only. */
static void separable(void)
{
    struct plugtest t, tf;
    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 2000, cols: 5, margin: 0.25}");
    plugtest_load(&tf, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 2000, cols: 5, margin: 0.25, flip: 0.2}");
    double w[N], wn = 0;
    wtrue(7, w);
    for (int j = 0; j < N; j++)
        wn += w[j] * w[j];
    wn = sqrt(wn);
    void *all = probtest_open(&t, AIA_PART_ALL, W, NULL, 7);
    is_double(probtest_metric(P, all, w), 1, 0, "flip 0: accuracy 1 at w_true");
    P->close(all);
    double dmin = INFINITY, dmax = 0, pushed = 0, onmargin = 0, flipped = 0;
    for (int p = 0; p < W; p++) {
        void *s = probtest_open(&t, p, W, NULL, 7);
        void *f = probtest_open(&tf, p, W, NULL, 7);
        is_double(probtest_metric(P, s, w), 1, 0, "flip 0: worker %d too", p);
        for (size_t i = 0; i < P->rows(s); i++) {
            double sa[N], fa[N], d = 0;
            signed_row(s, i, sa);
            signed_row(f, i, fa);
            for (int j = 0; j < N; j++)
                d += sa[j] * w[j] / wn;
            dmin = fmin(dmin, d);
            dmax = fmax(dmax, d);
            pushed += d < 0.5;
            onmargin += d < 0.25 + 1e-9;
            if (probtest_maxdiff(sa, fa, N) != 0) {
                for (int j = 0; j < N; j++)
                    fa[j] = -fa[j];
                flipped += probtest_maxdiff(sa, fa, N) == 0 ? 1 : 1e9;
            }
        }
        P->close(s);
        P->close(f);
    }
    ok(dmin >= 0.25 - 1e-12 && dmin < 0.26,
       "every row is at least the margin 0.25 from the plane (%.6g)", dmin);
    /* Pushed by the margin, the rows within 0.25 of the plane land in
     * [0.25, 0.5): that band then holds P(|N(0,1)| < 0.5) = 38% of them,
     * not the 23% that rejecting them would leave, and none sit on the
     * margin itself. */
    ok(pushed > 2000 * 0.34 && pushed < 2000 * 0.43 && dmax > 3,
       "rows near the plane are pushed out by the margin (%g of 2000 in "
       "[0.25, 0.5), the farthest at %.3g)",
       pushed, dmax);
    ok(onmargin <= 1, "they do not pile up on the margin (%g there)", onmargin);
    ok(flipped > 2000 * 0.17 && flipped < 2000 * 0.23,
       "flip 0.2 negates the labels of about a fifth of the same rows (%g)",
       flipped);
    all = probtest_open(&tf, AIA_PART_ALL, W, NULL, 7);
    is_double(probtest_metric(P, all, w), 1 - flipped / 2000, 1e-15,
              "flip 0.2: the accuracy at w_true is the unflipped share");
    P->close(all);
    plugtest_free(&t);
    plugtest_free(&tf);
}

/* Newton's optimum: the gradient vanishes there, on the coordinator and
 * in the workers' rows; with l2 = 0 on separable rows there is none. */
static void optimum(void)
{
    void *all = probtest_open(&T, AIA_PART_ALL, W, NULL, 5);
    double xs[N], fs, g[N], gsum[N] = {0};
    struct aia_error err;
    if (!ok(P->optimum(all, xs, &fs, &err) == 0, "l2 0.05: the optimum is "
                                                 "known"))
        diag("%s", err.text);
    probtest_grad(P, all, xs, g);
    ok(maxabs(g, N) < 1e-12, "the gradient vanishes there (%.2g)",
       maxabs(g, N));
    for (int p = 0; p < W; p++) {
        void *s = probtest_open(&T, p, W, NULL, 5);
        double gp[N];
        probtest_grad(P, s, xs, gp);
        for (int j = 0; j < N; j++)
            gsum[j] += (double)P->rows(s) / M * gp[j];
        ok(P->optimum(s, g, &fs, &err) < 0 && strstr(err.text, "coordinator"),
           "worker %d: no optimum", p);
        P->close(s);
    }
    P->optimum(all, xs, &fs, &err);
    ok(maxabs(gsum, N) < 1e-12, "and in the workers' rows, weighted (%.2g)",
       maxabs(gsum, N));
    is_double(probtest_loss(P, all, xs), fs, 0, "its loss is the loss there");
    ok(maxabs(xs, N) > 0.1, "it is not 0");
    int above = 1;
    for (int j = 0; j < N; j++)
        for (double h = -1e-3; h <= 1e-3; h += 2e-3) {
            double x[N];
            memcpy(x, xs, sizeof x);
            x[j] += h;
            above &= probtest_loss(P, all, x) > fs;
        }
    ok(above, "every nearby point has a higher loss");
    P->close(all);

    struct plugtest t;
    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM, "{rows: 400, cols: 5}");
    all = probtest_open(&t, AIA_PART_ALL, W, NULL, 5);
    ok(P->optimum(all, xs, &fs, &err) < 0 && strstr(err.text, "separable") &&
           strstr(err.text, "no finite minimiser"),
       "l2 0, flip 0: no optimum, and it says why (%s)", err.text);
    double f;
    ok(P->loss(all, xs, &f, &err) == 0 && f > 0, "the loss is still known");
    P->close(all);
    plugtest_free(&t);

    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 1000, cols: 4000, l2: 1}");
    all = probtest_open(&t, AIA_PART_ALL, W, NULL, 5);
    ok(P->optimum(all, xs, &fs, &err) < 0 && strstr(err.text, "operations"),
       "1000 rows of 4000 columns: no optimum, the job would wait (%s)",
       err.text);
    P->close(all);
    plugtest_free(&t);

    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 400, cols: 5, flip: 0.1}");
    all = probtest_open(&t, AIA_PART_ALL, W, NULL, 5);
    if (!ok(P->optimum(all, xs, &fs, &err) == 0,
            "l2 0, flip 0.1: not separable, the optimum is known"))
        diag("%s", err.text);
    probtest_grad(P, all, xs, g);
    ok(maxabs(g, N) < 1e-12, "and the gradient vanishes there (%.2g)",
       maxabs(g, N));
    P->close(all);
    plugtest_free(&t);
}

/* Rows on which full Newton steps from 0 never settle (they cycle far
 * from the optimum): the line search is what brings Newton home. */
static void hard_start(void)
{
    static const double a[8][2] = {{0.01, 166.9}, {0.01, 43.3},  {100, 125.6},
                                   {100, 498.5},  {0.01, 303.7}, {1, 250.7},
                                   {1, 170.7},    {100, 983.3}};
    static const double y[8] = {1, 1, 0, 1, 1, 1, 1, 1};
    double A[8 * N] = {0};
    for (int i = 0; i < 8; i++) {
        A[i * N] = a[i][0];
        A[i * N + 1] = a[i][1];
    }
    struct plugtest t;
    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM, "{l2: 0.01}");
    struct probtest_rows r = {0};
    for (int sp = 0; sp < 2; sp++) {
        probtest_rows_make(&r, sp, A, y, N, 0, 8, 8);
        if (sp)
            probtest_rows_reverse(&r, 8);
        const char *what = sp ? "sparse, columns out of order" : "dense";
        void *all = probtest_open(&t, AIA_PART_ALL, 1, &r.d, 1);
        double xs[N], fs, g[N], g0[N], zero[N] = {0};
        struct aia_error err;
        if (!ok(P->optimum(all, xs, &fs, &err) == 0,
                "badly scaled rows (%s): the optimum is known", what))
            diag("%s", err.text);
        probtest_grad(P, all, zero, g0);
        probtest_grad(P, all, xs, g);
        ok(maxabs(g, N) < 1e-12 * maxabs(g0, N),
           "badly scaled rows (%s): the gradient vanishes there (%.2g, "
           "%.2g at 0)",
           what, maxabs(g, N), maxabs(g0, N));
        P->close(all);
    }
    probtest_rows_free(&r);
    plugtest_free(&t);
}

static void data(void)
{
    static double SA[M * N], S[M * N], ones[M];
    static const double cmp[N] = {0.5, -1, 0.25, 2, -0.75};
    const struct probtest_at at = {cmp, N, 1e-14, 1e-10};
    /* The generated rows, read back with their signs: given with label 1
     * they are the same problem. */
    void *gen = probtest_open(&T, AIA_PART_ALL, W, NULL, 5);
    for (int i = 0; i < M; i++) {
        signed_row(gen, (size_t)i, SA + i * N);
        ones[i] = 1;
    }
    P->close(gen);
    struct probtest_rows r1 = {0}, r2 = {0};
    probtest_rows_make(&r1, 0, SA, ones, N, 0, M, M);
    probtest_same_rows(&T, AIA_PART_ALL, W, NULL, &r1.d, 5, &at,
                       "data: coordinator, generated vs dense");
    probtest_rows_make(&r1, 0, SA, ones, N, 2 * M / W, M / W, M);
    probtest_same_rows(&T, 2, W, NULL, &r1.d, 5, &at,
                       "data: worker 2, generated vs dense");

    /* Half the entries zero, labels mixed: dense vs sparse storage. */
    double y[M];
    for (int i = 0; i < M * N; i++)
        S[i] = (i * 7 + i / N) % 2 ? SA[i] : 0;
    for (int i = 0; i < M; i++)
        y[i] = i % 3 == 0;
    probtest_rows_make(&r1, 0, S, y, N, 0, M, M);
    probtest_rows_make(&r2, 1, S, y, N, 0, M, M);
    ok(r2.start[M] < M * N * 6 / 10,
       "data: the sparse rows hold %zu of %d entries", r2.start[M], M * N);
    probtest_same_rows(&T, AIA_PART_ALL, W, &r1.d, &r2.d, 5, &at,
                       "data: coordinator, dense vs sparse");
    probtest_rows_reverse(&r2, M);
    probtest_same_rows(&T, AIA_PART_ALL, W, &r1.d, &r2.d, 5, &at,
                       "data: coordinator, sparse columns out of order");

    /* A worker uses the rows it is given as they are: 37 rows from 100
     * on, though block part 1 of 4 would be rows 100 to 199. */
    for (int sp = 0; sp < 2; sp++) {
        probtest_rows_make(&r1, sp, S, y, N, 100, 37, M);
        void *s = probtest_open(&T, 1, W, &r1.d, 5);
        double x[N] = {0.5, -0.5, 1, 0, 2}, want[N], f = 0;
        for (int j = 0; j < N; j++)
            want[j] = 0.05 * x[j]; /* l2 */
        for (int i = 100; i < 137; i++) {
            double z = 0, sg = y[i] ? 1 : -1;
            for (int j = 0; j < N; j++)
                z += S[i * N + j] * x[j];
            z *= sg;
            f += log(1 + exp(-z)) / 37;
            for (int j = 0; j < N; j++)
                want[j] -= sg * S[i * N + j] / (1 + exp(z)) / 37;
        }
        f += 0.025 * (0.25 + 0.25 + 1 + 4);
        probtest_holds(P, s, 37, x, N, f, want, 1e-14,
                       sp ? "data (sparse): worker 1"
                          : "data (dense): worker 1");
        P->close(s);
    }

    struct aia_error err;
    probtest_rows_make(&r2, 1, S, y, N, 0, 20, M);
    r2.col[4] = N;
    char want[64];
    size_t row = 0;
    while (r2.start[row + 1] <= 4)
        row++;
    snprintf(want, sizeof want, "rows.svm: row %zu: column 6 of 5", row + 1);
    ok(!probtest_try_open(&T, 0, W, AIA_PART_BLOCK, NULL, 5, &r2.d, &err) &&
           strstr(err.text, want),
       "data: a column out of range is refused, naming the row (%s)", err.text);
    probtest_rows_free(&r1);
    probtest_rows_free(&r2);
}

/* smoothness: L = lambda_max(A'A)/(4k) + l2 for the k rows held, from
 * the rows themselves; and it bounds how fast the gradient changes. */
static void smoothness(void)
{
    void *s = probtest_open(&T, 1, W, NULL, 5);
    struct aia_error err;
    double L;
    ok(P->smoothness && P->smoothness(s, &L, &err) == 0,
       "logreg gives its smoothness");
    size_t k = P->rows(s);
    /* over no rows both L and lambda + l2 are l2, and agree */
    is_int((long long)k, M / W, "worker 1 holds its %d rows", M / W);
    double G[N][N] = {{0}}, sa[N];
    for (size_t i = 0; i < k; i++) {
        signed_row(s, i, sa);
        for (int a = 0; a < N; a++)
            for (int b = 0; b < N; b++)
                G[a][b] += sa[a] * sa[b] / (4.0 * (double)k);
    }
    double lambda = probtest_top_eigenvalue(&G[0][0], N, 2000);
    is_double(L, lambda + 0.05, 1e-4 * L, "L is lambda_max(A'A)/(4k) + l2 (%g)",
              L);
    struct aia_rng g;
    aia_rng_seed(&g, 9, 1);
    double worst = 0, x[N], y[N], gx[N], gy[N];
    for (int t = 0; t < 50; t++) {
        double dx = 0, dg = 0;
        for (int j = 0; j < N; j++) {
            x[j] = 3 * aia_rng_normal(&g);
            y[j] = x[j] + aia_rng_normal(&g);
        }
        probtest_grad(P, s, x, gx);
        probtest_grad(P, s, y, gy);
        for (int j = 0; j < N; j++)
            dx += (x[j] - y[j]) * (x[j] - y[j]),
                dg += (gx[j] - gy[j]) * (gx[j] - gy[j]);
        worst = tap_worst(worst, sqrt(dg / dx));
    }
    ok(worst <= L,
       "|g(x) - g(y)| <= L |x - y| over 50 random pairs "
       "(worst ratio %g)",
       worst);
    P->close(s);
}

int main(void)
{
    plugtest_load(&T, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 400, cols: 5, l2: 0.05, flip: 0.1}");
    P = (const void *)T.p->h;
    plan(0);
    ok(P->flags & AIA_PROBLEM_DATA, "logreg takes rows from data files");
    double x[N];
    for (int j = 0; j < N; j++)
        x[j] = 0.4 * j - 0.9;
    probtest_claims(&T, W, x, N, M, 1e-8);
    stability();
    metric();
    labels();
    separable();
    optimum();
    hard_start();
    data();
    smoothness();
    probtest_float32("logreg", "{rows: 400, cols: 5, l2: 0.05, flip: 0.1}", "{rows: 400, cols: 5, l2: 0.05, flip: 0.1, precision: float32}", W, x, N);
    plugtest_free(&T);
    return done_testing();
}
