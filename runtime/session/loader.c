/* loader.c - dlopen plugins and check their descriptors. */
#include <config.h>

#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/builtin.h"
#include "conf/params.h"
#include "core/util.h"
#include "elfcheck.h"

#define MAX_DIRS 64

static const char *const symbols[] = {
    [AIA_KIND_ALGORITHM] = "aia_algorithm_plugin",
    [AIA_KIND_PROBLEM] = "aia_problem_plugin",
    [AIA_KIND_WAIT] = "aia_wait_plugin",
};

static const char *const kind_names[] = {
    [AIA_KIND_ALGORITHM] = "algorithm",
    [AIA_KIND_PROBLEM] = "problem",
    [AIA_KIND_WAIT] = "wait condition",
};

static const size_t kind_sizes[] = {
    [AIA_KIND_ALGORITHM] = sizeof(struct aia_algorithm_plugin),
    [AIA_KIND_PROBLEM] = sizeof(struct aia_problem_plugin),
    [AIA_KIND_WAIT] = sizeof(struct aia_wait_plugin),
};

static int kind_ok(int kind)
{
    return kind >= AIA_KIND_ALGORITHM && kind <= AIA_KIND_WAIT;
}

const char *loader_kind_name(int kind)
{
    return kind_ok(kind) ? kind_names[kind] : "unknown kind";
}

static const char *article(int kind)
{
    return kind == AIA_KIND_ALGORITHM ? "an" : "a";
}

const char *loader_symbol(int kind)
{
    return kind_ok(kind) ? symbols[kind] : "?";
}

const char *loader_plugindir(void)
{
    const char *d = getenv("AIARUN_PLUGINDIR");
    return d && *d ? d : AIA_PLUGINDIR;
}

/* Required function pointers of each kind, as (offset, name). */
struct need {
    size_t off;
    const char *name;
};

#define NEED(type, f) {offsetof(type, f), #f}
static const struct need need_alg[] = {
    NEED(struct aia_algorithm_plugin, create),
    NEED(struct aia_algorithm_plugin, destroy),
    NEED(struct aia_algorithm_plugin, init),
    NEED(struct aia_algorithm_plugin, worker),
    NEED(struct aia_algorithm_plugin, absorb),
    NEED(struct aia_algorithm_plugin, query),
    {0, NULL},
};
static const struct need need_prob[] = {
    NEED(struct aia_problem_plugin, open),
    NEED(struct aia_problem_plugin, close),
    NEED(struct aia_problem_plugin, dim),
    NEED(struct aia_problem_plugin, rows),
    NEED(struct aia_problem_plugin, loss),
    NEED(struct aia_problem_plugin, gradient),
    {0, NULL},
};
static const struct need need_wait[] = {
    NEED(struct aia_wait_plugin, create),
    NEED(struct aia_wait_plugin, destroy),
    NEED(struct aia_wait_plugin, ready),
    {0, NULL},
};
#undef NEED

static int reserved_zero(const void *slots, size_t n)
{
    void (*const *f)(void) = slots;
    for (size_t i = 0; i < n; i++)
        if (f[i])
            return 0;
    return 1;
}

static int name_ok(const char *name)
{
    if (!name || !*name || strlen(name) > 64)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

/* A metric's name becomes a column of the history and a key of the
 * summary line. */
static int metric_name_ok(const char *name)
{
    return name_ok(name) && strlen(name) <= 32 && !strchr(name, '-');
}

int loader_offers(const struct aia_problem_plugin *p, void *state,
                  uint32_t *what, const char **metric_name,
                  struct aia_error *err)
{
    uint32_t has = (p->optimum ? AIA_OFFER_OPTIMUM : 0u) |
                   (p->metric ? AIA_OFFER_METRIC : 0u) |
                   (p->smoothness ? AIA_OFFER_SMOOTHNESS : 0u) |
                   (p->hvp ? AIA_OFFER_HVP : 0u) |
                   (p->block ? AIA_OFFER_BLOCK : 0u);
    const char *name = p->metric_name;
    if (p->offers) {
        name = NULL;
        has &= p->offers(state, &name);
        if (has & AIA_OFFER_METRIC && !metric_name_ok(name)) {
            char shown[100];
            *what = 0;
            *metric_name = NULL;
            return aia_seterr(err, "problem '%s': the metric's name '%s': "
                                   "give at most 32 letters, digits or '_'",
                              p->h.name,
                              name ? util_shown(shown, sizeof shown, name, 40)
                                   : "(none)");
        }
    }
    *what = has;
    *metric_name = has & AIA_OFFER_METRIC ? name : NULL;
    return 0;
}

int loader_offered(const struct aia_problem_plugin *p, void *state,
                   uint32_t what)
{
    uint32_t has;
    const char *name;
    return loader_offers(p, state, &has, &name, NULL) == 0 &&
           (has & what) == what;
}

int loader_check(const struct aia_plugin_header *h, int kind,
                 const char *name, const char *path, struct aia_error *err)
{
    /* The ABI number decides how the rest is laid out: read it alone. */
    if (h->abi != AIA_ABI_VERSION)
        return aia_seterr(err, "%s: plugin ABI %u, but this aiarun speaks "
                               "ABI %d: rebuild the plugin against this "
                               "aiarun's header%s",
                          path, h->abi, AIA_ABI_VERSION,
                          h->abi < AIA_ABI_VERSION
                              ? " (an older aiarun's plugin: "
                                "aiarun-plugin(7) says what changed)"
                              : "");
    if (h->kind != (uint32_t)kind)
        return aia_seterr(err, "%s: %s declares kind %u (%s), not %s", path,
                          symbols[kind], h->kind, loader_kind_name((int)h->kind),
                          kind_names[kind]);
    if (h->size != kind_sizes[kind])
        return aia_seterr(err, "%s: %s descriptor is %u bytes, this aiarun "
                               "expects %zu: built against another header",
                          path, kind_names[kind], h->size, kind_sizes[kind]);
    if (h->pflags & ~AIA_PARAMS_OPEN)
        return aia_seterr(err, "%s: descriptor sets unknown parameter flags "
                               "0x%x", path, h->pflags & ~AIA_PARAMS_OPEN);
    if (!name_ok(h->name))
        return aia_seterr(err, "%s: descriptor name is missing or not a "
                               "plain name (letters, digits, '_', '-')",
                          path);
    if (name && strcmp(h->name, name) != 0)
        return aia_seterr(err, "%s: descriptor is named '%s', but the file "
                               "is named '%s'",
                          path, h->name, name);
    if (!h->version || !h->summary)
        return aia_seterr(err, "%s: descriptor '%s' lacks its %s", path,
                          h->name, !h->version ? "version" : "summary");
    const struct need *need = kind == AIA_KIND_ALGORITHM ? need_alg
                              : kind == AIA_KIND_PROBLEM ? need_prob
                                                         : need_wait;
    for (; need->name; need++) {
        void (*f)(void);
        memcpy(&f, (const char *)h + need->off, sizeof f);
        if (!f)
            return aia_seterr(err, "%s: %s plugin '%s' lacks the required "
                                   "function '%s'",
                              path, kind_names[kind], h->name, need->name);
    }
    if (kind == AIA_KIND_ALGORITHM) {
        const struct aia_algorithm_plugin *a = (const void *)h;
        int n = !!a->state_size + !!a->save + !!a->load;
        if (n != 0 && n != 3)
            return aia_seterr(err, "%s: algorithm '%s' must give all of "
                                   "state_size, save and load, or none",
                              path, h->name);
        if (!reserved_zero(a->reserved, 8))
            return aia_seterr(err, "%s: '%s' sets reserved slots", path,
                              h->name);
    } else if (kind == AIA_KIND_PROBLEM) {
        const struct aia_problem_plugin *p = (const void *)h;
        /* with offers, each instance names its metric */
        if (p->offers ? !p->metric && p->metric_name
                      : !p->metric != !p->metric_name)
            return aia_seterr(err, "%s: problem '%s' must give both metric "
                                   "and metric_name, or neither",
                              path, h->name);
        if (p->metric_name && !metric_name_ok(p->metric_name)) {
            char shown[100];
            return aia_seterr(err, "%s: problem '%s': metric_name '%s': "
                                   "give at most 32 letters, digits or '_'",
                              path, h->name,
                              util_shown(shown, sizeof shown, p->metric_name,
                                         40));
        }
        if (!p->summary_len != !p->summarize || !p->summary_len != !p->combine)
            return aia_seterr(err, "%s: problem '%s' must give summary_len, "
                                   "summarize and combine, or none",
                              path, h->name);
    } else {
        const struct aia_wait_plugin *w = (const void *)h;
        if (!reserved_zero(w->reserved, 8))
            return aia_seterr(err, "%s: '%s' sets reserved slots", path,
                              h->name);
    }
    char who[300];
    snprintf(who, sizeof who, "%s: plugin '%s'", path, h->name);
    return params_check_table(h->params, who, err);
}

/* File name without folder and without ".so". */
static char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 3 && strcmp(b + n - 3, ".so") == 0)
        n -= 3;
    return strndup(b, n);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Search folders in order, NULL-terminated, malloc'd strings. */
static int search_dirs(const char *jobdir, char **dirs)
{
    int n = 0;
    const char *env = getenv("AIARUN_PLUGIN_PATH");
    if (env) {
        const char *p = env;
        while (*p && n < MAX_DIRS - 3) {
            const char *colon = strchr(p, ':');
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            if (len)
                dirs[n++] = strndup(p, len);
            p = colon ? colon + 1 : p + len;
        }
    }
    if (jobdir)
        dirs[n++] = strdup(jobdir);
    dirs[n++] = strdup(loader_plugindir());
    dirs[n] = NULL;
    for (int i = 0; i < n; i++)
        if (!dirs[i])
            return -1;
    return n;
}

static void free_dirs(char **dirs)
{
    for (int i = 0; dirs[i]; i++)
        free(dirs[i]);
}

/* The first kind after after (0: the first) whose descriptor symbol the
 * handle exports, 0 for none: a file may export several (python.so). */
static int exported_after(void *dl, int after)
{
    for (int k = after + 1; k <= AIA_KIND_WAIT; k++)
        if (dlsym(dl, symbols[k]))
            return k;
    return 0;
}

/* Which descriptor symbols the handle exports, for a precise message. */
static int exported_kind(void *dl)
{
    return exported_after(dl, 0);
}

void loader_bound_loading(unsigned seconds, int status)
{
    elfcheck_bound(seconds, status);
}

static struct plugin *open_file(const char *path, int kind,
                                struct aia_error *err)
{
    void *dl = elfcheck_dlopen(path, err);
    if (!dl)
        return NULL;
    const struct aia_plugin_header *h = dlsym(dl, symbols[kind]);
    if (!h) {
        int other = exported_kind(dl);
        if (other)
            aia_seterr(err, "%s: is %s %s plugin, not %s %s plugin", path,
                       article(other), kind_names[other], article(kind),
                       kind_names[kind]);
        else
            aia_seterr(err, "%s: not an aiarun plugin: it exports no %s "
                            "descriptor",
                       path, symbols[kind]);
        goto fail;
    }
    if (elfcheck_symbol(h, sizeof *h, symbols[kind], path, err) < 0)
        goto fail;
    char *base = base_name(path);
    int rc = base ? loader_check(h, kind, base, path, err)
                  : aia_seterr(err, "%s: out of memory", path);
    free(base);
    if (rc < 0)
        goto fail;
    struct plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path))) {
        free(p);
        aia_seterr(err, "%s: out of memory", path);
        goto fail;
    }
    p->kind = kind;
    p->dl = dl;
    p->h = h;
    return p;
fail:
    dlclose(dl);
    return NULL;
}

static struct plugin *open_builtin(const struct aia_plugin_header *h)
{
    struct plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup("built-in"))) {
        free(p);
        return NULL;
    }
    p->kind = (int)h->kind;
    p->h = h;
    return p;
}

int loader_spec_check(const char *spec, int kind, struct aia_error *err)
{
    char shown[80];
    if (!kind_ok(kind))
        return aia_seterr(err, "unknown plugin kind %d", kind);
    if (!spec || !*spec)
        return aia_seterr(err, "empty %s plugin name", kind_names[kind]);
    size_t len = strlen(spec);
    util_shown(shown, sizeof shown, spec, 60);
    if (strchr(spec, '/')) {
        if (len >= PATH_MAX)
            return aia_seterr(err, "%s: a plugin path of %zu bytes: longer "
                                   "than a path can be",
                              shown, len);
        for (const char *c = spec; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                return aia_seterr(err, "%s: a plugin path with control "
                                       "characters",
                                  shown);
        return 0;
    }
    /* A bare name is a file NAME.so whose descriptor is named NAME. */
    char *name = strndup(spec, len > 3 && strcmp(spec + len - 3, ".so") == 0
                                   ? len - 3
                                   : len);
    int good = name && name_ok(name);
    free(name);
    if (!good)
        return aia_seterr(err, "%s: not a plugin name (at most 64 letters, "
                               "digits, '_' and '-') nor a path (with a "
                               "'/')",
                          shown);
    return 0;
}

/* path spelled plainly ("././hb2.so" is "./hb2.so"), still with a '/'
 * so that dlopen takes it as a path and does not search for it.
 * malloc'd, or NULL. */
static char *shown_path(const char *path)
{
    char *norm = util_normpath(path);
    if (!norm || strchr(norm, '/'))
        return norm;
    char *dotted = util_join(".", norm);
    free(norm);
    return dotted;
}

struct plugin *loader_open(const char *spec, int kind, const char *jobdir,
                           struct aia_error *err)
{
    if (loader_spec_check(spec, kind, err) < 0)
        return NULL;
    if (strchr(spec, '/')) {
        char *joined = spec[0] == '/' || !jobdir ? strdup(spec)
                                                 : util_join(jobdir, spec);
        char *path = joined ? shown_path(joined) : NULL;
        free(joined);
        if (!path) {
            aia_seterr(err, "%s: out of memory", spec);
            return NULL;
        }
        struct plugin *p = NULL;
        char shown[200];
        if (!is_file(path))
            aia_seterr(err, "%s: %s plugin not found: %s",
                       util_shown(shown, sizeof shown, path, 160),
                       kind_names[kind],
                       access(path, F_OK) == 0 ? "not a regular file"
                                               : strerror(ENOENT));
        else
            p = open_file(path, kind, err);
        free(path);
        return p;
    }
    const struct aia_plugin_header *b = builtin_find(spec, kind);
    if (b) {
        struct plugin *p = open_builtin(b);
        if (!p)
            aia_seterr(err, "%s: out of memory", spec);
        return p;
    }
    char *dirs[MAX_DIRS];
    if (search_dirs(jobdir, dirs) < 0) {
        free_dirs(dirs);
        aia_seterr(err, "%s: out of memory", spec);
        return NULL;
    }
    size_t slen = strlen(spec);
    int has_so = slen > 3 && strcmp(spec + slen - 3, ".so") == 0;
    char file[300];
    snprintf(file, sizeof file, "%s%s", spec, has_so ? "" : ".so");
    struct plugin *p = NULL;
    char searched[600] = "";
    size_t used = 0;
    int found = 0;
    for (int i = 0; dirs[i] && !found; i++) {
        char *path = util_join(dirs[i], file);
        if (path && is_file(path)) {
            found = 1;
            p = open_file(path, kind, err);
        }
        free(path);
        int w = snprintf(searched + used, sizeof searched - used, "%s%s",
                         used ? ":" : "", dirs[i]);
        if (w > 0 && (size_t)w < sizeof searched - used)
            used += (size_t)w;
    }
    /* the closest name of a built-in plugin of this kind or a NAME.so */
    const char *builtins[8] = {NULL};
    for (size_t i = 0, n = 0; builtin_all[i] && n < 7; i++)
        if ((int)builtin_all[i]->kind == kind)
            builtins[n++] = builtin_all[i]->name;
    char best[256], hint[300] = "";
    if (!found && util_closest(spec, ".so", builtins, dirs, best, sizeof best))
        snprintf(hint, sizeof hint, "; did you mean '%s'?", best);
    free_dirs(dirs);
    if (!found)
        /* the hint before the folders, which may fill the message */
        aia_seterr(err, "%s: %s plugin not found%s (looked for %s in %s; "
                        "set AIARUN_PLUGIN_PATH or give a path)",
                   spec, kind_names[kind], hint, file, searched);
    return p;
}

void loader_close(struct plugin *p)
{
    if (!p)
        return;
    if (p->dl)
        dlclose(p->dl);
    free(p->path);
    free(p);
}

static void print_one(FILE *out, const struct plugin *p, const char *note)
{
    fprintf(out, "%-14s %-16s %-8s %s%s\n", loader_kind_name(p->kind),
            p->h->name, p->h->version, p->path, note);
    fprintf(out, "    %s\n", p->h->summary);
    if (p->h->params && p->h->params->name)
        params_print(out, p->h->params, "      ");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int loader_list(FILE *out, const char *jobdir)
{
    int count = 0;
    for (size_t i = 0; builtin_all[i]; i++) {
        struct plugin *p = open_builtin(builtin_all[i]);
        if (p) {
            print_one(out, p, "");
            count++;
        }
        loader_close(p);
    }
    char *dirs[MAX_DIRS];
    if (search_dirs(jobdir, dirs) < 0) {
        free_dirs(dirs);
        return count;
    }
    char *seen[1024];
    size_t nseen = 0;
    for (int d = 0; dirs[d]; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir)
            continue;
        char *names[1024];
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(dir)) && n < 1024) {
            size_t len = strlen(e->d_name);
            if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0)
                names[n++] = strdup(e->d_name);
        }
        closedir(dir);
        qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n; i++) {
            char *path = names[i] ? util_join(dirs[d], names[i]) : NULL;
            int shadowed = 0;
            for (size_t s = 0; s < nseen; s++)
                shadowed |= names[i] && strcmp(seen[s], names[i]) == 0;
            int kinds[AIA_KIND_WAIT + 1] = {0}, nk = 0;
            struct aia_error lerr = {""};
            if (path && is_file(path)) {
                void *dl = elfcheck_dlopen(path, &lerr);
                for (int k = 0; dl && (k = exported_after(dl, k));)
                    kinds[nk++] = k;
                if (dl)
                    dlclose(dl);
            }
            if (!nk && lerr.text[0] && names[i] && !shadowed)
                fprintf(out, "%-14s %-16s %-8s %s\n    error: %s\n", "broken",
                        names[i], "-", path, lerr.text);
            for (int j = 0; j < nk; j++) {
                int kind = kinds[j];
                struct aia_error err;
                struct plugin *p = open_file(path, kind, &err);
                if (p) {
                    print_one(out, p, shadowed ? " (shadowed)" : "");
                    count++;
                } else {
                    fprintf(out, "%-14s %-16s %-8s %s\n    error: %s\n",
                            "broken", names[i], "-", path, err.text);
                }
                loader_close(p);
            }
            free(path);
            if (names[i] && !shadowed && nseen < 1024)
                seen[nseen++] = names[i];
            else
                free(names[i]);
        }
    }
    for (size_t s = 0; s < nseen; s++)
        free(seen[s]);
    free_dirs(dirs);
    return count;
}
