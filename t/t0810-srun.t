#!/bin/sh
# The README's srun line on a one-node Slurm cluster of the test's own
# (munged, slurmctld and slurmd started in the scratch folder on ports
# of their own, stopped at the end): the job runs under srun with the
# loss it has under mpirun, and SIGUSR1 from Slurm (scancel --signal, as
# --signal=USR1@SECONDS sends it) stops it cleanly, exit 0, the
# checkpoint written.  Only where AIA_SLURM=yes (CI sets it: the test
# starts daemons as root) and Slurm's and munge's programs are installed.
. "$top_srcdir/t/lib.sh"
[ "${AIA_SLURM:-}" = yes ] ||
    skip_all "AIA_SLURM=yes starts a one-node Slurm cluster (as in .ci/run)"
[ "$(id -u)" = 0 ] || skip_all "starting slurmd takes root"
for p in srun scancel sinfo slurmctld slurmd munged; do
    command -v $p >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
    command -v $p >/dev/null 2>&1 ||
        skip_all "$p is not installed (slurmd slurmctld slurm-client munge)"
done
[ -r /etc/munge/munge.key ] || skip_all "no /etc/munge/munge.key"
scratch
cd "$trash" || exit 99
D=$trash
mkdir state spool
# ports of this run's own, so that two runs do not meet
port=$((20000 + ($$ % 10000) * 2))
host=$(hostname -s)
cat > slurm.conf <<EOF
ClusterName=aiatest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/ctld.pid
SlurmdPidFile=$D/d.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldLogFile=$D/ctld.log
SlurmdLogFile=$D/d.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=aiatest Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
export SLURM_CONF=$D/slurm.conf
# the daemons this test started, by their pid files
stop_cluster() {
    for f in d.pid ctld.pid munged.pid; do
        [ -s "$D/$f" ] && kill "$(cat "$D/$f")" 2>/dev/null
    done
    sleep 1
    rm -rf "$D"
}
trap stop_cluster EXIT
munged --force --socket="$D/munge.sock" --key-file=/etc/munge/munge.key \
    --pid-file="$D/munged.pid" --log-file="$D/munged.log" \
    --seed-file="$D/munge.seed"
ok $? "munged starts"
slurmctld && slurmd
ok $? "slurmctld and slurmd start"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle || [ $i -ge 60 ]; do
    sleep 0.5; i=$((i + 1)); done
if sinfo -h -o %t 2>/dev/null | grep -q idle; then
    ok 0 "the one-node cluster is up"
else
    ok 1 "the one-node cluster is up"
    tail_of ctld.log
    tail_of d.log
    done_testing
fi

if [ $aia_ompi = yes ]; then mpi=pmix; else mpi=pmi2; fi
job=$top_srcdir/etc/gd-lrmse.yaml
run 5 "$job"
want=$(field loss "$out")
# the README's line, Open MPI's --mpi=pmix or MPICH's pmi2
timeout -k 5 120 srun --mpi=$mpi -n 5 --overcommit --signal=USR1@120 \
    "$AIARUN" "$job" </dev/null >srun-out.txt 2>srun-err.txt
is "$?" 0 "srun --mpi=$mpi -n 5 --signal=USR1@120 aiarun job.yaml: exit 0"
[ -s srun-err.txt ] && tail_of srun-err.txt
got=$(field loss "$(tail -1 srun-out.txt)")
same "$got" "$want" "the loss it has under mpirun ($want)"

# SIGUSR1 from Slurm to every rank of the step: a clean stop
cat > long.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {time: 60}
stragglers: {work_ms: 2}
output: {checkpoint: ck.bin, checkpoint_every: 20}
YAML
name=aia$$
timeout -k 5 120 srun --mpi=$mpi -n 3 --overcommit -J $name "$AIARUN" \
    long.yaml </dev/null >long-out.txt 2>long-err.txt &
step=$!
i=0
while [ ! -s ck.bin ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
scancel --signal=USR1 --name=$name
wait $step
is "$?" 0 "SIGUSR1 from scancel stops the run under srun: exit 0"
took=$(( $(date +%s) - start ))
expect_ok "at once ($took s), not at stop.time" [ "$took" -lt 30 ]
is "$(field stop "$(tail -1 long-out.txt)")" signal "stop=signal in the summary"
expect_grep "the coordinator says so" "stopped by SIGUSR1" long-err.txt
done_testing
