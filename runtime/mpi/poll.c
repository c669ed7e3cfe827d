/* poll.c - test, yield, then sleep in growing steps; test without
 * sleeping while a message is expected, where the node has the cores,
 * and where it has not, let a tree worker yield for its next query. */
#include <config.h>

#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */

#include "poll.h"

#include <math.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bell.h"
#include "core/util.h"

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

/* At most this long a wait tests without sleeping for a message that is
 * expected: an estimate far off (a straggler's answer) would otherwise
 * hold a core for nothing. */
#define POLL_EXPECT_MAX 20e-3


static int node_ranks, node_cores; /* poll_node's count; 0: unknown */
static int spin_ok;                /* poll_configure's choice */
static int spin_auto;              /* auto: spin_ok unless contended */
/* auto where the node has fewer cores than ranks: a tree worker yields,
 * not sleeps, while its next query is expected (poll_expect_yield, until
 * yield_until), unless yields are slow.  Measured on 2 cores with 9
 * ranks: a binary tree over 8 workers took 83-105 us a round with its
 * workers asleep between queries, 60-64 us with them yielding (a woken
 * rank waits for a core; a yielding one is already in line); the same
 * for a star's workers and coordinator made 1,000 doubles to 4 workers
 * 1.2x slower (they take the cycles the coordinator needs).  A yield
 * that gives the core to another process for longer than POLL_YIELD_SLOW
 * says the cores are taken by work that is not waiting: there the rank
 * sleeps, and its wake-up preempts that work (2 busy processes beside the
 * tree: 11.2 ms a round sleeping, 14.3 ms yielding without this check,
 * 11.5 ms with it). */
static int yield_ok;
static double yield_until;
static double yield_slow;   /* share of yielding waits with a slow yield */
static int yield_waiting;   /* this wait yields past POLL_YIELD_S */
static int yield_was_slow;  /* and one of its yields was slow */
#define POLL_YIELD_SLOW 200e-6
static double spin_until;          /* poll_expect's window */
/* auto: a moving share of the spins (the stretches of testing without
 * sleeping while a message is expected) in which this thread was
 * preempted: getrusage's involuntary context switches, read when a spin
 * starts and when it ends, before any sched_yield (a yield that gives
 * the core away counts as involuntary too, so a count across the whole
 * wait would take every long wait for a preempted one).  A node whose
 * cores are taken by other work preempts a spinning rank, which then
 * holds up the very rank it waits for; a sleeping one is woken with the
 * scheduler's favour.  Measured on 2 cores at a load average of 20-30: a
 * round of 1e5 doubles with 1 worker took 10-18x longer spinning. */
static double contended;
static long spin_nivcsw = -1; /* at the start of the spin sampled; -1: none */
static double next_look; /* the next sample, at most every POLL_LOOK_S */
#define POLL_CONTENDED 0.25
#define POLL_LOOK_S 200e-6

static long nivcsw(void)
{
    struct rusage ru;
#ifdef RUSAGE_THREAD
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        return ru.ru_nivcsw;
#endif
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nivcsw : -1;
}

/* The sampled spin ends: a preemption during it pulls the share up fast,
 * a quiet one lets it down slowly. */
static void spin_sampled(void)
{
    long n = nivcsw();
    if (n >= 0 && spin_nivcsw >= 0)
        contended = n > spin_nivcsw ? 0.5 * contended + 0.5
                                    : 0.97 * contended;
    spin_nivcsw = -1;
}

void poll_node(void)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &node_ranks);
        bell_setup(node);
        MPI_Comm_free(&node);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    /* the cores the launcher lets this job use, else the node's */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    node_cores = online > 0 ? (int)online : 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        /* a rank bound to one core says nothing of the node's: take the
         * larger */
        if (CPU_COUNT(&set) > node_cores)
            node_cores = CPU_COUNT(&set);
    }
}

void poll_node_counts(int ranks, int cores)
{
    node_ranks = ranks;
    node_cores = cores;
}

double poll_yield_slow(void)
{
    return yield_slow;
}

static char why[320];

int poll_configure(int mode, int wake)
{
    static const char *const names[] = {"auto", "spin", "sleep"};
    spin_ok = mode == POLL_SPIN ||
              (mode == POLL_AUTO && node_ranks > 0 && node_cores > 0 &&
               node_ranks <= node_cores);
    spin_auto = spin_ok && mode == POLL_AUTO;
    yield_ok = !spin_ok && mode == POLL_AUTO;
    /* a new choice starts with no measure of load */
    contended = yield_slow = 0;
    spin_nivcsw = -1;
    yield_waiting = yield_was_slow = 0;
    bell_use(wake == 0);
    snprintf(why, sizeof why,
             "waiting: %s (pool.poll: %s; %d ranks on this node, %d cores); "
             "%s%s",
             spin_ok    ? "spin while a message is expected"
             : yield_ok ? "sleep (a tree worker yields while its next "
                          "query is expected)"
                        : "sleep",
             names[mode >= 0 && mode <= 2 ? mode : 0], node_ranks,
             node_cores, bell_state(),
             wake == 0 ? "" : ", unused (pool.wake: timer)");
    return spin_ok;
}

const char *poll_choice(void)
{
    return why;
}

/* A wait that yielded past POLL_YIELD_S ends (or falls to sleeps): a
 * slow yield in it pulls the share up fast, a quiet one lets it down. */
static void yield_sampled(void)
{
    yield_slow = yield_was_slow ? 0.5 * yield_slow + 0.5 : 0.97 * yield_slow;
    yield_waiting = yield_was_slow = 0;
}

void poll_expect_yield(double until)
{
    if (yield_ok) {
        /* while yields are slow, no window: the share decays a wait at a
         * time, so about one wait in 30 tries yielding again */
        if (yield_slow > POLL_CONTENDED) {
            yield_slow *= 0.97;
            yield_until = 0;
        } else {
            yield_until = fmin(until, util_now() + POLL_EXPECT_MAX);
        }
        return;
    }
    poll_expect(until);
}

void poll_expect(double until)
{
    if (spin_ok)
        poll_expect_at(until, util_now());
}

void poll_expect_at(double until, double now)
{
    if (!spin_ok)
        return;
    if (spin_nivcsw >= 0)
        spin_sampled(); /* a spin still open ends with a new expectation */
    if (spin_auto && now >= next_look) {
        /* getrusage is a system call (about 0.2 us here, a third of a
         * round of 10 doubles): sample a spin at most every POLL_LOOK_S.
         * While contended no spin is tried, and the share decays a look
         * at a time: about one look in 30 spins again, to see whether
         * the load is gone. */
        next_look = now + POLL_LOOK_S;
        if (contended > POLL_CONTENDED)
            contended *= 0.97;
        else
            spin_nivcsw = nivcsw();
    }
    if (spin_auto && contended > POLL_CONTENDED) {
        spin_until = 0;
        return;
    }
    spin_until = fmin(until, now + POLL_EXPECT_MAX);
}

void poll_expect_clear(void)
{
    spin_until = 0;
    yield_until = 0;
}

double poll_contended(void)
{
    return contended;
}

void poll_setup(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
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
        if (got != 0) {
            if (spin_nivcsw >= 0)
                spin_sampled(); /* the message ended the spin */
            if (yield_waiting)
                yield_sampled();
            return got;
        }
        double now = util_now();
        if (now >= deadline || guard_signal) {
            if (yield_waiting)
                yield_sampled();
            return 0;
        }
        if (start == 0)
            start = now;
        if (now < spin_until)
            continue;
        if (spin_nivcsw >= 0)
            spin_sampled(); /* the spin is over, before any yield */
        if (now - start < POLL_SPIN_S)
            continue;
        if (now - start < POLL_YIELD_S) {
            sched_yield();
            continue;
        }
        if (now < yield_until) {
            yield_waiting = 1;
            sched_yield();
            if (util_now() - now > POLL_YIELD_SLOW)
                yield_was_slow = 1;
            continue;
        }
        if (yield_waiting)
            yield_sampled(); /* past the window: sleeps from here */
        double step = fmin(fmax(POLL_SLEEP_SHARE * (now - start),
                                POLL_MIN_SLEEP),
                           POLL_MAX_SLEEP);
        /* asleep on the bell, a sender on this node wakes this rank at
         * once; the test after arming takes a message that came before */
        long ticket = bell_arm();
        if (ticket >= 0) {
            got = test(ctx);
            if (got != 0) {
                bell_sleep(ticket, 0);
                return got == POLL_NOTHING ? 0 : got;
            }
        }
        bell_sleep(ticket, fmin(step, deadline - now));
    }
}
