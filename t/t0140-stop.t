#!/bin/sh
# Stop conditions: each one ends the run where it should, says so in the
# summary, and the history shows it.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
example="$top_srcdir/etc/sgd-lrmse.yaml"

# column NAME FILE: the values of a named column of a CSV file
column() {
    awk -F, -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
        { print $c }' "$2"
}
common="-o output.history=h.csv -o output.every=1 -o stop.iterations=100000 -o stop.time=60"

run 5 $common -o stop.epochs=37 "$example"
is "$(field stop "$out")" epochs "stop.epochs: the reason is epochs"
is "$(field epochs "$out")" 37 "after 37 epochs"

run 5 $common -o algorithm.step=0.05 -o stop.precision=1e-6 "$example"
is "$(field stop "$out")" precision "stop.precision: the reason is precision"
last=$(column change h.csv | tail -1)
before=$(column change h.csv | tail -2 | head -1)
test_expect "at the first iteration whose query moved by at most 1e-6 ($before, then $last)" \
    'float_le "$last" 1e-6 && ! float_le "$before" 1e-6'

run 5 $common -o stop.loss=0.0049 "$example"
is "$(field stop "$out")" loss "stop.loss: the reason is loss"
last=$(column loss h.csv | tail -1)
before=$(column loss h.csv | tail -2 | head -1)
test_expect "at the first iteration with a loss of at most 0.0049 ($before, then $last)" \
    'float_le "$last" 0.0049 && ! float_le "$before" 0.0049'

run 5 $common -o stop.gap=1e-4 -o stop.check_every=7 "$example"
is "$(field stop "$out")" gap "stop.gap: the reason is gap"
gap=$(field gap "$out")
expect_ok "within the gap asked for ($gap)" float_le "$gap" 1e-4
it=$(field iterations "$out")
is "$((it % 7))" 0 "checked every 7 iterations (stopped at $it)"

run 5 -o stop.iterations=10 -o stop.gap=1e-12 -o output.history= "$example"
is "$(field stop "$out")" iterations "the first limit reached wins (iterations before gap)"

run 3 -v -o stop.iterations=5 -o output.history= "$example"
like "$err" "stopped: the iteration limit was reached \\(stop.iterations\\)" \
    "-v: the stop rule's text and key on stderr"

cat > sep.yaml <<'YAML'
algorithm: {plugin: sgd}
problem: {plugin: logreg, l2: 0}
stop: {iterations: 100, gap: 1e-3}
YAML
run 3 sep.yaml
is "$rc" 2 "stop.gap on a problem without an optimum: exit 2"
like "$err" "sep.yaml:3:30: stop.gap: problem 'logreg' cannot give its optimum \\(the rows are linearly separable" \
    "and says why, with the place"

# The gap is one formula everywhere: with an optimum of about 0 (noise 0:
# the rows fit exactly, f* ~ 1e-28), the stop rule and the summary both
# measure it against the 1e-9 floor; the summary once divided by f* itself
# and printed gap=1e+15 for a run that stopped within gap 1e-3.
run 5 $common -o problem.noise=0 -o stop.gap=1e-3 "$top_srcdir/etc/gd-lrmse.yaml"
is "$(field stop "$out")" gap "noise 0: the run stops at its gap"
gap=$(field gap "$out")
expect_ok "the summary's gap ($gap) is the one the stop rule met (at most 1e-3)" \
    float_le "$gap" 1e-3

out=$("$AIARUN" --check -o stop.iterations=0 -o stop.time=0 -o stop.gap=0.1 "$example" 2>&1)
like "$out" "a job must end even if its accuracy target is never met" \
    "a target alone is not enough: a job must have a limit"
done_testing
