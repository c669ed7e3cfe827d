#!/bin/sh
# Signals, timeouts and hangs: a run ends the way its keys and aiarun(1)
# say, whatever stops, hangs or dies.  Under --simulate, SIGUSR1, SIGINT
# and SIGTERM stop the run as under mpirun (whole history rows, the
# checkpoint, the summary, the documented status), and a plugin call that
# never returns is named and ends the run; under mpirun, a signal during
# the set-up kills no rank, a round longer than pool.coordinator_timeout
# does not make idle workers leave (the coordinator keeps them told, and
# names the worker the run waits on), pool.shutdown_timeout is waited
# for a worker that is computing, and workers whose coordinator died
# leave with status 1 and a line of their own.  The fixtures are
# t/fixtures/hostile.c.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=90

# ------------------------------------------------- signals under --simulate
cat >sig.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 5000000}
output: {history: h.csv, every: 1, checkpoint: ck.bin}
YAML
# simsig SIGNAL : a simulation stopped by SIGNAL once its history grows;
# sets rc, out, err.
simsig() {
    rm -f h.csv ck.bin
    "$AIARUN" --simulate 4 sig.yaml >out.txt 2>err.txt &
    pid=$!
    i=0
    while [ "$( (wc -l <h.csv) 2>/dev/null || echo 0)" -lt 100 ] && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -"$1" $pid
    wait $pid
    rc=$?
    out=$(cat out.txt)
    err=$(cat err.txt)
}
for s in USR1 INT TERM; do
    simsig $s
    case $s in
    USR1) want=0 says='stopped by SIGUSR1; checkpoint in ck.bin' ;;
    INT) want=1 says='stopped by signal 2; checkpoint in ck.bin' ;;
    TERM) want=1 says='stopped by signal 15; checkpoint in ck.bin' ;;
    esac
    is "$rc" $want "--simulate, SIG$s: exit status $want"
    like "$err" "aiarun\[0\]: $says" "--simulate, SIG$s: stderr says so"
    like "$out" "stop=signal " "--simulate, SIG$s: the summary line"
    test_expect "--simulate, SIG$s: the history ends with a whole row" \
        '[ "$(tail -c 1 h.csv | od -A n -c | tr -d " ")" = "\n" ] &&
         [ "$(tail -1 h.csv | tr -cd , | wc -c)" = "$(head -1 h.csv | tr -cd , | wc -c)" ]'
    expect_ok "--simulate, SIG$s: the checkpoint is written" [ -s ck.bin ]
done

# ------------------------------------------------- hangs under --simulate
# A worker step that never returns holds every simulated rank: it is
# named, with the key that bounds it, and the run ends with status 1.
hang() {
    printf 'algorithm: {plugin: %s, rank: 2, after: 3}\n' "$1"
    printf 'problem: {plugin: lrmse, rows: 400, cols: 4}\n'
    printf 'stop: {iterations: 1000}\noutput: {history: h.csv, every: 1}\n'
}
hang "$FIXTURES/hangstep.so" >hangstep.yaml
rm -f h.csv
sim --simulate 3 -o pool.dead_after=1 -o pool.coordinator_timeout=2 hangstep.yaml
is "$rc" 1 "--simulate, a step that never returns: exit 1, no hang"
like "$err" "aiarun\[0\]: the algorithm's worker step of rank 2 has not returned after 2 s \(pool.coordinator_timeout\)" \
    "--simulate: the hung call, its rank and its bound are named"
test_expect "--simulate, a hung step: the history rows made before it are whole" \
    '[ "$(wc -l <h.csv)" -ge 2 ] && [ "$(tail -c 1 h.csv | od -A n -c | tr -d " ")" = "\n" ]'
hang "$FIXTURES/hangcreate.so" >hangcreate.yaml
sim --simulate 3 -o pool.setup_timeout=2 hangcreate.yaml
is "$rc" 1 "--simulate, a create that never returns: exit 1"
like "$err" "the algorithm's create of rank 2 has not returned after 2 s \(pool.setup_timeout\)" \
    "--simulate: the set-up's calls are bounded by pool.setup_timeout"

# ------------------------------------------------- a signal during the set-up
# SIGUSR1 (Slurm's, forwarded by mpirun to every rank) while a plugin's
# create is running: no rank dies of it; here the create never returns,
# so pool.setup_timeout ends the job naming it.
run -t 60 3 -o pool.setup_timeout=6 hangcreate.yaml &
launcher=$!
ranks() {
    for p in $(pgrep -x aiarun); do
        [ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$PWD" ] &&
            grep -q hangcreate.so /proc/$p/maps 2>/dev/null && echo $p
    done
}
i=0
while [ "$(ranks | wc -l)" -lt 3 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
pids=$(ranks)
expect_ok "three ranks in the set-up ($(echo $pids))" [ "$(echo $pids | wc -w)" = 3 ]
kill -USR1 $pids
wait $launcher
err=$(cat err.txt)
like "$err" "aiarun\[2\]: set-up did not finish within 6 s \(pool.setup_timeout\): this rank is still in the algorithm's create" \
    "SIGUSR1 during a create: the set-up goes on and its bound names the step"
unlike "$err" "signal 10|User defined signal" "no rank died of SIGUSR1"

# ------------------------------------------------- a round longer than the silence bound
# Rank 2 takes 8 s a round, pool.coordinator_timeout is 3: rank 1, idle,
# hears keep-alives and stays; the coordinator names rank 2.
cat >slow.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
pool: {coordinator_timeout: 3}
stragglers: {fixed: {ranks: [2], delay_ms: [8000]}}
stop: {iterations: 2}
YAML
run 3 -q slow.yaml
is "$rc" 0 "a round of 8 s with pool.coordinator_timeout 3: the run ends well"
unlike "$err" "stopped or gone" "no worker leaves"
like "$out" "stop=iterations iterations=2 " "the summary line"
like "$err" "aiarun\[0\]: rank 2 has been busy for [0-9.]+ s with no answer \(pool.coordinator_timeout\)" \
    "the coordinator names the worker it waits on"

# ------------------------------------------------- shutdown_timeout waited for
# The only worker is in a 6 s step at the stop (2 s): it is alive and
# computing, so the coordinator waits for it, up to shutdown_timeout.
printf 'algorithm: {plugin: %s, rank: 1, after: 0, seconds: 6}\nproblem: {plugin: lrmse, rows: 400, cols: 4}\npool: {shutdown_timeout: 30}\nstop: {time: 2}\n' \
    "$FIXTURES/hangstep.so" >longstep.yaml
run 2 -q longstep.yaml
is "$rc" 0 "a worker in a 6 s step at the stop: waited for, exit 0"
unlike "$err" "did not stop within" "it is not left behind"
like "$out" "stop=time " "the summary line"

# ------------------------------------------------- a dead coordinator
# Under mpirun --enable-recovery the job goes on when a rank dies; when
# rank 0 dies (here of SIGABRT in absorb), each worker leaves after
# pool.coordinator_timeout with status 1 and a line of its own.
printf 'algorithm: {plugin: %s, after: 20, crash: 1}\nproblem: {plugin: lrmse, rows: 400, cols: 4}\npool: {dead_after: 1, coordinator_timeout: 3}\nstop: {time: 30}\n' \
    "$FIXTURES/crashabsorb.so" >deadcoord.yaml
run -e -m --enable-recovery 4 deadcoord.yaml
is "${rank_status#* }" "1 1 1" "a dead coordinator: every worker exits 1"
test_expect "each worker says why" \
    '[ "$(grep -c "no word from the coordinator for 3 s (pool.coordinator_timeout): it is stopped or gone; leaving" err.txt)" = 3 ]'
done_testing
