/* evaluate.c - aiarun-evaluate, installed: the loss and metric of a
 * model (output.final) on a data file, held-out test rows say, through
 * the problem plugin itself:
 *
 *     aiarun-evaluate [-t TARGETS] [-s SCALE] [-f FORMAT] [-S SEED] PLUGIN
 *                     PARAMS DATA MODEL
 *
 * PLUGIN is a problem plugin (name or path, found as aiarun finds it),
 * PARAMS its parameters as an inline YAML mapping ("{classes: 10}"), DATA
 * the rows (format from the name unless -f), MODEL the text file of the
 * model, one value a line, SEED the job's seed (mlp draws its initial
 * weights from it).  Prints "rows N loss F METRIC M" on stdout;
 * exits 1 with a message on any error.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "session/loader.h"
#include "conf/manifest.h"
#include "conf/params.h"

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "aiarun-evaluate: %s%s%s\n", what, why ? ": " : "",
            why ? why : "");
    return 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: aiarun-evaluate [OPTIONS] PLUGIN PARAMS DATA MODEL\n"
            "\n"
            "The loss and metric of MODEL (a job's output.final) on the rows "
            "of DATA,\n"
            "through the problem plugin PLUGIN with PARAMS (an inline YAML "
            "mapping,\n"
            "e.g. '{classes: 10}'); prints \"rows N loss F METRIC M\".\n"
            "\n"
            "Options:\n"
            "  -t, --targets FILE   the targets (labels) in a file of their "
            "own\n"
            "  -s, --scale X        multiply every feature by X\n"
            "  -f, --format NAME    csv, libsvm, binary, npy, idx or hdf5 "
            "(default: from\n"
            "                       DATA's name)\n"
            "  -S, --seed N         the job's seed (mlp draws its start "
            "from it)\n"
            "  -V, --version        print the version\n"
            "  -h, --help           print this help\n"
            "Exit status: 0 done, 1 a failed evaluation, 2 bad usage.\n");
}

/* The model: n values, one a line. */
static double *read_model(const char *path, size_t n, struct aia_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        aia_seterr(err, "%s: cannot open", path);
        return NULL;
    }
    double *x = malloc((n ? n : 1) * sizeof *x);
    size_t k = 0;
    while (x && k < n && fscanf(f, "%lf", &x[k]) == 1)
        k++;
    double extra;
    int more = fscanf(f, "%lf", &extra) == 1;
    fclose(f);
    if (!x || k != n || more) {
        aia_seterr(err, "%s: %s values, the problem has %zu", path,
                   more ? "more" : "fewer", n);
        free(x);
        return NULL;
    }
    return x;
}

int main(int argc, char **argv)
{
    struct data_opts o;
    data_opts_init(&o);
    o.format = -1;
    int c;
    unsigned long long seed = 0;
    static const struct option longs[] = {
        {"targets", required_argument, NULL, 't'},
        {"scale", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},
        {"seed", required_argument, NULL, 'S'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    while ((c = getopt_long(argc, argv, "t:s:f:S:Vh", longs, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        } else if (c == 'V') {
            printf("aiarun-evaluate %s (plugin ABI %d)\n", PACKAGE_VERSION,
                   AIA_ABI_VERSION);
            return 0;
        } else if (c == 'S')
            seed = strtoull(optarg, NULL, 10);
        else if (c == 't')
            o.targets = optarg;
        else if (c == 's')
            o.scale = atof(optarg);
        else if (c == 'f') {
            o.format = -1;
            for (int k = 0; data_format_name(k); k++)
                if (strcmp(data_format_name(k), optarg) == 0)
                    o.format = k;
            if (o.format < 0)
                return fail("unknown format", optarg);
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (argc - optind != 4) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[optind], *yaml = argv[optind + 1];
    o.path = argv[optind + 2];
    if (o.format < 0 && (o.format = data_format_guess(o.path)) < 0)
        return fail(o.path, "cannot tell the format: give -f");
    o.sparse = data_format_sparse(o.format);
    struct aia_error err;
    struct plugin *p = loader_open(name, AIA_KIND_PROBLEM, NULL, &err);
    if (!p) /* the loader's message names the plugin already */
        return fail(err.text, NULL);
    struct mnode *node = mnode_parse_value(yaml, &err);
    struct aia_value *args =
        node ? params_bind("evaluate", name, node, NULL, p->h->params, NULL,
                           p->h->name, &err)
             : NULL;
    mnode_free(node);
    if (!args)
        return fail(yaml, err.text);
    struct data_table t;
    if (data_read(&o, NULL, NULL, &t, &err) < 0)
        return fail("data", err.text);
    const struct aia_problem_plugin *prob =
        (const struct aia_problem_plugin *)p->h;
    struct aia_partition part = {AIA_PART_ALL, 1, AIA_PART_BLOCK, 0, NULL};
    struct aia_context ctx = {.size = sizeof ctx,
                              .role = AIA_ROLE_COORDINATOR,
                              .worker = -1,
                              .nworkers = 1,
                              .seed = seed,
                              .args = args,
                              .jobdir = ".",
                              .data = &t.d};
    void *s;
    if (prob->open(&ctx, &part, &s, &err) < 0)
        return fail(name, err.text);
    double *x = read_model(argv[optind + 3], prob->dim(s), &err);
    if (!x)
        return fail("model", err.text);
    double f, m = 0;
    if (prob->loss(s, x, &f, &err) < 0 ||
        (prob->metric && prob->metric(s, x, &m, &err) < 0))
        return fail("evaluation", err.text);
    printf("rows %zu loss %.10g", t.d.rows, f);
    if (prob->metric)
        printf(" %s %.6f", prob->metric_name, m);
    printf("\n");
    free(x);
    prob->close(s);
    data_free(&t);
    params_free(args);
    loader_close(p);
    return 0;
}
