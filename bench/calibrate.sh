#!/bin/sh
# calibrate.sh - simulated against measured time to accuracy: the same
# jobs with injected delays under mpirun and with aiarun --simulate (4 and
# 8 workers, a fixed straggler or Markov bursts, nwait 3 and all in a
# star, and 8 workers in a tree of arity 2), each
# to a relative suboptimality of 1e-3.  Prints one row per job: the
# iterations and seconds each way, and simulated / measured time.
# The simulation's one free parameter is calibrated first, per pool size,
# from a run with no straggler: what an answer costs beyond its work
# (the median round trip less 2 ms of work: messages, wake-ups and
# scheduling on an oversubscribed machine) is split over the two links'
# simulate.latency_us.
# Then jobs where rank 0's work matters (CASES=coordinator runs only
# them): gd on 10^5 columns with a few rows a worker (1, 2, 4 and 8
# workers), so that absorbing an answer and writing a query cost as much
# as a worker's step; mpirun against --simulate of one node
# (simulate.cores: this machine's, the latency, the copy rate and the
# model's constants from calibration runs of their own) with
# simulate.coordinator measured and the model (and measured with a core
# a rank, and none, to show what each term gives): time to the same
# iteration (waiting for all, the iterates are the same each way) and
# coordinator_busy each way, and mpirun's spread (its slowest repetition
# over its fastest: what the machine moved under the same job).  Then
# the same in async mode with 1 row a worker (2 to 8 workers): rank 0
# saturated, its work an answer several times a worker's step.
#   sh bench/calibrate.sh   (from the build folder; REPS=3 by default;
#   WORKERS="1 2" picks the coordinator cases' pool sizes)
set -u
: "${AIARUN:=./aiarun}" "${MPIRUN:=mpirun}" "${REPS:=3}"
: "${AIARUN_SIM:=$AIARUN}" "${CASES:=all}" "${WORKERS:=1 2 4 8}"
export AIARUN_PLUGIN_PATH="${AIARUN_PLUGIN_PATH:-plugins/.libs:problems/.libs}"
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/aiarun-cal.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

job() { # WORKERS NWAIT DELAYS
    cat <<YAML
seed: 9
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 8000, cols: 20, condition: 10}
$(if [ "$2" = tree ]; then echo 'pool: {topology: tree, arity: 2}'
  else echo "pool: {wait: {nwait: $2}}"; fi)
simulate: {compute: measured, latency_us: 50}
stop: {gap: 1e-3, iterations: 100000, time: 60}
YAML
    case $3 in
    fixed) printf 'stragglers: {work_ms: 2, fixed: {ranks: [2], delay_ms: 10}}\n' ;;
    markov) printf 'stragglers: {work_ms: 2, markov: {p_slow: 0.1, p_fast: 0.3, delay_ms: 10}}\n' ;;
    esac
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

mpi() { # WORKERS ARGS...
    _n=$1
    shift
    timeout -k 5 120 "$MPIRUN" -np $((_n + 1)) --oversubscribe --bind-to none \
        "$AIARUN" -q "$@" "$dir/job.yaml" | tail -n 1
}

# The node's constants, each from calibration runs of their own under
# mpirun (1 worker, 1 row, 300 rounds: no case below): the latency from
# 10 columns (half a round trip's median less its compute), the copy
# rate from 10^5 (the same with 800 KB each way), and the model's
# coordinator_us and coordinator_ns from rank 0's busy time a round in
# the two (coordinator_busy x time / rounds, medians: a message taken
# and one sent a round, the doubles of both; less, at 10^5, its receive
# of the answer at the copy rate, which the simulation charges apart);
# the cores are this machine's.
node_constants() {
    cores=$(nproc)
    for cols in 10 100000; do
        cat > "$dir/link.yaml" <<YAML
seed: 5
algorithm: {plugin: gd, step: auto}
problem: {plugin: lrmse, rows: 1, cols: $cols}
pool: {wait: {nwait: 0}}
stop: {iterations: 300}
YAML
        : > "$dir/comm"
        : > "$dir/r0"
        r=0
        while [ "$r" -lt "$REPS" ]; do
            timeout -k 5 120 "$MPIRUN" -np 2 --oversubscribe --bind-to none \
                "$AIARUN" -q -o output.workers="$dir/lw.csv" "$dir/link.yaml" |
                tail -n 1 > "$dir/link"
            awk -F, 'NR == 2 { print $17 }' "$dir/lw.csv" >> "$dir/comm"
            awk -v b="$(field coordinator_busy < "$dir/link")" \
                -v t="$(field time < "$dir/link")" \
                -v i="$(field iterations < "$dir/link")" \
                'BEGIN { print b * t / i }' >> "$dir/r0"
            r=$((r + 1))
        done
        comm=$(median < "$dir/comm")
        r0=$(median < "$dir/r0")
        dbl=$(awk -v p="$(field sent_payload < "$dir/link")" \
            -v q="$(field recv_payload < "$dir/link")" \
            -v i="$(field iterations < "$dir/link")" 'BEGIN { print (p + q) / 8 / i }')
        if [ "$cols" = 10 ]; then
            lat=$(awk -v c="$comm" 'BEGIN { printf "%.3g", c / 2 * 1e6 }')
            r0a=$r0 dbla=$dbl
        else
            bytes=$(awk -v s="$(field sent_bytes < "$dir/link")" \
                -v q="$(field iterations < "$dir/link")" 'BEGIN { print s / q }')
            mbps=$(awk -v c="$comm" -v l="$lat" -v b="$bytes" \
                'BEGIN { printf "%.4g", 2 * b * 8 / (c - 2 * l * 1e-6) / 1e6 }')
            # rank 0's busy time holds its receive of the 800 KB answer
            # (aiarun(1), coordinator_busy), which simulate.cores charges
            # at the copy rate on its own: out of the model's doubles
            r0=$(awk -v r="$r0" -v b="$bytes" -v m="$mbps" \
                'BEGIN { print r - b * 8 / (m * 1e6) }')
            ns=$(awk -v a="$r0a" -v b="$r0" -v da="$dbla" -v db="$dbl" \
                'BEGIN { n = (b - a) / (db - da) * 1e9; printf "%.4g", (n > 0 ? n : 0) }')
            us=$(awk -v a="$r0a" -v da="$dbla" -v n="$ns" \
                'BEGIN { u = (a - da * n * 1e-9) / 2 * 1e6; printf "%.4g", (u > 0 ? u : 0) }')
        fi
    done
    printf '# node: %s cores, latency_us %s, bandwidth_mbps %s (%s bytes a message), coordinator_us %s, coordinator_ns %s\n' \
        "$cores" "$lat" "$mbps" "$bytes" "$us" "$ns"
}

header() {
    printf '%-8s %-6s | %9s %6s %6s | %-9s %9s %6s | %6s\n' workers mode \
        "mpi s" "spread" "busy" "sim" "sim s" "busy" "sim/mpi"
}

# one_case N MODE ROWS [PER]: gd on 10^5 columns, ROWS rows a worker, N
# workers waiting for all (MODE all: 100 iterations) or in async mode
# (PER answers a worker, 100 by default)
one_case() {
    n=$1 mode=$2 per=${4:-100}
    cat > "$dir/big.yaml" <<YAML
seed: 5
algorithm: {plugin: gd, step: auto}
problem: {plugin: lrmse, rows: $(($3 * n)), cols: 100000}
pool: {$(if [ "$mode" = async ]; then echo 'mode: async'; else echo 'wait: {nwait: 0}'; fi)}
simulate: {compute: measured, latency_us: $lat, bandwidth_mbps: $mbps, cores: $cores, coordinator_us: $us, coordinator_ns: $ns}
stop: {iterations: $(if [ "$mode" = async ]; then echo $((per * n)); else echo 100; fi)}
YAML
    : > "$dir/mpi"
    r=0
    while [ "$r" -lt "$REPS" ]; do
        timeout -k 5 300 "$MPIRUN" -np $((n + 1)) --oversubscribe \
            --bind-to none "$AIARUN" -q \
            -o output.workers="$dir/mw$r.csv" "$dir/big.yaml" |
            tail -n 1 >> "$dir/mpi"
        r=$((r + 1))
    done
    mt=$(field time < "$dir/mpi" | median)
    mb=$(field coordinator_busy < "$dir/mpi" | median)
    # mpirun's own spread: its slowest repetition over its fastest
    ms=$(field time < "$dir/mpi" | sort -g |
        awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f", hi / lo }')
    # measured and model on the node; measured with a core a
    # rank (cores 0) and none, to show what each term gives
    for c in measured model measured/0 none/0; do
        "$AIARUN_SIM" -q --simulate "$n" -o output.workers="$dir/sw.csv" \
            -o simulate.coordinator="${c%/0}" \
            $(case $c in */0) echo -o simulate.cores=0 ;; esac) \
            "$dir/big.yaml" 2>/dev/null | tail -n 1 > "$dir/sim"
        st=$(field time < "$dir/sim")
        sb=$(field coordinator_busy < "$dir/sim")
        printf '%-8s %-6s | %9s %6s %6s | %-9s %9s %6s | %6.3f\n' "$n" \
            "$mode" "$mt" "$ms" "$mb" "$c" "$st" "${sb:--}" \
            "$(awk -v a="$st" -v b="$mt" 'BEGIN { print a / b }')"
        [ "$c" = measured ] && cp "$dir/sw.csv" "$dir/swm.csv" &&
            sbm=$sb && stm=$st
    done
    # a round (an iteration) in ms: its time, rank 0's busy part,
    # and a worker's compute and the rest of its round trip (the
    # messages, and waiting for rank 0 or a core): each worker's
    # mean and median, the median over the workers (mpirun's
    # median run's)
    r=0
    while [ "$r" -lt "$REPS" ]; do
        [ "$(field time < "$dir/mpi" | sed -n "$((r + 1))p")" = "$mt" ] &&
            cp "$dir/mw$r.csv" "$dir/mwm.csv"
        r=$((r + 1))
    done
    it=$(field iterations < "$dir/sim")
    for side in mpi sim; do
        if [ $side = mpi ]; then f=$dir/mwm.csv t=$mt b=$mb
        else f=$dir/swm.csv t=$stm b=$sbm; fi
        printf '#   %s: round %.3f ms, rank 0 busy %.3f, compute %.3f (median %.3f), rest of the trip %.3f (%.3f)\n' \
            $side "$(awk -v t="$t" -v i="$it" 'BEGIN { print t / i * 1e3 }')" \
            "$(awk -v t="$t" -v i="$it" -v b="$b" 'BEGIN { print t * b / i * 1e3 }')" \
            "$(awk -F, 'NR > 1 { print $13 * 1e3 }' "$f" | median)" \
            "$(awk -F, 'NR > 1 { print $14 * 1e3 }' "$f" | median)" \
            "$(awk -F, 'NR > 1 { print $16 * 1e3 }' "$f" | median)" \
            "$(awk -F, 'NR > 1 { print $17 * 1e3 }' "$f" | median)"
    done
    rm -f "$dir"/mw*.csv
}

coordinator_cases() {
    node_constants
    printf '\n# rank 0 bound: gd, 100000 columns, 8 rows a worker\n'
    header
    for n in $WORKERS; do
        one_case "$n" all 8
        one_case "$n" async 8
    done
    # rank 0 saturated: a worker's step (1 row) is a fraction of rank 0's
    # work an answer, so that from 2 workers rank 0 sets the pace and
    # both sides should say it is busy near all of the run
    printf '\n# rank 0 saturated: gd async, 100000 columns, 1 row a worker\n'
    header
    for n in $WORKERS; do
        [ "$n" -lt 2 ] || one_case "$n" async 1 400
    done
}

if [ "$CASES" = coordinator ]; then
    coordinator_cases
    exit 0
fi

printf '%-8s %-6s %-6s | %8s %9s | %8s %9s | %6s\n' workers nwait delays \
    "mpi it" "mpi s" "sim it" "sim s" "sim/mpi"
for n in 4 8; do
    job "$n" 0 none > "$dir/job.yaml"
    mpi "$n" -o stragglers.work_ms=2 -o stop.gap=0 -o stop.iterations=300 \
        -o output.workers="$dir/w.csv" > /dev/null
    lat=$(awk -F, 'NR > 1 { s += $9 } END { printf "%.0f", (s / (NR - 1) - 0.002) / 2 * 1e6 }' \
        "$dir/w.csv")
    echo "# $n workers: latency_us $lat (a round trip's median less its work, halved)"
    for d in fixed markov; do
        trees=
        [ "$n" = 8 ] && trees=tree
        for nw in 3 0 $trees; do
            job "$n" "$nw" "$d" > "$dir/job.yaml"
            : > "$dir/mpi"
            r=0
            while [ "$r" -lt "$REPS" ]; do
                mpi "$n" >> "$dir/mpi"
                r=$((r + 1))
            done
            "$AIARUN_SIM" -q --simulate "$n" -o simulate.latency_us="$lat" \
                "$dir/job.yaml" 2>/dev/null | tail -n 1 > "$dir/sim"
            mi=$(field iterations < "$dir/mpi" | median)
            mt=$(field time < "$dir/mpi" | median)
            si=$(field iterations < "$dir/sim")
            st=$(field time < "$dir/sim")
            printf '%-8s %-6s %-6s | %8s %9s | %8s %9s | %6.3f\n' "$n" \
                "$(case $nw in 0) echo all ;; *) echo "$nw" ;; esac)" "$d" "$mi" "$mt" \
                "$si" "$st" "$(awk -v a="$st" -v b="$mt" 'BEGIN { print a / b }')"
        done
    done
done
coordinator_cases
