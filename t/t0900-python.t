#!/bin/sh
# The python problem: NumPy least squares ends at lrmse's iterates, a
# Python exception ends the run with its text and place on every rank, a
# wrong class is refused at --check, the constructor gets the job's keys
# with their YAML types.
. "$top_srcdir/t/lib.sh"
# Built without Python: a job naming the plugin is refused, saying why.
if [ "$AIA_HAVE_PYTHON" != yes ]; then
    out=$("$AIARUN" --check "$top_srcdir/etc/python-lsq.yaml" 2>&1)
    is "$?" 2 "without Python, a python job is refused with exit 2"
    like "$out" "python-lsq.yaml:[0-9]+:[0-9]+: problem: plugin 'python' is not available: this aiarun was built without Python" \
        "saying that this aiarun was built without Python"
    done_testing
fi
why=$(python_missing numpy)
[ -z "$why" ] || skip_all "$why"
scratch
cd "$trash" || exit 99
cp "$top_srcdir/etc/lsq.py" "$top_srcdir/etc/python-lsq.yaml" .
mkdir data && cp "$top_srcdir/etc/data/lr.csv" data/

# max |a - b| over two files of numbers, or "bad" when they differ in shape
maxdiff() {
    "$AIA_PYTHON" -c 'import sys, numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
print("%.3g" % abs(a - b).max() if a.shape == b.shape and a.size else "bad")' "$1" "$2"
}

# within 1e-12, and measured
close12() { [ -n "$1" ] && [ "$1" != bad ] && float_le "$1" 1e-12; }

# --- the same rows, the same iterates as lrmse
sed -e 's/plugin: python/plugin: lrmse/' -e '/class:/d' python-lsq.yaml > lrmse.yaml
for alg in gd average; do
    o="-o algorithm.plugin=$alg -o stop.iterations=60"
    [ $alg = average ] && o="$o -o algorithm.batch=20 -o algorithm.local_steps=3 -o algorithm.step=0.2"
    run 4 $o -o output.final=py-$alg.txt -o output.history=py-$alg.csv python-lsq.yaml
    is "$rc" 0 "$alg: the NumPy class runs under mpirun -np 4"
    [ "$rc" = 0 ] || diag "$err"
    run 4 $o -o output.final=lr-$alg.txt -o output.history=lr-$alg.csv lrmse.yaml
    d=$(maxdiff py-$alg.txt lr-$alg.txt)
    expect_ok "$alg: final iterate within 1e-12 of lrmse's ($d)" close12 "$d"
    cut -d, -f1,2,4 py-$alg.csv | sed 1d | tr , ' ' > py.txt
    cut -d, -f1,2,4 lr-$alg.csv | sed 1d | tr , ' ' > lr.txt
    d=$(maxdiff py.txt lr.txt)
    expect_ok "$alg: every history row's loss within 1e-12 of lrmse's ($d)" \
        close12 "$d"
done
# --- optimum() from the workers' sums (summary_len, summarize, combine:
# the coordinator holds none of the rows), as lrmse's from its Gram sums
run 4 -o stop.iterations=5 python-lsq.yaml
pyopt=$(field optimum "$out") pygap=$(field gap "$out")
run 4 -o stop.iterations=5 lrmse.yaml
lropt=$(field optimum "$out") lrgap=$(field gap "$out")
test_expect "optimum() is asked, from the workers' sums: lrmse's optimum to 1e-12 ($pyopt, $lropt)" \
    '[ -n "$pyopt" ] && [ -n "$lropt" ] &&
    awk -v a="$pyopt" -v b="$lropt" "BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(d <= 1e-12 * b) }"'
like "$pygap $lrgap" "^[0-9.e+-]+ [0-9.e+-]+$" "and the summary gives the gap ($pygap, $lrgap)"
# under --simulate the coordinator holds the rows: optimum() from its own
out=$("$AIARUN" --simulate 3 -o stop.iterations=5 python-lsq.yaml 2>&1)
is "$(field optimum "$out")" "$pyopt" "and under --simulate, from the rows themselves"

# --- stop.gap with a class that cannot give its optimum: the refusal
# says what to add (hvp, or the sums for optimum())
sed -e 's/    def hvp/    def _hvp/' -e 's/    def summ/    def _summ/' \
    -e 's/    def combine/    def _combine/' lsq.py > nosums.py
sed -e 's/lsq:LeastSquares/nosums:LeastSquares/' -e 's/iterations: 100/gap: 1e-3/' \
    python-lsq.yaml > nosums.yaml
run 3 nosums.yaml
is "$rc" 2 "stop.gap, optimum() but no sums and no hvp: refused"
like "$err" "nosums.yaml:[0-9]+:[0-9]+: stop.gap: .*class 'nosums:LeastSquares': .*give it hvp\(x, v\).*or summary_len, summarize\(\) and combine\(total\)" \
    "saying what the class should add: $(printf '%s\n' "$err" | head -1)"
sed 's/    def optimum/    def _optimum/' nosums.py > noopt.py
sed 's/nosums:/noopt:/' nosums.yaml > noopt.yaml
run 3 noopt.yaml
like "$rc $err" "^2 .*class 'noopt:LeastSquares': the rows are the workers' and the class has no optimum\(\): give it hvp\(x, v\)" \
    "and without optimum(): exit 2, the same advice"
sed -e 's/nosums:/lsq:/' nosums.yaml > hvpgap.yaml
sed -i 's/    def summ/    def _summ/; s/    def combine/    def _combine/' lsq.py
run 3 -v hvpgap.yaml
like "$(printf '%s\n' "$out" | grep '^stop=') rc=$rc" "^stop=gap .*optimum=$pyopt .* rc=0$" \
    "with hvp and no sums, stop.gap finds the optimum over the workers' rows"
cp "$top_srcdir/etc/lsq.py" .

# --- hvp() and gram() returning the wrong length: named, at the class's
# method (not in aiarun's bridge)
cat > badlen.py <<'PY'
from lsq import LeastSquares
class BadLen(LeastSquares):
    def hvp(self, x, v):
        return v[:-1]
    def gram(self, b):
        return b[:-1]
PY
sed -e 's/lsq:LeastSquares/badlen:BadLen/' -e 's/plugin: gd/plugin: newton/' \
    -e '/step: 0.5/d' python-lsq.yaml > badhvp.yaml
run 3 badhvp.yaml
like "$rc $err" "^1 .*badlen:BadLen.hvp: ValueError: hvp\(\) returned 7 values for a model of 8 \(at [^ ]*/badlen.py:3\)" \
    "hvp() of the wrong length: exit 1, the method and its definition named"
sed 's/plugin: newton/plugin: subspace/' badhvp.yaml > badgram.yaml
run 3 badgram.yaml
like "$rc $err" "^1 .*badlen:BadLen.gram: ValueError: gram\(\) returned [0-9]+ values for a block of [0-9]+ \(at [^ ]*/badlen.py:5\)" \
    "gram() of the wrong length: the same"
unlike "$err" "bridge.py" "neither blamed on aiarun's bridge"

# --- a class's smoothness() is the L of step: auto, as lrmse's own
run 4 -o algorithm.step=auto -o stop.iterations=5 python-lsq.yaml
is "$rc" 0 "step: auto with the class's smoothness(): exit 0"
pyL=$(printf '%s\n' "$out" | sed -n 's/.*smoothness *L = \([^,]*\),.*/\1/p')
run 4 -o algorithm.step=auto -o stop.iterations=5 lrmse.yaml
lrL=$(printf '%s\n' "$out" | sed -n 's/.*smoothness *L = \([^,]*\),.*/\1/p')
# lrmse's power iteration stops within 1e-3 of the top eigenvalue
test_expect "the report's L is lrmse's on the same rows to 1e-3 ($pyL, $lrL)" \
    '[ -n "$pyL" ] && [ -n "$lrL" ] &&
    awk -v a="$pyL" -v b="$lrL" "BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(d <= 1e-3 * a) }"'

# --- an exception: its text and place, exit 1 from every rank
cat > boom.py <<'PY'
import numpy as np
class Boom:
    def __init__(self, after=2, dim=3, rows=10):
        self.after, self.dim, self.rows, self.calls = after, dim, rows, 0
    def open(self, ctx):
        self.ctx = ctx
        return self.dim
    def loss(self, x):
        return float(x @ x)
    def gradient(self, x, idx, g):
        self.calls += 1
        if self.ctx.worker == 1 and self.calls > self.after:
            raise ValueError("no gradient after %d calls" % self.after)
        g[:] = 2 * x
PY
cat > boom.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem: {plugin: python, class: boom:Boom, after: 2}
pool: {wait: {nwait: 0}}
stop: {iterations: 50}
output: {history: boom.csv}
YAML
run 4 boom.yaml
is "$rc" 1 "an exception in gradient: exit status 1"
like "$err" "ValueError: no gradient after 2 calls \(at [^ ]*boom.py:13\)" \
    "the error names the exception, its text and its file:line"
like "$err" "aiarun\[0\]: stopping: rank 2 failed: .*boom:Boom.gradient: ValueError: no gradient after 2 calls" \
    "the coordinator reports it, in one line, naming the rank"
is "$(printf '%s\n' "$err" | grep -c 'no gradient after')" 1 \
    "no other line (no Python traceback, no rank's own copy) carries it"
like "$out" "iterations=[23] " "the summary is kept (the rounds before it)"
expect_ok "and the history" [ -s boom.csv ]

# raised inside NumPy's Python code: the place named is the class's call
cat > lib.py <<'PY'
import numpy as np
from boom import Boom
class Lib(Boom):
    def gradient(self, x, idx, g):
        np.repeat(np.zeros(2), np.ones(2, dtype=np.uint64))
PY
sed 's/boom:Boom/lib:Lib/' boom.yaml > lib.yaml
run 3 lib.yaml
is "$rc" 1 "an exception raised in NumPy: exit 1"
like "$err" "lib:Lib.gradient: TypeError: .* \(at [^ ]*/lib.py:5\)" \
    "the place named is the line of the class that called NumPy"

sed 's/after: 2/after: 2, dim: -1/' boom.yaml > neg.yaml
run 3 neg.yaml
is "$rc" 2 "open() returning a negative dimension: exit 2"
like "$err" "neg.yaml:2:[0-9]+: problem: class 'boom:Boom': ValueError: a negative size" \
    "named with the job's place and the class"

# --- wrong class paths, refused at --check with exit 2
for spec in nosuchmodule:Foo boom:NoSuch boom; do
    sed "s/boom:Boom/$spec/" boom.yaml > bad.yaml
    out=$("$AIARUN" --check bad.yaml 2>&1)
    is "$?" 2 "class $spec: --check exits 2"
    like "$out" "^aiarun: bad.yaml:2:[0-9]+: problem: class '$spec': " \
        "class $spec: the message names the file, line and class"
done
like "$("$AIARUN" --check boom.yaml 2>&1)" "boom.yaml: ok" "a class that imports checks"
sed "s/boom:Boom/nosuchmodule:Foo/" boom.yaml > bad.yaml
run 3 bad.yaml
is "$rc" 2 "and the run exits 2"
like "$err" "ModuleNotFoundError: No module named 'nosuchmodule'" "saying why"

# --- NumPy missing from the Python aiarun embeds (a stand-in that fails
# to import, first on the path): the error names that interpreter, whose
# packages are not a venv's or pyenv's
mkdir nonumpy && cp lsq.py python-lsq.yaml nonumpy/ && cp -R data nonumpy/
printf 'raise ImportError("no NumPy here")\n' > nonumpy/numpy.py
out=$(cd nonumpy && "$AIARUN" --simulate 2 python-lsq.yaml 2>&1)
is "$?" 2 "NumPy that does not import: exit 2"
like "$out" "python-lsq.yaml:[0-9]+:[0-9]+: problem: the python problem runs in $AIA_PYTHON \(.*a venv's or pyenv's packages are not seen\), which needs NumPy and the aiarun package installed for it: ImportError: no NumPy here" \
    "the error names the interpreter aiarun embeds, and what it needs"

# --- constructor arguments typed as YAML reads them
cat > kw.py <<'PY'
class Kw:
    def __init__(self, **kw):
        want = {"i": 3, "d": 0.5, "e": 1e-3, "b": True, "s": "text",
                "q": "7", "li": [1, 2], "ld": [1.5, 2]}
        for k, v in want.items():
            if kw.get(k) != v or type(kw.get(k)) is not type(v):
                raise TypeError("%s: %r is not %r" % (k, kw.get(k), v))
        if [type(v) for v in kw["ld"]] != [float, float]:
            raise TypeError("ld: %r" % kw["ld"])
    rows = 4
    def open(self, ctx):
        return 2
    def loss(self, x):
        return 0.0
    def gradient(self, x, idx, g):
        return [0.0, 0.0]
PY
cat > kw.yaml <<'YAML'
algorithm: {plugin: gd, step: 0.1}
problem:
  plugin: python
  class: kw:Kw
  i: 3
  d: 0.5
  e: 1e-3
  b: yes
  s: text
  q: "7"
  li: [1, 2]
  ld: [1.5, 2]
stop: {iterations: 3}
YAML
run 3 kw.yaml
is "$rc" 0 "every key but class reaches the constructor, typed"
[ "$rc" = 0 ] || diag "$err"
printf '  m: {a: 1}\n' > map.txt
sed '/^  ld:/r map.txt' kw.yaml > map.yaml
out=$("$AIARUN" --check map.yaml 2>&1)
is "$?" 2 "a mapping for a constructor argument is refused"
like "$out" "map.yaml:13:6: problem.m: plugin 'python' takes a single value or a list of numbers" \
    "naming the file, line, column and key"

sed -e 's/    rows = 4//' kw.py > norows.py
sed 's/kw:Kw/norows:Kw/' kw.yaml > norows.yaml
run 3 norows.yaml
is "$rc" 2 "a class without rows and without a data file is refused"
like "$err" "must say how many rows this rank holds" "saying what it lacks"

# --- sparse rows reach the class as CSR arrays; the partition helper
# names exactly the rows the runtime handed over
cp "$top_srcdir/etc/data/lr.svm" data/
cat > sparse.py <<'PY'
import numpy as np
from lsq import LeastSquares
class Sparse(LeastSquares):
    def open(self, ctx):
        want = ctx.partition.rows(ctx.total_rows)
        if ctx.role == "coordinator":
            want = want[:0]  # the workers hold the rows, rank 0 none
        if not np.array_equal(want, ctx.row_ids):
            raise ValueError("partition.rows: %s, the runtime: %s"
                             % (want[:5], ctx.row_ids[:5]))
        start, col, val = ctx.csr
        X = np.zeros((ctx.rows, ctx.cols))
        X[np.repeat(np.arange(ctx.rows), np.diff(start)), col] = val
        ctx.X = X
        return super().open(ctx)
PY
sed -e 's/class: lsq:LeastSquares/class: sparse:Sparse/' -e 's/iterations: 100/iterations: 40/' \
    -e 's|path: data/lr.csv|path: data/lr.svm\n    storage: sparse|' -e '/target: y/d' \
    python-lsq.yaml > sparse.yaml
sed -e 's/plugin: python/plugin: lrmse/' -e '/class:/d' sparse.yaml > sparse-lrmse.yaml
for part in "cyclic" "cyclic -o problem.weights=[1,2,3]" "block -o problem.weights=[3,1,2]"; do
    run 4 -o problem.partition=$part -o output.final=sp.txt sparse.yaml
    is "$rc" 0 "sparse rows, $part: the class gets CSR arrays and the rows partition.rows names"
    [ "$rc" = 0 ] || diag "$err"
    run 4 -o problem.partition=$part -o output.final=spl.txt sparse-lrmse.yaml
    d=$(maxdiff sp.txt spl.txt)
    expect_ok "sparse rows, $part: lrmse's final iterate ($d)" close12 "$d"
done

# --- PyTorch: autograd's gradient, trained with nwait below the pool
why=$(python_missing torch)
if [ -n "$why" ]; then
    skip_test "PyTorch example: $why"
    skip_test "PyTorch example: $why"
else
    cp "$top_srcdir/etc/torchnet.py" "$top_srcdir/etc/python-torch.yaml" .
    for np in "3 1" "5 2"; do
        set -- $np
        AIA_TIMEOUT=300 run $1 -q -o pool.wait.nwait=$2 python-torch.yaml
        acc=$(field accuracy "$out")
        test_expect "PyTorch network, $1 ranks, nwait $2: held-out accuracy $acc >= 0.9" \
            '[ "$rc" = 0 ] && float_le 0.9 "${acc:-0}"'
        [ "$rc" = 0 ] || diag "$err"
    done
fi
done_testing
