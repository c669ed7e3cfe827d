/* newton.h - requests of several kinds (loss and gradient, Hessian-vector
 * product) and the second-order methods built on them: Newton-CG and
 * L-BFGS as machines that say what they need next and take it in, with
 * no communication of their own.
 *
 * A query of the algorithms newton and lbfgs is a request: its kind, its
 * number, then the point x and the vector v (both dim doubles):
 *
 *     query  = [kind, id, x[0 .. dim-1], v[0 .. dim-1]]   2 + 2 dim
 *     answer = [kind, id, loss, out[0 .. width-1]]        3 + width
 *
 * AIA_REQ_GRAD asks for the loss and the gradient at x over the worker's
 * rows, AIA_REQ_HVP for H(x) v (the problem's hvp; loss 0), both dim
 * values; AIA_REQ_GRAD_HVP for the loss, the gradient and then H(x) v,
 * 2 dim values (width: the most a method's requests give).  A worker
 * answers any request with aia_request_answer; the coordinator sums the
 * answers to its current request, weighted by the workers' rows, in a
 * struct aia_collect, and drops an answer to an earlier one (its point is
 * no longer the iterate).  The same query may be sent in several rounds
 * until its request is complete: a request is a pure function of the
 * query, so an answer computed in any round counts.
 *
 * The machines (struct aia_ncg, struct aia_lbfgs) keep every number in
 * one block of doubles, so that a checkpoint is that block; they never
 * allocate once open.  The runtime's reference optimum runs struct
 * aia_ncg with answers summed over every rank at once, the algorithm
 * newton with answers that come in rounds: one implementation for both.
 *
 *     #include <aiarun/aiarun.h>
 *     #include <aiarun/newton.h>
 */
#ifndef AIARUN_NEWTON_H
#define AIARUN_NEWTON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#ifdef __cplusplus
extern "C" {
#endif

enum aia_request_kind {
    AIA_REQ_GRAD = 1,     /* loss and gradient at x */
    AIA_REQ_HVP = 2,      /* Hessian at x times v */
    AIA_REQ_GRAD_HVP = 3, /* loss and gradient at x, then H(x) v */
};

#define AIA_REQ_QUERY_LEN(dim) (2 + 2 * (size_t)(dim))

/* The number a query carries for request id: id mod 256, an integer that
 * every query codec keeps exact (float32, float16 and bfloat16 round
 * larger ones), so that a rounding codec does not make every answer look
 * like an earlier request's.  An answer 256 requests late would be taken
 * for the current one's; the methods' requests never wait that long
 * (newton's cg is at most 200). */
static inline double aia_req_tag(double id)
{
    return fmod(id, 256);
}
/* An answer of width values after the loss. */
#define AIA_REQ_ANSWER_LEN(width) (3 + (size_t)(width))

/* Whether the problem instance gives Hessian-vector products (its hvp,
 * offered: AIA_OFFER_HVP where it has offers). */
static inline int aia_problem_has_hvp(const struct aia_problem_plugin *p,
                                      void *state)
{
    if (!p->hvp)
        return 0;
    if (!p->offers)
        return 1;
    const char *name = NULL;
    return (p->offers(state, &name) & AIA_OFFER_HVP) != 0;
}

/* The answer a to the request q over the rows of the problem p (state
 * ps): 3 + dim doubles, 3 + 2 dim for AIA_REQ_GRAD_HVP.  0, or -1 with
 * err set (an unknown kind, or a product asked of a problem without
 * hvp). */
static inline int aia_request_answer(const struct aia_problem_plugin *p,
                                     void *ps, size_t dim, const double *q,
                                     double *a, struct aia_error *err)
{
    a[0] = q[0];
    a[1] = q[1];
    a[2] = 0;
    if (q[0] == AIA_REQ_GRAD || q[0] == AIA_REQ_GRAD_HVP) {
        if (p->loss(ps, q + 2, &a[2], err) < 0 ||
            p->gradient(ps, q + 2, NULL, 0, a + 3, err) < 0)
            return -1;
        if (q[0] == AIA_REQ_GRAD)
            return 0;
        if (!p->hvp)
            return aia_seterr(err,
                              "problem '%s' gives no Hessian-vector "
                              "product",
                              p->h.name);
        return p->hvp(ps, q + 2, q + 2 + dim, a + 3 + dim, err);
    }
    if (q[0] == AIA_REQ_HVP) {
        if (!p->hvp)
            return aia_seterr(err,
                              "problem '%s' gives no Hessian-vector "
                              "product",
                              p->h.name);
        return p->hvp(ps, q + 2, q + 2 + dim, a + 3, err);
    }
    return aia_seterr(err, "a request of kind %g: not one of this method's",
                      q[0]);
}

/* ------------------------------------------------------------------ */
/* The coordinator's sums of the answers to one request                */

struct aia_collect {
    size_t width;        /* values after an answer's loss */
    int nworkers, count; /* count: workers heard for this request */
    double id;           /* the request collected */
    double *vec;         /* nworkers x width: each worker's answer */
    double *loss, *rows; /* nworkers: its loss and rows */
    unsigned char *got;  /* nworkers: answered this request */
    unsigned char *want; /* nworkers: whose answers complete it */
};

/* Answers of width values after the loss.  0, or -1 out of memory
 * (call aia_collect_free either way). */
static inline int aia_collect_init(struct aia_collect *c, size_t width,
                                   int nworkers)
{
    memset(c, 0, sizeof *c);
    c->width = width;
    c->nworkers = nworkers;
    c->id = -1;
    size_t w = nworkers > 0 ? (size_t)nworkers : 1;
    c->vec = (double *)calloc(w * (width ? width : 1), sizeof *c->vec);
    c->loss = (double *)calloc(w, sizeof *c->loss);
    c->rows = (double *)calloc(w, sizeof *c->rows);
    c->got = (unsigned char *)calloc(w, 1);
    c->want = (unsigned char *)malloc(w);
    if (!c->vec || !c->loss || !c->rows || !c->got || !c->want)
        return -1;
    memset(c->want, 1, w);
    return 0;
}

static inline void aia_collect_free(struct aia_collect *c)
{
    free(c->vec);
    free(c->loss);
    free(c->rows);
    free(c->got);
    free(c->want);
    memset(c, 0, sizeof *c);
}

/* Start collecting request id, completed by the workers of want (NULL:
 * every worker). */
static inline void aia_collect_start(struct aia_collect *c, double id,
                                     const unsigned char *want)
{
    size_t w = c->nworkers > 0 ? (size_t)c->nworkers : 0;
    c->id = id;
    c->count = 0;
    memset(c->got, 0, w);
    if (want)
        memcpy(c->want, want, w);
    else
        memset(c->want, 1, w);
}

/* Take one answer a of worker (rows rows): 1 when it is an answer to the
 * request collected and the first of its worker, 0 when it is dropped
 * (an earlier request's, or a repeat), -1 with err set when it is no
 * answer of this pool. */
static inline int aia_collect_take(struct aia_collect *c, const double *a,
                                   int worker, double rows,
                                   struct aia_error *err)
{
    if (worker < 0 || worker >= c->nworkers)
        return aia_seterr(err, "an answer from worker %d of a pool of %d",
                          worker, c->nworkers);
    if (!(rows > 0))
        return aia_seterr(err,
                          "an answer from worker %d, which holds no "
                          "rows: it would have no weight",
                          worker);
    if (a[1] != aia_req_tag(c->id) || c->got[worker])
        return 0;
    if (!isfinite(a[2]))
        return aia_seterr(err,
                          "worker %d answered request %g with the loss "
                          "%g",
                          worker, a[1], a[2]);
    c->got[worker] = 1;
    c->count++;
    c->rows[worker] = rows;
    c->loss[worker] = a[2];
    memcpy(c->vec + (size_t)worker * c->width, a + 3, c->width * sizeof *a);
    return 1;
}

/* Whether every wanted worker has answered. */
static inline int aia_collect_done(const struct aia_collect *c)
{
    for (int w = 0; w < c->nworkers; w++)
        if (c->want[w] && !c->got[w])
            return 0;
    return c->count > 0;
}

/* The row-weighted means over the workers heard: the loss, and out = the
 * mean vector.  Summed in worker order, so that the same answers give the
 * same numbers whatever order they came in (a resumed run ends where an
 * uninterrupted one does). */
static inline double aia_collect_mean(const struct aia_collect *c, double *out)
{
    double rows = 0, loss = 0;
    memset(out, 0, c->width * sizeof *out);
    for (int w = 0; w < c->nworkers; w++) {
        if (!c->got[w])
            continue;
        const double *v = c->vec + (size_t)w * c->width;
        for (size_t j = 0; j < c->width; j++)
            out[j] += c->rows[w] * v[j];
        rows += c->rows[w];
        loss += c->rows[w] * c->loss[w];
    }
    for (size_t j = 0; j < c->width; j++)
        out[j] /= rows;
    return loss / rows;
}

/* ------------------------------------------------------------------ */
/* What a machine asks for                                             */

/* A machine's next request: its kind, the point x and for HVP the vector
 * v (pointers into the machine's block, valid until the next feed). */
struct aia_need {
    int kind;
    const double *x, *v;
};

/* The phases of a machine, stored as doubles in its block. */
enum {
    AIA_PH_START = 0, /* the gradient at x */
    AIA_PH_CG = 1,    /* (newton) H p for a conjugate-gradient step */
    AIA_PH_LINE = 2,  /* loss and gradient at the trial point */
    AIA_PH_DONE = 3,  /* converged: the gradient at x, again */
};

/* A trial point's loss ft at step t along a direction of slope gd (< 0)
 * from f is accepted by Armijo's rule, or when the two losses agree to
 * their rounding (near the optimum the decrease is below it, and the
 * full step is right there). */
static inline int aia_armijo(double f, double ft, double t, double gd)
{
    double slack = 8 * 2.220446049250313e-16 * fabs(f);
    return ft <= f + 1e-4 * t * gd + slack;
}

/* ------------------------------------------------------------------ */
/* Newton-CG                                                           */

/* Scalars of struct aia_ncg, in its block before the vectors. */
enum {
    AIA_NCG_PHASE,
    AIA_NCG_F,
    AIA_NCG_GN,
    AIA_NCG_RR,
    AIA_NCG_ETA,
    AIA_NCG_CGIT,
    AIA_NCG_T,
    AIA_NCG_GD,
    AIA_NCG_STEPS,
    AIA_NCG_HVPS,
    AIA_NCG_REQ,
    AIA_NCG_FAIL,
    AIA_NCG_NSCALARS
};

/* Newton's method with the step H d = -g solved inexactly by conjugate
 * gradients (stopped at |r| <= min(0.5, sqrt|g|) |g|, at cg_max steps, or
 * at a direction of non-positive curvature) and a backtracking line
 * search (Armijo, halving).  A trial point is asked for its loss, its
 * gradient and H d at it (AIA_REQ_GRAD_HVP): an accepted trial costs no
 * other request, and with warm (the default) the next step's CG starts
 * from the best multiple of the last direction, a d = -(g'd / d'Hd) d,
 * not from 0: on heart_scale 27 rounds to 1e-9 of the optimum's loss
 * against 36, on Fashion-MNIST's classes 0 and 6 123 against 105
 * (bench/RESULTS.md, "Second-order methods"). */
struct aia_ncg {
    size_t dim;
    int cg_max;
    int warm;    /* set after aia_ncg_init (default 1); not in the block */
    double gtol; /* done when |g| <= gtol (0: never) */
    double *mem; /* the block: scalars, then x g d r p xt hd */
    double *s, *x, *g, *d, *r, *p, *xt, *hd;
    double *scratch; /* dim, not saved */
};

static inline size_t aia_ncg_len(size_t dim)
{
    return AIA_NCG_NSCALARS + 7 * dim;
}

/* Open m at x0 (NULL: 0).  0, or -1 out of memory (call aia_ncg_free
 * either way). */
static inline int aia_ncg_init(struct aia_ncg *m, size_t dim, int cg_max,
                               double gtol, const double *x0)
{
    memset(m, 0, sizeof *m);
    m->dim = dim;
    m->cg_max = cg_max > 0 ? cg_max : 1;
    m->gtol = gtol;
    m->mem = (double *)calloc(aia_ncg_len(dim), sizeof *m->mem);
    m->scratch = (double *)calloc(dim ? dim : 1, sizeof *m->scratch);
    if (!m->mem || !m->scratch)
        return -1;
    m->s = m->mem;
    m->x = m->s + AIA_NCG_NSCALARS;
    m->g = m->x + dim;
    m->d = m->g + dim;
    m->r = m->d + dim;
    m->p = m->r + dim;
    m->xt = m->p + dim;
    m->hd = m->xt + dim;
    if (x0)
        memcpy(m->x, x0, dim * sizeof *m->x);
    m->s[AIA_NCG_T] = 1;
    m->warm = 1;
    return 0;
}

static inline void aia_ncg_free(struct aia_ncg *m)
{
    free(m->mem);
    free(m->scratch);
    m->mem = m->scratch = NULL;
}

static inline double aia_vdot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t j = 0; j < n; j++)
        s += a[j] * b[j];
    return s;
}

/* What m needs next: the gradient at x (first, and once done), H p, or
 * at the trial point the gradient (and H d when warm). */
static inline void aia_ncg_need(const struct aia_ncg *m, struct aia_need *n)
{
    int ph = (int)m->s[AIA_NCG_PHASE], line = ph == AIA_PH_LINE;
    n->kind = ph == AIA_PH_CG   ? AIA_REQ_HVP
              : line && m->warm ? AIA_REQ_GRAD_HVP
                                : AIA_REQ_GRAD;
    n->x = line ? m->xt : m->x;
    n->v = ph == AIA_PH_CG ? m->p : line && m->warm ? m->d : NULL;
}

/* The line search's first trial along d (-g when d is no descent
 * direction: a CG step on a sampled Hessian from a start made with the
 * whole one may not be). */
static inline void aia_ncg_line(struct aia_ncg *m)
{
    size_t n = m->dim;
    m->s[AIA_NCG_GD] = aia_vdot(m->g, m->d, n);
    if (!(m->s[AIA_NCG_GD] < 0)) {
        for (size_t j = 0; j < n; j++)
            m->d[j] = -m->g[j];
        m->s[AIA_NCG_GD] = -aia_vdot(m->g, m->g, n);
    }
    m->s[AIA_NCG_T] = 1;
    for (size_t j = 0; j < n; j++)
        m->xt[j] = m->x[j] + m->d[j];
    m->s[AIA_NCG_PHASE] = AIA_PH_LINE;
}

/* A Newton step from the gradient at x: done, or CG from 0 or (warm,
 * with hd = H d of the last direction d) from the best multiple of d;
 * its first request, or the line search when that start is good
 * enough. */
static inline void aia_ncg_newstep(struct aia_ncg *m, int warm)
{
    size_t n = m->dim;
    double gn = sqrt(aia_vdot(m->g, m->g, n));
    m->s[AIA_NCG_GN] = gn;
    if (gn == 0 || gn <= m->gtol) {
        m->s[AIA_NCG_PHASE] = AIA_PH_DONE;
        return;
    }
    double dhd = warm ? aia_vdot(m->d, m->hd, n) : 0;
    double a = dhd > 0 ? -aia_vdot(m->g, m->d, n) / dhd : 0;
    if (!(a > 0 && isfinite(a)))
        a = 0;
    double rr = 0;
    for (size_t j = 0; j < n; j++) {
        m->d[j] *= a;
        m->r[j] = m->p[j] = -m->g[j] - a * m->hd[j];
        rr += m->r[j] * m->r[j];
    }
    m->s[AIA_NCG_RR] = rr;
    m->s[AIA_NCG_ETA] = fmin(0.5, sqrt(gn));
    m->s[AIA_NCG_CGIT] = 0;
    m->s[AIA_NCG_PHASE] = AIA_PH_CG;
    if (a > 0 && sqrt(rr) <= m->s[AIA_NCG_ETA] * gn)
        aia_ncg_line(m);
}

/* Feed m what it needed: the loss f and out, the gradient (dim values),
 * H p, or the gradient and H d (2 dim).  Returns 1 when an iterate was
 * accepted (x moved), 0 otherwise. */
static inline int aia_ncg_feed(struct aia_ncg *m, double f, const double *out)
{
    size_t n = m->dim;
    double *s = m->s;
    switch ((int)s[AIA_NCG_PHASE]) {
    case AIA_PH_START:
    case AIA_PH_DONE:
        s[AIA_NCG_F] = f;
        memcpy(m->g, out, n * sizeof *out);
        aia_ncg_newstep(m, 0);
        return 0;
    case AIA_PH_CG: {
        double php = aia_vdot(m->p, out, n);
        s[AIA_NCG_HVPS] += 1;
        if (!(php > 0)) {
            /* non-positive curvature: the CG step so far, or -g */
            if (s[AIA_NCG_CGIT] == 0 && aia_vdot(m->d, m->d, n) == 0)
                memcpy(m->d, m->p, n * sizeof *m->d);
            aia_ncg_line(m);
            return 0;
        }
        double alpha = s[AIA_NCG_RR] / php, rr = 0;
        for (size_t j = 0; j < n; j++) {
            m->d[j] += alpha * m->p[j];
            m->r[j] -= alpha * out[j];
            rr += m->r[j] * m->r[j];
        }
        s[AIA_NCG_CGIT] += 1;
        if (sqrt(rr) <= s[AIA_NCG_ETA] * s[AIA_NCG_GN] ||
            s[AIA_NCG_CGIT] >= m->cg_max) {
            aia_ncg_line(m);
            return 0;
        }
        double beta = rr / s[AIA_NCG_RR];
        s[AIA_NCG_RR] = rr;
        for (size_t j = 0; j < n; j++)
            m->p[j] = m->r[j] + beta * m->p[j];
        return 0;
    }
    case AIA_PH_LINE:
        if (isfinite(f) &&
            aia_armijo(s[AIA_NCG_F], f, s[AIA_NCG_T], s[AIA_NCG_GD])) {
            memcpy(m->x, m->xt, n * sizeof *m->x);
            memcpy(m->g, out, n * sizeof *out);
            /* H d at the new point, d scaled to the step taken */
            for (size_t j = 0; m->warm && j < n; j++) {
                m->d[j] *= s[AIA_NCG_T];
                m->hd[j] = s[AIA_NCG_T] * out[n + j];
            }
            s[AIA_NCG_F] = f;
            s[AIA_NCG_STEPS] += 1;
            aia_ncg_newstep(m, m->warm);
            return 1;
        }
        s[AIA_NCG_T] *= 0.5;
        if (s[AIA_NCG_T] < 1e-12) {
            /* no decrease to be had along d: rounding decides here */
            s[AIA_NCG_FAIL] += 1;
            s[AIA_NCG_PHASE] = AIA_PH_DONE;
            return 0;
        }
        for (size_t j = 0; j < n; j++)
            m->xt[j] = m->x[j] + s[AIA_NCG_T] * m->d[j];
        return 0;
    }
    return 0;
}

/* Whether a saved block is one of m's: its phase and counts are. */
static inline int aia_ncg_block_ok(const struct aia_ncg *m, const double *b)
{
    double ph = b[AIA_NCG_PHASE];
    (void)m;
    return (ph == AIA_PH_START || ph == AIA_PH_CG || ph == AIA_PH_LINE ||
            ph == AIA_PH_DONE) &&
           b[AIA_NCG_REQ] >= 0 && b[AIA_NCG_REQ] < AIA_EXACT_BELOW &&
           b[AIA_NCG_T] > 0 && b[AIA_NCG_T] <= 1;
}

/* ------------------------------------------------------------------ */
/* L-BFGS                                                              */

enum {
    AIA_LB_PHASE,
    AIA_LB_F,
    AIA_LB_T,
    AIA_LB_GD,
    AIA_LB_HEAD,
    AIA_LB_COUNT,
    AIA_LB_STEPS,
    AIA_LB_REQ,
    AIA_LB_DROPPED,
    AIA_LB_FAIL,
    AIA_LB_NSCALARS
};

/* L-BFGS with memory mem pairs (s, y), the two-loop recursion scaled by
 * s'y / y'y of the newest pair, and the same line search as Newton-CG.
 * A pair is kept only when s'y > 1e-10 |s| |y| (curvature that the
 * inverse update can use), else dropped and counted. */
struct aia_lbfgs {
    size_t dim;
    int m;
    double gtol;
    double *mem; /* AIA_LB_NSCALARS, x g d xt, then S Y (m x dim), rho (m) */
    double *s, *x, *g, *d, *xt, *S, *Y, *rho;
    double *alpha; /* m, not saved */
};

static inline size_t aia_lbfgs_len(size_t dim, int m)
{
    return AIA_LB_NSCALARS + 4 * dim + 2 * (size_t)m * dim + (size_t)m;
}

static inline int aia_lbfgs_init(struct aia_lbfgs *l, size_t dim, int m,
                                 double gtol, const double *x0)
{
    memset(l, 0, sizeof *l);
    l->dim = dim;
    l->m = m > 0 ? m : 1;
    l->gtol = gtol;
    l->mem = (double *)calloc(aia_lbfgs_len(dim, l->m), sizeof *l->mem);
    l->alpha = (double *)calloc((size_t)l->m, sizeof *l->alpha);
    if (!l->mem || !l->alpha)
        return -1;
    l->s = l->mem;
    l->x = l->s + AIA_LB_NSCALARS;
    l->g = l->x + dim;
    l->d = l->g + dim;
    l->xt = l->d + dim;
    l->S = l->xt + dim;
    l->Y = l->S + (size_t)l->m * dim;
    l->rho = l->Y + (size_t)l->m * dim;
    if (x0)
        memcpy(l->x, x0, dim * sizeof *l->x);
    l->s[AIA_LB_T] = 1;
    return 0;
}

static inline void aia_lbfgs_free(struct aia_lbfgs *l)
{
    free(l->mem);
    free(l->alpha);
    l->mem = l->alpha = NULL;
}

static inline void aia_lbfgs_need(const struct aia_lbfgs *l, struct aia_need *n)
{
    n->kind = AIA_REQ_GRAD;
    n->x = (int)l->s[AIA_LB_PHASE] == AIA_PH_LINE ? l->xt : l->x;
    n->v = NULL;
}

/* d = -H g by the two-loop recursion, then the first trial. */
static inline void aia_lbfgs_direction(struct aia_lbfgs *l)
{
    size_t n = l->dim;
    double *s = l->s;
    double gn = sqrt(aia_vdot(l->g, l->g, n));
    if (gn == 0 || gn <= l->gtol) {
        s[AIA_LB_PHASE] = AIA_PH_DONE;
        return;
    }
    int count = (int)s[AIA_LB_COUNT], head = (int)s[AIA_LB_HEAD];
    for (size_t j = 0; j < n; j++)
        l->d[j] = l->g[j];
    for (int k = 0; k < count; k++) { /* newest first */
        int i = (head - 1 - k + l->m) % l->m;
        const double *si = l->S + (size_t)i * n, *yi = l->Y + (size_t)i * n;
        l->alpha[i] = l->rho[i] * aia_vdot(si, l->d, n);
        for (size_t j = 0; j < n; j++)
            l->d[j] -= l->alpha[i] * yi[j];
    }
    double gamma;
    if (count > 0) {
        int i = (head - 1 + l->m) % l->m;
        const double *yi = l->Y + (size_t)i * n;
        gamma = 1 / (l->rho[i] * aia_vdot(yi, yi, n));
    } else {
        gamma = 1 / fmax(1, gn); /* a first step of length at most 1 */
    }
    for (size_t j = 0; j < n; j++)
        l->d[j] *= gamma;
    for (int k = count - 1; k >= 0; k--) { /* oldest first */
        int i = (head - 1 - k + l->m) % l->m;
        const double *si = l->S + (size_t)i * n, *yi = l->Y + (size_t)i * n;
        double beta = l->rho[i] * aia_vdot(yi, l->d, n);
        for (size_t j = 0; j < n; j++)
            l->d[j] += (l->alpha[i] - beta) * si[j];
    }
    for (size_t j = 0; j < n; j++)
        l->d[j] = -l->d[j];
    s[AIA_LB_GD] = aia_vdot(l->g, l->d, n);
    if (!(s[AIA_LB_GD] < 0)) { /* not a descent direction: forget, take -g */
        s[AIA_LB_COUNT] = s[AIA_LB_HEAD] = 0;
        for (size_t j = 0; j < n; j++)
            l->d[j] = -l->g[j] / fmax(1, gn);
        s[AIA_LB_GD] = aia_vdot(l->g, l->d, n);
    }
    s[AIA_LB_T] = 1;
    for (size_t j = 0; j < n; j++)
        l->xt[j] = l->x[j] + l->d[j];
    s[AIA_LB_PHASE] = AIA_PH_LINE;
}

/* Feed l the loss f and the gradient g at the point it needed: 1 when an
 * iterate was accepted. */
static inline int aia_lbfgs_feed(struct aia_lbfgs *l, double f, const double *g)
{
    size_t n = l->dim;
    double *s = l->s;
    if ((int)s[AIA_LB_PHASE] != AIA_PH_LINE) {
        s[AIA_LB_F] = f;
        memcpy(l->g, g, n * sizeof *g);
        aia_lbfgs_direction(l);
        return 0;
    }
    if (!(isfinite(f) &&
          aia_armijo(s[AIA_LB_F], f, s[AIA_LB_T], s[AIA_LB_GD]))) {
        s[AIA_LB_T] *= 0.5;
        if (s[AIA_LB_T] < 1e-12) {
            s[AIA_LB_FAIL] += 1;
            s[AIA_LB_PHASE] = AIA_PH_DONE;
            return 0;
        }
        for (size_t j = 0; j < n; j++)
            l->xt[j] = l->x[j] + s[AIA_LB_T] * l->d[j];
        return 0;
    }
    int head = (int)s[AIA_LB_HEAD];
    double *si = l->S + (size_t)head * n, *yi = l->Y + (size_t)head * n;
    for (size_t j = 0; j < n; j++) {
        si[j] = l->xt[j] - l->x[j];
        yi[j] = g[j] - l->g[j];
    }
    double sy = aia_vdot(si, yi, n);
    double ss = aia_vdot(si, si, n), yy = aia_vdot(yi, yi, n);
    if (sy > 1e-10 * sqrt(ss * yy)) {
        l->rho[head] = 1 / sy;
        s[AIA_LB_HEAD] = (head + 1) % l->m;
        if (s[AIA_LB_COUNT] < l->m)
            s[AIA_LB_COUNT] += 1;
    } else {
        s[AIA_LB_DROPPED] += 1;
    }
    memcpy(l->x, l->xt, n * sizeof *l->x);
    memcpy(l->g, g, n * sizeof *g);
    s[AIA_LB_F] = f;
    s[AIA_LB_STEPS] += 1;
    aia_lbfgs_direction(l);
    return 1;
}

static inline int aia_lbfgs_block_ok(const struct aia_lbfgs *l, const double *b)
{
    double ph = b[AIA_LB_PHASE];
    return (ph == AIA_PH_START || ph == AIA_PH_LINE || ph == AIA_PH_DONE) &&
           b[AIA_LB_REQ] >= 0 && b[AIA_LB_REQ] < AIA_EXACT_BELOW &&
           b[AIA_LB_T] > 0 && b[AIA_LB_T] <= 1 && b[AIA_LB_HEAD] >= 0 &&
           b[AIA_LB_HEAD] < l->m && b[AIA_LB_COUNT] >= 0 &&
           b[AIA_LB_COUNT] <= l->m && b[AIA_LB_HEAD] == floor(b[AIA_LB_HEAD]) &&
           b[AIA_LB_COUNT] == floor(b[AIA_LB_COUNT]);
}

#ifdef __cplusplus
}
#endif

#endif
