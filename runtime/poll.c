/* poll.c - test, yield, then sleep in growing steps. */
#include <config.h>

#include "poll.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>

#include "util.h"

/* Yield for this long before sleeping: answers that come quickly are
 * picked up within a few microseconds. */
#define POLL_YIELD_S 50e-6
/* Test without yielding for the first microseconds: an answer due at once
 * is picked up without the context switch every sched_yield costs when
 * another process waits for the core (bench/: one per failed test). */
#define POLL_SPIN_S 20e-6
/* Then sleep at most this fraction of the time waited so far, so that a
 * message is noticed late by about 1/32 of the wait at worst, and at most
 * 100 us: bench/ measured the protocol's rounds within 1.1x of plain MPI
 * with these, and 1.2 to 5x with 1/8 and 1 ms. */
#define POLL_SLEEP_SHARE (1.0 / 32)
#define POLL_MIN_SLEEP 2e-6
#define POLL_MAX_SLEEP 100e-6

volatile sig_atomic_t poll_signal;

void poll_setup(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

static void on_signal(int signo)
{
    poll_signal = signo;
}

void poll_ignore_signals(void)
{
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
}

void poll_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* Slurm's --signal=B:USR1@SECONDS: time is running out */
    sigaction(SIGUSR1, &sa, NULL);
}

struct some {
    int n;
    MPI_Request *reqs;
    int *idx;
    MPI_Status *st;
};

static int test_some(void *ctx)
{
    struct some *a = ctx;
    int count = 0;
    if (MPI_Testsome(a->n, a->reqs, &count, a->idx, a->st) != MPI_SUCCESS)
        return -1;
    if (count == MPI_UNDEFINED)
        return POLL_NOTHING; /* every request is inactive */
    return count;
}

int poll_some(int n, MPI_Request *reqs, int *idx, MPI_Status *st,
              double deadline)
{
    struct some a = {n, reqs, idx, st};
    return poll_wait(test_some, &a, deadline);
}

int poll_wait(int (*test)(void *ctx), void *ctx, double deadline)
{
    double start = 0;
    for (;;) {
        int got = test(ctx);
        if (got == POLL_NOTHING)
            return 0; /* nothing can come */
        if (got != 0)
            return got;
        double now = util_now();
        if (now >= deadline || poll_signal)
            return 0;
        if (start == 0)
            start = now;
        if (now - start < POLL_SPIN_S)
            continue;
        if (now - start < POLL_YIELD_S) {
            sched_yield();
            continue;
        }
        double step = fmin(fmax(POLL_SLEEP_SHARE * (now - start),
                                POLL_MIN_SLEEP),
                           POLL_MAX_SLEEP);
        util_sleep(fmin(step, deadline - now));
    }
}
