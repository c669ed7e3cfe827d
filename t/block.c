/* block.c - the problems' block (the model as a block of columns, the
 * rows' Gram matrix applied to a block) through the real loader: pca's
 * product against A'A b formed here, dense, sparse and float32 rows,
 * blocks narrower and wider than the model; its shape and base (the loss
 * at x = 0 is that of V = base); a problem without one (lrmse); and the
 * subspace algorithm's refusal of it. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define M 150
#define N 7
#define K 3
#define CMAX 6

static const struct aia_problem_plugin *prob_of(const struct plugtest *t)
{
    return (const void *)t->p->h;
}

/* out = A'A b, A the M x N rows, b N x c: formed entry by entry. */
static void gram_here(const double *A, const double *b, size_t c, double *out)
{
    memset(out, 0, N * c * sizeof *out);
    for (size_t i = 0; i < M; i++)
        for (size_t l = 0; l < c; l++) {
            double ab = 0;
            for (size_t j = 0; j < N; j++)
                ab += A[i * N + j] * b[j * c + l];
            for (size_t j = 0; j < N; j++)
                out[j * c + l] += A[i * N + j] * ab;
        }
}

static void *open_rows(const struct plugtest *t, const struct aia_dataset *d)
{
    struct aia_partition part = {0, 1, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx =
        plugtest_ctx(t->args, AIA_ROLE_WORKER, 1, 1, 9);
    ctx.data = d;
    void *s;
    struct aia_error err;
    if (prob_of(t)->open(&ctx, &part, &s, &err) < 0)
        bail_out("open: %s", err.text);
    return s;
}

/* The largest entry of |a|. */
static double big(const double *a, size_t n)
{
    double m = 0;
    for (size_t j = 0; j < n; j++)
        m = fmax(m, fabs(a[j]));
    return m;
}

static void products(const struct plugtest *t, const struct aia_dataset *d,
                     const double *A, double tol, const char *what)
{
    const struct aia_problem_plugin *p = prob_of(t);
    void *s = open_rows(t, d);
    const struct aia_block *b = p->block ? p->block(s) : NULL;
    ok(b && b->size >= sizeof *b && b->n == N && b->cols == K &&
           b->base && b->gram,
       "%s: the model is a block of %d x %d over a base", what, N, K);
    if (!b || !b->gram) {
        p->close(s);
        return;
    }
    static const size_t widths[] = {1, K, CMAX};
    struct aia_rng g;
    aia_rng_seed(&g, 5, 0);
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        size_t c = widths[w];
        double v[N * CMAX], got[N * CMAX], want[N * CMAX];
        for (size_t j = 0; j < N * c; j++)
            v[j] = aia_rng_normal(&g);
        struct aia_error err;
        int rc = b->gram(s, v, c, got, &err);
        gram_here(A, v, c, want);
        double diff = probtest_maxdiff(got, want, N * c);
        ok(rc == 0 && diff <= tol * big(want, N * c),
           "%s: the product of %zu columns is A'A b (%.1e of %.2g)", what, c,
           diff, big(want, N * c));
    }
    /* the base is V at x = 0: the loss there is V0's reconstruction */
    double x[N * K] = {0}, f, want = 0;
    struct aia_error err;
    p->loss(s, x, &f, &err);
    for (size_t i = 0; i < M; i++) {
        double a[N], r[N];
        memcpy(a, A + i * N, sizeof a);
        memcpy(r, a, sizeof r);
        for (size_t l = 0; l < K; l++) {
            double va = 0;
            for (size_t j = 0; j < N; j++)
                va += b->base[j * K + l] * a[j];
            for (size_t j = 0; j < N; j++)
                r[j] -= b->base[j * K + l] * va;
        }
        for (size_t j = 0; j < N; j++)
            want += r[j] * r[j] / (2.0 * M);
    }
    ok(fabs(f - want) <= tol * want,
       "%s: the loss at x = 0 is that of V = base (%.12g, %.12g)", what, f,
       want);
    p->close(s);
}

int main(void)
{
    static double A[M * N], y[M];
    struct aia_rng g;
    aia_rng_seed(&g, 11, 0);
    for (size_t i = 0; i < M * N; i++) /* a third of the entries zero */
        A[i] = aia_rng_uniform(&g) < 0.33 ? 0 : aia_rng_normal(&g);
    struct probtest_rows dense = {0}, sparse = {0};
    probtest_rows_make(&dense, 0, A, y, N, 0, M, M);
    probtest_rows_make(&sparse, 1, A, y, N, 0, M, M);

    struct plugtest t;
    plugtest_load(&t, "pca", AIA_KIND_PROBLEM, "{k: 3}");
    products(&t, &dense.d, A, 1e-12, "pca, dense rows");
    products(&t, &sparse.d, A, 1e-12, "pca, sparse rows");
    plugtest_free(&t);
    plugtest_load(&t, "pca", AIA_KIND_PROBLEM, "{k: 3, precision: float32}");
    products(&t, &dense.d, A, 1e-5, "pca, float32");
    plugtest_free(&t);

    /* lrmse has none; subspace refuses a problem without one */
    plugtest_load(&t, "lrmse", AIA_KIND_PROBLEM, "{rows: 40, cols: 4}");
    ok(prob_of(&t)->block == NULL, "lrmse gives no block");
    struct plugtest a;
    plugtest_load(&a, "subspace", AIA_KIND_ALGORITHM, "{}");
    const struct aia_algorithm_plugin *alg = (const void *)a.p->h;
    ok(alg->h.pflags == 0 && alg->flags & AIA_ALG_BLOCK,
       "subspace declares that it asks for blocks (AIA_ALG_BLOCK)");
    void *ps = probtest_open(&t, 0, 2, NULL, 9);
    struct aia_context ctx = plugtest_ctx(a.args, AIA_ROLE_WORKER, 1, 2, 9);
    ctx.problem = prob_of(&t);
    ctx.problem_state = ps;
    struct aia_shape shape;
    struct aia_error err = {""};
    void *as = NULL;
    int rc = alg->create(&ctx, &shape, &as, &err);
    ok(rc < 0 && strstr(err.text, "problem 'lrmse' gives no block"),
       "subspace on lrmse: refused (%s)", err.text);
    prob_of(&t)->close(ps);
    plugtest_free(&a);
    plugtest_free(&t);
    probtest_rows_free(&dense);
    probtest_rows_free(&sparse);
    return done_testing();
}
