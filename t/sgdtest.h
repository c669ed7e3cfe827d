/* sgdtest.h - what the tests of the SGD plugin (t/sgd.c, t/sgd-table.c)
 * share: a pool of W workers over lrmse of 800 rows of N columns,
 * coordinators of sgd with a job's parameters, and exact comparisons. */
#ifndef AIARUN_SGDTEST_H
#define AIARUN_SGDTEST_H

#include <aiarun/aiarun.h>

#include "algtest.h"
#include "plugtest.h"

#define W 4
#define N 8

/* The sgd plugin of the case at hand, and the problem with its plugin,
 * loaded by sgdtest_begin. */
extern struct plugtest A, Pb;
extern const struct aia_problem_plugin *prob;

void sgdtest_begin(void);
void sgdtest_end(void);

/* A rank's states, opened by hand. */
struct rank {
    void *prob, *alg;
};

/* The coordinator of a pool of W for sgd with these parameters. */
void coordinator(struct algtest *t, const char *yaml);

void coordinator_close(struct algtest *t);

/* sgd with these parameters loaded into A, and the problem opened on a
 * coordinator by hand (c->prob; c->alg NULL), *ctx the context to create
 * sgd in: the plugin, for a test that sets the context itself. */
const struct aia_algorithm_plugin *
coordinator_by_hand(const char *yaml, struct aia_context *ctx, struct rank *c);

/* x == c * g, entry by entry (every value in these tests is exact). */
int is_multiple(const double *x, double c, const double *g);

/* Rounds of every worker answering, one lagging lag rounds: the gap. */
double converge(const char *yaml, int rounds, int lagging, int lag);

#endif
