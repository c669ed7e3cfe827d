# mlp.sh - case mlp: the neural-network problems' gradients against the
# machine's arithmetic.  mlp's gradient (784-128-10, through BLAS) and
# softmax's on Fashion-MNIST-sized rows, called through their plugins as a
# worker calls them, against their floating-point operations at the dgemm
# rate measured in the same run through the same BLAS (bench/mlpflops.c).
# Sourced by bench/run.sh.

MLP_SIZES="1000 15000" # rows: a small worker's share, a quarter of 60,000
MLP_INNER=7            # timings per kernel in one run (the run reports medians)

case_mlp() {
    for rows in $MLP_SIZES; do
        rep=1
        while [ "$rep" -le "$BENCH_REPS" ]; do
            say "mlp: $rows rows, repetition $rep of $BENCH_REPS"
            out=$("$BIN/mlpflops" "$top_builddir/problems/.libs/mlp.so" \
                "$top_builddir/problems/.libs/softmax.so" "$rows" "$MLP_INNER")
            if [ $? = 77 ] || [ -z "$out" ]; then
                printf '## 10. Neural-network gradients\n\nNot measured: this build has no BLAS.\n\n' \
                    >"$OUT/mlp.md"
                return
            fi
            for k in dgemm_gflops mlp_s mlp_bound_s mlp_flops softmax_s \
                softmax_bound_s softmax_flops; do
                record "mlp$rows" "$k" "$rep" "$(printf '%s\n' "$out" | sed -n "s/^$k=//p")"
            done
            rep=$((rep + 1))
        done
    done
    mlp_table >"$OUT/mlp.md"
}

mlp_table() {
    cat <<EOT
## 10. Neural-network gradients against the FLOP bound

One process, no MPI: \`bench/mlpflops.c\` opens mlp (784-128-10, ReLU,
its layers through cblas_dgemm, one BLAS thread as in a run) and softmax
(10 classes, its own loops) as one worker holding the given rows of 784
features, and times, in turn, the median of ${MLP_INNER} timings of: a square
512 × 512 dgemm through the same BLAS (the machine's rate), mlp's full
gradient and softmax's, through their descriptors. **bound**: the
gradient's floating-point operations (a multiply-add counted as two;
mlp: forward, weight gradients and the signal back to the hidden layer,
409,088 per row; softmax: scores and weight gradient, 31,360 per row)
at that dgemm rate. Medians of ${BENCH_REPS} runs; ratios the median of
the per-run ratios.

| rows | dgemm GFLOP/s | mlp ms | mlp bound ms | mlp / bound | softmax ms | softmax bound ms | softmax / bound |
|---:|---:|---:|---:|---:|---:|---:|---:|
EOT
    for rows in $MLP_SIZES; do
        c=mlp$rows
        printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$rows" \
            "$(fmt "$(med "$c" dgemm_gflops)")" \
            "$(fmt "$(calc "$(med "$c" mlp_s) * 1e3")")" \
            "$(fmt "$(calc "$(med "$c" mlp_bound_s) * 1e3")")" \
            "$(ratio "$c" mlp_s mlp_bound_s)" \
            "$(fmt "$(calc "$(med "$c" softmax_s) * 1e3")")" \
            "$(fmt "$(calc "$(med "$c" softmax_bound_s) * 1e3")")" \
            "$(ratio "$c" softmax_s softmax_bound_s)"
    done
    echo
}
