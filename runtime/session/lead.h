/* lead.h - the coordinator's side of a session, whatever carries the
 * messages (lead.c): what an answer does (statistics, recorder, the
 * algorithm's absorb, the protocol's verdict), how a round ends (the next
 * query, history, checkpoint, divergence, stop rules, sends), how a
 * worker is distrusted or declared dead, and how a run fails.  The MPI
 * driver (mpi/coord.c) and the simulator (sim/sim.c) each keep a struct
 * lead as the first member of their state and supply its transport and
 * clock through struct lead_ops, so that a job stops the same way, with
 * the same messages and exit status, under both. */
#ifndef AIARUN_LEAD_H
#define AIARUN_LEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/proto.h"
#include "core/stats.h"
#include "record/record.h"
#include "setup.h"

struct lead;

struct lead_ops {
    /* Send worker w the current query at now; 0, or -1 when it cannot be
     * sent (the run is then failed, naming the rank). */
    int (*send)(struct lead *l, int w, double now);
    /* Close the round at now: make the next query (lead_query writes it
     * into the driver's buffer) current, sealed for sending, and end the
     * round in l->p.  0, or -1 with the run failed. */
    int (*next)(struct lead *l, double now);
    /* Worker w's answer is about to be absorbed with info (NULL: nothing
     * to do; the MPI driver tells the shard ranks, pool.shards). */
    void (*absorbed)(struct lead *l, int w,
                     const struct aia_answer_info *info);
};

struct lead {
    struct setup *s;
    const struct job *job;
    int n;               /* workers in the pool */
    struct proto p;      /* the protocol's state */
    struct recorder r;   /* the outputs */
    struct wstats *st;   /* each worker's figures */
    int status;          /* the run's exit status so far */
    struct aia_error err; /* the first failure's text */
    /* a plugin call's error text in the round (query, absorb): zeroed
     * with the struct, its first byte reset before each call, so that a
     * call does not clear AIA_ERROR_LEN bytes every answer */
    struct aia_error call_err;
    int timed;            /* plugin_s is kept (the simulator's overhead) */
    double plugin_s;      /* wall seconds in the algorithm's absorb */
    const struct lead_ops *ops;
};

/* What a worker's answer says of itself. */
struct lead_answer {
    uint64_t round;     /* the round of the query it answers */
    double compute_s;   /* the worker's time on it, delay included */
    double delay_s;     /* the injected delay within it */
    size_t rows;        /* the rows it stands for */
    const double *values; /* decoded, checked finite */
};

/* The state for setup s's pool: protocol, statistics, recorder (acodec:
 * the answers' codec, for the report).  0, or -1 with err. */
int lead_init(struct lead *l, struct setup *s, const struct codec *acodec,
              const struct lead_ops *ops, struct aia_error *err);
void lead_free(struct lead *l);

/* Fail the run with an error, printed at once; the first one wins. */
void lead_fail(struct lead *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The algorithm's next query into query (query_len doubles).  0, or -1
 * with the run failed. */
int lead_query(struct lead *l, double *query);

/* A resumed run's counters from its checkpoint (l->r.resume): the
 * iteration, epoch and round, and the recorder's marks of the last
 * history row and checkpoint, as both drivers go on from them. */
void lead_resume_counters(struct lead *l);

/* The first row of the history, and with stop.diverge the initial loss
 * that bounds the later ones.  0, or -1 with the run failed. */
int lead_begin(struct lead *l, double now);

/* Worker w's trusted answer a, arrived at now: absorbed, then the round
 * ends (lead_end_round) or w gets the current query, as the protocol
 * decides. */
void lead_answer(struct lead *l, int w, const struct lead_answer *a,
                 double now);

/* End the round: the next query, the history row, a checkpoint when due,
 * the divergence watch and the stop rules; then every idle worker gets
 * the new query. */
void lead_end_round(struct lead *l, double now);

/* Worker w sent what cannot be trusted (why: what it was, bytes its
 * size): it gets no more queries and counts no more; the run fails when
 * no worker is left to trust. */
void lead_distrust(struct lead *l, int w, const char *why, size_t bytes);

/* Worker w's well-formed answer to round holds value (NaN or infinite) at
 * index: the method diverged or the plugin is wrong, and the run stops
 * with exit status 1, its history and summary kept, the message naming
 * them (diverge_answer).  The only check of an answer's values is the
 * receiving rank's (wire_answer_values). */
void lead_nonfinite(struct lead *l, int w, uint64_t round, size_t index,
                    double value);

/* Worker w is declared dead (why: for what); the run fails when none is
 * left alive. */
void lead_dead(struct lead *l, int w, const char *why);

/* The busy workers that pool.dead_after declares dead at now, each
 * through dead(l, w) after lead_dead; returns when the next one would be
 * (INFINITY: none). */
double lead_reap(struct lead *l, double now, void (*dead)(struct lead *, int));

/* At the stop, unless the run failed: the last history row and the final
 * checkpoint. */
void lead_final(struct lead *l, double now);

/* Workers still busy at t_end for far longer than they usually take (or
 * that never answered within a second) are marked unresponsive. */
void lead_flag_unresponsive(struct lead *l, double t_end);

/* After the report: when left(l, w) says of any worker that it was left
 * behind (declared dead, or never stopped), say so, naming them, and make
 * the status RUN_INCOMPLETE unless the run failed.  Returns 1 when any
 * was, else 0. */
int lead_left_behind(struct lead *l, int (*left)(struct lead *, int));

/* The end of the run on rank 0: files closed, final loss and iterate,
 * report, summary line, per-worker table (report.c). */
void lead_report(struct lead *l);

#endif
