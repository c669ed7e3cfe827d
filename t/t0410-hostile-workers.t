#!/bin/sh
# Runs that go wrong midway and workers that cannot be trusted: a
# coordinator plugin that fails or crashes in absorb keeps the history
# written so far; oversized or malformed messages from a worker name it
# and the run goes on without it.  The fixtures are t/fixtures/hostile.c.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

# job ALGORITHM PROBLEM [MORE] : a job file using these plugins
job() {
    printf 'algorithm: {plugin: %s}\nproblem: {plugin: %s}\n' "$1" "$2"
    printf 'stop: {iterations: 100000, time: 30}\n'
    printf 'output: {history: h.csv, every: 1}\n'
    [ $# -lt 3 ] || printf '%s\n' "$3"
}
rows() { [ -e h.csv ] && wc -l <h.csv || echo 0; }

# ------------------------------------------------- absorb fails or crashes
# 2 workers at 50 ms an answer: about 20 rounds a second, some 2 KB of
# history before the failure at answer 80 (2 s): less than stdio's buffer,
# so only a flush while running brings the rows to the file.
job "$FIXTURES/crashabsorb.so, after: 80" "lrmse, rows: 400, cols: 4" >fail.yaml
run 3 -q fail.yaml
is "$rc" 1 "absorb failing after 2 s: exit 1"
like "$err" "absorb \(answer of rank [12]\): failed at answer 80 \(on purpose\)" \
    "the coordinator says why"
expect_ok "the history has the rows made before the failure ($(rows) lines)" \
    [ "$(rows)" -ge 20 ]

rm -f h.csv
job "$FIXTURES/crashabsorb.so, after: 80, crash: 1" "lrmse, rows: 400, cols: 4" >crash.yaml
run 3 -q crash.yaml
expect_ok "absorb crashing after 2 s: a failure ($rc)" [ "$rc" != 0 ]
expect_ok "the history has the rows of all but the last second ($(rows) lines)" \
    [ "$(rows)" -ge 10 ]
rm -f h.csv

# ------------------------------------------------- untrusted messages
# badmsg BYTES : rank 2 sends rank 0 a message of BYTES bytes at its
# answer 3; the run must go on with the other workers, name rank 2 and
# end as its limit says.  BYTES 0: a well-formed answer holding NaN,
# which is no malformed message but a method that diverged: the run stops.
badmsg() {
    job "$FIXTURES/badmsg.so, bytes: $1" "lrmse, rows: 400, cols: 4" >badmsg.yaml
    run 4 -o stop.iterations=50 -o stop.time=20 badmsg.yaml
}
for n in 2048 1048576 100000000; do
    badmsg $n
    is "$rc" 0 "a $n-byte message: the run goes on and ends well"
    like "$err" "aiarun\[0\]: rank 2 sent a message of $n bytes, more than the [0-9]+ a message of this job can have \($n bytes\): not trusted any more; going on with 2 workers" \
        "a $n-byte message: the coordinator names rank 2 and the size"
    like "$out" "stop=iterations iterations=50 " "a $n-byte message: the summary line"
    expect_ok "a $n-byte message: the history" [ "$(rows)" -ge 51 ]
    rm -f h.csv
done
badmsg 0
is "$rc" 1 "a well-formed answer holding NaN: the run stops, exit status 1"
like "$err" "aiarun\[0\]: stopping: rank 2: algorithm 'badmsg': answer to round [0-9]+ holds nan at index 2: the method diverged, or the plugin is wrong" \
    "the coordinator names rank 2, the round, the index and the value"
expect_nogrep "rank 2 is not distrusted" "not trusted" err.txt
like "$out" "^stop=error iterations=[0-9]+ " "the summary line"
expect_ok "the history written so far is kept" [ "$(rows)" -ge 2 ]

# ------------------------------------------------- hangs
# A create that never returns on rank 2: the others would wait in a
# collective forever; pool.setup_timeout ends the job, naming the step.
job "$FIXTURES/hangcreate.so" "lrmse, rows: 400, cols: 4" \
    "pool: {setup_timeout: 2}" >hangcreate.yaml
start=$(date +%s)
run -t 40 3 hangcreate.yaml
took=$(( $(date +%s) - start ))
test_expect "a create that never returns: the job fails ($rc), no hang (${took} s)" \
    '[ "$rc" != 0 ] && [ "$rc" != 124 ]'
like "$(cat err.txt)" "aiarun\[2\]: set-up did not finish within 2 s \(pool.setup_timeout\): this rank is still in the algorithm's create; aborting the job" \
    "rank 2 names the step that hung"

# A coordinator stopped by SIGSTOP: its workers hear nothing, and leave
# after pool.coordinator_timeout with a line of their own.
job "$FIXTURES/crashabsorb.so, after: 20, crash: 2" "lrmse, rows: 400, cols: 4" \
    "pool: {coordinator_timeout: 2}" >stopped.yaml
run -t 40 3 stopped.yaml
test_expect "a stopped coordinator: the job fails ($rc), no hang" \
    '[ "$rc" != 0 ] && [ "$rc" != 124 ]'
like "$err" "aiarun\[[12]\]: no word from the coordinator for 2 s \(pool.coordinator_timeout\): it is stopped or gone; leaving" \
    "a worker says why it leaves"
run -t 40 4 -o pool.topology=tree stopped.yaml
test_expect "the same in a tree: the job fails ($rc), no hang" \
    '[ "$rc" != 0 ] && [ "$rc" != 124 ]'
like "$err" "aiarun\[[123]\]: no word from the coordinator for 2 s \(pool.coordinator_timeout\)" \
    "a tree worker says why it leaves"

# ------------------------------------------------- ranks left behind
# A worker declared dead (pool.dead_after) cannot be waited for at the
# end: the job is aborted after the outputs, with exit status 3 and a
# plain line, not Open MPI's "exiting improperly" and exit 1.
cat >dead.yaml <<'YAML'
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse}
pool: {dead_after: 1, wait: {nwait: 0}}
stragglers: {work_ms: 5, hang: {ranks: [2], after: 10}}
stop: {time: 2.5}
YAML
run 4 dead.yaml
is "$rc" 3 "a worker declared dead: exit status 3"
like "$err" "aiarun\[0\]: the run ended \(its outputs above are complete\), but rank\(s\) 2 were left behind \(declared dead or not stopped\) and may still be running: the job cannot end normally, so it is aborted with exit status 3" \
    "the coordinator says plainly what happened"
expect_fail "no 'exiting improperly'" grep -q "exiting improperly" err.txt
like "$(cat out.txt)" "stop=time " "the summary line is out"

# A tree with a worker that never stops: every run keeps the table rows
# and the summary line on stdout (they were lost in 1 run of 8 when the
# other ranks left first).
printf 'seed: 3\nalgorithm: {plugin: gd, step: 0.5}\nproblem: {plugin: lrmse, rows: 4500, cols: 12}\npool: {topology: tree, shutdown_timeout: 2}\nstop: {time: 1}\nstragglers: {hang: {ranks: [5], after: 3}}\n' >tree.yaml
good=0
for i in 1 2 3 4; do
    run 10 tree.yaml
    [ "$rc" = 3 ] && [ "$(grep -c '^stop=time ' out.txt)" = 1 ] &&
        [ "$(wc -l <out.txt)" -ge 10 ] && good=$((good + 1))
done
is "$good" 4 "a tree with a hung worker: 4 of 4 runs exit 3 with the table and the summary"

# ------------------------------------------------- data that changed
# delivery: read, and the file rank 2 reads is not the one rank 0
# checked: each rank starts in its own folder (mpirun -wdir), and the job
# names the data relative to it.  The copies keep the file's size and
# time (cp -p), as one file seen from every node does; rank 2's, with
# one value changed after, must be refused, naming rank 2.
mkdir -p r0 r1 r2
printf 'algorithm: {plugin: gd}\nproblem:\n  plugin: lrmse\n  data: {path: lr.csv}\nstop: {iterations: 5}\n' >r0/job.yaml
for d in r0 r1 r2; do cp -p "$top_srcdir/etc/data/lr.csv" $d/; done
sed '1500s/^[^,]*,/9.5,/' "$top_srcdir/etc/data/lr.csv" >r2/lr.csv
mpmd() {
    own_session timeout -k 5 60 "$MPIRUN" --oversubscribe -np 1 -wdir "$PWD/r0" "$AIARUN" "$@" job.yaml : \
        -np 1 -wdir "$PWD/r1" "$AIARUN" "$@" job.yaml : \
        -np 1 -wdir "$PWD/r2" "$AIARUN" "$@" job.yaml
}
cp r0/job.yaml r1/; cp r0/job.yaml r2/
mpmd -q >out.txt 2>err.txt
rc=$?
is "$rc" 2 "a data file that differs on rank 2: refused with exit 2"
like "$(cat err.txt)" "aiarun\[0\]: job.yaml:4:3: problem.data: .*lr.csv: the file rank 2 read is not the one rank 0 checked \(its size or modification time differ\)" \
    "rank 0 names rank 2"
cp -p r0/lr.csv r2/lr.csv
mpmd -q >out.txt 2>err.txt
is "$?" 0 "the same file everywhere: the run goes on"

# ------------------------------------------------- data that never ends
# A FIFO blocks its reader, /dev/zero never ends: refused before opening.
mkfifo data.fifo
for f in "$PWD/data.fifo" /dev/zero; do
    printf 'algorithm: {plugin: gd}\nproblem:\n  plugin: lrmse\n  data:\n    path: %s\n    format: csv\nstop: {iterations: 5}\n' "$f" >nonreg.yaml
    run -t 20 3 nonreg.yaml
    is "$rc" 2 "$f as data: refused with exit 2, no hang"
    like "$err" "^aiarun\[0\]: nonreg.yaml:4:3: problem.data: .* is a (FIFO|device): data files are regular files" \
        "$f as data: named with the job's line and key"
done
done_testing
