# python.sh - case python: the cost of the python problem's bridge.  The
# gradient of etc/lsq.py's NumPy least squares, called through the plugin
# as a worker calls it, against lrmse's on the same rows
# (bench/pybridge.c), and the cost of one call where the rows are too few
# to matter.  Sourced by bench/run.sh.

PYTHON_ROWS=100000
PYTHON_COLS=100    # 100000 x 101 doubles: 81 MB, beyond the caches
PYTHON_INNER=21    # full gradients per plugin in one run (median)

case_python() {
    if [ ! -x "$BIN/pybridge" ]; then
        say "python: skipped, aiarun was built without Python"
        printf '## 9. The python problem\n\nNot measured: this build has no Python (python3-embed).\n\n' \
            >"$OUT/python.md"
        return
    fi
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "python: repetition $rep of $BENCH_REPS"
        out=$(AIARUN_PYTHONPATH="$top_srcdir/python:$top_srcdir/etc" \
            "$BIN/pybridge" "$LRMSE" "$top_builddir/problems/.libs/python.so" \
            lsq:LeastSquares "$PYTHON_ROWS" "$PYTHON_COLS" "$PYTHON_INNER")
        for k in grad_lrmse grad_python call_lrmse call_python maxdiff; do
            record python "$k" "$rep" "$(printf '%s\n' "$out" | sed -n "s/^$k=//p")"
        done
        rep=$((rep + 1))
    done
    python_table >"$OUT/python.md"
}

python_table() {
    r=$(ratio python grad_python grad_lrmse)
    ok=0
    holds "$r <= 1.5" && ok=1
    cat <<EOT
## 9. The python problem

One process, no MPI: \`bench/pybridge.c\` opens lrmse and the python
problem running \`etc/lsq.py\`'s NumPy least squares, each as a worker
holding the same ${PYTHON_ROWS} × ${PYTHON_COLS} dense rows, and times their full
gradients in turn through the descriptors (median of ${PYTHON_INNER} in a run, median
of ${BENCH_REPS} runs); then, on 10 rows of 10 columns, the mean of 2000 calls:
the bridge's own cost (a call into the interpreter, NumPy's small-array
overheads). The NumPy gradient reads the rows in cache-sized blocks, so
that it passes over memory once, as lrmse's fused loop does.
Largest difference of the two gradients: $(med python maxdiff).
Target: the NumPy gradient within 1.5x of lrmse's.

| | lrmse | python (NumPy) | python / lrmse |
|---|---:|---:|---:|
| full gradient, ms | $(fmt "$(calc "$(med python grad_lrmse) * 1e3")") | $(fmt "$(calc "$(med python grad_python) * 1e3")") | $r |
| one call on 10 × 10 rows, µs | $(fmt "$(calc "$(med python call_lrmse) * 1e6")") | $(fmt "$(calc "$(med python call_python) * 1e6")") | $(ratio python call_python call_lrmse) |

| target | measured | |
|---|---:|:---:|
| NumPy gradient within 1.5x of lrmse's | ${r}x | $(verdict $ok) |

EOT
}
