#!/bin/sh
# Checkpoints: a run interrupted (by its limit, or by a worker killed with
# SIGKILL) and resumed ends exactly where an uninterrupted run ends, with
# one history; a damaged checkpoint, or one from another job, is refused.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# gd waiting for every worker is deterministic: same sums, same order
cat > job.yaml <<'YAML'
seed: 8
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 4000, cols: 20}
stop: {iterations: 300}
output: {history: h.csv, every: 10, checkpoint: ck.bin, checkpoint_every: 20}
YAML
# iteration, epoch and loss of each history row: the time differs
rows() { cut -d, -f1,2,4 "$1"; }

run 5 -o output.history=ref.csv -o output.checkpoint= job.yaml
is "$rc" 0 "an uninterrupted run"
ref=$(field loss "$out")

# --- interrupted by its own limit, then resumed
run 5 -o stop.iterations=130 job.yaml
is "$rc" 0 "a run stopped at iteration 130"
test_expect "leaves its checkpoint, and no temporary file" \
    '[ -s ck.bin ] && [ ! -e ck.bin.tmp ]'
run 5 --resume job.yaml
is "$rc" 0 "--resume runs on"
like "$out" "
  resumed +from ck.bin at iteration 130 " "the report says where it resumed from"
is "$(field iterations "$out")" 300 "to the job's limit"
same "$(field loss "$out")" "$ref" "and ends with exactly the uninterrupted run's loss"
same "$(rows h.csv)" "$(rows ref.csv)" "one history, as the uninterrupted run's"
expect_ok "whose clock goes on from the checkpoint" \
    awk -F, 'NR > 2 && $3 < t { bad = 1 } NR > 1 { t = $3 } END { exit bad }' h.csv

# --- a worker killed by SIGKILL: the job ends, the state is saved
rm -f h.csv ck.bin
(
    # once the first checkpoint is written (however slow the start-up)
    i=0
    while [ ! -s ck.bin ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.5
    for p in $(pgrep -f "$trash/job.yaml"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2; then
            kill -9 "$p"
        fi
    done
    date +%s > killed
) &
run 5 -o stragglers.work_ms=10 "$trash/job.yaml"
wait
took=$(( $(date +%s) - $(cat killed) ))
expect_ok "a worker killed mid-run: the job ends with a failure ($rc)" \
    [ "$rc" != 0 ]
expect_ok "within a bounded time of the kill ($took s)" [ "$took" -lt 30 ]
like "$err" "aiarun\\[0\\]: stopped by signal 15 .*checkpoint in ck.bin: continue with aiarun --resume" \
    "saying what happened and how to go on"
like "$out" "stop=signal " "the summary line is not lost"
# the iteration follows the identity's parts (16-byte name, 8-byte hash)
parts=$(od -A n -t u4 -j 24 -N 4 ck.bin | tr -d ' ')
at=$(od -A n -t d8 -j $((32 + 24 * ${parts:-0})) -N 8 ck.bin | tr -d ' ')
test_expect "the checkpoint holds the iteration it stopped at ($at)" \
    '[ "${at:-0}" -gt 0 ] && [ "${at:-0}" -lt 300 ]'
run 5 --resume job.yaml
is "$rc" 0 "the resumed run finishes"
is "$(field loss "$out")" "$ref" "with the uninterrupted run's final loss"
# the row written when the signal came stays: it is a row of the run,
# an extra one unless the stop fell on a row of the schedule
extra=$([ $((at % 10)) -ne 0 ] && echo "^$at," || echo '^$^')
is "$(rows h.csv | grep -v "$extra")" "$(rows ref.csv)" \
    "and one history: the uninterrupted run's, with the row at the stop"
is "$(rows h.csv | grep -c "^$at,")" 1 "which is there once"

# --- refusals
cp ck.bin good.bin
printf '\001' | dd of=ck.bin bs=1 seek=100 conv=notrunc 2>/dev/null
run 5 --resume job.yaml
is "$rc" 2 "a damaged checkpoint: exit 2"
like "$err" "cannot resume: ck.bin: damaged \\(its checksum does not match\\)" "says so"
head -c 200 good.bin > ck.bin
run 5 --resume job.yaml
like "$err" "ck.bin: damaged" "a truncated one is refused too"
printf 'not a checkpoint at all' > ck.bin
run 5 --resume job.yaml
like "$err" "ck.bin: not an aiarun checkpoint" "so is another kind of file"
cp good.bin ck.bin
printf '\347\003\000\000' | dd of=ck.bin bs=1 seek=12 conv=notrunc 2>/dev/null
run 5 --resume job.yaml
like "$err" "ck.bin: written by another aiarun \\(checkpoint layout [0-9]+, plugin ABI 999" \
    "a checkpoint of another ABI is refused"
cp good.bin ck.bin
run 5 --resume -o seed=9 job.yaml
like "$err" "ck.bin: from another job: seed differs" "so is one from another job (another seed), naming the key"
run 5 --resume -o algorithm.step=0.2 job.yaml
like "$err" "ck.bin: from another job: algorithm keys differ" "or other parameters"
run 3 --resume job.yaml
like "$err" "ck.bin: from another job: pool differs" "or another pool (3 ranks, not 5)"
run 5 --resume -o stop.iterations=310 -o pool.wait.nwait=3 job.yaml
is "$rc" 0 "limits and the wait condition may change"
is "$(field iterations "$out")" 310 "and the run goes on to the new limit"
run 5 --resume -o output.checkpoint= job.yaml
like "$err" "--resume: the job names no output.checkpoint" "--resume needs a checkpoint to name"
# --- forged fields, the checksum made right again (t/checkpoint.t forge
# sets one 8-byte word of the algorithm's state): refused naming the
# field, the checkpoint untouched, never a crash
peek() { "$top_builddir/t/checkpoint.t" peek "$@"; }
forge() { "$top_builddir/t/checkpoint.t" forge "$@"; }
cat > bal.yaml <<'YAML'
seed: 3
algorithm: {plugin: sag, variant: dsag, balance: on, balance_every: 5}
problem: {plugin: logreg, rows: 4000, cols: 20, l2: 0.01}
pool: {wait: {nwait: 0}}
stop: {iterations: 40}
output: {checkpoint: bal.bin}
YAML
run 5 bal.yaml
is "$rc" 0 "a balanced sag run leaves its checkpoint"
# sag's balanced state: x (20 doubles), the plans and the rounds since
# the last, then per worker (4) its sub-partitions, rows, answers timed
is "$(peek bal.bin 26 d) $(peek bal.bin 30 d)" "1000 40" \
    "its balance holds worker 0's rows and its 40 answers timed"
forge bal.bin 30 d -1
cp bal.bin bal.forged
run -e 5 --resume bal.yaml
is "$rank_status" "1 1 1 1 1" \
    "a negative count of answers timed: every rank exits 1, none killed"
like "$err" "cannot resume: algorithm 'sag': load: damaged: the balance's answers timed of worker 0 is -1: out of bounds" \
    "naming the field and the worker"
expect_ok "the checkpoint untouched" cmp bal.bin bal.forged
sim --simulate 4 --resume bal.yaml
is "$rc" 2 "--simulate: refused at the start, exit 2"
like "$err" "cannot resume: algorithm 'sag': load: damaged: the balance's answers timed of worker 0 is -1" \
    "with the same field"
expect_ok "the checkpoint untouched" cmp bal.bin bal.forged

# a sharded checkpoint: the count of ranks, each rank's length, the
# states; lengths forged to sum right around 2^64 (192 and 2^64 - 8 once
# had rank 0 read past the states)
cat > shard.yaml <<'YAML'
seed: 8
algorithm: {plugin: sag, step: 0.3}
problem: {plugin: lrmse, rows: 4000, cols: 21}
pool: {shards: 2}
stop: {iterations: 30}
output: {checkpoint: sh.bin}
YAML
run 6 shard.yaml
is "$rc" 0 "a run with 2 shards leaves its checkpoint"
l0=$(peek sh.bin 1 u) l1=$(peek sh.bin 2 u)
is "$(peek sh.bin 0 u)" 2 "which holds the states of 2 coordinator ranks"
forge sh.bin 1 u $((l0 + l1 + 8))
forge sh.bin 2 u 18446744073709551608
cp sh.bin sh.forged
run -e 6 --resume shard.yaml
is "$rank_status" "1 1 1 1 1 1" \
    "rank lengths that sum right only around 2^64: every rank exits 1"
like "$err" "cannot resume: algorithm 'sag': load: damaged: the state of coordinator rank 0 is $((l0 + l1 + 8)) bytes, past the $((l0 + l1)) left" \
    "naming the rank and its length"
expect_ok "the checkpoint untouched" cmp sh.bin sh.forged
# every plugin's load checks each field before use: one forged out of
# its bounds (the checksum made right) is refused at --resume, naming it
cat > lr.yaml <<'YAML'
seed: 8
problem: {plugin: lrmse, rows: 600, cols: 5}
stop: {iterations: 20}
output: {checkpoint: p.bin}
YAML
# forged DESC JOB ALGORITHM WORD VALUE WANT: a --simulate 3 run of JOB with
# ALGORITHM, its state's word WORD forged to VALUE, then resumed
forged() {
    rm -f p.bin
    sim --simulate 3 -o "algorithm=$3" -o stop.iterations=10 \
        -o output.checkpoint=p.bin "$2"
    if [ "$rc" != 0 ] || [ ! -s p.bin ]; then
        ok 1 "$1: the run leaves its checkpoint"
        run_diag
        return
    fi
    forge p.bin "$4" d "$5"
    cp p.bin p.forged
    sim --simulate 3 --resume -o "algorithm=$3" -o stop.iterations=20 \
        -o output.checkpoint=p.bin "$2"
    is "$rc" 2 "$1: refused at the start"
    like "$err" "cannot resume: algorithm '[a-z]*': load: damaged: $6" \
        "$1: naming the field"
    expect_ok "$1: the checkpoint untouched" cmp p.bin p.forged
}
# lrmse's dimension is 5: x is words 0-4
forged "gd, an iterate that is NaN" lr.yaml "{plugin: gd}" 0 nan \
    "value 0 of its iterate is nan"
forged "gd, a gradient of its table that is infinite" lr.yaml "{plugin: gd}" \
    7 inf "value 2 of its table's gradients is inf"
forged "sgd, a velocity that is NaN" lr.yaml "{plugin: sgd, momentum: 0.5}" \
    6 nan "value 1 of its velocity is nan"
forged "rennala, a count of gradients of 0.5" lr.yaml "{plugin: rennala}" \
    11 0.5 "version [0-9]*, 0.5 gradients"
forged "rennala, a batch's weight that is infinite" lr.yaml "{plugin: rennala}" \
    12 inf "version [0-9]*, [0-9]* gradients of inf rows"
forged "average, an iterate that is infinite" lr.yaml "{plugin: average}" \
    0 -inf "its iterate [(]0[)] is -inf: out of bounds"
forged "average, a negative weight" lr.yaml "{plugin: average}" \
    20 -1 "its weight [(]0[)] is -1: out of bounds"
forged "subspace, a block number of 1e300" "$top_srcdir/etc/pca-sparse.yaml" \
    "{plugin: subspace}" 0 1e300 "its block number [(]0[)] is 1e[+]300"
done_testing
