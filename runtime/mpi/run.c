/* run.c - set a job up on every rank, run it, take it down.
 *
 * Every step that can fail on some ranks only is followed by agree(): all
 * ranks learn whether any failed, the lowest failing rank prints its
 * message, and every rank leaves through MPI_Finalize with the same
 * status.  Nothing here can leave a rank waiting for another.
 */
#include <config.h>

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/checkpoint.h"
#include "core/codec.h"
#include "coord.h"
#include "deliver.h"
#include "eval.h"
#include "gather.h"
#include "refopt_mpi.h"
#include "conf/freeargs.h"
#include "core/host.h"
#include "conf/params.h"
#include "poll.h"
#include "run.h"
#include "shard.h"
#include "session/session.h"
#include "core/util.h"
#include "data/data.h"
#include "watchdog.h"

#define MAX_JOB_FILE (16u << 20)
#define FINALIZE_SECONDS 10

int run_no_finalize;
int run_incomplete;
static volatile sig_atomic_t finalize_status;

/* 0 when every rank succeeded; otherwise -1 on every rank, after the
 * lowest failing rank printed its error (the others print theirs with -v). */
static int agree(const struct setup *s, int failed,
                 const struct aia_error *err)
{
    int me = failed ? s->rank : INT_MAX, first, count;
    watchdog_phase(NULL); /* from here on, waiting for the others */
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == INT_MAX)
        return 0;
    MPI_Allreduce(&failed, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (s->rank == first && count > 1)
        host_error("%s (%d more rank%s failed too)", err->text, count - 1,
                   count > 2 ? "s" : "");
    else if (s->rank == first)
        host_error("%s", err->text);
    else if (failed)
        host_log(AIA_LOG_INFO, "%s", err->text);
    return -1;
}

/* Rank 0 reads the job file and every rank gets its bytes, so workers
 * need no shared file system for it. */
static char *share_job_file(const struct setup *s, const char *path,
                            size_t *len, struct aia_error *err)
{
    char *text = NULL;
    long long n = -1;
    if (s->rank == 0 && (text = util_read_file(path, MAX_JOB_FILE, len, err)))
        n = (long long)*len;
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (n < 0) {
        if (s->rank != 0)
            aia_seterr(err, "%s: rank 0 could not read the job file", path);
        return NULL;
    }
    if (s->rank != 0 && !(text = malloc((size_t)n + 1))) {
        /* the broadcast cannot be joined without the buffer */
        host_error("%s: out of memory for the job file; aborting", path);
        MPI_Abort(MPI_COMM_WORLD, RUN_FAILED);
    }
    MPI_Bcast(text, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    text[n] = '\0';
    *len = (size_t)n;
    return text;
}

/* The rows of problem.test: each worker its share, rank 0 none. */
static int load_test(struct setup *s, struct aia_error *err)
{
    const struct job_data *d = &s->job->test;
    char where[256], text[AIA_ERROR_LEN];
    if (!d->path)
        return 0;
    params_where(where, sizeof where, s->job->m->path, d->key);
    if (!eval_by_workers(s))
        return aia_seterr(err, "%s: problem.test: not in a tree (the "
                               "workers evaluate the test rows, and a tree's "
                               "coordinator talks to its children only)",
                          where);
    if (deliver_data(s, d, 0, &s->test, err) < 0) {
        snprintf(text, sizeof text, "%s", err->text);
        return aia_seterr(err, "%s: problem.test: %s", where, text);
    }
    if (s->test.d.cols != s->data.d.cols)
        return aia_seterr(err, "%s: problem.test: %s has %zu features, the "
                               "training rows %zu",
                          where, d->path, s->test.d.cols, s->data.d.cols);
    return 0;
}

/* The rows of problem.data, for a problem that takes them. */
static int load_data(struct setup *s, int active, struct aia_error *err)
{
    watchdog_phase("reading the data");
    const struct job_data *d = &s->job->data;
    if (!d->path)
        return 0;
    if (deliver_data(s, d, !eval_by_workers(s), &s->data, err) < 0) {
        char where[256], text[AIA_ERROR_LEN];
        params_where(where, sizeof where, s->job->m->path, d->key);
        snprintf(text, sizeof text, "%s", err->text);
        return aia_seterr(err, "%s: problem.data: %s", where, text);
    }
    if (load_test(s, err) < 0)
        return -1;
    if (active)
        host_log(AIA_LOG_INFO,
                 "holds %zu of the %zu rows of %s (checksum %016llx)",
                 s->data.d.rows, s->data.d.total_rows, d->path,
                 (unsigned long long)deliver_checksum(&s->data));
    return 0;
}

static int open_problem(struct setup *s, struct aia_error *err)
{
    watchdog_phase("in the problem's open");
    int w = s->rank == 0 ? -1 : s->windex;
    if (session_open(s, w, s->job->data.path ? &s->data.d : NULL, &s->prob_s,
                     err) < 0)
        return -1;
    s->dim = s->prob->dim(s->prob_s);
    if (s->windex >= 0 && s->prob->rows(s->prob_s) == 0) {
        /* the algorithm would refuse it, and be blamed */
        const struct job *job = s->job;
        const struct mnode *n = job->data.path ? job->data.key
                                : mnode_get(job->problem.node, "rows", NULL);
        char where[256];
        params_where(where, sizeof where, job->m->path,
                     n ? n : job->problem.key);
        return aia_seterr(err, "%s: %s: worker %d (rank %d) holds none of "
                               "the problem's rows: give at least one row a "
                               "worker, or fewer workers (pool.workers, "
                               "mpirun -np)",
                          where, job->data.path ? "problem.data" :
                          n ? "problem.rows" : "problem", s->windex + 1,
                          s->rank);
    }
    /* the history's sample: a worker's own, or a tree coordinator's, who
     * evaluates every row itself */
    if (s->job->data.path && (s->windex >= 0) == eval_by_workers(s) &&
        (s->windex >= 0 || s->rank == 0) &&
        session_open_sample(s, w, &s->data.d, err) < 0)
        return -1;
    if (s->windex < 0 || !s->job->test.path)
        return 0;
    /* the same problem on this worker's test rows, for the evaluations */
    if (session_open(s, w, &s->test.d, &s->test_s, err) < 0) {
        char where[256], text[AIA_ERROR_LEN];
        params_where(where, sizeof where, s->job->m->path, s->job->test.key);
        snprintf(text, sizeof text, "%s", util_error_text(err));
        return aia_seterr(err, "%s: problem.test: %s", where, text);
    }
    return 0;
}

/* pool.shards: every rank learns the model's length from rank 0 and
 * splits it alike (session_slices).  Collective. */
static int split_model(struct setup *s, struct aia_error *err)
{
    unsigned long long dim = s->dim;
    if (s->shards <= 1)
        return 0;
    MPI_Bcast(&dim, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    s->dim = (size_t)dim;
    return session_slices(s, s->dim, err);
}

static int create_algorithm(struct setup *s, struct aia_error *err)
{
    watchdog_phase("in the algorithm's create");
    return session_create(s, s->rank == 0 ? -1 : s->windex, s->prob_s,
                          s->job->data.path ? &s->data.d : NULL, &s->alg_s,
                          &s->shape, err);
}

/* The memory the rows will take on each machine, checked before any is
 * allocated by the lowest rank there that has the problem's parameters
 * (job_check_memory).  Collective. */
static int check_memory(struct setup *s, int active, struct aia_error *err)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 0;
    int mine[3] = {s->windex >= 0, s->rank == 0, active ? -s->rank : INT_MIN};
    int sum[2], checker;
    MPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, node);
    MPI_Allreduce(&mine[2], &checker, 1, MPI_INT, MPI_MAX, node);
    MPI_Comm_free(&node);
    if (!active || -checker != s->rank)
        return 0;
    return job_check_memory(s->job, s->prob_args, s->nworkers, sum[0],
                            sum[1], err);
}

/* Every rank must agree on the message sizes and the model's length;
 * with shards, a coordinator rank's are its slice's, the rest (the
 * tails) the same as the whole model's. */
static int check_shapes(struct setup *s, struct aia_error *err)
{
    unsigned long long mine[3] = {s->shape.query_len, s->shape.answer_len,
                                  s->dim},
                       root[3];
    if (s->shard >= 0 && s->shards > 1) {
        s->full = (struct aia_shape){
            .query_len = s->shape.query_len - s->slice_len + s->dim,
            .answer_len = s->shape.answer_len - s->slice_len + s->dim};
        mine[0] = s->full.query_len;
        mine[1] = s->full.answer_len;
        if (s->shape.query_len < s->slice_len ||
            s->shape.answer_len < s->slice_len)
            return aia_seterr(err, "algorithm '%s': on shard rank %d its "
                                   "messages are shorter than its slice",
                              s->alg->h.name, s->rank);
    }
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, 3, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    struct aia_shape want = {.query_len = root[0], .answer_len = root[1]};
    if (s->windex >= 0)
        return session_same_shape(s->rank, &s->shape, s->dim, &want, root[2],
                                  err);
    if (s->shard > 0)
        return session_same_shape(s->rank, &s->full, s->dim, &want, root[2],
                                  err);
    return 0;
}

static void teardown(struct setup *s)
{
    session_close(s);
    job_free(s->job);
}

/* With -v every rank logs its peak resident memory (VmHWM) at the end,
 * for bench/memory.sh: the coordinator's must not grow with the data. */
static void log_peak_memory(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    if (kb >= 0)
        host_log(AIA_LOG_INFO, "peak memory %ld kB (VmHWM)", kb);
}

/* A world of one rank where the launcher's environment says the job has
 * more: the binary is another MPI's than the launcher's (built for Open
 * MPI, started by MPICH's mpirun.mpich, or the reverse), and every rank
 * runs alone.  Says so once, from the launcher's rank 0, instead of each
 * rank asking for a coordinator; returns 1 then, else 0. */
static int launcher_mismatch(void)
{
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, /* Open MPI */
        {"PMI_SIZE", "PMI_RANK"}, /* MPICH's hydra, srun --mpi=pmi2 */
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *size = getenv(vars[i][0]), *rank = getenv(vars[i][1]);
        long n = size ? strtol(size, NULL, 10) : 0;
        if (n < 2)
            continue;
        if (!rank || strcmp(rank, "0") == 0)
            host_error("this aiarun is built for " AIA_MPI_NAME ", but a "
                       "launcher of another MPI started it as one of %ld "
                       "ranks (%s=%s): each rank runs alone.  Start it with "
                       AIA_MPI_NAME "'s mpirun, or build aiarun for the "
                       "launcher's MPI (configure --with-mpi=...)",
                       n, vars[i][0], size);
        return 1;
    }
    return 0;
}

int run_job(const struct run_opts *opts)
{
    struct setup s = {.windex = -1};
    struct aia_error err = {""};
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    host_setup(s.rank, opts->verbosity);
    /* Before any plugin is opened: a signal mpirun forwards during the
     * set-up (SIGUSR1 from Slurm) must not kill a rank with no word. */
    if (s.rank == 0)
        guard_catch_signals();
    else
        guard_ignore_signals();
    if (s.size < 2 && launcher_mismatch())
        return RUN_BAD_JOB;
    if (s.size < 2) {
        host_error("a job needs a coordinator and at least one worker: run "
                   "it as mpirun -np N aiarun %s, with N >= 2",
                   opts->path);
        return RUN_BAD_JOB;
    }
    size_t len = 0;
    char *text = share_job_file(&s, opts->path, &len, &err);
    int status = RUN_BAD_JOB;
    if (agree(&s, !text, &err) < 0)
        goto out;
    s.job = job_load(opts->path, text, len, opts->overrides, &err);
    if (agree(&s, !s.job, &err) < 0 ||
        agree(&s, s.rank == 0 && job_check_outputs(s.job, &err) < 0, &err) <
            0 ||
        agree(&s, session_pool(&s, &err) < 0, &err) < 0)
        goto out;
    if (watchdog_start(s.job->pool.setup_timeout) < 0)
        host_error("cannot start the set-up's watchdog: set-up unbounded");
    int coordinator = s.rank == 0, active = coordinator || s.windex >= 0;
    int shard = s.shard > 0; /* a coordinator rank besides rank 0 */
    if (agree(&s, (active || shard) &&
                      (session_load(&s, coordinator, &err) < 0 ||
                       session_check(&s, &err) < 0), &err) <
            0 ||
        agree(&s, check_memory(&s, active, &err) < 0, &err) < 0 ||
        agree(&s, load_data(&s, active, &err) < 0, &err) < 0)
        goto out;
    if (agree(&s, active && open_problem(&s, &err) < 0, &err) < 0 ||
        agree(&s, facts_gather(&s, active,
                                  s.job->stop.diverge > 0 && eval_by_workers(&s),
                                  &err) < 0, &err) < 0 ||
        agree(&s, split_model(&s, &err) < 0, &err) < 0 ||
        agree(&s, (active || shard) && create_algorithm(&s, &err) < 0,
              &err) < 0 ||
        agree(&s, coordinator && session_create_wait(&s, &err) < 0, &err) < 0 ||
        agree(&s, check_shapes(&s, &err) < 0, &err) < 0 ||
        agree(&s, facts_rows(&s, &err) < 0, &err) < 0 ||
        agree(&s, eval_by_workers(&s) && facts_combine(&s, &err) < 0,
              &err) < 0 ||
        agree(&s, refopt_mpi(&s, active, eval_by_workers(&s), &err) < 0,
              &err) < 0)
        goto out;
    watchdog_stop();
    if (coordinator)
        session_identity(&s);
    s.resume = opts->resume;
    status = coordinator ? coord_run(&s)
             : shard     ? shard_run(&s)
                         : worker_run(&s);
out:
    watchdog_stop();
    free(text);
    teardown(&s);
    log_peak_memory();
    return status;
}

/* A data section's file read through once, as rank 0 does before a run
 * (data_scan): it exists, its header is right and every row parses. */
static int check_data(const struct job *job, const struct job_data *d,
                      const char *key, struct aia_error *err)
{
    size_t rows, cols;
    struct data_opts o;
    if (!d->path)
        return 0;
    session_data_opts(d, 0, &o);
    if (data_scan(&o, &rows, &cols, err) == 0)
        return 0;
    char where[256], text[AIA_ERROR_LEN];
    params_where(where, sizeof where, job->m->path, d->key);
    snprintf(text, sizeof text, "%s", err->text);
    return aia_seterr(err, "%s: %s: %s", where, key, text);
}

int run_check(struct job *job, int nworkers, struct aia_error *err)
{
    struct setup s = {.job = job, .windex = -1, .nworkers = nworkers};
    int rc = session_load(&s, 1, err);
    if (rc == 0)
        rc = session_check(&s, err);
    if (rc == 0)
        rc = session_check_problem(&s, err);
    if (rc == 0) /* every rank on this machine */
        rc = job_check_memory(job, s.prob_args, 1, 1, 1, err);
    /* after the estimate: a file too large for it is not read through */
    if (rc == 0)
        rc = check_data(job, &job->data, "problem.data", err);
    if (rc == 0)
        rc = check_data(job, &job->test, "problem.test", err);
    if (rc == 0 && nworkers > 0) {
        /* the pool of a run of nworkers workers (-np nworkers + the
         * coordinator ranks), checked as mpirun's would be */
        s.size = nworkers + (job->pool.shards > 1 ? job->pool.shards : 1);
        rc = session_pool(&s, err);
        if (rc == 0)
            rc = session_create_wait(&s, err);
    }
    s.job = NULL; /* the caller's */
    teardown(&s);
    return rc;
}

static void finalize_timeout(int signo)
{
    (void)signo;
    static const char msg[] = "aiarun: MPI_Finalize waits for a rank that "
                              "never stopped; leaving without it\n";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
        _exit(RUN_FAILED);
    _exit(finalize_status);
}

int run_main(int *argc, char ***argv, const struct run_opts *opts)
{
    poll_setup();
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        host_error("MPI_Init failed");
        return RUN_FAILED;
    }
    poll_node();
    int status = run_job(opts);
    fflush(stdout);
    fflush(stderr);
    if (run_no_finalize)
        return status; /* the job is being taken down: leave now */
    if (run_incomplete) {
        /* a rank never stopped: MPI_Finalize may wait for it forever */
        finalize_status = status;
        signal(SIGALRM, finalize_timeout);
        alarm(FINALIZE_SECONDS);
    }
    MPI_Finalize();
    return status;
}
