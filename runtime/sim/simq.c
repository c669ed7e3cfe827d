/* simq.c - a binary min-heap of simulated events, ordered by (time,
 * worker): the order in which a simulated coordinator takes answers. */
#include <config.h>

#include "simq.h"

#include <stdlib.h>

static int before(const struct simq_event *a, const struct simq_event *b)
{
    return a->t < b->t || (a->t == b->t && a->w < b->w);
}

void simq_init(struct simq *q)
{
    q->e = NULL;
    q->n = q->cap = 0;
}

void simq_free(struct simq *q)
{
    free(q->e);
    simq_init(q);
}

int simq_push(struct simq *q, struct simq_event ev)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct simq_event *e = realloc(q->e, cap * sizeof *e);
        if (!e)
            return -1;
        q->e = e;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&ev, &q->e[up]))
            break;
        q->e[i] = q->e[up];
        i = up;
    }
    q->e[i] = ev;
    return 0;
}

const struct simq_event *simq_peek(const struct simq *q)
{
    return q->n ? &q->e[0] : NULL;
}

int simq_pop(struct simq *q, struct simq_event *ev)
{
    if (!q->n)
        return -1;
    *ev = q->e[0];
    size_t n = --q->n;
    if (!n)
        return 0;
    struct simq_event last = q->e[n];
    /* Floyd's way: the hole left at the top goes down to a leaf by the
     * earlier child, one comparison a level, and the last event climbs
     * from there (a step or two: it was a leaf) */
    size_t i = 0, c;
    while ((c = 2 * i + 1) < n) {
        if (c + 1 < n && before(&q->e[c + 1], &q->e[c]))
            c++;
        q->e[i] = q->e[c];
        i = c;
    }
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&last, &q->e[up]))
            break;
        q->e[i] = q->e[up];
        i = up;
    }
    q->e[i] = last;
    return 0;
}
