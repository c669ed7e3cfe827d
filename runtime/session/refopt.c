/* refopt.c - the reference optimum found by Newton-CG over the pool's
 * rows (refopt.h). */
#include <config.h>

#include "refopt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/newton.h>

#include "conf/job.h"

/* Newton steps and CG steps a step at most; the gradient's relative
 * norm it stops at (f - f* is then about |g|^2 / (2 mu), far below the
 * gaps a run is stopped at). */
#define REF_STEPS 100
#define REF_CG 500
#define REF_GTOL 1e-10

int refopt_wanted(const struct setup *s, int by_workers)
{
    if (!(s->job->stop.gap > 0) || !(s->offers & AIA_OFFER_HVP))
        return 0;
    return !(s->offers & AIA_OFFER_OPTIMUM) ||
           (by_workers && !s->prob->combine);
}

void refopt_part(const struct aia_problem_plugin *p, void *ps, size_t dim,
                 const double *q, double *out, struct aia_error *err)
{
    size_t rows = ps ? p->rows(ps) : 0, w = REFOPT_WIDTH(dim);
    memset(out, 0, REFOPT_PART_LEN(dim) * sizeof *out);
    if (rows == 0)
        return;
    double *a = calloc(AIA_REQ_ANSWER_LEN(w), sizeof *a);
    if (!a || aia_request_answer(p, ps, dim, q, a, err) < 0) {
        if (!a)
            aia_seterr(err, "out of memory");
        for (size_t j = 0; j < REFOPT_PART_LEN(dim); j++)
            out[j] = NAN;
        free(a);
        return;
    }
    out[0] = (double)rows * a[2];
    for (size_t j = 0; j < w; j++)
        out[1 + j] = (double)rows * a[3 + j];
    out[w + 1] = (double)rows;
    free(a);
}

int refopt_solve(struct refopt *ref, size_t dim, refopt_sum_fn sum, void *ctx,
                 struct aia_error *err)
{
    struct aia_ncg m;
    double *q = malloc(AIA_REQ_QUERY_LEN(dim) * sizeof *q);
    size_t w = REFOPT_WIDTH(dim);
    double *s = malloc(REFOPT_PART_LEN(dim) * sizeof *s);
    double *mean = malloc((w ? w : 1) * sizeof *mean);
    int rc = 0, asked = 0;
    double g0 = -1;
    memset(ref, 0, sizeof *ref);
    memset(&m, 0, sizeof m);
    if (!q || !s || !mean || aia_ncg_init(&m, dim, REF_CG, 0, NULL) < 0 ||
        !(ref->x = malloc((dim ? dim : 1) * sizeof *ref->x))) {
        rc = aia_seterr(err, "out of memory for Newton-CG of dimension %zu",
                        dim);
        goto out;
    }
    for (;;) {
        struct aia_need need;
        aia_ncg_need(&m, &need);
        q[0] = need.kind;
        q[1] = asked++;
        memcpy(q + 2, need.x, dim * sizeof *q);
        if (need.v)
            memcpy(q + 2 + dim, need.v, dim * sizeof *q);
        else
            memset(q + 2 + dim, 0, dim * sizeof *q);
        if (sum(ctx, q, s, err) < 0) {
            rc = -1;
            goto out;
        }
        if (!(s[w + 1] > 0) || !isfinite(s[0])) {
            aia_seterr(&ref->why,
                       "Newton-CG on the workers' rows: the pool's %s "
                       "came back as %g over %g rows",
                       need.kind == AIA_REQ_HVP ? "Hessian product" : "loss",
                       s[0], s[w + 1]);
            goto out;
        }
        for (size_t j = 0; j < w; j++)
            mean[j] = s[1 + j] / s[w + 1];
        double f = s[0] / s[w + 1];
        aia_ncg_feed(&m, f, mean);
        if (g0 < 0 && m.s[AIA_NCG_PHASE] != AIA_PH_START)
            g0 = m.s[AIA_NCG_GN];
        double tol = REF_GTOL * fmax(1, g0);
        int ph = (int)m.s[AIA_NCG_PHASE];
        if ((ph == AIA_PH_CG || ph == AIA_PH_DONE) && m.s[AIA_NCG_GN] <= tol) {
            ref->known = 1;
            ref->f = m.s[AIA_NCG_F];
            memcpy(ref->x, m.x, dim * sizeof *ref->x);
            snprintf(ref->how, sizeof ref->how,
                     "Newton-CG on the workers' rows: %.0f steps, %.0f "
                     "Hessian-vector products, |grad| %.2e <= %.1e",
                     m.s[AIA_NCG_STEPS], m.s[AIA_NCG_HVPS], m.s[AIA_NCG_GN],
                     tol);
            break;
        }
        if (ph == AIA_PH_DONE || m.s[AIA_NCG_STEPS] >= REF_STEPS) {
            aia_seterr(&ref->why,
                       "Newton-CG on the workers' rows stopped at |grad| "
                       "%.3e after %.0f steps, above %.1e",
                       m.s[AIA_NCG_GN], m.s[AIA_NCG_STEPS], tol);
            break;
        }
    }
out:
    aia_ncg_free(&m);
    free(q);
    free(s);
    free(mean);
    return rc;
}

void refopt_free(struct refopt *ref)
{
    free(ref->x);
    ref->x = NULL;
}
