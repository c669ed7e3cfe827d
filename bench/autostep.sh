# autostep.sh - case autostep: the steps the methods take from the
# problem, on a badly conditioned problem, under load.  With no step in
# the job (step: auto), gd, sgd (nwait 3 of 4, and async) and average run
# on lrmse of condition 1e5 in AUTO_SEEDS seeded runs each, while a
# second aiarun job runs beside them; the table counts the runs that
# reach a gap of 1e-6 and those stopped as diverged.  Sourced by
# bench/run.sh.

: "${AUTO_SEEDS:=10}"
: "${AUTO_FIRST:=1}" # the first seed: seeds AUTO_FIRST to AUTO_SEEDS run
: "${AUTO_CAP:=240}" # s: a run that has not reached the gap by then did not
: "${AUTO_CONFIGS:=gd sgd-3 sgd-async average}"

auto_overrides() { # CONFIG
    case $1 in
    gd) echo "-o algorithm.plugin=gd" ;;
    sgd-3) echo "-o algorithm.plugin=sgd -o pool.wait.nwait=3" ;;
    sgd-async) echo "-o algorithm.plugin=sgd -o pool.mode=async" ;;
    sgd-async-adaptive) echo "-o algorithm.plugin=sgd -o pool.mode=async -o algorithm.staleness_scaling=adaptive" ;;
    average) echo "-o algorithm.plugin=average" ;;
    esac
}

case_autostep() {
    cat >"$OUT/auto.yaml" <<YAML
# bench: autostep
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 400, cols: 10, noise: 0.1, condition: 1e5}
stop: {gap: 1e-6, time: $AUTO_CAP}
YAML
    # the load: a second job, gd on a larger problem, for as long as the
    # case runs
    cat >"$OUT/auto-load.yaml" <<YAML
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 20000, cols: 50}
stop: {time: 100000}
YAML
    # mpirun's own limit: past the run's, so that a slow run ends by its
    # time stop, with its summary line
    auto_bt=${BENCH_TIMEOUT:-180}
    BENCH_TIMEOUT=$((AUTO_CAP + 60))
    # timeout itself in the background (not brun, whose shell would take
    # the kill below and leave mpirun running), for at most the whole case
    # shellcheck disable=SC2086
    timeout -k 5 $((BENCH_TIMEOUT * AUTO_SEEDS * $(echo $AUTO_CONFIGS | wc -w) + 60)) \
        "$MPIRUN" -np 3 $MPIFLAGS "$AIARUN" -q "$OUT/auto-load.yaml" >/dev/null 2>&1 &
    loadjob=$!
    seed=$AUTO_FIRST
    while [ "$seed" -le "$AUTO_SEEDS" ]; do
        say "autostep: seed $seed of $AUTO_SEEDS"
        for cfg in $AUTO_CONFIGS; do
            # shellcheck disable=SC2046
            # stderr kept per run, to read why a run missed
            err=$OUT/auto-err-$cfg-$seed
            sline=$(aia 5 "$OUT/auto.yaml" -o seed=$seed $(auto_overrides "$cfg") 2>"$err")
            stop=$(field stop "$sline")
            # a divergence ends the run as an error, saying so on stderr
            grep -q 'the method diverged' "$err" && stop=diverged
            t=
            [ "$stop" = gap ] && t=$(field time "$sline")
            record autostep "$cfg/time" "$seed" "$t"
            record autostep "$cfg/stop" "$seed" "${stop:-failed}"
            # where a run stopped short of the target, how far it got
            record autostep "$cfg/gap" "$seed" "$(field gap "$sline")"
            [ "$stop" = gap ] && record autostep "$cfg/iterations" "$seed" "$(field iterations "$sline")"
        done
        seed=$((seed + 1))
    done
    kill "$loadjob" 2>/dev/null
    wait "$loadjob" 2>/dev/null
    BENCH_TIMEOUT=$auto_bt
    autostep_table >"$OUT/autostep.md"
}

# auto_count CONFIG STOP : the runs of CONFIG that ended with STOP
auto_count() {
    "$AWK" -F '\t' -v k="$1/stop" -v s="$2" '
    $1 == "autostep" && $2 == k && $4 == s { n++ }
    END { print n + 0 }' "$RAW"
}

autostep_table() {
    cat <<EOF
## Steps from the problem: condition 1e5, no step in the job

lrmse, 400 rows × 10 columns, noise 0.1, condition 10⁵ (column j scaled
by 10^(−2.5 j/9)), seeds ${AUTO_FIRST} to ${AUTO_SEEDS}, 5 ranks, while a second
aiarun job (3 ranks, gd on 20,000 × 50) runs on the same cores. Every
method with \`step: auto\`; gd and average wait for every worker, sgd-3
for 3 of the 4; sgd moves at every answer along the mean of every
worker's latest one (\`update: auto\`, which is \`table\` with the
step auto). Runs that
reach a gap of 10⁻⁶ within ${AUTO_CAP} s, runs stopped as diverged,
other stops (the time limit); the median time over all the runs (one
that missed counts as slower than any that reached) and the median
iterations of those that reached.

| method | reached | diverged | other stops | time (s) | iterations |
|---|---:|---:|---:|---:|---:|
EOF
    for cfg in $AUTO_CONFIGS; do
        r=$(auto_count "$cfg" gap)
        d=$(auto_count "$cfg" diverged)
        echo "| $cfg | $r / $((AUTO_SEEDS - AUTO_FIRST + 1)) | $d | $((AUTO_SEEDS - AUTO_FIRST + 1 - r - d)) | $(fmt "$(med autostep "$cfg/time")") | $(fmt "$(med autostep "$cfg/iterations")") |"
    done
    echo
}
