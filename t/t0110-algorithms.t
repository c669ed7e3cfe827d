#!/bin/sh
# End to end under mpirun: the gd and average example jobs converge with 5
# ranks, also with uneven parts, delta memory and stale answers, and a
# bad average weights list ends the job with one clear message.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# converged WHAT BOUND : the last run exited 0 with a gap of at most BOUND
converged() {
    is "$rc" 0 "$1: exits 0"
    gap=$(field gap "$out")
    expect_ok "$1: the final loss is within $2 of the optimum (gap ${gap:-none})" \
        float_le "${gap:-1}" "$2"
}

for alg in gd average; do
    example="$top_srcdir/etc/$alg-lrmse.yaml"
    rm -f "$alg-lrmse.csv"
    run 5 "$example"
    converged "$alg example" 1e-3
    is "$(field iterations "$out")" 100 "$alg example: stops after 100 iterations"
    is "$(noprogress "$err")" "" "$alg example: nothing on stderr but progress"
    # over the history's 11 rows (iterations 0, 10 ... 100): a history of
    # none would leave nothing to rise
    expect_ok "$alg example: the loss never rises with every worker fresh" \
        awk -F, 'NR > 2 && $4 > prev + 1e-12 { bad = 1 } NR > 1 { prev = $4 }
        END { exit bad || NR != 12 }' "$alg-lrmse.csv"

    # Weighting by rows makes the uneven parts add up to the whole problem.
    run 5 -o 'problem.weights=[1, 2, 3, 4]' -o output.history= "$example"
    converged "$alg with parts of 10%, 20%, 30% and 40% of the rows" 1e-3
done

run 5 -o algorithm.memory=delta -o 'problem.weights=[1, 2, 3, 4]' \
    -o output.history= "$top_srcdir/etc/average-lrmse.yaml"
converged "average with delta memory" 1e-3

# Two of four answers end a round: the others arrive stale.  How stale
# depends on the machine's load, hence a smaller step, more rounds and the
# 1% bound of the stale sgd run.
# With nwait 2 the others' latest gradients or models stand in, however
# old: a worker starved of CPU on a loaded machine holds the iterate back
# while it stays silent.  So run to an accuracy target, with time to spare.
for alg in gd average; do
    run 5 -o pool.wait.nwait=2 -o algorithm.step=0.2 -o stop.iterations=0 \
        -o stop.gap=1e-3 -o stop.time=60 -o output.history= \
        "$top_srcdir/etc/$alg-lrmse.yaml"
    converged "$alg with nwait 2 of 4" 1e-3
    is "$(field stop "$out")" gap "$alg with nwait 2 of 4: reaches the gap target"
done

run 5 -o algorithm.local_steps=5 -o algorithm.step=0.2 -o output.history= \
    "$top_srcdir/etc/average-lrmse.yaml"
converged "average with 5 local steps" 1e-3

run 5 -o 'algorithm.weights=[1, 2, 3]' -o output.history= \
    "$top_srcdir/etc/average-lrmse.yaml"
is "$rc" 2 "average weights for 3 of 4 workers: exits 2"
like "$err" "algorithm: weights: 3 weights for a pool of 4 workers" \
    "and says why"
done_testing
