#!/bin/sh
# SIGUSR1 (Slurm's --signal=B:USR1@SECONDS, forwarded by mpirun to every
# rank) stops a run as a limit would: the workers are told to stop, the
# checkpoint is written, the summary line printed, and --resume goes on.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
seed: 8
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 100000000, time: 60}
stragglers: {work_ms: 2}
output: {history: h.csv, every: 10, checkpoint: ck.bin, checkpoint_every: 20}
YAML
run 3 job.yaml &
launcher=$!
i=0
while [ ! -s ck.bin ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
start=$(date +%s)
# mpirun, under the background shell (run) and timeout
mpirun_pid() {
    for c in $(pgrep -P "$1"); do
        # mpirun, mpirun.openmpi (configure names the launcher of the
        # MPI it built for), or orterun
        case $(cat /proc/$c/comm 2>/dev/null) in
        mpirun | mpirun.* | orterun) echo "$c" ;;
        *) mpirun_pid "$c" ;;
        esac
    done
}
target=$(mpirun_pid "$launcher" | head -1)
expect_ok "mpirun found (pid $target)" [ -n "$target" ]
kill -USR1 "$target"
wait "$launcher"
rc=$?
took=$(( $(date +%s) - start ))
out=$(cat out.txt)
err=$(cat err.txt)
is "$rc" 0 "SIGUSR1 ends the run cleanly (exit 0)"
expect_ok "at once ($took s), not at the time limit" [ "$took" -lt 20 ]
like "$out" "stop=signal " "the summary line says why"
unlike "$err" "exiting improperly|aborted|did not stop" "mpirun saw every rank finish"
like "$err" "aiarun\\[0\\]: stopped by SIGUSR1; checkpoint in ck.bin" "stderr says so"
at=$(tail -1 h.csv | cut -d, -f1)
parts=$(od -A n -t u4 -j 24 -N 4 ck.bin | tr -d ' ')
ck=$(od -A n -t d8 -j $((32 + 24 * ${parts:-0})) -N 8 ck.bin | tr -d ' ')
same "$ck" "$at" "the checkpoint holds the last iteration ($at)"
run 3 --resume -o stop.iterations=$((at + 30)) job.yaml
is "$rc" 0 "--resume goes on from it"
is "$(field iterations "$out")" $((at + 30)) "to the new limit"
done_testing
