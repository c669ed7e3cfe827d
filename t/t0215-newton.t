#!/bin/sh
# Second-order methods: newton and lbfgs reach the direct solve of lrmse
# to 1e-10 relative, with every worker and with a round that ends at
# nwait of them beside a slow one; a checkpointed and resumed run ends at
# the uninterrupted run's iterate; logreg and softmax on a data file
# have a gap again (the reference optimum by Newton-CG over the workers'
# rows, under mpirun and in the simulator); newton with a problem that
# gives no Hessian-vector product is refused at --check, saying why.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > lsq.yaml <<'YAML'
seed: 4
algorithm: {plugin: newton}
problem: {plugin: lrmse, rows: 2000, cols: 12, condition: 100}
stop: {gap: 1e-10, iterations: 2000, time: 100}
YAML
slow="-o stragglers.fixed.ranks=[3] -o stragglers.fixed.delay_ms=20 -o stop.iterations=100000000"
for alg in newton lbfgs; do
    run 5 -o algorithm.plugin=$alg lsq.yaml
    is "$rc" 0 "$alg on lrmse: exits 0"
    is "$(field stop "$out")" gap \
        "$alg: reaches the direct solve to 1e-10 ($(field gap "$out") in $(field iterations "$out") rounds)"
    # a request waits for the slow worker while the rounds of the fast
    # ones go by: no bound on the rounds, only on the time
    run 5 -o algorithm.plugin=$alg -o pool.wait.nwait=2 $slow lsq.yaml
    is "$(field stop "$out")" gap \
        "$alg: also when a round ends at 2 of 4 workers beside a slow one ($(field gap "$out"), $(field late "$out") late)"
done
run 5 -o pool.wait.nwait=2 -o algorithm.hessian=all $slow lsq.yaml
is "$(field stop "$out")" gap "newton, hessian: all, beside a slow worker"

run 5 -o algorithm.warm=false lsq.yaml
is "$(field stop "$out")" gap "newton, warm: false (CG from 0 each step) ($(field iterations "$out") rounds)"

# gd needs far more rounds for the same gap: the point of the methods
run 5 -o algorithm.plugin=gd -o stop.iterations=300 lsq.yaml
test_expect "gd is still short of it after 300 rounds ($(field gap "$out"))" \
    '[ "$(field stop "$out")" = iterations ]'

# --- checkpoint and resume, both methods
for alg in newton lbfgs; do
    cat > ck.yaml <<YAML
seed: 4
algorithm: {plugin: $alg}
problem: {plugin: lrmse, rows: 2000, cols: 12, condition: 1000}
stop: {iterations: 40}
output: {final: x.txt, checkpoint: ck.bin, checkpoint_every: 5}
YAML
    rm -f ck.bin
    run 5 -o output.checkpoint= -o output.final=ref.txt ck.yaml
    is "$rc" 0 "$alg: an uninterrupted run of 40 rounds"
    run 5 -o stop.iterations=17 ck.yaml
    is "$rc" 0 "$alg: a run stopped at round 17"
    run 5 --resume ck.yaml
    is "$rc" 0 "$alg: --resume runs on"
    expect_ok "$alg: and ends at the uninterrupted run's iterate" same_file x.txt ref.txt
done

# --- logreg on a data file: the gap from the reference optimum
cp "$top_srcdir/etc/data/logreg.csv" .
cat > lr.yaml <<'YAML'
seed: 3
algorithm: {plugin: newton}
problem:
  plugin: logreg
  l2: 0.001
  data: {path: logreg.csv, target: label}
pool: {wait: {nwait: 3}}
stop: {gap: 1e-9, iterations: 100000000, time: 100}
YAML
run 5 -o output.history=lr.csv lr.yaml
is "$rc" 0 "logreg on a data file with stop.gap: exits 0"
expect_ok "the history's suboptimality column is filled, and ends at 0 to rounding" \
    awk -F, 'NR == 1 { ok = $5 == "suboptimality" } NR > 1 && $5 !~ /^-?[0-9]/ { ok = 0 }
        NR > 1 { last = $5 } END { exit !(ok && NR > 2 && last < 1e-9) }' lr.csv
is "$(field stop "$out")" gap "newton reaches the reference optimum's loss to 1e-9 ($(field gap "$out"))"
like "$out" "
  optimum    found by Newton-CG on the workers' rows: [0-9]+ steps, [0-9]+ Hessian-vector products, .grad. [0-9.e-]+ <= " \
    "the report says how the optimum was found, and to what tolerance"
run 5 -o algorithm.plugin=lbfgs lr.yaml
is "$(field stop "$out")" gap "lbfgs too ($(field gap "$out"), $(field iterations "$out") rounds)"

# --- softmax, which has no optimum of its own: the same, under mpirun
# and in the simulator
awk 'BEGIN { srand(7); print "f1,f2,f3,label"
    for (i = 0; i < 300; i++) { c = i % 3
        printf "%.6f,%.6f,%.6f,%d\n", rand() + (c == 0), rand() + (c == 1),
            rand() + (c == 2) * 0.5, c } }' >sm.csv
cat > sm.yaml <<'YAML'
seed: 2
algorithm: {plugin: newton}
problem:
  plugin: softmax
  classes: 3
  l2: 0.01
  data: {path: sm.csv, target: label}
stop: {gap: 1e-9, iterations: 100000000, time: 100}
YAML
run 5 sm.yaml
is "$(field stop "$out")" gap "softmax on a data file: newton reaches the reference optimum's loss ($(field gap "$out"))"
like "$out" "optimum    found by Newton-CG on the workers' rows" "found by Newton-CG"
sim --simulate 4 -o algorithm.plugin=lbfgs sm.yaml
is "$(field stop "$out")" gap "and lbfgs in the simulator, whose workers find it too ($(field gap "$out"))"
like "$out" "optimum    found by Newton-CG on the workers' rows" "saying so"

# --- a problem without hvp: refused before the run
cat > pca.yaml <<'YAML'
algorithm: {plugin: newton}
problem: {plugin: pca, rows: 100, cols: 5}
stop: {iterations: 5}
YAML
"$AIARUN" --check pca.yaml >out.txt 2>err.txt
is "$?" 2 "newton with pca: --check refuses it (exit 2)"
like "$(cat err.txt)" "pca.yaml:[0-9]+:[0-9]+: algorithm: 'newton' asks the workers for Hessian-vector products, and problem 'pca' gives none" \
    "naming the file, the line and why"
done_testing
