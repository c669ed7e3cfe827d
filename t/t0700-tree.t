#!/bin/sh
# Tree aggregation: the query goes down a tree of workers and the answers
# come up it combined, so the coordinator receives arity answers a round;
# the iterates are the star's to rounding.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 4500, cols: 12}
pool: {topology: tree}
stop: {iterations: 10}
output: {final: x.txt, workers: w.csv}
YAML
# largest relative difference between two final iterates
differ() {
    paste "$1" "$2" | awk 'BEGIN { m = 0 }
        { d = $1 - $2; if (d < 0) d = -d; a = $2 < 0 ? -$2 : $2;
          if (a > 0 && d / a > m) m = d / a } END { printf "%.3g\n", m }'
}

for alg in "gd, step: 0.5" "average, step: 0.5" "average, step: 0.5, memory: delta"; do
    name=${alg%%,*}
    case $alg in *delta*) name="$name delta" ;; esac
    run 10 -o "algorithm={plugin: $alg}" -o pool.topology=star -o output.final=star.txt job.yaml
    for arity in 2 3 8; do
        run 10 -o "algorithm={plugin: $alg}" -o pool.arity=$arity job.yaml
        d=$(differ x.txt star.txt)
        test_expect "$name, 9 workers, arity $arity: the star's iterate to rounding ($d)" \
            '[ "$rc" = 0 ] && float_le "$d" 1e-13'
        children=$(( arity < 9 ? arity : 9 ))
        is "$(field answers "$out")" $((10 * children)) \
            "$name, arity $arity: the coordinator receives $children answers a round"
        is "$(sed 1d w.csv | wc -l)" "$children" \
            "$name, arity $arity: its table has a row per child"
    done
done
like "$out" "a tree of arity 8 \\(the table's rows are the coordinator's children" \
    "the report says it is a tree"

# uneven rows from a data file, delivered by scatter: still the star's
cat > data.yaml <<YAML
algorithm: {plugin: gd, step: 0.5}
problem:
  plugin: lrmse
  weights: [5, 1, 1, 3, 1, 2, 1, 1, 4]
  data: {path: $top_srcdir/etc/data/lr.csv, delivery: scatter}
pool: {topology: tree, arity: 3}
stop: {iterations: 8}
output: {final: x.txt}
YAML
run 10 data.yaml
run 10 -o pool.topology=star -o output.final=star.txt data.yaml
d=$(differ x.txt star.txt)
expect_ok "uneven rows from a file: the star's iterate too ($d)" \
    float_le "$d" 1e-13

# the time stop in the middle of a round, with stragglers
run 10 -o stop.iterations=0 -o stop.time=1 -o stragglers.work_ms=30 -o output.final= job.yaml
is "$(field stop "$out")" time "a time stop in the middle of a round ends the run"
is "$rc" 0 "cleanly"

# a worker that hangs: the run ends, in bounded time
start=$(date +%s)
run 10 -o stop.iterations=0 -o stop.time=1 -o pool.shutdown_timeout=2 \
    -o 'stragglers.hang={ranks: [5], after: 3}' -o output.final= job.yaml
took=$(( $(date +%s) - start ))
like "$err" "did not stop within 2 s \\(pool.shutdown_timeout\\); the run ends without them" \
    "a hung worker in the tree: the coordinator gives up on its subtree"
expect_ok "in bounded time ($took s)" [ "$took" -lt 30 ]
like "$out" "stop=time " "and the summary is printed"

run 10 -o 'algorithm={plugin: sgd}' job.yaml
like "$err" "pool.topology: tree: algorithm 'sgd' does not declare its answers combinable" \
    "an algorithm whose answers do not combine is refused"
out=$("$AIARUN" --check -o pool.mode=async job.yaml 2>&1)
like "$out" "pool.topology: a tree waits for every worker each round: it takes no async mode" \
    "async mode is refused"
out=$("$AIARUN" --check -o pool.wait.nwait=2 job.yaml 2>&1); rc=$?
is "$rc" 2 "so is a wait for fewer workers"
like "$out" "command line \\(-o\\): pool.wait.nwait: pool.topology: a tree waits for every worker each round" \
    "naming the key that contradicts the tree"
out=$("$AIARUN" --check -o pool.wait.timeout_ms=50 job.yaml 2>&1); rc=$?
like "$out" "pool.wait.timeout_ms: pool.topology: a tree waits" "and a timeout"
out=$("$AIARUN" --check -o 'pool.wait={plugin: ./mywait.so}' job.yaml 2>&1); rc=$?
like "$out" "pool.wait.plugin: pool.topology: a tree waits" "and another wait plugin"
# a wait that says what the tree does is kept (it was refused once)
for wait in "{nwait: 0}" "{all: true, staleness: 0}" "{plugin: standard, timeout_ms: 0}"; do
    out=$("$AIARUN" --check -o "pool.wait=$wait" job.yaml 2>&1); rc=$?
    is "$rc" 0 "a tree with pool.wait: $wait (every worker) checks"
done
run 5 -o 'pool.wait={nwait: 0}' job.yaml
is "$rc" 0 "and runs"
done_testing
