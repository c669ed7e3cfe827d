# compress.sh - case 6, compression: the same gd job on lrmse (1000
# columns, so that a message is 8 KB of doubles) over an emulated link of
# COMPRESS_MBPS Mbit/s to each worker (stragglers.link_mbps: a worker
# waits for its query's and its answer's bytes to cross it before it
# answers; an emulation, not a network), once with each codec, side by
# side in every repetition.  Time to accuracy is read from the history
# (a row every iteration): the first time the loss is within 1e-3 of the
# optimum (relative), and within 1e-2 for the codecs that cannot reach
# 1e-3 in the run's COMPRESS_ITERS iterations.  Bytes are the run's bytes
# on the wire per iteration times the iterations to the target.  Sourced
# by bench/run.sh.

COMPRESS_MBPS=20
COMPRESS_ITERS=400
COMPRESS_CODECS="none/none float32/float32 float16/float16 float32/bfloat16 float32/topk zstd/zstd"

compress_job() {
    cat <<YAML
seed: 7
algorithm:
  plugin: gd
  step: 0.5
problem:
  plugin: lrmse
  rows: 4000
  cols: 1000
  noise: 0.1
  condition: 4
pool:
  codec:
    topk: 0.1
stragglers:
  link_mbps: $COMPRESS_MBPS
stop:
  gap: 1e-3
  iterations: $COMPRESS_ITERS
  time: 30
output:
  history: $OUT/compress-history.csv
YAML
}

case_compress() {
    compress_job >"$OUT/compress.yaml"
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "compress: repetition $rep of $BENCH_REPS"
        for c in $COMPRESS_CODECS; do
            q=${c%/*} a=${c#*/}
            line=$(aia 5 "$OUT/compress.yaml" -o pool.codec.query="$q" \
                -o pool.codec.answer="$a")
            it=$(field iterations "$line")
            bytes=$(calc "$(field sent_bytes "$line") + $(field recv_bytes "$line")")
            opt=$(field optimum "$line")
            for t in 1e-3 1e-2; do
                # first row within t of the optimum: time and iteration
                hit=$("$AWK" -F, -v o="$opt" -v t="$t" 'NR > 1 &&
                    $4 <= o * (1 + t) { print $3, $1; exit }' \
                    "$OUT/compress-history.csv")
                if [ -n "$hit" ]; then
                    record compress "$c time $t" "$rep" "${hit% *}"
                    record compress "$c bytes $t" "$rep" \
                        "$(calc "$bytes / $it * ${hit#* }")"
                else
                    record compress "$c time $t" "$rep" nan
                    record compress "$c bytes $t" "$rep" nan
                fi
            done
            record compress "$c ratio" "$rep" "$(field ratio "$line")"
        done
        rep=$((rep + 1))
    done
    compress_table >"$OUT/compress.md"
}

# compress_mb KEY : the median of a byte count in MB (nan: none).
compress_mb() {
    _v=$(med compress "$1")
    if holds "$_v >= 1e299"; then echo nan; else calc "$_v / 1e6"; fi
}

compress_table() {
    cat <<EOF
## 8. Compression

gd on lrmse (4000 rows, 1000 columns, κ 4; 4 workers, every worker
each round, so every codec takes the same steps up to its rounding),
over an emulated ${COMPRESS_MBPS} Mbit/s link to each worker
(\`stragglers.link_mbps\`: before answering, a worker waits for its
query's and its answer's bytes, headers included, to cross it). Time to
accuracy: the first history row whose loss is within 1e-3 (and 1e-2)
of the optimum, relative; bytes: the run's bytes on the wire, both ways,
per iteration, times the iterations to that row. Medians of ${BENCH_REPS}
repetitions, codecs side by side in each; "-": not reached in
${COMPRESS_ITERS} iterations. Ratios are against none, from the same
repetition. top-k keeps 10% of each answer, with error feedback.

| query / answer | payload ratio | time to 1e-3 (s) | bytes to 1e-3 (MB) | time vs none | bytes vs none | time to 1e-2 (s) | bytes to 1e-2 (MB) |
|---|---:|---:|---:|---:|---:|---:|---:|
EOF
    for c in $COMPRESS_CODECS; do
        printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" \
            "$(fmt "$(med compress "$c ratio")")" \
            "$(fmt "$(med compress "$c time 1e-3")")" \
            "$(fmt "$(compress_mb "$c bytes 1e-3")")" \
            "$(fmt "$(ratio compress "$c time 1e-3" "none/none time 1e-3")")" \
            "$(fmt "$(ratio compress "$c bytes 1e-3" "none/none bytes 1e-3")")" \
            "$(fmt "$(med compress "$c time 1e-2")")" \
            "$(fmt "$(compress_mb "$c bytes 1e-2")")"
    done
    echo
}
