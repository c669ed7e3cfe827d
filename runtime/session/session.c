/* session.c - a job's plugins from load to teardown, for both drivers:
 * the MPI driver calls each step on the ranks that need it, the
 * simulator for the coordinator and every simulated worker.  What a step
 * refuses, and how it says so, is therefore the same under mpirun and
 * --simulate. */
#include <config.h>

#include "session.h"
#include "refopt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/freeargs.h"
#include "conf/params.h"
#include "core/codec.h"
#include "core/host.h"
#include "core/util.h"
#include "straggle.h"

struct aia_context session_context(const struct setup *s, int w,
                                   const struct aia_value *args,
                                   void *prob_s, const struct aia_dataset *data)
{
    return (struct aia_context){
        .size = sizeof(struct aia_context),
        .role = w < 0 ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER,
        .rank = w < 0 ? 0 : s->ranks[w],
        .worker = w,
        .nworkers = s->nworkers,
        .async = s->job->pool.mode == JOB_ASYNC,
        .seed = s->job->seed,
        .args = args,
        .jobdir = s->job->dir,
        .host = host_get(),
        .problem = s->prob,
        .problem_state = prob_s,
        .pool_ranks = s->ranks,
        .facts = &s->facts,
        .data = data,
    };
}

int session_pool(struct setup *s, struct aia_error *err)
{
    const struct job *job = s->job;
    char where[256];
    int shards = job->pool.shards > 1 ? job->pool.shards : 1;
    s->shards = shards;
    s->shard = s->rank < shards ? s->rank : -1;
    if (shards > 1 && s->size - shards < 1) {
        params_where(where, sizeof where, job->m->path, job->pool.shards_node);
        return aia_seterr(err, "%s: pool.shards: %d coordinator ranks leave "
                               "no worker among the %d ranks of this run "
                               "(mpirun -np at least %d)",
                          where, shards, s->size, shards + 1);
    }
    s->nworkers =
        job->pool.workers ? (int)job->pool.nworkers : s->size - shards;
    if (!(s->ranks = calloc((size_t)s->nworkers, sizeof *s->ranks)))
        return aia_seterr(err, "out of memory");
    for (int w = 0; w < s->nworkers; w++) {
        int64_t r = job->pool.workers ? job->pool.workers[w] : w + shards;
        params_where(where, sizeof where, job->m->path, job->pool.workers_node);
        if (r < 1 || r >= s->size)
            return aia_seterr(err, "%s: pool.workers: rank %lld is not a "
                                   "worker rank of this run (1 to %d)",
                              where, (long long)r, s->size - 1);
        if (r < shards)
            return aia_seterr(err, "%s: pool.workers: rank %lld is a shard "
                                   "rank (pool.shards: %d makes ranks 0 to "
                                   "%d coordinators)",
                              where, (long long)r, shards, shards - 1);
        s->ranks[w] = (int)r;
        if (r == s->rank)
            s->windex = w;
    }
    if (straggle_check(job, s->ranks, s->nworkers, err) < 0)
        return -1;
    if (job->part.weights && job->part.nweights != (size_t)s->nworkers) {
        params_where(where, sizeof where, job->m->path, job->part.weights_node);
        return aia_seterr(err,
                          "%s: problem.weights: %zu weights for %d "
                          "workers",
                          where, job->part.nweights, s->nworkers);
    }
    return 0;
}

/* Load a plugin of a section and bind its parameters. */
static int load(const struct setup *s, const struct job_plugin *sec,
                int kind, struct plugin **p, struct aia_value **args,
                struct aia_error *err)
{
    if (!(*p = loader_open(sec->spec, kind, s->job->dir, err))) {
#ifndef HAVE_PYTHON
        /* python.so holds the python problem and the python algorithm */
        if (kind != AIA_KIND_WAIT && strcmp(sec->spec, "python") == 0)
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

int session_load(struct setup *s, int wait, struct aia_error *err)
{
    const struct job *job = s->job;
    if (load(s, &job->problem, AIA_KIND_PROBLEM, &s->prob_p, &s->prob_args,
             err) < 0 ||
        load(s, &job->algorithm, AIA_KIND_ALGORITHM, &s->alg_p, &s->alg_args,
             err) < 0)
        return -1;
    s->prob = (const void *)s->prob_p->h;
    s->alg = (const void *)s->alg_p->h;
    /* precision: float32 (lrmse, logreg, pca, softmax, mlp) keeps the
     * rows, the test's too, as floats: a value beyond a float's range is
     * refused where the files are read, not met as an infinity later */
    const struct aia_value *prec = aia_arg(s->prob_args, "precision");
    s->job->data.float32 = s->job->test.float32 =
        prec && prec->type == AIA_ENUM && prec->s &&
        strcmp(prec->s, "float32") == 0;
    if (!wait)
        return 0;
    if (load(s, &job->wait, AIA_KIND_WAIT, &s->wait_p, &s->wait_args, err) <
        0)
        return -1;
    s->wait = (const void *)s->wait_p->h;
    return 0;
}

/* pool.shards above 1: what the shard ranks do not support is refused
 * here, naming the key that asks for it. */
static int session_check_shards(const struct setup *s, struct aia_error *err)
{
    const struct job *job = s->job;
    char where[256];
    const char *why = NULL;
    params_where(where, sizeof where, job->m->path, job->pool.shards_node);
    if (!(s->alg->flags & AIA_ALG_SEPARABLE))
        return aia_seterr(err, "%s: pool.shards: %d: algorithm '%s' does "
                               "not declare its update separable by slices "
                               "of the model (AIA_ALG_SEPARABLE), so no rank "
                               "can hold a slice of its state",
                          where, job->pool.shards, s->alg->h.name);
    if (job->pool.topology == JOB_TREE)
        why = "pool.topology: tree (a tree's answers come up combined "
              "through rank 0's children, not slice by slice)";
    else if (job->pool.mode == JOB_ASYNC)
        why = "pool.mode: async (only rounds are split over shards)";
    else if (job->codec.query != CODEC_NONE ||
             job->codec.answer != CODEC_NONE)
        why = "pool.codec (a codec encodes whole messages, not slices)";
    if (why)
        return aia_seterr(err, "%s: pool.shards: %d cannot be combined with "
                               "%s: use pool.shards: 1",
                          where, job->pool.shards, why);
    return 0;
}

int session_check(const struct setup *s, struct aia_error *err)
{
    const struct job *job = s->job;
    char where[256];
    if (job->pool.topology == JOB_TREE &&
        !(s->alg->flags & AIA_ALG_ASSOCIATIVE)) {
        params_where(where, sizeof where, job->m->path,
                     job->pool.topology_node);
        return aia_seterr(err, "%s: pool.topology: tree: algorithm '%s' "
                               "does not declare its answers combinable "
                               "(AIA_ALG_ASSOCIATIVE), so a subtree's "
                               "answers cannot stand for one",
                          where, s->alg->h.name);
    }
    if (job->pool.shards > 1 && session_check_shards(s, err) < 0)
        return -1;
    if (s->alg->flags & AIA_ALG_HVP && !s->prob->hvp) {
        params_where(where, sizeof where, job->m->path, job->algorithm.key);
        return aia_seterr(err, "%s: algorithm: '%s' asks the "
                               "workers for Hessian-vector products, and "
                               "problem '%s' gives none (no hvp)",
                          where, s->alg->h.name, s->prob->h.name);
    }
    if (s->alg->flags & AIA_ALG_BLOCK && !s->prob->block) {
        params_where(where, sizeof where, job->m->path, job->algorithm.key);
        return aia_seterr(err, "%s: algorithm: '%s' asks the "
                               "workers for the rows' Gram matrix applied "
                               "to a block, and problem '%s' gives none "
                               "(no block)",
                          where, s->alg->h.name, s->prob->h.name);
    }
    if (job->data.path && !(s->prob->flags & AIA_PROBLEM_DATA)) {
        params_where(where, sizeof where, job->m->path, job->data.key);
        return aia_seterr(err, "%s: problem.data: problem '%s' generates "
                               "its data and takes no data file",
                          where, s->prob->h.name);
    }
    /* top-k holds part of an answer back: only for additive answers */
    if (job->codec.answer == CODEC_TOPK &&
        !(s->alg->flags & AIA_ALG_ADDITIVE)) {
        params_where(where, sizeof where, job->m->path, job->codec_node);
        return aia_seterr(err, "%s: pool.codec.answer: topk: algorithm '%s' "
                               "does not declare its answers additive "
                               "(AIA_ALG_ADDITIVE): what top-k holds back "
                               "would be a wrong answer, not a late one",
                          where, s->alg->h.name);
    }
    return 0;
}

int session_check_problem(struct setup *s, struct aia_error *err)
{
    if (!s->prob->check)
        return 0;
    struct aia_context ctx = session_context(s, -1, s->prob_args, NULL, NULL);
    if (s->prob->check(&ctx, err) < 0) {
        job_blame(s->job, &s->job->problem, err);
        return -1;
    }
    return 0;
}

int session_open(struct setup *s, int w, const struct aia_dataset *data,
                 void **prob_s, struct aia_error *err)
{
    struct aia_partition part = {
        .index = w < 0 ? AIA_PART_ALL : w,
        .count = s->nworkers,
        .scheme = s->job->part.scheme,
        .weights = s->job->part.weights,
    };
    struct aia_context ctx = session_context(s, w, s->prob_args, NULL, data);
    uint32_t offers;
    const char *metric_name;
    if (s->prob->open(&ctx, &part, prob_s, err) < 0 ||
        loader_offers(s->prob, *prob_s, &offers, &metric_name, err) < 0) {
        job_blame(s->job, &s->job->problem, err);
        return -1;
    }
    if (prob_s == &s->prob_s) { /* the instance this rank works with */
        s->offers = offers;
        s->metric_name = metric_name;
    }
    return 0;
}

int session_open_sample(struct setup *s, int w, const struct aia_dataset *rows,
                        struct aia_error *err)
{
    const struct job *job = s->job;
    size_t k = rows ? output_sample_rows(&job->output, job->data.path != NULL,
                                         job->stop.gap > 0, rows->rows,
                                         rows->total_rows)
                    : 0;
    if (k == 0)
        return 0;
    /* a stream of its own, apart from the stragglers' and the plugins' */
    uint64_t stream = 0x73616d706c65ull + (uint64_t)(w + 1);
    if (data_sample(rows, k, s->job->seed, stream, &s->sample, err) < 0)
        return -1;
    /* opened as a worker's part, which holds any rows (the coordinator's
     * view must hold them all) */
    return session_open(s, w < 0 ? 0 : w, &s->sample.d, &s->sample_s, err);
}

/* The problem of a shard's algorithm: the slice's length, no rows. */
static size_t slice_dim(void *state)
{
    return *(const size_t *)state;
}

static size_t slice_rows(void *state)
{
    (void)state;
    return 0;
}

int session_slices(struct setup *s, size_t dim, struct aia_error *err)
{
    int n = s->shards > 1 ? s->shards : 1;
    free(s->slice);
    if (!(s->slice = malloc((size_t)(n + 1) * sizeof *s->slice)))
        return aia_seterr(err, "out of memory");
    for (int k = 0; k <= n; k++)
        s->slice[k] = (size_t)((unsigned long long)dim * (unsigned)k /
                               (unsigned)n);
    if (n > 1 && dim < (size_t)n) {
        char where[256];
        params_where(where, sizeof where, s->job->m->path,
                     s->job->pool.shards_node);
        return aia_seterr(err, "%s: pool.shards: %d slices of a model of %zu "
                               "values would leave one empty",
                          where, n, dim);
    }
    if (s->shard >= 0) {
        s->slice_len = s->slice[s->shard + 1] - s->slice[s->shard];
        s->slice_prob = (struct aia_problem_plugin){.h = s->prob->h,
                                                    .dim = slice_dim,
                                                    .rows = slice_rows};
    }
    return 0;
}

int session_create(const struct setup *s, int w, void *prob_s,
                   const struct aia_dataset *data, void **alg_s,
                   struct aia_shape *shape, struct aia_error *err)
{
    struct aia_context ctx = session_context(s, w, s->alg_args, prob_s, data);
    size_t dim = s->dim;
    if (w < 0 && s->shards > 1 && s->slice) {
        /* a slice of the model, every shard rank alike */
        ctx.problem = &s->slice_prob;
        ctx.problem_state = (void *)&s->slice_len;
        dim = s->slice_len;
    }
    if (s->alg->create(&ctx, shape, alg_s, err) < 0) {
        job_blame(s->job, &s->job->algorithm, err);
        return -1;
    }
    if (w < 0 && !s->alg->iterate && shape->query_len != dim)
        return aia_seterr(err, "algorithm '%s': its queries have %zu "
                               "values but the model has %zu, and it gives "
                               "no iterate function",
                          s->alg->h.name, shape->query_len, dim);
    return 0;
}

int session_create_wait(struct setup *s, struct aia_error *err)
{
    struct aia_context ctx =
        session_context(s, -1, s->wait_args, s->prob_s, NULL);
    if (s->wait->create(&ctx, &s->wait_s, err) < 0) {
        job_blame(s->job, &s->job->wait, err);
        return -1;
    }
    return 0;
}

int session_same_shape(int rank, const struct aia_shape *got, size_t got_dim,
                       const struct aia_shape *want, size_t want_dim,
                       struct aia_error *err)
{
    if (got->query_len == want->query_len &&
        got->answer_len == want->answer_len && got_dim == want_dim)
        return 0;
    return aia_seterr(err, "rank %d: query %zu, answer %zu, dimension %zu "
                           "differ from rank 0's %zu, %zu, %zu",
                      rank, got->query_len, got->answer_len, got_dim,
                      want->query_len, want->answer_len, want_dim);
}

void session_data_opts(const struct job_data *d, size_t features,
                       struct data_opts *o)
{
    data_opts_init(o);
    o->format = d->format;
    o->path = d->path;
    o->header = d->header;
    o->target = d->target;
    o->delimiter = d->delimiter;
    o->rows = d->rows;
    o->cols = d->cols;
    o->sparse = d->sparse;
    o->features = features ? features : d->features;
    o->targets = d->targets;
    o->dataset = d->dataset;
    o->scale = d->scale;
    o->float32 = d->float32;
}

int session_rows_own(size_t r, void *arg)
{
    const struct session_rows *k = arg;
    return aia_partition_owner(host_get(), &k->part, k->total, r) ==
           k->part.index;
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
void session_identity(struct setup *s)
{
    const struct job *job = s->job;
    struct checkpoint_id *id = &s->identity;
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
    int64_t part[] = {job->part.scheme, (int64_t)job->part.nweights};
    uint64_t h = checkpoint_hash(h0, part, sizeof part);
    if (job->part.weights)
        h = checkpoint_hash(h, job->part.weights,
                            job->part.nweights * sizeof *job->part.weights);
    checkpoint_id_add(id, "partition", h);
    int64_t pool[] = {job->pool.mode, s->nworkers};
    h = checkpoint_hash(h0, pool, sizeof pool);
    checkpoint_id_add(id, "pool",
                      checkpoint_hash(h, s->ranks,
                                      (size_t)s->nworkers * sizeof *s->ranks));
    int64_t shape[] = {(int64_t)s->shape.query_len,
                       (int64_t)s->shape.answer_len, (int64_t)s->dim};
    checkpoint_id_add(id, "shapes", checkpoint_hash(h0, shape, sizeof shape));
}

void session_close(struct setup *s)
{
    if (s->wait_s)
        s->wait->destroy(s->wait_s);
    if (s->alg_s)
        s->alg->destroy(s->alg_s);
    if (s->prob_s)
        s->prob->close(s->prob_s);
    if (s->test_s)
        s->prob->close(s->test_s);
    if (s->sample_s)
        s->prob->close(s->sample_s);
    if (s->ref) {
        refopt_free(s->ref);
        free(s->ref);
        s->ref = NULL;
    }
    params_free(s->wait_args);
    params_free(s->alg_args);
    params_free(s->prob_args);
    loader_close(s->wait_p);
    loader_close(s->alg_p);
    loader_close(s->prob_p);
    free(s->ranks);
    free(s->rows);
    free(s->slice);
    s->slice = NULL;
    data_free(&s->data);
    data_free(&s->test);
    data_free(&s->sample);
    s->wait_s = s->alg_s = s->prob_s = s->test_s = s->sample_s = NULL;
    s->wait_args = s->alg_args = s->prob_args = NULL;
    s->wait_p = s->alg_p = s->prob_p = NULL;
    s->ranks = NULL;
    s->rows = NULL;
}
