#!/bin/sh
# pca by subspace iteration (algorithm subspace, the problem's block):
# the eigen-solve's explained variance to 1e-6 in a few rounds, under
# mpirun and --simulate; with a straggler and nwait below the pool, its
# stale products carried into the current basis (left out, with a window
# of one block, the subspace is another); bit-for-bit reproducible under
# --simulate; a checkpoint resumes to the uninterrupted run's loss; a
# problem without a block is refused by --check and at the start.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

# the summary's value of key
val() { field "$1" "$out"; }
# |a - b| <= tol
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; }
eig() { sed -n "s/.*eigen-solve's top 3 components explain \([0-9.]*\) .*/\1/p" err.txt; }

job="$top_srcdir/etc/pca-sparse.yaml"
sub="-o algorithm.plugin=subspace -o algorithm.step= -o stop.gap=0 -o output.history=h.csv -o output.every=1"
straggler="-o pool.wait.nwait=2 -o stragglers.fixed.ranks=[2] -o stragglers.fixed.delay_ms=3"

run 5 -v "$job" $sub -o stop.iterations=8
is "$rc" 0 "subspace on pca-sparse under mpirun: exit 0"
e=$(eig) ev=$(val explained_variance)
close "$ev" "$e" 1e-6
ok $? "8 rounds reach the eigen-solve's explained variance: $ev, $e"

sim --simulate 4 -v "$job" $sub $straggler -o stop.iterations=15
is "$rc" 0 "--simulate, a straggler and nwait 2 of 4: exit 0"
e=$(eig) ev=$(val explained_variance)
expect_ok "stale answers came ($(val late))" [ "$(val late)" -gt 0 ]
close "$ev" "$e" 1e-6
ok $? "15 rounds reach the eigen-solve's explained variance: $ev, $e"
cp h.csv first.csv
sim --simulate 4 -v "$job" $sub $straggler -o stop.iterations=15
same "$(cat h.csv)" "$(cat first.csv)" "a second simulated run gives the same history, bit for bit"

sim --simulate 4 -v "$job" $sub $straggler -o stop.iterations=15 -o algorithm.window=1
ev=$(val explained_variance)
like "$err" "subspace: [0-9]* answers were older than the window of 1 blocks and left out" \
    "window 1: the straggler's stale answers are left out, and the log says so"
close "$ev" "$e" 1e-5
expect_ok "and the subspace is not the whole data's ($ev, $e)" [ $? != 0 ]

# bfloat16 keeps 8 significant bits: the blocks' tags (their numbers
# modulo 256) pass exactly through 300 rounds
sim --simulate 4 -v "$job" $sub $straggler -o stop.iterations=300 \
    -o pool.codec.query=bfloat16 -o pool.codec.answer=bfloat16
is "$rc" 0 "300 rounds with bfloat16 queries and answers: exit 0"
ev=$(val explained_variance)
close "$ev" "$e" 1e-6
ok $? "and the eigen-solve's explained variance to bfloat16's rounding ($ev)"

run 5 -v "$job" $sub $straggler -o stop.iterations=40 -o algorithm.window=64
is "$rc" 0 "mpirun, a straggler and nwait 2 of 4: exit 0"
e=$(eig) ev=$(val explained_variance)
close "$ev" "$e" 1e-6
ok $? "40 rounds reach the eigen-solve's explained variance: $ev, $e ($(val late) stale answers)"

# a checkpoint at round 3, resumed to 5: the uninterrupted run's history
# (every worker each round: the same sums in the same order)
ck="-o output.checkpoint=ck.bin -o output.checkpoint_every=1"
rows() { cut -d, -f1,2,4 "$1"; }
run 5 "$job" $sub -o stop.iterations=5 -o output.history=ref.csv
run 5 "$job" $sub $ck -o stop.iterations=3
is "$rc" 0 "a run stopped at round 3 with a checkpoint"
run 5 --resume "$job" $sub $ck -o stop.iterations=5
is "$rc" 0 "--resume runs on"
same "$(rows h.csv)" "$(rows ref.csv)" "to the uninterrupted run's history, losses to the bit"

# a problem without the block: refused, naming the key
cat > lr.yaml <<'YAML'
algorithm: {plugin: subspace}
problem: {plugin: lrmse}
stop: {iterations: 5}
YAML
sim --check lr.yaml
is "$rc" 2 "--check: subspace with lrmse is refused"
like "$err" "lr.yaml:1:[0-9]*: algorithm: 'subspace' asks the workers for the rows' Gram matrix applied to a block, and problem 'lrmse' gives none" \
    "naming the file, the key and why"
run 3 lr.yaml
is "$rc" 2 "and so is a run"
like "$err" "problem 'lrmse' gives none \\(no block\\)" "with the same reason"

# a data file: each worker's explained variance is taken relative to the
# whole data's (from the workers' sums), so that the summary's mean of
# them is the whole data's, as the eigen-solve's figure
awk 'BEGIN { srand(7); for (r = 0; r < 300; r++) { line = ""; sd = 1
    for (j = 0; j < 6; j++) { u = sqrt(-2 * log(1 - rand())) * cos(6.283185307 * rand())
        line = line sprintf("%.6f,", sd * u); sd *= sqrt(0.6) }
    print line "0" } }' > rows.csv
cat > pca.yaml <<'YAML'
algorithm: {plugin: subspace, oversample: 2}
problem: {plugin: pca, k: 2, data: {path: rows.csv, header: no}}
stop: {iterations: 30}
YAML
run 4 -v pca.yaml
is "$rc" 0 "subspace on pca with a data file, 3 workers: exit 0"
e=$(sed -n "s/.*eigen-solve's top 2 components explain \([0-9.]*\) .*/\1/p" err.txt)
ev=$(val explained_variance)
close "$ev" "$e" 1e-9
ok $? "the summary's explained variance is the eigen-solve's ($ev, $e)"

# a Python class's gram(b) and block_cols: the same subspace as pca's on
# the same rows (a data file: the coordinator's optimum from the workers'
# sums), its model V = x
why=
[ "$AIA_HAVE_PYTHON" = yes ] || why="built without Python"
[ -n "$why" ] || why=$(python_missing numpy)
if [ -n "$why" ]; then
    for i in 1 2 3 4 5; do skip_test "a Python class's gram: $why"; done
else
    cat > npca.py <<'PY'
import numpy as np


class Pca:
    """Half the mean squared reconstruction error of the rows by the
    n x k block V = x, and the rows' Gram matrix applied to a block."""

    def __init__(self, k=2):
        self.block_cols = int(k)

    def open(self, ctx):
        self.A, self.n = ctx.X, ctx.cols
        return self.n * self.block_cols

    def block(self, x):
        return x.reshape(self.n, self.block_cols)

    def loss(self, x):
        V = self.block(x)
        R = self.A - (self.A @ V) @ V.T
        return 0.5 * float((R * R).sum()) / max(len(self.A), 1)

    def gradient(self, x, idx, g):
        A = self.A if idx is None else self.A[idx]
        V = self.block(x)
        W = A.T @ (A @ V)
        G = -2 * W + W @ (V.T @ V) + V @ (V.T @ W)
        g[:] = (G / max(len(A), 1)).ravel()

    def gram(self, b):
        return self.A.T @ (self.A @ b)


class Based(Pca):
    """The same, its model the offset from a base block."""

    def block_base(self):
        return np.arange(self.n * self.block_cols, dtype=float) / 10

    def block(self, x):
        return (self.block_base() + x).reshape(self.n, self.block_cols)


class BadBase(Pca):
    block_base = [1.0, 2.0]
PY
    cat > py.yaml <<'YAML'
algorithm: {plugin: subspace, oversample: 2}
problem: {plugin: python, class: npca:Pca, k: 2, data: {path: rows.csv, header: no}}
stop: {iterations: 30}
YAML
    run 4 pca.yaml
    want=$(val optimum)
    run 4 py.yaml
    is "$rc" 0 "subspace on a Python class with gram: exit 0"
    close "$(val loss)" "$want" 1e-9
    ok $? "its loss is pca's optimum on the same rows ($(val loss), $want)"
    run 4 -o problem.class=npca:Based py.yaml
    close "$(val loss)" "$want" 1e-9
    ok $? "and so is that of a class whose model is the offset from its block_base ($(val loss))"
    run 4 -o problem.class=npca:BadBase py.yaml
    is "$rc" 2 "a block_base of the wrong size is refused"
    like "$err" "block_base returned 2 values for the model of 12" "saying what it returned"
fi
done_testing
