# local.sh - case 6, delayed exchange: average on lrmse with one local
# step and no delay (gradient descent) against 4 local steps with no
# delay, and 4 local steps with a delay of 2, compensated and not: rounds
# and time to a gap of 1e-3, side by side in every repetition.  Sourced
# by bench/run.sh.

LOCAL_CONFIGS="k1d0 k4d0 k4d2c k4d2r"
LOCAL_GAP=1e-3
LOCAL_MAX=3000 # rounds before a configuration is said to miss the target

local_args() {
    case $1 in
    k1d0) echo "-o algorithm.local_steps=1 -o algorithm.delay=0" ;;
    k4d0) echo "-o algorithm.local_steps=4 -o algorithm.delay=0" ;;
    k4d2c) echo "-o algorithm.local_steps=4 -o algorithm.delay=2 -o algorithm.compensate=true" ;;
    k4d2r) echo "-o algorithm.local_steps=4 -o algorithm.delay=2 -o algorithm.compensate=false" ;;
    esac
}

local_label() {
    case $1 in
    k1d0) echo "k=1, d=0 (gradient descent)" ;;
    k4d0) echo "k=4, d=0" ;;
    k4d2c) echo "k=4, d=2, compensate" ;;
    k4d2r) echo "k=4, d=2, replace" ;;
    esac
}

case_local() {
    job=$OUT/local.yaml
    cat >"$job" <<YAML
seed: 5
algorithm: {plugin: average, step: 0.2}
problem: {plugin: lrmse, rows: 8000, cols: 50, noise: 0.1, condition: 10}
stop: {iterations: $LOCAL_MAX, gap: $LOCAL_GAP, time: 60}
YAML
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "local: repetition $rep of $BENCH_REPS"
        for c in $LOCAL_CONFIGS; do
            line=$(aia 5 "$job" $(local_args "$c"))
            met=
            [ "$(field stop "$line")" = gap ] && met=1
            record local "$c.rounds" "$rep" "${met:+$(field iterations "$line")}"
            record local "$c.ms" "$rep" "${met:+$(calc "$(field time "$line") * 1000")}"
            record local "$c.gap" "$rep" "$(field gap "$line")"
            record local "$c.met" "$rep" "${met:-0}"
        done
        rep=$((rep + 1))
    done
    local_table >"$OUT/local.md"
}

local_table() {
    cat <<EOF
## 7. Delayed exchange (average, local SGD)

\`bench/local.sh\`: average on lrmse (8000 rows, 50 columns, κ = 10,
noise 0.1; 4 workers on even parts, every worker waited for, step 0.2),
run to a gap of ${LOCAL_GAP} (at most ${LOCAL_MAX} rounds). k = \`local_steps\`
between exchanges, d = \`delay\`: the local steps after which a received
average is applied; *compensate* applies it as x + (y − y_sent),
*replace* as x. All four run one after the other in every repetition;
medians of ${BENCH_REPS}; ratios are the configuration's over k=1, d=0's, per
repetition, then the median (below 1: fewer rounds or less time).

| configuration | rounds | time (ms) | final gap | reached | rounds / k=1 | time / k=1 |
|---|---:|---:|---:|---:|---:|---:|
EOF
    for c in $LOCAL_CONFIGS; do
        printf '| %s | %s | %s | %s | %s/%s | %s | %s |\n' "$(local_label "$c")" \
            "$(fmti "$(med local "$c.rounds")")" "$(fmt "$(med local "$c.ms")")" \
            "$(med local "$c.gap")" \
            "$("$AWK" -F '\t' -v k="$c.met" '$1 == "local" && $2 == k { s += $4 } END { print s + 0 }' "$RAW")" \
            "$BENCH_REPS" "$(ratio local "$c.rounds" k1d0.rounds)" \
            "$(ratio local "$c.ms" k1d0.ms)"
    done
    echo
}
