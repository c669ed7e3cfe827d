# scaling.sh - case 5, scaling: 2 to 16 ranks on this machine's cores,
# a fixed total of rows: rounds per second and time to accuracy of
# aiarun's gd (every worker every round, no injected delay) against the
# MPI_Allreduce baseline on as many ranks as aiarun has workers (the same
# parts of the same rows).  Sourced by bench/run.sh.

SCALE_NP="2 4 8 16"
SCALE_ROWS=48000
SCALE_COLS=20
SCALE_COND=10
SCALE_ITER=80
SCALE_SEED=5

case_scaling() {
    job=$OUT/scaling.yaml
    cat >"$job" <<YAML
# bench: scaling, gd on a fixed problem
seed: $SCALE_SEED
algorithm:
  plugin: gd
  step: 1
problem:
  plugin: lrmse
  rows: $SCALE_ROWS
  cols: $SCALE_COLS
  condition: $SCALE_COND
stop:
  iterations: $SCALE_ITER
  time: 60
output:
  history: $OUT/scaling-history.csv
  every: 1
YAML
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "scaling: repetition $rep of $BENCH_REPS"
        for np in $SCALE_NP; do
            rm -f "$OUT/scaling-history.csv"
            line=$(aia "$np" "$job")
            t=$(field time "$line")
            it=$(field iterations "$line")
            rps=
            [ -n "$t" ] && rps=$(calc "$it / $t")
            record scaling "aiarun/$np/rps" "$rep" "$rps"
            set -- $(acc_tta "$(field optimum "$line")" \
                "$OUT/scaling-history.csv")
            record scaling "aiarun/$np/tta" "$rep" "${1:-}"
            record scaling "aiarun/$np/iterations" "$rep" "${2:-}"
            line=$(brun $((np - 1)) "$BIN/allreduce_gd" "$LRMSE" \
                --seed "$SCALE_SEED" --step 1 --target "$ACC_TOL" \
                --keep-going --max-iter "$SCALE_ITER" "rows=$SCALE_ROWS" \
                "cols=$SCALE_COLS" "condition=$SCALE_COND")
            t=$(field time "$line")
            it=$(field iterations "$line")
            rps=
            [ -n "$t" ] && rps=$(calc "$it / $t")
            record scaling "baseline/$np/rps" "$rep" "$rps"
            tb=
            [ "$(field reached "$line")" = 1 ] && tb=$(field tta "$line")
            record scaling "baseline/$np/tta" "$rep" "$tb"
            record scaling "baseline/$np/iterations" "$rep" \
                "$(field tta_iterations "$line")"
        done
        rep=$((rep + 1))
    done
    scaling_table >"$OUT/scaling.md"
}

scaling_table() {
    cat <<EOF
## 5. Scaling

gd (\`pool.wait\` every worker, step 1) on lrmse with ${SCALE_ROWS} rows ×
${SCALE_COLS} columns (κ = ${SCALE_COND}) in total, split over the workers, no
injected delay, ${SCALE_ITER} iterations; 2 to 16 ranks on $(nproc) cores, so from 4
ranks on they share cores. Rounds per second from the summary line; time
to (1 + ${ACC_TOL}) × optimum from the history. **baseline**:
\`bench/allreduce_gd.c\` on one rank per aiarun worker (np − 1 ranks,
the same parts of the same rows, so the same iterates); its rounds per
second over the same ${SCALE_ITER} iterations. Medians of the repetitions;
ratios are medians of side-by-side ratios.

| ranks | workers | aiarun rounds/s | baseline rounds/s | aiarun / baseline | aiarun time to target (s) | baseline time to target (s) | iterations (aiarun, baseline) | baseline time / aiarun time |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
    for np in $SCALE_NP; do
        echo "| $np | $((np - 1)) | $(fmt "$(med scaling "aiarun/$np/rps")") | $(fmt "$(med scaling "baseline/$np/rps")") | $(ratio scaling "aiarun/$np/rps" "baseline/$np/rps") | $(fmt "$(med scaling "aiarun/$np/tta")") | $(fmt "$(med scaling "baseline/$np/tta")") | $(fmti "$(med scaling "aiarun/$np/iterations")"), $(fmti "$(med scaling "baseline/$np/iterations")") | $(ratio scaling "baseline/$np/tta" "aiarun/$np/tta") |"
    done
    echo
}
