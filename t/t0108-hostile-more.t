#!/bin/sh
# More hostile cases: two runs on one checkpoint (its lock file), plugin
# error texts on every path (init, load, save, loss, metric), a libsvm
# file whose one huge index would make a huge run (and a CSV file's
# estimate), a tree of arity above 64.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99
export AIA_TIMEOUT=60

cat > job.yaml <<'YAML'
seed: 3
algorithm: {plugin: gd, step: 0.3}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 30}
YAML

# --- a checkpoint another process holds (its lock file, flocked)
aia_mpirun 3 -q -o output.checkpoint=ck.bin job.yaml >/dev/null 2>&1
cp ck.bin ck.orig
( exec 9>ck.bin.lock && flock -x 9 && exec sleep 30 ) &
holder=$!
sleep 1
err=$(aia_mpirun 3 -q -o output.checkpoint=ck.bin job.yaml 2>&1); rc=$?
is "$rc" 2 "a checkpoint another run holds is refused"
like "$err" "ck\\.bin: another run is writing it" "and the message says why"
err=$(aia_mpirun 3 -q --resume -o output.checkpoint=ck.bin \
    -o stop.iterations=40 job.yaml 2>&1); rc=$?
is "$rc" 2 "--resume from a checkpoint another run holds is refused"
like "$err" "cannot resume: ck\\.bin: another run is writing it" \
    "and says so"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
cmp -s ck.bin ck.orig; ok $? "the checkpoint is left as it was"
err=$(aia_mpirun 3 -q --resume -o output.checkpoint=ck.bin \
    -o stop.iterations=40 job.yaml 2>&1); rc=$?
is "$rc" 0 "once released, --resume takes it"
[ "$rc" = 0 ] || diag "$err"
ok $([ -e ck.bin.lock ] && echo 1 || echo 0) "and removes the lock file at the end"

# two runs of aiarun: the second is refused while the first writes
rm -f ck.bin
aia_mpirun 3 -q -o output.checkpoint=ck.bin -o stop.iterations=0 \
    -o stop.time=6 -o output.checkpoint_seconds=0.5 job.yaml \
    >first.out 2>&1 &
first=$!
i=0; while [ ! -e ck.bin ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
err=$(aia_mpirun 3 -q -o output.checkpoint=ck.bin job.yaml 2>&1); rc=$?
is "$rc" 2 "a second run on the checkpoint the first writes is refused"
like "$err" "ck\\.bin: another run is writing it" "naming it"
wait "$first"; rc=$?
is "$rc" 0 "the first run ends well"
[ "$rc" = 0 ] || diag "exit $rc" "$(cat first.out)"

# --- plugin error texts on every path: init, save, load (the algorithm),
# loss, metric (the problem); empty, unterminated, control characters
cat > alg.yaml <<YAML
algorithm: {plugin: $FIXTURES/failstep.so}
problem: {plugin: lrmse, rows: 400, cols: 4}
stop: {iterations: 20}
YAML
cat > prob.yaml <<YAML
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: $FIXTURES/failprob.so}
stop: {iterations: 20}
output: {history: h.csv}
YAML
for where in init save load loss metric; do
    case $where in
    init) args="-o algorithm.where=init alg.yaml" what="algorithm 'failstep': init" ;;
    save) args="-o algorithm.where=save -o output.checkpoint=save.bin alg.yaml"
        what="algorithm 'failstep': save" ;;
    load) args="--resume -o stop.iterations=30 -o algorithm.where=load -o output.checkpoint=load.bin alg.yaml"
        what="algorithm 'failstep': load" ;;
    loss) args="-o problem.where=loss prob.yaml" what="problem 'failprob': loss" ;;
    metric) args="-o problem.where=metric prob.yaml" what="problem 'failprob': failmetric" ;;
    esac
    key=algorithm; case $where in loss|metric) key=problem ;; esac
    # a checkpoint of the same job (the text is among its keys) to resume
    loadable() {
        [ "$where" = load ] || return 0
        aia_mpirun 2 -q -o algorithm.where=load -o algorithm.text="$1" \
            -o output.checkpoint=load.bin alg.yaml >/dev/null 2>&1
    }
    loadable empty
    # shellcheck disable=SC2086
    err=$(aia_mpirun 2 -q -o $key.text=empty $args 2>&1)
    line=$(printf '%s\n' "$err" | grep "$what" | head -1)
    like "$line" "$what: \\(no reason given\\)\$" "$where: an empty text is defaulted"
    loadable unterminated
    # shellcheck disable=SC2086
    err=$(aia_mpirun 2 -q -o $key.text=unterminated $args 2>&1)
    line=$(printf '%s\n' "$err" | grep "$what" | head -1)
    rest=$(printf '%s' "$line" | sed "s/.*$what: //")
    like "$rest" "^A{100,}" "$where: an unterminated text is shown"
    ok $(printf '%s' "$rest" | grep -q '^A*\(\.\.\.\)\{0,1\}$' &&
        [ ${#rest} -lt 320 ] && echo 0 || echo 1) \
        "$where: cut within its buffer (${#rest} bytes)"
    loadable control
    # shellcheck disable=SC2086
    err=$(aia_mpirun 2 -q -o $key.text=control $args 2>&1)
    like "$err" "$what: bad\\\\t$where\\\\x1b\\[31m red\\\\nsecond line" \
        "$where: control characters are escaped"
done

# --- memory: a libsvm file whose one index is 1e8 makes a model of 1e8
# doubles on every rank; a CSV file's rows counted from its lines
printf '1 1:0.5 3:2\n-1 100000000:1 # 999999999999:1 in a comment\n' >big.svm
cat > svm.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: logreg, data: {path: big.svm}}
stop: {iterations: 5}
YAML
err=$(AIARUN_MEMORY_LIMIT=1G "$AIARUN" --check svm.yaml 2>&1); rc=$?
is "$rc" 2 "--check: a libsvm index of 1e8 above the limit is refused"
like "$err" "svm\.yaml:2:[0-9]+: the rows and the model take at least 1\.6 GB on this machine \(a feature index of 100000000: a model of as many doubles on each rank; 1 of 1 workers and the coordinator's copy\), more than the 1\.074 GB AIARUN_MEMORY_LIMIT allows" \
    "with the figure (a comment's index is not counted)"
start=$(date +%s)
err=$(AIARUN_MEMORY_LIMIT=1G aia_mpirun 3 svm.yaml 2>&1); rc=$?
took=$(( $(date +%s) - start ))
is "$rc" 2 "under mpirun: refused"
like "$err" "the rows and the model take at least 2\.4 GB on this machine" \
    "counting every rank's model"
ok $([ "$took" -lt 30 ] && echo 0 || echo 1) "before anything is allocated ($took s)"
err=$(AIARUN_MEMORY_LIMIT=1G "$AIARUN" --check \
    -o problem.data.features=300000000 svm.yaml 2>&1)
like "$err" "at least 4\.8 GB on this machine \(problem\.data\.features 300000000: " \
    "problem.data.features given: the estimate takes it"

awk 'BEGIN { print "a,b,c"; for (i = 0; i < 20000; i++) print i "," i "," i }' >big.csv
cat > csv.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, data: {path: big.csv}}
stop: {iterations: 5}
YAML
err=$(AIARUN_MEMORY_LIMIT=100K "$AIARUN" --check csv.yaml 2>&1); rc=$?
is "$rc" 2 "a CSV file above the limit is refused"
like "$err" "csv\.yaml:2:[0-9]+: the rows take at least 0\.00064 GB on this machine \(at least 20000 rows x 2 columns of doubles; " \
    "with its rows and columns"
AIARUN_MEMORY_LIMIT=1M "$AIARUN" --check csv.yaml >/dev/null 2>&1
is "$?" 0 "and passes within it"

# --- a tree of arity above 64 (nodes once held int child[64]): every one
# of 66 workers gets each query.  67 ranks under mpirun on a small machine
# take minutes, so the protocol runs under --simulate, whose tree is the
# MPI tree's (tree_children).
cat > tree70.yaml <<'YAML'
seed: 1
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: lrmse, rows: 660, cols: 3}
pool: {topology: tree, arity: 70}
simulate: {row_us: 0, latency_us: 0}
stop: {iterations: 5}
output: {workers: w.csv}
YAML
# arity 65: the coordinator's 65 children, one of them with a child of its
# own; the epochs count the rows the answers stand for, every worker's
for arity in 70 65; do
    children=$((arity < 66 ? arity : 66))
    out=$(timeout -k 5 60 "$AIARUN" --simulate 66 -q -o pool.arity=$arity \
        tree70.yaml 2>err.txt); rc=$?
    is "$rc" 0 "arity $arity over 66 workers: exit 0"
    [ "$rc" = 0 ] || diag "$(cat err.txt)"
    is "$(field answers "$out")" $((5 * children)) \
        "arity $arity: 5 answers from each of the coordinator's $children children"
    is "$(awk -F, 'NR > 1 && $2 == 5 && $3 == 5' w.csv | wc -l | tr -d ' ')" \
        $children "arity $arity: each got every query and answered it"
    is "$(field epochs "$out")" 5 "arity $arity: the answers cover every row"
done

done_testing
