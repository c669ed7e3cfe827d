#!/bin/sh
# simulate.sh - aiarun --simulate at scale: 1,000 workers of lrmse on one
# machine, with the DSAG trace model.  Prints the wall time, events per
# second, the simulator's own time per event and the peak RSS.
#   sh bench/simulate.sh [WORKERS [ITERATIONS]]   (from the build folder)
set -u
: "${AIARUN:=./aiarun}"
export AIARUN_PLUGIN_PATH="${AIARUN_PLUGIN_PATH:-plugins/.libs:problems/.libs}"
n=${1:-1000}
iters=${2:-200}
dir=$(mktemp -d "${TMPDIR:-/tmp}/aiarun-sim.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
cat > "$dir/job.yaml" <<YAML
seed: 1
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: $((n * 1000)), cols: 100}
pool: {wait: {nwait: $((n * 9 / 10))}}
simulate:
  compute: dsag
  latency_us: 50
  bandwidth_mbps: 10000
  dsag: {compute_ms: 10, comm_ms: 1, p_slow: 0.02, p_fast: 0.2,
         slow_factor: 5}
stop: {iterations: $iters}
output: {history: $dir/h.csv, answers: $dir/a.csv}
YAML
echo "job: gd on lrmse, $((n * 1000)) rows x 100 columns (1,000 rows a" \
     "worker), $n workers, rounds of the $((n * 9 / 10)) fastest," \
     "$iters iterations, the DSAG model"
/usr/bin/time -f '%e %M' -o "$dir/time" "$AIARUN" -v --simulate "$n" \
    "$dir/job.yaml" > "$dir/out" 2> "$dir/err" || { cat "$dir/err"; exit 1; }
grep '^stop=' "$dir/out" | cut -d' ' -f1-6
grep 'simulated' "$dir/err" | sed 's/^aiarun\[0\]: //'
read -r wall rss < "$dir/time"
echo "wall $wall s, peak RSS $((rss / 1024)) MiB," \
     "answer log $(($(wc -l < "$dir/a.csv") - 1)) rows"

# The simulator alone: the same pool with plugins that do nothing
# (bench/noop.c, bench/nullprob.c; `make bench/noop.la bench/nullprob.la`).
[ -f bench/.libs/noop.so ] && [ -f bench/.libs/nullprob.so ] || exit 0
for mode in rounds async; do
    cat > "$dir/null.yaml" <<YAML
seed: 1
algorithm: {plugin: noop}
problem: {plugin: nullprob, dim: 10}
pool: {mode: $mode}
simulate: {compute: dsag, dsag: {compute_ms: 10}}
stop: {iterations: $([ "$mode" = async ] && echo $((iters * n)) || echo "$iters")}
YAML
    [ "$mode" = rounds ] &&
        printf 'pool: {wait: {nwait: %d}}\n' $((n * 9 / 10)) >> "$dir/null.yaml" &&
        sed -i '/^pool: {mode: rounds}$/d' "$dir/null.yaml"
    echo "no-op plugins, $mode mode:"
    AIARUN_PLUGIN_PATH="bench/.libs:$AIARUN_PLUGIN_PATH" /usr/bin/time \
        -f '%e %M' -o "$dir/time" "$AIARUN" -v --simulate "$n" \
        "$dir/null.yaml" 2>&1 >/dev/null | grep simulated |
        sed 's/^aiarun\[0\]: /  /'
    read -r wall rss < "$dir/time"
    echo "  wall $wall s, peak RSS $((rss / 1024)) MiB"
done
