/* params.c - sections bound to parameter tables, and whole job files. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/job.h"
#include "conf/job_keys.h"
#include "conf/manifest.h"
#include "conf/params.h"
#include "tap.h"

static const struct aia_param table[] = {
    {"step", AIA_DOUBLE, "0.1", "a step", NULL, 0, 10},
    {"count", AIA_INT, "3", "a count", NULL, 1, 100},
    {"flag", AIA_BOOL, "false", "a switch", NULL, 0, 0},
    {"name", AIA_STRING, "\"x\"", "a text", NULL, 0, 0},
    {"mode", AIA_ENUM, "fast", "a choice", "fast|slow", 0, 0},
    {"ranks", AIA_INTS, "[]", "a list", NULL, 1, 64},
    {"weights", AIA_DOUBLES, "[1, 2]", "numbers", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

static const struct aia_param required[] = {
    {"path", AIA_STRING, NULL, "must be given", NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, 0, 0},
};

/* Bind section "sec" of text against t; NULL with *err on failure. */
static struct aia_value *bind(const char *text, const struct aia_param *t,
                              const char *owner, struct aia_error *err)
{
    struct manifest *m = manifest_parse("job.yaml", text, strlen(text), err);
    if (!m)
        return NULL;
    const struct mnode *key;
    const struct mnode *sec = mnode_get(m->root, "sec", &key);
    struct aia_value *v =
        params_bind("job.yaml", "sec", sec, key, t, NULL, owner, err);
    manifest_free(m);
    return v;
}

static const char *refuse(const char *text)
{
    static struct aia_error err;
    struct aia_value *v = bind(text, table, NULL, &err);
    if (v) {
        params_free(v);
        return "(bound)";
    }
    return err.text;
}

static void values(void)
{
    struct aia_error err;
    struct aia_value *v = bind("sec: {}\n", table, NULL, &err);
    if (!ok(v != NULL, "an empty section binds the defaults"))
        bail_out("%s", err.text);
    is_double(v[0].d, 0.1, 0, "default number");
    is_int(v[1].i, 3, "default integer");
    is_int(v[2].i, 0, "default bool");
    is_string(v[3].s, "x", "default text");
    is_string(v[4].s, "fast", "default choice");
    is_int((long long)v[6].n, 2, "default list length");
    is_double(v[6].doubles[1], 2, 0, "default list value");
    ok(!v[0].given, "defaults are not marked given");
    ok(aia_arg(v, "mode") == &v[4], "aia_arg finds a value by name");
    params_free(v);

    v = bind("sec:\n  step: 2.5e-1\n  count: 1e1\n  flag: yes\n  name: hi\n"
             "  mode: slow\n  ranks: [2, 4]\n  weights: 3\n",
             table, NULL, &err);
    if (!ok(v != NULL, "every type binds"))
        bail_out("%s", err.text);
    is_double(v[0].d, 0.25, 0, "a number");
    is_int(v[1].i, 10, "an integral number is an integer");
    is_int(v[2].i, 1, "yes is true");
    is_string(v[3].s, "hi", "a text");
    is_int(v[4].i, 1, "a choice's index");
    ok(v[5].n == 2 && v[5].ints[1] == 4, "an integer list");
    ok(v[6].n == 1 && v[6].doubles[0] == 3, "one value is a list of one");
    ok(v[0].given && v[6].given, "given values are marked");
    params_free(v);
}

static void refusals(void)
{
    like(refuse("sec:\n  step: fast\n"),
         "job.yaml:2:9: sec.step: expected a number, got 'fast'",
         "a word for a number names file, line, column and key");
    like(refuse("sec:\n  step: .nan\n"), "sec.step: expected a finite number",
         "NaN is refused");
    like(refuse("sec:\n  step: 1e999\n"), "expected a finite number",
         "an overflowing number is refused");
    like(refuse("sec:\n  step: -.inf\n"), "finite", "infinity is refused");
    like(refuse("sec:\n  step: \"0.5\"\n"), "expected a number, got '0.5'",
         "a quoted number is text, not a number");
    like(refuse("sec:\n  count: 2.5\n"), "sec.count: expected an integer",
         "a fraction for an integer is refused");
    like(refuse("sec:\n  count: 0\n"), "sec.count: must be between 1 and 100",
         "a value below the minimum is refused");
    like(refuse("sec:\n  step: 11\n"), "must be between 0 and 10",
         "a value above the maximum is refused");
    like(refuse("sec:\n  flag: maybe\n"), "sec.flag: expected true or false",
         "a bad bool is refused");
    like(refuse("sec:\n  mode: medium\n"),
         "sec.mode: 'medium' is not one of fast|slow",
         "a bad choice lists the choices");
    like(refuse("sec:\n  ranks: [1, x]\n"), "job.yaml:2:14: sec.ranks",
         "a bad list item names its own column");
    like(refuse("sec:\n  ranks: [0]\n"), "must be between 1 and 64",
         "list items are range-checked");
    like(refuse("sec:\n  ranks: {a: 1}\n"), "expected a list, got a mapping",
         "a mapping for a list is refused");
    like(refuse("sec:\n  step: [1]\n"), "expected a number, got a list",
         "a list for a number is refused");
    like(refuse("sec:\n  stepp: 1\n"),
         "job.yaml:2:3: sec.stepp: unknown key; did you mean 'step'?",
         "a typo gets a suggestion");
    like(refuse("sec:\n  zzzzzz: 1\n"), "unknown key; known keys: step, count",
         "an unknown key lists the known ones");
    like(refuse("sec: 5\n"), "job.yaml:1:6: sec: expected a mapping",
         "a section that is not a mapping is refused");
    struct aia_error err;
    ok(bind("sec: {}\n", required, "myplugin", &err) == NULL,
       "a missing required key is refused");
    like(err.text,
         "job.yaml:1:1: sec: missing required key 'path' of "
         "plugin 'myplugin'",
         "naming the section, the key and the plugin");
    ok(bind("sec: {pth: a}\n", required, "myplugin", &err) == NULL,
       "an unknown plugin key is refused");
    like(err.text, "unknown key for plugin 'myplugin'; did you mean 'path'?",
         "naming the plugin");
}

static void tables(void)
{
    struct aia_error err;
    ok(params_check_table(table, "t", &err) == 0, "a good table passes");
    static const struct aia_param bad_default[] = {
        {"x", AIA_INT, "many", "", NULL, 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0}};
    ok(params_check_table(bad_default, "p.so", &err) < 0 &&
           strstr(err.text, "p.so: default value: x: expected an integer"),
       "a default of the wrong type is caught");
    static const struct aia_param twice[] = {
        {"x", AIA_INT, "1", "", NULL, 0, 0},
        {"x", AIA_INT, "1", "", NULL, 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0}};
    ok(params_check_table(twice, "p.so", &err) < 0 &&
           strstr(err.text, "listed twice"),
       "a parameter listed twice is caught");
    static const struct aia_param nochoice[] = {
        {"x", AIA_ENUM, "a", "", NULL, 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0}};
    ok(params_check_table(nochoice, "p.so", &err) < 0 &&
           strstr(err.text, "lists no choices"),
       "a choice without choices is caught");
    static const struct aia_param reserved[] = {
        {"plugin", AIA_STRING, "a", "", NULL, 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0}};
    ok(params_check_table(reserved, "p.so", &err) < 0 &&
           strstr(err.text, "reserved"),
       "the name 'plugin' is reserved");
}

static const char *good_job = "seed: 3\n"
                              "algorithm:\n"
                              "  plugin: sgd\n"
                              "  step: 0.2\n"
                              "problem:\n"
                              "  plugin: lrmse\n"
                              "  partition: cyclic\n"
                              "pool:\n"
                              "  workers: [2, 1]\n"
                              "  wait:\n"
                              "    nwait: 1\n"
                              "stop:\n"
                              "  iterations: 10\n"
                              "output:\n"
                              "  history: h.csv\n";

static struct job *load(const char *text, const char *const *o,
                        struct aia_error *err)
{
    return job_load("dir/job.yaml", text, strlen(text), o, err);
}

static const char *job_refuse(const char *text)
{
    static struct aia_error err;
    struct job *job = load(text, NULL, &err);
    if (job) {
        job_free(job);
        return "(loaded)";
    }
    return err.text;
}

static void jobs(void)
{
    struct aia_error err;
    struct job *job = load(good_job, NULL, &err);
    if (!ok(job != NULL, "a good job loads"))
        bail_out("%s", err.text);
    is_int((long long)job->seed, 3, "seed");
    is_string(job->algorithm.spec, "sgd", "algorithm plugin");
    is_string(job->problem.spec, "lrmse", "problem plugin");
    is_string(job->wait.spec, "standard", "the standard wait by default");
    is_int(job->part.scheme, AIA_PART_CYCLIC, "partition scheme");
    ok(job->pool.nworkers == 2 && job->pool.workers[0] == 2, "pool workers");
    is_int(job->stop.iterations, 10, "stop iterations");
    is_string(job->output.history, "h.csv", "history file");
    is_string(job->dir, "dir", "the job's folder");
    job_free(job);

    const char *o[] = {"stop.iterations=25", "algorithm.step=0.5", NULL};
    job = load(good_job, o, &err);
    ok(job && job->stop.iterations == 25, "-o overrides a runtime key");
    job_free(job);
    const char *bad[] = {"stop.iterations=lots", NULL};
    ok(load(good_job, bad, &err) == NULL, "a bad override is refused");
    like(err.text, "command line (-o): stop.iterations: expected an integer",
         "naming the command line and the key");
    /* -o KEY= removes a key (its default again) or a section */
    const char *unset[] = {"seed=", "pool.wait=", "output.history=", NULL};
    job = load(good_job, unset, &err);
    ok(job && job->seed == 1 && !job->wait.node && !job->output.history,
       "-o KEY= restores a key's default and removes a section");
    job_free(job);
    const char *tree[] = {"pool.wait=", "pool.topology=tree", NULL};
    job = load(good_job, tree, &err);
    ok(job && job->pool.topology == JOB_TREE,
       "a job with a wait condition becomes a tree without it");
    job_free(job);
    ok(load(good_job, tree + 1, &err) == NULL &&
           strstr(err.text, "pool.topology: a tree waits for every worker"),
       "which a tree with the wait section refuses");
    const char *again[] = {"pool.wait=", "pool.wait=", "algorithm.nothing=",
                           "stragglers.fixed=", NULL};
    ok((job = load(good_job, again, &err)) != NULL,
       "removing what the file lacks is no error for a known key");
    job_free(job);
    const char *typo[] = {"pool.wiat=", NULL};
    ok(load(good_job, typo, &err) == NULL &&
           strstr(err.text, "-o pool.wiat=: no such key or section"),
       "a key aiarun does not know is refused");
    const char *through[] = {"seed.x=", NULL};
    ok(load(good_job, through, &err) == NULL &&
           strstr(err.text, "'seed' is not a section"),
       "a path through a value is refused");
    const char *noeq[] = {"stop.iterations", NULL};
    ok(load(good_job, noeq, &err) == NULL &&
           strstr(err.text, "expected key=value"),
       "an override without '=' is refused");

    like(job_refuse("algoritm:\n  plugin: sgd\n"),
         "dir/job.yaml:1:1: algoritm: unknown key; did you mean 'algorithm'?",
         "a misspelt section gets a suggestion");
    like(job_refuse("problem: {plugin: lrmse}\nstop: {iterations: 1}\n"),
         "missing section 'algorithm'", "a job needs an algorithm");
    like(job_refuse("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"),
         "stop: give 'iterations', 'epochs' or 'time'", "a job must end");
    like(job_refuse("algorithm: {step: 1}\nproblem: {plugin: lrmse}\n"
                    "stop: {time: 1}\n"),
         "dir/job.yaml:1:1: algorithm: missing required key 'plugin'",
         "a plugin section needs its plugin");
    like(job_refuse("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
                    "stop: {time: 1}\npool:\n  workrs: [1]\n"),
         "dir/job.yaml:5:3: pool.workrs: unknown key; did you mean 'workers'",
         "a typo in the pool is caught");
    like(job_refuse("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse}\n"
                    "stop: {time: -1}\n"),
         "dir/job.yaml:3:14: stop.time: must be between 0 and",
         "a negative time is refused");
    like(job_refuse("algorithm: {plugin: sgd}\nproblem: {plugin: lrmse, "
                    "partition: diagonal}\nstop: {time: 1}\n"),
         "problem.partition: 'diagonal' is not one of block|cyclic",
         "an unknown partition is refused");
}

/* The value a row's field holds, as a double (NAN: not a number field). */
static double field_value(const struct job *job, const struct job_section *s,
                          const struct job_key *k)
{
    const char *p = (const char *)job + s->base + k->off;
    switch (k->kind) {
    case JF_INT64:
        return (double)*(const int64_t *)p;
    case JF_INT:
        return *(const int *)p;
    case JF_SIZE:
        return (double)*(const size_t *)p;
    case JF_DOUBLE:
        return *(const double *)p;
    default:
        return NAN;
    }
}

/* Each key is one row: the check tables, the reserved names and the
 * binding all come from it, so a row that lands in the wrong field or a
 * key written twice shows here. */
static void rows(void)
{
    struct aia_error err;
    if (!ok(job_sections_init() == 0, "the derived tables fit their room"))
        return;
    int nsec = 0, nrows = 0, bad_table = 0, twice = 0, differ = 0;
    for (const struct job_section *s = job_sections; s->path; s++, nsec++) {
        const struct aia_param *t = job_section_params(s);
        if (params_check_table(t, s->path, &err) < 0 &&
            !strstr(err.text, "reserved")) /* the runtime's own 'plugin' */
            bad_table++, diag("%s", err.text);
        int n = 0;
        for (const struct job_key *k = s->keys; k->p.name; k++, n++) {
            nrows++;
            differ += t[n].name != k->p.name || t[n].help != k->p.help ||
                      t[n].def != k->p.def || t[n].max != k->p.max;
            for (const struct job_key *q = s->keys; q < k; q++)
                twice += strcmp(q->p.name, k->p.name) == 0;
        }
        differ += t[n].name != NULL;
    }
    ok(nsec >= 19 && nrows >= 80, "%d sections, %d rows", nsec, nrows);
    is_int(bad_table, 0, "every section's check table is a valid table");
    is_int(differ, 0, "each check table is its rows, in their order");
    is_int(twice, 0, "no key has two rows in a section");

    /* the stop section: one row per limited rule, in the rules' order */
    const struct job_section *stop = job_sections;
    while (stop->path && strcmp(stop->path, "stop") != 0)
        stop++;
    const struct job_key *k = stop->keys;
    int keyed = 0, inorder = 0;
    for (const struct proto_stop_rule *r = proto_stop_rules; r->name; r++) {
        if (!r->keyed)
            continue;
        keyed++;
        inorder += k->p.name && strcmp(k->p.name, r->name) == 0;
        if (k->p.name)
            k++;
    }
    is_int(inorder, keyed, "each limited stop rule has its row, in order");
    ok(k->p.name && strcmp(k->p.name, "check_every") == 0 && k[1].p.name &&
           strcmp(k[1].p.name, "diverge") == 0 && !k[2].p.name,
       "then the section's other keys, check_every and diverge");

    /* the files the run writes, checked before it: text rows of output */
    int outfiles = 0, outtext = 0;
    for (const struct job_section *s = job_sections; s->path; s++)
        for (const struct job_key *q = s->keys; q->p.name; q++)
            if (q->flags & JOB_OUTFILE) {
                outfiles++;
                outtext += q->kind == JF_TEXT && !strcmp(s->path, "output");
            }
    ok(outfiles == 6 && outtext == 6,
       "six output files, each a text row of the output section");

    const struct job_section *prob = job_sections;
    while (prob->path && strcmp(prob->path, "problem") != 0)
        prob++;
    const char *const *res = job_section_reserved(prob);
    const char *want[] = {"plugin", "partition", "weights", "data", "test"};
    int same = 1;
    for (int i = 0; i < 5; i++)
        same &= res[i] && strcmp(res[i], want[i]) == 0;
    ok(same && !res[5],
       "the problem section reserves its rows and sub-sections");

    /* Each number row, given a value of its own through -o, lands in its
     * field: the row's offset, kind and scale agree with the struct.  The
     * sections that need other keys given are skipped. */
    int tried = 0, landed = 0;
    for (const struct job_section *s = job_sections; s->path; s++) {
        if (s->kind != JS_PLAIN)
            continue;
        for (const struct job_key *q = s->keys; q->p.name; q++) {
            /* a row without a field of its own (JF_NONE) is read by its
             * section's code, and tested with it */
            if ((q->p.type != AIA_INT && q->p.type != AIA_DOUBLE) ||
                q->kind == JF_NONE)
                continue;
            /* a whole value inside the bounds, unlike the default */
            double v = floor(q->p.min) + 1;
            if (v > q->p.max)
                v = q->p.max;
            if (q->p.def && strtod(q->p.def, NULL) == v && v + 1 <= q->p.max)
                v += 1;
            char o1[128], o2[64] = "";
            snprintf(o1, sizeof o1, "%s%s%s=%.17g", s->path,
                     *s->path ? "." : "", q->p.name, v);
            if (strcmp(s->path, "stop") != 0 || !strcmp(q->p.name, "time"))
                snprintf(o2, sizeof o2, "stop.iterations=5");
            else
                snprintf(o2, sizeof o2, "stop.time=5");
            const char *o[] = {o1, o2, NULL};
            struct job *job = load("algorithm: {plugin: sgd}\n"
                                   "problem: {plugin: lrmse}\n",
                                   o, &err);
            tried++;
            if (!job) {
                diag("%s: %s", o1, err.text);
                continue;
            }
            double got = field_value(job, s, q);
            double scaled = q->scale ? v * q->scale : v;
            if (got == scaled)
                landed++;
            else
                diag("%s: the field holds %g", o1, got);
            job_free(job);
        }
    }
    ok(tried >= 20, "%d number keys tried", tried);
    is_int(landed, tried, "each lands in its row's field, scaled");
}

int main(void)
{
    plan(0);
    values();
    refusals();
    tables();
    jobs();
    rows();
    return done_testing();
}
