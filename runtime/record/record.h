/* record.h - the recorder: what the coordinator writes and prints (the
 * loss and the optimum, the history, the answer log, saved iterates,
 * progress lines, the checkpoint and the report), fed by the driver as
 * the protocol goes.
 *
 * The recorder reads the protocol's counters (p) and the per-worker
 * figures (st) it is given, and the current and previous query the driver
 * points it at; it owns its files and the model copy x.  Its functions
 * return 0, or -1 with r->err (the driver then fails the run).
 */
#ifndef AIARUN_RECORD_H
#define AIARUN_RECORD_H

#include <stdint.h>

#include "checkpoint.h"
#include "core/codec.h"
#include "core/diverge.h"
#include "output.h"
#include "core/proto.h"
#include "session/setup.h"
#include "core/stats.h"

struct recorder {
    const struct setup *s;
    const struct job *job;
    const struct proto *p;      /* round, iteration, epoch, t0 */
    const struct wstats *st;    /* each worker's figures, p->n of them */
    const struct codec *acodec; /* the answers' codec, for the report */
    const double *query;        /* the current query; NULL before the first */
    const double *prev;         /* the previous iteration's; NULL at first */
    double *x;                  /* the model, for the loss */
    struct diverge dv;          /* the divergence detector's memory */
    double fopt;
    int opt_known;
    struct aia_error opt_why; /* why the optimum is unknown */
    struct output *hist, *answers;
    struct iterates *iterates;
    int64_t saved;       /* last iteration written to the history */
    int64_t saved_epoch; /* epoch of that row */
    int64_t loss_at;     /* iteration of the loss below, -1: none */
    double loss;
    double progress_at; /* when the next progress line is due */
    int progress_tty;
    int64_t ckpt_iter;        /* iteration of the last checkpoint */
    double ckpt_at;           /* when the next timed checkpoint is due */
    struct checkpoint resume; /* the checkpoint resumed from */
    int resumed;
    int ckpt_locked, ckpt_fd; /* output.checkpoint's lock (record_check) */
    double t_end; /* when the run stopped */
    struct aia_error err;
    /* With a data file the workers compute the loss (eval.c): evaluate
     * asks them for one of x (row: iteration, epoch, time and change of a
     * history row, written when the answers are in; NULL: the loss only),
     * and ev holds the latest one's loss, metric, test loss and test
     * metric (NaN: none yet), with the workers missing from it. */
    int (*evaluate)(void *ctx, const double *x, const double *row, int all);
    void *eval_ctx;
    double ev[4];
    int64_t ev_at; /* the iteration whose model ev is of; -1: none */
    int ev_missing;
    int ev_sampled; /* ev's training figures are the sample's */
    uint64_t ev_rows; /* training rows it covers */
    /* With stop.loss or stop.gap, the model of the latest evaluation on
     * every row (judged_at: its iteration; -1: none), which is what those
     * rules read: the workers' figures are a few iterations old when a
     * rule looks at them.  end_judged: such a rule stopped the run, and
     * this model, with its figures in ev, is the run's result (the final
     * iterate, loss, gap and metric), not the later one the run reached
     * while the workers evaluated it. */
    double *judged;
    int64_t judged_at;
    double judged_row[3]; /* its iteration, epoch and time */
    int end_judged;
    /* the latest history row written, and whether it read every row */
    int64_t hist_at;
    int hist_full;
    /* history rows written with an empty loss: due while the workers'
     * evaluations fell behind (not evaluated), or evaluated without some
     * worker's rows (a partial loss is never written as the loss) */
    uint64_t rows_behind, rows_partial;
    double fail_loss; /* the loss that stopped the run as diverged, or NaN */
    int incomplete;   /* the final loss missed rows (report_end) */
    /* rank 0's share of the run's time spent on its own work rather than
     * waiting for answers (the summary's coordinator_busy); NaN: unknown */
    double coord_busy;
    /* pool.shards: the whole model into x, gathered from the shard
     * ranks (NULL: rank 0 holds it), and for each coordinator rank the
     * bytes it received and sent (2 per rank; NULL: not counted) */
    int (*model)(void *ctx, double *x, struct aia_error *err);
    /* and the sum of the squared changes of the query on the shard ranks'
     * slices (record_change adds it to rank 0's; NaN: unknown) */
    double (*shard_change)(void *ctx);
    /* and every coordinator rank's state in one block (*state, *len) and
     * the whole query (*query, full.query_len), for a checkpoint: both
     * the caller's to free.  0, or -1 with err */
    int (*shard_save)(void *ctx, void **state, size_t *len, double **query,
                      struct aia_error *err);
    void *model_ctx;
    uint64_t *rank_bytes;
    int nranks;
    /* output.history_sample: history rows other than the last read a
     * sample of the training rows (the workers' s->sample_s, or rank 0's
     * own); the row written at saved read one when saved_sampled */
    int sampling;
    int saved_sampled;
    int eval_timed; /* eval_s is kept (the simulator's coordinator) */
    double eval_s;  /* wall seconds in rank 0's own loss and metric */
};

/* Set up for the run (allocates x); 0 or -1 (out of memory). */
int record_init(struct recorder *r, const struct setup *s,
                const struct proto *p, const struct wstats *st,
                const struct codec *acodec);

/* Free what record_init and record_read_resume allocated. */
void record_free(struct recorder *r);

/* The loss of the current model, once per iteration. */
int record_loss(struct recorder *r, double *loss);

/* The model after the latest update, into r->x (the judged model once
 * a loss rule stopped the run on it).  0 or -1. */
int record_model(struct recorder *r);

/* The run stopped by rule why: a loss or gap rule that read the workers'
 * figures of an earlier iterate makes that iterate the result. */
void record_stopped(struct recorder *r, const struct proto_stop_rule *why);

/* An evaluation by the workers on every row, of the model x of the
 * iteration, epoch and time in at, came in: kept as the judged model
 * (where a rule reads it). */
void record_judged(struct recorder *r, const double *x, const double *at);

/* An evaluation by the workers came in (eval.c): vals are the loss, the
 * metric, the test loss and the test metric over the rows of the workers
 * that answered (rows of them), missing the workers that did not; row as
 * given to evaluate; sampled: the training figures are over the workers'
 * samples (evaluate's all was 0).  vals NULL: the row was queued while the workers'
 * evaluations fell behind, and has none.  Writes the history row (its
 * loss columns empty unless every worker answered); -1 when it cannot or
 * when the loss is not finite (the method diverged). */
int record_evaluated(struct recorder *r, const double *row,
                     const double *vals, int missing, uint64_t rows,
                     int sampled);

/* Norm of the query's change since the previous iteration; NaN at the
 * first. */
double record_change(const struct recorder *r);

/* record_change for the divergence detector: exact up to
 * RECORD_CHANGE_EXACT values; past that, estimated from an evenly spaced
 * sample of RECORD_CHANGE_SAMPLE of them (a different one every
 * iteration), scaled to the whole length, so that watching a model of
 * 1e6 doubles does not read both of its queries every round.  The
 * history's change and the stop rule's stay exact. */
double record_change_watch(const struct recorder *r);
#define RECORD_CHANGE_EXACT 65536
#define RECORD_CHANGE_SAMPLE 4096

/* The exact optimum, when the problem gives it (r->opt_known). */
void record_optimum(struct recorder *r);

/* Open the history, answer log and iterate files the job asks for. */
int record_open(struct recorder *r);

/* A history row (and saved iterate) for the current iteration when one is
 * due; force: RECORD_FIRST or RECORD_LAST, the first and the last row.
 * The last row reads every training row: when a row on a sample was
 * written at the same iteration, a second row follows it. */
int record_iteration(struct recorder *r, int force, double now);
#define RECORD_FIRST 1
#define RECORD_LAST 2

/* One absorbed answer into the answer log. */
int record_answer(struct recorder *r, int w, uint64_t sent_round,
                  uint64_t staleness, double compute, double delay, double rtt,
                  double now);

/* A progress line on stderr when one is due (runs over a second). */
int record_progress(struct recorder *r, double now);

/* Write the checkpoint when one is due (force: now). */
int record_checkpoint(struct recorder *r, int force, double now);

/* Refuse what the job asks of the outputs that the problem or the
 * algorithm cannot give (after record_optimum), and take the lock of
 * output.checkpoint (another run's is refused; record_free releases). */
int record_check(struct recorder *r);

/* Read the checkpoint to resume from into r->resume (before record_open,
 * which then appends to the outputs at the checkpoint's sizes). */
int record_read_resume(struct recorder *r);

/* Close the files and end the progress line. */
int record_close(struct recorder *r);


/* Answers absorbed so far, over every worker, from the start of the run
 * (a resumed run counts its checkpoint's too, as iterations do). */
uint64_t record_answers(const struct recorder *r);

/* The coordinator's bytes so far, from the start of the run as answers
 * are (checkpoint.h's CHECKPOINT_TRAFFIC order). */
void record_traffic(const struct recorder *r, uint64_t t[CHECKPOINT_TRAFFIC]);

/* The problem's metric of r->x (set by record_loss) into *v; NaN when it
 * has none.  0, or -1 with r->err. */
int record_metric(struct recorder *r, double *v);

#endif
