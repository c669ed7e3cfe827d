/* poll.c - pool.poll: auto's watch for outside load (runtime/poll.c).
 * A thread on this rank's core that runs while the rank spins makes auto
 * stop spinning; one that runs only while the rank yields (its own
 * choice, after the spin) does not, and auto spins again.
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
#include <unistd.h>

#include "../runtime/poll.h"
#include "../runtime/util.h"
#include "tap.h"

#define UNDER "--under-mpirun"

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
};

static int test(void *ctx)
{
    struct wait *w = ctx;
    double now = util_now();
    if (w->release >= 0 && !w->released && now >= w->start + w->release) {
        w->released = 1;
        sem_post(&go);
    }
    return now >= w->start + w->arrive;
}

static void wait_once(double expect, double arrive, double release)
{
    struct wait w = {util_now(), arrive, release, 0};
    poll_expect(w.start + expect);
    poll_wait(test, &w, w.start + 1);
    poll_expect_clear();
}

static int launch(const char *self)
{
    if (getuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    if (!getenv("MPIRUN"))
        setenv("MPIRUN", "mpirun", 1);
    execl("/bin/sh", "sh", "-c",
          "exec timeout -k 5 120 \"$MPIRUN\" -np 1 --oversubscribe "
          "${AIA_MPIRUN_FLAGS:-} \"$0\" " UNDER,
          self, (char *)NULL);
    printf("1..0 # SKIP cannot run /bin/sh\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], UNDER) != 0)
        return launch(argv[0]);
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
    plan(4);

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

    quit = 1;
    sem_post(&go);
    pthread_join(t, NULL);
    MPI_Finalize();
    return done_testing();
}
