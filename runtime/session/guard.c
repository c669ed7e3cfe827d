/* guard.c - signals into a flag, and a watchdog over plugin calls.
 *
 * The watchdog's thread does not time each call: the calling thread
 * only counts calls and names the one it is in, and the thread samples
 * that count a few times per bound.  A count that has not moved for the
 * bound while a call is named is a call that has not returned.
 */
#include <config.h>

#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

volatile sig_atomic_t guard_signal;

static void on_signal(int signo)
{
    guard_signal = signo;
}

void guard_catch_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* Slurm's --signal=B:USR1@SECONDS: time is running out; never fatal */
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void guard_ignore_signals(void)
{
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int running, done;
static double bound;
static void (*on_expiry)(const char *, int, double);

/* The calling thread's side: calls counted, the current one named. */
static unsigned long calls;
static const char *call_what;
static int call_rank;

void guard_call(const char *what, int rank)
{
    __atomic_store_n(&call_rank, rank, __ATOMIC_RELAXED);
    __atomic_store_n(&call_what, what, __ATOMIC_RELAXED);
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELEASE);
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *watch(void *arg)
{
    (void)arg;
    /* sampled 8 times a bound, at most every second: a hang is named
     * between bound and bound + 1 s after its call began */
    double period = bound / 8 < 1 ? bound / 8 : 1;
    unsigned long seen = __atomic_load_n(&calls, __ATOMIC_ACQUIRE);
    double since = mono();
    pthread_mutex_lock(&mu);
    while (!done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double ns = (double)until.tv_nsec + period * 1e9;
        until.tv_sec += (time_t)(ns / 1e9);
        until.tv_nsec = (long)(ns - 1e9 * (double)(time_t)(ns / 1e9));
        int rc = 0;
        while (!done && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&cv, &mu, &until);
        if (done)
            break;
        unsigned long now_calls = __atomic_load_n(&calls, __ATOMIC_ACQUIRE);
        const char *what = __atomic_load_n(&call_what, __ATOMIC_RELAXED);
        int rank = __atomic_load_n(&call_rank, __ATOMIC_RELAXED);
        if (now_calls != seen || !what) {
            seen = now_calls;
            since = mono();
            continue;
        }
        if (mono() - since >= bound) {
            pthread_mutex_unlock(&mu);
            on_expiry(what, rank, bound);
            return NULL; /* not reached: on_expiry ends the process */
        }
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int guard_watch(double seconds,
                void (*expired)(const char *what, int rank, double seconds))
{
    if (seconds <= 0 || running)
        return 0;
    bound = seconds;
    on_expiry = expired;
    done = 0;
    if (pthread_create(&thread, NULL, watch, NULL) != 0)
        return -1;
    running = 1;
    return 0;
}

void guard_unwatch(void)
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
