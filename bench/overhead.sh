# overhead.sh - case 1, protocol overhead: a round of aiarun with an
# algorithm and a problem that do nothing (bench/noop.c, bench/nullprob.c;
# no history, so no loss in the loop) against bench/star.c, a plain MPI
# program doing the same star exchange with the same message sizes.
# Sourced by bench/run.sh.

OVERHEAD_DIMS="10 1000 100000"
OVERHEAD_WORKERS="1 2 4"

# Rounds per run: about a quarter of a second each on this machine.
overhead_rounds() {
    case $1 in
    10) echo 4000 ;;
    1000) echo 3000 ;;
    *) echo 200 ;;
    esac
}

case_overhead() {
    job=$OUT/noop.yaml
    cat >"$job" <<'YAML'
# bench: the protocol alone (answer = query, nothing absorbed, no data)
seed: 1
algorithm:
  plugin: noop
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
        say "overhead: repetition $rep of $BENCH_REPS"
        for dim in $OVERHEAD_DIMS; do
            rounds=$(overhead_rounds "$dim")
            for nw in $OVERHEAD_WORKERS; do
                np=$((nw + 1))
                # alternate the order, so that no program always runs
                # first
                if [ $((rep % 2)) = 1 ]; then
                    order="aiarun plain spin poll timer persistent"
                else
                    order="persistent timer poll spin plain aiarun"
                fi
                for prog in $order; do
                    us=
                    case $prog in
                    aiarun | spin | timer)
                        poll=auto wake=bell
                        [ "$prog" = spin ] && poll=spin
                        [ "$prog" = timer ] && wake=timer
                        line=$(aia "$np" "$job" -o "problem.dim=$dim" \
                            -o "stop.iterations=$rounds" -o "pool.poll=$poll" \
                            -o "pool.wake=$wake")
                        t=$(field time "$line")
                        it=$(field iterations "$line")
                        [ -n "$t" ] && us=$(calc "1e6 * $t / $it")
                        ;;
                    plain | poll | persistent)
                        wait=waitsome
                        [ "$prog" = poll ] && wait=poll
                        [ "$prog" = persistent ] && wait=persistent
                        line=$(brun "$np" "$BIN/star" "$dim" "$rounds" 0 \
                            "$wait")
                        us=$(field us_per_round "$line")
                        ;;
                    esac
                    record overhead "$prog/$dim/$nw" "$rep" "$us"
                done
            done
        done
        rep=$((rep + 1))
    done
    overhead_table >"$OUT/overhead.md"
}

overhead_table() {
    cat <<'EOF'
## 1. Protocol overhead

µs per round (median of the repetitions) of a round in which the
coordinator sends a query of 64 + 8·N bytes to every worker and waits for
all of them to answer with as many bytes. **aiarun**: `bench/noop.c`
(answer = query) on `bench/nullprob.c` (no data, loss 0), history off, so
nothing but the protocol is in the loop; time and iterations from the
summary line. **plain**: `bench/star.c`, the same exchange written
directly: `MPI_Isend` of the query to each worker, `MPI_Waitsome` on the
posted receives until the answers are in; workers `MPI_Recv`, copy the
query into the answer, `MPI_Send` it back. **plain, aiarun's polling**:
the same program waiting as `runtime/mpi/poll.c` does (Testsome alone for
20 µs, with `sched_yield` until 50 µs, then sleeps of 1/32 of the time
waited, at most 100 µs), to
tell the waiting strategy's share from the rest. **aiarun, spin** is
aiarun with `pool.poll: spin` (tests without sleeping for the expected
round trip whatever the node; the default, `auto`, spins only where the
node has a core for every rank: on 2 cores, with 1 worker). **aiarun,
timer** is aiarun with `pool.wake: timer`: a sleeping rank notices a
message at its sleep's end, where the default has the sender on the
node wake it (its doorbell). **plain, persistent** is the plain star
with persistent requests (`MPI_Send_init`, `MPI_Recv_init` once, then
`MPI_Start` each round), the MPI means for a loop that repeats the same
exchange. Ratios are medians over
repetitions of the ratio of runs made side by side; the target is aiarun
within 1.1x of plain in every cell.

| doubles | workers | aiarun µs | aiarun, spin µs | aiarun, timer µs | plain µs | plain, aiarun's polling µs | plain, persistent µs | aiarun / plain | ≤ 1.1 | spin / plain | timer / plain | aiarun / plain-polling | persistent / plain |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|
EOF
    for dim in $OVERHEAD_DIMS; do
        for nw in $OVERHEAD_WORKERS; do
            a=$(med overhead "aiarun/$dim/$nw")
            sp=$(med overhead "spin/$dim/$nw")
            rs=$(ratio overhead "spin/$dim/$nw" "plain/$dim/$nw")
            tm=$(med overhead "timer/$dim/$nw")
            rt=$(ratio overhead "timer/$dim/$nw" "plain/$dim/$nw")
            p=$(med overhead "plain/$dim/$nw")
            q=$(med overhead "poll/$dim/$nw")
            pe=$(med overhead "persistent/$dim/$nw")
            rp=$(ratio overhead "persistent/$dim/$nw" "plain/$dim/$nw")
            r=$(ratio overhead "aiarun/$dim/$nw" "plain/$dim/$nw")
            rq=$(ratio overhead "aiarun/$dim/$nw" "poll/$dim/$nw")
            ok=0
            holds "$r <= 1.1" && ok=1
            echo "| $dim | $nw | $(fmt "$a") | $(fmt "$sp") | $(fmt "$tm") | $(fmt "$p") | $(fmt "$q") | $(fmt "$pe") | $r | $(verdict $ok) | $rs | $rt | $rq | $rp |"
        done
    done
    echo
}
