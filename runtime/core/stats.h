/* stats.h - what the coordinator measures about each worker.
 *
 * Latencies go into log-scale histograms (each doubling from 0.12 us to
 * about 36 hours split into 32 equal buckets): constant memory whatever
 * the run's length, and quantiles within 1.6% of the exact ones.  Counts,
 * means and extremes take every answer; the buckets, the quantiles'
 * source, take every answer of a worker up to STATS_ALL, then a random
 * one in STATS_SAMPLE (a worker's own xorshift stream, so no period of
 * the run can line up with it): placing three values in buckets was the
 * largest part of the coordinator's own work an answer.
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

#define STATS_ALL 1024  /* a worker's answers that all go to the buckets */
#define STATS_SAMPLE 8  /* then one in this many, at random (a power of 2) */

struct hist {
    uint64_t count;   /* values seen: count, sum, min and max take all */
    uint64_t sampled; /* values in the buckets (hist_add) */
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
    uint64_t draw;       /* the sample's xorshift state (0: unseeded) */
    int unresponsive;    /* still busy at the end, past its usual time */
    int hidden;          /* tree mode: not a child of the coordinator */
};

/* Count seconds in h and place it in its bucket (stats_answer only
 * counts a value left out of the sample: count, sum, min, max). */
void hist_add(struct hist *h, double seconds);

/* The q-quantile (0 <= q <= 1) of h, from the values in its buckets
 * (bounded by the min and max of all); 0 when h is empty. */
double hist_quantile(const struct hist *h, double q);

double hist_mean(const struct hist *h);

/* Account for one absorbed answer: its counts always, its three
 * latencies in the histograms' buckets as the sample says (STATS_ALL,
 * STATS_SAMPLE). */
void stats_answer(struct wstats *w, uint64_t staleness, double rtt,
                  double compute, double delay);

/* Print the per-worker table for people, and under it, when a worker's
 * quantiles come from a sample, a line saying so and how many. */
void stats_table(FILE *out, const struct wstats *w, const struct proto *p);

/* The per-worker figures as CSV lines (the header first): a string the
 * caller frees, its length in *len; NULL when out of memory. */
char *stats_csv(const struct wstats *w, int n, size_t *len);

#endif
