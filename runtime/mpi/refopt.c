/* refopt.c - the reference optimum's sums over MPI (session/refopt.h):
 * rank 0 runs Newton-CG, every request is broadcast and the workers'
 * row-weighted parts reduced to it.  Collective: every rank calls
 * refopt_mpi. */
#include <config.h>

#include "refopt_mpi.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/newton.h>

#include "core/host.h"
#include "core/util.h"
#include "session/refopt.h"

struct mpi_sum {
    struct setup *s;
    unsigned long long dim;
    double *msg;  /* 1 + the query: a command (1: sum, 0: done), then q */
    double *part; /* REFOPT_PART_LEN */
};

/* One request, on every rank: the workers' parts summed on rank 0. */
static void exchange(struct mpi_sum *ms, double *sum)
{
    size_t dim = (size_t)ms->dim;
    struct setup *s = ms->s;
    struct aia_error e = {""};
    MPI_Bcast(ms->msg, (int)AIA_REQ_QUERY_LEN(dim) + 1, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
    if (ms->msg[0] == 0)
        return;
    refopt_part(s->prob, s->windex >= 0 ? s->prob_s : NULL, dim, ms->msg + 1,
                ms->part, &e);
    if (e.text[0])
        host_log(AIA_LOG_INFO, "problem '%s': the reference optimum: %s",
                 s->prob->h.name, util_error_text(&e));
    MPI_Reduce(ms->part, sum, (int)REFOPT_PART_LEN(dim), MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
}

static int coordinator_sum(void *ctx, const double *q, double *sum,
                           struct aia_error *err)
{
    struct mpi_sum *ms = ctx;
    (void)err;
    ms->msg[0] = 1;
    memcpy(ms->msg + 1, q, AIA_REQ_QUERY_LEN(ms->dim) * sizeof *q);
    exchange(ms, sum);
    return 0;
}

int refopt_mpi(struct setup *s, int active, int by_workers,
               struct aia_error *err)
{
    int want = s->rank == 0 && active && refopt_wanted(s, by_workers);
    struct mpi_sum ms = {.s = s, .dim = s->rank == 0 ? s->dim : 0};
    int rc = 0;
    MPI_Bcast(&want, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!want)
        return 0;
    MPI_Bcast(&ms.dim, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    size_t dim = (size_t)ms.dim;
    ms.msg = calloc(AIA_REQ_QUERY_LEN(dim) + 1, sizeof *ms.msg);
    ms.part = calloc(REFOPT_PART_LEN(dim), sizeof *ms.part);
    if (!ms.msg || !ms.part) {
        /* the broadcasts cannot be joined without the buffers */
        host_error("out of memory for the reference optimum's requests of "
                   "dimension %zu; aborting",
                   dim);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    if (s->rank == 0) {
        double t0 = MPI_Wtime();
        if (!(s->ref = calloc(1, sizeof *s->ref)))
            rc = aia_seterr(err, "out of memory");
        else
            rc = refopt_solve(s->ref, dim, coordinator_sum, &ms, err);
        ms.msg[0] = 0; /* done: the workers leave their loop */
        exchange(&ms, NULL);
        if (rc == 0 && s->ref->known)
            host_log(AIA_LOG_INFO, "optimum %.12g found in %.2f s by %s",
                     s->ref->f, MPI_Wtime() - t0, s->ref->how);
    } else {
        do /* the reduction's result is rank 0's only */
            exchange(&ms, NULL);
        while (ms.msg[0] != 0);
    }
    free(ms.msg);
    free(ms.part);
    return rc;
}
