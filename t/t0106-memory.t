#!/bin/sh
# The memory a job's rows take, estimated before anything is allocated:
# more than the machine has available, than limits.memory or than
# AIARUN_MEMORY_LIMIT allow is refused at start with the figure.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat > job.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 1000, cols: 5}
stop: {iterations: 5}
YAML
check() { out=$("$AIARUN" --check "$@" 2>&1); rc=$?; }

check job.yaml
is "$rc" 0 "a small job passes"
check -o problem.rows=1000000000000 job.yaml
is "$rc" 2 "rows: 1e12 is refused"
like "$out" "command line \\(-o\\): the rows take at least 4e\\+04 GB on this machine \\(problem.rows 1000000000000 x problem.cols 5 doubles; 1 of 1 workers\\), more than the [0-9.e+]+ GB this machine has available \\(MemAvailable\\)" \
    "with the estimate and the machine's memory"
check -o problem.rows=1000 -o problem.cols=1000000000 job.yaml
like "$out" "the rows take at least 8000 GB" "cols: 1e9 is refused too"

check -o limits.memory=32K job.yaml
is "$rc" 2 "limits.memory lowers the bound"
like "$out" "the rows take at least 4e-05 GB .*more than the 3.277e-05 GB limits.memory allows" \
    "and is named"
check -o limits.memory=1M job.yaml
is "$rc" 0 "a job within limits.memory passes"
out=$(AIARUN_MEMORY_LIMIT=10K "$AIARUN" --check job.yaml 2>&1)
like "$out" "more than the 1.024e-05 GB AIARUN_MEMORY_LIMIT allows" "so does AIARUN_MEMORY_LIMIT"
out=$(AIARUN_MEMORY_LIMIT=10K "$AIARUN" --check -o limits.memory=1G job.yaml 2>&1)
is "$?" 0 "limits.memory wins over the environment"
check -o limits.memory=lots job.yaml
like "$out" "command line \\(-o\\): limits.memory: 'lots': expected bytes" "a bad limit is refused"

# libsvm rows stored dense: each row as many doubles as features
i=0; while [ $i -lt 100 ]; do echo "1 1:0.5 7:1"; i=$((i + 1)); done > d.svm
cat > dense.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem:
  plugin: logreg
  data: {path: d.svm, storage: dense, features: 100000000}
stop: {iterations: 5}
YAML
check dense.yaml
is "$rc" 2 "storage: dense, features: 1e8 is refused at start"
like "$out" "dense.yaml:4:3: the rows take at least 160 GB on this machine \\(at least 100 rows x problem.data.features 100000000 doubles, stored dense; 1 of 1 workers and the coordinator's copy\\)" \
    "naming problem.data, with the figure"

# under mpirun: refused before any rank allocates
start=$(date +%s)
run 3 -o problem.rows=1000000000 -o problem.cols=1000 job.yaml
out=$(cat out.txt err.txt)
took=$(( $(date +%s) - start ))
is "$rc" 2 "under mpirun: exit 2"
like "$out" "aiarun\\[[0-9]\\]: .*the rows take at least 8000 GB on this machine .*2 of 2 workers" \
    "the estimate counts the workers on the machine"
expect_ok "at once ($took s)" [ "$took" -lt 30 ]
done_testing
