/* average_state.c - the average plugin's checkpoints. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "average.h"

/* Checkpoints.  memory: latest saves the query and every worker's model
 * with its weight; memory: delta saves the query alone: after a restart
 * the workers no longer remember what they last sent, so their first
 * answers are whole models again, and the weighted sum starts anew from
 * them (the query stays until one arrives).  Preemption adds the scores,
 * the replacement counts, the best model and the rounds, so that the
 * schedule and the workers' restarts go on where they were.  Layout:
 *
 *     x, models, w, total                         doubles (latest)
 *     score, replaced, best, rounds               doubles (preemption)
 *     sent_round, round                           doubles (decay)
 *     heard, scored                               bytes
 *     steps, running sums                         doubles (async mode)
 *
 * In async mode the models are a running table (s->running): the steps
 * of its entries and its running sums (aia_table_save_sums) follow, so
 * that a resumed run goes on with the same bits; a state without them
 * loads too, its sums summed afresh.  They follow bytes, so they are
 * copied through an aligned buffer. */
struct layout {
    size_t doubles, bytes, tail;
};

static struct layout layout(const struct average *s)
{
    size_t n = (size_t)s->nworkers;
    struct layout l = {s->dim, 0, 0};
    if (s->memory == MEM_DELTA)
        return l;
    l.doubles += n * s->dim + n + 1;
    l.bytes = n;
    if (PREEMPTING(s)) {
        l.doubles += 2 * n + s->dim + 1;
        l.bytes += n;
    }
    if (s->scheme == SCHEME_DECAY)
        l.doubles += n + 1;
    if (s->running)
        l.tail = n + aia_table_sums_len(&s->table);
    return l;
}

size_t average_state_size(void *state)
{
    struct layout l = layout(state);
    return (l.doubles + l.tail) * sizeof(double) + l.bytes;
}

/* Copy len bytes between the state and the buffer at *at, in the
 * direction out says, and move *at on. */
static void move(unsigned char **at, void *field, size_t len, int out)
{
    if (out)
        memcpy(*at, field, len);
    else
        memcpy(field, *at, len);
    *at += len;
}

static void transfer(struct average *s, unsigned char *at, int out)
{
    size_t n = (size_t)s->nworkers, d = s->dim * sizeof(double);
    move(&at, s->x, d, out);
    if (s->memory == MEM_DELTA)
        return;
    double rounds = (double)s->rounds;
    move(&at, s->models, n * d, out);
    move(&at, s->w, n * sizeof(double), out);
    move(&at, &s->total, sizeof(double), out);
    if (PREEMPTING(s)) {
        move(&at, s->score, n * sizeof(double), out);
        move(&at, s->replaced, n * sizeof(double), out);
        move(&at, s->best, d, out);
        move(&at, &rounds, sizeof(double), out);
        s->rounds = (uint64_t)rounds;
    }
    if (s->scheme == SCHEME_DECAY) {
        move(&at, s->sent_round, n * sizeof(double), out);
        move(&at, &s->round, sizeof(double), out);
    }
    move(&at, s->heard, n, out);
    if (PREEMPTING(s))
        move(&at, s->scored, n, out);
}

int average_save(void *state, void *buf, struct aia_error *err)
{
    struct average *s = state;
    struct layout l = layout(s);
    transfer(s, buf, 1);
    if (!l.tail)
        return 0;
    size_t n = (size_t)s->nworkers;
    double *t = malloc(l.tail * sizeof *t);
    if (!t)
        return aia_seterr(err, "out of memory for the table's sums");
    for (size_t i = 0; i < n; i++)
        t[i] = (double)s->table.when[i];
    aia_table_save_sums(&s->table, t + n);
    memcpy((unsigned char *)buf + l.doubles * sizeof(double) + l.bytes, t,
           l.tail * sizeof *t);
    free(t);
    return 0;
}

/* The running table's saved steps and sums at tail (l.tail doubles),
 * checked against the weights and the workers heard from in the state
 * at buf before anything is read: NULL, or what is wrong. */
static const char *tail_bad(const struct average *s, const struct layout *l,
                            const unsigned char *buf, const double *tail)
{
    size_t n = (size_t)s->nworkers;
    const unsigned char *heard = buf + l->doubles * sizeof(double);
    const unsigned char *w = buf + (s->dim + n * s->dim) * sizeof(double);
    double *rows = malloc(n * sizeof *rows);
    if (!rows)
        return "out of memory";
    for (size_t i = 0; i < n; i++) {
        double wi;
        memcpy(&wi, w + i * sizeof wi, sizeof wi);
        rows[i] = heard[i] ? wi : 0; /* as average_resum weighs them */
        if (!(tail[i] >= 0 && tail[i] < AIA_EXACT_BELOW &&
              tail[i] == floor(tail[i]))) {
            free(rows);
            return "a step that is no count of steps";
        }
    }
    const char *bad = aia_table_sums_bad(&s->table, rows, tail, tail + n);
    free(rows);
    return bad;
}

/* The double at *at, moved on (the state holds bytes too: read through
 * memcpy). */
static double next(const unsigned char **at)
{
    double v;
    memcpy(&v, *at, sizeof v);
    *at += sizeof v;
    return v;
}

/* What in the state at buf (as transfer lays it out) is out of bounds:
 * its name, with its index in *i and its value in *v; NULL when nothing
 * is.  Every field is checked before any is used (the rounds become a
 * uint64_t, the flags index nothing but must be 0 or 1). */
static const char *fields_bad(const struct average *s, const unsigned char *at,
                              size_t *i, double *v)
{
    size_t n = (size_t)s->nworkers, d = s->dim;
    const double exact = AIA_EXACT_BELOW;
    *i = 0;
    for (*i = 0; *i < d; ++*i)
        if (!isfinite(*v = next(&at)))
            return "iterate";
    if (s->memory == MEM_DELTA)
        return NULL;
    for (*i = 0; *i < n * d; ++*i)
        if (!isfinite(*v = next(&at)))
            return "workers' models";
    for (*i = 0; *i < n; ++*i)
        if (!((*v = next(&at)) >= 0 && isfinite(*v)))
            return "weight";
    *i = 0;
    if (!((*v = next(&at)) >= 0 && isfinite(*v)))
        return "total weight";
    if (PREEMPTING(s)) {
        for (*i = 0; *i < n; ++*i)
            if (isnan(*v = next(&at))) /* a loss, infinite when unknown */
                return "score";
        for (*i = 0; *i < n; ++*i)
            if (!((*v = next(&at)) >= 0 && *v < exact && *v == floor(*v)))
                return "count of replacements";
        for (*i = 0; *i < d; ++*i)
            if (!isfinite(*v = next(&at)))
                return "best model";
        *i = 0;
        if (!((*v = next(&at)) >= 0 && *v < exact && *v == floor(*v)))
            return "count of rounds";
    }
    if (s->scheme == SCHEME_DECAY) {
        for (*i = 0; *i < n; ++*i)
            if (!((*v = next(&at)) >= 0 && *v < exact && *v == floor(*v)))
                return "round a model answered";
        *i = 0;
        if (!((*v = next(&at)) >= 0 && *v < exact && *v == floor(*v)))
            return "latest round";
    }
    for (size_t k = 0; k < (PREEMPTING(s) ? 2 : 1) * n; k++)
        if (at[k] > 1)
            return *i = k % n, *v = at[k], k < n ? "heard flag" : "scored flag";
    return NULL;
}

int average_load(void *state, const void *buf, size_t len,
                 struct aia_error *err)
{
    struct average *s = state;
    struct layout l = layout(s);
    size_t full = average_state_size(state);
    size_t bare = full - l.tail * sizeof(double);
    int with = aia_state_len_sums(len, full, bare, err);
    if (with < 0)
        return -1;
    size_t at;
    double v;
    const char *field = fields_bad(s, buf, &at, &v);
    if (field)
        return aia_seterr(err, "damaged: its %s (%zu) is %g: out of bounds",
                          field, at, v);
    double *tail = NULL;
    if (with) {
        if (!(tail = malloc(l.tail * sizeof *tail)))
            return aia_seterr(err, "out of memory for the table's sums");
        memcpy(tail, (const unsigned char *)buf + bare, l.tail * sizeof *tail);
        const char *bad = tail_bad(s, &l, buf, tail);
        if (bad) {
            free(tail);
            return aia_seterr(err, "the table's running sums: %s", bad);
        }
    }
    transfer(s, (unsigned char *)(uintptr_t)buf, 0);
    if (s->memory == MEM_DELTA) {
        size_t n = (size_t)s->nworkers;
        memset(s->sum, 0, s->dim * sizeof *s->sum);
        memset(s->w, 0, n * sizeof *s->w);
        memset(s->heard, 0, n);
        s->total = 0;
    } else if (s->running) {
        for (size_t i = 0; tail && i < (size_t)s->nworkers; i++)
            s->table.when[i] = (uint64_t)tail[i];
        average_resum(s);
        if (tail)
            aia_table_load_sums(&s->table, tail + s->nworkers);
    }
    free(tail);
    return 0;
}
