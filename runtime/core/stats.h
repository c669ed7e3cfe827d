/* stats.h - what the coordinator measures about each worker.
 *
 * Latencies go into log-scale histograms (each doubling from 0.12 us to
 * about 36 hours split into 32 equal buckets): constant memory whatever
 * the run's length, and quantiles within 1.6% of the exact ones.
 */
#ifndef AIARUN_STATS_H
#define AIARUN_STATS_H

#include <stdint.h>
#include <stdio.h>

#include <aiarun/aiarun.h>

#include "proto.h"

#define HIST_PER_OCTAVE 32
#define HIST_OCTAVES 40
#define HIST_BUCKETS (HIST_PER_OCTAVE * HIST_OCTAVES)
#define STALENESS_BUCKETS 17 /* 0 .. 15, then 16 and more */

struct hist {
    uint64_t count;
    double sum, min, max;
    uint32_t bucket[HIST_BUCKETS];
};

struct wstats {
    int rank;
    uint64_t queries;  /* queries sent to it */
    uint64_t evals;    /* evaluations sent to it (eval.c) */
    uint64_t answers;  /* answers absorbed */
    uint64_t fresh, stale;
    uint64_t late;     /* answers that came after the stop */
    uint64_t discarded; /* messages of an untrusted worker, an answer
                           not finite (not absorbed) */
    uint64_t max_staleness;
    uint64_t staleness[STALENESS_BUCKETS];
    struct hist rtt;     /* query sent to answer received, seconds */
    struct hist compute; /* the worker's time on it, injected delay too */
    struct hist comm;    /* rtt - compute */
    double delay;        /* injected delay, total seconds */
    /* bytes of the payloads: as doubles, and as encoded (headers apart) */
    uint64_t sent_payload, sent_encoded; /* its queries */
    uint64_t recv_payload, recv_encoded, recv_msgs; /* its answers */
    int unresponsive;    /* still busy at the end, past its usual time */
    int hidden;          /* tree mode: not a child of the coordinator */
};

void hist_add(struct hist *h, double seconds);

/* The q-quantile (0 <= q <= 1) of h; 0 when h is empty. */
double hist_quantile(const struct hist *h, double q);

double hist_mean(const struct hist *h);

/* Account for one absorbed answer. */
void stats_answer(struct wstats *w, uint64_t staleness, double rtt,
                  double compute, double delay);

/* Print the per-worker table for people. */
void stats_table(FILE *out, const struct wstats *w, const struct proto *p);

/* Write the per-worker figures as CSV to path.  0 or -1 with err. */
int stats_write(const char *path, const struct wstats *w, int n,
                struct aia_error *err);

#endif
