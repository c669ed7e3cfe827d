/* proto.h - the coordinator's protocol as a state machine, with no MPI
 * and no clock in it.
 *
 * A driver owns the messages and the clock; it tells the state machine
 * what happened, with the time it happened at, and carries out what the
 * state machine decides.  The MPI driver is coord.c; a virtual-time
 * driver can feed the same events from a simulated clock.
 *
 * Events in (each takes `now`, seconds on the driver's clock):
 *   proto_start       the first query is out of the algorithm
 *   proto_sent        worker w was sent the current round's query
 *   proto_check       an answer from w to the query of round r arrived:
 *                     PROTO_ACCEPT, PROTO_LATE (the stop is decided),
 *                     PROTO_DISTRUST (not a query w holds) or
 *                     PROTO_DISCARD (w is distrusted already); no change
 *   proto_answer      the accepted answer is taken: its staleness
 *   proto_absorbed    the algorithm absorbed it: what to do next
 *   proto_late        a late answer was counted
 *   proto_bye         w said goodbye
 *   proto_distrust    w sent what cannot be trusted
 *   proto_dead        w stayed silent past pool.dead_after
 *   proto_silent      w is let go at the shutdown without its goodbye
 *   proto_end_round   the algorithm wrote the next query
 *   proto_fail, proto_signal, proto_time_up   the run must stop
 *
 * Decisions out:
 *   proto_ready       the wait condition lets the round end
 *   proto_deadline    when it may without a new answer
 *   proto_overdue     which busy worker is silent too long, and when the
 *                     next one would be
 *   proto_stop_check  a stop rule holds at the end of an iteration
 *   proto_idle        which workers get the next query (alive and idle)
 *   p->why            the stop reached (NULL: going on), an entry of
 *                     proto_stop_rules
 *
 * Memory: proto_init allocates the per-worker arrays, proto_free frees
 * them; ranks is borrowed (it must outlive the state machine).  The pool
 * view handed to the wait condition points into the state machine and is
 * valid until the next event.
 */
#ifndef AIARUN_PROTO_H
#define AIARUN_PROTO_H

#include <stdint.h>

#include <aiarun/aiarun.h>

struct proto;

/* How rounds work (pool.mode): a query to every idle worker, then the
 * wait condition; or async, every answer an iteration. */
enum proto_mode { PROTO_ROUNDS = 0, PROTO_ASYNC = 1 };

/* The limits and targets the stop rules hold the run to: the protocol's
 * own struct, which the configuration fills from the stop section (its
 * rows bind each stop.NAME key to a field here).  0 is "none" for each
 * limit and target. */
struct proto_limits {
    int64_t iterations;  /* stop.iterations */
    double time;         /* stop.time, seconds */
    int64_t epochs;      /* stop.epochs */
    double precision;    /* stop.precision: norm of the query's change */
    double loss;         /* stop.loss: target loss */
    double gap;          /* stop.gap: relative suboptimality */
    int64_t check_every; /* stop.check_every: iterations between loss checks */
    double diverge;      /* stop.diverge: factor of the initial loss */
};

/* What a stop rule may read that the protocol does not know: the model's
 * change and loss, measured by the driver (the recorder). */
struct proto_measure {
    void *ctx;
    double (*change)(void *ctx);          /* NaN when there is none */
    int (*loss)(void *ctx, double *loss); /* 0, or -1: the run failed */
    double fopt;                          /* the optimum, for stop.gap */
};

/* A stop rule: its name (the report's stop=NAME), its check (NULL:
 * reached by an event, not at the end of an iteration; else 1: reached,
 * 0: not, -1: the measure failed), why it stops, and whether a job key
 * stop.NAME sets its bound (a field of struct proto_limits; the
 * configuration's stop rows bind it).  Adding a rule is one entry of
 * proto_stop_rules (proto.c), its check, and its row in the stop
 * section when it is keyed. */
struct proto_stop_rule {
    const char *name;
    int (*check)(const struct proto *p, const struct proto_limits *lim,
                 const struct proto_measure *m);
    const char *text;
    int keyed;
};

/* Every stop rule, checked in this order; ends with a NULL name. */
extern const struct proto_stop_rule proto_stop_rules[];

/* The rule named name, or NULL. */
const struct proto_stop_rule *proto_stop_rule(const char *name);

enum proto_verdict {
    PROTO_ACCEPT,   /* absorb it */
    PROTO_LATE,     /* the stop is decided: count it, absorb nothing */
    PROTO_DISTRUST, /* an answer to a query the worker was not sent */
    PROTO_DISCARD,  /* from a worker distrusted already */
};

/* After an absorbed answer. */
enum proto_next {
    PROTO_WAIT,      /* fresh: the round goes on */
    PROTO_RESEND,    /* stale: send the worker the current query now */
    PROTO_END_ROUND, /* async mode: the answer is an iteration */
};

struct proto {
    int n;            /* workers */
    int mode;         /* enum proto_mode */
    const int *ranks; /* pool index -> rank (borrowed) */
    uint64_t round;   /* the current round (the first is 1) */
    int64_t iteration, epoch;
    int fresh, arrived;  /* answers this round: fresh, all */
    int live;            /* workers alive (neither dead nor distrusted) */
    int dead;            /* workers declared dead */
    int epoch_count;     /* live workers that answered in this epoch */
    double t0, round_t0; /* when the run and the round began */
    uint64_t *repochs;   /* round of each worker's latest answer */
    uint64_t *sent;      /* round of the query each worker holds */
    unsigned char *busy, *alive, *fresh_now, *in_epoch;
    unsigned char *direct;    /* workers the coordinator talks to */
    unsigned char *left;      /* why each worker left: PROTO_LEFT_* bits */
    uint64_t *idle;           /* bit w: alive and not busy (proto_idle) */
    int nidle;                /* bits set in idle */
    int idle_lo;              /* no bit below it is set (n: none is) */
    int *fresh_list;          /* the workers with fresh_now set ... */
    int fresh_marked;         /* ... this many */
    /* the busy live workers in the order they were sent their queries
     * (the drivers' clocks never go back), oldest first: the first is
     * the next one pool.dead_after can find silent */
    int *older, *newer; /* -1 at either end; -2: not in the queue */
    int oldest, newest;
    double *sent_at;          /* when each worker was sent its query */
    double *latency;          /* round-trip estimate, seconds */
    const struct proto_stop_rule *why; /* NULL: going on */
};

/* The parent node of node t (t > 0) of a tree of the given arity: node 0
 * is the coordinator, node w + 1 the pool's worker w. */
int tree_parent(int t, int arity);

/* The children of node t among the nodes 1 .. nworkers, into children
 * (min(arity, nworkers) entries at most); returns how many. */
int tree_children(int t, int arity, int nworkers, int *children);

/* Set up for n workers whose ranks are ranks[0..n-1]; in tree mode
 * (arity > 0) the coordinator talks only to its children, the others are
 * neither alive nor direct.  0, or -1 with err (out of memory). */
int proto_init(struct proto *p, int n, int mode, int arity, const int *ranks,
               struct aia_error *err);

void proto_free(struct proto *p);

/* The run begins (or resumes) at round, after elapsed seconds. */
void proto_start(struct proto *p, uint64_t round, double now, double elapsed);

/* Worker w was sent the current query. */
void proto_sent(struct proto *p, int w, double now);

/* What to do with an answer from w to the query of round; changes
 * nothing. */
enum proto_verdict proto_check(const struct proto *p, int w, uint64_t round);

/* Take w's accepted answer to round: w is idle and its latency updated;
 * returns the answer's staleness, *rtt its round trip. */
uint64_t proto_answer(struct proto *p, int w, uint64_t round, double now,
                      double *rtt);

/* The algorithm absorbed w's answer of the given staleness. */
enum proto_next proto_absorbed(struct proto *p, int w, uint64_t staleness);

/* A late answer from w, or its goodbye: w is idle. */
void proto_late(struct proto *p, int w);
void proto_bye(struct proto *p, int w);

/* w is not trusted any more, or declared dead: it counts no more for the
 * wait condition and epochs.  Returns the live workers left (the driver
 * fails the run when none is). */
int proto_distrust(struct proto *p, int w);
int proto_dead(struct proto *p, int w);

/* w is let go at the shutdown (it never said goodbye): it is no longer
 * alive, and nothing is counted. */
void proto_silent(struct proto *p, int w);

/* Why a worker left the pool: bits of proto.left, each set once. */
enum { PROTO_LEFT_UNTRUSTED = 1, PROTO_LEFT_DEAD = 2 };

/* Whether w sent something that failed its checks (proto_distrust). */
int proto_untrusted(const struct proto *p, int w);

/* Whether w was declared dead (proto_dead) or lost (proto_lost): a run
 * cannot stop it, so it is never waited for. */
int proto_lost_worker(const struct proto *p, int w);

/* w is lost without being declared dead: a message it sent was left
 * unreceived, so it is stuck in that send; it is no longer alive, and not
 * counted among the declared dead. */
void proto_lost(struct proto *p, int w);

/* The busy live worker silent the longest, when that is more than after
 * seconds, or -1 (O(1): the workers are queued in the order of their
 * sends);
 * *next: when the next one would be (INFINITY: none, or after <= 0). */
int proto_overdue(const struct proto *p, double now, double after,
                  double *next);

/* The pool as the wait condition sees it at now. */
void proto_view(const struct proto *p, struct aia_pool_view *v, double now);

/* Whether the wait condition ends the round at now. */
int proto_ready(const struct proto *p, const struct aia_wait_plugin *wait,
                void *wait_s, double now);

/* When the wait condition may end the round with no new answer:
 * INFINITY when never. */
double proto_deadline(const struct proto *p, const struct aia_wait_plugin *wait,
                      void *wait_s, double now);

/* The round is closed (the next query is written): round and iteration
 * go on. */
void proto_end_round(struct proto *p, double now);

/* The first worker from `from` on that gets the next query (alive and
 * idle), or -1: a walk over the idle ones in index order that costs a
 * word of 64 workers a step, not a look at every worker, and starts at
 * the lowest idle one (one step when an answer leaves one idle worker,
 * as in async mode). */
int proto_next_idle(const struct proto *p, int from);

/* Whether w gets the next query: alive and idle. */
int proto_idle(const struct proto *p, int w);

/* The first stop rule that holds at the end of an iteration; sets p->why
 * unless it is set already.  NULL: none. */
const struct proto_stop_rule *proto_stop_check(struct proto *p,
                                               const struct proto_limits *lim,
                                               const struct proto_measure *m);

/* Stop with the named event rule ("time", "signal"), unless a reason is
 * set already. */
void proto_stop(struct proto *p, const char *name);

/* Stop with an error; 1 when it is the first, 0 when one was set. */
int proto_fail(struct proto *p);

/* Whether p->why is the error rule. */
int proto_failed(const struct proto *p);

/* Whether the time limit lim->time has passed at now. */
int proto_time_up(const struct proto *p, const struct proto_limits *lim,
                  double now);

/* Stop with the time rule when the limit has passed at now; returns 1
 * then (the run stops at the last complete round: a round the limit cuts
 * counts no iteration), else 0. */
int proto_time_stop(struct proto *p, const struct proto_limits *lim,
                    double now);

/* The gap's floor: an optimum of about 0 is measured as this, so the gap
 * is then an absolute one and a gap stop still ends the run. */
#define PROTO_GAP_FLOOR 1e-9

/* The gap, the one definition that stop.gap, the summary line and the
 * report use: (loss - optimum) / max(|optimum|, PROTO_GAP_FLOOR).
 * Negative where the loss is below the optimum; NaN where either is. */
double proto_gap(double loss, double fopt);

#endif
