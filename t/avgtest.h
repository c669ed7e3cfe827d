/* avgtest.h - what the tests of the averaging plugin (t/average.c,
 * t/average-state.c) share: a pool of W workers over lrmse of N columns,
 * answers given to the coordinator by hand, and create alone to check a
 * job's parameters. */
#ifndef AIARUN_AVGTEST_H
#define AIARUN_AVGTEST_H

#include <aiarun/aiarun.h>

#include "algtest.h"
#include "plugtest.h"

#define W 4
#define N 8

/* The problem: lrmse of 800 rows of N columns, loaded by avgtest_begin. */
extern struct plugtest Pb;

void avgtest_begin(void);
void avgtest_end(void);

/* The coordinator absorbs answer a as worker w's, holding rows of 4. */
void give(struct algtest *t, int w, size_t rows, const double *a);

/* The coordinator absorbs a as worker w's answer to the query of round
 * sent, in the current round. */
void give_at(struct algtest *t, int w, size_t rows, const double *a,
             uint64_t sent);

/* create on the coordinator of a pool of W with these parameters: its
 * status, and the message in err. */
int create(const char *yaml, struct aia_error *err);

#endif
