/* allreduce_gd.c - the synchronous baseline: gradient descent written
 * plainly with MPI_Allreduce.
 *
 *     mpirun -np P allreduce_gd PLUGIN.so [options] [key=value ...]
 *
 * Each of the P ranks plays one of aiarun's P workers: rank r holds part r
 * of the problem (aiarun's rank r + 1), opened through the very plugin
 * aiarun loads (the key=value arguments are its parameters), so the rows
 * are the same.  An iteration: the gradient of the local rows, the
 * injected delay, one MPI_Allreduce of the row-weighted gradients, the
 * step x <- x - step * sum_i n_i g_i / sum_i n_i (what aiarun's gd plugin
 * does with every worker in every round), then, on rank 0, the loss from
 * the plugin's coordinator view (the same O(dim^2) formula aiarun's
 * coordinator uses for its history) to stop at the target.
 *
 * Options:
 *   --seed S           the job's seed (1)
 *   --step S           the step (1)
 *   --weights a,b,...  problem.weights: each rank's share of the rows
 *   --work-ms T        stragglers.work_ms: added to every iteration
 *   --straggler R:T    stragglers.fixed: aiarun's rank R (this program's
 *                      rank R - 1) is T ms slower every iteration
 *   --markov PS:PF:T   stragglers.markov: each rank, per iteration, turns
 *                      slow with probability PS and fast again with PF;
 *                      T ms more while slow (seeded by --seed and rank)
 *   --target E         stop once loss <= (1 + E) * optimum (1e-3)
 *   --target-loss V    stop once loss <= V instead (for a problem whose
 *                      optimum is 0, where a relative gap means nothing)
 *   --keep-going       do not stop at the target (only at a limit)
 *   --max-time T       stop after T seconds (60)
 *   --max-iter N       stop after N iterations (1000000)
 *
 * Rank 0 prints one line: iterations=K time=T reached=0|1 tta=T
 * tta_iterations=K loss=F optimum=F solve=S: iterations and seconds run,
 * the time and iterations to the target (to the stop when not reached),
 * the last loss, the optimum, and solve, the time of the plugin's direct
 * solve of the normal equations (its optimum function, from a fresh
 * coordinator view: the rows drawn again, the Gram matrix, Cholesky).
 */
#include <config.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define MAX_WEIGHTS 1024

static void die(const char *what)
{
    fprintf(stderr, "allreduce_gd: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_sleep_setup();
    if (argc < 2)
        die("usage: mpirun -np P allreduce_gd PLUGIN.so [options] "
            "[key=value ...]");
    const char *path = argv[1];
    uint64_t seed = 1;
    double step = 1, work = 0, late = 0, target = 1e-3, max_time = 60,
           target_loss = -1;
    long max_iter = 1000000;
    int slow_rank = -1, nweights = 0, keep_going = 0, markov = 0;
    double p_slow = 0, p_fast = 0, burst = 0;
    double weights[MAX_WEIGHTS];
    char **kv = calloc((size_t)argc, sizeof *kv);
    int nkv = 0;
    if (!kv)
        die("out of memory");
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(o, "--", 2) != 0) {
            kv[nkv++] = argv[i];
            continue;
        }
        if (strcmp(o, "--keep-going") == 0) {
            keep_going = 1;
            continue;
        }
        if (!v)
            die("an option without its value");
        i++;
        if (strcmp(o, "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else if (strcmp(o, "--step") == 0)
            step = strtod(v, NULL);
        else if (strcmp(o, "--weights") == 0)
            nweights = bench_parse_list(v, weights, MAX_WEIGHTS);
        else if (strcmp(o, "--work-ms") == 0)
            work = strtod(v, NULL) / 1e3;
        else if (strcmp(o, "--straggler") == 0) {
            if (sscanf(v, "%d:%lf", &slow_rank, &late) != 2)
                die("--straggler RANK:MS");
            late /= 1e3;
        } else if (strcmp(o, "--markov") == 0) {
            if (sscanf(v, "%lf:%lf:%lf", &p_slow, &p_fast, &burst) != 3)
                die("--markov P_SLOW:P_FAST:MS");
            burst /= 1e3;
            markov = 1;
        } else if (strcmp(o, "--target") == 0)
            target = strtod(v, NULL);
        else if (strcmp(o, "--target-loss") == 0)
            target_loss = strtod(v, NULL);
        else if (strcmp(o, "--max-time") == 0)
            max_time = strtod(v, NULL);
        else if (strcmp(o, "--max-iter") == 0)
            max_iter = strtol(v, NULL, 10);
        else
            die("unknown option");
    }
    if (nweights < 0 || (nweights > 0 && nweights != size))
        die("--weights: one per rank");

    struct bench_problem bp;
    if (bench_problem_load(&bp, path, kv, nkv) < 0)
        die("cannot load the problem");
    const double *w = nweights ? weights : NULL;
    void *part = bench_problem_open(&bp, seed, rank + 1, rank, size, w);
    if (!part)
        die("cannot open the problem");
    const struct aia_problem_plugin *p = bp.p;
    size_t n = p->dim(part);
    double *x = calloc(n, sizeof *x), *g = calloc(n + 1, sizeof *g),
           *sum = calloc(n + 1, sizeof *sum), fopt = 0, solve = 0;
    struct aia_error err;
    if (!x || !g || !sum)
        die("out of memory");
    /* Rank 0 times the direct solve from a fresh coordinator view, which
     * then gives the loss. */
    void *all = NULL;
    if (rank == 0) {
        double t = bench_now();
        if (!(all = bench_problem_open(&bp, seed, 0, AIA_PART_ALL, size, w)))
            die("cannot open the problem");
        if (!p->optimum || p->optimum(all, x, &fopt, &err) < 0)
            die("the problem gives no optimum");
        solve = bench_now() - t;
    }
    memset(x, 0, n * sizeof *x);
    double rows = (double)p->rows(part), total;
    MPI_Allreduce(&rows, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double delay = work + (rank + 1 == slow_rank ? late : 0);
    double loss = 0, goal = target_loss >= 0
                                ? target_loss
                                : fopt + target * (fopt < 0 ? -fopt : fopt);
    long it = 0;
    int reached = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now(), elapsed = 0;
    int stop = 0;
    double tta = 0;
    long tta_it = 0;
    struct aia_rng rng;
    int slow = 0;
    aia_rng_seed(&rng, seed, 0x4d41524b00000000ull + (uint64_t)rank);
    for (;;) {
        if (p->gradient(part, x, NULL, 0, g, &err) < 0)
            die(err.text);
        if (markov) {
            double u = aia_rng_uniform(&rng);
            slow = slow ? u >= p_fast : u < p_slow;
        }
        bench_sleep(delay + (slow ? burst : 0));
        for (size_t j = 0; j < n; j++)
            g[j] *= rows;
        /* rank 0 alone decides when to stop, and says so in the last
         * slot, so that rounding can never make the ranks disagree; the
         * iteration that carries the decision is not counted */
        g[n] = rank == 0 ? stop : 0;
        MPI_Allreduce(g, sum, (int)n + 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sum[n] != 0)
            break;
        for (size_t j = 0; j < n; j++)
            x[j] -= step * (sum[j] / total);
        it++;
        if (rank != 0)
            continue;
        if (p->loss(all, x, &loss, &err) < 0)
            die(err.text);
        elapsed = bench_now() - t0;
        if (loss <= goal && !reached) {
            reached = 1;
            tta = elapsed;
            tta_it = it;
        }
        if ((reached && !keep_going) || it >= max_iter || elapsed >= max_time)
            stop = 1;
    }
    if (rank == 0)
        printf(
            "iterations=%ld time=%.6f reached=%d tta=%.6f tta_iterations=%ld "
            "loss=%.10g optimum=%.10g solve=%.6f\n",
            it, elapsed, reached, reached ? tta : elapsed,
            reached ? tta_it : it, loss, fopt, solve);
    p->close(part);
    if (all)
        p->close(all);
    bench_problem_unload(&bp);
    free(x);
    free(g);
    free(sum);
    free(kv);
    MPI_Finalize();
    return 0;
}
