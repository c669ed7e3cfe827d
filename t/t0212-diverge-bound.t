#!/bin/sh
# A data-file job with a step given: the coordinator holds no rows, so
# the workers find L at start (as step: auto has them do), and a step 10
# times the stable bound ends with exit 1 and one line naming 2/L.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

run() {
    aia_mpirun "$@" >out.txt 2>err.txt
    rc=$?
    out=$(cat out.txt)
    err=$(cat err.txt)
}
# count of lines of stderr that carry aiarun's prefix
said() { printf '%s\n' "$err" | grep -c '^aiarun\['; }

cp -r "$top_srcdir/etc/data" . 2>/dev/null
chmod -R u+w data
cat > lr.yaml <<'YAML'
algorithm: {plugin: gd}
problem:
  plugin: lrmse
  data: {path: data/lr.csv, target: y}
stop: {iterations: 3000}
YAML

# same_number A B : A and B agree to 5 significant digits
same_number() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && b != "" && d <= 1e-5 * (a < 0 ? -a : a)) }'
}
# named : the bound the last run's message names.  The first such line:
# under load an async run's iterate can overflow before rank 0's loss
# check sees it, and then the worker whose answer is not finite names
# the bound too (its own line, before mpirun ends the job).
named() {
    printf '%s\n' "$err" | sed -n 's/.*the stable bound of gradient descent is 2\/L = \([0-9.e+-]*\)[:,].*/\1/p' | head -n 1
}
# smoothness : L in the last run's report
smoothness() {
    printf '%s\n' "$out" | sed -n 's/^  smoothness L = \([^,]*\),.*/\1/p'
}

for np in 3 5; do
    # L as step: auto finds it, the row-weighted mean of the workers' own
    # (so it depends on the partition)
    run $np -o stop.iterations=1 lr.yaml
    L=$(smoothness)
    ok $([ -n "$L" ] && echo 0 || echo 1) "$np ranks, step auto: the report names L ($L)"
    bound=$(awk "BEGIN { printf \"%.6g\", 2 / $L }")
    run $np -o "algorithm.step=$(awk "BEGIN { print 10 * $bound }")" lr.yaml
    is "$rc" 1 "gd, $np ranks, a step 10x the stable bound: exits 1"
    is "$(said)" 1 "with one line"
    like "$err" "the method diverged at iteration [1-9][0-9]?: loss [0-9.e+]* .*with step [0-9.e+]* \(given step" \
        "within a few iterations, naming the loss and the step given"
    ok $(same_number "$(named)" "$bound" && echo 0 || echo 1) \
        "and the stable bound 2/L = $(named), L from the workers ($bound)"
done

# async sgd, every answer an iteration, its step given
run 5 -o algorithm.plugin=sgd -o pool.mode=async \
    -o "algorithm.step=$(awk "BEGIN { print 10 * $bound }")" lr.yaml
is "$rc" 1 "async sgd, a step 10x the bound: exits 1"
ok $(same_number "$(named)" "$bound" && echo 0 || echo 1) \
    "naming 2/L = $(named)"

# the report shows L with the step given (5 ranks, as the last L), and
# what auto would take
run 5 -o algorithm.step=0.01 -o stop.iterations=5 lr.yaml
is "$rc" 0 "a stable step given: exits 0"
like "$out" "smoothness L = $L," "the report names the workers' L"
like "$out" "step       0.01: given step; auto would be " "and what auto would take"

# stop.diverge: 0 turns the detector off, and with it the workers' L
run 5 -o algorithm.step=0.01 -o stop.iterations=5 -o stop.diverge=0 lr.yaml
is "$rc" 0 "stop.diverge: 0: exits 0"
unlike "$out" "smoothness" "and L is not computed"
done_testing
