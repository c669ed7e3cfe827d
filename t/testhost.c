/* testhost.c - the test host of <aiarun/testhost.h>, linked as a plugin
 * author links it (libaiatesthost.a, nothing of the runtime): its context
 * carries the host, whose rules deal every row to one part, the
 * coordinator's part holding them all; its notes, step and log read
 * back. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <aiarun/aiarun.h>
#include <aiarun/rows.h>
#include <aiarun/testhost.h>

#include "tap.h"

static void context(void)
{
    struct aia_value args[1] = {{0}};
    struct aia_context ctx;
    memset(&ctx, 0xff, sizeof ctx);
    is_int(aia_test_context(&ctx, AIA_ROLE_WORKER, 1, 3, 7, args), 0,
           "a worker's context is filled");
    ok(ctx.host == aia_test_host() && ctx.size == sizeof ctx &&
           ctx.role == AIA_ROLE_WORKER && ctx.rank == 2 && ctx.worker == 1 &&
           ctx.nworkers == 3 && ctx.seed == 7 && ctx.args == args &&
           !ctx.data && !ctx.facts && !ctx.problem,
       "with the test host, its rank, the seed and the args; no data");
    ok(ctx.pool_ranks && ctx.pool_ranks[0] == 1 && ctx.pool_ranks[2] == 3,
       "the pool's ranks are 1 .. nworkers");
    is_int(aia_test_context(&ctx, AIA_ROLE_COORDINATOR, -1, 3, 7, args), 0,
           "the coordinator's context is filled");
    ok(ctx.rank == 0 && ctx.worker == -1 && ctx.host == aia_test_host(),
       "at rank 0, worker -1, with the host");
    is_int(aia_test_context(&ctx, AIA_ROLE_WORKER, 3, 3, 7, args), -1,
           "worker 3 of 3 is refused");
    is_int(aia_test_context(&ctx, AIA_ROLE_COORDINATOR, 0, 3, 7, args), -1,
           "a coordinator with a worker index is refused");
    is_int(aia_test_context(&ctx, 9, 0, 3, 7, args), -1,
           "an unknown role is refused");
}

/* Every row of m has one owner among the parts, each part's count is the
 * rows it owns, and the counts cover m: for each scheme, with and without
 * weights. */
static void partition(void)
{
    static const double weights[3] = {1, 2, 1};
    const size_t m = 1000;
    for (int scheme = AIA_PART_BLOCK; scheme <= AIA_PART_CYCLIC; scheme++)
        for (int w = 0; w < 2; w++) {
            const char *name = scheme == AIA_PART_BLOCK ? "block" : "cyclic";
            size_t total = 0, owned[3] = {0, 0, 0}, bad = 0;
            for (size_t r = 0; r < m; r++) {
                struct aia_partition part = {0, 3, scheme, 0,
                                             w ? weights : NULL};
                int o = aia_partition_owner(aia_test_host(), &part, m, r);
                if (o < 0 || o > 2)
                    bad++;
                else
                    owned[o]++;
            }
            int each = 1;
            for (int p = 0; p < 3; p++) {
                struct aia_partition part = {p, 3, scheme, 0,
                                             w ? weights : NULL};
                size_t k = aia_test_rows(&part, m);
                total += k;
                each = each && k > 0 && k == owned[p];
            }
            ok(bad == 0 && each && total == m,
               "%s%s: each row has one owner, each part holds the rows it "
               "owns (%zu %zu %zu of %zu)",
               name, w ? " with weights 1 2 1" : "", owned[0], owned[1],
               owned[2], m);
        }
    /* cyclic without weights is r mod count, by the header's word */
    struct aia_partition part = {1, 3, AIA_PART_CYCLIC, 0, NULL};
    size_t rows[4];
    is_int((long long)aia_owned_rows(aia_test_host(), &part, 10, rows), 3,
           "cyclic: part 1 of 3 holds 3 of 10 rows");
    ok(rows[0] == 1 && rows[1] == 4 && rows[2] == 7,
       "rows 1, 4 and 7 (%zu %zu %zu)", rows[0], rows[1], rows[2]);
}

/* The coordinator's part holds every row (its open is told so, and every
 * problem plugin generates them all there). */
static void coordinator_rows(void)
{
    const size_t m = 10;
    for (int scheme = AIA_PART_BLOCK; scheme <= AIA_PART_CYCLIC; scheme++) {
        struct aia_partition part = {AIA_PART_ALL, 3, scheme, 0, NULL};
        size_t rows[10];
        memset(rows, 0xff, sizeof rows);
        size_t k = aia_owned_rows(aia_test_host(), &part, m, rows);
        int in_order = 1;
        for (size_t i = 0; i < m; i++)
            in_order = in_order && rows[i] == i;
        ok(k == m && in_order,
           "%s: AIA_PART_ALL holds every row, 0 .. %zu in order (%zu)",
           scheme == AIA_PART_BLOCK ? "block" : "cyclic", m - 1, k);
        is_int((long long)aia_test_rows(&part, m), (long long)m,
               "aia_test_rows says so too");
    }
}

static void steps_and_notes(void)
{
    struct aia_value args[2] = {{.name = "step", .type = AIA_DOUBLE, .d = NAN},
                                {0}};
    struct aia_problem_facts facts = {.size = sizeof facts, .smoothness = 4};
    struct aia_context ctx;
    struct aia_error err = {{0}};
    double step = 0;
    const char *why = NULL;
    ok(isnan(aia_test_step(&why)), "no step noted at first");
    aia_test_context(&ctx, AIA_ROLE_WORKER, 0, 2, 1, args);
    ctx.facts = &facts;
    is_int(aia_auto_step(&ctx, 0, 1, "1/L", &step, &err), 0,
           "auto step on a worker");
    ok(step == 0.25 && isnan(aia_test_step(NULL)),
       "is 1/L = 0.25 (%g), not noted by a worker", step);
    aia_test_context(&ctx, AIA_ROLE_COORDINATOR, -1, 2, 1, args);
    ctx.facts = &facts;
    aia_auto_step(&ctx, 0, 2, "2/L", &step, &err);
    ok(step == 0.5 && aia_test_step(&why) == 0.5,
       "the coordinator's step 2/L is noted (%g)", aia_test_step(NULL));
    like(why, "auto: 2/L, with L = 4", "with why: %s", why);
    facts.smoothness = 0;
    is_int(aia_auto_step(&ctx, 0, 1, "1/L", &step, &err), -1,
           "auto without L is refused");
    like(err.text, "auto needs the problem's smoothness L", "%s", err.text);

    ok(!aia_test_note("balance"), "no note at first");
    aia_note(aia_test_host(), "balance", "rows moved 3 times");
    aia_note(aia_test_host(), "other", "x");
    aia_note(aia_test_host(), "balance", "rows moved 4 times");
    is_string(aia_test_note("balance"), "rows moved 4 times",
              "a later note under a key replaces it");
    is_string(aia_test_note("other"), "x", "another key keeps its own");

    const struct aia_host *h = aia_test_host();
    is_double(h->age_factor(h, 100, 400, 10, 2), 0.5, 0,
              "age factor: mean age 4 over a bound of 2 halves the step");
    is_double(h->age_factor(h, 100, 400, 60, 2), 1, 0,
              "but not when most rows are recent");
}

/* The log, read back from stderr. */
static void logging(void)
{
    FILE *f = tmpfile();
    int keep = dup(2);
    if (!f || keep < 0)
        bail_out("no temporary file");
    fflush(stderr);
    dup2(fileno(f), 2);
    const struct aia_host *h = aia_test_host();
    h->log(h, AIA_LOG_INFO, "hidden %d", 1);
    h->log(h, AIA_LOG_WARN, "shown %d", 2);
    aia_test_verbosity(AIA_LOG_INFO);
    h->log(h, AIA_LOG_INFO, "shown %d", 3);
    aia_test_verbosity(AIA_LOG_WARN);
    fflush(stderr);
    dup2(keep, 2);
    close(keep);
    char text[256] = "";
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    is_string(text, "aiarun-test: shown 2\naiarun-test: shown 3\n",
              "log lines up to the verbosity, prefixed");
    double t0 = h->now(h), t1 = h->now(h);
    ok(t0 > 0 && t1 >= t0, "now is a monotonic clock (%g, %g)", t0, t1);
}

int main(void)
{
    context();
    partition();
    coordinator_rows();
    steps_and_notes();
    logging();
    return done_testing();
}
