# large.sh - case large: rounds of large models.  A round of aiarun with
# bench/noop.c on bench/nullprob.c (as case 1) at 1e5, 1e6 and 1e7
# doubles with 1, 2 and 4 workers, side by side with bench/star.c (the
# plain MPI star, with malloc's buffers and with buffers on huge pages
# as aiarun's) and against a memcpy of the round's bytes (2 messages a
# worker, timed by bench/coordcost); rank 0's peak resident memory
# (VmHWM, from aiarun -v) per worker in message sizes; and the
# coordinator's work per answer at 1e6 doubles (bench/coordcost: absorb,
# query and a float32 encoding for sgd, gd and average).  Sourced by
# bench/run.sh.  LARGE_DIMS and LARGE_WORKERS choose the cells (1e7
# doubles are 80 MB a message: about 2 GB on the machine with 4
# workers).

: "${LARGE_DIMS:=100000 1000000 10000000}"
: "${LARGE_WORKERS:=1 2 4}"

# Rounds per run: a few tenths of a second each.
large_rounds() {
    case $1 in
    100000) echo 100 ;;
    1000000) echo 40 ;;
    *) echo 10 ;;
    esac
}

case_large() {
    job=$OUT/large.yaml
    cat >"$job" <<'YAML'
# bench: the protocol alone at large sizes (answer = query, no data)
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
  iterations: 10
YAML
    for dim in $LARGE_DIMS; do
        AIARUN_PLUGIN_PATH=$AIARUN_PLUGIN_PATH "$BIN/coordcost" "$dim" 11 \
            >"$OUT/large-cost-$dim.txt" 2>&1
    done
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "large: repetition $rep of $BENCH_REPS"
        for dim in $LARGE_DIMS; do
            rounds=$(large_rounds "$dim")
            for nw in $LARGE_WORKERS; do
                np=$((nw + 1))
                case $((rep % 3)) in
                1) order="aiarun plain huge" ;;
                2) order="plain huge aiarun" ;;
                *) order="huge aiarun plain" ;;
                esac
                for prog in $order; do
                    us=
                    case $prog in
                    aiarun)
                        line=$(brun "$np" "$AIARUN" -v -o "problem.dim=$dim" \
                            -o "stop.iterations=$rounds" "$job" \
                            2>"$OUT/large.err" | tail -n 1)
                        t=$(field time "$line")
                        it=$(field iterations "$line")
                        [ -n "$t" ] && [ -n "$it" ] && us=$(calc "1e6 * $t / $it")
                        kb=$(sed -n 's/^aiarun\[0\]: peak memory \([0-9]*\) kB.*/\1/p' \
                            "$OUT/large.err")
                        record large "rss0/$dim/$nw" "$rep" "$kb"
                        ;;
                    plain | huge)
                        mode=waitsome
                        [ "$prog" = huge ] && mode=huge
                        line=$(brun "$np" "$BIN/star" "$dim" "$rounds" 0 "$mode")
                        us=$(field us_per_round "$line")
                        ;;
                    esac
                    record large "$prog/$dim/$nw" "$rep" "$us"
                done
            done
        done
        rep=$((rep + 1))
    done
    large_table >"$OUT/large.md"
}

# large_cost DIM WHAT : microseconds of one coordcost measurement.
large_cost() {
    sed -n "s/^what=$2 us=\\([^ ]*\\) .*/\\1/p" "$OUT/large-cost-$1.txt"
}

large_table() {
    cat <<'EOF2'
## Large models: rounds of 1e5 to 1e7 doubles

µs per round (median of the repetitions) of a round in which the
coordinator sends a query of 64 + 8·N bytes to every worker and waits
for all of them to answer with as many bytes: **aiarun** (`bench/noop.c`
on `bench/nullprob.c`, as in case 1) and **plain** (`bench/star.c`),
side by side, and **huge**, the plain star with its buffers on huge
pages as aiarun's are from 2 MiB (`star ... huge`); **memcpy** is one
memcpy of a message's bytes on rank 0 (`bench/coordcost`) times the round's 2 × workers messages, the cost of
moving the round's bytes once in memory. **rank 0 peak** is its VmHWM
(`aiarun -v`), and **per worker** that peak over workers × message size:
how many copies of a message rank 0 holds per worker (send buffers,
receive buffer, the plugin's model). Target: aiarun within 1.2x of plain
at 1e6 and 1e7 doubles.

| doubles | workers | aiarun µs | plain µs | huge µs | memcpy µs | aiarun / plain | ≤ 1.2 | aiarun / huge | aiarun / memcpy | rank 0 peak MB | per worker, messages |
|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|
EOF2
    for dim in $LARGE_DIMS; do
        mc=$(large_cost "$dim" memcpy)
        for nw in $LARGE_WORKERS; do
            a=$(med large "aiarun/$dim/$nw")
            p=$(med large "plain/$dim/$nw")
            h=$(med large "huge/$dim/$nw")
            r=$(ratio large "aiarun/$dim/$nw" "plain/$dim/$nw")
            rh=$(ratio large "aiarun/$dim/$nw" "huge/$dim/$nw")
            kb=$(med large "rss0/$dim/$nw")
            m=
            [ -n "$mc" ] && m=$(calc "$mc * 2 * $nw")
            rm=nan
            [ -n "$m" ] && holds "$a < 1e299" && rm=$(calc "$a / $m")
            mb=$(calc "$kb / 1024")
            per=$(calc "$kb * 1024 / ($nw * (64 + 8 * $dim))")
            ok=1
            case $dim in 100000) ;; *) holds "$r <= 1.2" || ok=0 ;; esac
            v=$(verdict "$ok")
            [ "$dim" = 100000 ] && v="-"
            echo "| $dim | $nw | $(fmt "$a") | $(fmt "$p") | $(fmt "$h") | $(fmt "$m") | $r | $v | $rh | $(fmt "$rm") | $(fmt "$mb") | $(fmt "$per") |"
        done
    done
    cat <<'EOF2'

The coordinator's work per answer at 1e6 doubles (`bench/coordcost
1000000`: one process, no MPI, a pool of 4 workers; median of 11 single
calls, and the least, in µs; the ratio is to a memcpy of one message's
doubles). absorb takes one answer; query writes the round's query;
encode is pool.codec.query: float32 of one query.

| what | µs | least µs | / memcpy |
|---|---:|---:|---:|
EOF2
    f=$OUT/large-cost-1000000.txt
    [ -f "$f" ] || f=$(ls "$OUT"/large-cost-*.txt 2>/dev/null | head -n 1)
    [ -n "$f" ] && "$AWK" '{
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "| %s | %s | %s | %s |\n", v["what"], v["us"], v["min_us"], v["per_memcpy"]
    }' "$f"
    echo
}
