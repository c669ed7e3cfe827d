#!/bin/sh
# The python algorithm: etc/gd.py, gd written in NumPy, ends at the gd
# plugin's iterate on the same job under mpirun and --simulate (stale
# answers and async mode too, and over the python problem) and through a
# checkpoint and --resume; an
# exception in any method of the class ends the run on every rank with
# one line naming its file:line, the history kept; a missing method, a
# wrong return shape and a wrong call of the context are named.
. "$top_srcdir/t/lib.sh"
# Built without Python: a job naming the plugin is refused, saying why.
if [ "$AIA_HAVE_PYTHON" != yes ]; then
    out=$("$AIARUN" --check "$top_srcdir/etc/python-gd.yaml" 2>&1)
    is "$?" 2 "without Python, a job of the python algorithm is refused with exit 2"
    like "$out" "python-gd.yaml:[0-9]+:[0-9]+: algorithm: plugin 'python' is not available: this aiarun was built without Python" \
        "saying that this aiarun was built without Python"
    done_testing
fi
why=$(python_missing numpy)
[ -z "$why" ] || skip_all "$why"
scratch
cd "$trash" || exit 99
cp "$top_srcdir/etc/gd.py" "$top_srcdir/etc/python-gd.yaml" .
# the same job on the gd plugin
sed -e 's/plugin: python/plugin: gd/' -e '/class:/d' python-gd.yaml >c-gd.yaml

# relerr A B: max |a - b| / max |b| over two files of numbers, "bad" when
# they differ in shape or b is all zeros
relerr() {
    "$AIA_PYTHON" -c 'import sys, numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
ok = a.shape == b.shape and a.size and abs(b).max() > 0
print("%.3g" % (abs(a - b).max() / abs(b).max()) if ok else "bad")' "$1" "$2"
}
close12() { [ -n "$1" ] && [ "$1" != bad ] && float_le "$1" 1e-12; }
# iteration, epoch and loss of each history row: the time differs
rows() { cut -d, -f1,2,4 "$1"; }

# --- the same job, gd's iterate: a step that still moves it at the end
o="-o stop.iterations=30 -o algorithm.step=0.2"
run 5 $o -o output.final=py.txt -o output.history=py.csv python-gd.yaml
is "$rc" 0 "etc/gd.py runs under mpirun -np 5"
[ "$rc" = 0 ] || run_diag
run 5 $o -o output.final=c.txt -o output.history=c.csv c-gd.yaml
d=$(relerr py.txt c.txt)
expect_ok "its final iterate is the gd plugin's to 1e-12 relative ($d)" \
    close12 "$d"
same "$(rows py.csv)" "$(rows c.csv)" "and so is every history row's loss"
run 5 -o stop.iterations=29 -o algorithm.step=0.2 -o output.final=c29.txt \
    -o output.history= c-gd.yaml
d=$(relerr py.txt c29.txt)
test_expect "a comparison that can fail: one iteration fewer differs ($d)" \
    '[ "$d" != bad ] && ! float_le "$d" 1e-9'

# --- --simulate: a straggler with nwait 2 (stale answers: the age
# factor) and async mode (where gd keeps running sums: its rounding)
sed '/^pool:/,/nwait/d' python-gd.yaml >sim.yaml
sed '/^pool:/,/nwait/d' c-gd.yaml >c-sim.yaml
s="-o stragglers.work_ms=1 -o stragglers.fixed.ranks=[2] -o stragglers.fixed.delay_ms=5 -o output.history="
for mode in "pool.wait.nwait=2" "pool.mode=async"; do
    sim --simulate 4 $s -o $mode -o output.final=spy.txt sim.yaml
    is "$rc" 0 "--simulate 4, $mode: etc/gd.py runs"
    stale=$(awk '$1 ~ /^[0-9]+$/ && NF > 8 { s += $4 } END { print s + 0 }' out.txt)
    expect_ok "with stale answers ($stale)" [ "$stale" -gt 0 ]
    sim --simulate 4 $s -o $mode -o output.final=sc.txt c-sim.yaml
    d=$(relerr spy.txt sc.txt)
    expect_ok "and ends at the gd plugin's iterate to 1e-12 relative ($d)" \
        close12 "$d"
done

# --- step: auto through ctx.auto_step: the runtime's rule and report
sim --simulate 4 -o algorithm.step=auto -o output.history= python-gd.yaml
pystep=$(printf '%s\n' "$out" | grep '^  step ')
sim --simulate 4 -o algorithm.step=auto -o output.history= c-gd.yaml
like "$pystep" "^  step +[0-9.]+: auto: 1/L, gradient descent's step, with L = [0-9.]+ from the problem" \
    "step: auto is 1/L, the report saying so"
same "$pystep" "$(printf '%s\n' "$out" | grep '^  step ')" "the gd plugin's step and words"

# --- one file, python.so, holds both plugins: --list-plugins names
# both, and a job may use both, in one interpreter
list=$("$AIARUN" --list-plugins)
like "$list" "^algorithm +python +[0-9.]+ +/.*/python\.so" \
    "--list-plugins lists the python algorithm"
like "$list" "^problem +python +[0-9.]+ +/.*/python\.so" "and the python problem, from one file"
cp "$top_srcdir/etc/lsq.py" "$top_srcdir/etc/python-lsq.yaml" .
mkdir data && cp "$top_srcdir/etc/data/lr.csv" data/
sim --simulate 4 -o algorithm.plugin=python -o algorithm.class=gd:GD \
    -o output.history= -o output.final=pp.txt python-lsq.yaml
is "$rc" 0 "etc/gd.py on etc/lsq.py: both python plugins in one job"
sim --simulate 4 -o output.history= -o output.final=pc.txt python-lsq.yaml
expect_ok "end where the gd plugin on etc/lsq.py ends, bit for bit" same_file pp.txt pc.txt

# --- a checkpoint, then --resume: the uninterrupted run's iterate
k="-o output.checkpoint=ck.bin -o output.checkpoint_every=5"
run 5 $o $k -o stop.iterations=20 -o output.history=h.csv python-gd.yaml
is "$rc" 0 "a run stopped at iteration 20 with checkpoints"
run 5 $o $k --resume -o output.final=res.txt -o output.history=h.csv python-gd.yaml
is "$rc" 0 "--resume runs on"
like "$out" "resumed +from ck.bin at iteration 20 " "from iteration 20"
expect_ok "to the uninterrupted run's final iterate, bit for bit" same_file res.txt py.txt
same "$(rows h.csv)" "$(rows py.csv)" "with one history, the uninterrupted run's"

# --- an exception in each method: one line with its place, every rank
cat >boom.py <<'PY'
import os
from gd import GD


class Boom(GD):
    """GD that raises in method where on rank (-1: any), after calls."""

    def __init__(self, where="query", after=2, rank=-1, step=0.2):
        super().__init__(step)
        self.where, self.after, self.rank, self.calls = where, after, rank, 0

    def boom(self, name):
        if name == self.where and self.rank in (-1, self.ctx.rank):
            self.calls += 1
            if self.calls > self.after or os.path.exists("fail-" + name):
                raise ValueError("%s failed after %d calls" % (name, self.after))

    def create(self, ctx):
        self.ctx = ctx
        self.boom("create")
        return super().create(ctx)

    def init(self, query):
        self.boom("init")
        super().init(query)

    def worker(self, query, answer, step):
        self.boom("worker")
        super().worker(query, answer, step)

    def absorb(self, answer, info):
        self.boom("absorb")
        super().absorb(answer, info)

    def query(self, query):
        self.boom("query")
        super().query(query)

    def save(self):
        self.boom("save")
        return super().save()

    def load(self, state):
        self.boom("load")
        super().load(state)


class BoomIt(Boom):
    def iterate(self, x):
        self.boom("iterate")
        x[:] = self.x
PY
line=$(grep -n 'raise ValueError' boom.py | cut -d: -f1)
cat >boom.yaml <<'YAML'
algorithm: {plugin: python, class: boom:Boom, where: query, after: 2}
problem: {plugin: lrmse, rows: 400, cols: 5}
stop: {iterations: 40}
output: {history: boom.csv, every: 1}
YAML
for case in "create 0 2 create" "init 0 1 init" "worker 2 1 worker step" \
    "absorb 2 1 absorb \\(answer of rank [0-9]\\)" "query 2 1 query" \
    "iterate 2 1 iterate"; do
    set -- $case
    op=$1 after=$2 want=$3
    shift 3
    call=$*
    rm -f boom.csv
    cls=boom:Boom
    [ "$op" = iterate ] && cls=boom:BoomIt
    # the run's model is the iterate: gd.py's without iterate()
    # a worker's exception on rank 2 alone; the coordinator's on rank 0
    rank=-1
    [ "$op" = worker ] && rank=2
    run -e 4 -o algorithm.class=$cls -o algorithm.where=$op \
        -o algorithm.after=$after -o algorithm.rank=$rank boom.yaml
    is "$rank_status" "$want $want $want $want" \
        "an exception in $op(): every rank exits $want"
    if [ "$op" = create ]; then
        like "$err" "boom.yaml:1:[0-9]+: algorithm: boom:Boom.create: ValueError: create failed after 0 calls \\(at [^ ]*/boom.py:$line\\)" \
            "naming the job, the method, the exception and its file:line"
    else
        like "$err" "aiarun\\[0\\]: .*algorithm 'python': $call: boom:Boom[It]*\\.$op: ValueError: $op failed after $after calls \\(at [^ ]*/boom.py:$line\\)" \
            "$op: one line naming the call, the exception and its file:line"
        [ "$op" = worker ] && like "$err" "stopping: rank 2 failed: " \
            "naming the worker's rank"
    fi
    is "$(printf '%s\n' "$err" | grep -c "failed after")" 1 \
        "$op: no other line carries it (no traceback, no rank's own copy)"
    case $op in worker | absorb | query | iterate)
        expect_ok "$op: the history of the rounds before it is kept" \
            [ -s boom.csv ] ;;
    esac
done

# save() and load(), through a checkpoint
run -e 3 $k -o algorithm.where=save -o algorithm.after=1 boom.yaml
is "$rank_status" "1 1 1" "an exception in save(): every rank exits 1"
like "$err" "algorithm 'python': save: boom:Boom.save: ValueError: save failed after 1 calls \\(at [^ ]*/boom.py:$line\\)" \
    "naming the checkpoint's save and the place"
run 3 $k -o algorithm.where=load -o stop.iterations=12 boom.yaml
is "$rc" 0 "a checkpoint from a class whose load() will fail"
touch fail-load
run -e 3 $k -o algorithm.where=load --resume boom.yaml
rm -f fail-load
is "$rank_status" "1 1 1" "an exception in load() at --resume: every rank exits 1"
like "$err" "cannot resume: algorithm 'python': load: boom:Boom.load: ValueError: load failed after 2 calls \\(at [^ ]*/boom.py:$line\\)" \
    "naming the load and the place"

# under --simulate
sim --simulate 3 -o algorithm.where=absorb boom.yaml
is "$rc" 1 "--simulate: an exception in absorb() exits 1"
like "$err" "boom:Boom.absorb: ValueError: absorb failed after 2 calls \\(at [^ ]*/boom.py:$line\\)" \
    "with the same line"

# --- classes that lack a method or return the wrong shape
cat >bad.py <<'PY'
import numpy as np
from gd import GD


class NoAbsorb:
    def create(self, ctx):
        return None
    def init(self, q):
        pass
    def worker(self, q, a, step):
        pass
    def query(self, q):
        pass


class SaveOnly(GD):
    load = None


class NoSave(GD):
    save = load = None


class Lengths(GD):
    def create(self, ctx):
        super().create(ctx)
        return "twenty"


class Short(GD):
    def query(self, query):
        return np.zeros(3)


class BadX(GD):
    def worker(self, query, answer, step):
        self.ctx.gradient(query[:3], out=answer)


class WriteAnswer(GD):
    def absorb(self, answer, info):
        answer[0] = 1.0
PY
shortdef=$(grep -n 'def query(self, query):' bad.py | tail -1 | cut -d: -f1)
badx=$(grep -n 'query\[:3\]' bad.py | cut -d: -f1)
wa=$(grep -n 'answer\[0\] = 1.0' bad.py | cut -d: -f1)
sed 's/class: boom:Boom, where: query, after: 2/class: bad:NoSave/' boom.yaml >bad.yaml
for case in \
    "NoAbsorb 2 algorithm: class 'bad:NoAbsorb' has no method absorb\\(answer, info\\)" \
    "SaveOnly 2 algorithm: class 'bad:SaveOnly' has save\\(\\) but no load\\(state\\): a checkpoint needs both" \
    "Lengths 2 algorithm: bad:Lengths.create: ValueError: create\\(\\) returned 'twenty': give the query's length" \
    "Short 1 algorithm 'python': query: bad:Short.query: ValueError: query\\(\\) returned 3 values for a query of 5 \\(at [^ ]*/bad.py:$shortdef\\)" \
    "BadX 1 bad:BadX.worker: ValueError: x: 3 values, where the problem's dimension is 5 \\(at [^ ]*/bad.py:$badx\\)" \
    "WriteAnswer 1 bad:WriteAnswer.absorb: ValueError: assignment destination is read-only \\(at [^ ]*/bad.py:$wa\\)"; do
    cls=${case%% *}
    rest=${case#* }
    want=${rest%% *}
    msg=${rest#* }
    run -e 3 -o algorithm.class=bad:$cls bad.yaml
    is "$rank_status" "$want $want $want" "class $cls: every rank exits $want"
    like "$err" "$msg" "class $cls: named in one line"
done
run 3 $k bad.yaml
is "$rc" 1 "a class without save() in a job with checkpoints: exit 1"
like "$err" "save: class 'bad:NoSave' has no save\\(\\) and load\\(\\): its state cannot be checkpointed" \
    "saying that its state cannot be checkpointed"
run 3 bad.yaml
is "$rc" 0 "and runs without checkpoints"
done_testing
