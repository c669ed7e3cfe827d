#!/bin/sh
# The aiarun Python package reads back every file a run writes: history,
# answer log and worker table (CSV and JSON Lines, arrays and pandas),
# the iterate file as a memory map, the final iterate and the summary
# line, each checked against another output of the same run; and plots.
. "$top_srcdir/t/lib.sh"
why=$(python_missing numpy)
[ -z "$why" ] || skip_all "$why"
scratch
cd "$trash" || exit 99
job="$top_srcdir/etc/gd-lrmse.yaml"
for fmt in csv jsonl; do
    run 4 -o stop.iterations=30 -o output.every=4 -o output.format=$fmt \
        -o output.history=h.$fmt -o output.answers=a.$fmt \
        -o output.workers=w-$fmt.csv -o output.iterates=x-$fmt.bin \
        -o output.final=f-$fmt.txt "$job"
    cp out.txt out-$fmt.txt
    # a failed run is a failure, not a skip
    [ "$rc" = 0 ] || {
        echo "Bail out! the $fmt run failed: $(head -3 err.txt | tr '\n' ' ')"
        exit 1
    }
done
PYTHONPATH="$top_srcdir/python" "$AIA_PYTHON" - <<'PY'
import os, struct, sys
import numpy as np
import aiarun

n = 0
failed = 0
def ok(cond, what):
    global n, failed
    n += 1
    failed += not cond
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))

def raises(f, text, what):
    try:
        f()
    except ValueError as e:
        ok(text in str(e), "%s (%s)" % (what, e))
        return
    ok(False, what + ": no error")

for fmt in ("csv", "jsonl"):
    h = aiarun.read_history("h." + fmt)
    ok(list(h) == ["iteration", "epoch", "time", "loss", "suboptimality",
                   "change"], "%s history: the columns in order" % fmt)
    ok(h["iteration"].dtype == np.int64 and
       list(h["iteration"]) == [0, 4, 8, 12, 16, 20, 24, 28, 30],
       "%s history: iterations as ints, every 4 and the last" % fmt)
    ok(np.isnan(h["change"][0]) and (h["change"][1:] > 0).all(),
       "%s history: a missing value is NaN" % fmt)
    s = aiarun.read_summary("out-%s.txt" % fmt)
    ok(s["stop"] == "iterations" and s["iterations"] == 30 ==
       h["iteration"][-1], "%s summary: stop and iterations" % fmt)
    ok(abs(s["loss"] - h["loss"][-1]) <= 1e-9 * abs(s["loss"]),
       "%s summary: the loss is the history's last" % fmt)
    a = aiarun.read_answers("a." + fmt)
    w = aiarun.read_workers("w-%s.csv" % fmt)
    ok(len(a["rank"]) == s["answers"] == w["answers"].sum(),
       "%s answers: one row per answer, as the summary and the worker "
       "table count" % fmt)
    ok(sorted(set(a["rank"])) == sorted(w["rank"]) == [1, 2, 3],
       "%s answers: the workers' ranks" % fmt)
    ok((a["staleness"] == a["round"] - a["sent_round"]).all(),
       "%s answers: staleness = round - sent_round" % fmt)
    it = aiarun.read_iterates("x-%s.bin" % fmt)
    ok(len(it) == len(h["iteration"]) and it.dim == 20,
       "%s iterates: one record per history row, dim 20" % fmt)
    ok(isinstance(it.records, np.memmap), "%s iterates: a memory map" % fmt)
    ok((it.iteration == h["iteration"]).all() and
       (it.epoch == h["epoch"]).all() and
       np.abs(it.time - h["time"]).max() <= 1e-6,
       "%s iterates: iteration, epoch and time as the history's" % fmt)
    f = aiarun.read_final("f-%s.txt" % fmt)
    ok(np.array_equal(it.x[-1], f), "%s iterates: the last is the final "
       "iterate, to the bit" % fmt)

# gd waiting for every worker is deterministic: both formats agree
hc, hj = aiarun.read_history("h.csv"), aiarun.read_history("h.jsonl")
ok(np.array_equal(hc["loss"], hj["loss"]), "CSV and JSON Lines give the "
   "same losses")
ac, aj = aiarun.read_answers("a.csv"), aiarun.read_answers("a.jsonl")
ok(list(ac) == list(aj) and np.array_equal(ac["sent_round"], aj["sent_round"]),
   "CSV and JSON Lines answer logs: the same columns and rounds")

try:
    import pandas
except ImportError:
    pandas = None
if pandas is None:
    print("ok %d # SKIP pandas is not installed" % (n + 1)); n += 1
else:
    df = aiarun.read_history("h.jsonl", frame=True)
    ok(list(df.columns) == list(hj) and len(df) == 9 and
       np.array_equal(df["loss"].to_numpy(), hj["loss"]),
       "frame=True: a pandas DataFrame of the same columns and values")

# damaged inputs are refused naming the file
open("bad.bin", "wb").write(b"NOTITER1" + bytes(16))
raises(lambda: aiarun.read_iterates("bad.bin"), "bad.bin: not an aiarun",
       "an iterate file without its magic")
data = open("x-csv.bin", "rb").read()
open("cut.bin", "wb").write(data[:-5])
ok(len(aiarun.read_iterates("cut.bin")) == len(hc["loss"]) - 1,
   "a record cut short is left out")
raises(lambda: aiarun.read_history("a.csv"), "no column 'epoch': not a history",
       "an answer log is not a history")
raises(lambda: aiarun.parse_summary("nothing here"), "no summary line",
       "text without a summary line")

try:
    import matplotlib
except ImportError:
    matplotlib = None
if matplotlib is None:
    print("ok %d # SKIP matplotlib is not installed" % (n + 1)); n += 1
else:
    fig = aiarun.plot(["h.csv", "h.jsonl"], out="p.png", labels=["c", "j"])
    png = open("p.png", "rb").read()
    ok(png[:8] == b"\x89PNG\r\n\x1a\n" and len(fig.axes) == 2,
       "plot: a PNG of loss and suboptimality")
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
