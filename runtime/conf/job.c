/* job.c - the runtime's sections of a job file: each section's rows
 * (job_keys.h) bound into its struct, then the checks that span keys. */
#include <config.h>

#include "job.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "data/data.h"
#include "job_keys.h"
#include "sim/latency.h"
#include "record/output.h"
#include "params.h"
#include "core/util.h"

/* Set err to "file:line:col: text" for node n (the file alone when n is
 * NULL).  Returns -1. */
static int blame(const struct job *job, const struct mnode *n,
                 struct aia_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int blame(const struct job *job, const struct mnode *n,
                 struct aia_error *err, const char *fmt, ...)
{
    char where[256], text[AIA_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    params_where(where, sizeof where, job->m->path, n);
    return aia_seterr(err, "%s: %s", where, text);
}

/* The section at a dotted path, and its key. */
static const struct mnode *find(const struct mnode *root, const char *path,
                                const struct mnode **key)
{
    const struct mnode *n = root;
    *key = NULL;
    if (!*path)
        return root;
    char part[64];
    for (const char *p = path; n && *p;) {
        size_t len = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)len, p);
        n = mnode_get(n, part, key);
        p += len + (p[len] == '.');
    }
    return n;
}

/* Bind one section into job->v[index] and its fields. */
static int bind_section(struct job *job, size_t index, struct aia_error *err)
{
    const struct job_section *s = &job_sections[index];
    if (index >= sizeof job->v / sizeof job->v[0])
        return aia_seterr(err, "%s: more sections than struct job holds",
                          s->path);
    const struct mnode *key;
    const struct mnode *node = find(job->m->root, s->path, &key);
    if (!node && s->kind == JS_PLUGIN)
        return aia_seterr(err,
                          "%s: missing section '%s' (with at least "
                          "'plugin: NAME')",
                          job->m->path, s->path);
    if (!node && s->kind == JS_PRESENT)
        return 0;
    /* Keys that are sub-sections are the sub-section's to bind. */
    const char *subs[16];
    size_t nsub = 0, plen = strlen(s->path);
    for (const struct job_section *t = job_sections; t->path; t++) {
        const char *rest = t->path + plen + (plen > 0);
        if (t != s && strncmp(t->path, s->path, plen) == 0 &&
            (plen == 0 || t->path[plen] == '.') && !strchr(rest, '.') &&
            nsub < sizeof subs / sizeof subs[0] - 1)
            subs[nsub++] = rest;
    }
    subs[nsub] = NULL;
    const struct aia_value *v = job->v[index] = params_bind(
        job->m->path, s->path, node, key, job_section_params(s),
        s->kind == JS_PLUGIN || s->kind == JS_PLUGIN_OPT ? params_other_keys
                                                         : subs,
        NULL, err);
    if (!v || job_keys_store(job, s, node, v, err) < 0)
        return -1;
    return s->check ? s->check(job, node, key, v, err) : 0;
}

/* Whether the dotted path names a runtime section, one of its keys, or a
 * key in a plugin's section (which the plugin checks once loaded). */
static int known_path(const char *path)
{
    for (const struct job_section *s = job_sections; s->path; s++) {
        size_t n = strlen(s->path);
        const char *rest = path + n + (n > 0);
        if (strcmp(path, s->path) == 0)
            return 1;
        if (n && (strncmp(path, s->path, n) != 0 || path[n] != '.'))
            continue;
        if ((s->kind == JS_PLUGIN || s->kind == JS_PLUGIN_OPT) && n)
            return 1;
        for (const struct job_key *k = s->keys; k->p.name; k++)
            if (strcmp(rest, k->p.name) == 0)
                return 1;
    }
    return 0;
}

/* -o KEY=VALUE sets a key; -o KEY= (nothing after '=') removes a key,
 * which takes its default again, or a whole section. */
static int apply_overrides(struct job *job, const char *const *overrides,
                           struct aia_error *err)
{
    for (const char *const *o = overrides; o && *o; o++) {
        const char *eq = strchr(*o, '=');
        if (!eq || eq == *o)
            return aia_seterr(err, "-o %s: expected key=value", *o);
        char *key = strndup(*o, (size_t)(eq - *o));
        int rc;
        if (!key)
            rc = aia_seterr(err, "out of memory");
        else if (eq[1])
            rc = manifest_set(job->m, key, eq + 1, err);
        else if ((rc = manifest_unset(job->m, key, err)) == 0 &&
                 !known_path(key))
            rc = aia_seterr(err,
                            "-o %s: no such key or section to remove "
                            "(the file has none, and aiarun knows none)",
                            *o);
        free(key);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Checks of what single keys cannot say                               */

/* The section of job_sections at path (a plugin section's, for the keys
 * the runtime reserves in it). */
static const struct job_section *section(const char *path)
{
    const struct job_section *s = job_sections;
    while (s->path && strcmp(s->path, path) != 0)
        s++;
    return s;
}

static int check_algorithm(struct job *job, const struct mnode *node,
                           const struct mnode *key, const struct aia_value *v,
                           struct aia_error *err)
{
    (void)err;
    job->algorithm =
        (struct job_plugin){"algorithm", node, key, aia_arg(v, "plugin")->s,
                            job_section_reserved(section("algorithm"))};
    return 0;
}

static int check_problem(struct job *job, const struct mnode *node,
                         const struct mnode *key, const struct aia_value *v,
                         struct aia_error *err)
{
    (void)err;
    job->problem =
        (struct job_plugin){"problem", node, key, aia_arg(v, "plugin")->s,
                            job_section_reserved(section("problem"))};
    return 0;
}

static int check_wait(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)err;
    const struct mnode *pool_key;
    find(job->m->root, "pool", &pool_key);
    job->wait = (struct job_plugin){"pool.wait", node, key ? key : pool_key,
                                    aia_arg(v, "plugin")->s,
                                    job_section_reserved(section("pool.wait"))};
    return 0;
}

/* problem.data: the path resolved, the format guessed, what the format
 * needs. */
static int check_rows(struct job *job, struct job_data *d, const char *full,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    const char *path = aia_arg(v, "path")->s;
    d->key = key;
    d->path = path[0] == '/' ? strdup(path) : util_join(job->dir, path);
    if (!d->path)
        return aia_seterr(err, "out of memory");
    if (d->format < 0)
        d->format = data_format_guess(d->path);
    char shown[200];
    if (d->format < 0)
        return blame(job, key, err,
                     "%s: cannot tell the format "
                     "of '%s' from its name: give format",
                     full, util_shown(shown, sizeof shown, path, 120));
    if (d->sparse < 0)
        d->sparse = d->format == DATA_LIBSVM;
    /* targets: a file (npy, idx) or a dataset's name (hdf5) */
    const char *t = d->targets_key;
    if (t && d->format < DATA_NPY)
        return blame(job, key, err,
                     "%s: targets: only npy, idx and hdf5 files "
                     "take their targets from elsewhere",
                     full);
    if (t && !(d->targets = d->format == DATA_HDF5 || t[0] == '/'
                                ? strdup(t)
                                : util_join(job->dir, t)))
        return aia_seterr(err, "out of memory");
    if (d->format == DATA_BINARY && d->cols == 0)
        return blame(job, key, err,
                     "%s: a binary file needs cols "
                     "(values per row, the target's "
                     "included)",
                     full);
    if (d->format == DATA_LIBSVM && d->target)
        return blame(job, key, err,
                     "%s: target: in a libsvm file "
                     "the label is the target",
                     full);
    return 0;
}

static int check_data(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)node;
    return check_rows(job, &job->data, "problem.data", key, v, err);
}

/* problem.test: held-out rows, read as problem.data's. */
static int check_test(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)node;
    if (!job->data.path)
        return blame(job, key, err,
                     "problem.test: a test set needs problem.data (the "
                     "training rows) too");
    return check_rows(job, &job->test, "problem.test", key, v, err);
}

/* pool.codec: the codecs this build has, topk a fraction or a count. */
static int check_codec(struct job *job, const struct mnode *node,
                       const struct mnode *key, const struct aia_value *v,
                       struct aia_error *err)
{
    job->codec_node = key;
    const char *which[2] = {"query", "answer"};
    int ids[2] = {job->codec.query, job->codec.answer};
    for (int i = 0; i < 2; i++) {
        if (!codec_available(ids[i]))
            return blame(job, mnode_get(node, which[i], NULL), err,
                         "pool.codec.%s: %s: this aiarun was built without "
                         "libzstd",
                         which[i], codec_name(ids[i]));
    }
    double topk = aia_arg(v, "topk")->d;
    if (topk >= 1 && topk != floor(topk))
        return blame(job, mnode_get(node, "topk", NULL), err,
                     "pool.codec.topk: %g: give a fraction below 1 or a "
                     "whole count",
                     topk);
    return 0;
}

/* output.history_sample: auto, all or a whole count of rows, which only
 * rows from a file can be sampled from. */
static int check_output(struct job *job, const struct mnode *node,
                        const struct mnode *key, const struct aia_value *v,
                        struct aia_error *err)
{
    (void)key;
    const struct aia_value *a = aia_arg(v, "history_sample");
    const struct mnode *n =
        node ? mnode_get(node, "history_sample", NULL) : NULL;
    job->output.history_sample = OUTPUT_SAMPLE_AUTO;
    if (a->s)
        job->output.history_sample =
            strcmp(a->s, "all") ? OUTPUT_SAMPLE_AUTO : OUTPUT_SAMPLE_ALL;
    else if (a->d != floor(a->d))
        return blame(job, n, err,
                     "output.history_sample: %g: give a whole count of "
                     "rows, all or auto",
                     a->d);
    else if (!job->data.path)
        return blame(job, n, err,
                     "output.history_sample: %g rows: a sample is drawn "
                     "from problem.data's rows, and this job has none "
                     "(give all or auto)",
                     a->d);
    else
        job->output.history_sample = (int64_t)a->d;
    return 0;
}

static int check_stop(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)node;
    (void)v;
    if (job->stop.iterations == 0 && job->stop.time == 0 &&
        job->stop.epochs == 0)
        return blame(job, key, err,
                     "stop: give 'iterations', 'epochs' or "
                     "'time': a job must end even if its "
                     "accuracy target is never met");
    return 0;
}

static int check_fixed(struct job *job, const struct mnode *node,
                       const struct mnode *key, const struct aia_value *v,
                       struct aia_error *err)
{
    (void)key;
    (void)v;
    const struct job_stragglers *st = &job->stragglers;
    if (st->nfixed_delay != 1 && st->nfixed_delay != st->nfixed)
        return blame(job, mnode_get(node, "delay_ms", NULL), err,
                     "stragglers.fixed.delay_ms: give one delay, or one per "
                     "rank (%zu)",
                     st->nfixed);
    return 0;
}

static int check_slow(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)key;
    (void)v;
    const struct job_stragglers *st = &job->stragglers;
    if (st->nslow_factor != 1 && st->nslow_factor != st->nslow)
        return blame(job, mnode_get(node, "factor", NULL), err,
                     "stragglers.slow.factor: give one factor, or one per "
                     "rank (%zu)",
                     st->nslow);
    return 0;
}

static int check_markov(struct job *job, const struct mnode *node,
                        const struct mnode *key, const struct aia_value *v,
                        struct aia_error *err)
{
    (void)node, (void)key, (void)v, (void)err;
    job->stragglers.markov = 1;
    return 0;
}

/* simulate.dsag: a preset's values for the keys not given. */
static int check_dsag(struct job *job, const struct mnode *node,
                      const struct mnode *key, const struct aia_value *v,
                      struct aia_error *err)
{
    (void)node;
    if (latency_preset(&job->simulate, v, err) < 0)
        return blame(job, key, err, "%s", err->text);
    return 0;
}

/* simulate: its dsag section present exactly when compute is dsag. */
static int check_simulate(struct job *job, const struct mnode *node,
                          const struct mnode *key, const struct aia_value *v,
                          struct aia_error *err)
{
    const struct job_simulate *sim = &job->simulate;
    const struct mnode *dkey;
    const struct mnode *dsag = node ? mnode_get(node, "dsag", &dkey) : NULL;
    if (!dsag && sim->compute == LATENCY_DSAG)
        return blame(job, sim->compute_node, err,
                     "simulate.compute: dsag needs a simulate.dsag section");
    if (dsag && sim->compute != LATENCY_DSAG)
        return blame(job, dkey, err,
                     "simulate.dsag: the model is used only with "
                     "simulate.compute: dsag");
    return 0;
}

static int check_limits(struct job *job, const struct mnode *node,
                        const struct mnode *key, const struct aia_value *v,
                        struct aia_error *err)
{
    (void)key, (void)v;
    if (job->limits.memory_text &&
        job_parse_bytes(job->limits.memory_text, &job->limits.memory) < 0)
        return blame(job, mnode_get(node, "memory", NULL), err,
                     "limits.memory: '%s': expected bytes, as 8e9, 512M or "
                     "16G",
                     job->limits.memory_text);
    return 0;
}

/* A pool.wait key a tree cannot keep (its value at *at), or NULL: a tree
 * waits for every worker, as the standard wait with nwait 0 (or all) and
 * no timeout_ms; include, staleness and grace then change nothing.  A
 * value that is no number is left to the wait's own check. */
static const char *tree_wait_conflict(const struct mnode *wait,
                                      const struct mnode **at)
{
    const char *const zero[] = {"nwait", "timeout_ms"};
    const struct mnode *n = *at = mnode_get(wait, "plugin", NULL);
    if (n && (n->kind != MNODE_SCALAR || strcmp(n->text, "standard") != 0))
        return "plugin";
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) {
        char *end;
        n = *at = mnode_get(wait, zero[i], NULL);
        if (n && n->kind == MNODE_SCALAR && *n->text &&
            strtod(n->text, &end) != 0 && !*end)
            return zero[i];
    }
    return NULL;
}

/* What the sections say of each other. */
static int check_across(struct job *job, struct aia_error *err)
{
    const struct mnode *wkey;
    const struct mnode *wait = find(job->m->root, "pool.wait", &wkey);
    if (job->pool.topology == JOB_TREE &&
        (job->codec.query != CODEC_NONE || job->codec.answer != CODEC_NONE))
        return blame(job, job->codec_node, err,
                     "pool.codec: a tree's nodes combine answers as "
                     "doubles: codecs are for the star topology only");
    if (job->pool.topology == JOB_TREE && job->pool.mode == JOB_ASYNC)
        return blame(job, job->pool.topology_node, err,
                     "pool.topology: a tree waits for every worker each "
                     "round: it takes no async mode");
    const struct mnode *at;
    const char *what;
    if (job->pool.topology == JOB_TREE && wait &&
        (what = tree_wait_conflict(wait, &at)))
        return blame(job, at, err,
                     "pool.wait.%s: pool.topology: a tree waits for every "
                     "worker each round: its pool.wait may only say so (the "
                     "standard wait, nwait: 0 or all: true, no timeout_ms)",
                     what);
    if (job->pool.mode == JOB_ASYNC && wait)
        return blame(job, wkey, err,
                     "pool.wait: in async mode every answer ends an "
                     "iteration: there is nothing to wait for");
    return 0;
}

/* In binding order: a check may read the fields of sections above it.
 * Each section's rows bind into its own struct, at base in struct job. */
#define AT(field) offsetof(struct job, field)
const struct job_section job_sections[] = {
    {"", job_keys_top, JS_PLAIN, 0, NULL,
     "Sections: `algorithm`, `problem`, `pool`, `stop`, `output`, "
     "`limits`, `stragglers`, `simulate`."},
    {"algorithm", job_keys_algorithm, JS_PLUGIN, 0, check_algorithm,
     "Every other key is a parameter of the algorithm plugin (`aiarun "
     "--list-plugins`)."},
    {"problem", job_keys_problem, JS_PLUGIN, AT(part), check_problem,
     "Every other key is a parameter of the problem plugin."},
    {"problem.data", job_keys_data, JS_PRESENT, AT(data), check_data,
     "Rows from a file instead of generated ones, for problems that take "
     "them. Each worker holds only its rows and the coordinator none: the "
     "workers compute the loss and the metric on their rows (in a tree the "
     "coordinator holds them all)."},
    {"problem.test", job_keys_data, JS_PRESENT, AT(test), check_test,
     "Held-out rows, the same keys as `problem.data`: each worker holds "
     "its share, and their loss and metric are reported beside the "
     "training ones (`test_loss`, `test_<metric>`)."},
    {"pool", job_keys_pool, JS_PLAIN, AT(pool), NULL, NULL},
    {"pool.codec", job_keys_codec, JS_PLAIN, AT(codec), check_codec,
     "How the doubles of queries and answers travel (see Compression); "
     "star topology only."},
    {"pool.wait", job_keys_wait, JS_PLUGIN_OPT, 0, check_wait,
     "Every other key is a parameter of the wait condition."},
    {"stop", job_keys_stop, JS_PLAIN, AT(stop), check_stop,
     "The run stops at the first limit or target reached; one of "
     "iterations, epochs and time is required."},
    {"output", job_keys_output, JS_PLAIN, AT(output), check_output, NULL},
    {"limits", job_keys_limits, JS_PLAIN, AT(limits), check_limits,
     "Bounds a job is checked against before it allocates."},
    {"stragglers", job_keys_stragglers, JS_PLAIN, AT(stragglers), NULL,
     "Injected delays, seeded by `seed`, for experiments and tests. A "
     "worker that is delayed still notices a stop at once."},
    {"stragglers.fixed", job_keys_fixed, JS_PRESENT, AT(stragglers),
     check_fixed, NULL},
    {"stragglers.random", job_keys_random, JS_PRESENT, AT(stragglers), NULL,
     NULL},
    {"stragglers.markov", job_keys_markov, JS_PRESENT, AT(stragglers),
     check_markov,
     "Each worker switches between a fast and a slow state, per answer, as "
     "cluster traces show bursts."},
    {"stragglers.slow", job_keys_slow, JS_PRESENT, AT(stragglers), check_slow,
     "Workers that are slower per row for the whole run, as on a shared "
     "cluster: under mpirun such a worker sleeps (factor - 1) times the "
     "measured time of each step after computing it; under --simulate its "
     "compute time is multiplied by factor."},
    {"stragglers.hang", job_keys_hang, JS_PRESENT, AT(stragglers), NULL, NULL},
    {"stragglers.corrupt", job_keys_corrupt, JS_PRESENT, AT(stragglers), NULL,
     NULL},
    {"simulate", latency_keys_simulate, JS_PLAIN, AT(simulate), check_simulate,
     "Virtual times of `aiarun --simulate N` (see Simulation); ignored "
     "under mpirun. The stragglers section's delays are added as "
     "under mpirun."},
    {"simulate.dsag", latency_keys_dsag, JS_PRESENT, AT(simulate), check_dsag,
     "The DSAG trace model: each worker's compute (and communication) "
     "times are Gamma, with a mean and a coefficient of variation "
     "drawn once per worker from log-normals; a two-state chain puts "
     "workers in bursts. Two presets: paper, the DSAG paper's model "
     "(bursts 1.103x as slow, as in its appendix), and harsh, the one "
     "etc/dsag-sim.yaml uses (a wider spread across workers, 5x "
     "bursts), harsher than the paper's."},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct mnode *job_value_node(const struct job *job, const char *path)
{
    const struct mnode *key;
    return find(job->m->root, path, &key);
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
    if (job_sections_init() < 0) {
        aia_seterr(err, "%s: the job keys' derived tables are too small", path);
        goto fail;
    }
    for (size_t i = 0; job_sections[i].path; i++)
        if (bind_section(job, i, err) < 0)
            goto fail;
    if (check_across(job, err) < 0)
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
    free(job->data.targets);
    free(job->test.path);
    free(job->test.targets);
    free(job);
}

struct aia_value *job_plugin_args(const struct job *job,
                                  const struct job_plugin *s,
                                  const struct plugin *p, struct aia_error *err)
{
    for (const struct aia_param *q = p->h->params; q && q->name; q++)
        for (const char *const *r = s->reserved; *r; r++)
            if (strcmp(q->name, *r) == 0)
                return aia_seterr(err,
                                  "%s: plugin '%s' has a parameter "
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
    snprintf(text, sizeof text, "%s", util_error_text(err));
    aia_seterr(err, "%s: %s: %s", where, s->name, text);
}
