# compute.sh - case 4, worker compute speed: lrmse's gradient, called
# through the plugin, in bytes of the matrix read per second, against a
# memory-bandwidth read of as many bytes (bench/gradbw.c).  Sourced by
# bench/run.sh.

COMPUTE_ROWS=160000
COMPUTE_COLS=100   # 160000 x 101 doubles: 129 MB, well beyond the caches
COMPUTE_INNER=9    # timings per kernel in one run (the run reports medians)

case_compute() {
    # lrmse.c as it is, compiled at -O3: what the flags alone change
    o3=
    if [ -n "${CC:-}" ] && $CC -O3 -shared -fPIC -I"$top_builddir" \
        -I"$top_srcdir/runtime/include" "$top_srcdir/problems/lrmse.c" \
        -o "$OUT/lrmse.so" -lm; then
        o3=$OUT/lrmse.so
    fi
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "compute: repetition $rep of $BENCH_REPS"
        out=$("$BIN/gradbw" "$LRMSE" "$COMPUTE_ROWS" "$COMPUTE_COLS" \
            "$COMPUTE_INNER" $o3)
        for k in gradient read read1 grad4 gradient2; do
            record compute "$k" "$rep" "$(printf '%s\n' "$out" | sed -n "s/^$k=//p")"
        done
        record compute bytes "$rep" "$(printf '%s\n' "$out" | sed -n 's/^bytes=//p')"
        rep=$((rep + 1))
    done
    compute_table >"$OUT/compute.md"
}

compute_table() {
    mb=$(calc "$(med compute bytes) / 1e6")
    r=$(ratio compute read gradient)
    r4=$(ratio compute read grad4)
    r3=$(ratio compute read gradient2)
    ok=0
    holds "$r <= 1.5" && ok=1
    cat <<EOF
## 4. Worker compute speed

One process, no MPI: \`bench/gradbw.c\` opens lrmse as one worker holding
${COMPUTE_ROWS} × ${COMPUTE_COLS} rows ($(fmt "$mb") MB with the targets, far beyond the
33 MB last-level cache) and times, in turn, the plugin's gradient
(through its descriptor, as a worker calls it) and reads of an array of
the same size. GB/s of matrix read, median of ${BENCH_REPS} runs, each the median
of ${COMPUTE_INNER} timings. **read**: a sum with eight independent accumulators,
vectorized (GCC's -O3 for that function; STREAM-like, limited by memory);
**read, 1 accumulator**: the plain loop,
each addition waiting for the previous one; **gradient, 4 accumulators**:
the plugin's arithmetic with four partial sums in each row's dot product
and its loops vectorized (GCC's -O3 for that function), over a copy of the
same size; **lrmse at -O3**: problems/lrmse.c unchanged, compiled with
\`$CC -O3\` instead of the build's flags. Everything else is compiled with
the build's CFLAGS (the plugin's dense rows go through its own loop,
compiled as at -O3 with GCC, see \`dense_gradient\` in problems/lrmse.c). Target: the plugin's gradient within 1.5x of the
bandwidth bound (read / gradient ≤ 1.5).

| kernel | GB/s | read / kernel |
|---|---:|---:|
| read (bandwidth bound) | $(fmt "$(med compute read)") | 1 |
| read, 1 accumulator | $(fmt "$(med compute read1)") | $(ratio compute read read1) |
| lrmse gradient (the plugin) | $(fmt "$(med compute gradient)") | $r |
| lrmse gradient, compiled -O3 | $(fmt "$(med compute gradient2)") | $r3 |
| gradient, 4 accumulators, vectorized | $(fmt "$(med compute grad4)") | $r4 |

| target | measured | |
|---|---:|:---:|
| lrmse gradient within 1.5x of the bandwidth bound | ${r}x | $(verdict $ok) |

EOF
}
