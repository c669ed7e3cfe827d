/* watchdog.c - a bound on the set-up: a plugin's create or open that
 * never returns would leave every other rank waiting in a collective
 * forever.  A thread waits for the set-up's end; past pool.setup_timeout
 * the rank stuck in its own step names it and aborts the job, and a rank
 * that waits for the others aborts it a little later, in case the stuck
 * one cannot.
 */
#include <config.h>

#include "watchdog.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <time.h>

#include "core/host.h"
#include "session/setup.h"

/* Seconds a rank that waits for the others gives the stuck one to say
 * why before it aborts the job itself. */
#define WATCHDOG_GRACE_S 3

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int running, done;
static double bound;
static const char *phase;

static void *watch(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)bound;
    until.tv_nsec += (long)((bound - (double)(time_t)bound) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&cv, &mu, &until);
    const char *what = phase;
    int over = !done;
    pthread_mutex_unlock(&mu);
    if (!over)
        return NULL;
    if (what) {
        host_error("set-up did not finish within %g s (pool.setup_timeout): "
                   "this rank is still %s; aborting the job",
                   bound, what);
    } else {
        struct timespec grace = {WATCHDOG_GRACE_S, 0};
        nanosleep(&grace, NULL);
        host_error("set-up did not finish within %g s (pool.setup_timeout): "
                   "waited for the other ranks; aborting the job",
                   bound);
    }
    MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    return NULL;
}

int watchdog_start(double seconds)
{
    if (seconds <= 0 || running)
        return 0;
    bound = seconds;
    done = 0;
    if (pthread_create(&thread, NULL, watch, NULL) != 0)
        return -1;
    running = 1;
    return 0;
}

void watchdog_phase(const char *what)
{
    pthread_mutex_lock(&mu);
    phase = what;
    pthread_mutex_unlock(&mu);
}

void watchdog_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(thread, NULL);
    running = 0;
}
