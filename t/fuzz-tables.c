/* fuzz-tables.c - the fuzz target's copies of the plugins' parameter
 * tables (fuzz/job_fuzz.c) against the tables of the plugins built beside
 * it: the same parameters in the same order, with the same types,
 * defaults, choices and bounds, and a copy for every algorithm and
 * problem plugin in AIARUN_PLUGIN_PATH.  A parameter added to a plugin
 * and not to its copy fails here, before the fuzzer and the regression
 * test bind job files against a stale table. */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_fuzz.h"
#include "session/loader.h"
#include "tap.h"

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The copy t against the plugin's own table. */
static void compare(const struct job_fuzz_table *t,
                    const struct aia_plugin_header *h)
{
    const struct aia_param *c = t->params, *p = h->params;
    size_t nc = 0, np = 0;
    while (c && c[nc].name)
        nc++;
    while (p && p[np].name)
        np++;
    is_int((long long)nc, (long long)np, "%s %s: %zu parameters in the copy",
           loader_kind_name(t->kind), t->name, np);
    for (size_t i = 0; i < nc && i < np; i++) {
        const char *n = p[i].name;
        int same = strcmp(c[i].name, n) == 0 && c[i].type == p[i].type &&
                   same_text(c[i].def, p[i].def) &&
                   same_text(c[i].choices, p[i].choices) &&
                   c[i].min == p[i].min && c[i].max == p[i].max;
        if (!ok(same, "%s %s: parameter %zu (%s) as the plugin's",
                loader_kind_name(t->kind), t->name, i + 1, n))
            diag("copy: %s type %d default %s choices %s [%g, %g]; plugin: "
                 "%s type %d default %s choices %s [%g, %g]",
                 c[i].name, (int)c[i].type, c[i].def ? c[i].def : "(none)",
                 c[i].choices ? c[i].choices : "-", c[i].min, c[i].max, n,
                 (int)p[i].type, p[i].def ? p[i].def : "(none)",
                 p[i].choices ? p[i].choices : "-", p[i].min, p[i].max);
    }
    is_int((long long)(t->pflags & AIA_PARAMS_OPEN),
           (long long)(h->pflags & AIA_PARAMS_OPEN),
           "%s %s: open parameters or not, as the plugin",
           loader_kind_name(t->kind), t->name);
}

static const struct job_fuzz_table *copy_of(const char *name, int kind)
{
    for (const struct job_fuzz_table *t = job_fuzz_tables; t->name; t++)
        if (t->kind == kind && strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

/* Every algorithm or problem plugin in folder dir has a copy; the count
 * of those found. */
static int every_plugin_in(const char *dir)
{
    int found = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int kinds[] = {AIA_KIND_ALGORITHM, AIA_KIND_PROBLEM};
        for (int k = 0; k < 2; k++) {
            struct aia_error err = {""};
            struct plugin *p = loader_open(path, kinds[k], NULL, &err);
            if (!p)
                continue;
            found++;
            ok(copy_of(p->h->name, kinds[k]) != NULL,
               "%s %s (%s) has a copy in fuzz/job_fuzz.c",
               loader_kind_name(kinds[k]), p->h->name, e->d_name);
            loader_close(p);
        }
    }
    closedir(d);
    return found;
}

int main(void)
{
    const char *path = getenv("AIARUN_PLUGIN_PATH");
    if (!path || !*path)
        skip_all("AIARUN_PLUGIN_PATH is not set: run under make check");
    int loaded = 0;
    for (const struct job_fuzz_table *t = job_fuzz_tables; t->name; t++) {
        struct aia_error err = {""};
        struct plugin *p = loader_open(t->name, t->kind, NULL, &err);
#ifndef HAVE_PYTHON
        if (!p && strcmp(t->name, "python") == 0) {
            ok(1, "# SKIP the build has no Python plugin");
            continue;
        }
#endif
        if (!ok(p != NULL, "%s %s: the plugin loads", loader_kind_name(t->kind),
                t->name)) {
            diag("%s", err.text);
            continue;
        }
        compare(t, p->h);
        loader_close(p);
        loaded++;
    }
    char *dirs = strdup(path);
    if (!dirs)
        bail_out("out of memory");
    int found = 0;
    for (char *dir = strtok(dirs, ":"); dir; dir = strtok(NULL, ":"))
        found += every_plugin_in(dir);
    free(dirs);
    /* folders holding no plugin would pass the loop above unasked */
    is_int(found, loaded,
           "AIARUN_PLUGIN_PATH's folders hold the %d plugins that have a "
           "copy, and no other",
           loaded);
    return done_testing();
}
