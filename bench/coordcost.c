/* coordcost.c - the coordinator's work per answer for large models, in
 * one process, without MPI: an algorithm's absorb of one answer and its
 * query at the end of a round (sgd, gd and average on bench/nullprob.c),
 * against a memcpy of the same doubles and the float32 encoding a query
 * takes with pool.codec.query: float32; and a running table's update by
 * one answer and its sum afresh (aia_table_add, aia_table_resum: what
 * gd, sag and sgd's table do for an answer in async mode).
 *
 *     coordcost DIM [REPS]
 *
 * prints one line per measurement: "what=NAME us=MICROSECONDS
 * min_us=MICROSECONDS per_memcpy=RATIO", the median and the least over
 * REPS (default 21) of single calls, and first "memcpy" itself.  The plugins
 * are found through AIARUN_PLUGIN_PATH, as in the unit tests.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aiarun/alg.h>

#include "core/codec.h"
#include "../t/algtest.h"
#include "../t/tap.h"
#include "benchlib.h"

#define NW 4

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static double base_us;

static void report(const char *what, double *v, int n)
{
    double us = 1e6 * median(v, n), least = 1e6 * v[0];
    if (base_us == 0)
        base_us = us;
    printf("what=%s us=%.1f min_us=%.1f per_memcpy=%.2f\n", what, us, least,
           us / base_us);
    fflush(stdout);
}

/* absorb and query of one algorithm on a pool of NW workers */
static void algorithm(const char *name, size_t dim, int reps, double *t)
{
    char yaml[64];
    snprintf(yaml, sizeof yaml, "{dim: %zu}", dim);
    struct plugtest p, a;
    plugtest_load(&p, "nullprob", AIA_KIND_PROBLEM, yaml);
    plugtest_load(&a, name, AIA_KIND_ALGORITHM, "{step: 0.1}");
    struct algtest at;
    algtest_open(&at, &a, &p, NW, NULL, 1);
    double *ans = malloc(at.alen * sizeof *ans);
    double *q = malloc(at.qlen * sizeof *q);
    if (!ans || !q)
        bail_out("out of memory");
    for (size_t j = 0; j < at.alen; j++)
        ans[j] = 1e-3 * (double)(j % 7);
    struct aia_error err;
    for (int r = 0; r < reps; r++) {
        struct aia_answer_info info = {.rank = r % NW + 1,
                                       .worker = r % NW,
                                       .round = (uint64_t)r + 1,
                                       .sent_round = (uint64_t)r + 1,
                                       .rows = 1,
                                       .total_rows = NW};
        double t0 = bench_now();
        if (at.alg->absorb(at.as[0], ans, &info, &err) < 0)
            bail_out("%s: absorb: %s", name, err.text);
        double t1 = bench_now();
        if (at.alg->query(at.as[0], q, &err) < 0)
            bail_out("%s: query: %s", name, err.text);
        t[r] = t1 - t0;
        t[reps + r] = bench_now() - t1;
    }
    char what[64];
    snprintf(what, sizeof what, "%s-absorb", name);
    report(what, t, reps);
    snprintf(what, sizeof what, "%s-query", name);
    report(what, t + reps, reps);
    free(ans);
    free(q);
    algtest_close(&at);
    plugtest_free(&a);
    plugtest_free(&p);
}

/* A running table of NW entries: one answer's update, then the sum
 * afresh of all NW entries (once every max(NW, 16) answers). */
static void table(size_t dim, int reps, double *t)
{
    struct aia_table tab;
    double *g = malloc(dim * sizeof *g);
    if (!g || aia_table_init(&tab, NW, dim) < 0)
        bail_out("out of memory");
    tab.running = 1;
    for (size_t j = 0; j < dim; j++)
        g[j] = 1e-3 * (double)(j % 7);
    for (int e = 0; e < NW; e++)
        aia_table_add(&tab, (size_t)e, g, 1, 1);
    for (int r = 0; r < reps; r++) {
        g[(size_t)r % dim] += 1e-3;
        tab.since = 0; /* no sum afresh inside the timed update */
        double t0 = bench_now();
        aia_table_add(&tab, (size_t)r % NW, g, 1 + r % 3, (uint64_t)r + 2);
        double t1 = bench_now();
        aia_table_resum(&tab);
        t[r] = t1 - t0;
        t[reps + r] = bench_now() - t1;
    }
    report("table-add", t, reps);
    report("table-resum", t + reps, reps);
    aia_table_free(&tab);
    free(g);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: coordcost DIM [REPS]\n");
        return 2;
    }
    size_t dim = (size_t)strtoull(argv[1], NULL, 10);
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    if (dim == 0 || reps < 1)
        return 2;
    double *t = malloc(2 * (size_t)reps * sizeof *t);
    double *x = malloc(dim * sizeof *x), *y = malloc(dim * sizeof *y);
    void *enc = malloc(dim * sizeof *x);
    if (!t || !x || !y || !enc)
        return 1;
    for (size_t j = 0; j < dim; j++)
        x[j] = y[j] = (double)j;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        memcpy(y, x, dim * sizeof *x);
        t[r] = bench_now() - t0;
        x[r % dim] = y[(r + 1) % dim]; /* keep the copies */
    }
    report("memcpy", t, reps);
    struct codec c;
    struct aia_error err;
    if (codec_init(&c, CODEC_FLOAT32, dim, 0, 0, &err) < 0)
        bail_out("codec: %s", err.text);
    for (int r = 0; r < reps; r++) {
        size_t bytes = dim * sizeof *x;
        double t0 = bench_now();
        if (codec_encode(&c, x, enc, &bytes, &err) < 0)
            bail_out("encode: %s", err.text);
        t[r] = bench_now() - t0;
    }
    report("encode-float32", t, reps);
    codec_free(&c);
    algorithm("sgd", dim, reps, t);
    algorithm("gd", dim, reps, t);
    algorithm("average", dim, reps, t);
    table(dim, reps, t);
    free(t);
    free(x);
    free(y);
    free(enc);
    return 0;
}
