/* gather.c - what every rank learns of the problem's rows before the run
 * (session/facts.h says what the facts are): the combined smoothness L
 * (step: auto), each worker's row count, and, when the workers hold the
 * rows, the sum of their summaries for the coordinator's optimum (and
 * the workers' own figures, with AIA_PROBLEM_COMBINE_ALL).
 * Collective: every rank calls each step. */
#include <config.h>

#include "gather.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/util.h"
#include "session/facts.h"

/* Every rank learns L of the whole problem: the row-weighted mean of the
 * workers' own (f = sum_i (m_i/m) f_i, so it bounds f's), or 0 when a
 * worker's problem cannot tell.  The coordinator's rows are not used.
 * The power iteration costs up to a few hundred gradients of a worker's
 * rows, so it runs only when the algorithm asks (step: auto), or when a
 * divergence message would need it and the coordinator cannot find it
 * itself (bound: the detector is on and the rows are on the workers
 * only); otherwise facts_smoothness finds L when a divergence message
 * needs it. */
int facts_gather(struct setup *s, int active, int bound, struct aia_error *err)
{
    /* sums of rows and rows * L, the count of unknown L, least, largest */
    double in[3] = {0, 0, 0}, sum[3], lo = INFINITY, hi = 0, least, most;
    (void)err;
    if (active && s->windex >= 0)
        facts_part(s->prob, s->prob_s, facts_wanted(s) || bound, in, &lo,
                   &hi);
    MPI_Allreduce(in, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&lo, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hi, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    facts_set(s, sum, least, most);
    return 0;
}

int facts_combine(struct setup *s, struct aia_error *err)
{
    unsigned long long len = 0;
    if (!s->prob->summary_len)
        return 0;
    if (s->rank == 0)
        len = s->prob->summary_len(s->prob_s);
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (len == 0)
        return 0;
    double *mine = calloc((size_t)len, sizeof *mine);
    double *sum = s->rank == 0 ? calloc((size_t)len, sizeof *sum) : NULL;
    int rc = 0;
    if (!mine || (s->rank == 0 && !sum)) {
        /* the reduction cannot be joined without the buffers */
        host_error("out of memory for a summary of %llu values; aborting", len);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    struct aia_error e = {""};
    if (s->windex >= 0 && s->prob->summarize(s->prob_s, mine, &e) < 0) {
        /* summed as NaN: the coordinator then says the optimum is unknown */
        for (size_t i = 0; i < len; i++)
            mine[i] = NAN;
        host_log(AIA_LOG_INFO, "problem '%s': summarize: %s", s->prob->h.name,
                 util_error_text(&e));
    }
    MPI_Reduce(mine, sum, (int)len, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int all = (s->prob->flags & AIA_PROBLEM_COMBINE_ALL) != 0;
    if (all) { /* the workers combine the same sum (mine is free again) */
        if (s->rank == 0)
            memcpy(mine, sum, (size_t)len * sizeof *mine);
        MPI_Bcast(mine, (int)len, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (s->rank == 0 || (all && s->windex >= 0)) {
        err->text[0] = '\0';
        if (s->prob->combine(s->prob_s, s->rank == 0 ? sum : mine, err) < 0) {
            e = *err;
            rc = aia_seterr(err, "problem '%s': combine: %s", s->prob->h.name,
                            util_error_text(&e));
        }
    }
    free(mine);
    free(sum);
    return rc;
}

/* The coordinator learns how many rows each worker holds. */
int facts_rows(struct setup *s, struct aia_error *err)
{
    unsigned long long mine = s->windex >= 0 ? s->prob->rows(s->prob_s) : 0;
    unsigned long long *all = NULL;
    int failed = 0;
    if (s->rank == 0) {
        all = calloc((size_t)s->size, sizeof *all);
        s->rows = calloc((size_t)s->nworkers, sizeof *s->rows);
        failed = !all || !s->rows;
    }
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
               0, MPI_COMM_WORLD);
    for (int w = 0; all && s->rows && w < s->nworkers; w++) {
        s->rows[w] = (size_t)all[s->ranks[w]];
        s->total_rows += s->rows[w];
    }
    free(all);
    return failed ? aia_seterr(err, "out of memory") : 0;
}
