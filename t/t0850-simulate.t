#!/bin/sh
# aiarun --simulate N: the protocol in virtual time, with the real plugins.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# Rounds of the 3 fastest of 4; worker 2 is 50 ms slow on every answer.
cat > nwait.yaml <<'YAML'
seed: 7
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse, rows: 4000, cols: 20}
pool: {wait: {nwait: 3}}
stragglers: {work_ms: 1, fixed: {ranks: [2], delay_ms: 50}}
simulate: {row_us: 0, latency_us: 0, coordinator: none}
stop: {iterations: 300}
output: {history: h.csv, answers: a.csv, workers: w.csv}
YAML
sim --simulate 4 nwait.yaml
is "$rc" 0 "a simulated run exits 0"
[ "$rc" = 0 ] || diag "$err"
is "$(field stop "$out")" iterations "it stops at its iteration limit"
is "$(field iterations "$out")" 300 "after 300 iterations"
is "$(field time "$out")" 0.300000 \
    "in virtual time: 1 ms of work a round, nothing else (no mpirun)"
like "$out" "4 workers, rounds mode" "the report is a run's report"
is "$(awk -F, 'NR > 1 && $2 == 2 && $5 > 0' a.csv | wc -l | tr -d ' ')" \
    "$(awk -F, 'NR > 1 && $2 == 2' a.csv | wc -l | tr -d ' ')" \
    "the slow worker's answers all arrive stale, and are absorbed"
n2=$(awk -F, 'NR > 1 && $2 == 2' a.csv | wc -l)
is "$n2" 5 "one every 51 ms: 5 in 0.3 s"
is "$(sed -n '3p' w.csv | cut -d, -f1)" 2 "the per-worker table is written"
sim --simulate 4 -o simulate.latency_us=100 -o stop.iterations=10 nwait.yaml
is "$(field time "$out")" 0.012000 "a latency of 100 us each way adds 0.2 ms a round"
sim --simulate 4 -o pool.wait.nwait=0 -o pool.wait.timeout_ms=5 \
    -o stop.iterations=20 nwait.yaml
is "$(field time "$out")" 0.100000 \
    "waiting for all with a 5 ms timeout: rounds of 5 ms, the wait's deadline"
sim --simulate 4 -o stop.iterations=0 -o stop.time=0.05 nwait.yaml
is "$(field stop "$out")" time "stop.time is virtual time"

# Reproducible to the bit: asynchronous, bursts and random delays, a codec.
cat > async.yaml <<'YAML'
seed: 3
algorithm: {plugin: sgd, step: 0.02}
problem: {plugin: lrmse, rows: 2000, cols: 10}
pool: {mode: async, codec: {answer: float16}}
stragglers:
  markov: {p_slow: 0.1, p_fast: 0.3, delay_ms: 5}
  random: {probability: 0.1, delay_ms: 3}
simulate: {row_us: 2, bandwidth_mbps: 100}
stop: {iterations: 2000}
output: {history: h.csv, every: 10, answers: a.csv, workers: w.csv,
         final: x.txt}
YAML
sim --simulate 16 async.yaml
is "$rc" 0 "an asynchronous simulation exits 0"
mkdir one && mv h.csv a.csv w.csv x.txt out.txt one/
is "$(field answers "$out")" 2000 "every answer is an iteration"
sim --simulate 16 async.yaml
same=0
for f in h.csv a.csv w.csv x.txt out.txt; do
    same_file "$f" "one/$f" || { same=1; diag "$f differs"; }
done
ok $same "two simulations of an asynchronous job write identical files"
sim --simulate 16 -o seed=4 async.yaml
cmp -s a.csv one/a.csv
ok $((! $?)) "another seed gives another run"
awk -F, 'NR > 1 { s[$2] += $5 } END { for (r in s) if (s[r] > 0) n++; print n + 0 }' \
    a.csv > stale.txt
expect_ok "stale answers come from many workers ($(cat stale.txt))" \
    [ "$(cat stale.txt)" -ge 8 ]
like "$out" "answers as float16" "the codec's bytes are in the report"

# The DSAG trace model at 100 workers.
cat > dsag.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 10000, cols: 10}
pool: {wait: {nwait: 90}}
simulate:
  compute: dsag
  dsag: {compute_ms: 10, p_slow: 0.02, p_fast: 0.2, slow_factor: 5}
stop: {iterations: 50}
YAML
sim --simulate 100 dsag.yaml
is "$rc" 0 "the DSAG model runs 100 workers"
t90=$(field time "$out")
sim --simulate 100 -o pool.wait.nwait=0 dsag.yaml
t100=$(field time "$out")
expect_ok "under bursts the 90 fastest of ~10 ms workers end rounds sooner than all ($t90 s, $t100 s)" \
    awk -v a="$t90" -v b="$t100" 'BEGIN { exit !(a > 0.5 && 1.3 * a < b) }'

# Synchronous gradient descent: the final iterate of the MPI run, to the
# bit (gd sums the workers' gradients in pool order), whatever the delays.
cat > gd.yaml <<'YAML'
seed: 42
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, rows: 4000, cols: 20, noise: 0.1}
pool: {wait: {nwait: 0}}
stragglers: {fixed: {ranks: [3], delay_ms: 2}}
stop: {iterations: 40}
output: {final: x.txt}
YAML
run 5 gd.yaml
is "$rc" 0 "gd under mpirun"
mv x.txt x-mpi.txt
sim --simulate 4 -o simulate.compute=measured -o stragglers.markov.p_slow=0.5 \
    -o stragglers.markov.p_fast=0.5 -o stragglers.markov.delay_ms=3 gd.yaml
is "$rc" 0 "gd simulated, with other delays and a measured compute time"
like "$err" "measured .* us a row" "the measured time per row is printed"
same_file x.txt x-mpi.txt
ok $? "the same final iterate as under mpirun, to the bit"

# A tree: each node combines its subtree's answers as the MPI tree does.
sed 's/pool: {wait: {nwait: 0}}/pool: {topology: tree, arity: 2}/' gd.yaml \
    > tree.yaml
run 8 tree.yaml
is "$rc" 0 "a tree of 7 under mpirun"
mv x.txt x-mpi.txt
sim --simulate 7 tree.yaml
is "$rc" 0 "a tree of 7 simulated"
is "$(field answers "$out")" 80 "the coordinator hears its 2 children only"
same_file x.txt x-mpi.txt
ok $? "the same final iterate as under mpirun, to the bit"

# A hung worker: declared dead after pool.dead_after, the run goes on.
sim --simulate 4 -o stragglers.hang.ranks=[3] -o stragglers.hang.after=5 \
    -o pool.dead_after=0.5 -o pool.wait.nwait=0 nwait.yaml
is "$rc" 3 "a hung worker does not stop the run, but is left behind (exit 3, as under mpirun)"
like "$err" "rank 3 declared dead" "it is declared dead"
like "$out" "1 worker declared dead" "the report says so"
like "$err" "rank\(s\) 3 were left behind" "and the end names it, as mpirun's does"
is "$(field stop "$out")" iterations "the run itself stopped at its limit"
sim --simulate 4 -o stragglers.hang.ranks=[3] -o pool.wait.nwait=0 nwait.yaml
is "$rc" 1 "with no way out of the wait, the run fails"
like "$err" "no answer can come" "saying why"

# A worker that sends malformed answers is not trusted, as under MPI.
sim --simulate 4 -o stragglers.corrupt.ranks=[2] -o stragglers.corrupt.after=2 \
    nwait.yaml
is "$rc" 0 "an untrusted worker does not stop the run"
like "$err" "rank 2 sent not an aiarun message .*not trusted any more; going on with 3 workers" \
    "it is distrusted after its answers before the fault"
is "$(awk -F, 'NR > 1 && $2 == 2' a.csv | wc -l | tr -d ' ')" 2 \
    "its 2 good answers were absorbed, nothing after"

# A stop rule's measure that fails fails the run, with its reason.
cat > div.yaml <<'YAML'
algorithm: {plugin: gd, step: 50}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 1000, loss: 1e-9}
YAML
sim --simulate 2 div.yaml
is "$rc" 1 "a diverging run fails"
like "$err" "the method diverged" "saying why"
is "$(field stop "$out")" error "the report says it stopped on an error"

# What a simulation does not do, refused clearly.
# Rows from a file: each worker reads its own, as with delivery: read.
sed -e "s|path: data/lr.svm|path: $top_srcdir/etc/data/lr.svm|" \
    -e 's|history: gd-libsvm.csv|final: x.txt|' \
    "$top_srcdir/etc/gd-libsvm.yaml" > svm.yaml
run 5 svm.yaml
is "$rc" 0 "gd on a libsvm file under mpirun"
mv x.txt x-mpi.txt
sim --simulate 4 svm.yaml
is "$rc" 0 "gd on a libsvm file simulated"
same_file x.txt x-mpi.txt
ok $? "the same final iterate as under mpirun, to the bit"
cat > data.yaml <<'YAML'
algorithm: {plugin: gd}
problem: {plugin: lrmse, data: {path: none.csv}}
stop: {iterations: 3}
YAML
sim --simulate 4 data.yaml
is "$rc" 2 "a missing data file is refused"
like "$err" "data.yaml:2:.*problem.data: .*none.csv" \
    "naming the file, line, key and data file"
cat > ckpt.yaml <<'YAML'
algorithm: {plugin: gd}
problem: {plugin: lrmse}
stop: {iterations: 3}
output: {checkpoint: c.bin}
YAML
sim --simulate 4 ckpt.yaml
is "$rc" 0 "a simulated run writes a checkpoint (t0860 resumes it under mpirun)"
test_expect "the checkpoint is there" 'test -s c.bin'
# --resume goes on from the checkpoint as under mpirun: gd waiting for
# every worker takes the same steps whenever the answers come, so a run
# stopped at 100 iterations and resumed to 200 ends at the uninterrupted
# run's iterate, history and virtual time, bit for bit
cat > res.yaml <<'YAML'
seed: 5
algorithm: {plugin: gd}
problem: {plugin: lrmse, rows: 2000, cols: 20, condition: 100}
stop: {iterations: 200}
output: {history: res.csv, every: 10, final: res.txt, checkpoint: res.bin}
YAML
sim --simulate 4 -o stop.iterations=100 res.yaml
sim --simulate 4 --resume res.yaml
is "$rc $(field iterations "$out")" "0 200" "--resume: on from iteration 100 to 200"
mv res.txt resumed.txt
mv res.csv resumed.csv
t_resumed=$(field time "$out")
rm -f res.bin
sim --simulate 4 res.yaml
expect_ok "the resumed run's final iterate is the uninterrupted run's" \
    same_file res.txt resumed.txt
expect_ok "and so is its history" same_file res.csv resumed.csv
same "$t_resumed" "$(field time "$out")" "and its virtual time"
sim --simulate 4 --resume -o algorithm.plugin=sgd res.yaml
is "$rc" 2 "--resume with another algorithm is refused"
like "$err" "cannot resume: .*res.bin" "naming the checkpoint"
sim --simulate 0 nwait.yaml
is "$rc" 2 "--simulate 0 is refused"
like "$err" "expected a number of workers from 1 to 10000000" "saying what it takes"
# The end of a run is mpirun's: output.final whenever the run ended well
# (here at its time limit), none when it failed (a step that diverges).
sim --simulate 4 -o stop.iterations=0 -o stop.time=0.05 \
    -o output.final=end.txt nwait.yaml
is "$rc" 0 "a simulated run stopped by its time limit exits 0"
is "$(wc -l <end.txt 2>/dev/null | tr -d ' ')" 20 \
    "and writes its final iterate, one value a line"
sim --simulate 4 -o algorithm.step=50 -o output.final=bad.txt nwait.yaml
is "$rc" 1 "a simulated run whose step diverges exits 1"
like "$err" "diverge" "saying it diverged"
ok $([ ! -e bad.txt ] && echo 0 || echo 1) "and writes no final iterate"
# Rank 0's own work on the virtual clock (simulate.coordinator).  One
# worker, 1 ms a step, nothing else but rank 0's 100 us for each answer it
# takes and each query it sends: a round is 1.2 ms.
cat > coord.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 2000, cols: 10}
stragglers: {work_ms: 1}
simulate: {row_us: 0, latency_us: 0, coordinator_us: 100, coordinator_ns: 0}
stop: {iterations: 10}
YAML
sim --simulate 1 coord.yaml
is "$(field time "$out")" 0.012000 \
    "rank 0's 100 us an answer and 100 us a query make rounds of 1.2 ms"
sim --simulate 1 -o simulate.coordinator_ns=1000 coord.yaml
is "$(field time "$out")" 0.012200 \
    "and 1 us a double: 10 absorbed and 10 written add 20 us a round"
# 50 workers answering every 1 ms asynchronously, rank 0 200 us an answer
# (taken, then the next query sent): it can take 5,000 a second, not the
# workers' 50,000, and says that it set the pace.
sim --simulate 50 -o pool.mode=async -o algorithm.plugin=sgd \
    -o algorithm.step=0.01 -o stop.iterations=0 -o stop.time=1 coord.yaml
n=$(field answers "$out")
ok $([ "$n" -le 5000 ] && [ "$n" -ge 4900 ] && echo 0 || echo 1) \
    "a saturated rank 0 takes 5,000 answers a virtual second ($n)"
is "$(field coordinator_busy "$out")" 1.0000 "busy all of the run"
like "$err" "busy 100% of the virtual time.*set the pace" "and says so"
sim --simulate 50 -o pool.mode=async -o algorithm.plugin=sgd \
    -o algorithm.step=0.01 -o stop.iterations=0 -o stop.time=1 \
    -o simulate.coordinator=none coord.yaml
n=$(field answers "$out")
ok $([ "$n" -ge 49000 ] && echo 0 || echo 1) \
    "with coordinator: none the workers set it: 50,000 ($n)"
is "$(field coordinator_busy "$out")" "" "and no coordinator_busy is claimed"
sim --simulate 4 -o simulate.coordinator=measured coord.yaml
is "$rc" 0 "coordinator: measured runs"
b=$(field coordinator_busy "$out")
ok $(awk -v b="$b" 'BEGIN { exit !(b > 0 && b <= 1) }' && echo 0 || echo 1) \
    "and measures a busy share in (0, 1] ($b)"
like "$err" "measured rank 0 busy .*coordinator_us: [0-9.e+-]+ with coordinator_ns: 0" \
    "and prints the model's figures that give the same"
sim --simulate 4 -o simulate.coordinator=fast coord.yaml
is "$rc" 2 "an unknown coordinator model is refused"
like "$err" "simulate.coordinator" "naming the key"
# simulate.cores: the ranks share a node's cores.  4 workers, 1 ms of
# compute each, all sent at once, share 2 cores: each at half speed, a
# round takes 2 ms, the 4 ms of work over 2 cores; 4 ms on 1 core.
cat > cores.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 4000, cols: 10}
simulate: {row_us: 1, latency_us: 0, coordinator: none}
stop: {iterations: 10}
YAML
for c in 0:0.010000 4:0.010000 2:0.020000 1:0.040000; do
    sim --simulate 4 -o simulate.cores="${c%:*}" cores.yaml
    is "$(field time "$out")" "${c#*:}" \
        "simulate.cores ${c%:*}: 10 rounds in ${c#*:} s"
done
# Rank 0 shares them too: 2 workers answering asynchronously after 1 ms
# of compute, rank 0 100 us for each answer taken and each query sent,
# 1 core.  Worker 1's query leaves at 0.1 ms, worker 2's at 0.2: worker
# 1 goes at half speed beside rank 0, then beside worker 2, done at 2.1
# ms; worker 2 at 2.15.  Rank 0 takes worker 1's answer beside worker
# 2, at half speed (0.4 ms: the query leaves at 2.5, worker 1 alone
# until 3.5), then worker 2's, which waited (2.5 to 2.9, beside worker
# 1: its step ends at 4.2), then worker 1's at 3.5, and the 4th answer
# at 4.2 ends at 4.4.
sim --simulate 2 -o simulate.cores=1 -o pool.mode=async \
    -o problem.rows=2000 -o stop.iterations=4 -o simulate.coordinator=model \
    -o simulate.coordinator_us=100 -o simulate.coordinator_ns=0 \
    -o output.answers=ca.csv cores.yaml
is "$(field time "$out")" 0.004400 "rank 0's work shares the core: 4.4 ms"
is "$(awk -F, 'NR > 1 { printf "%s ", $1 }' ca.csv)" \
    "0.002100 0.002500 0.003500 0.004200 " \
    "the answers are taken at 2.1, 2.5, 3.5, 4.2"
sim --simulate 2 -o simulate.cores=0 -o pool.mode=async \
    -o problem.rows=2000 -o stop.iterations=4 -o simulate.coordinator=model \
    -o simulate.coordinator_us=100 -o simulate.coordinator_ns=0 cores.yaml
is "$(field time "$out")" 0.002600 "a core a rank: 2.6 ms"
# On a node a message's bytes are copied by its receiver: a query's by
# its worker, beside the others, an answer's by rank 0, one after
# another.  1 byte a microsecond (8 Mbit/s), 144 bytes a message, 2
# workers: a round is 144 + 144 us on links of their own, 144 + 2 x 144
# us on a node of 2 cores, rank 0 busy copying 2/3 of it.
cat > copy.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 2000, cols: 10}
simulate: {row_us: 0, latency_us: 0, bandwidth_mbps: 8, coordinator_us: 0,
           coordinator_ns: 0}
stop: {iterations: 10}
YAML
sim --simulate 2 copy.yaml
is "$(field sent_bytes "$out")" 2880 "20 queries of 144 bytes"
is "$(field time "$out")" 0.002880 "a link a worker: 288 us a round"
sim --simulate 2 -o simulate.cores=2 copy.yaml
is "$(field time "$out")" 0.004320 "on 2 cores: 432 us a round"
is "$(field coordinator_busy "$out")" 0.6667 "rank 0 copying 2/3 of it"
sim --simulate 4 -o simulate.cores=-1 cores.yaml
is "$rc" 2 "simulate.cores below 0 is refused"
like "$err" "simulate.cores: must be between 0" "naming the key"
sim --simulate 4 -o simulate.cores=2 -o pool.topology=tree cores.yaml
is "$rc" 2 "simulate.cores in a tree is refused"
like "$err" "command line \\(-o\\): simulate.cores in a tree.*not supported" \
    "naming the key"
sim --simulate 4 -o simulate.cores=2 -o pool.shards=2 cores.yaml
is "$rc" 2 "simulate.cores with shards is refused"
like "$err" "simulate.cores with pool.shards" "naming both keys"
# A worker's compute follows the rows its step reads (the problem's
# gradient and loss counted): 10 us a row of 1,000, nothing else.
cat > work.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 1000, cols: 5}
simulate: {row_us: 10, latency_us: 0, coordinator: none}
stop: {iterations: 10}
YAML
sim --simulate 1 work.yaml
is "$(field time "$out")" 0.100000 "gd reads every row: 10 ms a round"
sim --simulate 1 -o algorithm.plugin=sag -o algorithm.subpartitions=4 \
    -o algorithm.step=0.01 work.yaml
is "$(field time "$out")" 0.025000 "sag with 4 sub-partitions reads 250: 2.5 ms"
sim --simulate 1 -o algorithm.plugin=sgd -o algorithm.batch=50 \
    -o algorithm.step=0.01 work.yaml
is "$(field time "$out")" 0.005000 "sgd with a batch of 50: 0.5 ms"
sim --simulate 1 -o algorithm.plugin=average -o algorithm.local_steps=3 \
    -o algorithm.step=0.01 work.yaml
is "$(field time "$out")" 0.300000 "average with 3 local passes: 30 ms"
done_testing
