/* benchlib.c - clock, sleeps and hand-opened problem plugins for the
 * benchmark programs. */
#include <config.h>

#include "benchlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "core/host.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_sleep_setup(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

void bench_sleep(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void bench_log(const struct aia_host *host, int level,
                      const char *fmt, ...)
{
    (void)host;
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double bench_host_now(const struct aia_host *host)
{
    (void)host;
    return bench_now();
}

int bench_parse_list(const char *s, double *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        if (n == max)
            return -1;
        out[n++] = strtod(s, &end);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* The value given for name in kv, or NULL. */
static const char *given(const char *name, char *const *kv, int nkv)
{
    size_t len = strlen(name);
    for (int i = 0; i < nkv; i++)
        if (strncmp(kv[i], name, len) == 0 && kv[i][len] == '=')
            return kv[i] + len + 1;
    return NULL;
}

/* "[a,b,...]" into a->ints (allocated: freed by bench_problem_unload).
 * 0, or -1 after printing why. */
static int parse_ints(const char *v, struct aia_value *a)
{
    size_t cap = strlen(v);
    int64_t *out = malloc(cap * sizeof *out);
    const char *s = v + 1;
    size_t n = 0;
    while (out && *s && *s != ']') {
        char *end;
        out[n++] = strtoll(s, &end, 10);
        if (end == s || (*end != ',' && *end != ']'))
            break;
        s = *end == ',' ? end + 1 : end;
    }
    if (!out || *s != ']') {
        free(out);
        fprintf(stderr, "bench: %s: not a list of integers: %s\n", a->name, v);
        return -1;
    }
    a->n = n;
    a->ints = out;
    return 0;
}

static int bind(struct bench_problem *bp, char *const *kv, int nkv)
{
    const struct aia_param *tab = bp->p->h.params;
    size_t n = 0;
    while (tab && tab[n].name)
        n++;
    bp->args = calloc(n + 1, sizeof *bp->args);
    if (!bp->args)
        return -1;
    for (int i = 0; i < nkv; i++) {
        const char *eq = strchr(kv[i], '=');
        size_t j = 0;
        while (eq && j < n &&
               (strlen(tab[j].name) != (size_t)(eq - kv[i]) ||
                strncmp(tab[j].name, kv[i], (size_t)(eq - kv[i])) != 0))
            j++;
        if (!eq || j == n) {
            fprintf(stderr, "bench: %s: not a parameter of '%s'\n", kv[i],
                    bp->p->h.name);
            return -1;
        }
    }
    for (size_t j = 0; j < n; j++) {
        const char *v = given(tab[j].name, kv, nkv);
        struct aia_value *a = &bp->args[j];
        a->name = tab[j].name;
        a->type = tab[j].type;
        a->given = v != NULL;
        if (!v)
            v = tab[j].def;
        if (tab[j].type == AIA_INT || tab[j].type == AIA_BOOL) {
            a->i = strcmp(v, "true") == 0 ? 1 : strtoll(v, NULL, 10);
            a->d = (double)a->i;
        } else if (tab[j].type == AIA_DOUBLE) {
            a->d = strtod(v, NULL);
        } else if ((tab[j].type == AIA_INTS || tab[j].type == AIA_DOUBLES) &&
                   strcmp(v, "[]") == 0) {
            a->n = 0;
        } else if (tab[j].type == AIA_INTS && v[0] == '[') {
            if (parse_ints(v, a) < 0)
                return -1;
        } else if (tab[j].type == AIA_ENUM && tab[j].choices) {
            /* the choice's index in "a|b|c" */
            const char *c = tab[j].choices;
            size_t len = strlen(v);
            a->s = v;
            a->i = 0;
            while (!(strncmp(c, v, len) == 0 && (c[len] == '|' || !c[len]))) {
                c = strchr(c, '|');
                if (!c) {
                    fprintf(stderr, "bench: %s: %s is not one of %s\n",
                            tab[j].name, v, tab[j].choices);
                    return -1;
                }
                c++;
                a->i++;
            }
        } else {
            fprintf(stderr, "bench: %s: only numbers and empty lists are "
                            "supported here\n",
                    tab[j].name);
            return -1;
        }
    }
    return 0;
}

int bench_problem_load(struct bench_problem *bp, const char *path,
                       char *const *kv, int nkv)
{
    memset(bp, 0, sizeof *bp);
    if (!(bp->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "bench: %s\n", dlerror());
        return -1;
    }
    bp->p = dlsym(bp->dl, "aia_problem_plugin");
    if (!bp->p || bp->p->h.abi != AIA_ABI_VERSION ||
        bp->p->h.kind != AIA_KIND_PROBLEM) {
        fprintf(stderr, "bench: %s: not a problem plugin of ABI %d\n", path,
                AIA_ABI_VERSION);
        return -1;
    }
    /* the runtime's host (its partition, step and age rules, which the
     * plugins call), with the bench's own log and clock */
    bp->host = *host_get();
    bp->host.log = bench_log;
    bp->host.now = bench_host_now;
    return bind(bp, kv, nkv);
}

void *bench_problem_open(struct bench_problem *bp, uint64_t seed, int rank,
                         int index, int count, const double *weights)
{
    struct aia_context ctx = {
        .size = sizeof ctx,
        .role = index == AIA_PART_ALL ? AIA_ROLE_COORDINATOR : AIA_ROLE_WORKER,
        .rank = rank,
        .worker = index,
        .nworkers = count,
        .seed = seed,
        .args = bp->args,
        .jobdir = ".",
        .host = &bp->host,
    };
    struct aia_partition part = {.index = index,
                                 .count = count,
                                 .scheme = AIA_PART_BLOCK,
                                 .weights = weights};
    struct aia_error err;
    void *state = NULL;
    if (bp->p->open(&ctx, &part, &state, &err) < 0) {
        fprintf(stderr, "bench: %s: open: %s\n", bp->p->h.name, err.text);
        return NULL;
    }
    return state;
}

void bench_problem_unload(struct bench_problem *bp)
{
    for (struct aia_value *a = bp->args; a && a->name; a++)
        if (a->type == AIA_INTS)
            free((void *)a->ints);
    free(bp->args);
    if (bp->dl)
        dlclose(bp->dl);
}
