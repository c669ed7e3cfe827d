# methods.sh - case methods: time to a gap of 1e-6 on lrmse, every method
# with step: auto (its step from the problem's smoothness L), side by side
# with bench/allreduce_gd.c (synchronous gradient descent over
# MPI_Allreduce, step 1/L), on 4 workers with a persistent straggler and
# with Markov bursts, on a well- and an ill-conditioned problem, and on a
# consistent one (noise 0: every worker's rows share the optimum, the
# interpolation case of Rennala's and Ringmaster's theory).  Sourced by
# bench/run.sh.

METH_ROWS=4000
METH_COLS=20
METH_SEED=3
METH_GAP=1e-6
METH_LOSS=1e-8 # consistent problems: their optimum is 0, so the target
# is the loss itself (2e-9 of the loss at x = 0, 5.5)
METH_CAP=20 # s: a run that has not reached the gap by then did not
# cN: condition N, noise 0.1, target gap; iN: condition N, noise 0,
# target loss
: "${METH_PROBLEMS:=c1 c100 i100}"
METH_SCENARIOS="fixed markov"
METH_CONFIGS="gd-all gd-3 sgd-fixed sgd-adaptive sag dsag rennala ringmaster"

meth_overrides() { # CONFIG
    case $1 in
    gd-all) echo "-o algorithm.plugin=gd -o pool.wait.nwait=0" ;;
    gd-3) echo "-o algorithm.plugin=gd -o pool.wait.nwait=3" ;;
    sgd-fixed) echo "-o algorithm.plugin=sgd -o pool.mode=async" ;;
    sgd-adaptive) echo "-o algorithm.plugin=sgd -o pool.mode=async -o algorithm.staleness_scaling=adaptive" ;;
    sag) echo "-o algorithm.plugin=sag -o algorithm.variant=sag -o algorithm.subpartitions=2 -o pool.wait.nwait=3" ;;
    dsag) echo "-o algorithm.plugin=sag -o algorithm.variant=dsag -o algorithm.subpartitions=2 -o pool.wait.nwait=3" ;;
    rennala) echo "-o algorithm.plugin=rennala -o pool.mode=async" ;;
    ringmaster) echo "-o algorithm.plugin=ringmaster -o pool.mode=async" ;;
    esac
}

meth_job() { # PROBLEM SCENARIO
    cat <<YAML
# bench: methods, problem $1, stragglers $2
seed: $METH_SEED
algorithm: {plugin: gd}
problem:
  plugin: lrmse
  rows: $METH_ROWS
  cols: $METH_COLS
  condition: ${1#?}
YAML
    case $1 in
    c*) printf 'stop: {gap: %s, time: %s}\n' "$METH_GAP" "$METH_CAP" ;;
    i*) printf '  noise: 0\nstop: {loss: %s, time: %s}\n' "$METH_LOSS" "$METH_CAP" ;;
    esac
    cat <<YAML
stragglers:
  work_ms: 1
YAML
    case $2 in
    fixed) printf '  fixed: {ranks: [2], delay_ms: [10]}\n' ;;
    markov) printf '  markov: {p_slow: 0.05, p_fast: 0.25, delay_ms: 10}\n' ;;
    esac
}

case_methods() {
    for p in $METH_PROBLEMS; do
        for s in $METH_SCENARIOS; do
            meth_job "$p" "$s" >"$OUT/meth-$p-$s.yaml"
        done
        # L, for the baseline's step 1/L, from aiarun's report
        L=$(brun 5 "$AIARUN" -o stop.gap=0 -o stop.loss=0 -o stop.iterations=1 \
            "$OUT/meth-$p-fixed.yaml" | sed -n 's/^  smoothness L = \([^,]*\),.*/\1/p')
        echo "$L" >"$OUT/meth-$p-L"
    done
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "methods: repetition $rep of $BENCH_REPS"
        for p in $METH_PROBLEMS; do
            for s in $METH_SCENARIOS; do
                meth_rep "$p" "$s" "$rep"
            done
        done
        rep=$((rep + 1))
    done
    methods_table >"$OUT/methods.md"
}

meth_rep() { # PROBLEM SCENARIO REP
    L=$(cat "$OUT/meth-$1-L")
    strag="--straggler 2:10"
    [ "$2" = markov ] && strag="--markov 0.05:0.25:10"
    goal="--target $METH_GAP"
    extra=
    case $1 in i*)
        goal="--target-loss $METH_LOSS"
        extra=noise=0
        ;;
    esac
    # shellcheck disable=SC2086
    line=$(brun 4 "$BIN/allreduce_gd" "$LRMSE" --seed "$METH_SEED" \
        --step "$(calc "1 / $L")" --work-ms 1 $strag $goal \
        --max-time "$METH_CAP" "rows=$METH_ROWS" "cols=$METH_COLS" \
        "condition=${1#?}" $extra)
    t=$(field tta "$line")
    [ "$(field reached "$line")" = 1 ] || t=
    record methods "$1/$2/baseline" "$3" "$t"
    for cfg in $METH_CONFIGS; do
        # shellcheck disable=SC2046
        sline=$(aia 5 "$OUT/meth-$1-$2.yaml" $(meth_overrides "$cfg"))
        t=
        case $(field stop "$sline") in gap | loss) t=$(field time "$sline") ;; esac
        record methods "$1/$2/$cfg" "$3" "$t"
    done
}

methods_table() {
    cat <<EOF
## Methods: time to a gap of ${METH_GAP}, steps from the problem

lrmse, ${METH_ROWS} rows × ${METH_COLS} columns (seed ${METH_SEED}), 4 workers with 1 ms of
work per answer and either rank 2 a persistent straggler (10 ms more per
answer, \`fixed\`) or every worker in two-state Markov bursts (p_slow
0.05, p_fast 0.25, 10 ms, \`markov\`). Every aiarun method runs with
\`step: auto\`, its step from the problem's smoothness L; the baseline
is \`bench/allreduce_gd.c\` with step 1/L and the same delays. Seconds
until (loss − optimum)/optimum ≤ ${METH_GAP} (aiarun's \`stop.gap\`, the time of
its summary line), or on the consistent problems (κ written iN: noise 0,
so every worker's rows share the optimum and the optimum loss is 0)
until the loss ≤ ${METH_LOSS} (\`stop.loss\`), median of the repetitions; "-": not reached within
${METH_CAP} s. Speedup: baseline time / method time, the median of the
per-repetition ratios. gd-3, sag and dsag wait for 3 of the 4 workers
(sag and dsag with 2 sub-partitions a worker); sgd, rennala and
ringmaster run in async mode.

| κ | stragglers | method | time (s) | speedup vs Allreduce GD |
|---|---|---|---:|---:|
EOF
    for p in $METH_PROBLEMS; do
        for s in $METH_SCENARIOS; do
            echo "| ${p#c} | $s | MPI_Allreduce gd | $(fmt "$(med methods "$p/$s/baseline")") | 1 |"
            for cfg in $METH_CONFIGS; do
                echo "| ${p#c} | $s | $cfg | $(fmt "$(med methods "$p/$s/$cfg")") | $(fmt "$(ratio methods "$p/$s/baseline" "$p/$s/$cfg")") |"
            done
        done
    done
    echo
    printf 'DSAG against SAG (SAG time / DSAG time):'
    for p in $METH_PROBLEMS; do
        for s in $METH_SCENARIOS; do
            r=$(fmt "$(ratio methods "$p/$s/sag" "$p/$s/dsag")")x
            d=$(fmt "$(med methods "$p/$s/dsag")")
            if [ "$r" = -x ] && [ "$d" != - ] &&
                [ "$(fmt "$(med methods "$p/$s/sag")")" = - ]; then
                # SAG never reached the target: DSAG is faster by more
                # than the cap over its own time
                r="more than $(fmt "$(calc "$METH_CAP / $d")")x (SAG did not reach the target in $METH_CAP s)"
            fi
            printf ' κ=%s %s %s;' "${p#c}" "$s" "$r"
        done
    done
    printf '\n\n'
}
