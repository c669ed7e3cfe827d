/* simint.h - the simulator's state, shared by its event loop (sim.c),
 * rank 0's clock (simclock.c) and its set-up and end (simsetup.c).
 * Private to runtime/sim. */
#ifndef AIARUN_SIMINT_H
#define AIARUN_SIMINT_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "session/lead.h"
#include "simpool.h"
#include "simq.h"

/* What is in flight to and from one worker. */
struct flight {
    double busy_from;          /* simulate.cores: when its compute begins */
    double compute_end;        /* when its compute ends (the delay follows) */
    double sent_end;           /* when its answer leaves it */
    double compute_s, delay_s; /* as its answer's header would say */
    double copy_up;            /* simulate.cores: rank 0's copy of it */
    double work, up;           /* simulate.cores, until it is planned: its
                                  copy and compute alone, its trip up */
    uint64_t round;            /* the round of its query */
    size_t rows;               /* the rows its answer stands for */
    int corrupt;               /* it arrives malformed */
};

struct sim {
    struct lead l; /* first: the session's side (s, job, n, p, r, st) */
    struct simpool sp;
    struct flight *fl;
    struct simq q;
    struct codec qcodec, acodec; /* queries' encoder, answers' decoder */
    double *qbuf[2];             /* the current and the previous query */
    int cur;
    char *qenc;    /* the current query, encoded */
    size_t qbytes; /* its payload's bytes as it travels */
    double *adec;  /* an answer decoded */
    double now, stop_at;
    uint64_t events;
    double plugin_s; /* wall seconds in the plugins' steps, for the
                        simulator's own overhead */
    double worker_s; /* of which the simulated workers' */
    int timed;       /* the two kept (-v, or simulate.coordinator:
                        measured): two clock reads a call */
    /* rank 0's work (simulate.coordinator): what the current piece began
     * at (virtual; wall; the wall seconds not its own), what the model
     * has charged it, and the virtual seconds it was busy in all */
    int working;
    double work_f; /* simulate.cores: the piece's stretch, fixed at its
                      start */
    double copied; /* simulate.cores: the answers' bytes it copied */
    int *pend;     /* simulate.cores: the workers sent a query in the
                      current piece, planned together at its end */
    int npend;
    double work_t0, work_wall0, work_skip0, charged, busy_s;
    double msgs, doubles; /* what it handled in all (any mode) */
    /* pool.shards: ranks 1 .. shards-1, each free of its earlier work at
     * free_at[k], charged charged_k[k] in the current piece, busy busy_k[k]
     * virtual seconds in all (rank 0's are the fields above) */
    int shards;
    double *free_at, *charged_k, *busy_k;
};

/* Stop the run with an error (printed at once); the first one wins. */
#define sim_fail(m, ...) lead_fail(&(m)->l, __VA_ARGS__)

/* Rank 0 starts a piece of work (an answer taken, a round ended) at the
 * current time m->now; with simulate.cores it shares the cores with the
 * workers computing now, for the whole piece. */
void simclock_begin(struct sim *m);

/* The model's charge for msgs messages of len doubles each (a query's or
 * an answer's; tail: the values past the model's go to every coordinator
 * rank, else to rank 0 only), each coordinator rank charged its slice. */
void simclock_charge(struct sim *m, size_t msgs, size_t len, int tail);

/* Where rank 0's clock is within its current work (m->now outside one);
 * with shards, when every rank has done its part so far. */
double simclock_now(struct sim *m);

/* The work is done: m->now stands at its end, and with simulate.cores
 * the workers sent a query in it are planned and their answers queued. */
void simclock_end(struct sim *m);

/* Up to the first sends (simsetup.c): buffers, the lead with ops, the
 * algorithm's init or a checkpoint's load into the first query, the
 * reference optimum, and when simulate.compute is measured, the compute
 * time per row.  0, or -1 with err (call sim_free either way). */
int sim_start(struct sim *m, const struct lead_ops *ops,
              struct aia_error *err);
void sim_free(struct sim *m);

/* Bound every plugin call from here on by the key name's seconds: one
 * that does not return ends the process, saying which. */
void sim_watch(const char *name, double seconds);

/* After a stop by signal (the stop rule "signal"): SIGUSR1 is a stop as
 * at a limit, exit status 0; any other makes the run's status failed. */
void sim_signalled(struct sim *m);

#endif
