/* job_fuzz.c - libFuzzer target: job files read and checked as aiarun
 * --check would, with the plugins' parameter tables copied in place of
 * dlopen.  Any crash, leak, hang or unclear refusal is a finding.
 *
 *     make fuzz FUZZ_SECONDS=600
 */
#include <config.h>

#include "job_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/builtin.h"
#include "conf/freeargs.h"
#include "conf/job.h"
#include "session/loader.h"
#include "conf/params.h"
#include "session/straggle.h"

#define POOL 4
#define OVERRIDE_LEN 120

/* Copies of the shipped plugins' tables (plugins/, problems/): the
 * harness binds against them without loading the plugins, and
 * t/fuzz-tables holds them equal to the plugins' own. */
static const struct aia_param sgd_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {"batch", AIA_INT, "0", "", NULL, 0, 1000000000000},
    {"schedule", AIA_ENUM, "constant", "", "constant|invsqrt|step", 0, 0},
    {"decay", AIA_DOUBLE, "0.5", "", NULL, 0, 1},
    {"decay_every", AIA_INT, "100", "", NULL, 1, 1000000000000},
    {"momentum", AIA_DOUBLE, "0", "", NULL, 0, 0.9999},
    {"momentum_every", AIA_ENUM, "answer", "", "answer|round", 0, 0},
    {"staleness_scaling", AIA_ENUM, "false", "", "false|true|adaptive", 0, 0},
    {"weighting", AIA_ENUM, "rows", "", "rows|equal", 0, 0},
    {"update", AIA_ENUM, "auto", "", "auto|answer|table", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param gd_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param average_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {"local_steps", AIA_INT, "1", "", NULL, 1, 1000000000},
    {"batch", AIA_INT, "0", "", NULL, 0, 1000000000000},
    {"weights", AIA_DOUBLES, "[]", "", NULL, 0, 1000000000000},
    {"memory", AIA_ENUM, "latest", "", "latest|delta", 0, 0},
    {"delay", AIA_INT, "0", "", NULL, 0, 1000000000},
    {"compensate", AIA_BOOL, "true", "", NULL, 0, 0},
    {"preempt_every", AIA_INT, "0", "", NULL, 0, 1000000000},
    {"preempt", AIA_INT, "1", "", NULL, 1, 1000000},
    {"staleness", AIA_ENUM, "auto", "", "auto|none|decay|gd", 0, 0},
    {"decay", AIA_DOUBLE, "0.5", "", NULL, 0, 1},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param newton_params[] = {
    {"cg", AIA_INT, "50", "", NULL, 1, 200},
    {"tolerance", AIA_DOUBLE, "0", "", NULL, 0, 1e+300},
    {"warm", AIA_BOOL, "true", "", NULL, 0, 0},
    {"hessian", AIA_ENUM, "fastest", "", "all|fastest", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param lbfgs_params[] = {
    {"memory", AIA_INT, "10", "", NULL, 1, 1000},
    {"tolerance", AIA_DOUBLE, "0", "", NULL, 0, 1e+300},
    {"stale_pairs", AIA_ENUM, "drop", "", "drop|keep", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param sag_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {"variant", AIA_ENUM, "dsag", "", "sag|dsag", 0, 0},
    {"subpartitions", AIA_INT, "1", "", NULL, 1, 1000000},
    {"balance", AIA_ENUM, "off", "", "off|on", 0, 0},
    {"balance_every", AIA_INT, "10", "", NULL, 1, 1000000000},
    {"balance_window", AIA_INT, "20", "", NULL, 2, 10000},
    {"balance_threshold", AIA_DOUBLE, "0.95", "", NULL, 0.01, 1},
    {"balance_max", AIA_INT, "1000", "", NULL, 1, 1000000000},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param subspace_params[] = {
    {"oversample", AIA_INT, "10", "", NULL, 0, 1000000},
    {"window", AIA_INT, "32", "", NULL, 1, 256},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param rennala_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {"gradients", AIA_INT, "0", "", NULL, 0, 1000000000},
    {"noise", AIA_DOUBLE, "0", "", NULL, 0, 1e+300},
    {"epsilon", AIA_DOUBLE, "1e-6", "", NULL, 1e-300, 1e+300},
    {"batch", AIA_INT, "0", "", NULL, 0, 1000000000000},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param ringmaster_params[] = {
    {"step", AIA_DOUBLE, "auto", "", "auto", 1e-300, 1e+300},
    {"max_delay", AIA_INT, "0", "", NULL, 0, 1000000000},
    {"noise", AIA_DOUBLE, "0", "", NULL, 0, 1e+300},
    {"epsilon", AIA_DOUBLE, "1e-6", "", NULL, 1e-300, 1e+300},
    {"batch", AIA_INT, "0", "", NULL, 0, 1000000000000},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param lrmse_params[] = {
    {"rows", AIA_INT, "1000", "", NULL, 1, 1000000000000},
    {"cols", AIA_INT, "10", "", NULL, 1, 1000000000},
    {"noise", AIA_DOUBLE, "0.1", "", NULL, 0, 1000000},
    {"ridge", AIA_DOUBLE, "0", "", NULL, 0, 1000000000000},
    {"condition", AIA_DOUBLE, "1", "", NULL, 1, 1e+15},
    {"corrupt", AIA_INTS, "[]", "", NULL, 0, 1000000},
    {"corrupt_noise", AIA_DOUBLE, "100", "", NULL, 0, 1000000000000},
    {"precision", AIA_ENUM, "float64", "", "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param logreg_params[] = {
    {"rows", AIA_INT, "1000", "", NULL, 1, 1000000000000},
    {"cols", AIA_INT, "10", "", NULL, 1, 1000000000},
    {"l2", AIA_DOUBLE, "0", "", NULL, 0, 1000000000000},
    {"flip", AIA_DOUBLE, "0", "", NULL, 0, 1},
    {"margin", AIA_DOUBLE, "0.1", "", NULL, 0, 1000000},
    {"precision", AIA_ENUM, "float64", "", "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param pca_params[] = {
    {"k", AIA_INT, "3", "", NULL, 1, 1000000},
    {"rows", AIA_INT, "2000", "", NULL, 1, 1000000000000},
    {"cols", AIA_INT, "50", "", NULL, 1, 1000000000},
    {"density", AIA_DOUBLE, "0.2", "", NULL, 1e-09, 1},
    {"decay", AIA_DOUBLE, "0.8", "", NULL, 1e-06, 1},
    {"precision", AIA_ENUM, "float64", "", "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param softmax_params[] = {
    {"classes", AIA_INT, NULL, "", NULL, 2, 1000000},
    {"l2", AIA_DOUBLE, "0", "", NULL, 0, 1000000000000},
    {"precision", AIA_ENUM, "float64", "", "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param mlp_params[] = {
    {"classes", AIA_INT, NULL, "", NULL, 2, 1000000},
    {"hidden", AIA_INTS, "[64]", "", NULL, 1, 1000000},
    {"l2", AIA_DOUBLE, "0", "", NULL, 0, 1000000000000},
    {"precision", AIA_ENUM, "float64", "", "float64|float32", 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param python_params[] = {
    {"class", AIA_STRING, NULL, "", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* The first of each kind is used for names the harness does not know, so
 * that every input's plugin section is bound against something. */
const struct job_fuzz_table job_fuzz_tables[] = {
    {"sgd", AIA_KIND_ALGORITHM, sgd_params, 0},
    {"gd", AIA_KIND_ALGORITHM, gd_params, 0},
    {"average", AIA_KIND_ALGORITHM, average_params, 0},
    {"python", AIA_KIND_ALGORITHM, python_params, AIA_PARAMS_OPEN},
    {"newton", AIA_KIND_ALGORITHM, newton_params, 0},
    {"lbfgs", AIA_KIND_ALGORITHM, lbfgs_params, 0},
    {"subspace", AIA_KIND_ALGORITHM, subspace_params, 0},
    {"rennala", AIA_KIND_ALGORITHM, rennala_params, 0},
    {"ringmaster", AIA_KIND_ALGORITHM, ringmaster_params, 0},
    {"sag", AIA_KIND_ALGORITHM, sag_params, 0},
    {"lrmse", AIA_KIND_PROBLEM, lrmse_params, 0},
    {"logreg", AIA_KIND_PROBLEM, logreg_params, 0},
    {"python", AIA_KIND_PROBLEM, python_params, AIA_PARAMS_OPEN},
    {"pca", AIA_KIND_PROBLEM, pca_params, 0},
    {"softmax", AIA_KIND_PROBLEM, softmax_params, 0},
    {"mlp", AIA_KIND_PROBLEM, mlp_params, 0},
    {NULL, 0, NULL, 0},
};

static const struct job_fuzz_table *table_of(const char *spec, int kind)
{
    const struct job_fuzz_table *first = NULL;
    for (const struct job_fuzz_table *t = job_fuzz_tables; t->name; t++) {
        if (t->kind != kind)
            continue;
        if (!first)
            first = t;
        if (strcmp(t->name, spec) == 0)
            return t;
    }
    return first;
}

/* Check the plugin name of section s as loader_open would, and bind the
 * section against the table of its plugin; 0 or -1. */
static int bind_plugin(const struct job *job, const struct job_plugin *s,
                       int kind, struct aia_value **args, struct aia_error *err)
{
    if (loader_spec_check(s->spec, kind, err) < 0) {
        job_blame(job, s, err);
        return -1;
    }
    struct aia_plugin_header h = {.abi = AIA_ABI_VERSION, .kind = kind};
    if (kind == AIA_KIND_WAIT) {
        h = *builtin_find("standard", AIA_KIND_WAIT);
    } else {
        const struct job_fuzz_table *t = table_of(s->spec, kind);
        h.name = t->name;
        h.params = t->params;
        h.pflags = t->pflags;
    }
    struct plugin p = {.kind = kind, .path = (char *)"built-in", .h = &h};
    *args = h.pflags & AIA_PARAMS_OPEN ? freeargs_bind(job, s, &p, err)
                                       : job_plugin_args(job, s, &p, err);
    return *args ? 0 : -1;
}

/* The standard wait for a pool of POOL workers, created and destroyed as
 * aiarun --check -n 4 would; the stragglers checked against that pool,
 * and the first delays each worker would inject drawn. */
static int check_pool(const struct job *job, const struct aia_value *args,
                      struct aia_error *err)
{
    int ranks[POOL];
    for (int w = 0; w < POOL; w++)
        ranks[w] = w + 1;
    for (size_t w = 0; job->pool.workers && w < POOL && w < job->pool.nworkers;
         w++)
        ranks[w] = (int)job->pool.workers[w];
    if (straggle_check(job, ranks, POOL, err) < 0)
        return -1;
    const struct aia_wait_plugin *wait =
        (const void *)builtin_find("standard", AIA_KIND_WAIT);
    struct aia_context ctx = {
        .size = sizeof ctx,
        .role = AIA_ROLE_COORDINATOR,
        .worker = -1,
        .nworkers = POOL,
        .seed = job->seed,
        .args = args,
        .jobdir = job->dir,
        .pool_ranks = ranks,
    };
    void *state = NULL;
    if (wait->create(&ctx, &state, err) < 0) {
        job_blame(job, &job->wait, err);
        return -1;
    }
    wait->destroy(state);
    /* every worker's first injected delays: never negative, never NaN */
    for (int w = 0; w < POOL; w++) {
        struct straggle st;
        straggle_init(&st, &job->stragglers, job->seed, ranks[w]);
        for (int i = 0; i < 8; i++) {
            double d = straggle_next(&st);
            if (!(d >= 0)) {
                fprintf(stderr, "job_fuzz: rank %d's delay %d is %g\n",
                        ranks[w], i, d);
                abort();
            }
        }
    }
    return 0;
}

/* The "#o KEY=VALUE" lines of data, copied into ov; their count. */
static int find_overrides(const uint8_t *data, size_t size,
                          char ov[][OVERRIDE_LEN + 1])
{
    int n = 0;
    for (size_t at = 0; at < size && n < JOB_FUZZ_MAX_OVERRIDES;) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size;
        size_t len = end - at;
        if (len > 3 && len - 3 <= OVERRIDE_LEN &&
            memcmp(data + at, "#o ", 3) == 0) {
            int printable = 1;
            for (size_t i = at + 3; i < end; i++)
                printable &= data[i] >= 0x20 && data[i] < 0x7f;
            if (printable) {
                memcpy(ov[n], data + at + 3, len - 3);
                ov[n][len - 3] = '\0';
                n++;
            }
        }
        at = end + 1;
    }
    return n;
}

int job_fuzz_one(const uint8_t *data, size_t size, struct aia_error *err,
                 int *overrides)
{
    char ov[JOB_FUZZ_MAX_OVERRIDES][OVERRIDE_LEN + 1];
    const char *list[JOB_FUZZ_MAX_OVERRIDES + 1] = {NULL};
    int n = find_overrides(data, size, ov);
    for (int i = 0; i < n; i++)
        list[i] = ov[i];
    if (overrides)
        *overrides = n;
    err->text[0] = '\0';

    struct job *job =
        job_load(JOB_FUZZ_PATH, (const char *)data, size, list, err);
    if (!job)
        return -1;
    struct aia_value *alg = NULL, *prob = NULL, *wait = NULL;
    int rc = -1;
    if (bind_plugin(job, &job->problem, AIA_KIND_PROBLEM, &prob, err) == 0 &&
        bind_plugin(job, &job->algorithm, AIA_KIND_ALGORITHM, &alg, err) == 0 &&
        bind_plugin(job, &job->wait, AIA_KIND_WAIT, &wait, err) == 0)
        rc = check_pool(job, wait, err);
    params_free(alg);
    params_free(prob);
    params_free(wait);
    job_free(job);
    return rc;
}

const char *job_fuzz_unclear(const char *text, int overrides)
{
    size_t len = strlen(text);
    if (len == 0)
        return "the error text is empty";
    if (len >= AIA_ERROR_LEN - 1)
        return "the error text was cut short by its buffer";
    for (const char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return "the error text holds a control character";
    size_t plen = strlen(JOB_FUZZ_PATH);
    if (strncmp(text, JOB_FUZZ_PATH, plen) == 0 && text[plen] == ':')
        return NULL;
    if (overrides && (strncmp(text, "-o", 2) == 0 ||
                      strncmp(text, "command line (-o)", 17) == 0))
        return NULL;
    return "the error text does not start with the file's name";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct aia_error err;
    int overrides;
    if (job_fuzz_one(data, size, &err, &overrides) < 0) {
        const char *why = job_fuzz_unclear(err.text, overrides);
        if (why) {
            fprintf(stderr, "job_fuzz: %s: \"%s\"\n", why, err.text);
            abort();
        }
    }
    return 0;
}
