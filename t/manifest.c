/* manifest.c - the job file reader: trees, positions and refusals. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "conf/manifest.h"
#include "tap.h"

static struct manifest *parse(const char *text, struct aia_error *err)
{
    return manifest_parse("job.yaml", text, strlen(text), err);
}

/* The error text of parsing text, which must fail. */
static const char *refuse(const char *text)
{
    static struct aia_error err;
    struct manifest *m = parse(text, &err);
    if (m) {
        manifest_free(m);
        return "(parsed)";
    }
    return err.text;
}

static void good(void)
{
    struct aia_error err;
    const char *text = "seed: 7\n"
                       "algorithm:\n"
                       "  plugin: sgd\n"
                       "  step: \"0.5\"\n"
                       "pool:\n"
                       "  workers: [1, 3]\n";
    struct manifest *m = parse(text, &err);
    if (!ok(m != NULL, "a good file parses"))
        diag("%s", err.text);
    if (!m)
        return;
    const struct mnode *key;
    const struct mnode *alg = mnode_get(m->root, "algorithm", &key);
    ok(alg && alg->kind == MNODE_MAP, "a section is a mapping");
    is_int(key->line, 2, "the key's line is kept");
    const struct mnode *plugin = mnode_get(alg, "plugin", NULL);
    is_string(plugin->text, "sgd", "a scalar's text is kept");
    ok(plugin->plain, "an unquoted scalar is plain");
    is_int(plugin->line, 3, "a value's line is kept");
    is_int(plugin->col, 11, "a value's column is kept");
    ok(!mnode_get(alg, "step", NULL)->plain, "a quoted scalar is not plain");
    const struct mnode *workers =
        mnode_get(mnode_get(m->root, "pool", NULL), "workers", NULL);
    ok(workers && workers->kind == MNODE_SEQ && workers->n == 2 &&
           strcmp(workers->item[1]->text, "3") == 0,
       "a flow list keeps its items in order");
    ok(mnode_get(m->root, "nothere", NULL) == NULL, "absent keys are NULL");
    manifest_free(m);
}

static void refusals(void)
{
    like(refuse("a: [1, 2\n"), "job.yaml:2:1: YAML syntax error",
         "a syntax error names file, line and column");
    like(refuse("a: 1\nb: 2\na: 3\n"),
         "job.yaml:3:1: a: duplicate key (first at line 1)",
         "a duplicate key is refused with both lines");
    like(refuse("x: &a 1\ny: *a\n"), "job.yaml:2:4: aliases",
         "an alias is refused at its place");
    like(refuse(""), "job.yaml:1:1: the job file is empty",
         "an empty file is refused");
    like(refuse("# only a comment\n"), "empty",
         "a file of comments is empty");
    like(refuse("- a\n- b\n"), "must be a mapping of sections",
         "a top-level list is refused");
    like(refuse("just text\n"), "must be a mapping",
         "a top-level scalar is refused");
    like(refuse("a: 1\n---\nb: 2\n"), "job.yaml:2:1: a job file holds one",
         "a second document is refused");
    like(refuse("? [a, b]\n: 1\n"), "a key must be a plain name",
         "a list as a key is refused");
    char deep[400] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    for (int i = 0; i < 40; i++)
        strcat(deep, "]");
    char doc[500];
    snprintf(doc, sizeof doc, "a: %s\n", deep);
    like(refuse(doc), "nested too deeply", "deep nesting is refused");
    like(refuse("a: \"\\0\"\n"), "NUL byte", "a NUL in a value is refused");
    like(refuse("a: b: c\n"), "job.yaml:1:5", "a bad mapping names its place");
    like(refuse("a: 1\nb: x\001y\n"),
         "job.yaml:2:5: control characters are not allowed (byte 0x01)",
         "a control byte names its line and column");
    like(refuse("a: 1\nb: \xfe\n"),
         "job.yaml:2:4: invalid leading UTF-8 octet (byte 0xfe)",
         "so does a byte that is not UTF-8");
    like(refuse("a: !!omap [x]\n"), "job.yaml:1:4: tags (!!set, !name)",
         "a tag on a list is refused");
    struct aia_error err;
    struct manifest *m = parse("a: !!map {b: !!seq [1]}\n", &err);
    ok(m != NULL, "a collection's own tag is allowed");
    manifest_free(m);
    like(refuse("\"a\\tb\": 1\n\"a\\tb\": 2\n"),
         "job.yaml:2:1: a\\tb: duplicate key",
         "a duplicate key is shown with its tab escaped");
    char key[1200] = "";
    memset(key, 'k', 1100);
    char longdoc[1300];
    snprintf(longdoc, sizeof longdoc, "a: 1\n%s: 1\n", key);
    like(refuse(longdoc),
         "job.yaml:2:1: YAML syntax error: a key of more than "
         "1024 characters",
         "a key too long for YAML says so at the key");
}

static void overrides(void)
{
    struct aia_error err;
    struct manifest *m = parse("algorithm:\n  plugin: sgd\n  step: 1\n", &err);
    if (!m)
        bail_out("cannot parse: %s", err.text);
    ok(manifest_set(m, "algorithm.step", "0.25", &err) == 0,
       "an existing value is overridden");
    const struct mnode *alg = mnode_get(m->root, "algorithm", NULL);
    is_string(mnode_get(alg, "step", NULL)->text, "0.25", "it has the new value");
    is_int(mnode_get(alg, "step", NULL)->line, 0,
           "an override's line is 0 (the command line)");
    ok(manifest_set(m, "pool.wait.nwait", "3", &err) == 0,
       "a missing path is created");
    const struct mnode *wait =
        mnode_get(mnode_get(m->root, "pool", NULL), "wait", NULL);
    ok(wait && wait->kind == MNODE_MAP &&
           strcmp(mnode_get(wait, "nwait", NULL)->text, "3") == 0,
       "with its sections");
    ok(manifest_set(m, "pool.workers", "[1, 2]", &err) == 0 &&
           mnode_get(mnode_get(m->root, "pool", NULL), "workers", NULL)
                   ->kind == MNODE_SEQ,
       "an override value is YAML: a list stays a list");
    ok(manifest_set(m, "algorithm.step.x", "1", &err) < 0,
       "a path through a value is refused");
    like(err.text, "'algorithm.step' is not a section", "and says why");
    ok(manifest_set(m, "algorithm..x", "1", &err) < 0, "an empty key is refused");
    ok(manifest_set(m, "a", "[1, 2", &err) < 0, "a bad value is refused");

    /* -o KEY= removes */
    is_int(manifest_unset(m, "pool.wait.nwait", &err), 1, "a key is removed");
    const struct mnode *pool = mnode_get(m->root, "pool", NULL);
    wait = mnode_get(pool, "wait", NULL);
    ok(wait && wait->n == 0 && mnode_get(pool, "workers", NULL),
       "and only that key");
    is_int(manifest_unset(m, "pool.wait", &err), 1, "a section is removed");
    ok(!mnode_get(pool, "wait", NULL) && mnode_get(pool, "workers", NULL),
       "its neighbours stay");
    is_int(manifest_unset(m, "pool.wait", &err), 0,
           "removing what is absent removes nothing");
    is_int(manifest_unset(m, "stop.iterations", &err), 0,
           "nor under an absent section");
    ok(manifest_unset(m, "algorithm.step.x", &err) < 0 &&
           strstr(err.text, "'algorithm.step' is not a section"),
       "a path through a value is refused, as for a set");
    ok(manifest_unset(m, "algorithm..x", &err) < 0, "an empty key is refused");
    is_int(manifest_unset(m, "algorithm", &err), 1, "a whole top section");
    ok(!mnode_get(m->root, "algorithm", NULL) && m->root->n == 1,
       "leaves the others");
    manifest_free(m);
}

static void files(void)
{
    struct aia_error err;
    ok(manifest_load("/nonexistent/job.yaml", &err) == NULL,
       "a missing file is refused");
    like(err.text, "/nonexistent/job.yaml: cannot open",
         "naming the file and the reason");
}

int main(void)
{
    plan(0);
    good();
    refusals();
    overrides();
    files();
    return done_testing();
}
