/* pca.c - the PCA problem through the real loader: its gradient against
 * central differences, dense and sparse rows alike, its optimum for k = 3
 * against a reference eigen-solve done here (power iteration with
 * deflation), the explained variance, and generated rows split among
 * workers. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define M 120
#define N 6
#define K 3

static const struct aia_problem_plugin *P;
static double X[M * N], Y[M], vals[M * N];
static size_t ids[M], start[M + 1];
static uint32_t cols[M * N];

static struct aia_dataset rows(int sparse)
{
    struct aia_dataset d = {.rows = M,
                            .cols = N,
                            .total_rows = M,
                            .row_ids = ids,
                            .y = Y,
                            .source = "rows"};
    if (sparse) {
        d.row_start = start;
        d.col = cols;
        d.val = vals;
    } else {
        d.x = X;
    }
    return d;
}

static void *open_as(struct plugtest *t, const struct aia_dataset *d, int index,
                     int count)
{
    struct aia_partition part = {index, count, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = plugtest_ctx(
        t->args, index < 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER, index + 1,
        count, 9);
    ctx.data = d;
    void *s;
    struct aia_error err;
    if (P->open(&ctx, &part, &s, &err) < 0)
        bail_out("open: %s", err.text);
    return s;
}

/* The top K eigenpairs of the symmetric E (destroyed), by power iteration
 * with deflation. */
static void reference(double *E, double *vec, double *val)
{
    for (size_t a = 0; a < K; a++) {
        double *v = vec + a * N, w[N];
        for (size_t j = 0; j < N; j++)
            v[j] = 1.0 / (1 + j + a);
        for (int it = 0; it < 20000; it++) {
            double nn = 0;
            for (size_t i = 0; i < N; i++) {
                w[i] = 0;
                for (size_t j = 0; j < N; j++)
                    w[i] += E[i * N + j] * v[j];
                nn += w[i] * w[i];
            }
            for (size_t j = 0; j < N; j++)
                v[j] = w[j] / sqrt(nn);
        }
        double l = 0;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++)
                l += v[i] * E[i * N + j] * v[j];
        val[a] = l;
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++)
                E[i * N + j] -= l * v[i] * v[j];
    }
}

int main(void)
{
    struct aia_rng g;
    aia_rng_seed(&g, 21, 0);
    size_t nnz = 0;
    for (size_t i = 0; i < M; i++) {
        ids[i] = i;
        start[i] = nnz;
        for (size_t j = 0; j < N; j++) {
            double v = aia_rng_uniform(&g) < 0.3
                           ? 0
                           : aia_rng_normal(&g) * (4.0 - 0.5 * (double)j);
            X[i * N + j] = v;
            if (v != 0) {
                cols[nnz] = (uint32_t)j;
                vals[nnz++] = v;
            }
        }
    }
    start[M] = nnz;
    struct plugtest t;
    plugtest_load(&t, "pca", AIA_KIND_PROBLEM, "{k: 3}");
    P = (const struct aia_problem_plugin *)t.p->h;
    struct aia_dataset dd = rows(0), ds = rows(1);
    void *s = open_as(&t, &dd, -1, 4), *sp = open_as(&t, &ds, -1, 4);
    size_t n = P->dim(s);
    is_int((long long)n, N * K, "the model is the n x k matrix");
    double x[N * K], xs[N * K], g1[N * K], g2[N * K], fd[N * K];
    for (size_t j = 0; j < n; j++)
        x[j] = 0.3 * aia_rng_normal(&g);
    struct aia_error err;
    P->gradient(s, x, NULL, 0, g1, &err);
    double h = 1e-6;
    for (size_t j = 0; j < n; j++) {
        memcpy(xs, x, sizeof xs);
        xs[j] += h;
        double fp = probtest_loss(P, s, xs);
        xs[j] -= 2 * h;
        fd[j] = (fp - probtest_loss(P, s, xs)) / (2 * h);
    }
    ok(probtest_maxdiff(g1, fd, n) < 1e-6,
       "the gradient matches central differences "
       "of the loss (%.1e)",
       probtest_maxdiff(g1, fd, n));
    P->gradient(sp, x, NULL, 0, g2, &err);
    ok(probtest_maxdiff(g1, g2, n) < 1e-12 &&
           fabs(probtest_loss(P, s, x) - probtest_loss(P, sp, x)) < 1e-12,
       "sparse rows give the dense rows' loss and gradient");
    /* precision: float32 on the dense rows: within float's rounding */
    {
        struct plugtest t32;
        plugtest_load(&t32, "pca", AIA_KIND_PROBLEM,
                      "{k: 3, precision: float32}");
        void *s32 = open_as(&t32, &dd, -1, 4);
        P->gradient(s32, x, NULL, 0, g2, &err);
        double d = probtest_maxdiff(g1, g2, n), big = 0;
        for (size_t j = 0; j < n; j++)
            big = fmax(big, fabs(g1[j]));
        ok(d <= 1e-5 * big && d > 0,
           "float32: the gradient within float's rounding of float64's "
           "(%.1e of %.2g)",
           d, big);
        double f64 = probtest_loss(P, s, x), f32 = probtest_loss(P, s32, x);
        ok(fabs(f32 - f64) <= 1e-5 * fabs(f64),
           "float32: so is the loss (%.17g, %.17g)", f32, f64);
        P->close(s32);
        plugtest_free(&t32);
    }
    /* the reference */
    double E[N * N] = {0}, vec[K * N], val[K], tr = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t a = 0; a < N; a++)
            for (size_t c = 0; c < N; c++)
                E[a * N + c] += X[i * N + a] * X[i * N + c] / M;
    for (size_t a = 0; a < N; a++)
        tr += E[a * N + a];
    reference(E, vec, val);
    double xo[N * K], fo;
    ok(P->optimum(s, xo, &fo, &err) == 0, "the optimum is known (%s)",
       "eigen-solve");
    is_double(fo, 0.5 * (tr - val[0] - val[1] - val[2]), 1e-10,
              "its loss is half the variance left by the top 3 eigenvalues");
    is_double(probtest_loss(P, s, xo), fo, 1e-10, "and the loss there is that");
    double ev;
    P->metric(s, xo, &ev, &err);
    is_double(ev, (val[0] + val[1] + val[2]) / tr, 1e-10,
              "the explained variance there is the top 3 eigenvalues' share "
              "(%.6f)",
              ev);
    /* the subspace: V* (V0 + x*) spans the reference's vectors */
    double zero[N * K] = {0}, v0g[N * K];
    P->gradient(s, xo, NULL, 0, g1, &err);
    double gn = 0;
    for (size_t j = 0; j < n; j++)
        gn = fmax(gn, fabs(g1[j]));
    ok(gn < 1e-10, "the gradient vanishes at the optimum (%.1e)", gn);
    /* V = V0 + x: V0 from the loss at x = 0 is not the optimum */
    ok(probtest_loss(P, s, zero) > fo + 1e-3,
       "the seeded start is not the optimum");
    P->gradient(s, zero, NULL, 0, v0g, &err);
    ok(probtest_maxdiff(v0g, zero, n) > 1e-3, "and has a gradient to follow");
    /* the subspace: the reference's vectors, as rows, are rebuilt
     * exactly from V* (same seed, so the same V0) */
    size_t uid[K] = {0, 1, 2};
    double uy[K] = {0};
    struct aia_dataset du = {.rows = K,
                             .cols = N,
                             .total_rows = K,
                             .row_ids = uid,
                             .y = uy,
                             .x = vec,
                             .source = "eigenvectors"};
    void *su = open_as(&t, &du, -1, 1);
    ok(probtest_loss(P, su, xo) < 1e-12,
       "span(V*) holds the reference's top 3 eigenvectors (their "
       "reconstruction error %.1e)",
       probtest_loss(P, su, xo));
    ok(probtest_loss(P, su, zero) > 1e-3,
       "which the seeded start does not (%.3f)", probtest_loss(P, su, zero));
    P->close(su);
    P->close(sp);
    P->close(s);
    /* generated sparse rows: workers' gradients add up to the whole */
    plugtest_free(&t);
    plugtest_load(&t, "pca", AIA_KIND_PROBLEM,
                  "{k: 2, rows: 200, cols: 7, density: 0.4}");
    s = open_as(&t, NULL, -1, 3);
    double gw[14], sum[14] = {0}, gall[14], xg[14];
    for (size_t j = 0; j < 14; j++)
        xg[j] = 0.1 * aia_rng_normal(&g);
    P->gradient(s, xg, NULL, 0, gall, &err);
    size_t total = 0;
    for (int w = 0; w < 3; w++) {
        void *sw = open_as(&t, NULL, w, 3);
        size_t r = P->rows(sw);
        total += r;
        P->gradient(sw, xg, NULL, 0, gw, &err);
        for (size_t j = 0; j < 14; j++)
            sum[j] += gw[j] * (double)r / 200;
        P->close(sw);
    }
    ok(total == 200 && probtest_maxdiff(sum, gall, 14) < 1e-12,
       "generated rows: the workers' gradients, weighted, are the whole one");
    ok(P->optimum(s, xo, &fo, &err) == 0, "generated rows: an optimum");
    P->metric(s, xo, &ev, &err);
    ok(ev > 0 && ev < 1, "generated rows: explained variance %.4f", ev);
    P->close(s);
    plugtest_free(&t);
    return done_testing();
}
