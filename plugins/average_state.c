/* average_state.c - the average plugin's checkpoints. */
#include <config.h>

#include <stdint.h>
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
 */
struct layout {
    size_t doubles, bytes;
};

static struct layout layout(const struct average *s)
{
    size_t n = (size_t)s->nworkers;
    struct layout l = {s->dim, 0};
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
    return l;
}

size_t average_state_size(void *state)
{
    struct layout l = layout(state);
    return l.doubles * sizeof(double) + l.bytes;
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
    (void)err;
    transfer(state, buf, 1);
    return 0;
}

int average_load(void *state, const void *buf, size_t len,
                 struct aia_error *err)
{
    struct average *s = state;
    if (len != average_state_size(state))
        return aia_seterr(err, "a state of %zu bytes, expected %zu", len,
                          average_state_size(state));
    transfer(s, (unsigned char *)(uintptr_t)buf, 0);
    if (s->memory == MEM_DELTA) {
        size_t n = (size_t)s->nworkers;
        memset(s->sum, 0, s->dim * sizeof *s->sum);
        memset(s->w, 0, n * sizeof *s->w);
        memset(s->heard, 0, n);
        s->total = 0;
    } else if (s->running) {
        average_resum(s);
    }
    return 0;
}
