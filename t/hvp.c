/* hvp.c - the problems' Hessian-vector products (hvp) against central
 * differences of their gradients, their symmetry, and the Newton-CG and
 * L-BFGS machines of aiarun/newton.h driven on a problem in one process:
 * both reach lrmse's direct solve and logreg's Newton-Cholesky optimum,
 * with a gradient below 1e-8 there; a request for a product is refused
 * by a problem without hvp. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/newton.h>

#include "plugtest.h"
#include "probtest.h"
#include "tap.h"

#define NMAX 64

static const struct aia_problem_plugin *prob_of(const struct plugtest *t)
{
    return (const void *)t->p->h;
}

static void hv(const struct aia_problem_plugin *p, void *s, const double *x,
               const double *v, double *out)
{
    struct aia_error err;
    if (p->hvp(s, x, v, out, &err) < 0)
        bail_out("%s: hvp: %s", p->h.name, err.text);
}

/* H(x) v against (g(x + h v) - g(x - h v)) / 2h, h = 1e-5, and u'Hv =
 * v'Hu, at a point of no particular meaning. */
static void check(const struct aia_problem_plugin *p, void *s, size_t n,
                  const char *what)
{
    double x[NMAX], v[NMAX], u[NMAX], a[NMAX], b[NMAX], hvv[NMAX], hu[NMAX];
    double ga[NMAX], gb[NMAX], fd[NMAX], big = 0, h = 1e-5;
    struct aia_rng g;
    aia_rng_seed(&g, 17, 3);
    for (size_t j = 0; j < n; j++) {
        x[j] = 0.3 * aia_rng_normal(&g);
        v[j] = aia_rng_normal(&g);
        u[j] = aia_rng_normal(&g);
    }
    hv(p, s, x, v, hvv);
    hv(p, s, x, u, hu);
    for (size_t j = 0; j < n; j++) {
        a[j] = x[j] + h * v[j];
        b[j] = x[j] - h * v[j];
    }
    probtest_grad(p, s, a, ga);
    probtest_grad(p, s, b, gb);
    for (size_t j = 0; j < n; j++) {
        fd[j] = (ga[j] - gb[j]) / (2 * h);
        big = fmax(big, fabs(hvv[j]));
    }
    double diff = probtest_maxdiff(hvv, fd, n);
    ok(big > 0 && diff <= 1e-6 * big,
       "%s: H v is the central difference of the gradient (%.2e of %.2e)", what,
       diff, big);
    double uhv = aia_vdot(u, hvv, n), vhu = aia_vdot(v, hu, n);
    ok(fabs(uhv - vhu) <= 1e-10 * (fabs(uhv) + fabs(vhu)),
       "%s: u'Hv = v'Hu (%.15g, %.15g)", what, uhv, vhu);
    ok(aia_vdot(v, hvv, n) > 0, "%s: v'Hv > 0 with a penalty", what);
}

/* A request summed over one problem: the machines' needs met in
 * process.  Returns the accepted steps; *gn the final gradient norm. */
static int drive_ncg(const struct aia_problem_plugin *p, void *s, size_t n,
                     double *x, double *f, double *gn)
{
    struct aia_ncg m;
    double q[2 + 2 * NMAX], a[3 + 2 * NMAX];
    struct aia_error err;
    if (aia_ncg_init(&m, n, 100, 1e-13, NULL) < 0)
        bail_out("out of memory");
    for (int r = 0; r < 400 && (int)m.s[AIA_NCG_PHASE] != AIA_PH_DONE; r++) {
        struct aia_need need;
        aia_ncg_need(&m, &need);
        q[0] = need.kind;
        q[1] = r;
        memcpy(q + 2, need.x, n * sizeof *q);
        if (need.v)
            memcpy(q + 2 + n, need.v, n * sizeof *q);
        if (aia_request_answer(p, s, n, q, a, &err) < 0)
            bail_out("%s: %s", p->h.name, err.text);
        aia_ncg_feed(&m, a[2], a + 3);
    }
    memcpy(x, m.x, n * sizeof *x);
    *f = m.s[AIA_NCG_F];
    *gn = m.s[AIA_NCG_GN];
    int steps = (int)m.s[AIA_NCG_STEPS];
    aia_ncg_free(&m);
    return steps;
}

static int drive_lbfgs(const struct aia_problem_plugin *p, void *s, size_t n,
                       double *x, double *f, double *gn)
{
    struct aia_lbfgs l;
    double q[2 + 2 * NMAX] = {0}, a[3 + NMAX], g[NMAX];
    struct aia_error err;
    if (aia_lbfgs_init(&l, n, 10, 1e-13, NULL) < 0)
        bail_out("out of memory");
    for (int r = 0; r < 2000 && (int)l.s[AIA_LB_PHASE] != AIA_PH_DONE; r++) {
        struct aia_need need;
        aia_lbfgs_need(&l, &need);
        q[0] = need.kind;
        memcpy(q + 2, need.x, n * sizeof *q);
        if (aia_request_answer(p, s, n, q, a, &err) < 0)
            bail_out("%s: %s", p->h.name, err.text);
        aia_lbfgs_feed(&l, a[2], a + 3);
    }
    memcpy(x, l.x, n * sizeof *x);
    probtest_grad(p, s, x, g);
    *f = l.s[AIA_LB_F];
    *gn = sqrt(aia_vdot(g, g, n));
    int steps = (int)l.s[AIA_LB_STEPS];
    aia_lbfgs_free(&l);
    return steps;
}

/* Both machines on the coordinator's view of problem t, against its own
 * optimum (direct solve or Newton-Cholesky). */
static void machines(const struct plugtest *t, const char *what)
{
    const struct aia_problem_plugin *p = prob_of(t);
    void *s = probtest_open(t, AIA_PART_ALL, 4, NULL, 9);
    size_t n = p->dim(s);
    double xs[NMAX], fs, x[NMAX], f, gn;
    struct aia_error err;
    if (p->optimum(s, xs, &fs, &err) < 0)
        bail_out("%s: optimum: %s", what, err.text);
    int steps = drive_ncg(p, s, n, x, &f, &gn);
    ok(fabs(f - fs) <= 1e-10 * fabs(fs),
       "%s: Newton-CG reaches the optimum's loss to 1e-10 (%.3e) in %d steps",
       what, fabs(f - fs) / fabs(fs), steps);
    ok(gn < 1e-8, "%s: its gradient there is below 1e-8 (%.2e)", what, gn);
    ok(probtest_maxdiff(x, xs, n) < 1e-6, "%s: and its point is the optimum",
       what);
    steps = drive_lbfgs(p, s, n, x, &f, &gn);
    ok(fabs(f - fs) <= 1e-10 * fabs(fs),
       "%s: L-BFGS reaches it to 1e-10 too (%.3e) in %d steps", what,
       fabs(f - fs) / fabs(fs), steps);
    ok(gn < 1e-8, "%s: its gradient there is below 1e-8 (%.2e)", what, gn);
    p->close(s);
}

/* Three classes in 4 features, learnable, dense and sparse. */
#define M 60
#define N 4
#define C 3
static void softmax(void)
{
    static double A[M * N], y[M];
    struct aia_rng g;
    aia_rng_seed(&g, 5, 1);
    for (size_t i = 0; i < M; i++) {
        y[i] = (double)aia_rng_below(&g, C);
        for (size_t j = 0; j < N; j++)
            A[i * N + j] =
                (aia_rng_uniform(&g) < 0.3 ? 0 : aia_rng_normal(&g)) +
                (j == (size_t)y[i] ? 1.5 : 0);
    }
    struct plugtest t;
    plugtest_load(&t, "softmax", AIA_KIND_PROBLEM, "{classes: 3, l2: 0.1}");
    for (int sparse = 0; sparse < 2; sparse++) {
        struct probtest_rows r = {0};
        probtest_rows_make(&r, sparse, A, y, N, 10, 30, M);
        void *s = probtest_open(&t, 0, 1, &r.d, 1);
        check(prob_of(&t), s, prob_of(&t)->dim(s),
              sparse ? "softmax, sparse rows" : "softmax, dense rows");
        prob_of(&t)->close(s);
        probtest_rows_free(&r);
    }
    plugtest_free(&t);
}

int main(void)
{
    struct plugtest t;
    plugtest_load(&t, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 300, cols: 8, ridge: 0.01, condition: 100}");
    void *s = probtest_open(&t, 1, 3, NULL, 9);
    check(prob_of(&t), s, 8, "lrmse, a worker's rows");
    prob_of(&t)->close(s);
    s = probtest_open(&t, AIA_PART_ALL, 3, NULL, 9);
    check(prob_of(&t), s, 8, "lrmse, the coordinator's Gram matrix");
    prob_of(&t)->close(s);
    machines(&t, "lrmse");
    plugtest_free(&t);

    plugtest_load(&t, "logreg", AIA_KIND_PROBLEM,
                  "{rows: 300, cols: 8, l2: 0.01, flip: 0.1}");
    s = probtest_open(&t, 2, 3, NULL, 9);
    check(prob_of(&t), s, 8, "logreg, a worker's rows");
    prob_of(&t)->close(s);
    machines(&t, "logreg");
    plugtest_free(&t);

    softmax();

    /* the collector takes an answer by its request's tag, which rounding
     * codecs keep, and drops an earlier request's and a repeat */
    struct aia_collect c;
    double ans[3 + 2] = {AIA_REQ_GRAD, 0, 1.5, 2, 4};
    if (aia_collect_init(&c, 2, 2) < 0)
        bail_out("out of memory");
    aia_collect_start(&c, 300, NULL);
    ans[1] = 299 % 256;
    int stale = aia_collect_take(&c, ans, 0, 10, NULL);
    ans[1] = 300;
    int untagged = aia_collect_take(&c, ans, 0, 10, NULL);
    ans[1] = aia_req_tag(300);
    int took = aia_collect_take(&c, ans, 0, 10, NULL);
    int again = aia_collect_take(&c, ans, 0, 10, NULL);
    ok(stale == 0 && untagged == 0 && took == 1 && again == 0 &&
           !aia_collect_done(&c),
       "request 300 is tagged %g: an earlier one's answer, an untagged one "
       "and a repeat are dropped, and one of two workers does not complete "
       "it",
       aia_req_tag(300));
    ans[2] = 3.5;
    ans[3] = 4;
    ans[4] = 8;
    aia_collect_take(&c, ans, 1, 30, NULL);
    double mean[2], f = aia_collect_mean(&c, mean);
    ok(aia_collect_done(&c) && f == 3 && mean[0] == 3.5 && mean[1] == 7,
       "both: the row-weighted means (%g; %g, %g)", f, mean[0], mean[1]);
    aia_collect_free(&c);

    /* a problem without hvp: refused, saying so */
    plugtest_load(&t, "pca", AIA_KIND_PROBLEM, "{rows: 20, cols: 3}");
    s = probtest_open(&t, 0, 1, NULL, 9);
    size_t n = prob_of(&t)->dim(s);
    double *q = calloc(2 + 2 * n, sizeof *q), *a = calloc(3 + n, sizeof *a);
    struct aia_error err = {""};
    q[0] = AIA_REQ_HVP;
    ok(!aia_problem_has_hvp(prob_of(&t), s) &&
           aia_request_answer(prob_of(&t), s, n, q, a, &err) < 0 &&
           strstr(err.text, "no Hessian-vector product"),
       "pca has no hvp: a product is refused (%s)", err.text);
    free(q);
    free(a);
    prob_of(&t)->close(s);
    plugtest_free(&t);
    return done_testing();
}
