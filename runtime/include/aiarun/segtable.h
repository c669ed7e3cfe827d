/* segtable.h - a coordinator's table of the latest gradients whose
 * entries are row ranges of each worker's rows, for methods that change
 * how a worker splits its rows during a run (sag's balance).
 *
 * Worker w's rows are 0 .. rows-1; the table holds for each worker a set
 * of segments [lo, hi), sorted and disjoint, each with the mean gradient
 * of its rows and the step of the query behind it.  An answer for rows
 * [lo, hi) first splits a segment that straddles lo or hi (each part
 * keeps the parent's mean gradient and step, so the row-weighted sum and
 * the rows' ages do not change), then replaces every segment inside
 * [lo, hi) by one.  The table's sum and age are thus the same whatever
 * the split of a worker's rows was and is now; a worker that changes
 * from p to p' parts has at most p + p' segments until it has answered
 * each of its new parts.
 *
 * The row-weighted sum, the rows and the sum of rows times step are
 * running sums changed by difference, O(dim) an answer whatever the
 * pool, and summed afresh (aia_segtable_resum, in worker then row order,
 * the same numbers whatever order the answers came in) once every as
 * many answers as there are segments, and at least AIA_TABLE_RESUM_MIN
 * (alg.h).
 *
 *     #include <aiarun/aiarun.h>
 *     #include <aiarun/segtable.h>
 */
#ifndef AIARUN_SEGTABLE_H
#define AIARUN_SEGTABLE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/alg.h>

#ifdef __cplusplus
extern "C" {
#endif

struct aia_seg {
    size_t lo, hi; /* the worker's rows [lo, hi) */
    size_t slot;   /* its mean gradient: g + slot * dim */
    uint64_t when; /* step of the query behind it */
};

struct aia_segtable {
    size_t dim;
    int nworkers;
    struct aia_seg **seg; /* per worker, sorted by lo */
    size_t *nseg, *cap;   /* per worker */
    double *g;            /* slots x dim */
    size_t slots, used;   /* slots allocated; slots ever handed out */
    size_t *free_;        /* slots given back, reused last in first out */
    size_t nfree;
    size_t segments; /* over every worker */
    /* running sums */
    double *sum;      /* dim: sum over segments of rows x gradient */
    double total;     /* rows in the table */
    double when_sum;  /* sum of rows x step (integers, exact below 2^53) */
    struct aia_recent recent; /* rows of the two latest steps (alg.h) */
    uint64_t now; /* the latest step an answer came in */
    size_t since; /* answers since the last resum */
};

/* 0, or -1 when memory runs out (call aia_segtable_free either way). */
static inline int aia_segtable_init(struct aia_segtable *t, int nworkers,
                                    size_t dim)
{
    size_t n = nworkers > 0 ? (size_t)nworkers : 1;
    memset(t, 0, sizeof *t);
    t->dim = dim;
    t->nworkers = nworkers;
    t->seg = (struct aia_seg **)calloc(n, sizeof *t->seg);
    t->nseg = (size_t *)calloc(n, sizeof *t->nseg);
    t->cap = (size_t *)calloc(n, sizeof *t->cap);
    t->sum = (double *)calloc(dim ? dim : 1, sizeof *t->sum);
    return t->seg && t->nseg && t->cap && t->sum ? 0 : -1;
}

static inline void aia_segtable_free(struct aia_segtable *t)
{
    if (t->seg)
        for (int w = 0; w < t->nworkers; w++)
            free(t->seg[w]);
    free(t->seg);
    free(t->nseg);
    free(t->cap);
    free(t->g);
    free(t->free_);
    free(t->sum);
    memset(t, 0, sizeof *t);
}

/* A slot for a gradient: a given-back one, else a new one.  SIZE_MAX
 * when memory runs out. */
static inline size_t aia_segtable_slot(struct aia_segtable *t)
{
    if (t->nfree > 0)
        return t->free_[--t->nfree];
    if (t->used == t->slots) {
        size_t n = t->slots ? 2 * t->slots : 16, d = t->dim ? t->dim : 1;
        double *g = (double *)realloc(t->g, n * d * sizeof *g);
        size_t *f;
        if (!g)
            return SIZE_MAX;
        t->g = g;
        f = (size_t *)realloc(t->free_, n * sizeof *f);
        if (!f)
            return SIZE_MAX;
        t->free_ = f;
        t->slots = n;
    }
    return t->used++;
}

/* Room for one more segment of worker w.  0 or -1. */
static inline int aia_segtable_room(struct aia_segtable *t, int w)
{
    if (t->nseg[w] < t->cap[w])
        return 0;
    size_t n = t->cap[w] ? 2 * t->cap[w] : 4;
    struct aia_seg *s = (struct aia_seg *)realloc(t->seg[w], n * sizeof *s);
    if (!s)
        return -1;
    t->seg[w] = s;
    t->cap[w] = n;
    return 0;
}

/* An answer came in at step now (its round), whether it enters the table
 * or not: the segments' ages count from the latest. */
static inline void aia_segtable_heard(struct aia_segtable *t, uint64_t now)
{
    if (now > t->now)
        t->now = now;
}

/* Answers between two sums afresh: one a segment, at least
 * AIA_TABLE_RESUM_MIN. */
static inline size_t aia_segtable_period(const struct aia_segtable *t)
{
    return aia_resum_period(t->segments);
}

/* The running sums summed afresh, worker by worker, row order. */
static inline void aia_segtable_resum(struct aia_segtable *t)
{
    uint64_t top = 0;
    memset(t->sum, 0, t->dim * sizeof *t->sum);
    t->total = t->when_sum = 0;
    for (int w = 0; w < t->nworkers; w++)
        for (size_t k = 0; k < t->nseg[w]; k++) {
            const struct aia_seg *s = &t->seg[w][k];
            const double n = (double)(s->hi - s->lo);
            const double *g = t->g + s->slot * t->dim;
            for (size_t j = 0; j < t->dim; j++)
                t->sum[j] += n * g[j];
            t->total += n;
            t->when_sum += n * (double)s->when;
            if (s->when > top)
                top = s->when;
        }
    aia_recent_restart(&t->recent, top);
    for (int w = 0; w < t->nworkers; w++)
        for (size_t k = 0; k < t->nseg[w]; k++) {
            const struct aia_seg *s = &t->seg[w][k];
            aia_recent_move(&t->recent, s->when, (double)(s->hi - s->lo), 1);
        }
    t->since = 0;
}

/* Split worker w's segment k at row at (lo < at < hi): both parts keep
 * its gradient and step, so no running sum changes.  0 or -1. */
static inline int aia_segtable_split(struct aia_segtable *t, int w, size_t k,
                                     size_t at)
{
    size_t slot;
    if (aia_segtable_room(t, w) < 0 ||
        (slot = aia_segtable_slot(t)) == SIZE_MAX)
        return -1;
    struct aia_seg *s = t->seg[w];
    memmove(s + k + 2, s + k + 1, (t->nseg[w] - k - 1) * sizeof *s);
    s[k + 1] = s[k];
    s[k + 1].lo = at;
    s[k + 1].slot = slot;
    s[k].hi = at;
    memcpy(t->g + slot * t->dim, t->g + s[k].slot * t->dim,
           t->dim * sizeof *t->g);
    t->nseg[w]++;
    t->segments++;
    return 0;
}

/* Worker w's answer: g, the mean gradient of its rows [lo, hi), computed
 * from the query of step sent.  An answer older than a segment it
 * overlaps changes nothing (the table keeps the freshest gradients):
 * returns 0 then, 1 when stored, -1 when memory runs out. */
static inline int aia_segtable_put(struct aia_segtable *t, int w, size_t lo,
                                   size_t hi, const double *g, uint64_t sent)
{
    struct aia_seg *s = t->seg[w];
    size_t n = t->nseg[w], a = 0, b;
    while (a < n && s[a].hi <= lo) /* the first segment that ends past lo */
        a++;
    for (b = a; b < n && s[b].lo < hi; b++)
        if (s[b].when > sent)
            return 0;
    if (a < n && s[a].lo < lo && s[a].hi > lo) { /* straddles lo */
        if (aia_segtable_split(t, w, a, lo) < 0)
            return -1;
        a++;
    }
    s = t->seg[w];
    n = t->nseg[w];
    for (b = a; b < n && s[b].lo < hi; b++)
        ;
    if (b > a && s[b - 1].hi > hi) { /* the last one straddles hi */
        if (aia_segtable_split(t, w, b - 1, hi) < 0)
            return -1;
        s = t->seg[w];
        n = t->nseg[w];
    }
    /* segments a .. b-1 lie inside [lo, hi): they leave the sums */
    for (size_t k = a; k < b; k++) {
        const double r = (double)(s[k].hi - s[k].lo);
        const double *old = t->g + s[k].slot * t->dim;
        for (size_t j = 0; j < t->dim; j++)
            t->sum[j] -= r * old[j];
        t->total -= r;
        t->when_sum -= r * (double)s[k].when;
        aia_recent_move(&t->recent, s[k].when, r, -1);
        if (k > a)
            t->free_[t->nfree++] = s[k].slot;
    }
    size_t slot;
    if (b > a) { /* the first one's slot takes the answer */
        slot = s[a].slot;
        memmove(s + a + 1, s + b, (n - b) * sizeof *s);
        t->nseg[w] -= b - a - 1;
        t->segments -= b - a - 1;
    } else {
        if (aia_segtable_room(t, w) < 0 ||
            (slot = aia_segtable_slot(t)) == SIZE_MAX)
            return -1;
        s = t->seg[w];
        memmove(s + a + 1, s + a, (n - a) * sizeof *s);
        t->nseg[w]++;
        t->segments++;
    }
    s[a].lo = lo;
    s[a].hi = hi;
    s[a].slot = slot;
    s[a].when = sent;
    const double r = (double)(hi - lo);
    double *to = t->g + slot * t->dim, *sum = t->sum;
    for (size_t j = 0; j < t->dim; j++) { /* stored and added in one pass */
        double gj = g[j];
        to[j] = gj;
        sum[j] += r * gj;
    }
    t->total += r;
    t->when_sum += r * (double)sent;
    aia_recent_move(&t->recent, sent, r, 1);
    if (++t->since >= aia_segtable_period(t))
        aia_segtable_resum(t);
    return 1;
}

/* The entries' row-weighted age data for host->age_factor: rows, rows
 * times age, rows at most one step old. */
static inline double aia_segtable_age_factor(const struct aia_host *host,
                                             const struct aia_segtable *t,
                                             double most)
{
    if (!host || !AIA_HAS(struct aia_host, host, age_factor) ||
        !host->age_factor)
        return 1.0;
    return host->age_factor(host, t->total,
                            t->total * (double)t->now - t->when_sum,
                            aia_recent_rows(&t->recent, t->now), most);
}

/* Checkpoints: for each worker its count of segments, then each segment
 * (lo, hi, step, dim gradient values), all as doubles (exact below
 * 2^53).  aia_segtable_size is the doubles save writes. */
static inline size_t aia_segtable_size(const struct aia_segtable *t)
{
    return (size_t)t->nworkers + t->segments * (3 + t->dim);
}

static inline double *aia_segtable_save(const struct aia_segtable *t, double *p)
{
    for (int w = 0; w < t->nworkers; w++) {
        *p++ = (double)t->nseg[w];
        for (size_t k = 0; k < t->nseg[w]; k++) {
            const struct aia_seg *s = &t->seg[w][k];
            *p++ = (double)s->lo;
            *p++ = (double)s->hi;
            *p++ = (double)s->when;
            memcpy(p, t->g + s->slot * t->dim, t->dim * sizeof *p);
            p += t->dim;
        }
    }
    return p;
}

/* What of the segment at p (lo, hi, step, then dim gradient values) is
 * not one of a worker's rows from row last on, below rows: its name, and
 * its value in *v; NULL when none is.  Every field is checked before it
 * is used: each becomes a size_t, a row or a step. */
static inline const char *aia_segtable_seg_bad(const double *p, size_t dim,
                                               double last, double rows,
                                               double *v)
{
    const double exact = AIA_EXACT_BELOW;
    if (!(p[0] >= last && p[0] < exact && p[0] == floor(p[0])))
        return *v = p[0], "first row";
    if (!(p[1] > p[0] && p[1] <= rows && p[1] < exact && p[1] == floor(p[1])))
        return *v = p[1], "end row";
    if (!(p[2] >= 0 && p[2] < exact && p[2] == floor(p[2])))
        return *v = p[2], "step";
    for (size_t j = 0; j < dim; j++)
        if (!isfinite(p[3 + j]))
            return *v = p[3 + j], "gradient";
    return NULL;
}

/* Read back n doubles at p into an empty table, worker w's rows below
 * rows[w]; the running sums summed afresh.  The end of what it read, or
 * NULL with err naming the worker, the segment and the field that is not
 * a table's (the table is then to be freed). */
static inline const double *aia_segtable_load(struct aia_segtable *t,
                                              const double *p, size_t n,
                                              const size_t *rows,
                                              struct aia_error *err)
{
    const double *end = p + n;
    const double exact = AIA_EXACT_BELOW;
    for (int w = 0; w < t->nworkers; w++) {
        /* rows unknown (SIZE_MAX): no more than a double counts exactly */
        double most = (double)rows[w] < exact ? (double)rows[w] : exact;
        if (p >= end || !(*p >= 0 && *p <= most && *p == floor(*p))) {
            aia_seterr(err,
                       "damaged: worker %d's count of segments is %g: not "
                       "a table's",
                       w, p < end ? *p : -1.0);
            return NULL;
        }
        size_t m = (size_t)*p++;
        double last = 0;
        for (size_t k = 0; k < m; k++) {
            size_t slot;
            double v = 0;
            if ((size_t)(end - p) < 3 + t->dim) {
                aia_seterr(err, "damaged: worker %d's segment %zu is cut "
                                "short",
                           w, k);
                return NULL;
            }
            const char *bad = aia_segtable_seg_bad(p, t->dim, last, most, &v);
            if (bad) {
                aia_seterr(err,
                           "damaged: worker %d's segment %zu: its %s (%g) "
                           "is not a table's",
                           w, k, bad, v);
                return NULL;
            }
            if (aia_segtable_room(t, w) < 0 ||
                (slot = aia_segtable_slot(t)) == SIZE_MAX) {
                aia_seterr(err, "out of memory");
                return NULL;
            }
            struct aia_seg *s = &t->seg[w][t->nseg[w]++];
            s->lo = (size_t)p[0];
            s->hi = (size_t)p[1];
            last = p[1];
            s->when = (uint64_t)p[2];
            s->slot = slot;
            if (s->when > t->now)
                t->now = s->when;
            memcpy(t->g + slot * t->dim, p + 3, t->dim * sizeof *p);
            p += 3 + t->dim;
            t->segments++;
        }
    }
    aia_segtable_resum(t);
    return p;
}

/* The running sums in a checkpoint, after the segments (aia_running,
 * alg.h): aia_segtable_sums_len doubles.  aia_segtable_sums_bad checks
 * saved sums against the segments (call it once they are loaded, which
 * set the period and sum them afresh); load reads them back over those
 * sums. */
static inline struct aia_running
aia_segtable_running(const struct aia_segtable *t)
{
    struct aia_segtable *m = (struct aia_segtable *)t;
    struct aia_running r = {m->sum,   m->dim,  &m->total, &m->when_sum,
                            &m->since, &m->now, &m->recent};
    return r;
}

static inline size_t aia_segtable_sums_len(const struct aia_segtable *t)
{
    return t->dim + AIA_RUNNING_SCALARS;
}

static inline double *aia_segtable_save_sums(const struct aia_segtable *t,
                                             double *p)
{
    struct aia_running r = aia_segtable_running(t);
    return aia_running_save(&r, p);
}

static inline const char *aia_segtable_sums_bad(const struct aia_segtable *t,
                                                const double *p)
{
    struct aia_running r = aia_segtable_running(t);
    return aia_running_bad(&r, p, t->total, t->when_sum, (double)t->now,
                           aia_segtable_period(t));
}

static inline void aia_segtable_load_sums(struct aia_segtable *t,
                                          const double *p)
{
    struct aia_running r = aia_segtable_running(t);
    aia_running_load(&r, p);
}

#ifdef __cplusplus
}
#endif

#endif
