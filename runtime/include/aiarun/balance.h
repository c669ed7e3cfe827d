/* balance.h - DSAG's load balancer for a method whose workers cycle
 * through sub-partitions of their rows (sag's balance: on): from the
 * compute times of each worker's latest answers, an assignment of
 * sub-partitions per worker that makes every worker's expected time per
 * answer the same, taken only when it predicts a real gain.
 *
 * Each worker's times are fitted as o + b n (a fixed cost of an answer, a
 * time per row) through the medians of its two latest answer sizes; a
 * plan aims every worker at the fastest one's time at the fewest parts,
 * never splits a worker so fine that an answer's compute is below its
 * fixed cost, at most quadruples a worker's parts, leaves changes of less
 * than a half alone, caps a worker whose finer split did not cut its time
 * per answer below threshold of the coarser one's, and is taken when its
 * slowest worker's predicted time per answer is below threshold times
 * the current assignment's.  A plan costs O(nworkers x window); one every
 * so many rounds.
 *
 *     #include <aiarun/aiarun.h>
 *     #include <aiarun/balance.h>
 */
#ifndef AIARUN_BALANCE_H
#define AIARUN_BALANCE_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The coordinator's state; every array has nworkers entries but the
 * windows, window x nworkers. */
struct aia_balance {
    int nworkers;
    size_t parts, every, window, most; /* the fewest, most parts a worker */
    double threshold;
    const struct aia_host *host;
    double *p;         /* each worker's parts */
    double *plan;      /* a plan's (scratch) */
    double *ring_rows; /* each worker's latest answers' rows */
    double *ring_time; /* and their compute times */
    double *samples;   /* answers timed, per worker */
    double *recent;    /* of them since its parts changed */
    double *scratch;   /* window doubles */
    double *cap;       /* most parts a split paid for */
    double *fixed;     /* fixed cost of an answer, latest fit */
    double *wrows;     /* rows of each worker (0: unknown) */
    double since_plan, plans;
    int *ranks; /* each worker's rank, for messages */
};

/* Open b for ctx's pool: every worker at parts, a plan every every
 * rounds, window answers per worker, plans taken below threshold, at
 * most most parts a worker.  0, or -1 when memory runs out (call
 * aia_balance_close either way). */
static inline int aia_balance_open(struct aia_balance *s,
                                   const struct aia_context *ctx, size_t parts,
                                   size_t every, size_t window,
                                   double threshold, size_t most)
{
    size_t n = ctx->nworkers > 0 ? (size_t)ctx->nworkers : 1;
    memset(s, 0, sizeof *s);
    s->nworkers = (int)n;
    s->parts = parts;
    s->every = every;
    s->window = window;
    s->threshold = threshold;
    s->most = most;
    s->host = ctx->host;
    if (!(s->p = (double *)calloc(n, sizeof *s->p)) ||
        !(s->plan = (double *)calloc(n, sizeof *s->plan)) ||
        !(s->ring_rows = (double *)calloc(n * window, sizeof(double))) ||
        !(s->ring_time = (double *)calloc(n * window, sizeof(double))) ||
        !(s->samples = (double *)calloc(n, sizeof *s->samples)) ||
        !(s->recent = (double *)calloc(n, sizeof *s->recent)) ||
        !(s->scratch = (double *)calloc(window, sizeof *s->scratch)) ||
        !(s->cap = (double *)calloc(n, sizeof *s->cap)) ||
        !(s->fixed = (double *)calloc(n, sizeof *s->fixed)) ||
        !(s->wrows = (double *)calloc(n, sizeof *s->wrows)) ||
        !(s->ranks = (int *)calloc(n, sizeof *s->ranks)))
        return -1;
    for (size_t w = 0; w < n; w++) {
        s->p[w] = (double)parts;
        s->cap[w] = (double)most;
        s->ranks[w] = ctx->pool_ranks ? ctx->pool_ranks[w] : (int)w + 1;
    }
    return 0;
}

static inline void aia_balance_close(struct aia_balance *s)
{
    free(s->p);
    free(s->plan);
    free(s->ring_rows);
    free(s->ring_time);
    free(s->samples);
    free(s->recent);
    free(s->scratch);
    free(s->cap);
    free(s->fixed);
    free(s->wrows);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

/* Worker w, which holds held rows, answered rows of them in compute_s
 * seconds. */
static inline void aia_balance_time(struct aia_balance *s, int w, double held,
                                    double rows, double compute_s)
{
    size_t k = (size_t)fmod(s->samples[w], (double)s->window);
    s->wrows[w] = held;
    s->ring_rows[(size_t)w * s->window + k] = rows;
    s->ring_time[(size_t)w * s->window + k] = compute_s;
    s->samples[w]++;
    s->recent[w]++;
}

/* Workers first..last (pool indexes) as "w" or "w-v", appended at *at
 * within end. */
static inline void aia_balance_range(char **at, char *end, int first, int last)
{
    int n = first == last
                ? snprintf(*at, (size_t)(end - *at), " %d", first)
                : snprintf(*at, (size_t)(end - *at), " %d-%d", first, last);
    if (n > 0)
        *at += (size_t)n < (size_t)(end - *at) ? (size_t)n
                                               : (size_t)(end - *at) - 1;
}

/* The assignment p as runs of workers' ranks: "1: ranks 1-75; 3: ranks
 * 76-100" in buf. */
static inline void aia_balance_describe(const struct aia_balance *s,
                                        const double *p, char *buf, size_t len)
{
    char *at = buf, *end = buf + len;
    buf[0] = '\0';
    /* each value of p, least first, with its workers */
    double v = 0;
    for (;;) {
        double next = INFINITY;
        for (int w = 0; w < s->nworkers; w++)
            if (p[w] > v && p[w] < next)
                next = p[w];
        if (!isfinite(next))
            break;
        v = next;
        int n = snprintf(at, (size_t)(end - at), "%s%g: ranks",
                         at == buf ? "" : "; ", v);
        if (n < 0 || n >= end - at)
            return;
        at += n;
        for (int w = 0; w < s->nworkers; w++) {
            if (p[w] != v ||
                (w > 0 && p[w - 1] == v && s->ranks[w] == s->ranks[w - 1] + 1))
                continue;
            int u = w;
            while (u + 1 < s->nworkers && p[u + 1] == v &&
                   s->ranks[u + 1] == s->ranks[u] + 1)
                u++;
            aia_balance_range(&at, end, s->ranks[w], s->ranks[u]);
        }
    }
}

static inline void aia_balance_note(const struct aia_balance *s)
{
    char list[800], text[1000];
    aia_balance_describe(s, s->p, list, sizeof list);
    snprintf(text, sizeof text, "%.0f plans taken; sub-partitions %s", s->plans,
             list);
    aia_note(s->host, "balance", text);
}

static inline int aia_balance_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median compute time and rows of worker w's window answers whose
 * rows are within 1% of n (scratch: window doubles); 0 with *t and *r
 * set, -1 when fewer than 3 are. */
static inline int aia_balance_median(const struct aia_balance *s, int w,
                                     size_t have, double n, double *scratch,
                                     double *t, double *r)
{
    const double *rows = s->ring_rows + (size_t)w * s->window;
    const double *time = s->ring_time + (size_t)w * s->window;
    size_t m = 0;
    double sum = 0;
    for (size_t k = 0; k < have; k++)
        if (fabs(rows[k] - n) <= 0.01 * n) {
            scratch[m++] = time[k];
            sum += rows[k];
        }
    if (m < 3)
        return -1;
    qsort(scratch, m, sizeof *scratch, aia_balance_by_value);
    *t = m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
    *r = sum / (double)m;
    return 0;
}

/* Coordinator: worker w's time per answer as o + b n, n the rows
 * answered, o a fixed cost of each answer (waking, scheduling) and b the
 * time per row, from medians (a worker descheduled a while on a loaded
 * node must not move the plan): the median time of its answers of the
 * latest size, and of the size before it when the window still holds
 * three, give the line through both; with one size o is that of the
 * latest such line (0 before one), remembered once the older size has
 * left the window.  0 with *o and *b set, or -1 while it has answered fewer
 * than five (or balance_window) since its p changed: the plan after a change
 * waits for times at the new size. */
static inline int aia_balance_model(struct aia_balance *s, int w, double *o,
                                    double *b, double *split)
{
    size_t have =
        s->samples[w] < (double)s->window ? (size_t)s->samples[w] : s->window;
    if (s->recent[w] < (double)(s->window < 5 ? s->window : 5) ||
        !(s->wrows[w] > 0))
        return -1;
    const double *rows = s->ring_rows + (size_t)w * s->window;
    size_t last = (size_t)fmod(s->samples[w] - 1, (double)s->window);
    double n1 = rows[last], t1, r1, t2, r2, n2 = 0;
    if (aia_balance_median(s, w, have, n1, s->scratch, &t1, &r1) < 0)
        return -1;
    /* the latest answer of another size, newest first */
    for (size_t k = 1; k < have && n2 == 0; k++) {
        double n = rows[(last + s->window - k) % s->window];
        if (fabs(n - n1) > 0.01 * n1)
            n2 = n;
    }
    /* one size: the fixed cost of the latest fit through two */
    *o = s->fixed[w] < t1 ? s->fixed[w] : 0;
    *b = (t1 - *o) / r1;
    if (split)
        *split = 0;
    if (n2 > 0 &&
        aia_balance_median(s, w, have, n2, s->scratch, &t2, &r2) == 0) {
        /* a finer split that did not cut the time per answer below
         * balance_threshold of the coarser one's did not pay: the
         * coarser one's count is the most this worker gets */
        if (split && r1 < r2 && t1 > s->threshold * t2)
            *split = floor(s->wrows[w] / r2 + 0.5);
        double slope = (t2 - t1) / (r2 - r1), fixed = t1 - slope * r1;
        if (slope > 0 && fixed >= 0) {
            *b = slope;
            *o = fixed;
            if (split) /* a plan's call: the fit is remembered */
                s->fixed[w] = fixed;
        }
    }
    return *b > 0 ? 0 : -1;
}

/* Coordinator: plan a new assignment, and take it when it predicts a
 * real gain.  Worker i's time per answer at p is o_i + b_i R_i / p; the
 * target T is the least of these at subpartitions (the fastest worker
 * keeps it), and p_i = b_i R_i / max(T - o_i, o_i), rounded: as near T as
 * can be, but never so fine that an answer's compute is below its fixed
 * cost (each further split would add a fixed cost per row cycle and save
 * less than one). */
static inline void aia_balance_plan(struct aia_balance *s)
{
    double target = INFINITY, now = 0, then = 0, o, b, split;
    for (int w = 0; w < s->nworkers; w++)
        if (aia_balance_model(s, w, &o, &b, &split) == 0)
            target = fmin(target, o + b * s->wrows[w] / (double)s->parts);
    if (!isfinite(target))
        return;
    int changed = 0;
    for (int w = 0; w < s->nworkers; w++) {
        double p = s->p[w];
        if (aia_balance_model(s, w, &o, &b, &split) == 0) {
            if (split >= (double)s->parts && split < s->cap[w])
                s->cap[w] = split;
            double most = fmin(fmin((double)s->most, s->wrows[w]), s->cap[w]);
            double c = b * s->wrows[w];
            /* at most 4 times as many as now: times measured on a
             * loaded node are noisy, and a plan is checked by the next */
            p = fmin(fmin(fmax(floor(c / fmax(target - o, o) + 0.5),
                               (double)s->parts),
                          most),
                     4 * s->p[w]);
            /* a change of less than a half is noise, not worth a
             * restarted cycle */
            if (p < 1.5 * s->p[w] && p * 1.5 > s->p[w] && p > s->parts)
                p = s->p[w];
            now = fmax(now, o + c / s->p[w]);
            then = fmax(then, o + c / p);
        }
        s->plan[w] = p;
        changed |= p != s->p[w];
    }
    if (!changed || !(then < s->threshold * now))
        return;
    s->plans++;
    char list[800];
    size_t k = 0;
    list[0] = '\0';
    for (int w = 0; w < s->nworkers; w++)
        if (s->plan[w] != s->p[w] && k < sizeof list - 80) {
            int n;
            if (aia_balance_model(s, w, &o, &b, NULL) == 0)
                n = snprintf(list + k, sizeof list - k,
                             "%s%d: %g->%g (%.3g ms + %.3g us a row)",
                             k ? ", " : "", s->ranks[w], s->p[w], s->plan[w],
                             o * 1e3, b * 1e6);
            else
                n = snprintf(list + k, sizeof list - k, "%s%d: %g->%g",
                             k ? ", " : "", s->ranks[w], s->p[w], s->plan[w]);
            k += n > 0 && (size_t)n < sizeof list - k ? (size_t)n : 0;
        }
    if (k >= sizeof list - 80)
        snprintf(list + k, sizeof list - k, ", ...");
    const struct aia_host *host = s->host;
    if (host && host->log)
        host->log(
            host, AIA_LOG_INFO,
            "balance: plan %.0f: predicted time per answer %.4g s -> %.4g s "
            "(x%.3f); sub-partitions of rank %s",
            s->plans, now, then, then / now, list);
    for (int w = 0; w < s->nworkers; w++)
        if (s->plan[w] != s->p[w])
            s->recent[w] = 0;
    memcpy(s->p, s->plan, (size_t)s->nworkers * sizeof *s->p);
    aia_balance_note(s);
}

/* The end of a round (an update in async mode, where a round's worth is
 * nworkers of them, so that a plan costs O(1) an answer): a plan when one
 * is due. */
static inline void aia_balance_round(struct aia_balance *s, int async)
{
    if (++s->since_plan >=
        (double)s->every * (async ? (double)s->nworkers : 1)) {
        s->since_plan = 0;
        aia_balance_plan(s);
    }
}

/* Checkpoints: the plans, the rounds since the last, then per worker its
 * parts, rows, answers timed (all, and since its parts changed), the most
 * parts a split paid for, the fixed cost of the latest fit, then the
 * windows (rows, then times): aia_balance_len doubles. */
static inline size_t aia_balance_len(const struct aia_balance *s)
{
    return 2 + (size_t)s->nworkers * (6 + 2 * s->window);
}

static inline double *aia_balance_save(const struct aia_balance *s, double *p)
{
    size_t n = (size_t)s->nworkers, nw = n * s->window;
    *p++ = s->plans;
    *p++ = s->since_plan;
    const double *part[] = {s->p,      s->wrows, s->samples,
                            s->recent, s->cap,   s->fixed};
    for (int i = 0; i < 6; i++, p += n)
        memcpy(p, part[i], n * sizeof *p);
    memcpy(p, s->ring_rows, nw * sizeof *p);
    memcpy(p + nw, s->ring_time, nw * sizeof *p);
    return p + 2 * nw;
}

/* Whether v is a whole count from least to most. */
static inline int aia_balance_count(double v, double least, double most)
{
    return v >= least && v <= most && v == floor(v);
}

/* What of worker w's fields at q (aia_balance_save's per-worker arrays,
 * n workers, window answers) is out of bounds: its name, and its value in
 * *v; NULL when none is.  Every field is checked before any is used: a
 * negative count of answers timed was once an index into the windows
 * (written, and read by aia_balance_median, out of bounds). */
static inline const char *aia_balance_worker_bad(const struct aia_balance *s,
                                                 const double *q, size_t w,
                                                 double *v)
{
    size_t n = (size_t)s->nworkers, win = s->window;
    const double exact = AIA_EXACT_BELOW;
    double parts = q[w], rows = q[n + w], timed = q[2 * n + w],
           recent = q[3 * n + w], cap = q[4 * n + w], fixed = q[5 * n + w];
    const double *ring_rows = q + 6 * n + w * win;
    const double *ring_time = q + 6 * n + n * win + w * win;
    if (!aia_balance_count(rows, 0, exact - 1))
        return *v = rows, "rows";
    if (!aia_balance_count(parts, (double)s->parts, (double)s->most) ||
        (rows > 0 && parts > rows))
        return *v = parts, "sub-partitions";
    if (!aia_balance_count(timed, 0, exact - 1))
        return *v = timed, "answers timed";
    if (!aia_balance_count(recent, 0, timed))
        return *v = recent, "answers timed since its sub-partitions changed";
    if (!aia_balance_count(cap, (double)s->parts, (double)s->most))
        return *v = cap, "most sub-partitions a split paid for";
    if (!(fixed >= 0 && isfinite(fixed)))
        return *v = fixed, "fixed cost of an answer";
    /* the answers in its window have rows (at most its own), the slots
     * not yet written none */
    for (size_t k = 0; k < win; k++) {
        int written = (double)k < timed;
        if (written ? !(ring_rows[k] >= 1 && ring_rows[k] <= rows)
                    : ring_rows[k] != 0)
            return *v = ring_rows[k], "rows of an answer timed";
        if (written ? !(ring_time[k] >= 0 && isfinite(ring_time[k]))
                    : ring_time[k] != 0)
            return *v = ring_time[k], "time of an answer";
    }
    return NULL;
}

/* 0 when the aia_balance_len doubles at p are a state of this balance
 * (every field within its bounds); else -1 with err naming the field,
 * and the worker. */
static inline int aia_balance_bad(const struct aia_balance *s, const double *p,
                                  struct aia_error *err)
{
    size_t n = (size_t)s->nworkers;
    const double exact = AIA_EXACT_BELOW;
    if (!aia_balance_count(p[0], 0, exact - 1))
        return aia_seterr(err, "damaged: the balance's count of plans is %g: "
                               "out of bounds",
                          p[0]);
    /* a plan every `every` rounds, or every * nworkers updates */
    if (!aia_balance_count(p[1], 0, (double)s->every * (double)n))
        return aia_seterr(err, "damaged: the balance's rounds since its last "
                               "plan are %g: out of bounds (at most %g)",
                          p[1], (double)s->every * (double)n);
    for (size_t w = 0; w < n; w++) {
        double v = 0;
        const char *bad = aia_balance_worker_bad(s, p + 2, w, &v);
        if (bad && !strcmp(bad, "sub-partitions"))
            return aia_seterr(err,
                              "damaged: the balance's sub-partitions of "
                              "worker %zu are %g (expected %zu to %zu, at "
                              "most its rows): not this job's balance",
                              w, v, s->parts, s->most);
        if (bad)
            return aia_seterr(err,
                              "damaged: the balance's %s of worker %zu is "
                              "%g: out of bounds",
                              bad, w, v);
    }
    return 0;
}

/* Read back what aia_balance_save wrote (aia_balance_bad first); returns
 * the end of what it read. */
static inline const double *aia_balance_load(struct aia_balance *s,
                                             const double *p)
{
    size_t n = (size_t)s->nworkers, nw = n * s->window;
    s->plans = *p++;
    s->since_plan = *p++;
    double *part[] = {s->p, s->wrows, s->samples, s->recent, s->cap, s->fixed};
    for (int i = 0; i < 6; i++, p += n)
        memcpy(part[i], p, n * sizeof *p);
    memcpy(s->ring_rows, p, nw * sizeof *p);
    memcpy(s->ring_time, p + nw, nw * sizeof *p);
    aia_balance_note(s);
    return p + 2 * nw;
}

#ifdef __cplusplus
}
#endif

#endif
