/* coord.h - the coordinator's state, shared by coord.c (the protocol)
 * and record.c (what it writes and prints).  Private to the runtime. */
#ifndef AIARUN_COORD_H
#define AIARUN_COORD_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "codec.h"
#include "diverge.h"
#include "output.h"
#include "run.h"
#include "stats.h"

enum stop_reason {
    STOP_NONE,
    STOP_ITERATIONS,
    STOP_TIME,
    STOP_EPOCHS,
    STOP_PRECISION,
    STOP_LOSS,
    STOP_GAP,
    STOP_SIGNAL,
    STOP_ERROR
};

struct qbuf {
    char *buf;   /* header and the query as doubles */
    char *enc;   /* with a query codec: header and the encoded query,
                    which is what is sent; NULL: buf is sent */
    size_t bytes; /* of the message sent */
    int refs;    /* sends in flight from it */
};

struct coord {
    struct setup *s;
    const struct job *job;
    int n;
    size_t qbytes, rbytes;
    size_t qenc_bytes;     /* most bytes of an encoded query message */
    struct codec qcodec;   /* queries' encoder */
    struct codec acodec;   /* answers' decoder */
    double *adec;          /* the answer being absorbed, decoded */
    char why_text[AIA_ERROR_LEN + 64]; /* why a message is not trusted */
    MPI_Request *rreq; /* the answer receive of each worker */
    char **rbuf;
    MPI_Request *sreq; /* the query send of each worker */
    int *sq;           /* the qbuf sreq[w] reads */
    struct qbuf *q;
    int nq, cur, prev; /* the current and the previous round's query */
    uint64_t round;
    int64_t iteration, epoch;
    uint64_t *repochs, *sent;
    unsigned char *busy, *alive, *fresh_now, *in_epoch, *bye;
    unsigned char *direct; /* workers the coordinator talks to: every one,
                              or its children in tree mode */
    double *sent_at, *latency;
    int fresh, arrived, live, epoch_count;
    double t0, round_t0, t_end;
    struct wstats *st;
    int *idx;
    MPI_Status *mst;
    double *x; /* the model, for the loss */
    double fopt;
    int opt_known;
    struct aia_error opt_why; /* why the optimum is unknown */
    /* record.c */
    struct output *hist, *answers;
    struct iterates *iterates;
    int64_t saved;       /* last iteration written to the history */
    int64_t saved_epoch; /* epoch of that row */
    int64_t loss_at;     /* iteration of the loss below, -1: none */
    double loss;
    struct diverge dv;   /* the divergence detector's memory */
    double progress_at;  /* when the next progress line is due */
    int progress_tty;
    int64_t ckpt_iter;   /* iteration of the last checkpoint */
    double ckpt_at;      /* when the next timed checkpoint is due */
    struct checkpoint resume; /* the checkpoint resumed from */
    int resumed;
    int dead;            /* workers declared dead */
    /* shutdown_pool's STOP buffers, reused for FINISH, and each rank's
     * pool index + 1 (0: not in the pool) */
    struct wire_hdr *stop;
    int *of_rank;
    enum stop_reason why;
    int status;
    struct aia_error err;
};

/* Stop the run with an error (printed at once); the first one wins. */
void coord_fail(struct coord *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* record.c: the loss of the current model, once per iteration; 0 or -1
 * (the run is then failed). */
int record_loss(struct coord *c, double *loss);

/* Norm of the query's change since the previous iteration; NaN at the
 * first. */
double record_change(const struct coord *c);

/* The exact optimum, when the problem gives it (c->opt_known). */
void record_optimum(struct coord *c);

/* Open the history, answer log and iterate files the job asks for. */
int record_open(struct coord *c);

/* A history row (and saved iterate) for the current iteration when one is
 * due; force: the first and the last. */
void record_iteration(struct coord *c, int force);

/* One absorbed answer into the answer log. */
void record_answer(struct coord *c, int w, uint64_t sent_round,
                   uint64_t staleness, double compute, double delay,
                   double rtt, double now);

/* A progress line on stderr when one is due (runs over a second). */
void record_progress(struct coord *c, double now);

/* Write the checkpoint when one is due (force: now). */
void record_checkpoint(struct coord *c, int force);

/* Read the checkpoint to resume from into c->resume (before record_open,
 * which then appends to the outputs at the checkpoint's sizes).  0 or -1
 * (the run is then failed). */
int record_read_resume(struct coord *c);

/* Close the files; then print the report, the per-worker table and the
 * summary line, and write the final iterate and the worker table. */
void record_finish(struct coord *c);

#endif
