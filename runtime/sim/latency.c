/* latency.c - the simulate section and the latency models of --simulate:
 * compute per row or measured, the DSAG trace model (Gamma times whose
 * means and variances are log-normal across workers, with bursts), links
 * of a latency and a bandwidth, and the stragglers section's delays. */
#include <config.h>

#include "latency.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "conf/job_keys.h"
#include "conf/params.h"

/* Streams of the job's seed: a worker's draws are its own. */
#define STREAM_LATENCY 0x4c4154454e430000ull

/* The simulate section's rows, into struct job_simulate (job.c binds
 * them at job->simulate). */
#define SIM(field) offsetof(struct job_simulate, field)

static const struct job_name compute_names[] = {{"rows", LATENCY_ROWS},
                                                {"measured", LATENCY_MEASURED},
                                                {"dsag", LATENCY_DSAG},
                                                {NULL, 0}};

static const struct job_name coordinator_names[] = {
    {"model", LATENCY_COORD_MODEL},
    {"measured", LATENCY_COORD_MEASURED},
    {"none", LATENCY_COORD_NONE},
    {NULL, 0}};

const struct job_key latency_keys_simulate[] = {
    {{"compute", AIA_ENUM, "rows",
      "a worker's compute time per answer: rows: row_us per row its step "
      "reads; measured: the plugin's real worker step, timed once before "
      "the run (machine-dependent), per row read; dsag: drawn from "
      "simulate.dsag, times the share of its rows the step reads",
      "rows|measured|dsag", 0, 0},
     .kind = JF_ENUM,
     .off = SIM(compute),
     .names = compute_names,
     JOB_NODE(SIM(compute_node))},
    {{"row_us", AIA_DOUBLE, "1",
      "compute: rows: microseconds per row a worker's step reads", NULL, 0,
      1e12},
     .kind = JF_DOUBLE,
     .off = SIM(row_s),
     .scale = 1e-6},
    {{"latency_us", AIA_DOUBLE, "50",
      "one-way latency of every message (a query down, an answer up)", NULL, 0,
      1e12},
     .kind = JF_DOUBLE,
     .off = SIM(latency_s),
     .scale = 1e-6},
    {{"bandwidth_mbps", AIA_DOUBLE, "0",
      "megabits per second of each worker's link; a message's bytes (as its "
      "codec makes them) take bytes/bandwidth (0: stragglers.link_mbps, or "
      "an infinite bandwidth)",
      NULL, 0, 1e12},
     .kind = JF_DOUBLE,
     .off = SIM(bandwidth_bps),
     .scale = 1e6},
    {{"coordinator", AIA_ENUM, "model",
      "rank 0's own work on the virtual clock (answers queue while it "
      "works): model: coordinator_us a message and coordinator_ns a "
      "double; measured: its real wall time, call by call "
      "(machine-dependent); none: it takes no time",
      "model|measured|none", 0, 0},
     .kind = JF_ENUM,
     .off = SIM(coordinator),
     .names = coordinator_names},
    {{"coordinator_us", AIA_DOUBLE, "1",
      "coordinator: model: microseconds of rank 0's work for each answer "
      "it takes and each query it sends",
      NULL, 0, 1e12},
     .kind = JF_DOUBLE,
     .off = SIM(coord_msg_s),
     .scale = 1e-6},
    {{"coordinator_ns", AIA_DOUBLE, "1",
      "coordinator: model: nanoseconds of rank 0's work for each double of "
      "an answer it absorbs and of a query it writes",
      NULL, 0, 1e12},
     .kind = JF_DOUBLE,
     .off = SIM(coord_double_s),
     .scale = 1e-9},
    {{"cores", AIA_INT, "0",
      "the cores the run's ranks share, as on one node (0: a core for "
      "every rank, each on a link of its own): a message's bytes "
      "(bandwidth_mbps) are then its receiver's to copy, a query's as part "
      "of its worker's compute, an answer's as part of rank 0's work, one "
      "after another; the workers' compute shares the cores with rank 0's "
      "work (each of k running ranks at cores/k of its speed), and a piece "
      "of rank 0's work takes k/cores times as long when k ranks run as it "
      "starts; not in a tree or with pool.shards",
      NULL, 0, 1000000},
     .kind = JF_INT,
     .off = SIM(cores),
     JOB_NODE(SIM(cores_node))},
    JOB_KEYS_END,
};

static const struct job_name preset_names[] = {{"none", LATENCY_PRESET_NONE},
                                               {"paper", LATENCY_PRESET_PAPER},
                                               {"harsh", LATENCY_PRESET_HARSH},
                                               {NULL, 0}};

/* The presets' values of the keys below, in their order (compute_ms to
 * slow_factor); a key the job gives wins.  paper: the DSAG paper's trace
 * model with its appendix's 1.103x bursts (the mean, spreads and chain
 * are this file's choices); harsh: etc/dsag-sim.yaml's, a wider spread
 * and 5x bursts. */
static const double preset_values[][10] = {
    [LATENCY_PRESET_PAPER] = {20, 0.2, 0.1, 0.2, 0, 0.2, 0.1, 0.02, 0.1, 1.103},
    [LATENCY_PRESET_HARSH] = {20, 0.3, 0.1, 0.2, 0, 0.2, 0.1, 0.02, 0.1, 5},
};

int latency_preset(struct job_simulate *sim, const struct aia_value *v,
                   struct aia_error *err)
{
    const struct aia_value *c = aia_arg(v, "compute_ms");
    if (sim->preset == LATENCY_PRESET_NONE) {
        if (!c->given)
            return aia_seterr(err, "simulate.dsag: give compute_ms, or a "
                                   "preset (paper or harsh)");
        return 0;
    }
    double *field[] = {&sim->comp_mean,  &sim->comp_spread, &sim->comp_cv,
                       &sim->cv_spread,  &sim->comm_mean,   &sim->comm_spread,
                       &sim->comm_cv,    &sim->p_slow,      &sim->p_fast,
                       &sim->slow_factor};
    const double *val = preset_values[sim->preset];
    for (int i = 0; i < 10; i++) {
        const struct aia_value *k = aia_arg(v, latency_keys_dsag[i + 1].p.name);
        if (!k->given)
            *field[i] = i == 0 || i == 4 ? val[i] * 1e-3 : val[i];
    }
    return 0;
}

const struct job_key latency_keys_dsag[] = {
    {{"preset", AIA_ENUM, "none",
      "the other keys' defaults: paper: the DSAG paper's model, bursts "
      "1.103x as slow as its appendix has them (compute_ms 20, spread 0.2, "
      "p_slow 0.02 and p_fast 0.1 are aiarun's choices, not the paper's "
      "fits); harsh: etc/dsag-sim.yaml's (spread 0.3, 5x bursts); none: "
      "compute_ms is required",
      "none|paper|harsh", 0, 0},
     .kind = JF_ENUM,
     .off = SIM(preset),
     .names = preset_names},
    {{"compute_ms", AIA_DOUBLE, "0",
      "mean over workers of a worker's mean compute time (required without "
      "a preset)",
      NULL, 0, 1e12},
     .kind = JF_DOUBLE,
     .off = SIM(comp_mean),
     .scale = 1e-3},
    {{"compute_spread", AIA_DOUBLE, "0.2",
      "standard deviation of the log of a worker's mean compute time across "
      "workers (log-normal)",
      NULL, 0, 10},
     .kind = JF_DOUBLE,
     .off = SIM(comp_spread)},
    {{"compute_cv", AIA_DOUBLE, "0.1",
      "mean over workers of the coefficient of variation of a worker's "
      "compute time (its times are Gamma)",
      NULL, 1e-6, 100},
     .kind = JF_DOUBLE,
     .off = SIM(comp_cv)},
    {{"cv_spread", AIA_DOUBLE, "0.2",
      "standard deviation of the log of a worker's coefficients of variation "
      "across workers (log-normal)",
      NULL, 0, 10},
     .kind = JF_DOUBLE,
     .off = SIM(cv_spread)},
    {{"comm_ms", AIA_DOUBLE, "0",
      "mean over workers of a worker's mean communication time per answer, "
      "added to the links' (0: none)",
      NULL, 0, 1e12},
     .kind = JF_DOUBLE,
     .off = SIM(comm_mean),
     .scale = 1e-3},
    {{"comm_spread", AIA_DOUBLE, "0.2", "as compute_spread, for communication",
      NULL, 0, 10},
     .kind = JF_DOUBLE,
     .off = SIM(comm_spread)},
    {{"comm_cv", AIA_DOUBLE, "0.1", "as compute_cv, for communication", NULL,
      1e-6, 100},
     .kind = JF_DOUBLE,
     .off = SIM(comm_cv)},
    {{"p_slow", AIA_DOUBLE, "0",
      "chance, per answer, that a worker enters a burst", NULL, 0, 1},
     .kind = JF_DOUBLE,
     .off = SIM(p_slow)},
    {{"p_fast", AIA_DOUBLE, "0.5", "chance, per answer, that a burst ends",
      NULL, 0, 1},
     .kind = JF_DOUBLE,
     .off = SIM(p_fast)},
    {{"slow_factor", AIA_DOUBLE, "4",
      "compute times in a burst are this many times longer", NULL, 1, 1e9},
     .kind = JF_DOUBLE,
     .off = SIM(slow_factor)},
    JOB_KEYS_END,
};

double latency_lognormal(struct aia_rng *g, double mean, double sigma)
{
    /* the log's mean is chosen so that the variate's mean is mean */
    return mean * exp(sigma * aia_rng_normal(g) - sigma * sigma / 2);
}

struct latency_gamma latency_gamma_of(double mean, double cv)
{
    return (struct latency_gamma){1 / (cv * cv), mean * cv * cv};
}

double latency_gamma_draw(struct aia_rng *g, struct latency_gamma d)
{
    if (!(d.scale > 0))
        return 0;
    /* shape < 1: G(shape) = G(shape + 1) U^(1/shape) */
    double boost = 1, k = d.shape;
    if (k < 1) {
        boost = pow(aia_rng_uniform(g) + 0x1.0p-54, 1 / k);
        k += 1;
    }
    double dd = k - 1.0 / 3, c = 1 / sqrt(9 * dd);
    for (;;) {
        double x, v;
        do {
            x = aia_rng_normal(g);
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        double u = aia_rng_uniform(g);
        if (u < 1 - 0.0331 * x * x * x * x ||
            log(u) < 0.5 * x * x + dd * (1 - v + log(v)))
            return boost * dd * v * d.scale;
    }
}

void latency_init(struct latency *l, const struct job *job, int w, int rank,
                  size_t rows, double row_s)
{
    const struct job_simulate *sim = &job->simulate;
    memset(l, 0, sizeof *l);
    l->sim = sim;
    aia_rng_seed(&l->rng, job->seed, STREAM_LATENCY + (uint64_t)w);
    straggle_init(&l->delays, &job->stragglers, job->seed, rank);
    l->compute_s = (double)rows * row_s;
    l->link_bps =
        sim->bandwidth_bps > 0 ? sim->bandwidth_bps : job->stragglers.link_bps;
    if (sim->compute != LATENCY_DSAG)
        return;
    double mean = latency_lognormal(&l->rng, sim->comp_mean, sim->comp_spread);
    double cv = latency_lognormal(&l->rng, sim->comp_cv, sim->cv_spread);
    l->comp = latency_gamma_of(mean, cv);
    mean = latency_lognormal(&l->rng, sim->comm_mean, sim->comm_spread);
    cv = latency_lognormal(&l->rng, sim->comm_cv, sim->cv_spread);
    l->comm = latency_gamma_of(mean, cv);
}

double latency_trip(const struct latency *l, size_t bytes)
{
    double t = l->sim->latency_s;
    if (l->link_bps > 0)
        t += (double)bytes * 8 / l->link_bps;
    return t;
}

void latency_next(struct latency *l, size_t qbytes, size_t abytes, double work,
                  struct latency_draw *d)
{
    d->down = latency_trip(l, qbytes);
    d->up = latency_trip(l, abytes);
    d->compute = l->compute_s * work;
    d->delay = straggle_next(&l->delays);
    d->corrupt = straggle_corrupt(&l->delays);
    if (l->sim->compute != LATENCY_DSAG) {
        d->compute *= l->delays.factor;
        return;
    }
    /* the chain moves first, so a burst slows the answer that began it;
     * one uniform a step keeps the stream aligned with the answers */
    double u = aia_rng_uniform(&l->rng);
    if (l->slow ? u < l->sim->p_fast : u < l->sim->p_slow)
        l->slow = !l->slow;
    d->compute = latency_gamma_draw(&l->rng, l->comp) * work;
    if (l->slow)
        d->compute *= l->sim->slow_factor;
    d->up += latency_gamma_draw(&l->rng, l->comm);
    d->compute *= l->delays.factor; /* stragglers.slow */
}
