/* shutdown.c - the end of a run: the pool is stopped (STOP down, every
 * goodbye collected within pool.shutdown_timeout), then let go (FINISH
 * says whether MPI_Finalize can be called) once the report is out; a
 * worker declared dead (silent past pool.dead_after during the run) or
 * that never stops is never waited on.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bell.h"
#include "coord.h"
#include "core/host.h"
#include "poll.h"
#include "record/report.h"
#include "run.h"
#include "shard.h"
#include "core/util.h"
#include "core/wire.h"

void shutdown_let_go(struct coord *c, int w)
{
    proto_silent(&c->l.p, w);
    c->listen[w] = 0;
    if (c->sreq[w] != MPI_REQUEST_NULL)
        MPI_Request_free(&c->sreq[w]);
}

/* Worker w was declared dead (lead_reap): it is never waited on again,
 * its requests are let go (a send's buffer stays pinned, as MPI may still
 * read it), and the shutdown does not wait for it. */
static void let_dead_go(struct lead *l, int w)
{
    struct coord *c = (struct coord *)l;
    c->bye[w] = 1;
    shutdown_let_go(c, w);
    run_incomplete = 1;
}

double shutdown_reap(struct coord *c, double now)
{
    return lead_reap(&c->l, now, let_dead_go);
}

/* STOP buffers that sends to ranks let go may still read: reachable from
 * here until the process exits (it does not finalize). */
static struct wire_hdr *volatile lent_stop;

/* Tell every rank still there whether to call MPI_Finalize: it waits for
 * every rank, so when one is dead or hung nobody calls it.  Sent once the
 * report is out: ranks that leave without finalizing make mpirun end the
 * job, this rank included.  The STOP buffers are reused for the message:
 * their sends have completed. */
/* Some rank was declared dead or never stopped: it may still run (a
 * frozen worker), so MPI_Finalize cannot be called and Open MPI would
 * report rank 0 "exiting improperly" with exit status 1, as if the run
 * had failed.  Say plainly what happened and end the job with the status
 * the README gives this case (RUN_INCOMPLETE; a failed run keeps its
 * own).  Under mpirun --enable-recovery a rank may leave without
 * MPI_Finalize and the job still ends with 0: nothing is done then. */
#define LEFT_BEHIND_DRAIN_S 0.5

static int mpi_left(struct lead *l, int w)
{
    return proto_lost_worker(&l->p, w) || !((struct coord *)l)->bye[w];
}

/* The first shard rank lost (shard.c), or 0. */
static int lost_shard(const struct coord *c)
{
    for (int r = 1; r < c->l.s->shards; r++)
        if (shard_lost(c, r))
            return r;
    return 0;
}

static void left_behind(struct coord *c)
{
    const char *rec = getenv("OMPI_MCA_orte_enable_recovery");
    int shard = lost_shard(c);
    /* (MPI_Abort there ends rank 0 alone, and mpirun with status 0) */
    if (rec && strcmp(rec, "1") == 0)
        return;
    lead_left_behind(&c->l, mpi_left);
    if (shard)
        host_error("the run ended (its outputs above are complete), but "
                   "shard rank %d was lost and may still be running: the "
                   "job cannot end normally, so it is aborted with exit "
                   "status %d",
                   shard, c->l.status);
    /* the checkpoint's lock too is let go: the process ends here */
    record_free(&c->l.r);
    fflush(stdout);
    fflush(stderr);
    /* stdout reaches the user through mpirun, which stops reading it when
     * the job is taken down: give it time to read what was written */
    util_sleep(LEFT_BEHIND_DRAIN_S);
    MPI_Abort(MPI_COMM_WORLD, c->l.status);
}

void shutdown_finish(struct coord *c)
{
    const struct setup *s = c->l.s;
    const int *of_rank = c->of_rank;
    struct wire_hdr *buf = c->stop;
    int others = s->size - 1;
    if (!buf)
        return; /* the pool was not shut down: a signal stopped the run */
    if (run_incomplete)
        left_behind(c); /* before any rank is let go to leave first */
    fflush(stdout);
    fflush(stderr);
    MPI_Request *fr = malloc((size_t)others * sizeof *fr);
    if (!fr) {
        host_error("out of memory while stopping; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        fr[r - 1] = MPI_REQUEST_NULL;
        buf[r - 1] =
            (struct wire_hdr){.magic = WIRE_MAGIC,
                              .kind = WIRE_FINISH,
                              .status = (uint16_t)c->l.status,
                              .flags = run_incomplete ? WIRE_NO_FINALIZE : 0};
        bell_isend(&buf[r - 1], sizeof *buf, r, TAG_CTRL, &fr[r - 1]);
        if ((w >= 0 && proto_lost_worker(&c->l.p, w)) || shard_lost(c, r))
            MPI_Request_free(&fr[r - 1]); /* never waited on */
    }
    /* every receiver is waiting for it: this completes at once (one
     * MPI_Wait each: MPICH's MPI_STATUSES_IGNORE passed to MPI_Waitall's
     * array parameter fails gcc 12's -Wstringop-overflow) */
    for (int r = 0; r < others; r++)
        MPI_Wait(&fr[r], MPI_STATUS_IGNORE);
    free(fr);
    /* the STOP buffers of ranks let go stay allocated, MPI may read them */
    if (run_incomplete)
        lent_stop = c->stop;
    else
        free(c->stop);
    c->stop = NULL;
    free(c->of_rank);
    c->of_rank = NULL;
    if (run_incomplete)
        run_no_finalize = 1;
}

/* Stop every other rank and collect the pool's goodbyes (finish then
 * lets them go). */
void shutdown_pool(struct coord *c)
{
    const struct setup *s = c->l.s;
    int others = s->size - 1;
    struct wire_hdr *stop = c->stop = calloc((size_t)others, sizeof *stop);
    MPI_Request *sr = malloc((size_t)others * sizeof *sr);
    int *of_rank = c->of_rank = calloc((size_t)s->size, sizeof *of_rank);
    if (!stop || !sr || !of_rank) {
        host_error("out of memory while stopping; aborting the job");
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    for (int w = 0; w < c->l.n; w++)
        of_rank[s->ranks[w]] = w + 1;
    int tree = c->l.job->pool.topology == JOB_TREE;
    /* with a shard rank lost, workers wait for no slice of a query */
    uint32_t flags = lost_shard(c) ? WIRE_NO_FINALIZE : 0;
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        sr[r - 1] = MPI_REQUEST_NULL;
        if (tree && w >= 0 && !c->l.p.direct[w])
            continue; /* its parent passes the STOP on */
        stop[r - 1] = (struct wire_hdr){.magic = WIRE_MAGIC,
                                        .kind = WIRE_STOP,
                                        .status = (uint16_t)c->l.status,
                                        .flags = flags,
                                        .seq = w >= 0 ? c->l.st[w].queries +
                                                         c->l.st[w].evals
                                                   : 0};
        /* in a tree the STOP goes down with the queries, behind them */
        bell_isend(&stop[r - 1], sizeof *stop, r,
                   tree && w >= 0 ? TAG_QUERY : TAG_CTRL, &sr[r - 1]);
        /* a worker declared dead may be alive after all (slow): tell it
         * to stop too, but never wait on it */
        if ((w >= 0 && proto_lost_worker(&c->l.p, w)) || shard_lost(c, r))
            MPI_Request_free(&sr[r - 1]);
    }
    /* A worker in a long step is alive and computing: it reads the STOP
     * only when its step returns, however long it has been busy, and
     * nothing tells it from one whose step never returns.  Every worker
     * gets the whole shutdown_timeout (a worker in an injected delay
     * answers the STOP at once). */
    double deadline = util_now() + c->l.job->pool.shutdown_timeout;
    int byes = 0;
    for (int w = 0; w < c->l.n; w++)
        byes += c->bye[w];
    while (byes < c->l.n) {
        int k = listen_poll(c, deadline);
        if (k <= 0)
            break;
        for (int i = 0; i < k; i++) {
            coord_take(c, c->idx[i], &c->mst[i], util_now());
            byes += c->bye[c->idx[i]];
        }
    }
    if (byes < c->l.n) {
        char list[256] = "";
        size_t used = 0;
        for (int w = 0; w < c->l.n; w++)
            if (!c->bye[w] && used < sizeof list - 12)
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%d", used ? ", " : "", s->ranks[w]);
        if (guard_signal) /* listen_poll returns at once after one */
            host_error("rank(s) %s had not stopped when signal %d came; "
                       "the run ends without them",
                       list, (int)guard_signal);
        else
            host_error("rank(s) %s did not stop within %g s "
                       "(pool.shutdown_timeout); the run ends without them",
                       list, c->l.job->pool.shutdown_timeout);
        run_incomplete = 1;
        /* their requests are let go, never waited on */
        for (int w = 0; w < c->l.n; w++)
            if (!c->bye[w])
                shutdown_let_go(c, w);
    }
    /* the STOPs to ranks that stopped, and the queries they took */
    for (int r = 1; r < s->size; r++) {
        int w = of_rank[r] - 1;
        if (sr[r - 1] == MPI_REQUEST_NULL)
            continue;
        if (w >= 0 && !c->bye[w])
            MPI_Request_free(&sr[r - 1]);
        else
            MPI_Wait(&sr[r - 1], MPI_STATUS_IGNORE);
    }
    for (int w = 0; w < c->l.n; w++)
        if (c->sreq[w] != MPI_REQUEST_NULL)
            MPI_Wait(&c->sreq[w], MPI_STATUS_IGNORE);
    free(sr);
    /* every answer slice is taken: the shard ranks' counts are final */
    shard_bytes(c);
}

/* Stopped by a signal: mpirun takes the job down (SIGKILL follows within
 * a second), so save what can be saved and leave without the shutdown. */
void shutdown_signal(struct coord *c)
{
    if (record_iteration(&c->l.r, RECORD_LAST, util_now()) < 0)
        coord_fail(c, "%s", c->l.r.err.text);
    if (record_checkpoint(&c->l.r, 1, util_now()) < 0)
        coord_fail(c, "%s", c->l.r.err.text);
    host_error(
        "stopped by signal %d (when a worker dies, mpirun ends the "
        "job this way)%s%s%s",
        (int)guard_signal, c->l.job->output.checkpoint ? "; checkpoint in " : "",
        c->l.job->output.checkpoint ? c->l.job->output.checkpoint : "",
        c->l.job->output.checkpoint ? ": continue with aiarun --resume" : "");
    c->l.status = RUN_FAILED;
    run_no_finalize = 1;
}

void shutdown_report(struct coord *c)
{
    if (c->cur < 0) { /* failed before the first query: nothing to report */
        if (record_close(&c->l.r) < 0)
            coord_fail(c, "%s", c->l.r.err.text);
        return;
    }
    lead_report(&c->l);
}
