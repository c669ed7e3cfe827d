#!/bin/sh
# A shard rank lost mid-run (pool.shards): SIGSTOPped, or SIGKILLed under
# mpirun --enable-recovery.  Rank 0 keeps its workers alive while it
# waits for the shard rank, declares it lost after pool.shard_timeout and
# ends the run as for a failed slice: exit 1, the summary printed, the
# history's rows whole, the last good checkpoint intact (--resume runs
# on from it), the workers told to leave, no lock file and no process
# left behind.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# the shard rank stopped is resumed and killed whatever happens here
trap 'for p in $(cat lost.pid 2>/dev/null); do kill -CONT "$p"; kill -KILL "$p"
      done 2>/dev/null; rm -rf "$trash"' EXIT

# pool.coordinator_timeout is short, so that workers given no keep-alive
# while rank 0 waits would leave first; the run stops only by the loss.
cat > job.yaml <<'YAML'
seed: 4
algorithm: {plugin: sag, step: 0.3}
problem: {plugin: lrmse, rows: 4000, cols: 21}
pool: {shards: 2, shard_timeout: 5, coordinator_timeout: 20}
stragglers: {work_ms: 20}
stop: {iterations: 1000000}
output: {history: h.csv, every: 1, checkpoint: ck.bin, checkpoint_every: 10}
YAML

# lose ROWS SIGNAL: once the run is under way (its history ROWS lines
# long and its checkpoint written), send SIGNAL to the shard rank, rank 1.
lose() {
    i=0
    while { [ "$(cat h.csv 2>/dev/null | wc -l)" -lt "$1" ] || [ ! -s ck.bin ]; } &&
        [ $i -lt 1200 ]; do
        sleep 0.1; i=$((i + 1))
    done
    for p in $(pgrep -f "$trash/job.yaml"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null |
            grep -qx OMPI_COMM_WORLD_RANK=1; then
            echo "$p" >> lost.pid
            kill "-$2" "$p"
        fi
    done
}

# check DESC ROWS STATUS: what every loss must leave (STATUS: the job's)
check() {
    is "$3" 1 "$1: exit status 1"
    like "$err" "stopping: shard rank 1 lost: no word from it for 5 s \\(pool.shard_timeout\\)" \
        "$1: rank 0 names the shard rank lost"
    expect_nogrep "$1: no worker leaves on its own" \
        "no word from the coordinator" err.txt
    like "$out" "^stop=error iterations=[0-9]+ " "$1: the summary line is printed"
    expect_ok "$1: the history holds the rows before the loss" \
        [ "$(wc -l < h.csv)" -ge "$2" ]
    expect_ok "$1: each of its rows whole" awk -F, '
        NR == 1 { n = NF } NF != n { exit 1 } END { exit NR < 2 }' h.csv
    expect_ok "$1: its last row ended" [ "$(tail -c 1 h.csv | od -An -c | tr -d ' ')" = '\n' ]
    expect_ok "$1: no lock file is left" [ ! -e ck.bin.lock ]
    i=0
    while [ -n "$(pgrep -f "$trash/job.yaml")" ] && [ $i -lt 300 ]; do
        sleep 0.1; i=$((i + 1))
    done
    is "$(pgrep -f "$trash/job.yaml")" "" "$1: no rank is left running"
    it=$(field iterations "$out")
    # the checkpoint of an iteration before the loss: the run goes on
    run 6 --resume -o stop.iterations=$((${it:-0} + 5)) job.yaml
    is "$rc" 0 "$1: --resume runs on from the last good checkpoint"
    is "$(field iterations "$out")" $((${it:-0} + 5)) "$1: to its limit"
    rm -f h.csv ck.bin lost.pid
}

# Stopped while rank 0 gathers the model every round (the history's
# loss and change): the workers wait idle, kept alive.
lose 30 STOP &
run -t 200 6 "$trash/job.yaml"
wait
check "a shard rank stopped" 30 "$rc"

# Stopped while the workers wait for its slices of their queries (no
# history row a round: rank 0 waits on the workers, the workers on it).
lose 2 STOP &
run -t 200 6 -o output.every=100000 "$trash/job.yaml"
wait
check "a shard rank stopped, workers waiting for its slices" 2 "$rc"

# Killed, under --enable-recovery: mpirun then ends with status 0
# whatever its ranks' (t0415), so each rank's own is read: rank 0's and
# each worker's 1 (told by rank 0's FINISH), none from the dead rank 1.
lose 30 KILL &
run -e -t 200 -m --enable-recovery 6 "$trash/job.yaml"
wait
is "$rank_status" "1 - 1 1 1 1" "a shard rank killed: each rank's exit status"
check "a shard rank killed" 30 "${rank_status%% *}"

done_testing
