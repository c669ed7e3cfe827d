#!/bin/sh
# Shard ranks (pool.shards): the model split over coordinator ranks ends
# at the iterate of one coordinator, to the bit, with each coordinator
# rank's bytes about 1/S of one coordinator's; what shards cannot do is
# refused at the start, naming the keys.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 4000, cols: 301}
stop: {iterations: 40}
output: {final: x.txt, history: h.csv, every: 1}
YAML

# Every worker in every round, four workers whatever S: S shards must
# take each element through the same operations in the same order.
for alg in gd sag average; do
    run 5 -o algorithm.plugin=$alg job.yaml
    is "$rc" 0 "$alg, one coordinator: exits 0"
    mv x.txt x1.txt
    cut -d, -f1,2,4,5 h.csv > h1.csv
    cut -d, -f6 h.csv > c1.csv
    for S in 2 4; do
        run $((4 + S)) -o algorithm.plugin=$alg -o pool.shards=$S job.yaml
        is "$rc" 0 "$alg, $S shards: exits 0"
        expect_ok "$alg, $S shards: the final iterate is one coordinator's, to the bit" \
            same_file x.txt x1.txt
        cut -d, -f1,2,4,5 h.csv > hS.csv
        expect_ok "$alg, $S shards: the history's losses are one coordinator's" \
            same_file hS.csv h1.csv
        cut -d, -f6 h.csv > cS.csv
        d=$(paste -d, cS.csv c1.csv | awk -F, 'NR > 2 {
            d = $1 - $2; if (d < 0) d = -d; if ($2 > 0 && d / $2 > m) m = d / $2 }
            END { printf "%.3g\n", m + 0 }')
        expect_ok "$alg, $S shards: the change column is the whole query's ($d)" \
            float_le "$d" 1e-12
        is "$(field answers "$out")" 160 "$alg, $S shards: 4 answers a round"
    done
done
like "$out" "
  shards     rank 0 \\(slice 0 to 75\\): received [0-9]+, sent [0-9]+" \
    "the report gives each coordinator rank's slice and bytes"

# sgd with its momentum once a round (momentum_every: round): the
# round's sum and the velocity are per element, so 2 shards end at one
# coordinator's iterate; the answers' order within a round is their
# arrival's, which differs between runs, so to rounding, not to the bit.
sgdr='algorithm={plugin: sgd, step: 0.05, momentum: 0.5, momentum_every: round}'
run 5 -o "$sgdr" -o output.history= job.yaml
is "$rc" 0 "sgd, momentum once a round, one coordinator: exits 0"
mv x.txt xr1.txt
run 6 -o pool.shards=2 -o "$sgdr" -o output.history= job.yaml
is "$rc" 0 "sgd, momentum once a round, 2 shards: exits 0"
d=$(paste -d' ' x.txt xr1.txt | awk '{ n++; s = $2 < 0 ? -$2 : $2; if (s > m) m = s
    d = $1 - $2; if (d < 0) d = -d; if (d > e) e = d }
    END { if (n < 301) print "inf"; else printf "%.3g\n", e / m }')
expect_ok "and it ends at one coordinator's iterate, to rounding ($d)" \
    float_le "$d" 1e-9

# step: auto on every shard rank: L is the pool's, as on rank 0
run 5 -o 'algorithm={plugin: sag}' -o output.history= job.yaml
mv x.txt xa1.txt
step1=$(echo "$out" | grep '^  step ')
like "$step1" "auto: 1/\\(2L\\)" "sag's step comes from the problem's L"
run 6 -o pool.shards=2 -o 'algorithm={plugin: sag}' -o output.history= job.yaml
is "$(echo "$out" | grep '^  step ')" "$step1" "sag, step auto, 2 shards: the step of one coordinator"
expect_ok "and its final iterate, to the bit" same_file x.txt xa1.txt

# Bytes: 10^6 doubles, 4 workers, each coordinator rank about 1/S of one
# coordinator's, received and sent.
cat > big.yaml <<'YAML'
seed: 1
algorithm: {plugin: gd, step: 1.0e-7}
problem: {plugin: lrmse, rows: 8, cols: 1000000}
stop: {iterations: 12}
output: {final: big.txt}
YAML
# (no progress lines: each one's loss gathers the model once more, as
# often as the load makes the run last seconds)
run 5 --progress off big.yaml
is "$rc" 0 "10^6 doubles, one coordinator: exits 0"
recv1=$(field recv_bytes "$out") sent1=$(field sent_bytes "$out")
mv big.txt big1.txt
for S in 2 4; do
    run $((4 + S)) --progress off -o pool.shards=$S big.yaml
    is "$rc" 0 "10^6 doubles, $S shards: exits 0"
    expect_ok "10^6 doubles, $S shards: the final iterate is one coordinator's" \
        same_file big.txt big1.txt
    for dir in recv sent; do
        list=$(field coord_${dir}_bytes "$out")
        eval one=\$${dir}1
        is "$(echo "$list" | tr ',' '\n' | wc -l)" "$S" \
            "$S shards: a $dir count for each coordinator rank"
        expect_ok "$S shards: each rank's $dir bytes are 1/$S of $one within 20% ($list)" \
            awk -v l="$list" -v one="$one" -v S=$S 'BEGIN {
                n = split(l, b, ","); if (n != S) exit 1
                for (i = 1; i <= n; i++) {
                    r = b[i] * S / one; if (r < 0.8 || r > 1.2) exit 1 }
                exit 0 }'
    done
done

# A distrusted worker's answers are dropped on every shard; the run goes on.
run 6 -o pool.shards=2 -o 'stragglers.corrupt={ranks: [3], after: 5}' \
    -o output.history= job.yaml
is "$rc" 0 "a corrupt worker with shards: the run goes on"
like "$err" "rank 3 sent .*not trusted any more; going on with 3 workers" \
    "it is named and left out"
is "$(field iterations "$out")" 40 "the others finish the 40 iterations"

# An answer holding NaN in a shard rank's slice: that rank, the one that
# checks the slice, tells rank 0, which stops the run as for its own
# slice: the worker, the round and the index (in the whole answer) named
# once, exit 1, the summary printed and the history kept.
cat > nan.yaml <<YAML
algorithm: {plugin: $FIXTURES/nanstep.so, rank: 3, after: 3}
problem: {plugin: lrmse, rows: 400, cols: 4}
pool: {shards: 2}
stop: {iterations: 40}
output: {history: h.csv, every: 1, final: nanx.txt, checkpoint: nan.ck, checkpoint_every: 1}
YAML
rm -f h.csv nanx.txt nan.ck
run 6 nan.yaml
is "$rc" 1 "an answer holding NaN on a shard rank: exit 1"
like "$err" "aiarun\[0\]: stopping: shard rank 1: rank 3: algorithm 'nanstep': answer to round [0-9]+ holds nan at index 2: the method diverged" \
    "rank 0 names the shard rank, the worker, the round and the index"
is "$(echo "$err" | grep -c 'holds nan')" 1 "once"
expect_nogrep "no rank aborts the job" "MPI_ABORT|aborting the job" err.txt
like "$out" "^stop=error iterations=[0-9]+ " "the summary is printed, with the stop's reason"
expect_ok "the history written so far is kept" [ "$(wc -l <h.csv)" -ge 2 ]
expect_ok "no final model: its slices would be from different iterations" \
    [ ! -e nanx.txt ]
expect_ok "the checkpoint of an iteration before it is kept" [ -s nan.ck ]
expect_nogrep "no checkpoint is refused or failed on the way" "checkpoint" err.txt

# A worker killed mid-run (mpirun --enable-recovery): rank 0 declares it
# dead and the shard ranks, told of no more of its answers, go on.
cat > dead.yaml <<'YAML'
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse}
pool: {dead_after: 2, shards: 2, wait: {nwait: 0}}
stragglers: {work_ms: 20}
stop: {iterations: 450}
output: {history: dead.csv, every: 1}
YAML
rm -f dead.csv
(
    # once the run is under way (however slow the start-up)
    i=0
    while [ "$(cat dead.csv 2>/dev/null | wc -l)" -lt 20 ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
    for p in $(pgrep -f "$trash/dead.yaml"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=4; then
            kill -9 "$p"
        fi
    done
) &
run -t 300 -m --enable-recovery 6 "$trash/dead.yaml"
wait
is "$rc" 0 "a worker killed with 2 shards: the job finishes, exit 0"
like "$err" "rank 4 declared dead: silent for 2[.0-9]* s \\(pool.dead_after\\); going on with 3 workers" \
    "it says which worker died"
is "$(field iterations "$out")" 450 "the others finish the iterations"

# Stop rules over the whole model: stop.precision measures every slice.
run 5 -o stop.precision=1e-3 -o stop.iterations=1000 -o output.history= job.yaml
it1=$(field iterations "$out")
run 6 -o pool.shards=2 -o stop.precision=1e-3 -o stop.iterations=1000 \
    -o output.history= job.yaml
is "$(field stop "$out") $(field iterations "$out")" "precision $it1" \
    "stop.precision stops 2 shards at one coordinator's iteration"

# A checkpoint holds every rank's state: a run stopped and resumed with
# shards ends where one coordinator's uninterrupted run ends, to the bit.
cat > ck.yaml <<'YAML'
seed: 8
algorithm: {plugin: sag, step: 0.3}
problem: {plugin: lrmse, rows: 4000, cols: 21}
stop: {iterations: 60}
output: {history: h.csv, every: 10, checkpoint: ck.bin, checkpoint_every: 20, final: x.txt}
YAML
run 5 -o output.checkpoint= -o output.history=ref.csv -o output.final=ref.txt ck.yaml
is "$rc" 0 "sag, one coordinator, 60 iterations"
run 6 -o pool.shards=2 -o stop.iterations=30 ck.yaml
test_expect "sag, 2 shards, stopped at 30: its checkpoint is written" \
    '[ "$rc" = 0 ] && [ -s ck.bin ]'
run 6 -o pool.shards=2 --resume ck.yaml
is "$rc" 0 "--resume with 2 shards runs on"
is "$(field iterations "$out")" 60 "to the job's limit"
expect_ok "and ends at one coordinator's iterate, to the bit" same_file x.txt ref.txt
same "$(cut -d, -f1,2,4 h.csv)" "$(cut -d, -f1,2,4 ref.csv)" \
    "with one history, as the uninterrupted run's"
run 5 --resume ck.yaml
is "$rc" 2 "a checkpoint of 2 shards is refused without them"
like "$err" "cannot resume: ck.bin: from another job" "saying why"

# Divergence: the loss of the gathered model stops the run at one
# coordinator's iteration, with its message.
run 5 -o algorithm.step=5 -o output.history= job.yaml
is "$rc" 1 "gd with step 5 diverges"
msg1=$(echo "$err" | grep 'diverged at iteration')
run 6 -o pool.shards=2 -o algorithm.step=5 -o output.history= job.yaml
is "$rc" 1 "and with 2 shards too"
is "$(echo "$err" | grep 'diverged at iteration')" "$msg1" \
    "at the same iteration, with the same message"

# What shards do not do is refused at the start, with the key.
refused() {
    desc=$1 want=$2; shift 2
    run "$@"
    is "$rc" 2 "$desc: exit status 2"
    like "$err" "$want" "$desc: says why"
}
refused "newton" "pool.shards: 2: algorithm 'newton' does not declare its update separable" \
    6 -o pool.shards=2 -o 'algorithm={plugin: newton}' -o 'problem={plugin: logreg, rows: 400, cols: 5}' job.yaml
refused "a tree" "pool.shards: 2 cannot be combined with pool.topology: tree" \
    6 -o pool.shards=2 -o pool.topology=tree job.yaml
refused "async" "pool.shards: 2 cannot be combined with pool.mode: async" \
    6 -o pool.shards=2 -o pool.mode=async -o 'algorithm={plugin: sgd}' job.yaml
refused "a codec" "pool.shards: 2 cannot be combined with pool.codec" \
    6 -o pool.shards=2 -o pool.codec.answer=float32 job.yaml
refused "no worker left" "pool.shards: 3 coordinator ranks leave no worker among the 3 ranks" \
    3 -o pool.shards=3 job.yaml
refused "a shard rank in pool.workers" "pool.workers: rank 1 is a shard rank" \
    6 -o pool.shards=2 -o 'pool.workers=[1,2]' job.yaml
refused "more slices than values" "pool.shards: 4 slices of a model of 3 values" \
    8 -o pool.shards=4 -o problem.cols=3 job.yaml

# --simulate: the iterate of one coordinator, and each coordinator rank's
# share of the work on a clock of its own: a saturated coordinator (10 ns
# a double) finds relief in virtual time with every added shard.
cat > sim.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd, step: 0.02}
problem: {plugin: lrmse, rows: 800, cols: 20000}
stop: {iterations: 20}
output: {final: sx.txt}
simulate: {coordinator_ns: 10}
YAML
prev=
for S in 1 2 4; do
    sim --simulate 8 -o pool.shards=$S sim.yaml
    is "$rc" 0 "--simulate 8 with $S shard(s): exits 0"
    t=$(field time "$out")
    if [ "$S" = 1 ]; then
        mv sx.txt sx1.txt
        like "$err" "rank 0 was busy 90% of the virtual time" \
            "one coordinator sets the pace"
    else
        expect_ok "$S shards: the simulated iterate is one coordinator's" \
            same_file sx.txt sx1.txt
        expect_ok "$S shards: less virtual time than with fewer ($t < $prev)" \
            float_le "$t" "$prev"
        is "$(field coord_recv_bytes "$out" | tr ',' '\n' | wc -l)" "$S" \
            "$S shards: the simulated bytes of each coordinator rank"
    fi
    prev=$t
done
sim --simulate 4 -o pool.shards=2 -o simulate.coordinator=measured job.yaml
is "$rc" 2 "--simulate refuses shards with a measured coordinator"
like "$err" "pool.shards with simulate.coordinator: measured .*not supported by --simulate" \
    "and says so"
"$AIARUN" --check -n 4 -o pool.shards=2 -o 'algorithm={plugin: lbfgs}' job.yaml \
    >out.txt 2>err.txt
is "$?" 2 "--check refuses a shards job with lbfgs"
expect_grep "--check names the key and the flag" \
    "pool.shards: 2: algorithm 'lbfgs' does not declare" err.txt

"$AIARUN" --check -n 1 -o pool.shards=3 job.yaml >out.txt 2>err.txt
is "$?" 0 "--check -n counts workers: 1 worker beside 3 shard ranks is a pool"

done_testing
