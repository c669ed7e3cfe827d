/* fuzz-regress.c - every input the fuzzer found (fuzz/regressions), its
 * seeds (fuzz/corpus) and the example jobs (etc, *.yaml) through the fuzz
 * target's body, in the ordinary build: no crash, a bounded time, and
 * either acceptance or a clear refusal (job_fuzz_unclear).  Known inputs
 * are also held to their expected outcome. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "data_fuzz.h"
#include "job_fuzz.h"
#include "tap.h"
#include "core/util.h"

/* Seconds an input may take: generous, for valgrind and the sanitizers;
 * the quadratic inputs took minutes. */
#define SLOW 5.0

/* What a known input must give: NULL accepted, else a part of the error. */
struct expect {
    const char *file;
    const char *error;
};

static const struct expect expected[] = {
    /* the fuzzer's first finding: tabs in a key were printed raw */
    {"control-chars-in-key.yaml", "fuzz.yaml:7:8: stop.iterations\\t\\t\\t"},
    {"many-keys.yaml", "fuzz.yaml:7:3: algorithm.k0: unknown key for plugin "
                       "'sgd'"},
    {"long-plugin-name.yaml",
     "fuzz.yaml:3:1: algorithm: pppppppppppppppppppppppppppppppppppppppppppp"
     "pppppppppppppppp...: not a plugin name"},
    {"set-tag.yaml", "fuzz.yaml:4:7: tags (!!set, !name) on a mapping"},
    /* tabs in a data file's name were printed raw */
    {"control-chars-in-data-path.yaml",
     "fuzz.yaml:13:3: problem.data: cannot tell the format of "
     "'a/\\t888868>8\\t"},
    {"nul-place.yaml", "fuzz.yaml:4:21: control characters are not allowed "
                       "(byte 0x00)"},
    {"overrides.yaml", NULL},
    {"stragglers.yaml", NULL},
    {"async.yaml", NULL},
    {"block-styles.yaml", NULL},
    {"crlf.yaml", NULL},
    {"bom.yaml", NULL},
    {"empty-sections.yaml", NULL},
    {"anchor.yaml", "fuzz.yaml:4:14: aliases (*name) are not supported"},
    {"typo.yaml", "fuzz.yaml:3:8: stop.iteration: unknown key; did you "
                  "mean 'iterations'?"},
    {NULL, NULL},
};

static const struct expect *expectation(const char *name)
{
    for (const struct expect *e = expected; e->file; e++)
        if (strcmp(e->file, name) == 0)
            return e;
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One input: read, run, judge. */
static void replay(const char *dir, const char *name, int must_accept)
{
    char *path = util_join(dir, name);
    struct aia_error err;
    size_t len;
    char *data = path ? util_read_file(path, 64u << 20, &len, &err) : NULL;
    if (!data) {
        ok(0, "%s: read", name);
        diag("%s", path ? err.text : "out of memory");
        free(path);
        return;
    }
    int overrides;
    double t = util_now();
    int rc = job_fuzz_one((const uint8_t *)data, len, &err, &overrides);
    t = util_now() - t;
    const struct expect *e = expectation(name);
    if (rc == 0) {
        ok(!e || !e->error, "%s: accepted", name);
        if (e && e->error)
            diag("expected a refusal with: %s", e->error);
    } else {
        const char *why = job_fuzz_unclear(err.text, overrides);
        if (!ok(!why && !must_accept && !(e && !e->error),
                "%s: refused clearly", name))
            diag("%s: %s", why ? why : "should be accepted", err.text);
        if (e && e->error)
            like(err.text, e->error, "%s: the expected error", name);
    }
    ok(t < SLOW, "%s: in %.3f s", name, t);
    free(data);
    free(path);
}

/* Every plain file of top/sub whose name ends with suffix (NULL: any). */
static void replay_dir(const char *top, const char *sub, const char *suffix,
                       int must_accept)
{
    char *dir = util_join(top, sub);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        bail_out("cannot read %s", dir ? dir : sub);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' ||
            (suffix && (l < strlen(suffix) ||
                        strcmp(de->d_name + l - strlen(suffix), suffix))))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown || !(grown[n] = strdup(de->d_name)))
            bail_out("out of memory");
        names = grown;
        n++;
    }
    closedir(d);
    ok(n > 0, "%s holds inputs (%zu)", sub, n);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        replay(dir, names[i], must_accept);
        free(names[i]);
    }
    free(names);
    free(dir);
}

/* Data files (fuzz/data_fuzz.c's inputs) and what each must give: NULL
 * read, else a part of the refusal. */
static const struct expect data_expected[] = {
    /* an idx header promising rows of 2^30 bytes in a file of 100: the
     * row's buffers were allocated before a byte of it was read */
    {"idx-row-wider-than-file",
     "the data end in row 1 of the 3 the header promises"},
    {NULL, NULL},
};

/* One data-file input through data_fuzz_one, judged as replay does. */
static void replay_data(const char *dir, const char *name, int must_read)
{
    char *path = util_join(dir, name);
    struct aia_error err;
    size_t len;
    char *data = path ? util_read_file(path, 1u << 20, &len, &err) : NULL;
    if (!data) {
        ok(0, "%s: read", name);
        diag("%s", path ? err.text : "out of memory");
        free(path);
        return;
    }
    const struct expect *e = data_expected;
    while (e->file && strcmp(e->file, name) != 0)
        e++;
    char why[256] = "";
    double t = util_now();
    int rc = data_fuzz_one((const uint8_t *)data, len, why, sizeof why);
    t = util_now() - t;
    if (!ok(rc == 0 || (rc == 1 && !must_read), "%s: %s", name,
            rc == 0 ? "read" : "refused clearly"))
        diag("%s", rc == -1 ? "no temporary file" : why);
    if (e->file && e->error)
        like(why, e->error, "%s: the expected refusal", name);
    ok(t < SLOW, "%s: in %.3f s", name, t);
    free(data);
    free(path);
}

static void replay_data_dir(const char *top, const char *sub, int must_read)
{
    char *dir = util_join(top, sub);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        bail_out("cannot read %s", dir ? dir : sub);
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (de->d_name[0] != '.') {
            replay_data(dir, de->d_name, must_read);
            n++;
        }
    closedir(d);
    ok(n > 0, "%s holds inputs (%zu)", sub, n);
    free(dir);
}

int main(void)
{
    const char *top = getenv("top_srcdir");
    if (!top)
        top = ".";
    plan(0);
    replay_dir(top, "fuzz/regressions", NULL, 0);
    replay_dir(top, "fuzz/corpus", NULL, 0);
    replay_dir(top, "etc", ".yaml", 1);
    /* no input may take memory its file does not justify: in 1 GiB of
     * address space such an allocation fails and the expected refusal
     * changes (the sanitizers and valgrind need their own address space;
     * there the fuzzer's -rss_limit_mb holds it) */
    struct rlimit as = {1u << 30, 1u << 30};
    if (!getenv("AIA_SANITIZED") && !getenv("AIA_VALGRIND") &&
        setrlimit(RLIMIT_AS, &as) < 0)
        diag("cannot bound the address space: %s", strerror(errno));
    replay_data_dir(top, "fuzz/regressions-data", 0);
    replay_data_dir(top, "fuzz/corpus-data", 1);
    return done_testing();
}
