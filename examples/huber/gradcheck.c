/* gradcheck.c - test a problem plugin without mpirun: load it with
 * dlopen, open one part of its generated data the way aiarun would (the
 * context from the test host, whose rules say which rows a part holds),
 * check that the part holds the rows the runtime would deal it, and
 * compare its gradient with central finite differences of its loss.
 *
 *     gradcheck ./huber.so [key=value ...]
 *
 * Parameters not given take their defaults from the plugin's own table.
 * Prints one line per check and exits 0 when every check passes, 1 when
 * one fails (a part of no rows or no features fails: a difference over
 * nothing proves nothing), 2 when the plugin cannot be loaded or opened.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>
#include <aiarun/testhost.h>

#define MAXP 32

/* Fill args from the table's defaults and the key=value arguments.  Only
 * what this checker needs: numbers and booleans. */
static int make_args(const struct aia_param *t, struct aia_value *args,
                     int argc, char **argv)
{
    int n = 0;
    for (; t && t->name && n < MAXP - 1; t++, n++) {
        const char *text = t->def ? t->def : "0";
        args[n] = (struct aia_value){.name = t->name, .type = t->type};
        for (int i = 0; i < argc; i++) {
            size_t len = strlen(t->name);
            if (strncmp(argv[i], t->name, len) == 0 && argv[i][len] == '=') {
                text = argv[i] + len + 1;
                args[n].given = 1;
            }
        }
        if (t->type == AIA_BOOL)
            args[n].i = strcmp(text, "true") == 0;
        else
            args[n].i = strtoll(text, NULL, 10);
        args[n].d = strtod(text, NULL);
        args[n].s = text;
    }
    args[n] = (struct aia_value){0};
    return n;
}

/* Open the part, or exit 2. */
static void *open_part(const struct aia_problem_plugin *p,
                       const struct aia_context *ctx,
                       const struct aia_partition *part, const char *so)
{
    struct aia_error err = {{0}};
    void *st = NULL;
    if (p->open(ctx, part, &st, &err) < 0) {
        fprintf(stderr, "gradcheck: %s: open: %s\n", so, err.text);
        exit(2);
    }
    return st;
}

/* The part holds the rows the runtime's rule deals it, when the plugin
 * generates m of them (a parameter "rows"), and at least one.  0 or 1. */
static int check_rows(const char *who, size_t k, const struct aia_value *m,
                      const struct aia_partition *part)
{
    size_t want = m ? aia_test_rows(part, (size_t)m->i) : k;
    int good = k > 0 && k == want;
    if (m)
        printf("%s: %s holds %zu of %lld rows; the runtime's rule deals "
               "it %zu\n",
               good ? "ok" : "FAILED", who, k, (long long)m->i, want);
    else
        printf("%s: %s holds %zu rows\n", good ? "ok" : "FAILED", who, k);
    return !good;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gradcheck PLUGIN.so [key=value ...]\n");
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const struct aia_problem_plugin *p =
        so ? dlsym(so, "aia_problem_plugin") : NULL;
    if (!p || p->h.abi != AIA_ABI_VERSION || p->h.kind != AIA_KIND_PROBLEM) {
        fprintf(stderr, "gradcheck: %s: not a problem plugin of ABI %d%s%s\n",
                argv[1], AIA_ABI_VERSION, so ? "" : ": ", so ? "" : dlerror());
        return 2;
    }
    struct aia_value args[MAXP];
    make_args(p->h.params, args, argc - 2, argv + 2);
    /* worker 1 of 3 under the cyclic scheme: a part, not the whole */
    struct aia_partition part = {
        .index = 1, .count = 3, .scheme = AIA_PART_CYCLIC};
    struct aia_context ctx;
    aia_test_context(&ctx, AIA_ROLE_COORDINATOR, -1, 3, 7, args);
    const struct aia_value *m = aia_arg(args, "rows");
    /* the coordinator's part: every row */
    struct aia_partition all = {
        .index = AIA_PART_ALL, .count = 3, .scheme = AIA_PART_CYCLIC};
    void *st = open_part(p, &ctx, &all, argv[1]);
    int failed = check_rows("the coordinator", p->rows(st), m, &all);
    p->close(st);
    aia_test_context(&ctx, AIA_ROLE_WORKER, 1, 3, 7, args);
    st = open_part(p, &ctx, &part, argv[1]);
    failed += check_rows("worker 1 of 3", p->rows(st), m, &part);
    size_t n = p->dim(st);
    if (n == 0) {
        printf("FAILED: the model has no entry to differentiate\n");
        failed++;
    }
    double *x = calloc(n ? n : 1, sizeof *x), *g = calloc(n ? n : 1, sizeof *g);
    if (!x || !g)
        return 2;
    struct aia_rng rng;
    aia_rng_seed(&rng, 11, 0);
    struct aia_error err = {{0}};
    /* three points: near zero, where most residuals are inside delta, and
     * far, where many are past it */
    for (int k = 0; k < 3; k++) {
        double scale = k == 0 ? 0.01 : k == 1 ? 0.5 : 3;
        for (size_t j = 0; j < n; j++)
            x[j] = scale * aia_rng_normal(&rng);
        if (p->gradient(st, x, NULL, 0, g, &err) < 0) {
            fprintf(stderr, "gradcheck: gradient: %s\n", err.text);
            return 2;
        }
        double worst = 0, h = 1e-6;
        for (size_t j = 0; j < n; j++) {
            double keep = x[j], fp, fm;
            x[j] = keep + h;
            int rc = p->loss(st, x, &fp, &err);
            x[j] = keep - h;
            rc |= p->loss(st, x, &fm, &err);
            x[j] = keep;
            if (rc < 0) {
                fprintf(stderr, "gradcheck: loss: %s\n", err.text);
                return 2;
            }
            double fd = (fp - fm) / (2 * h);
            double e = fabs(fd - g[j]) / fmax(1, fabs(g[j]));
            /* a NaN is the worst difference (a plain > passes over it) */
            if (isnan(e) || e > worst)
                worst = e;
        }
        /* over no rows or no entries, nothing was compared */
        int good = worst < 1e-6 && p->rows(st) > 0 && n > 0;
        failed += !good;
        printf("%s: gradient at |x| ~ %g over %zu rows, worst relative "
               "difference %.2e\n",
               good ? "ok" : "FAILED", scale, p->rows(st), worst);
    }
    p->close(st);
    free(x);
    free(g);
    dlclose(so);
    return failed ? 1 : 0;
}
