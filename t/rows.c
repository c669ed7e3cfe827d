/* rows.c - the helpers of <aiarun/rows.h> for problem plugins: the power
 * iteration against matrices whose largest eigenvalue is known, and the
 * smoothness of a loss through its gradient alone. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>

#include "tap.h"

/* A dense symmetric n x n matrix, row-major. */
struct mat {
    size_t n;
    const double *a;
    int products; /* products taken so far */
    int fail_at;  /* the product that fails, 0: none */
};

static int mat_hv(void *ctx, const double *v, double *hv, struct aia_error *err)
{
    struct mat *m = ctx;
    if (++m->products == m->fail_at)
        return aia_seterr(err, "product %d refused", m->products);
    for (size_t i = 0; i < m->n; i++) {
        hv[i] = 0;
        for (size_t j = 0; j < m->n; j++)
            hv[i] += m->a[i * m->n + j] * v[j];
    }
    return 0;
}

static double largest(size_t n, const double *a, int max_products, double rtol,
                      struct aia_error *err, int *rc)
{
    struct mat m = {n, a, 0, 0};
    double lambda = -1;
    *rc = aia_power_iteration(n, mat_hv, &m, max_products, rtol, &lambda, err);
    return lambda;
}

static void known_matrices(void)
{
    struct aia_error err;
    int rc;
    static const double diag[25] = {1, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 2,
                                    0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 3};
    double l = largest(5, diag, 2000, 1e-15, &err, &rc);
    ok(rc == 0 && fabs(l - 5) < 1e-8,
       "diag(1, 5, 2, 4, 3): the largest eigenvalue 5 to 1e-8 (%.12g)", l);
    /* 3 I + B, B tridiagonal with characteristic polynomial 3m - m^3 */
    static const double tri[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2};
    l = largest(3, tri, 2000, 1e-15, &err, &rc);
    ok(rc == 0 && fabs(l - (3 + sqrt(3))) < 1e-8,
       "a symmetric tridiagonal matrix: 3 + sqrt(3) to 1e-8 (%.12g)", l);
    static const double two[4] = {2, 1, 1, 2};
    l = largest(2, two, 2000, 1e-15, &err, &rc);
    ok(rc == 0 && fabs(l - 3) < 1e-8, "[[2, 1], [1, 2]]: 3 to 1e-8 (%.12g)", l);
    /* a loose tolerance stops early, below the eigenvalue */
    l = largest(5, diag, 2000, 1e-2, &err, &rc);
    ok(rc == 0 && l <= 5 && l > 4.5,
       "with rtol 1e-2 the estimate is below 5 and near it (%.6g)", l);
    static const double zero[4] = {0, 0, 0, 0};
    largest(2, zero, 200, 1e-5, &err, &rc);
    ok(rc < 0 && strstr(err.text, "no positive curvature"),
       "the zero matrix: refused (%s)", rc < 0 ? err.text : "");
    struct mat m = {3, tri, 0, 4};
    double lambda = -1;
    rc = aia_power_iteration(3, mat_hv, &m, 200, 1e-15, &lambda, &err);
    ok(rc < 0 && strcmp(err.text, "product 4 refused") == 0 && lambda == -1,
       "a failing product ends it with its own error (%s)",
       rc < 0 ? err.text : "");
    m = (struct mat){3, tri, 0, 0};
    rc = aia_power_iteration(3, mat_hv, &m, 7, 1e-15, &lambda, &err);
    ok(rc == 0 && m.products == 7, "max_products bounds the products (%d)",
       m.products);
}

/* A problem whose loss is the quadratic x'Hx/2 + c'x + cubic * sum x^3/6,
 * H = tri above: its gradient Hx + c + cubic x^2/2, its Hessian at 0 H. */
static double cubic;

static size_t q_dim(void *state)
{
    (void)state;
    return 3;
}

static int q_gradient(void *state, const double *x, const size_t *idx,
                      size_t nidx, double *g, struct aia_error *err)
{
    static const double tri[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2};
    (void)state, (void)idx, (void)nidx, (void)err;
    for (size_t i = 0; i < 3; i++) {
        g[i] = 0.5 * (double)i - 1 + cubic * x[i] * x[i] / 2;
        for (size_t j = 0; j < 3; j++)
            g[i] += tri[i * 3 + j] * x[j];
    }
    return 0;
}

static void gradient_smoothness(void)
{
    struct aia_problem_plugin q;
    struct aia_error err;
    memset(&q, 0, sizeof q);
    q.dim = q_dim;
    q.gradient = q_gradient;
    double L = 0, want = 3 + sqrt(3);
    cubic = 0;
    int rc = aia_gradient_smoothness(&q, NULL, 0, &L, &err);
    ok(rc == 0 && fabs(L - want) < 1e-4 * want,
       "a quadratic's L, H v = grad(v) - grad(0): %.8g (3 + sqrt(3))", L);
    rc = aia_gradient_smoothness(&q, NULL, 1e-4, &L, &err);
    ok(rc == 0 && fabs(L - want) < 1e-4 * want,
       "the same by central differences: %.8g", L);
    cubic = 50;
    rc = aia_gradient_smoothness(&q, NULL, 1e-4, &L, &err);
    ok(rc == 0 && fabs(L - want) < 1e-4 * want,
       "with a cubic term, central differences give the Hessian at 0: %.8g", L);
}

int main(void)
{
    plan(0);
    known_matrices();
    gradient_smoothness();
    return done_testing();
}
