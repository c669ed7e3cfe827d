# shards.sh - case shards: the model split over coordinator ranks
# (pool.shards).  gd on bench/nullprob.c (no data, gradient 0: nothing
# but the protocol) at 1e6 doubles with 4 workers, and S = 1, 2 and 4
# coordinator ranks side by side in every repetition: µs per round, and
# the bytes each coordinator rank received and sent (the summary's
# recv_bytes and sent_bytes for S = 1, coord_recv_bytes and
# coord_sent_bytes for S > 1), as ratios to S = 1.  Sourced by
# bench/run.sh.  SHARDS_DIM, SHARDS_LIST, SHARDS_ROUNDS and
# SHARDS_WORKERS choose the cells (bench/device.sh runs 12 workers, so
# that S = 4 makes 16 ranks).

: "${SHARDS_DIM:=1000000}"
: "${SHARDS_LIST:=1 2 4}"
: "${SHARDS_ROUNDS:=20}"
: "${SHARDS_WORKERS:=4}"

# shards_max LIST : the largest of comma-separated numbers.
shards_max() {
    printf '%s\n' "$1" | tr ',' '\n' | "$AWK" 'NR == 1 || $1 > m { m = $1 } END { print m }'
}

case_shards() {
    job=$OUT/shards.yaml
    cat >"$job" <<'YAML'
# bench: gd's rounds with the model on S coordinator ranks (no data)
seed: 1
algorithm:
  plugin: gd
  step: 0.1
problem:
  plugin: nullprob
  dim: 10
pool:
  wait:
    nwait: 0
stop:
  iterations: 10
YAML
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "shards: repetition $rep of $BENCH_REPS"
        order=$SHARDS_LIST
        [ $((rep % 2)) = 0 ] && order=$(printf '%s\n' $SHARDS_LIST | sort -rn)
        for S in $order; do
            line=$(aia $((SHARDS_WORKERS + S)) "$job" -o "problem.dim=$SHARDS_DIM" \
                -o "pool.shards=$S" -o "stop.iterations=$SHARDS_ROUNDS")
            t=$(field time "$line")
            it=$(field iterations "$line")
            us=
            [ -n "$t" ] && [ -n "$it" ] && us=$(calc "1e6 * $t / $it")
            if [ "$S" = 1 ]; then
                r0=$(field recv_bytes "$line") s0=$(field sent_bytes "$line")
                rmax=$r0 smax=$s0
            else
                rl=$(field coord_recv_bytes "$line")
                sl=$(field coord_sent_bytes "$line")
                r0=${rl%%,*} s0=${sl%%,*}
                rmax=$(shards_max "$rl") smax=$(shards_max "$sl")
            fi
            record shards "us/$S" "$rep" "$us"
            record shards "recv0/$S" "$rep" "$r0"
            record shards "recvmax/$S" "$rep" "$rmax"
            record shards "sent0/$S" "$rep" "$s0"
            record shards "sentmax/$S" "$rep" "$smax"
        done
        rep=$((rep + 1))
    done
    shards_table >"$OUT/shards.md"
}

shards_table() {
    cat <<EOF2
## Shard ranks: the model on S coordinator ranks

gd on \`bench/nullprob.c\` (no data, gradient 0) at $SHARDS_DIM doubles,
$SHARDS_WORKERS workers, every worker every round, $SHARDS_ROUNDS rounds a run, with
\`pool.shards\` S = $(echo $SHARDS_LIST | sed 's/ /, /g') (\`mpirun -np\` $SHARDS_WORKERS + S), side by side
in every repetition: µs per round (median), and the megabytes
(10^6 bytes) received and sent over the run by rank 0 and by the
busiest coordinator rank, with the ratios to S = 1 (medians of the
per-repetition ratios). Target: the busiest rank's bytes, both ways,
within 1.2/S of one coordinator's.

| S | µs per round | / S = 1 | rank 0 recv MB | busiest recv MB | / S = 1 | rank 0 sent MB | busiest sent MB | / S = 1 | ≤ 1.2/S |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|
EOF2
    for S in $SHARDS_LIST; do
        us=$(med shards "us/$S")
        rt=$(ratio shards "us/$S" "us/1")
        rr=$(ratio shards "recvmax/$S" "recvmax/1")
        rs=$(ratio shards "sentmax/$S" "sentmax/1")
        ok=0
        holds "$rr <= 1.2 / $S && $rs <= 1.2 / $S" && ok=1
        echo "| $S | $(fmt "$us") | $rt | $(fmt "$(calc "$(med shards "recv0/$S") / 1e6")") | $(fmt "$(calc "$(med shards "recvmax/$S") / 1e6")") | $rr | $(fmt "$(calc "$(med shards "sent0/$S") / 1e6")") | $(fmt "$(calc "$(med shards "sentmax/$S") / 1e6")") | $rs | $(verdict "$ok") |"
    done
    echo
}
