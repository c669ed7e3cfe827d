#!/bin/sh
# End to end under mpirun: the example job converges with 2 and 5 ranks,
# stale answers are absorbed, the time stop fires, the pool can be a
# subset of the ranks, and every run shuts down cleanly.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
example="$top_srcdir/etc/sgd-lrmse.yaml"

for np in 5 2; do
    rm -f sgd-lrmse.csv
    run $np "$example"
    is "$rc" 0 "$np ranks: the example exits 0"
    is "$(field stop "$out")" iterations "$np ranks: it stops on iterations"
    is "$(field iterations "$out")" 400 "$np ranks: after 400 iterations"
    gap=$(field gap "$out")
    expect_ok "$np ranks: the final loss is within 1% of the optimum (gap $gap)" \
        float_le "${gap:-1}" 0.01
    is "$(noprogress "$err")" "" "$np ranks: nothing on stderr but progress"
done

like "$(echo "$out" | tail -1)" "^stop=iterations " "the summary is the last line of stdout"
busy=$(field coordinator_busy "$out")
expect_ok "rank 0's share of the run on its own work is measured ($busy)" \
    awk -v b="${busy:-x}" 'BEGIN { exit !(b ~ /^[0-9.]+$/ && b >= 0 && b <= 1) }'
like "$(echo "$out" | head -1)" "^aiarun [0-9.]+: .*sgd-lrmse.yaml, 2 ranks: coordinator 0, 1 workers, rounds mode$" \
    "the report starts with what ran"
like "$out" "
  algorithm +sgd [0-9.]+ \(.*sgd.so\): step=0.1 batch=0 " "the algorithm with its parameters"
like "$out" "
  problem +lrmse [0-9.]+ \(.*lrmse.so\): rows=4000 cols=20 noise=0.1 " "the problem with its parameters"
like "$out" "
  data +4000 rows, a model of 20 values, block partition \(generated\)" "the data"
like "$out" "
  wait +standard [0-9.]+ \(built-in\): nwait=0 " "the wait condition"
like "$out" "
  stragglers +none" "the stragglers"
like "$out" "
  stopped +iterations after [0-9.]+ s: 400 iterations, 400 epochs, 400 answers" "why it stopped"
like "$out" "
  loss +0.0048[0-9]+ \(optimum 0.0048[0-9]+, suboptimality [0-9.e+-]+\)" "where it ended"
is "$(echo "$out" | grep -c '^ *rank  *answers  *fresh')" 1 "the per-worker table"
is "$(echo "$out" | sed -n '/^ *rank  *answers/,$p' | wc -l)" 3 "of one row per worker (one worker with 2 ranks)"
is "$(head -1 sgd-lrmse.csv)" "iteration,epoch,time,loss,suboptimality,change" \
    "the history has its header"
is "$(sed 1d sgd-lrmse.csv | wc -l)" 41 \
    "a row every 10 iterations, the first and the last"
is "$(sed -n '2p' sgd-lrmse.csv | cut -d, -f1)" 0 "the first row is iteration 0"
is "$(tail -1 sgd-lrmse.csv | cut -d, -f1)" 400 "the last row is the last iteration"
expect_ok "the loss never rises with fresh full gradients" \
    awk -F, 'NR > 2 && $4 > prev + 1e-12 { bad = 1 } NR > 1 { prev = $4 }
    END { exit bad }' sgd-lrmse.csv
expect_ok "time never goes back" \
    awk -F, 'NR > 1 && $3 < prev { bad = 1 } NR > 1 { prev = $3 }
    END { exit bad }' sgd-lrmse.csv

# Two of four answers end a round: the others arrive stale and are used.
# Equal workers can fall into step, all four answers taken in one wake-up
# and none stale (a loaded machine did this for 1,500 rounds): rank 4
# waits 2 ms more than the others, so its answers come after the round.
run 5 -o pool.wait.nwait=2 -o algorithm.step=0.05 -o stop.iterations=1500 \
    -o 'stragglers.fixed.ranks=[4]' -o stragglers.fixed.delay_ms=2 \
    -o output.history= -o output.workers=w.csv "$example"
is "$rc" 0 "nwait 2 of 4 exits 0"
gap=$(field gap "$out")
expect_ok "with stale answers it still converges (gap $gap)" \
    float_le "${gap:-1}" 0.01
answers=$(field answers "$out")
expect_ok "more answers than two a round are absorbed ($answers for 1500 rounds)" \
    [ "${answers:-0}" -gt 3000 ]
stale=$(awk -F, 'NR > 1 { s += $5 } END { print s + 0 }' w.csv)
expect_ok "some answers are stale ($stale), and they are counted" \
    [ "$stale" -gt 0 ]

# The time limit fires with a huge iteration budget.
run 3 -o stop.iterations=0 -o stop.time=1 -o output.history= "$example"
is "$(field stop "$out")" time "the time stop fires"
t=$(field time "$out")
# never before it; after it by no more than a loaded machine's wake-up,
# far from the iteration budget, which has no end
test_expect "at the time asked for ($t s)" \
    'float_le 1 "$t" && float_le "$t" 5'

# A pool that is a subset of the ranks.
run 4 -o 'pool.workers=[1, 3]' -o stop.iterations=50 -o output.history= \
    -o output.workers=w.csv "$example"
is "$rc" 0 "a pool of ranks 1 and 3 of 4 exits 0"
is "$(field answers "$out")" 100 "two answers a round"
is "$(cut -d, -f1,3 w.csv | sed 1d | tr '\n' ' ')" "1,50 3,50 " \
    "ranks 1 and 3 answered every round; rank 2 is not in the pool"

run 5 -q -o stop.iterations=20 -o output.history= "$example"
test_expect "-q: nothing on stderr" '[ "$rc" = 0 ] && [ -z "$err" ]'
is "$(echo "$out" | wc -l)" 1 "-q: the summary line alone on stdout"

# A coordinator that sets the pace says so: 4 workers of one row each
# send answers of 8 MB in async mode, and rank 0's receives of them
# (the copies, on a node) are its own work, not waiting (0.74-0.78 when
# they were counted as waiting; 0.99 with 4 busy loops beside the run).
cat > big.yaml <<'YAML'
seed: 5
algorithm: {plugin: sgd, step: auto}
problem: {plugin: lrmse, rows: 4, cols: 1000000}
pool: {mode: async}
stop: {iterations: 200}
YAML
run 5 -q big.yaml
is "$rc" 0 "the 8 MB answers run exits 0"
busy=$(field coordinator_busy "$out")
expect_ok "a saturated coordinator is busy (${busy:-no value})" float_le 0.9 "${busy:-0}"
done_testing
