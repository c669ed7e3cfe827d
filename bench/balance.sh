#!/bin/sh
# balance.sh - DSAG's load balancer (sag's balance: on) against the same
# method unbalanced, as time to a gap of 1e-6: (a) --simulate with 100
# workers, a quarter of them 3x slower per row (stragglers.slow), logreg
# and pca, and the same pool with equal workers; (c) mpirun with 8
# workers on this machine (--oversubscribe), 2 of them 3x slower.  Prints
# a markdown table of virtual (a) and wall (c) seconds and their ratios.
#   sh ../bench/balance.sh [a] [b] [c]     (from the build folder)
set -u
: "${AIARUN:=./aiarun}"
: "${MPIRUN:=mpirun}"
export AIARUN_PLUGIN_PATH="${AIARUN_PLUGIN_PATH:-plugins/.libs:problems/.libs}"
parts=${*:-a b c}
dir=$(mktemp -d "${TMPDIR:-/tmp}/aiarun-balance.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# job PROBLEM WORKERS ITERATIONS: the job file, on stdout
job() {
    case $1 in
    logreg) spec="{plugin: logreg, rows: $(($2 * 400)), cols: 20, l2: 0.01}" ;;
    pca) spec="{plugin: pca, k: 3, rows: $(($2 * 400)), cols: 30}" ;;
    esac
    cat <<YAML
seed: 7
algorithm: {plugin: sag, variant: dsag, balance: off}
problem: $spec
pool: {wait: {nwait: 0}}
stop: {gap: 1e-6, iterations: $3, check_every: 5}
YAML
}

# time_of ARGS...: "time iterations" of a run to the gap, or "- -"
time_of() {
    out=$("$@" 2>"$dir/err") || { echo "- -"; return; }
    [ "$(field stop "$out")" = gap ] || { echo "- $(field iterations "$out")"; return; }
    echo "$(field time "$out") $(field iterations "$out")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

slow_ranks() { # the last quarter of N workers
    seq -s, $(($1 * 3 / 4 + 1)) "$1"
}

case " $parts " in *" a "*)
    n=100
    echo "### (a) --simulate $n workers, simulate.compute: rows (1 us a row), dsag, balance off and on"
    echo
    echo "| problem | workers | nwait | unbalanced (s) | balanced (s) | unbalanced / balanced |"
    echo "|---|---|---|---|---|---|"
    for prob in logreg pca; do
        job $prob $n 20000 > "$dir/job.yaml"
        for nw in 0 75; do
            for slow in "3" "1"; do
                set -- "$AIARUN" --simulate $n -o pool.wait.nwait=$nw \
                    -o "stragglers.slow.ranks=[$(slow_ranks $n)]" \
                    -o "stragglers.slow.factor=[$slow]" "$dir/job.yaml"
                off=$(time_of "$@")
                on=$(time_of "$@" -o algorithm.balance=on)
                what=$([ "$slow" = 1 ] && echo "equal" || echo "25 of $n 3x slower")
                echo "| $prob | $what | $nw | ${off% *} (${off#* } it) | ${on% *} (${on#* } it) | $(ratio "${off% *}" "${on% *}") |"
            done
        done
    done
    echo
;; esac

case " $parts " in *" b "*)
    n=100
    echo "### (b) --simulate $n workers, simulate.dsag.preset: paper, time to a gap of 1e-6"
    echo
    echo "| problem | dsag nwait | dsag (s) | sag, all (s) | gd, all (s) | sag / dsag | gd / dsag |"
    echo "|---|---|---|---|---|---|---|"
    for prob in pca logreg; do
        job $prob $n 20000 > "$dir/job.yaml"
        cat >> "$dir/job.yaml" <<YAML
simulate: {compute: dsag, dsag: {preset: paper}}
YAML
        step=auto
        [ $prob = pca ] && step=0.9
        set -- "$AIARUN" --simulate $n -o algorithm.step=$step "$dir/job.yaml"
        sag=$(time_of "$@" -o algorithm.variant=sag)
        gd=$(time_of "$@" -o algorithm.plugin=gd -o algorithm.variant= -o algorithm.balance=)
        for nw in 50 80; do
            dsag=$(time_of "$@" -o pool.wait.nwait=$nw)
            echo "| $prob | $nw | ${dsag% *} (${dsag#* } it) | ${sag% *} (${sag#* } it) | ${gd% *} (${gd#* } it) | $(ratio "${sag% *}" "${dsag% *}") | $(ratio "${gd% *}" "${dsag% *}") |"
        done
    done
    echo
;; esac

case " $parts " in *" c "*)
    echo "### (c) mpirun, 8 workers on $(nproc) cores (--oversubscribe), ranks 7-8 3x slower per row, logreg 160,000 x 50, dsag waiting for every worker"
    echo
    echo "| run | unbalanced (s) | balanced (s) | unbalanced / balanced |"
    echo "|---|---|---|---|"
    cat > "$dir/mpi.yaml" <<YAML
seed: 7
algorithm: {plugin: sag, variant: dsag}
problem: {plugin: logreg, rows: 160000, cols: 50, l2: 0.01}
pool: {wait: {nwait: 0}}
stragglers:
  slow: {ranks: [7, 8], factor: [3]}
stop: {gap: 1e-6, iterations: 5000, check_every: 5}
YAML
    : >"$dir/ratios"
    for rep in $(seq "${BALANCE_REPS:-5}"); do
        set -- "$MPIRUN" --oversubscribe -np 9 "$AIARUN" "$dir/mpi.yaml"
        # the two in alternating order, so that a change of load does not
        # always fall on the same one
        if [ $((rep % 2)) = 1 ]; then
            off=$(time_of "$@" -o algorithm.balance=off)
            on=$(time_of "$@" -o algorithm.balance=on)
        else
            on=$(time_of "$@" -o algorithm.balance=on)
            off=$(time_of "$@" -o algorithm.balance=off)
        fi
        r=$(ratio "${off% *}" "${on% *}")
        echo "$r" >>"$dir/ratios"
        echo "| $rep | ${off% *} (${off#* } it) | ${on% *} (${on#* } it) | $r |"
    done
    echo
    echo "Median of the ratios: $(grep -v '^-' "$dir/ratios" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "-" }')"
    echo
;; esac
