/* simq.c - the simulated event queue: time order, ties by worker. */
#include <config.h>

#include <stdlib.h>

#include "sim/simq.h"
#include "tap.h"

int main(void)
{
    plan(0);
    struct simq q;
    struct simq_event ev;
    simq_init(&q);
    ok(simq_peek(&q) == NULL && simq_pop(&q, &ev) < 0,
       "an empty queue has no event");
    /* many events, times from a small set so that ties are common */
    srand(7);
    int n = 5000, sorted = 1, count = 0;
    for (int i = 0; i < n; i++)
        simq_push(&q, (struct simq_event){(double)(rand() % 50) * 0.25,
                                          rand() % 1000, (uint64_t)i});
    is_int((long long)q.n, n, "all %d events are queued", n);
    struct simq_event prev = {-1, -1, 0};
    while (simq_pop(&q, &ev) == 0) {
        sorted &= prev.t < ev.t || (prev.t == ev.t && prev.w <= ev.w);
        prev = ev;
        count++;
    }
    ok(sorted, "they come out by time, equal times by worker index");
    is_int(count, n, "each exactly once");
    simq_push(&q, (struct simq_event){2.0, 5, 1});
    simq_push(&q, (struct simq_event){1.0, 9, 2});
    simq_push(&q, (struct simq_event){1.0, 3, 3});
    ok(simq_peek(&q)->w == 3 && simq_peek(&q)->round == 3,
       "peek shows the earliest, the lower worker of a tie");
    simq_pop(&q, &ev);
    simq_pop(&q, &ev);
    ok(ev.w == 9 && q.n == 1, "then the other of the tie");
    simq_free(&q);
    ok(q.n == 0 && simq_peek(&q) == NULL, "a freed queue is empty");
    return done_testing();
}
