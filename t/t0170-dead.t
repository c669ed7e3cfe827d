#!/bin/sh
# A worker killed mid-run with mpirun --enable-recovery: the coordinator
# declares it dead after pool.dead_after seconds of silence and finishes
# with the others, exit status 0.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
algorithm: {plugin: sgd, step: 0.05}
problem: {plugin: lrmse}
pool:
  dead_after: 2
  wait: {nwait: 0}
stragglers: {work_ms: 5}
stop: {time: 8}
output: {workers: w.csv}
YAML
(
    sleep 3
    for p in $(pgrep -f "$trash/job.yaml"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=3; then
            kill -9 "$p"
        fi
    done
) &
start=$(date +%s)
run -m --enable-recovery 5 "$trash/job.yaml"
wait
took=$(( $(date +%s) - start ))
is "$rc" 0 "the job finishes without the dead worker, exit 0"
expect_ok "in bounded time ($took s)" [ "$took" -lt 60 ]
like "$err" "rank 3 declared dead: silent for 2[.0-9]* s \\(pool.dead_after\\); going on with [0-9] workers" \
    "it says which worker died"
is "$(field stop "$out")" time "the run reaches its limit"
like "$out" "
  dead +1 worker declared dead" "the report counts it"
like "$(echo "$out" | awk '$1 == 3')" "DEAD$" "the table marks it"
is "$(awk -F, '$1 == 3 { print $20 }' w.csv)" 0 "it is not counted unresponsive"
# epochs counted after the death: iterations with all 3 live workers
epochs=$(field epochs "$out")
iterations=$(field iterations "$out")
expect_ok "epochs go on with the live workers ($epochs of $iterations iterations)" \
    [ "${epochs:-0}" -gt $(( ${iterations:-0} * 3 / 4 )) ]
done_testing
