/* benchlib.h - what the benchmark programs share: a clock, sleeps, and a
 * problem plugin opened by hand (dlopen, its parameters bound from
 * key=value strings, a context of our own), so that a baseline works on
 * exactly the rows aiarun's workers hold. */
#ifndef AIARUN_BENCHLIB_H
#define AIARUN_BENCHLIB_H

#include <stddef.h>

#include <aiarun/aiarun.h>

/* Monotonic clock, seconds. */
double bench_now(void);

/* Sleep s seconds (nanosleep; call bench_sleep_setup first to get aiarun's
 * timer slack of 1 ns). */
void bench_sleep(double s);
void bench_sleep_setup(void);

/* A problem plugin, dlopened. */
struct bench_problem {
    void *dl;
    const struct aia_problem_plugin *p;
    struct aia_value *args; /* in the order of the plugin's table */
    struct aia_host host;
};

/* Load the problem plugin at path and bind its parameters from kv, an
 * array of nkv "key=value" strings (the others take their defaults).
 * 0, or -1 after printing why on stderr. */
int bench_problem_load(struct bench_problem *bp, const char *path,
                       char *const *kv, int nkv);

/* Open part index of count (AIA_PART_ALL: every row) under the block
 * scheme with weights (NULL: equal).  The state, or NULL after printing
 * why. */
void *bench_problem_open(struct bench_problem *bp, uint64_t seed, int rank,
                         int index, int count, const double *weights);

void bench_problem_unload(struct bench_problem *bp);

/* Parse "a,b,c" into at most max doubles; the count, or -1. */
int bench_parse_list(const char *s, double *out, int max);

#endif
