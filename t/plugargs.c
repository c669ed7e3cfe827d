/* plugargs.c - plugins bind their choices by name: reordering the choices
 * of a parameter table changes the index the runtime stores with a
 * choice, and must change nothing in what a plugin does with it. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algtest.h"
#include "conf/manifest.h"
#include "conf/params.h"
#include "plugtest.h"
#include "tap.h"

#define W 4
#define ROUNDS 30

enum { MODE_FAST, MODE_SLOW, MODE_EXACT };
static const char *const modes[] = {
    [MODE_FAST] = "fast", [MODE_SLOW] = "slow", [MODE_EXACT] = "exact"};

/* Bind the inline mapping yaml against table; bails out on failure. */
static struct aia_value *bind(const char *yaml, const struct aia_param *table)
{
    struct aia_error err;
    struct mnode *n = mnode_parse_value(yaml, &err);
    if (!n)
        bail_out("bad test parameters %s: %s", yaml, err.text);
    struct aia_value *v =
        params_bind("test", "sec", n, NULL, table, NULL, "test", &err);
    mnode_free(n);
    if (!v)
        bail_out("cannot bind %s: %s", yaml, err.text);
    return v;
}

/* aia_arg_enum against two tables that list the same choices in two
 * orders. */
static void arg_enum(void)
{
    static const struct aia_param one[] = {
        {"mode", AIA_ENUM, "fast", "a choice", "fast|slow|exact", 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0},
    };
    static const struct aia_param other[] = {
        {"mode", AIA_ENUM, "fast", "a choice", "exact|fast|slow", 0, 0},
        {NULL, 0, NULL, NULL, NULL, 0, 0},
    };
    struct aia_value *a = bind("{mode: slow}", one);
    struct aia_value *b = bind("{mode: slow}", other);
    ok(aia_arg(a, "mode")->i != aia_arg(b, "mode")->i,
       "the index stored with a choice follows the table's order (%lld, %lld)",
       (long long)aia_arg(a, "mode")->i, (long long)aia_arg(b, "mode")->i);
    is_int(aia_arg_enum(a, "mode", modes, 3), MODE_SLOW,
           "aia_arg_enum gives the plugin's own number");
    is_int(aia_arg_enum(b, "mode", modes, 3), MODE_SLOW,
           "the same with the choices in another order");
    params_free(a);
    params_free(b);
    a = bind("{}", other);
    is_int(aia_arg_enum(a, "mode", modes, 3), MODE_FAST,
           "a default choice by name too");
    is_int(aia_arg_enum(a, "nosuch", modes, 3), -1, "an absent name: -1");
    is_int(aia_arg_enum(a, "mode", modes, 2), MODE_FAST,
           "a choice among the first names");
    params_free(a);
}

/* choices "a|b|c" reversed into out ("c|b|a"), cut at len - 1 bytes. */
static void reverse(const char *choices, char *out, size_t len)
{
    size_t end = strlen(choices), o = 0;
    for (;;) {
        size_t start = end;
        while (start > 0 && choices[start - 1] != '|')
            start--;
        if (o + (end - start) + 2 > len)
            break;
        if (o > 0)
            out[o++] = '|';
        memcpy(out + o, choices + start, end - start);
        o += end - start;
        if (start == 0)
            break;
        end = start - 1;
    }
    out[o] = '\0';
}

/* The coordinator's model after ROUNDS rounds of alg (bound args) on
 * prob, worker 3 two rounds late all along; malloc'd. */
static double *model_after(const struct plugtest *alg,
                           const struct plugtest *prob, size_t *dim)
{
    struct algtest t;
    algtest_open(&t, alg, prob, W, NULL, 11);
    algtest_rounds(&t, ROUNDS, 3, 2);
    *dim = t.dim;
    double *x = malloc(t.dim * sizeof *x);
    if (!x)
        bail_out("out of memory");
    memcpy(x, algtest_model(&t), t.dim * sizeof *x);
    algtest_close(&t);
    return x;
}

/* Every choice of every AIA_ENUM parameter of plugin name, bound through
 * its own table and through one whose choices of that parameter are
 * reversed: the runs must be the same to the bit.  base: keys the
 * plugin's choices need beside them ("" or "key: value, ").  Returns the
 * number of parameters of that kind. */
static int plugin_choices(const char *name, const char *base,
                          const struct plugtest *prob)
{
    struct plugtest own;
    plugtest_load(&own, name, AIA_KIND_ALGORITHM, NULL);
    const struct aia_param *table = own.p->h->params;
    size_t count = 0;
    while (table[count].name)
        count++;
    int found = 0;
    for (size_t k = 0; k < count; k++) {
        if (table[k].type != AIA_ENUM)
            continue;
        found++;
        char reversed[256], buf[256];
        reverse(table[k].choices, reversed, sizeof reversed);
        struct aia_param *swapped = calloc(count + 1, sizeof *swapped);
        if (!swapped)
            bail_out("out of memory");
        memcpy(swapped, table, (count + 1) * sizeof *swapped);
        swapped[k].choices = reversed;
        snprintf(buf, sizeof buf, "%s", table[k].choices);
        char *save = NULL;
        for (char *c = strtok_r(buf, "|", &save); c;
             c = strtok_r(NULL, "|", &save)) {
            char yaml[300];
            snprintf(yaml, sizeof yaml, "{%s%s: %s}", base, table[k].name,
                     c);
            struct plugtest a = {own.p, bind(yaml, table)};
            struct plugtest b = {own.p, bind(yaml, swapped)};
            size_t dim = 0, dimb = 0;
            double *xa = model_after(&a, prob, &dim);
            double *xb = model_after(&b, prob, &dimb);
            ok(dim == dimb && memcmp(xa, xb, dim * sizeof *xa) == 0,
               "%s %s: %s (index %lld, %lld reversed): the same run to the "
               "bit",
               name, table[k].name, c,
               (long long)aia_arg(a.args, table[k].name)->i,
               (long long)aia_arg(b.args, table[k].name)->i);
            free(xa);
            free(xb);
            params_free(a.args);
            params_free(b.args);
        }
        free(swapped);
    }
    plugtest_free(&own);
    return found;
}

int main(void)
{
    plan(0);
    arg_enum();
    struct plugtest prob;
    plugtest_load(&prob, "lrmse", AIA_KIND_PROBLEM,
                  "{rows: 200, cols: 5, condition: 10}");
    static const char *const algs[] = {"gd",      "sgd",        "sag",
                                       "rennala", "ringmaster", "average"};
    /* sgd's momentum_every: round takes a momentum */
    static const char *const bases[] = {"", "momentum: 0.5, ", "", "", "",
                                        ""};
    int enums = 0;
    for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
        enums += plugin_choices(algs[i], bases[i], &prob);
    ok(enums >= 4, "the choices of %d parameters were reordered", enums);
    plugtest_free(&prob);
    return done_testing();
}
