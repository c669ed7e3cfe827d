# race.sh - case race (only when named: BENCH_CASES=race, 2 to 4
# minutes a repetition): etc/mlp-fashion-mnist.yaml, the MLP 784-128-10 on
# Fashion-MNIST, to 87% test accuracy with 4 workers, side by side with
# PyTorch's SGD on the same network in one process of one thread, and
# with PyTorch's DistributedDataParallel over gloo in 4 processes; each
# without and with a straggler: the example's stragglers.fixed delay on
# one worker, and the same sleep before each backward pass of one of the
# 4 DDP processes (bench/peers.py race).  Sourced by bench/run.sh.
#
# RACE_DELAY (default: the example's delay_ms) is the straggler's delay
# in ms; RACE_EVERY (default 100) the example's history rows, every this
# many iterations, whose first at 87% gives aiarun's time.

RACE_JOB=$top_srcdir/etc/mlp-fashion-mnist.yaml
RACE_FMNIST=${PEERS_FMNIST:-/usr/share/datasets/fashion-mnist}
RACE_PY=${PEERS_PY:-/usr/bin/python3}

# race_aia REP KEY DELAY : aiarun's time to 87% with the straggler's delay
race_aia() {
    csv=$OUT/race-$2-$1.csv
    BENCH_TIMEOUT=600 brun 5 "$AIARUN" -q "$RACE_JOB" -o output.history="$csv" \
        -o output.every="${RACE_EVERY:-100}" -o output.final= \
        -o stragglers.fixed.delay_ms="$3" >"$OUT/race-$2-$1.out"
    record race "$2_s" "$1" "$("$AWK" -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "time") c = i; if ($i == "test_accuracy") a = i }; next }
        a && $a + 0 >= 0.87 { print $c; found = 1; exit }
        END { if (!found) print "nan" }' "$csv")"
    record race "$2_it" "$1" "$("$AWK" -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "test_accuracy") a = i; next }
        a && $a + 0 >= 0.87 { print $1; found = 1; exit }
        END { if (!found) print "nan" }' "$csv")"
}

# race_torch REP KEY PROCS DELAY : PyTorch's time and steps to 87%
race_torch() {
    out=$("$RACE_PY" "$here/peers.py" race "$RACE_FMNIST" "$3" "$4" 2>/dev/null)
    tag=race
    [ "$3" -gt 1 ] && tag=ddp
    record race "$2_s" "$1" "$(printf '%s\n' "$out" | sed -n "s/^torch_${tag}_s=//p")"
    record race "$2_it" "$1" "$(printf '%s\n' "$out" | sed -n "s/^torch_${tag}_steps=//p")"
    record race missing_torch "$1" "$(printf '%s\n' "$out" | sed -n 's/^missing_torch=//p')"
}

case_race() {
    if [ ! -r "$RACE_FMNIST/train-images-idx3-ubyte.gz" ] ||
        ! "$RACE_PY" -c 'import torch' 2>/dev/null; then
        printf '## 14. MLP to 87%%: aiarun against PyTorch and DDP\n\nNot measured: %s.\n\n' \
            "Fashion-MNIST ($RACE_FMNIST) or PyTorch ($RACE_PY) is missing" >"$OUT/race.md"
        return
    fi
    delay=${RACE_DELAY:-$(sed -n 's/^ *delay_ms: *\([0-9.]*\).*/\1/p' "$RACE_JOB" | head -n 1)}
    rep=1
    while [ "$rep" -le "$BENCH_REPS" ]; do
        say "race: repetition $rep of $BENCH_REPS (straggler ${delay} ms)"
        race_torch "$rep" torch 1 0
        race_aia "$rep" aia 0
        race_torch "$rep" ddp 4 0
        race_aia "$rep" aia_slow "$delay"
        race_torch "$rep" ddp_slow 4 "$delay"
        rep=$((rep + 1))
    done
    race_table "$delay" >"$OUT/race.md"
}

race_table() {
    c=race
    cat <<EOT
## 14. MLP to 87%: aiarun against PyTorch and DDP

\`etc/mlp-fashion-mnist.yaml\` as it is (4 workers; its history every
${RACE_EVERY:-100} iterations, whose test accuracy reads the 10,000 test
images and whose training loss a sample of 10,000 rows) under \`mpirun -np
5\`: the time column of the first history row at 87% test accuracy.
PyTorch (\`bench/peers.py race\`): the same network in float32, SGD with
step 0.1, momentum 0.9 and batches of 128, the test accuracy checked
every 50 steps, timed from the first step to the check at 87%: one
process of one thread, and DistributedDataParallel over gloo in 4
processes of one thread, 32 rows each a step. With a straggler: the
example's \`stragglers.fixed\` delay of $1 ms on one worker's answers
(rounds end at the 3 fastest), and a sleep of $1 ms before every backward
pass of one DDP process. Steps: aiarun's iterations, PyTorch's SGD
steps. Medians of ${BENCH_REPS} runs; ratios the medians of the
per-run ratios. Targets: aiarun within 2x of one PyTorch process, and
faster than DDP with and without the straggler.

| run | aiarun s | steps | PyTorch 1 process s | steps | aiarun / PyTorch | DDP 4 processes s | steps | aiarun / DDP | target |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---|
EOT
    r1=$(ratio $c aia_s torch_s)
    rd=$(ratio $c aia_s ddp_s)
    printf '| no straggler | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
        "$(fmt "$(med $c aia_s)")" "$(fmti "$(med $c aia_it)")" \
        "$(fmt "$(med $c torch_s)")" "$(fmti "$(med $c torch_it)")" "$r1" \
        "$(fmt "$(med $c ddp_s)")" "$(fmti "$(med $c ddp_it)")" "$rd" \
        "$(verdict "$(holds "$r1 <= 2 && $rd < 1" && echo 1)")"
    r1=$(ratio $c aia_slow_s torch_s)
    rd=$(ratio $c aia_slow_s ddp_slow_s)
    printf '| straggler %s ms | %s | %s | (as above) | | %s | %s | %s | %s | %s |\n\n' \
        "$1" "$(fmt "$(med $c aia_slow_s)")" "$(fmti "$(med $c aia_slow_it)")" \
        "$r1" "$(fmt "$(med $c ddp_slow_s)")" "$(fmti "$(med $c ddp_slow_it)")" "$rd" \
        "$(verdict "$(holds "$r1 <= 2 && $rd < 1" && echo 1)")"
}
