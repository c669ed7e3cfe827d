#!/bin/sh
# newton with a Python problem: a class's hvp(x, v) gives the workers'
# Hessian-vector products, and with stop.gap the optimum over the
# workers' rows (the coordinator holds none); a class without hvp is
# refused when the run starts, saying why.
. "$top_srcdir/t/lib.sh"
[ "$AIA_HAVE_PYTHON" = yes ] || skip_all "built without Python"
why=$(python_missing numpy)
[ -z "$why" ] || skip_all "$why"
scratch
cd "$trash" || exit 99
cp "$top_srcdir/etc/lsq.py" .
mkdir data && cp "$top_srcdir/etc/data/lr.csv" data/
cat > job.yaml <<'YAML'
seed: 3
algorithm: {plugin: newton}
problem:
  plugin: python
  class: nosums:NoSums
  ridge: 0.01
  data: {path: data/lr.csv, target: y}
stop: {gap: 1e-10, iterations: 1000, time: 100}
YAML
# without its sums (summarize, combine) lsq.py's optimum() cannot answer
# on the coordinator, so stop.gap asks hvp of the workers
cat > nosums.py <<'EOF2'
from lsq import LeastSquares


class NoSums(LeastSquares):
    """LeastSquares without the sums that give its optimum()."""

    def __getattribute__(self, name):
        if name in ("summary_len", "summarize", "combine"):
            raise AttributeError(name)
        return super().__getattribute__(name)
EOF2
cat > nohvp.py <<'EOF2'
from lsq import LeastSquares


class NoHvp(LeastSquares):
    """LeastSquares without its hvp."""

    def __getattribute__(self, name):
        if name == "hvp":
            raise AttributeError(name)
        return super().__getattribute__(name)
EOF2

run 4 job.yaml
is "$rc" 0 "newton on a NumPy class with hvp: exits 0"
is "$(field stop "$out")" gap "and reaches the gap of 1e-10 ($(field gap "$out"), $(field iterations "$out") rounds)"
like "$out" "optimum    found by Newton-CG on the workers' rows" \
    "whose optimum was found with the class's hvp on the workers"
run 4 -o problem.class=nohvp:NoHvp job.yaml
is "$rc" 2 "a class without hvp: refused (exit 2)"
like "$err" "job.yaml:[0-9]+:[0-9]+: algorithm: problem 'python' gives no Hessian-vector product \\(hvp\\), which this method asks of the workers" \
    "saying why"
done_testing
