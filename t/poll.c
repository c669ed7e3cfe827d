/* poll.c - pool.poll: auto's watch for outside load (runtime/poll.c).
 * A thread on this rank's core that runs while the rank spins makes auto
 * stop spinning; one that runs only while the rank yields (its own
 * choice, after the spin) does not, and auto spins again.  On a node
 * with fewer cores than ranks, a tree worker's wait for its next query
 * (poll_expect_yield) yields instead of sleeping, until yields give the
 * core away for long; other waits sleep there as before.
 *
 * Run by the test harness without arguments, it starts itself on 1 rank
 * under $MPIRUN (poll_node counts the node's ranks with MPI). */
#include <config.h>

#define _GNU_SOURCE 1 /* sched_setaffinity, CPU_SET */

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mpi/poll.h"
#include "core/util.h"
#include "selflaunch.h"
#include "tap.h"

/* The other thread on the core: runs busy for burst seconds each time it
 * is let go. */
static sem_t go;
static volatile double burst;
static volatile int quit;

static void *other(void *arg)
{
    (void)arg;
    for (;;) {
        sem_wait(&go);
        if (quit)
            return NULL;
        double until = util_now() + burst;
        while (util_now() < until)
            ;
    }
}

/* A wait's test: the message comes at start + arrive; the other thread is
 * let go once, at start + release (never when release < 0). */
struct wait {
    double start, arrive, release;
    int released;
    double last; /* the previous test */
};

/* The longest time between two tests of a wait since it was reset: this
 * thread was off its core that long. */
static double gap;

static int test(void *ctx)
{
    struct wait *w = ctx;
    double now = util_now();
    if (w->last > 0 && now - w->last > gap)
        gap = now - w->last;
    w->last = now;
    if (w->release >= 0 && !w->released && now >= w->start + w->release) {
        w->released = 1;
        sem_post(&go);
    }
    return now >= w->start + w->arrive;
}

static void wait_once(double expect, double arrive, double release)
{
    struct wait w = {util_now(), arrive, release, 0, 0};
    poll_expect(w.start + expect);
    poll_wait(test, &w, w.start + 1);
    poll_expect_clear();
}

/* This thread's voluntary context switches (its sleeps) during n waits
 * for a message 3 ms away, expected by poll_expect_yield (yielding) or
 * poll_expect; the other thread let go 0.5 ms into each when release. */
static long sleeps_in(int n, int yielding, int release)
{
    struct rusage a, b;
    getrusage(RUSAGE_THREAD, &a);
    for (int i = 0; i < n; i++) {
        struct wait w = {util_now(), 3e-3, release ? 0.5e-3 : -1, 0, 0};
        if (yielding)
            poll_expect_yield(w.start + 5e-3);
        else
            poll_expect(w.start + 5e-3);
        poll_wait(test, &w, w.start + 1);
        poll_expect_clear();
    }
    getrusage(RUSAGE_THREAD, &b);
    return b.ru_nvcsw - a.ru_nvcsw;
}

/* sleeps_in(n, yielding, 0) on a fresh configuration (poll_configure
 * starts with no measure of load), made again up to 5 times while
 * another process held this core: more than 1 ms between two tests, or
 * for yielding waits a slow yield; *busy: the last try was disturbed
 * too. */
static long quiet_sleeps(int n, int yielding, int *busy)
{
    long slept = 0;
    for (int tries = 0; tries < 5; tries++) {
        poll_configure(POLL_AUTO, 1);
        gap = 0;
        slept = sleeps_in(n, yielding, 0);
        *busy = gap > 1e-3 || (yielding && poll_yield_slow() > 0);
        if (!*busy)
            break;
    }
    return slept;
}

int main(int argc, char **argv)
{
    int launched = selflaunch(argc, argv, 1);
    if (launched >= 0)
        return launched;
    MPI_Init(&argc, &argv);
    poll_node();
    if (!poll_configure(POLL_AUTO, 1)) {
        printf("1..0 # SKIP auto does not spin here: %s\n", poll_choice());
        MPI_Finalize();
        return 0;
    }
    /* this thread and the other on one core (the first this rank may
     * use), so that whenever both can run, one waits */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        bail_out("sched_getaffinity failed");
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
        cpu++;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        printf("1..0 # SKIP cannot bind to core %d\n", cpu);
        MPI_Finalize();
        return 0;
    }
    pthread_t t;
    sem_init(&go, 0, 0);
    if (pthread_create(&t, NULL, other, NULL) != 0)
        bail_out("pthread_create failed");
    plan(9);

    ok(poll_contended() < 0.25, "a quiet start: auto spins (%.3f)",
       poll_contended());

    /* the other thread runs 10 ms from 1 ms into each 15 ms spin: it
     * preempts the spinning thread */
    burst = 10e-3;
    for (int i = 0; i < 4; i++)
        wait_once(20e-3, 15e-3, 1e-3);
    double loaded = poll_contended();
    ok(loaded > 0.25, "a thread taking the core during the spins stops "
                      "them (share of preempted spins %.3f)",
       loaded);

    /* now the other thread runs only during the yields that follow the
     * spin's first 20 us, when auto does not spin (it is let go at 25 us,
     * runs 200 us); a wait that spins gets its message at once */
    burst = 200e-6;
    int spun = 0;
    for (int i = 0; i < 120; i++) {
        int spin = poll_contended() < 0.25;
        spun += spin;
        if (spin)
            wait_once(1e-3, 0, -1);
        else
            wait_once(1e-3, 60e-6, 25e-6);
    }
    ok(poll_contended() < 0.25,
       "yields that give the core away are not taken for outside load: "
       "the share decays (%.3f, from %.3f)",
       poll_contended(), loaded);
    ok(spun > 0, "and auto spins again (%d of 120 waits)", spun);

    /* a node with more ranks than cores: auto sleeps, but a tree
     * worker yields for its next query */
    poll_node_counts(3, 2);
    ok(!poll_configure(POLL_AUTO, 1), "3 ranks on 2 cores: auto does not "
                                      "spin (%s)",
       poll_choice());
    /* another process that takes this core for long hides what a wait
     * would do: such a try is made again, and the check skips if every
     * try was disturbed */
    int busy;
    long slept = quiet_sleeps(5, 0, &busy);
    if (busy)
        ok(1, "# SKIP this core was busy (%.1f ms away)", gap * 1e3);
    else
        ok(slept >= 10, "waits for a message 3 ms away sleep (%ld sleeps "
                        "in 5 waits)",
           slept);
    long yielded = quiet_sleeps(5, 1, &busy);
    if (busy)
        ok(1, "# SKIP this core was busy (%.1f ms away, share of slow "
              "yields %.3f)",
           gap * 1e3, poll_yield_slow());
    else
        ok(yielded <= 2, "a tree worker's wait for its next query yields "
                         "instead (%ld sleeps in 5 waits)",
           yielded);
    /* the other thread takes the core for 2 ms at each yield */
    burst = 2e-3;
    sleeps_in(4, 1, 1);
    ok(poll_yield_slow() > 0.25, "yields that give the core away for "
                                 "long stop the yielding (share %.3f)",
       poll_yield_slow());
    util_sleep(5e-3); /* the last burst ends */
    int tries = 0;
    do {
        gap = 0;
        slept = sleeps_in(3, 1, 0);
    } while (gap > 1e-3 && poll_yield_slow() > 0.25 && ++tries < 5);
    if (gap > 1e-3)
        ok(1, "# SKIP this core was busy (%.1f ms away)", gap * 1e3);
    else
        ok(slept >= 6, "and the same waits sleep again (%ld sleeps in 3 "
                       "waits)",
           slept);

    quit = 1;
    sem_post(&go);
    pthread_join(t, NULL);
    MPI_Finalize();
    return done_testing();
}
