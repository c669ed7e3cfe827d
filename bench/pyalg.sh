# pyalg.sh - case pyalg: the cost of an algorithm written in Python.  A
# round of etc/gd.py (gd in NumPy, run by the python algorithm) against
# the gd plugin's, on bench/nullprob.c (no data: a zero gradient), at 10
# and 100,000 doubles, 4 workers waiting for every one: under mpirun (the
# wall time of a round, protocol included) and in one process without
# MPI (bench/pyalgcost.c: the CPU time of the algorithm's calls alone),
# the two algorithms one after the other in every repetition.  Sourced
# by bench/run.sh.

PYALG_DIMS="10 100000"

# Rounds per run: a quarter of a second or more of C gd on this machine
# under mpirun; in one process, a tenth of a second or more of gd.py.
pyalg_rounds() {
    case $1 in
    10) echo 3000 ;;
    *) echo 200 ;;
    esac
}
pyalg_cost_rounds() {
    case $1 in
    10) echo 5000 ;;
    *) echo 200 ;;
    esac
}

case_pyalg() {
    if [ ! -x "$BIN/pyalgcost" ]; then
        say "pyalg: skipped, aiarun was built without Python"
        printf '## The python algorithm\n\nNot measured: this build has no Python (python3-embed).\n\n' \
            >"$OUT/pyalg.md"
        return
    fi
    job=$OUT/pyalg.yaml
    cat >"$job" <<'YAML'
# bench: gd's rounds on a problem with no data (a zero gradient)
seed: 1
algorithm:
  plugin: gd
  step: 0.5
problem:
  plugin: nullprob
  dim: 10
pool:
  wait:
    nwait: 0
stop:
  iterations: 1000
YAML
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "pyalg: repetition $rep of $BENCH_REPS"
        for dim in $PYALG_DIMS; do
            rounds=$(pyalg_rounds "$dim")
            # alternate the order, so that neither always runs first
            order="c python"
            [ $((rep % 2)) = 0 ] && order="python c"
            for alg in $order; do
                o=
                [ "$alg" = python ] &&
                    o="-o algorithm.plugin=python -o algorithm.class=gd:GD"
                line=$(AIARUN_PYTHONPATH="$top_srcdir/python:$top_srcdir/etc" \
                    aia 5 "$job" $o -o "problem.dim=$dim" \
                    -o "stop.iterations=$rounds")
                t=$(field time "$line")
                it=$(field iterations "$line")
                us=
                [ -n "$t" ] && [ -n "$it" ] && us=$(calc "1e6 * $t / $it")
                record pyalg "$alg/$dim" "$rep" "$us"
            done
            line=$(AIARUN_PYTHONPATH="$top_srcdir/python:$top_srcdir/etc" \
                "$BIN/pyalgcost" "$dim" "$(pyalg_cost_rounds "$dim")" 1)
            record pyalg "cpu-c/$dim" "$rep" "$(field c_us "$line")"
            record pyalg "cpu-python/$dim" "$rep" "$(field python_us "$line")"
            record pyalg "cpu-bridge/$dim" "$rep" "$(field bridge_us "$line")"
        done
        rep=$((rep + 1))
    done
    pyalg_table >"$OUT/pyalg.md"
}

pyalg_table() {
    cat <<EOT
## The python algorithm

\`etc/gd.py\`, gd written in NumPy and run by the python algorithm,
against the gd plugin on the same job: \`bench/nullprob.c\` (no data, a
zero gradient, so that the round is the protocol and the algorithm),
4 workers, every one waited for, under \`mpirun -np 5\`; the two run one
after the other in every repetition, in alternating order. A round of
the python algorithm is a Python call on each worker (\`worker\`: the
problem's gradient into the answer's view), one a worker on the
coordinator (\`absorb\`), and the step (\`query\`: the row-weighted mean
of the table, summed in worker order). Median µs per round, and the
median of the per-repetition ratios: under mpirun the run's wall time
over its rounds (the protocol included, and the load of the machine);
in one process (\`bench/pyalgcost.c\`, no MPI) the CPU time of the
algorithm's calls alone, the same 4 workers and coordinator driven by
hand (t/algtest.c), which the machine's other work does not stretch;
"bridge" is a class whose methods do nothing there: the python
algorithm's own cost (nine calls a round, their views and an answer's
info), the rest of gd.py's being its NumPy work.

| doubles | measure | rounds | gd (C), µs | gd.py, µs | gd.py / gd | bridge, µs |
|---:|---|---:|---:|---:|---:|---:|
EOT
    for dim in $PYALG_DIMS; do
        printf '| %s | mpirun -np 5, wall | %s | %s | %s | %s | |\n' "$dim" \
            "$(pyalg_rounds "$dim")" "$(fmt "$(med pyalg "c/$dim")")" \
            "$(fmt "$(med pyalg "python/$dim")")" \
            "$(ratio pyalg "python/$dim" "c/$dim")"
        printf '| %s | one process, CPU | %s | %s | %s | %s | %s |\n' "$dim" \
            "$(pyalg_cost_rounds "$dim")" "$(fmt "$(med pyalg "cpu-c/$dim")")" \
            "$(fmt "$(med pyalg "cpu-python/$dim")")" \
            "$(ratio pyalg "cpu-python/$dim" "cpu-c/$dim")" \
            "$(fmt "$(med pyalg "cpu-bridge/$dim")")"
    done
    echo
}
