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
#include "conf/freeargs.h"
#include "core/host.h"
#include "conf/params.h"
#include "poll.h"
#include "run.h"
#include "session/straggle.h"
#include "core/util.h"
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

/* The pool's ranks, checked against the world. */
static int resolve_pool(struct setup *s, struct aia_error *err)
{
    const struct job *job = s->job;
    char where[256];
    s->nworkers = job->workers ? (int)job->nworkers : s->size - 1;
    if (!(s->ranks = calloc((size_t)s->nworkers, sizeof *s->ranks)))
        return aia_seterr(err, "out of memory");
    for (int w = 0; w < s->nworkers; w++) {
        int64_t r = job->workers ? job->workers[w] : w + 1;
        params_where(where, sizeof where, job->m->path, job->workers_node);
        if (r < 1 || r >= s->size)
            return aia_seterr(err, "%s: pool.workers: rank %lld is not a "
                                   "worker rank of this run (1 to %d)",
                              where, (long long)r, s->size - 1);
        for (int v = 0; v < w; v++)
            if (s->ranks[v] == r)
                return aia_seterr(err, "%s: pool.workers: rank %lld is "
                                       "listed twice",
                                  where, (long long)r);
        s->ranks[w] = (int)r;
        if (r == s->rank)
            s->windex = w;
    }
    if (straggle_check(job, s->ranks, s->nworkers, err) < 0)
        return -1;
    if (job->weights && job->nweights != (size_t)s->nworkers) {
        params_where(where, sizeof where, job->m->path, job->weights_node);
        return aia_seterr(err, "%s: problem.weights: %zu weights for %d "
                               "workers",
                          where, job->nweights, s->nworkers);
    }
    return 0;
}

static struct aia_context context(const struct setup *s,
                                  const struct aia_value *args)
{
    return (struct aia_context){
        .size = sizeof(struct aia_context),
        .role = s->rank == 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER,
        .rank = s->rank,
        .worker = s->windex,
        .nworkers = s->nworkers,
        .async = s->job->mode == JOB_ASYNC,
        .seed = s->job->seed,
        .args = args,
        .jobdir = s->job->dir,
        .host = host_get(),
        .problem = s->prob,
        .problem_state = s->prob_s,
        .pool_ranks = s->ranks,
        .facts = &s->facts,
        .data = s->job->data.path ? &s->data.d : NULL,
    };
}

/* Load a plugin of a section and bind its parameters. */
static int load(const struct setup *s, const struct job_plugin *sec,
                int kind, struct plugin **p, struct aia_value **args,
                struct aia_error *err)
{
    if (!(*p = loader_open(sec->spec, kind, s->job->dir, err))) {
#ifndef HAVE_PYTHON
        if (kind == AIA_KIND_PROBLEM && strcmp(sec->spec, "python") == 0)
            aia_seterr(err, "plugin 'python' is not available: this aiarun "
                            "was built without Python (configure found no "
                            "python3-embed; install python3-dev and "
                            "rebuild)");
#endif
        job_blame(s->job, sec, err);
        return -1;
    }
    if ((*p)->h->pflags & AIA_PARAMS_OPEN)
        return (*args = freeargs_bind(s->job, sec, *p, err)) ? 0 : -1;
    return (*args = job_plugin_args(s->job, sec, *p, err)) ? 0 : -1;
}

/* --check: a problem that can validate its parameters without opening
 * anything does (the python problem imports the class it names). */
static int check_problem(struct setup *s, struct aia_error *err)
{
    if (!s->prob->check)
        return 0;
    struct aia_context ctx = context(s, s->prob_args);
    ctx.role = AIA_ROLE_COORDINATOR;
    ctx.data = NULL;
    if (s->prob->check(&ctx, err) < 0) {
        job_blame(s->job, &s->job->problem, err);
        return -1;
    }
    return 0;
}

static int load_plugins(struct setup *s, int coordinator,
                        struct aia_error *err)
{
    const struct job *job = s->job;
    if (load(s, &job->problem, AIA_KIND_PROBLEM, &s->prob_p, &s->prob_args,
             err) < 0 ||
        load(s, &job->algorithm, AIA_KIND_ALGORITHM, &s->alg_p, &s->alg_args,
             err) < 0)
        return -1;
    s->prob = (const void *)s->prob_p->h;
    s->alg = (const void *)s->alg_p->h;
    if (!coordinator)
        return 0;
    if (load(s, &job->wait, AIA_KIND_WAIT, &s->wait_p, &s->wait_args, err) <
        0)
        return -1;
    s->wait = (const void *)s->wait_p->h;
    return 0;
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
    if (active && !(s->prob->flags & AIA_PROBLEM_DATA)) {
        char where[256];
        params_where(where, sizeof where, s->job->m->path, d->key);
        return aia_seterr(err, "%s: problem.data: problem '%s' generates "
                               "its data and takes no data file",
                          where, s->prob->h.name);
    }
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
    struct aia_partition part = {
        .index = s->rank == 0 ? AIA_PART_ALL : s->windex,
        .count = s->nworkers,
        .scheme = s->job->part_scheme,
        .weights = s->job->weights,
    };
    struct aia_context ctx = context(s, s->prob_args);
    if (s->prob->open(&ctx, &part, &s->prob_s, err) < 0 ||
        loader_offers(s->prob, s->prob_s, &s->offers, &s->metric_name,
                      err) < 0) {
        job_blame(s->job, &s->job->problem, err);
        return -1;
    }
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
    if (s->windex < 0 || !s->job->test.path)
        return 0;
    /* the same problem on this worker's test rows, for the evaluations */
    ctx.data = &s->test.d;
    if (s->prob->open(&ctx, &part, &s->test_s, err) < 0) {
        char where[256], text[AIA_ERROR_LEN];
        params_where(where, sizeof where, s->job->m->path, s->job->test.key);
        snprintf(text, sizeof text, "%s", util_error_text(err));
        return aia_seterr(err, "%s: problem.test: %s", where, text);
    }
    return 0;
}

/* Top-k holds part of an answer back: only for additive answers. */
static int check_codec(const struct setup *s, struct aia_error *err)
{
    if (s->job->codec_answer == CODEC_TOPK &&
        !(s->alg->flags & AIA_ALG_ADDITIVE)) {
        char where[256];
        params_where(where, sizeof where, s->job->m->path,
                     s->job->codec_node);
        return aia_seterr(err, "%s: pool.codec.answer: topk: algorithm '%s' "
                               "does not declare its answers additive "
                               "(AIA_ALG_ADDITIVE): what top-k holds back "
                               "would be a wrong answer, not a late one",
                          where, s->alg->h.name);
    }
    return 0;
}

static int create_algorithm(struct setup *s, struct aia_error *err)
{
    watchdog_phase("in the algorithm's create");
    if (s->job->topology == JOB_TREE &&
        !(s->alg->flags & AIA_ALG_ASSOCIATIVE)) {
        char where[256];
        params_where(where, sizeof where, s->job->m->path,
                     s->job->topology_node);
        return aia_seterr(err, "%s: pool.topology: tree: algorithm '%s' "
                               "does not declare its answers combinable "
                               "(AIA_ALG_ASSOCIATIVE), so a subtree's "
                               "answers cannot stand for one",
                          where, s->alg->h.name);
    }
    if (check_codec(s, err) < 0)
        return -1;
    struct aia_context ctx = context(s, s->alg_args);
    if (s->alg->create(&ctx, &s->shape, &s->alg_s, err) < 0) {
        job_blame(s->job, &s->job->algorithm, err);
        return -1;
    }
    if (!s->alg->iterate && s->shape.query_len != s->dim)
        return aia_seterr(err, "algorithm '%s': its queries have %zu "
                               "values but the model has %zu, and it gives "
                               "no iterate function",
                          s->alg->h.name, s->shape.query_len, s->dim);
    return 0;
}

static int create_wait(struct setup *s, struct aia_error *err)
{
    watchdog_phase("in the wait condition's create");
    struct aia_context ctx = context(s, s->wait_args);
    if (s->wait->create(&ctx, &s->wait_s, err) < 0) {
        job_blame(s->job, &s->job->wait, err);
        return -1;
    }
    return 0;
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

/* Every rank must agree on the message sizes and the model's length. */
static int check_shapes(struct setup *s, struct aia_error *err)
{
    unsigned long long mine[3] = {s->shape.query_len, s->shape.answer_len,
                                  s->dim},
                       root[3];
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, 3, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (s->windex >= 0 && memcmp(root, mine, sizeof root) != 0)
        return aia_seterr(err, "rank %d: query %llu, answer %llu, dimension "
                               "%llu differ from rank 0's %llu, %llu, %llu",
                          s->rank, mine[0], mine[1], mine[2], root[0],
                          root[1], root[2]);
    return 0;
}

static uint64_t hash_str(uint64_t h, const char *str)
{
    return checkpoint_hash(h, str ? str : "", str ? strlen(str) + 1 : 1);
}

static uint64_t hash_args(uint64_t h, const struct aia_value *v)
{
    for (; v && v->name; v++) {
        h = hash_str(h, v->name);
        h = checkpoint_hash(h, &v->i, sizeof v->i);
        h = checkpoint_hash(h, &v->d, sizeof v->d);
        h = hash_str(h, v->s);
        if (v->ints)
            h = checkpoint_hash(h, v->ints, v->n * sizeof *v->ints);
        if (v->doubles)
            h = checkpoint_hash(h, v->doubles, v->n * sizeof *v->doubles);
    }
    return h;
}

/* What a checkpoint must have been written by: the same algorithm and
 * problem with the same parameters, data, partition, pool and seed.
 * Limits, outputs, the wait condition and stragglers may change.  Each
 * part hashed apart, so that a refusal names the part that differs. */
static void identity(const struct setup *s, struct checkpoint_id *id)
{
    const struct job *job = s->job;
    const uint64_t h0 = CHECKPOINT_HASH0;
    memset(id, 0, sizeof *id);
    checkpoint_id_add(id, "algorithm",
                      hash_str(hash_str(h0, s->alg->h.name),
                               s->alg->h.version));
    checkpoint_id_add(id, "algorithm keys", hash_args(h0, s->alg_args));
    checkpoint_id_add(id, "problem",
                      hash_str(hash_str(h0, s->prob->h.name),
                               s->prob->h.version));
    checkpoint_id_add(id, "problem keys", hash_args(h0, s->prob_args));
    checkpoint_id_add(id, "data", hash_str(h0, job->data.path));
    checkpoint_id_add(id, "test data", hash_str(h0, job->test.path));
    checkpoint_id_add(id, "seed", checkpoint_hash(h0, &job->seed,
                                                  sizeof job->seed));
    int64_t part[] = {job->part_scheme, (int64_t)job->nweights};
    uint64_t h = checkpoint_hash(h0, part, sizeof part);
    if (job->weights)
        h = checkpoint_hash(h, job->weights,
                            job->nweights * sizeof *job->weights);
    checkpoint_id_add(id, "partition", h);
    int64_t pool[] = {job->mode, s->nworkers};
    h = checkpoint_hash(h0, pool, sizeof pool);
    checkpoint_id_add(id, "pool",
                      checkpoint_hash(h, s->ranks,
                                      (size_t)s->nworkers * sizeof *s->ranks));
    int64_t shape[] = {(int64_t)s->shape.query_len,
                       (int64_t)s->shape.answer_len, (int64_t)s->dim};
    checkpoint_id_add(id, "shapes", checkpoint_hash(h0, shape, sizeof shape));
}

static void teardown(struct setup *s)
{
    if (s->wait_s)
        s->wait->destroy(s->wait_s);
    if (s->alg_s)
        s->alg->destroy(s->alg_s);
    if (s->prob_s)
        s->prob->close(s->prob_s);
    if (s->test_s)
        s->prob->close(s->test_s);
    params_free(s->wait_args);
    params_free(s->alg_args);
    params_free(s->prob_args);
    loader_close(s->wait_p);
    loader_close(s->alg_p);
    loader_close(s->prob_p);
    free(s->ranks);
    free(s->rows);
    data_free(&s->data);
    data_free(&s->test);
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

int run_job(const struct run_opts *opts)
{
    struct setup s = {.windex = -1};
    struct aia_error err = {""};
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    host_setup(s.rank, opts->verbosity);
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
        agree(&s, resolve_pool(&s, &err) < 0, &err) < 0)
        goto out;
    if (watchdog_start(s.job->setup_timeout) < 0)
        host_error("cannot start the set-up's watchdog: set-up unbounded");
    int coordinator = s.rank == 0, active = coordinator || s.windex >= 0;
    if (agree(&s, active && load_plugins(&s, coordinator, &err) < 0, &err) <
            0 ||
        agree(&s, check_memory(&s, active, &err) < 0, &err) < 0 ||
        agree(&s, load_data(&s, active, &err) < 0, &err) < 0)
        goto out;
    if (agree(&s, active && open_problem(&s, &err) < 0, &err) < 0 ||
        agree(&s, facts_gather(&s, active,
                                  s.job->stop.diverge > 0 && eval_by_workers(&s),
                                  &err) < 0, &err) < 0 ||
        agree(&s, active && create_algorithm(&s, &err) < 0, &err) < 0 ||
        agree(&s, coordinator && create_wait(&s, &err) < 0, &err) < 0 ||
        agree(&s, check_shapes(&s, &err) < 0, &err) < 0 ||
        agree(&s, facts_rows(&s, &err) < 0, &err) < 0 ||
        agree(&s, eval_by_workers(&s) && facts_combine(&s, &err) < 0,
              &err) < 0)
        goto out;
    watchdog_stop();
    if (coordinator)
        identity(&s, &s.identity);
    s.resume = opts->resume;
    status = coordinator ? coord_run(&s) : worker_run(&s);
out:
    watchdog_stop();
    free(text);
    teardown(&s);
    log_peak_memory();
    return status;
}

int run_check(struct job *job, int nworkers, struct aia_error *err)
{
    struct setup s = {.job = job, .windex = -1, .nworkers = nworkers};
    int rc = load_plugins(&s, 1, err);
    if (rc == 0)
        rc = check_codec(&s, err);
    if (rc == 0)
        rc = check_problem(&s, err);
    if (rc == 0) /* every rank on this machine */
        rc = job_check_memory(job, s.prob_args, 1, 1, 1, err);
    if (rc == 0 && nworkers > 0) {
        /* the pool of an -np nworkers+1 run, checked as mpirun's would be */
        s.size = nworkers + 1;
        rc = resolve_pool(&s, err);
        if (rc == 0)
            rc = create_wait(&s, err);
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
