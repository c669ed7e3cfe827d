#!/bin/sh
# newton.sh - the second-order methods against liblinear and the gradient
# methods: time to liblinear's loss on L2 logistic regression.
#
#     sh ../bench/newton.sh >newton.md       (from a build folder)
#
# liblinear-train -s 0 (primal trust-region Newton, one process) with
# -e 1e-8 gives the reference loss f_lib, computed here from its model
# with aiarun's loss (C = 1 / (m l2): the same problem); then aiarun's
# newton, lbfgs, gd and sag on 4 workers (mpirun -np 5) run with
# stop.loss f_lib (1 + 1e-9), every worker every round.  Two problems:
# Fashion-MNIST's classes 0 and 6 (12,000 rows of 784 pixels scaled to
# [0, 1], l2 1e-3; aiarun reads them as .npy, liblinear as LIBSVM text
# with the same doubles) and liblinear's heart_scale (270 rows, 13
# features, l2 1/270: C = 1).  Each run is repeated NEWTON_REPS times,
# one method after the other; the table gives medians and the ratios of
# the medians to liblinear's: run time (aiarun's summary time, from the
# first query; liblinear's time less that of a run with -e 1e3, which
# reads the file and stops at once) and wall time (the whole command:
# mpirun's start and each rank reading its rows, liblinear reading its
# text).  Writes a Markdown section on stdout.
#
# Reads NEWTON_REPS (3), NEWTON_CAP (seconds a run may take, 60),
# PYTHON (/usr/bin/python3, with NumPy), FASHION
# (/usr/share/datasets/fashion-mnist), MPIRUN (mpirun).
set -u
: "${NEWTON_REPS:=3}" "${NEWTON_CAP:=60}" "${PYTHON:=/usr/bin/python3}"
: "${FASHION:=/usr/share/datasets/fashion-mnist}" "${MPIRUN:=mpirun}"
B=$(pwd)
[ -x "$B/aiarun" ] || { echo "newton.sh: run me from a build folder" >&2; exit 2; }
command -v liblinear-train >/dev/null ||
    { echo "newton.sh: needs liblinear-train (apt-get install liblinear-tools)" >&2; exit 2; }
HEART=/usr/share/doc/liblinear-tools/examples/heart_scale
OUT=$B/bench/out-newton
mkdir -p "$OUT" && cd "$OUT" || exit 1
export AIARUN_PLUGIN_PATH="$B/plugins/.libs:$B/problems/.libs"
MPI="$MPIRUN -np 5 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1"

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# --- the data: classes 0 and 6 as .npy (aiarun) and LIBSVM (liblinear)
if [ ! -s fm06.svm ]; then
    "$PYTHON" - "$FASHION" fm06 <<'EOF' || exit 1
import gzip, sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
def idx(path):
    with gzip.open(path, "rb") as f:
        b = f.read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)
X = idx(src + "/train-images-idx3-ubyte.gz").reshape(60000, -1)
y = idx(src + "/train-labels-idx1-ubyte.gz")
keep = (y == 0) | (y == 6)
X = X[keep].astype(np.float64) / 255.0
t = (y[keep] == 6).astype(np.float64)
np.save(out + ".npy", X)
np.save(out + "-y.npy", t)
with open(out + ".svm", "w") as f:
    for row, lab in zip(X, t):
        nz = np.nonzero(row)[0]
        f.write(("+1" if lab else "-1") +
                "".join(" %d:%r" % (j + 1, row[j]) for j in nz) + "\n")
EOF
fi
cp "$HEART" heart.svm

# f(w) of a liblinear model on a LIBSVM file, as logreg computes it
loss_of() { # SVM MODEL L2 COLS
    "$PYTHON" - "$@" <<'EOF'
import sys
import numpy as np
svm, model, l2, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rows, s = [], []
for line in open(svm):
    p = line.split()
    s.append(float(p[0]))
    r = np.zeros(n)
    for kv in p[1:]:
        k, v = kv.split(":")
        r[int(k) - 1] = float(v)
    rows.append(r)
X, s = np.array(rows), np.array(s)
lines = open(model).read().split("\n")
w = np.array([float(v) for v in lines[lines.index("w") + 1:] if v.strip()])
label = [l for l in lines if l.startswith("label")][0].split()[1]
if float(label) < 0:  # w separates the first label's rows
    w = -w
z = s * (X @ w)
f = np.mean(np.maximum(-z, 0) + np.log1p(np.exp(-np.abs(z)))) + 0.5 * l2 * (w @ w)
print(repr(f))
EOF
}

cat <<EOF
## Second-order methods against liblinear

*Measured by \`bench/newton.sh\` (NEWTON_REPS=$NEWTON_REPS) on $(date -u '+%Y-%m-%d at %H:%M UTC'), load average $(cut -d ' ' -f 1-3 /proc/loadavg) at the start, $(nproc) cores; $($MPIRUN --version 2>/dev/null | head -n 1); $(dpkg-query -W -f='liblinear-tools ${Version}' liblinear-tools 2>/dev/null).*

Time to liblinear's loss (\`liblinear-train -s 0 -e 1e-8\`) to 1e-9
relative, L2 logistic regression, aiarun on 4 workers (every worker every
round), medians of $NEWTON_REPS runs made one after the other. Run time:
aiarun's summary time (from the first query) and liblinear's time less
that of a run that reads the file and stops at once (\`-e 1e3\`); wall:
the whole command (mpirun's start and the workers reading their rows;
liblinear reading its text). Ratios: median over median of liblinear's.
A method that has not reached the loss in $NEWTON_CAP s shows its stop.

EOF

bench_problem() { # NAME DATA-KEYS SVM COLS L2 ROWS
    name=$1 data=$2 svm=$3 cols=$4 l2=$5 rows=$6
    c=$("$PYTHON" -c "print(repr(1 / ($rows * $l2)))")
    : >lib.t
    : >lib0.t
    for r in $(seq "$NEWTON_REPS"); do
        t0=$(now)
        liblinear-train -s 0 -c "$c" -e 1e-8 -q "$svm" "$name.model" >/dev/null
        t1=$(now)
        liblinear-train -s 0 -c "$c" -e 1e3 -q "$svm" "$name.model0" >/dev/null
        t2=$(now)
        echo "$t1 - $t0" | bc -l >>lib.t
        echo "$t2 - $t1" | bc -l >>lib0.t
    done
    flib=$(loss_of "$svm" "$name.model" "$l2" "$cols")
    target=$("$PYTHON" -c "print(repr($flib * (1 + 1e-9)))")
    lwall=$(median <lib.t)
    lrun=$(echo "$lwall - $(median <lib0.t)" | bc -l)
    cat >"$name.yaml" <<YAML
seed: 1
algorithm: {plugin: newton}
problem:
  plugin: logreg
  l2: $l2
  data: $data
stop: {loss: $target, time: $NEWTON_CAP}
YAML
    printf '### %s\n\nliblinear: loss %s, run %.2f s, wall %.2f s (C = %s)\n\n' \
        "$name" "$flib" "$(echo "if ($lrun < 0) 0 else $lrun" | bc -l)" "$lwall" "$c"
    echo "| method | rounds | run s | wall s | run / liblinear | wall / liblinear | stop |"
    echo "|---|---|---|---|---|---|---|"
    for alg in newton lbfgs gd sag; do
        : >run.t
        : >wall.t
        : >rounds.t
        stop=
        for r in $(seq "$NEWTON_REPS"); do
            t0=$(now)
            out=$($MPI "$B/aiarun" -o algorithm.plugin=$alg "$name.yaml" 2>/dev/null)
            t1=$(now)
            echo "$t1 - $t0" | bc -l >>wall.t
            field time "$out" >>run.t
            field iterations "$out" >>rounds.t
            stop=$(field stop "$out")
            echo "$name $alg $r: $(printf '%s\n' "$out" | grep '^stop=' | cut -c1-160)" >&2
        done
        run=$(median <run.t) wall=$(median <wall.t)
        # a run of liblinear within the noise of reading the file has no
        # run time to divide by
        ratio=-
        [ "$(echo "$lrun > 0.05" | bc -l)" = 1 ] &&
            ratio=$(printf '%.2f' "$(echo "$run / $lrun" | bc -l)")
        printf '| %s | %s | %.3f | %.2f | %s | %.2f | %s |\n' "$alg" \
            "$(median <rounds.t)" "$run" "$wall" "$ratio" \
            "$(echo "$wall / $lwall" | bc -l)" "${stop:-failed}"
    done
    echo
}

bench_problem fashion-0-vs-6 "{path: fm06.npy, targets: fm06-y.npy}" fm06.svm 784 0.001 12000
bench_problem heart_scale "{path: heart.svm}" heart.svm 13 "$("$PYTHON" -c 'print(repr(1/270))')" 270
