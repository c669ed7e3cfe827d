/* gradcheck.c - test a problem plugin without mpirun: load it with
 * dlopen, open one part of its generated data the way aiarun would, and
 * compare its gradient with central finite differences of its loss.
 *
 *     gradcheck ./huber.so [key=value ...]
 *
 * Parameters not given take their defaults from the plugin's own table.
 * Prints one line per check and exits 0 when every check passes, 1 when
 * one fails, 2 when the plugin cannot be loaded or opened.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/aiarun.h>

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
    struct aia_context ctx = {.size = sizeof ctx,
                              .role = AIA_ROLE_WORKER,
                              .rank = 2,
                              .worker = 1,
                              .nworkers = 3,
                              .seed = 7,
                              .args = args,
                              .jobdir = "."};
    struct aia_error err = {{0}};
    void *st = NULL;
    if (p->open(&ctx, &part, &st, &err) < 0) {
        fprintf(stderr, "gradcheck: %s: open: %s\n", argv[1], err.text);
        return 2;
    }
    size_t n = p->dim(st);
    double *x = calloc(n, sizeof *x), *g = calloc(n, sizeof *g);
    if (!x || !g)
        return 2;
    struct aia_rng rng;
    aia_rng_seed(&rng, 11, 0);
    int failed = 0;
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
            p->loss(st, x, &fp, &err);
            x[j] = keep - h;
            p->loss(st, x, &fm, &err);
            x[j] = keep;
            double fd = (fp - fm) / (2 * h);
            double e = fabs(fd - g[j]) / fmax(1, fabs(g[j]));
            if (e > worst)
                worst = e;
        }
        int good = worst < 1e-6;
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
