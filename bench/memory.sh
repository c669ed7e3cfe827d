# memory.sh - case 10, memory: each rank's peak resident memory (VmHWM,
# which aiarun -v logs at the end of a run) against the size of a data
# file: MEMORY_ROWS rows of 50 features and a target as CSV, then 4 and 16
# times as many.  gd on lrmse, 4 workers, MEMORY_ITERS iterations, once
# with delivery read and once with scatter.  The coordinator holds no row
# (the workers compute the loss, lrmse's optimum comes from their Gram
# sums), so its peak must stay flat while each worker's grows with its
# share; with scatter rank 0 holds one worker's share at a time while it
# sends.  Sourced by bench/run.sh.

MEMORY_ROWS=12500
MEMORY_ITERS=20

# memory_csv ROWS FILE : ROWS rows of 50 uniform features and a target.
memory_csv() {
    "$AWK" -v m="$1" 'BEGIN {
        srand(11)
        for (j = 1; j <= 50; j++) printf "x%d,", j
        print "y"
        for (r = 0; r < m; r++) {
            y = 0
            for (j = 1; j <= 50; j++) {
                v = rand() * 2 - 1
                y += v * (j % 7 - 3)
                printf "%.6f,", v
            }
            printf "%.6f\n", y + rand() * 0.1
        }
    }' >"$2"
}

# memory_peaks LOG : "rank kB" lines from a -v run's stderr.
memory_peaks() {
    sed -n 's/^aiarun\[\([0-9]*\)\]: peak memory \([0-9]*\) kB.*/\1 \2/p' "$1" |
        sort -n
}

case_memory() {
    for f in 1 4 16; do
        rows=$((MEMORY_ROWS * f))
        say "memory: $rows rows"
        memory_csv "$rows" "$OUT/memory-$f.csv"
        record memory "$f file" 1 "$(wc -c <"$OUT/memory-$f.csv")"
        for d in read scatter; do
            cat >"$OUT/memory.yaml" <<YAML
algorithm: {plugin: gd, step: 0.5}
problem:
  plugin: lrmse
  data: {path: $OUT/memory-$f.csv, delivery: $d}
stop: {iterations: $MEMORY_ITERS}
YAML
            brun 5 "$AIARUN" -v "$OUT/memory.yaml" >"$OUT/memory.out" \
                2>"$OUT/memory.err"
            memory_peaks "$OUT/memory.err" >"$OUT/memory.peaks"
            "$AWK" -v f="$f" -v d="$d" '
                $1 == 0 { print "memory\t" f " " d " rank0\t1\t" $2 }
                $1 > 0 { s += $2; n++; if ($2 > mx) mx = $2 }
                END { if (n) { print "memory\t" f " " d " worker\t1\t" s / n
                               print "memory\t" f " " d " wmax\t1\t" mx } }
            ' "$OUT/memory.peaks" >>"$RAW"
            record memory "$f $d gap" 1 "$(field gap "$(tail -n 1 "$OUT/memory.out")")"
        done
        rm -f "$OUT/memory-$f.csv"
    done
    memory_table >"$OUT/memory.md"
}

memory_mb() {
    calc "$(med memory "$1") / 1024"
}

memory_table() {
    cat <<EOF
## 10. Memory per rank

Peak resident memory (VmHWM, logged by \`aiarun -v\` at the end) of each
rank for gd on lrmse over a CSV file of ${MEMORY_ROWS} rows of 50
features and a target, and 4 and 16 times as many rows; 4 workers,
${MEMORY_ITERS} iterations. The coordinator holds no row: the workers
compute the loss on their rows and lrmse's optimum comes from their Gram
sums (the gap column, relative, after ${MEMORY_ITERS} iterations: it
exists because rank 0 assembled the optimum without a row). "worker":
the mean over the 4 workers. With scatter rank 0 holds one worker's
share at a time while it sends, so its peak follows a share, not the
file.

| rows | file (MB) | delivery | rank 0 (MB) | worker (MB) | largest worker (MB) | gap |
|---:|---:|---|---:|---:|---:|---:|
EOF
    for f in 1 4 16; do
        for d in read scatter; do
            printf '| %d | %s | %s | %s | %s | %s | %s |\n' \
                $((MEMORY_ROWS * f)) "$(calc "$(med memory "$f file") / 1e6")" \
                "$d" "$(memory_mb "$f $d rank0")" "$(memory_mb "$f $d worker")" \
                "$(memory_mb "$f $d wmax")" "$(med memory "$f $d gap")"
        done
    done
    r=$(calc "$(med memory "16 read rank0") / $(med memory "1 read rank0")")
    w=$(calc "$(med memory "16 read worker") / $(med memory "1 read worker")")
    cat <<EOF

Rank 0's peak at 16x the rows over its peak at 1x (read): **$r**
(target: within 1.10, $(verdict "$(holds "$r <= 1.10" && echo 1)")); a
worker's: $w.

EOF
}
