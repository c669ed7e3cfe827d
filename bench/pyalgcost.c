/* pyalgcost.c - the python algorithm's cost per round, in one process,
 * without MPI: rounds of the gd plugin and of etc/gd.py (gd in NumPy,
 * through the python algorithm) on bench/nullprob.c, 4 workers each
 * answering every round (worker, then the coordinator's absorb) and the
 * coordinator's step (query), timed in the process's CPU time, so that
 * other work on the machine does not count.
 *
 *     pyalgcost DIM ROUNDS [REPS]
 *
 * prints one line per repetition, "rep=K c_us=US python_us=US
 * bridge_us=US": the CPU microseconds per round of each, measured one
 * after the other, and of a class whose methods do nothing (the bridge's
 * own cost: the calls, the views, an answer's info).  The plugins are
 * found through AIARUN_PLUGIN_PATH and module gd through
 * AIARUN_PYTHONPATH.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../t/algtest.h"
#include "../t/tap.h"

#define NW 4

/* the bridge alone: methods that do nothing */
static const char noop_py[] = "class Noop:\n"
                              "    def create(self, ctx):\n"
                              "        return ctx.dim\n"
                              "    def init(self, q):\n"
                              "        pass\n"
                              "    def worker(self, q, a, step):\n"
                              "        pass\n"
                              "    def absorb(self, a, info):\n"
                              "        pass\n"
                              "    def query(self, q):\n"
                              "        pass\n";

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds per round of rounds of t, after a few unmeasured. */
static double per_round(struct algtest *t, int rounds)
{
    algtest_rounds(t, 3, -1, 0);
    double t0 = cpu_now();
    algtest_rounds(t, rounds, -1, 0);
    return (cpu_now() - t0) / rounds;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pyalgcost DIM ROUNDS [REPS]\n");
        return 2;
    }
    size_t dim = (size_t)strtoull(argv[1], NULL, 10);
    int rounds = atoi(argv[2]), reps = argc > 3 ? atoi(argv[3]) : 5;
    if (dim == 0 || rounds < 1 || reps < 1)
        return 2;
    char dir[] = "/tmp/aiarun-pyalgcost-XXXXXX", file[64] = "", env[8192];
    FILE *f = NULL;
    if (mkdtemp(dir))
        snprintf(file, sizeof file, "%s/pyalgnoop.py", dir);
    if (!*file || !(f = fopen(file, "w")) || fputs(noop_py, f) < 0 ||
        fclose(f) != 0)
        bail_out("cannot write %s", dir);
    const char *old = getenv("AIARUN_PYTHONPATH");
    snprintf(env, sizeof env, "%s%s%s", dir, old ? ":" : "", old ? old : "");
    setenv("AIARUN_PYTHONPATH", env, 1);
    char yaml[64];
    snprintf(yaml, sizeof yaml, "{dim: %zu}", dim);
    struct plugtest p, c, py, nop;
    plugtest_load(&p, "nullprob", AIA_KIND_PROBLEM, yaml);
    plugtest_load(&c, "gd", AIA_KIND_ALGORITHM, "{step: 0.1}");
    plugtest_load(&py, "python", AIA_KIND_ALGORITHM, "{class: gd:GD}");
    /* the class's step, which plugtest's binding (the parameter table's
     * keys only) cannot pass: the values the runtime appends */
    struct aia_value *table = py.args, own[3] = {table[0],
                                                 {.name = "step",
                                                  .type = AIA_DOUBLE,
                                                  .given = 1,
                                                  .d = 0.1},
                                                 {0}};
    py.args = own;
    plugtest_load(&nop, "python", AIA_KIND_ALGORITHM,
                  "{class: pyalgnoop:Noop}");
    struct algtest tc, tp, tn;
    algtest_open(&tc, &c, &p, NW, NULL, 1);
    algtest_open(&tp, &py, &p, NW, NULL, 1);
    algtest_open(&tn, &nop, &p, NW, NULL, 1);
    for (int r = 1; r <= reps; r++) {
        /* alternate the order, so that neither always runs first */
        double cs, ps;
        if (r % 2) {
            cs = per_round(&tc, rounds);
            ps = per_round(&tp, rounds);
        } else {
            ps = per_round(&tp, rounds);
            cs = per_round(&tc, rounds);
        }
        double ns = per_round(&tn, rounds);
        printf("rep=%d c_us=%.3f python_us=%.3f bridge_us=%.3f\n", r, 1e6 * cs,
               1e6 * ps, 1e6 * ns);
        fflush(stdout);
    }
    algtest_close(&tc);
    algtest_close(&tp);
    algtest_close(&tn);
    plugtest_free(&nop);
    unlink(file);
    rmdir(dir);
    plugtest_free(&c);
    py.args = table;
    plugtest_free(&py);
    plugtest_free(&p);
    return 0;
}
