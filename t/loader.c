/* loader.c - finding plugins and refusing broken ones. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/loader.h"
#include "tap.h"

static char fixtures[1024];

/* The error of opening spec as kind, which must fail. */
static const char *refuse(const char *spec, int kind, const char *jobdir)
{
    static struct aia_error err;
    struct plugin *p = loader_open(spec, kind, jobdir, &err);
    if (p) {
        loader_close(p);
        return "(loaded)";
    }
    return err.text;
}

static const char *fixture(const char *name)
{
    static char path[1200];
    snprintf(path, sizeof path, "%s/%s.so", fixtures, name);
    return path;
}

/* The first n bytes of a good plugin (a copy that did not finish): it
 * killed the process inside dlopen with SIGBUS, no message. */
static void truncated(const char *dir)
{
    size_t cuts[] = {1200, 40, 8192};
    char path[200], buf[8192];
    FILE *in = fopen(fixture("goodalg"), "rb");
    size_t len = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in)
        fclose(in);
    if (len < sizeof buf)
        bail_out("cannot read %s", fixture("goodalg"));
    snprintf(path, sizeof path, "%s/cut.so", dir);
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        FILE *f = fopen(path, "wb");
        fwrite(buf, 1, cuts[i], f);
        fclose(f);
        like(refuse(path, AIA_KIND_ALGORITHM, NULL),
             "cut.so: a truncated shared object: its ",
             "the first %zu bytes of a plugin are refused, naming the file",
             cuts[i]);
    }
    unlink(path);
}

static void broken(void)
{
    like(refuse(fixture("notaplugin"), AIA_KIND_ALGORITHM, NULL),
         "notaplugin.so: not an aiarun plugin: it exports no "
         "aia_algorithm_plugin descriptor",
         "a shared object without a descriptor is refused");
    like(refuse(fixture("badabi"), AIA_KIND_ALGORITHM, NULL),
         "badabi.so: plugin ABI 999, but this aiarun speaks ABI 2",
         "an ABI mismatch is refused");
    like(refuse(fixture("oldabi"), AIA_KIND_ALGORITHM, NULL),
         "oldabi.so: plugin ABI 1, but this aiarun speaks ABI 2: rebuild the "
         "plugin against this aiarun's header (an older aiarun's plugin: "
         "aiarun-plugin(7) says what changed)",
         "a plugin of ABI 1 is refused, saying where to read what changed");
    like(refuse(fixture("badsize"), AIA_KIND_ALGORITHM, NULL),
         "badsize.so: algorithm descriptor is",
         "a descriptor of the wrong size is refused");
    like(refuse(fixture("wrongkind"), AIA_KIND_ALGORITHM, NULL),
         "wrongkind.so: aia_algorithm_plugin declares kind 2 (problem)",
         "a descriptor declaring another kind is refused");
    like(refuse(fixture("badname"), AIA_KIND_ALGORITHM, NULL),
         "badname.so: descriptor is named 'someoneelse', but the file is "
         "named 'badname'",
         "a descriptor whose name is not the file's is refused");
    like(refuse(fixture("nofunc"), AIA_KIND_ALGORITHM, NULL),
         "nofunc.so: algorithm plugin 'nofunc' lacks the required function "
         "'absorb'",
         "a missing required function is refused");
    like(refuse(fixture("badparams"), AIA_KIND_ALGORITHM, NULL),
         "plugin 'badparams': default value: rate: expected a number, got "
         "'fast'",
         "a broken parameter table is refused");
    like(refuse(fixture("goodalg"), AIA_KIND_PROBLEM, NULL),
         "goodalg.so: is an algorithm plugin, not a problem plugin",
         "an algorithm asked for as a problem is refused");
    like(refuse(fixture("funcsym"), AIA_KIND_ALGORITHM, NULL),
         "funcsym.so: aia_algorithm_plugin is a function, not data",
         "a descriptor symbol that is a function is refused before it is "
         "read");

    char dir[] = "/tmp/aiarun-loader.XXXXXX";
    if (!mkdtemp(dir))
        bail_out("mkdtemp failed");
    char path[200];
    snprintf(path, sizeof path, "%s/garbage.so", dir);
    FILE *f = fopen(path, "w");
    fputs("this is not an ELF file\n", f);
    fclose(f);
    like(refuse(path, AIA_KIND_ALGORITHM, NULL),
         "garbage.so: not a loadable shared object:",
         "a file that is not a shared object is refused");
    like(refuse("garbage", AIA_KIND_ALGORITHM, dir),
         "garbage.so: not a loadable shared object",
         "also when found by name in the job's folder");
    unlink(path);
    truncated(dir);
    snprintf(path, sizeof path, "%s/sub.so", dir);
    mkdir(path, 0700);
    like(refuse("sub.so", AIA_KIND_ALGORITHM, dir), "plugin not found",
         "a folder named like a plugin is not a plugin");
    rmdir(path);
    rmdir(dir);

    like(refuse("/nonexistent/x.so", AIA_KIND_ALGORITHM, NULL),
         "/nonexistent/x.so: algorithm plugin not found",
         "a missing path is refused, naming it");
    like(refuse("nosuchplugin", AIA_KIND_PROBLEM, "/nowhere"),
         "nosuchplugin: problem plugin not found (looked for nosuchplugin.so "
         "in ",
         "a missing name is refused, naming the folders searched");
    like(refuse("lrmse", AIA_KIND_ALGORITHM, NULL),
         "is a problem plugin, not an algorithm plugin",
         "a problem plugin asked for as an algorithm is refused");
}

static void found(void)
{
    struct aia_error err;
    struct plugin *p = loader_open(fixture("goodalg"), AIA_KIND_ALGORITHM,
                                   NULL, &err);
    ok(p && strcmp(p->h->name, "goodalg") == 0, "a plugin loads by path");
    loader_close(p);

    p = loader_open("goodalg", AIA_KIND_ALGORITHM, fixtures, &err);
    ok(p != NULL, "a bare name is found in the job's folder");
    loader_close(p);

    /* relative paths are taken from the job's folder */
    char *slash = strrchr(fixtures, '/');
    char rel[1200];
    snprintf(rel, sizeof rel, "%s/goodalg.so", slash + 1);
    *slash = '\0';
    p = loader_open(rel, AIA_KIND_ALGORITHM, fixtures, &err);
    *slash = '/';
    ok(p != NULL, "a relative path is taken from the job's folder");
    loader_close(p);

    /* and shown plainly: "././goodalg.so" was shown as it was joined */
    char *cwd = getcwd(NULL, 0);
    if (!cwd || chdir(fixtures) != 0)
        bail_out("cannot go to %s", fixtures);
    p = loader_open("./goodalg.so", AIA_KIND_ALGORITHM, ".", &err);
    is_string(p ? p->path : err.text, "./goodalg.so",
              "a path from the job's folder '.' is shown plainly");
    loader_close(p);
    p = loader_open(".//./goodalg.so", AIA_KIND_ALGORITHM, "./", &err);
    is_string(p ? p->path : err.text, "./goodalg.so",
              "with its '.' and repeated '/' dropped");
    loader_close(p);
    if (chdir(cwd) != 0)
        bail_out("cannot go back to %s", cwd);
    free(cwd);

    p = loader_open("sgd", AIA_KIND_ALGORITHM, NULL, &err);
    ok(p && strstr(p->path, "sgd.so"), "a bare name is found in "
                                       "AIARUN_PLUGIN_PATH");
    if (p)
        ok(p->h->params && strcmp(p->h->params[0].name, "step") == 0,
           "its parameter table is there");
    loader_close(p);

    p = loader_open("standard", AIA_KIND_WAIT, NULL, &err);
    ok(p && strcmp(p->path, "built-in") == 0, "the standard wait condition "
                                              "is built in");
    loader_close(p);

    /* AIARUN_PLUGIN_PATH comes before the job's folder */
    const char *saved = getenv("AIARUN_PLUGIN_PATH");
    char *copy = saved ? strdup(saved) : NULL;
    char both[2100];
    snprintf(both, sizeof both, "%s:%s", fixtures, saved ? saved : "");
    setenv("AIARUN_PLUGIN_PATH", both, 1);
    p = loader_open("goodalg", AIA_KIND_ALGORITHM, "/nowhere", &err);
    ok(p && strstr(p->path, fixtures), "AIARUN_PLUGIN_PATH is searched");
    loader_close(p);
    if (copy) {
        setenv("AIARUN_PLUGIN_PATH", copy, 1);
        free(copy);
    }
}

static void listing(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int n = loader_list(out, fixtures);
    fclose(out);
    ok(n >= 4, "listing finds the plugins (%d)", n);
    like(buf, "algorithm      sgd", "sgd is listed as an algorithm");
    like(buf, "problem        lrmse", "lrmse is listed as a problem");
    like(buf, "wait condition standard", "the built-in wait is listed");
    like(buf, "      step ", "with parameters");
    like(buf, "broken         badabi.so", "a broken plugin is listed as "
                                          "broken");
    like(buf, "plugin ABI 999", "with its error");
    like(buf, "funcsym.so: aia_algorithm_plugin is a function",
         "a descriptor that is a function too");
    ok(strstr(buf, "notaplugin") == NULL, "foreign shared objects are not "
                                          "listed");
    free(buf);
}

int main(void)
{
    const char *f = getenv("FIXTURES");
    if (!f)
        skip_all("FIXTURES is not set: run through make check");
    snprintf(fixtures, sizeof fixtures, "%s", f);
    plan(0);
    broken();
    found();
    listing();
    return done_testing();
}
