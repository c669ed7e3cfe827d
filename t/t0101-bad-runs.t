#!/bin/sh
# Bad jobs under mpirun: one clear message, the same non-zero status from
# every rank, and no hang.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

# count of lines of stderr that carry aiarun's prefix
said() { printf '%s\n' "$err" | grep -c '^aiarun\['; }

cat > typo.yaml <<'YAML'
algorithm: {plugin: sgd, stpe: 1}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
run 5 typo.yaml
is "$rc" 2 "a typo'd key exits 2 under mpirun"
like "$err" "aiarun\[0\]: typo.yaml:1:26: algorithm.stpe: unknown key" \
    "rank 0 names file, line and key"
is "$(said)" 1 "once, not once per rank"

# sgd's momentum once a round needs a momentum; an unknown rule is no rule
cat > every.yaml <<'YAML'
algorithm: {plugin: sgd, step: 0.1, momentum_every: round}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
run 5 every.yaml
is "$rc" 2 "momentum_every: round without momentum exits 2"
like "$err" "aiarun\[0\]: every.yaml:1:1: algorithm: momentum_every: round needs a momentum above 0" \
    "naming the file, the line and the key"
expect_status 2 "momentum_every: often is refused by --check" \
    "$AIARUN" --check -o algorithm.momentum=0.5 -o algorithm.momentum_every=often every.yaml
run 5 -o algorithm.momentum=0.5 -o algorithm.momentum_every=often every.yaml
like "$err" "algorithm.momentum_every: 'often' is not one of answer\|round" \
    "and named with its choices"

cat > missing.yaml <<'YAML'
algorithm: {plugin: nosuch}
problem: {plugin: lrmse}
stop: {iterations: 10}
YAML
run 3 missing.yaml
is "$rc" 2 "a missing plugin exits 2"
like "$err" "nosuch: algorithm plugin not found" "and says so"
like "$err" "\(2 more ranks failed too\)" "once, counting the other ranks"

run 5 -o pool.wait.nwait=7 "$top_srcdir/etc/sgd-lrmse.yaml"
is "$rc" 2 "nwait above the pool size exits 2"
like "$err" "sgd-lrmse.yaml:19:3: pool.wait: nwait: 7 exceeds the 4 workers" \
    "naming the line of the wait section"

run 3 -o 'pool.workers=[1, 5]' "$top_srcdir/etc/sgd-lrmse.yaml"
is "$rc" 2 "a pool rank outside the run exits 2"
like "$err" "pool.workers: rank 5 is not a worker rank of this run \(1 to 2\)" \
    "and names the rank"

run 3 -o 'problem.weights=[1, 2, 3]' "$top_srcdir/etc/sgd-lrmse.yaml"
like "$err" "problem.weights: 3 weights for 2 workers" \
    "weights must match the pool"

run 3 -o algorithm.step=50 -o output.history=h.csv "$top_srcdir/etc/sgd-lrmse.yaml"
is "$rc" 1 "a diverging run exits 1"
like "$err" "the method diverged at iteration [0-9]+: (loss|an answer)" \
    "and says it diverged"
expect_ok "the history written so far is kept" [ -s h.csv ]

# A step 10 times the stable bound 2/L, with no history and no target:
# the query's change asks for the loss, which is finite but far past
# stop.diverge times the first one, a few iterations in.
cat > blow.yaml <<'YAML'
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 2000, cols: 20, condition: 100}
stop: {iterations: 1000}
YAML
run 3 blow.yaml
L=$(printf '%s\n' "$out" | sed -n 's/^  smoothness L = \([^,]*\),.*/\1/p')
expect_ok "the report names L ($L)" [ -n "$L" ]
like "$out" "step       .*: auto: 1/L, gradient descent's step" \
    "and the step auto chose"
run 3 -o "algorithm.step=$(awk "BEGIN { print 20 / $L }")" blow.yaml
is "$rc" 1 "a step 10x the stable bound exits 1"
is "$(said)" 1 "with one line"
like "$err" "the method diverged at iteration [1-9]: loss [0-9.e+]* " \
    "within a few iterations, naming the finite loss"
like "$err" "the stable bound of gradient descent is 2/L = " "and the bound"
like "$out" "stop=error iterations=[1-9] " "the summary is kept"
# async sgd, 4 workers, 20 times the step auto would take: every answer
# is an iteration, so a few rounds of answers
run 5 -o algorithm.plugin=sgd -o pool.mode=async \
    -o "algorithm.step=$(awk "BEGIN { print 20 / (8 * $L) }")" blow.yaml
is "$rc" 1 "async sgd at 20x its auto step exits 1"
like "$err" "the method diverged at iteration [1-9][0-9]?: loss " \
    "within a few rounds of answers"
like "$err" "with step [0-9.e-]* \(given step\); the stable bound of gradient descent is 2/L = " \
    "naming the step and the bound"
run 3 -o "algorithm.step=$(awk "BEGIN { print 20 / $L }")" \
    -o stop.diverge=0 -o stop.iterations=60 blow.yaml
is "$rc" 0 "stop.diverge: 0 lets a finite blow-up run on"
# a query of 70,000 values: the detector watches a sample of each change
# (record_change_watch), and still catches the blow-up within a few
# iterations (with stop.diverge 0 this run goes on for about 300, until
# an answer is infinite)
printf 'algorithm: {plugin: gd}\nproblem: {plugin: lrmse, rows: 8, cols: 70000}\nstop: {iterations: 1000}\n' >wide.yaml
run 3 -o stop.iterations=1 -o algorithm.step=auto wide.yaml
L=$(printf '%s\n' "$out" | sed -n 's/^  smoothness L = \([^,]*\),.*/\1/p')
run 3 -o "algorithm.step=$(awk "BEGIN { print 20 / $L }")" wide.yaml
is "$rc" 1 "70,000 values, a step 10x the stable bound: exits 1"
like "$err" "the method diverged at iteration [1-9]: loss [0-9.e+]* " \
    "within a few iterations, the change watched on a sample"

# The same with rows from a file, whose loss the workers compute: it goes
# through the same detector, so a finite blow-up stops early, named.
cp -r "$top_srcdir/etc/data" . 2>/dev/null; chmod -R u+w data
printf 'algorithm: {plugin: gd, step: 50}\nproblem:\n  plugin: lrmse\n  data: {path: data/lr.csv, target: y}\nstop: {iterations: 3000}\noutput: {history: hd.csv}\n' >blowdata.yaml
run 3 blowdata.yaml
is "$rc" 1 "a data-file job whose step blows up exits 1"
like "$err" "the method diverged at iteration [1-9][0-9]?: loss [0-9.e+]* " \
    "within a few iterations, naming the finite loss the workers computed"
like "$err" "with step 50 \(given step[;)]" "naming the step"

cat > few.yaml <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: lrmse, rows: 2}
stop: {iterations: 10}
YAML
run 4 few.yaml
expect_ok "a worker without rows exits 2" [ "$rc" = 2 ]
like "$err" "problem.rows: worker [0-9] \\(rank [0-9]\\) holds none of the problem.s rows" "and says which, on problem.rows"
done_testing
