/* coord.h - the coordinator's MPI driver: its state, shared by coord.c
 * (the loop: MPI completions into protocol events, the protocol's
 * decisions into sends), query.c (the query buffers) and shutdown.c
 * (stopping the pool).  The decisions are proto.c's, the outputs
 * record.c's.  Private to the runtime. */
#ifndef AIARUN_COORD_H
#define AIARUN_COORD_H

#include <mpi.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/proto.h"
#include "record/record.h"
#include "session/lead.h"
#include "session/setup.h"
#include "core/stats.h"

struct qbuf {
    char *buf;    /* header and the query as doubles */
    char *enc;    /* with a query codec: header and the encoded query,
                     which is what is sent; NULL: buf is sent */
    size_t bytes; /* of the message sent */
    int refs;     /* sends in flight from it */
};

struct coord {
    struct lead l; /* first: the session's side (s, job, n, p, r, st) */
    size_t qbytes, rbytes;
    size_t qenc_bytes;   /* most bytes of an encoded query message */
    struct codec qcodec; /* queries' encoder */
    struct codec acodec; /* answers' decoder */
    double *adec;        /* the answer being absorbed, decoded */
    char why_text[AIA_ERROR_LEN + 64]; /* why a message is not trusted */
    size_t bad; /* check: the answer's first value not finite; len: none */
    unsigned char *listen;             /* worker w's next message is wanted */
    int *w_of_rank;                    /* rank -> pool index + 1 (0: none) */
    /* a message matched while its worker's buffer was taken, received by
     * the next listen_poll (held_st: its status) */
    MPI_Message held;
    MPI_Status held_st;
    /* bytes of the message in rbuf[w] (more than rbytes: received
     * elsewhere and dropped) */
    int *rlen;
    char **rbuf;
    MPI_Request *sreq; /* the query send of each worker */
    int *sq;           /* the qbuf sreq[w] reads */
    struct qbuf *q;
    int nq, cur, prev;  /* the current and the previous round's query */
    unsigned char *bye; /* said goodbye, or never to be waited for */
    int *idx;
    MPI_Status *mst;
    /* shutdown_pool's STOP buffers, reused for FINISH, and each rank's
     * pool index + 1 (0: not in the pool) */
    struct wire_hdr *stop;
    int *of_rank;
    struct evals *ev; /* the workers' evaluations (eval.c); NULL: none */
    struct shard_lead *sh; /* the shard ranks (shard.c); NULL: none */
    double alive_at, alive_prev; /* the next and the last keep-alive */
    /* when the checks that only time moves are next due (pool.dead_after,
     * the keep-alive, stop.time): the loop looks at them then, not at
     * every answer; a send that starts a dead_after wait brings it
     * forward */
    double timers_at;
    /* seconds in listen_poll waiting for answers, the rest of the loop
     * being rank 0's work; the receives that take an answer's bytes
     * (recv_s of them, listen.c) are work too: an answer of 800 KB is
     * copied by rank 0 inside its MPI_Mrecv on a node */
    double wait_s, recv_s;
};

/* The coordinator's role (rank 0): runs the job, returns its exit
 * status. */
int coord_run(struct setup *s);

/* Stop the run with an error (printed at once); the first one wins. */
#define coord_fail(c, ...) lead_fail(&(c)->l, __VA_ARGS__)

/* One message from worker w, whose receive completed with mst. */
void coord_take(struct coord *c, int w, const MPI_Status *mst, double now);

/* Send each worker that is not busy a keep-alive when one is due (every
 * third of pool.coordinator_timeout), so that a wait of the coordinator
 * longer than that (a slow round, the final evaluations) does not make
 * idle workers leave; names a busy worker silent that long.  Returns
 * when the next one is due (INFINITY: never).  Call it from every wait
 * that can outlast pool.coordinator_timeout before the STOP. */
double coord_keep_alive(struct coord *c, double now);

/* query.c: the coordinator's state (its per-worker arrays, the protocol,
 * the recorder, the evaluations): 0, or -1 when out of memory; and its
 * release. */
int coord_init(struct coord *c);
void coord_free(struct coord *c);

/* query.c: the codecs and the receive buffers (query buffers come as
 * needed); 0 or -1 (out of memory or a codec refused). */
int query_init(struct coord *c);

/* Free what query_init and query_acquire allocated. */
void query_free(struct coord *c);

/* A query buffer no send reads, other than the current one;
 * -1: out of memory. */
int query_acquire(struct coord *c);

/* Retire the send to w (it answered, so the send completed). */
void query_retire(struct coord *c, int w);

/* Give query buffer q, whose doubles are written, its header for round,
 * encoded with the query codec.  0 or -1 (the run is then failed). */
int query_seal(struct coord *c, int q, uint64_t round);

/* Make q the current query (the recorder follows). */
void query_current(struct coord *c, int q);

/* Close the round: the algorithm writes the next query, which becomes
 * current.  0 or -1 (the run is then failed). */
int query_next(struct coord *c, double now);

/* The first query into buffer q: the algorithm's, or the checkpoint's
 * (its state is loaded back and the counters go on from it).  0 or -1
 * (the run is then failed). */
int query_first(struct coord *c, int q);

/* listen.c: the listening state (0 or -1: out of memory), and its
 * release. */
int listen_init(struct coord *c);
void listen_free(struct coord *c);

/* The most bytes of a message that is received only to be dropped (into
 * memory of its size, freed at once); a larger one is left unreceived and
 * its sender, stuck in its send, is treated as dead. */
#define LISTEN_DISCARD_MAX ((size_t)1 << 30)

/* Wait, as poll_some does, until messages arrive from workers listened
 * to or the deadline passes; each worker's message is probed, then
 * received into rbuf[w] when it fits (rlen[w] says its size), and the
 * worker is listened to no more until coord.c says so.  Returns how many
 * arrived (their workers in c->idx, statuses in c->mst), 0 at the
 * deadline or when no worker is listened to, -1 on an MPI error. */
int listen_poll(struct coord *c, double deadline);

/* shutdown.c: let worker w go: its requests are freed, never waited
 * on. */
void shutdown_let_go(struct coord *c, int w);

/* Busy workers silent for longer than pool.dead_after are declared dead;
 * returns when the next one would be. */
double shutdown_reap(struct coord *c, double now);


/* Stop every other rank and collect the pool's goodbyes. */
void shutdown_pool(struct coord *c);

/* Let every rank go, telling it whether to call MPI_Finalize. */
void shutdown_finish(struct coord *c);

/* Stopped by a signal: save what can be saved. */
void shutdown_signal(struct coord *c);

/* Close the outputs, write the final iterate, print the report and the
 * summary line, write the worker table. */
void shutdown_report(struct coord *c);

/* eval.c: the workers' evaluations of the iterate (eval.h says what they
 * are). */

/* Coordinator: set up the evaluations (and the recorder's hook); 0 or -1
 * (out of memory). */
int eval_init(struct coord *c);

/* Free them (after the shutdown: a dead worker's send may be in flight). */
void eval_free(struct coord *c);

/* An EVALANS from worker w, checked already (kind, length). */
void eval_take(struct coord *c, int w, const struct wire_hdr *h);

/* At the stop: evaluate the final model unless that is under way, wait
 * for the pending evaluations a bounded time (what does not come is
 * missing), and ask for no more. */
void eval_drain(struct coord *c);

#endif
