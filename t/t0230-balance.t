#!/bin/sh
# DSAG's load balancer (sag's balance: on) and stragglers.slow: under
# --simulate, with a quarter of the workers 3x slower per row, a balanced
# run reaches the gap in fewer virtual seconds than an unbalanced one; the
# plans are logged (-v) and the final assignment reported; the same seed
# gives the same run; a balanced run checkpoints and resumes under mpirun;
# bad parameters are refused.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 4
algorithm: {plugin: sag, variant: dsag, balance: on}
problem: {plugin: logreg, rows: 8000, cols: 10, l2: 0.01}
pool: {wait: {nwait: 0}}
stragglers:
  slow: {ranks: [1, 2], factor: [3]}
stop: {gap: 1e-6, iterations: 3000}
YAML

# --- stragglers.slow under --simulate: compute times multiplied
cat > slow.yaml <<'YAML'
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 2000, cols: 5}
stop: {iterations: 10}
simulate: {row_us: 1, latency_us: 0, coordinator: none}
YAML
sim --simulate 2 slow.yaml
is "$(field time "$out")" 0.010000 "10 rounds of 1,000 rows at 1 us a row: 10 ms"
sim --simulate 2 -o 'stragglers.slow.ranks=[2]' -o 'stragglers.slow.factor=[3]' slow.yaml
is "$(field time "$out")" 0.030000 "rank 2 3x slower per row: 30 ms"
sim --simulate 2 -o 'stragglers.slow.ranks=[1,2]' -o 'stragglers.slow.factor=[2,4]' slow.yaml
is "$(field time "$out")" 0.040000 "one factor per rank: the slower one's 4x, 40 ms"

# --- the ordering, in virtual time
sim --simulate 8 -o algorithm.balance=off job.yaml
is "$rc" 0 "unbalanced, 2 of 8 workers 3x slower: runs"
is "$(field stop "$out")" gap "and reaches the gap"
t_off=$(field time "$out")
sim -v --simulate 8 job.yaml
is "$rc" 0 "balanced: runs"
is "$(field stop "$out")" gap "and reaches the gap"
t_on=$(field time "$out")
expect_ok "in fewer virtual seconds ($t_on against $t_off)" \
    awk -v a="$t_on" -v b="$t_off" 'BEGIN { exit !(a * 1.3 < b) }'
like "$err" "aiarun\\[0\\]: balance: plan 1: predicted time per answer [0-9.e-]+ s -> [0-9.e-]+ s \\(x0\\.3[0-9]*\\); sub-partitions of rank 1: 1->3 \\(0 ms \\+ 3 us a row\\), 2: 1->3 \\(0 ms \\+ 3 us a row\\)" \
    "-v logs the plan: which ranks, from what to what, their fits, the predicted times"
like "$out" "
  balance    1 plans taken; sub-partitions 1: ranks 3-8; 3: ranks 1-2" \
    "the report gives the final assignment"
like "$out" "stragglers rank 1 x3 per row; rank 2 x3 per row;" \
    "and the slow workers"
first=$(sed -n '/^stop=/p' out.txt)
sim --simulate 8 job.yaml
same "$(sed -n '/^stop=/p' out.txt)" "$first" \
    "the same seed gives the same run, bit for bit"

# homogeneous workers: no plan, the same iterations as unbalanced
sim --simulate 8 -o stragglers.slow.factor=[1] job.yaml
it_on=$(field iterations "$out")
like "$out" "balance    0 plans taken" "equal workers: no plan is taken"
sim --simulate 8 -o stragglers.slow.factor=[1] -o algorithm.balance=off job.yaml
same "$it_on" "$(field iterations "$out")" "and the run is the unbalanced one's"

# async mode and sag that drops stale answers both balance
sed 's/^pool: .*/pool: {mode: async}/' job.yaml > async.yaml
sim --simulate 8 -o stop.iterations=40000 async.yaml
expect_ok "async dsag, balanced: ends within the gap ($(field gap "$out"))" \
    awk -v g="$(field gap "$out")" 'BEGIN { exit !(g != "" && g < 1e-6) }'
sim --simulate 8 -o algorithm.variant=sag job.yaml
is "$(field stop "$out")" gap "sag, balanced: reaches the gap"

# --- checkpoint and resume under mpirun: the assignment and the segments
cat > ck.yaml <<'YAML'
seed: 4
algorithm: {plugin: sag, variant: dsag, balance: on, balance_every: 5}
problem: {plugin: logreg, rows: 40000, cols: 50, l2: 0.01}
pool: {wait: {nwait: 0}}
stragglers:
  slow: {ranks: [1], factor: [4]}
stop: {iterations: 60}
output: {checkpoint: ck.bin, checkpoint_every: 10}
YAML
run 3 -o stop.iterations=30 ck.yaml
is "$rc" 0 "a balanced run under mpirun, stopped at iteration 30"
like "$out" "balance    [1-9][0-9]* plans taken; sub-partitions 1: ranks 2; ([2-9]|[1-9][0-9]+): ranks 1" \
    "gives its slow rank more sub-partitions"
plans=$(printf '%s\n' "$out" | sed -n 's/^  balance    \([0-9]*\) plans taken.*/\1/p')
run 3 --resume ck.yaml
is "$rc" 0 "--resume runs on"
is "$(field iterations "$out")" 60 "to the job's limit"
now=$(printf '%s\n' "$out" | sed -n 's/^  balance    \([0-9]*\) plans taken.*/\1/p')
expect_ok "with the plans of before, restored ($plans, now $now)" \
    test "${now:-0}" -ge "${plans:-1}"
sim --simulate 2 -o stop.iterations=30 -o output.checkpoint= ck.yaml
is "$rc" 0 "the job runs under --simulate too"

# --- simulate.dsag presets: harsh is etc/dsag-sim.yaml's values
cat > preset.yaml <<'YAML'
seed: 12
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 20000, cols: 20}
pool: {wait: {nwait: 0}}
simulate:
  compute: dsag
  dsag: {preset: harsh}
stop: {iterations: 40}
YAML
sim --simulate 20 preset.yaml
harsh=$(field time "$out")
sim --simulate 20 -o simulate.dsag.preset=none -o simulate.dsag.compute_ms=20 \
    -o simulate.dsag.compute_spread=0.3 -o simulate.dsag.slow_factor=5 \
    -o simulate.dsag.p_slow=0.02 -o simulate.dsag.p_fast=0.1 preset.yaml
is "$(field time "$out")" "$harsh" "preset: harsh is compute_ms 20, spread 0.3, 5x bursts"
sim --simulate 20 -o simulate.dsag.preset=paper preset.yaml
paper=$(field time "$out")
expect_ok "preset: paper (1.103x bursts) is milder: $paper s against $harsh" \
    awk -v a="$paper" -v b="$harsh" 'BEGIN { exit !(a < b) }'
sim --simulate 20 -o simulate.dsag.preset=paper -o simulate.dsag.slow_factor=5 \
    -o simulate.dsag.compute_spread=0.3 preset.yaml
is "$(field time "$out")" "$harsh" "a key given wins over the preset's"
sim --simulate 20 -o simulate.dsag.preset=none preset.yaml
is "$rc" 2 "no preset and no compute_ms: refused"
like "$err" "preset.yaml:7:3: simulate.dsag: give compute_ms, or a preset" \
    "naming the file, line and key"

# --- refusals
run 3 -o algorithm.balance_max=0 ck.yaml
is "$rc" 2 "balance_max 0: refused"
sim --simulate 2 -o algorithm.subpartitions=4 -o algorithm.balance_max=2 ck.yaml
is "$rc" 2 "balance_max below subpartitions: refused"
like "$err" "balance_max: 2 is below subpartitions \\(4\\)" "saying why"
sed 's/balance: on/balance: maybe/' ck.yaml > bad.yaml
sim --simulate 2 bad.yaml
is "$rc" 2 "balance: maybe: refused"
like "$err" "bad.yaml:2:.*balance" "naming the file, line and key"
sim --simulate 2 -o stragglers.slow.factor=[0.5] ck.yaml
is "$rc" 2 "a factor below 1: refused"
like "$err" "stragglers.slow.factor: must be between 1 and" "naming the key"
sim --simulate 2 -o stragglers.slow.factor=[2,3,4] ck.yaml
is "$rc" 2 "three factors for one rank: refused"
like "$err" "stragglers.slow.factor: give one factor, or one per rank \\(1\\)" \
    "saying what it takes"
sim --simulate 2 -o stragglers.slow.ranks=[7] ck.yaml
is "$rc" 2 "a slow rank outside the pool: refused"
like "$err" "stragglers.slow.ranks: rank 7 is not a worker of the pool" \
    "naming it"

done_testing
