/* job.c - the runtime's sections of a job file. */
#include <config.h>

#include "job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "data.h"
#include "params.h"
#include "util.h"

/* Each table below is both the check and the documentation. */

static const struct aia_param top_params[] = {
    {"seed", AIA_INT, "1",
     "seed of every random choice: generated data, mini-batches, stragglers",
     NULL, 0, 9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const char *const sections[] = {"algorithm", "problem",   "pool",
                                       "stop",      "output",    "stragglers",
                                       NULL};

static const struct aia_param algorithm_params[] = {
    {"plugin", AIA_STRING, NULL,
     "the algorithm plugin: a bare name (searched) or a path", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param problem_params[] = {
    {"plugin", AIA_STRING, NULL,
     "the problem plugin: a bare name (searched) or a path", NULL, 0, 0},
    {"partition", AIA_ENUM, "block",
     "how rows are split over workers: contiguous blocks or dealt cyclically",
     "block|cyclic", 0, 0},
    {"weights", AIA_DOUBLES, "[]",
     "share of the rows of each worker, in pool order (empty: equal)", NULL,
     0, 1e12},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param data_params[] = {
    {"path", AIA_STRING, NULL,
     "the data file, relative to the job file's folder", NULL, 0, 0},
    {"format", AIA_ENUM, "auto",
     "csv, libsvm (svmlight) or binary (little-endian float64, row-major); "
     "auto: from the extension (.csv .tsv .txt, .svm .libsvm .svmlight, "
     ".bin .f64)",
     "auto|csv|libsvm|binary", 0, 0},
    {"header", AIA_ENUM, "auto",
     "csv: whether the first line names the columns (auto: when one of its "
     "cells is not a number)",
     "auto|yes|no", 0, 0},
    {"target", AIA_STRING, "\"\"",
     "csv and binary: the target column, a header name or an index (0 "
     "first, -1 last; empty: the last)",
     NULL, 0, 0},
    {"delimiter", AIA_ENUM, "auto",
     "csv: the cell separator (space: runs of blanks)",
     "auto|comma|semicolon|tab|space", 0, 0},
    {"cols", AIA_INT, "0",
     "binary: values per row, the target's included (required)", NULL, 0,
     1e9},
    {"rows", AIA_INT, "0", "binary: rows (0: from the file's size)", NULL, 0,
     9.2e18},
    {"storage", AIA_ENUM, "auto",
     "how rows are held: dense, or sparse (CSR; zeros left out); auto: "
     "sparse for libsvm, dense otherwise",
     "auto|dense|sparse", 0, 0},
    {"features", AIA_INT, "0",
     "libsvm: the number of features (0: the largest index in the file)",
     NULL, 0, 4e9},
    {"delivery", AIA_ENUM, "read",
     "read: each worker reads its own rows (a shared file system); scatter: "
     "rank 0 reads the file once and sends each worker its rows",
     "read|scatter", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param pool_params[] = {
    {"workers", AIA_INTS, "[]",
     "ranks that form the pool (empty: every rank but 0)", NULL, 1, 1e9},
    {"shutdown_timeout", AIA_DOUBLE, "30",
     "seconds the coordinator waits for workers to stop before it aborts",
     NULL, 0.001, 1e7},
    {"dead_after", AIA_DOUBLE, "0",
     "seconds a busy worker may stay silent before it is declared dead "
     "and the run goes on without it (0: never; see the README on dead "
     "workers)",
     NULL, 0, 1e9},
    {"topology", AIA_ENUM, "star",
     "star: the coordinator talks to every worker; tree: queries go down "
     "and answers come up a tree of workers, each node combining its "
     "subtree's answers, so no rank receives more than arity messages a "
     "round (synchronous rounds; the algorithm must declare its answers "
     "combinable)",
     "star|tree", 0, 0},
    {"arity", AIA_INT, "2", "tree: children of each node", NULL, 2, 1e6},
    {"mode", AIA_ENUM, "rounds",
     "rounds: a query to every idle worker, then wait (pool.wait); async: "
     "every answer is an iteration and only its sender gets the next query",
     "rounds|async", 0, 0},
    /* bounds on silence: a set-up or a coordinator that hangs */
    {"setup_timeout", AIA_DOUBLE, "600",
     "seconds the set-up (reading the data, the plugins' open and create) "
     "may take before the job is aborted, naming what hung (0: no bound)",
     NULL, 0, 1e9},
    {"coordinator_timeout", AIA_DOUBLE, "600",
     "seconds a worker waits with no word from the coordinator before it "
     "leaves with exit status 1 (0: forever)",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const char *const pool_sections[] = {"wait", "codec", NULL};

static const struct aia_param codec_params[] = {
    {"query", AIA_ENUM, "none",
     "how queries travel: as doubles, rounded to float32, float16 or "
     "bfloat16, or compressed by zstd (lossless)",
     "none|float32|float16|bfloat16|zstd", 0, 0},
    {"answer", AIA_ENUM, "none",
     "how answers travel: as queries, or topk: the largest entries only, "
     "the rest kept by the worker and added to its next answer (error "
     "feedback; for algorithms whose answers are gradients: sgd, gd)",
     "none|float32|float16|bfloat16|topk|zstd", 0, 0},
    {"topk", AIA_DOUBLE, "0.01",
     "topk: entries sent, a fraction of the answer's length when below 1 "
     "(at least one), else a count",
     NULL, 1e-9, 4e9},
    {"level", AIA_INT, "3", "zstd: compression level", NULL, 1, 19},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param wait_params[] = {
    {"plugin", AIA_STRING, "standard",
     "the wait condition: 'standard' (built in) or a plugin", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param stop_params[] = {
    {"iterations", AIA_INT, "0",
     "stop after this many iterations (central updates; 0: no limit)", NULL,
     0, 9.2e18},
    {"time", AIA_DOUBLE, "0",
     "stop after this many seconds of wall time (0: no limit)", NULL, 0,
     1e9},
    {"epochs", AIA_INT, "0",
     "stop after this many epochs: passes in which every live worker "
     "answered at least once (0: no limit)",
     NULL, 0, 9.2e18},
    {"precision", AIA_DOUBLE, "0",
     "stop when the query changes by at most this much (Euclidean norm) "
     "from one iteration to the next (0: never)",
     NULL, 0, 1e300},
    {"loss", AIA_DOUBLE, "0",
     "stop when the loss is at most this (0: never)", NULL, 0, 1e300},
    {"gap", AIA_DOUBLE, "0",
     "stop when (loss - optimum) / optimum is at most this; needs a "
     "problem that knows its optimum (0: never)",
     NULL, 0, 1e300},
    {"check_every", AIA_INT, "1",
     "iterations between evaluations of the loss for the loss and gap "
     "stops",
     NULL, 1, 9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param stragglers_params[] = {
    {"work_ms", AIA_DOUBLE, "0",
     "simulated work added to every answer of every worker", NULL, 0, 1e9},
    {"link_mbps", AIA_DOUBLE, "0",
     "an emulated link of this many megabits per second to each worker: "
     "before sending an answer a worker waits for the bytes of its query "
     "and its answer (headers included) to cross it (0: no emulation)",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const char *const stragglers_sections[] = {
    "fixed", "random", "markov", "hang", "corrupt", NULL};

static const struct aia_param fixed_params[] = {
    {"ranks", AIA_INTS, NULL, "persistent stragglers", NULL, 1, 1e9},
    {"delay_ms", AIA_DOUBLES, NULL,
     "delay added to each of their answers: one value, or one per rank",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param random_params[] = {
    {"probability", AIA_DOUBLE, NULL,
     "chance that any answer of any worker is delayed", NULL, 0, 1},
    {"delay_ms", AIA_DOUBLE, NULL, "the delay", NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param markov_params[] = {
    {"ranks", AIA_INTS, "[]", "workers that have bursts (empty: every one)",
     NULL, 1, 1e9},
    {"p_slow", AIA_DOUBLE, NULL, "chance, per answer, that a fast worker "
                                 "turns slow", NULL, 0, 1},
    {"p_fast", AIA_DOUBLE, NULL, "chance, per answer, that a slow worker "
                                 "turns fast", NULL, 0, 1},
    {"delay_ms", AIA_DOUBLE, NULL, "delay of each answer while slow", NULL,
     0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param hang_params[] = {
    {"ranks", AIA_INTS, NULL,
     "workers that stop answering (until they are told to stop)", NULL, 1,
     1e9},
    {"after", AIA_INT, "0", "answers they give before they hang", NULL, 0,
     9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param corrupt_params[] = {
    {"ranks", AIA_INTS, NULL,
     "workers whose answers arrive malformed (a fault injected to test that "
     "the coordinator does not trust them)",
     NULL, 1, 1e9},
    {"after", AIA_INT, "0", "good answers they give first", NULL, 0,
     9.2e18},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param output_params[] = {
    {"history", AIA_STRING, "\"\"",
     "CSV file of the loss history, relative to the current folder "
     "(empty: none)",
     NULL, 0, 0},
    {"every", AIA_INT, "1",
     "write a history row every this many iterations (first and last "
     "always)",
     NULL, 1, 9.2e18},
    {"answers", AIA_STRING, "\"\"",
     "CSV file with one row per answer: worker, rounds, staleness, times "
     "(empty: none)",
     NULL, 0, 0},
    {"workers", AIA_STRING, "\"\"",
     "CSV file of the per-worker table: answers, staleness, latency "
     "percentiles (empty: none)",
     NULL, 0, 0},
    {"format", AIA_ENUM, "csv",
     "format of the history and the answer log: CSV with a header line, or "
     "JSON Lines (one object a row)",
     "csv|jsonl", 0, 0},
    {"every_epochs", AIA_INT, "0",
     "also write a history row at the end of every this many epochs (0: "
     "by iterations only)",
     NULL, 0, 9.2e18},
    {"iterates", AIA_STRING, "\"\"",
     "binary file of the model at every history row, the last one "
     "included (layout in the README; empty: none)",
     NULL, 0, 0},
    {"final", AIA_STRING, "\"\"",
     "text file of the final model, one value a line (empty: none)", NULL,
     0, 0},
    {"checkpoint", AIA_STRING, "\"\"",
     "file of the coordinator's state, written atomically, for aiarun "
     "--resume (empty: none)",
     NULL, 0, 0},
    {"checkpoint_every", AIA_INT, "0",
     "write the checkpoint every this many iterations (0: not by "
     "iterations)",
     NULL, 0, 9.2e18},
    {"checkpoint_seconds", AIA_DOUBLE, "0",
     "write the checkpoint every this many seconds (0: not by time); it "
     "is also written at the end and when the run is stopped by a signal",
     NULL, 0, 1e9},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const char *const plugin_key[] = {"plugin", NULL};
static const char *const problem_keys[] = {"plugin", "partition", "weights",
                                           "data", NULL};

enum {
    V_TOP,
    V_ALG,
    V_PROB,
    V_POOL,
    V_WAIT,
    V_STOP,
    V_OUT,
    V_STRAG,
    V_FIXED,
    V_RANDOM,
    V_MARKOV,
    V_HANG,
    V_DATA,
    V_CORRUPT,
    V_CODEC
};

/* Bind the runtime's keys of a section.  In a plugin section every other
 * key is left to the plugin (job_plugin_args); elsewhere it is an error,
 * but for the sub-sections named in subs. */
static struct aia_value *bind(const struct job *job, const char *name,
                              const struct mnode *node,
                              const struct mnode *key,
                              const struct aia_param *table,
                              int plugin_section, const char *const *subs,
                              struct aia_error *err)
{
    return params_bind(job->m->path, name, node, key, table,
                       plugin_section ? params_other_keys : subs, NULL, err);
}

static int apply_overrides(struct job *job, const char *const *overrides,
                           struct aia_error *err)
{
    for (const char *const *o = overrides; o && *o; o++) {
        const char *eq = strchr(*o, '=');
        if (!eq || eq == *o)
            return aia_seterr(err, "-o %s: expected key=value", *o);
        char *key = strndup(*o, (size_t)(eq - *o));
        int rc = key ? manifest_set(job->m, key, eq + 1, err)
                     : aia_seterr(err, "out of memory");
        free(key);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A plugin section (algorithm, problem): required, with its plugin key. */
static struct aia_value *plugin_section(struct job *job, const char *name,
                                        const struct aia_param *table,
                                        const char *const *reserved,
                                        struct job_plugin *out,
                                        struct aia_error *err)
{
    const struct mnode *key;
    const struct mnode *node = mnode_get(job->m->root, name, &key);
    if (!node) {
        aia_seterr(err, "%s: missing section '%s' (with at least 'plugin: "
                        "NAME')",
                   job->m->path, name);
        return NULL;
    }
    struct aia_value *v = bind(job, name, node, key, table, 1, NULL, err);
    if (v)
        *out = (struct job_plugin){name, node, key, v[0].s, reserved};
    return v;
}

/* problem.data: where the rows come from, when not generated. */
static int data_section(struct job *job, struct aia_error *err)
{
    struct job_data *d = &job->data;
    const struct mnode *key;
    const struct mnode *node = mnode_get(job->problem.node, "data", &key);
    if (!node)
        return 0;
    struct aia_value *v = job->v[V_DATA] =
        bind(job, "problem.data", node, key, data_params, 0, NULL, err);
    if (!v)
        return -1;
    char where[256];
    params_where(where, sizeof where, job->m->path, key);
    d->key = key;
    d->path = v[0].s[0] == '/' ? strdup(v[0].s) : util_join(job->dir, v[0].s);
    if (!d->path)
        return aia_seterr(err, "out of memory");
    d->format = v[1].i == 0 ? data_format_guess(d->path) : (int)v[1].i - 1;
    char shown[200];
    if (d->format < 0)
        return aia_seterr(err, "%s: problem.data: cannot tell the format of "
                               "'%s' from its name: give format",
                          where, util_shown(shown, sizeof shown, v[0].s, 120));
    static const int headers[] = {DATA_HEADER_AUTO, DATA_HEADER_YES,
                                  DATA_HEADER_NO};
    d->header = headers[v[2].i];
    d->target = *v[3].s ? v[3].s : NULL;
    static const char delimiters[] = {0, ',', ';', '\t', ' '};
    d->delimiter = delimiters[v[4].i];
    d->cols = (size_t)v[5].i;
    d->rows = (size_t)v[6].i;
    d->sparse = v[7].i == 0 ? d->format == DATA_LIBSVM : v[7].i == 2;
    d->features = (size_t)v[8].i;
    d->delivery = (int)v[9].i;
    if (d->format == DATA_BINARY && d->cols == 0)
        return aia_seterr(err, "%s: problem.data: a binary file needs cols "
                               "(values per row, the target's included)",
                          where);
    if (d->format == DATA_LIBSVM && d->target)
        return aia_seterr(err, "%s: problem.data: target: in a libsvm file "
                               "the label is the target",
                          where);
    return 0;
}

/* pool.codec: how queries and answers travel. */
static int codec_section(struct job *job, const struct mnode *pool,
                         struct aia_error *err)
{
    static const int query_ids[] = {CODEC_NONE, CODEC_FLOAT32,
                                    CODEC_FLOAT16, CODEC_BFLOAT16,
                                    CODEC_ZSTD};
    const struct mnode *key = NULL;
    const struct mnode *node = mnode_get(pool, "codec", &key);
    struct aia_value *v = job->v[V_CODEC] =
        bind(job, "pool.codec", node, key, codec_params, 0, NULL, err);
    if (!v)
        return -1;
    job->codec_query = query_ids[v[0].i];
    job->codec_answer = (int)v[1].i;
    job->codec_topk = v[2].d;
    job->codec_level = (int)v[3].i;
    job->codec_node = key;
    const char *which[2] = {"query", "answer"};
    int ids[2] = {job->codec_query, job->codec_answer};
    for (int i = 0; i < 2; i++) {
        if (codec_available(ids[i]))
            continue;
        char where[256];
        params_where(where, sizeof where, job->m->path,
                     mnode_get(node, which[i], NULL));
        return aia_seterr(err, "%s: pool.codec.%s: %s: this aiarun was "
                               "built without libzstd",
                          where, which[i], codec_name(ids[i]));
    }
    if (v[2].d >= 1 && v[2].d != floor(v[2].d)) {
        char where[256];
        params_where(where, sizeof where, job->m->path,
                     mnode_get(node, "topk", NULL));
        return aia_seterr(err, "%s: pool.codec.topk: %g: give a fraction "
                               "below 1 or a whole count",
                          where, v[2].d);
    }
    return 0;
}

/* A sub-section of stragglers, bound into job->v[slot]; NULL (and no
 * error) when absent. */
static struct aia_value *straggler_part(struct job *job,
                                        const struct mnode *sec,
                                        const char *name, int slot,
                                        const struct aia_param *table,
                                        const struct mnode **node,
                                        struct aia_error *err, int *failed)
{
    const struct mnode *key;
    const struct mnode *sub = mnode_get(sec, name, &key);
    *node = sub;
    if (!sub)
        return NULL;
    char dotted[64];
    snprintf(dotted, sizeof dotted, "stragglers.%s", name);
    struct aia_value *v = job->v[slot] =
        bind(job, dotted, sub, key, table, 0, NULL, err);
    *failed = !v;
    return v;
}

static int stragglers(struct job *job, struct aia_error *err)
{
    struct job_stragglers *st = &job->stragglers;
    const struct mnode *key;
    const struct mnode *sec = mnode_get(job->m->root, "stragglers", &key);
    struct aia_value *v = job->v[V_STRAG] =
        bind(job, "stragglers", sec, key, stragglers_params, 0,
             stragglers_sections, err);
    if (!v)
        return -1;
    st->work = v[0].d / 1e3;
    st->link_bps = v[1].d * 1e6;
    int failed = 0;
    const struct mnode *n;
    if ((v = straggler_part(job, sec, "fixed", V_FIXED, fixed_params, &n,
                            err, &failed))) {
        st->fixed = v[0].ints;
        st->nfixed = v[0].n;
        st->fixed_delay = v[1].doubles;
        st->nfixed_delay = v[1].n;
        st->fixed_node = mnode_get(n, "ranks", NULL);
        if (v[1].n != 1 && v[1].n != v[0].n) {
            char where[256];
            params_where(where, sizeof where, job->m->path,
                         mnode_get(n, "delay_ms", NULL));
            return aia_seterr(err, "%s: stragglers.fixed.delay_ms: give one "
                                   "delay, or one per rank (%zu)",
                              where, v[0].n);
        }
    }
    if (failed)
        return -1;
    if ((v = straggler_part(job, sec, "random", V_RANDOM, random_params, &n,
                            err, &failed))) {
        st->random_p = v[0].d;
        st->random_delay = v[1].d / 1e3;
    }
    if (failed)
        return -1;
    if ((v = straggler_part(job, sec, "markov", V_MARKOV, markov_params, &n,
                            err, &failed))) {
        st->markov = 1;
        st->markov_ranks = v[0].n ? v[0].ints : NULL;
        st->nmarkov = v[0].n;
        st->p_slow = v[1].d;
        st->p_fast = v[2].d;
        st->markov_delay = v[3].d / 1e3;
        st->markov_node = mnode_get(n, "ranks", NULL);
    }
    if (failed)
        return -1;
    if ((v = straggler_part(job, sec, "hang", V_HANG, hang_params, &n, err,
                            &failed))) {
        st->hang = v[0].ints;
        st->nhang = v[0].n;
        st->hang_after = v[1].i;
        st->hang_node = mnode_get(n, "ranks", NULL);
    }
    if (failed)
        return -1;
    if ((v = straggler_part(job, sec, "corrupt", V_CORRUPT, corrupt_params,
                            &n, err, &failed))) {
        st->corrupt = v[0].ints;
        st->ncorrupt = v[0].n;
        st->corrupt_after = v[1].i;
        st->corrupt_node = mnode_get(n, "ranks", NULL);
    }
    return failed ? -1 : 0;
}

struct job *job_load(const char *path, const char *text, size_t len,
                     const char *const *overrides, struct aia_error *err)
{
    struct job *job = calloc(1, sizeof *job);
    if (!job) {
        aia_seterr(err, "%s: out of memory", path);
        return NULL;
    }
    if (!(job->m = manifest_parse(path, text, len, err)) ||
        apply_overrides(job, overrides, err) < 0)
        goto fail;
    if (!(job->dir = util_dirname(path))) {
        aia_seterr(err, "%s: out of memory", path);
        goto fail;
    }
    const struct mnode *root = job->m->root, *node, *key;
    struct aia_value *v;

    if (!(v = job->v[V_TOP] = params_bind(path, "", root, NULL, top_params,
                                          sections, NULL, err)))
        goto fail;
    job->seed = (uint64_t)v[0].i;

    if (!(job->v[V_ALG] = plugin_section(job, "algorithm", algorithm_params,
                                         plugin_key, &job->algorithm, err)))
        goto fail;

    if (!(v = job->v[V_PROB] = plugin_section(job, "problem", problem_params,
                                              problem_keys, &job->problem,
                                              err)))
        goto fail;
    job->part_scheme = (int)v[1].i;
    job->weights = v[2].n ? v[2].doubles : NULL;
    job->nweights = v[2].n;
    job->weights_node = mnode_get(job->problem.node, "weights", NULL);
    if (data_section(job, err) < 0)
        goto fail;

    node = mnode_get(root, "pool", &key);
    if (!(v = job->v[V_POOL] = bind(job, "pool", node, key, pool_params, 0,
                                    pool_sections, err)))
        goto fail;
    job->workers = v[0].n ? v[0].ints : NULL;
    job->nworkers = v[0].n;
    job->workers_node = mnode_get(node, "workers", NULL);
    job->shutdown_timeout = v[1].d;
    job->dead_after = v[2].d;
    job->topology = (int)v[3].i;
    job->arity = (int)v[4].i;
    job->topology_node = mnode_get(node, "topology", NULL);
    job->mode = (int)v[5].i;
    job->mode_node = mnode_get(node, "mode", NULL);
    job->setup_timeout = v[6].d;
    job->coordinator_timeout = v[7].d;
    const struct mnode *wkey = NULL;
    const struct mnode *wait = mnode_get(node, "wait", &wkey);
    if (!(v = job->v[V_WAIT] = bind(job, "pool.wait", wait, wkey, wait_params,
                                    1, NULL, err)))
        goto fail;
    job->wait = (struct job_plugin){"pool.wait", wait, wkey ? wkey : key,
                                    v[0].s, plugin_key};

    if (codec_section(job, node, err) < 0)
        goto fail;

    node = mnode_get(root, "stop", &key);
    if (!(v = job->v[V_STOP] = bind(job, "stop", node, key, stop_params, 0,
                                    NULL, err)))
        goto fail;
    job->max_iterations = v[0].i;
    job->max_time = v[1].d;
    job->max_epochs = v[2].i;
    job->precision = v[3].d;
    job->target_loss = v[4].d;
    job->target_gap = v[5].d;
    job->check_every = v[6].i;
    job->gap_node = mnode_get(node, "gap", NULL);
    if (job->max_iterations == 0 && job->max_time == 0 &&
        job->max_epochs == 0) {
        char where[256];
        params_where(where, sizeof where, path, key);
        aia_seterr(err, "%s: stop: give 'iterations', 'epochs' or 'time': "
                        "a job must end even if its accuracy target is "
                        "never met",
                   where);
        goto fail;
    }

    node = mnode_get(root, "output", &key);
    if (!(v = job->v[V_OUT] = bind(job, "output", node, key, output_params,
                                   0, NULL, err)))
        goto fail;
    job->history = *v[0].s ? v[0].s : NULL;
    job->every = v[1].i;
    job->answers = *v[2].s ? v[2].s : NULL;
    job->workers_csv = *v[3].s ? v[3].s : NULL;
    job->format = (int)v[4].i;
    job->every_epochs = v[5].i;
    job->iterates = *v[6].s ? v[6].s : NULL;
    job->final = *v[7].s ? v[7].s : NULL;
    job->checkpoint = *v[8].s ? v[8].s : NULL;
    job->checkpoint_every = v[9].i;
    job->checkpoint_seconds = v[10].d;
    job->checkpoint_node = mnode_get(node, "checkpoint", NULL);
    if (job->topology == JOB_TREE &&
        (job->codec_query != CODEC_NONE || job->codec_answer != CODEC_NONE)) {
        char where[256];
        params_where(where, sizeof where, path, job->codec_node);
        aia_seterr(err, "%s: pool.codec: a tree's nodes combine answers as "
                        "doubles: codecs are for the star topology only",
                   where);
        goto fail;
    }
    if (job->topology == JOB_TREE && (job->mode == JOB_ASYNC || wait)) {
        char where[256];
        params_where(where, sizeof where, path, job->topology_node);
        aia_seterr(err, "%s: pool.topology: a tree waits for every worker "
                        "each round: it takes no %s",
                   where, wait ? "pool.wait" : "async mode");
        goto fail;
    }
    if (job->mode == JOB_ASYNC && wait) {
        char where[256];
        params_where(where, sizeof where, path, wkey);
        aia_seterr(err, "%s: pool.wait: in async mode every answer ends an "
                        "iteration: there is nothing to wait for",
                   where);
        goto fail;
    }
    if (stragglers(job, err) < 0)
        goto fail;
    return job;
fail:
    job_free(job);
    return NULL;
}

void job_free(struct job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < sizeof job->v / sizeof job->v[0]; i++)
        params_free(job->v[i]);
    manifest_free(job->m);
    free(job->dir);
    free(job->data.path);
    free(job);
}

struct aia_value *job_plugin_args(const struct job *job,
                                  const struct job_plugin *s,
                                  const struct plugin *p,
                                  struct aia_error *err)
{
    for (const struct aia_param *q = p->h->params; q && q->name; q++)
        for (const char *const *r = s->reserved; *r; r++)
            if (strcmp(q->name, *r) == 0)
                return aia_seterr(err, "%s: plugin '%s' has a parameter "
                                       "named '%s', which the runtime "
                                       "reserves in section %s",
                                  p->path, p->h->name, q->name, s->name),
                       NULL;
    return params_bind(job->m->path, s->name, s->node, s->key, p->h->params,
                       s->reserved, p->h->name, err);
}

void job_blame(const struct job *job, const struct job_plugin *s,
               struct aia_error *err)
{
    char where[256], text[AIA_ERROR_LEN];
    params_where(where, sizeof where, job->m->path, s->key);
    snprintf(text, sizeof text, "%s", err->text);
    aia_seterr(err, "%s: %s: %s", where, s->name, text);
}

static void reference_table(FILE *out, const char *title,
                            const struct aia_param *table, const char *note)
{
    fprintf(out, "\n#### `%s`\n\n", title);
    if (note)
        fprintf(out, "%s\n\n", note);
    fprintf(out, "| key | type | default | meaning |\n"
                 "|---|---|---|---|\n");
    for (const struct aia_param *p = table; p->name; p++) {
        char type[128], range[64];
        if (p->type == AIA_ENUM) {
            /* '|' would end the table's cell */
            size_t k = 0;
            for (const char *c = p->choices; *c && k < sizeof type - 3; c++) {
                type[k++] = *c == '|' ? ',' : *c;
                if (*c == '|')
                    type[k++] = ' ';
            }
            type[k] = '\0';
        } else {
            snprintf(type, sizeof type, "%s", params_type_name(p->type));
        }
        params_range(range, sizeof range, p);
        fprintf(out, "| `%s` | %s | %s | %s%s%s%s |\n", p->name, type,
                p->def ? p->def : "required", p->help, *range ? " (" : "",
                range, *range ? ")" : "");
    }
}

void job_reference(FILE *out)
{
    reference_table(out, "top level", top_params,
                    "Sections: `algorithm`, `problem`, `pool`, `stop`, "
                    "`output`, `stragglers`.");
    reference_table(out, "algorithm", algorithm_params,
                    "Every other key is a parameter of the algorithm plugin "
                    "(`aiarun --list-plugins`).");
    reference_table(out, "problem", problem_params,
                    "Every other key is a parameter of the problem plugin.");
    reference_table(out, "problem.data", data_params,
                    "Rows from a file instead of generated ones, for "
                    "problems that take them (lrmse, logreg). Each worker "
                    "holds only its rows; the coordinator holds all of "
                    "them, for the loss.");
    reference_table(out, "pool", pool_params, NULL);
    reference_table(out, "pool.codec", codec_params,
                    "How the doubles of queries and answers travel (see "
                    "Compression); star topology only.");
    reference_table(out, "pool.wait", wait_params,
                    "Every other key is a parameter of the wait condition.");
    reference_table(out, "stop", stop_params,
                    "The run stops at the first limit or target reached; "
                    "one of iterations, epochs and time is required.");
    reference_table(out, "output", output_params, NULL);
    reference_table(out, "stragglers", stragglers_params,
                    "Injected delays, seeded by `seed`, for experiments and "
                    "tests. A worker that is delayed still notices a stop "
                    "at once.");
    reference_table(out, "stragglers.fixed", fixed_params, NULL);
    reference_table(out, "stragglers.random", random_params, NULL);
    reference_table(out, "stragglers.markov", markov_params,
                    "Each worker switches between a fast and a slow state, "
                    "per answer, as cluster traces show bursts.");
    reference_table(out, "stragglers.hang", hang_params, NULL);
    reference_table(out, "stragglers.corrupt", corrupt_params, NULL);
}
