/* latency.h - virtual times of a simulated run: when each answer arrives.
 *
 * A worker's answer to a query sent at time t arrives at t + down +
 * compute + delay + up: the query's trip, the worker's compute time (per
 * row of its partition, or drawn from the DSAG trace model), the injected
 * delays of the stragglers section (the same draws as under mpirun), and
 * the answer's trip.  A trip is latency + bytes / bandwidth.  Every draw
 * comes from the worker's own stream of the job's seed, in answer order,
 * so a simulation is the same on every machine and under any load.
 */
#ifndef AIARUN_LATENCY_H
#define AIARUN_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include <aiarun/aiarun.h>

#include "conf/job.h"
#include "conf/job_keys.h"
#include "session/straggle.h"

/* How a worker's compute time is found (simulate.compute). */
enum latency_compute {
    LATENCY_ROWS = 0,
    LATENCY_MEASURED = 1,
    LATENCY_DSAG = 2
};

/* How rank 0's own work is charged on the virtual clock
 * (simulate.coordinator). */
enum latency_coordinator {
    LATENCY_COORD_MODEL = 0,   /* coordinator_us and coordinator_ns */
    LATENCY_COORD_MEASURED = 1, /* its real wall time, call by call */
    LATENCY_COORD_NONE = 2     /* no time: a coordinator infinitely fast */
};

/* A Gamma distribution by its shape and scale. */
struct latency_gamma {
    double shape, scale;
};

/* One worker's latency model. */
struct latency {
    const struct job_simulate *sim;
    double compute_s;                /* rows, measured: every answer */
    double link_bps;                 /* 0: infinite */
    struct latency_gamma comp, comm; /* dsag */
    int slow;                        /* dsag: the burst chain's state */
    struct straggle delays;
    struct aia_rng rng;
};

/* The times of one answer, in seconds; delay is INFINITY when the worker
 * hangs (the answer never arrives). */
struct latency_draw {
    double down, compute, delay, up;
    int corrupt; /* stragglers.corrupt: the answer arrives malformed */
};

/* The rows of the simulate and simulate.dsag sections (job_keys.h; job.c
 * binds them into job->simulate). */
extern const struct job_key latency_keys_simulate[], latency_keys_dsag[];

/* simulate.dsag.preset */
enum {
    LATENCY_PRESET_NONE = 0,
    LATENCY_PRESET_PAPER = 1,
    LATENCY_PRESET_HARSH = 2
};

/* Fill the simulate.dsag keys the job does not give (v, the section's
 * values) from sim->preset; 0, or -1 with err when there is none and
 * compute_ms is not given. */
int latency_preset(struct job_simulate *sim, const struct aia_value *v,
                   struct aia_error *err);

/* The model of worker w (pool index) of rank rank (whose draws of the
 * stragglers section it makes, as that rank does under mpirun) holding
 * rows rows; row_s: compute seconds per row (simulate.row_us, or
 * measured).  The worker's DSAG parameters are drawn here, from its own
 * stream, so they do not depend on the pool's size. */
void latency_init(struct latency *l, const struct job *job, int w, int rank,
                  size_t rows, double row_s);

/* The times of the worker's next answer to a query of qbytes bytes,
 * answered with abytes bytes (as they travel: codecs change them), whose
 * step read work times its partition's rows (a sub-partition, a batch,
 * several local passes): the compute time scales with it. */
void latency_next(struct latency *l, size_t qbytes, size_t abytes, double work,
                  struct latency_draw *d);

/* Seconds for bytes to cross one link of l (latency + bytes/bandwidth). */
double latency_trip(const struct latency *l, size_t bytes);

/* A Gamma variate (Marsaglia and Tsang), from g. */
double latency_gamma_draw(struct aia_rng *g, struct latency_gamma d);

/* The Gamma of mean and coefficient of variation cv (> 0). */
struct latency_gamma latency_gamma_of(double mean, double cv);

/* A log-normal variate whose mean is mean and whose log has standard
 * deviation sigma. */
double latency_lognormal(struct aia_rng *g, double mean, double sigma);

#endif
