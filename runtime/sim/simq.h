/* simq.h - the event queue of a simulated run: a binary heap of answer
 * arrivals keyed by virtual time, ties broken by worker index, so that
 * the order of events never depends on anything but the times drawn.
 */
#ifndef AIARUN_SIMQ_H
#define AIARUN_SIMQ_H

#include <stddef.h>
#include <stdint.h>

struct simq_event {
    double t;       /* virtual seconds */
    int w;          /* the worker */
    uint64_t round; /* the round of the query it answers */
};

struct simq {
    struct simq_event *e;
    size_t n, cap;
};

/* An empty queue; simq_free releases it. */
void simq_init(struct simq *q);
void simq_free(struct simq *q);

/* Add an event; 0, or -1 when out of memory (the queue is unchanged). */
int simq_push(struct simq *q, struct simq_event ev);

/* The earliest event (the lowest worker among equal times), or NULL when
 * the queue is empty; it stays queued. */
const struct simq_event *simq_peek(const struct simq *q);

/* Remove the earliest event into *ev; 0, or -1 when the queue is empty. */
int simq_pop(struct simq *q, struct simq_event *ev);

#endif
