#!/bin/sh
# aiarun.run starts a job from Python (under mpirun, and --simulate) and
# gives back the summary, history, answer log, worker table and final
# iterate, the same as the command's own files; a dict job and overrides
# work; a bad job raises AiarunError with aiarun's line and status 2;
# the job's own outputs are written where it names them.  Then the
# package installs with pip into a fresh venv (--no-build-isolation, no
# index) and runs the README's line from there, from a script and from a
# notebook executed headless by a Jupyter kernel (nbclient).
. "$top_srcdir/t/lib.sh"
why=$(python_missing numpy)
[ -z "$why" ] || skip_all "$why"
scratch
cd "$trash" || exit 99
job="$top_srcdir/etc/gd-lrmse.yaml"
export MPIRUN

# the command's own run, to compare with (gd waiting for every worker is
# deterministic)
run 5 -o stop.iterations=40 -o output.every=10 -o output.history=h.csv \
    -o output.answers=a.csv -o output.final=f.txt "$job"
is "$rc" 0 "the command's run exits 0"

cat > run.py <<'PY'
import os, sys, warnings
import numpy as np
import aiarun

n, failed = int(sys.argv[2]), 0
def ok(cond, what):
    global n, failed
    n += 1
    failed += not cond
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    sys.stdout.flush()

job = sys.argv[1]
mpirun = os.environ["MPIRUN"]
common = {"stop.iterations": 40, "output.every": 10}
r = aiarun.run(job, np=5, mpirun=mpirun, overrides=common, progress=False)
shell = aiarun.read_summary("out.txt")
ok(r.status == 0 and r.summary["stop"] == "iterations" and
   r.summary["iterations"] == 40, "run: a Result with the summary (%r)" % r)
ok(r.summary["loss"] == shell["loss"] and r.summary["gap"] == shell["gap"],
   "run: the loss and gap of the command's run (%s, %s)"
   % (r.summary["loss"], r.summary["gap"]))
h = aiarun.read_history("h.csv")
hist = r.history
try:
    import pandas
    ok(isinstance(hist, pandas.DataFrame), "run: the history as a DataFrame")
    hist = {k: hist[k].to_numpy() for k in hist.columns}
    ok(isinstance(r.answers, pandas.DataFrame), "run: the answers too")
    answers = r.answers["rank"].to_numpy()
except ImportError:
    print("ok %d # SKIP pandas is not installed" % (n + 1))
    print("ok %d # SKIP pandas is not installed" % (n + 2))
    n += 2
    answers = r.answers["rank"]
ok(list(hist["iteration"]) == list(h["iteration"]) and
   np.array_equal(hist["loss"], h["loss"]),
   "run: the history is the command's, row by row")
ok(len(answers) == r.summary["answers"] == len(aiarun.read_answers("a.csv")["rank"]),
   "run: one answer row per answer (%d)" % len(answers))
ok(len(r.workers["rank"]) == 4, "run: the worker table, 4 workers")
ok(isinstance(r.x, np.ndarray) and
   np.array_equal(r.x, aiarun.read_final("f.txt")),
   "run: the final iterate is the command's, to the bit")
ok(not [f for f in os.listdir(".") if f.startswith(".aiarun")],
   "run: nothing left in the folder it ran in")

# --simulate
s = aiarun.run(job, simulate=6, overrides=common, progress=False,
               frames=False)
ok(s.summary["iterations"] == 40 and len(s.workers["rank"]) == 6 and
   isinstance(s.history, dict), "simulate=6: six simulated workers, dicts")
ok(abs(s.summary["loss"] - r.summary["loss"]) <= 1e-3 * r.summary["loss"],
   "simulate=6: gd near the same loss")

# a dict job: its relative paths from the folder it runs in
import shutil
shutil.copy(os.path.join(os.path.dirname(job), "data", "lr.csv"), "lr.csv")
d = aiarun.run({"algorithm": {"plugin": "gd", "step": 0.5},
                "problem": {"plugin": "lrmse", "data": {"path": "lr.csv"}},
                "stop": {"iterations": 30},
                "output": {"history": "dict.csv"}},
               np=3, mpirun=mpirun, progress=False, frames=False)
ok(d.summary["iterations"] == 30 and os.path.exists("dict.csv") and
   list(d.history["iteration"]) == list(aiarun.read_history("dict.csv")["iteration"]),
   "a dict job runs, its history written where it names it and read back")
ok(not [f for f in os.listdir(".") if f.startswith(".aiarun-job")],
   "a dict job's file is removed")

# overrides of every type, and a removed output
o = aiarun.run(job, np=5, mpirun=mpirun, progress=False,
               overrides={"stop.iterations": 12, "pool.workers": [1, 2],
                          "output.answers": None, "output.every": 4})
ok(o.summary["iterations"] == 12 and len(o.workers["rank"]) == 2 and
   o.answers is None, "overrides: a list, an int, None removes an output")

# errors
try:
    aiarun.run(job, np=5, mpirun=mpirun, progress=False, echo=False,
               overrides={"algorithm.stepx": 1})
    ok(False, "a bad key raises AiarunError")
except aiarun.AiarunError as e:
    ok(e.status == 2 and "algorithm.stepx: unknown key" in e.message and
       "\n" not in e.message, "a bad key raises AiarunError, status 2, "
       "aiarun's line: %s" % e.message)
try:
    aiarun.run("none.yaml", simulate=2)
    ok(False, "a missing job file raises AiarunError")
except aiarun.AiarunError as e:
    ok(e.status == 2 and "none.yaml" in e.message,
       "a missing job file raises AiarunError naming it")
try:
    aiarun.run(job, np=5, simulate=2)
    ok(False, "np and simulate together are refused")
except ValueError:
    ok(True, "np and simulate together are refused")
try:
    aiarun.run(job, np=5, mpirun=mpirun, echo=False,
               overrides={"algorithm.step": 50, "stop.iterations": 100})
    ok(False, "a diverging run raises AiarunError")
except aiarun.AiarunError as e:
    ok(e.status == 1 and "diverg" in e.message,
       "a diverging run raises AiarunError, status 1: %s" % e.message)

# a refused dict job leaves no file behind and names the dict's key,
# not the temporary file; what run() refuses is an AiarunError
import io, contextlib
def refused(what, job, want, **kw):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            aiarun.run(job, np=3, mpirun=mpirun, progress=False, **kw)
        ok(False, "%s: refused" % what)
    except aiarun.AiarunError as e:
        left = [f for f in os.listdir(".") if f.startswith(".aiarun-job")]
        ok(e.status == 2 and want in e.message and ".aiarun-job" not in
           e.message and not left and isinstance(e, ValueError),
           "%s: AiarunError, status 2, %r, no file left (%s): %s"
           % (what, want, left, e.message))
    except Exception as e:
        ok(False, "%s: AiarunError, not %s: %s" % (what, type(e).__name__, e))
    return buf.getvalue()
good = {"algorithm": {"plugin": "gd", "step": 0.5},
        "problem": {"plugin": "lrmse", "data": {"path": "lr.csv"}},
        "stop": {"iterations": 30}}
err = refused("a dict with a bad key", dict(good, algorithm={
    "plugin": "gd", "step": 0.5, "stepx": 1}), "job['algorithm']['stepx']")
ok(err.count("unknown key") == 0,
   "the error line is not echoed besides the AiarunError: %r" % err)
refused("a set in the dict", dict(good, pool={"workers": {1, 2}}),
        "job['pool']['workers']: a set is not a job value")
refused("an output section of the wrong type", dict(good, output="x.csv"),
        "job['output']: a section is a dict")
open("afile", "w").close()
refused("keep= naming a file", job, "keep=afile: not a folder", keep="afile")
err = refused("a missing aiarun=", job, "aiarun /no/such/aiarun (aiarun=): "
              "no such program", aiarun="/no/such/aiarun")
ok(err == "", "and nothing else on stderr (no mpirun banner): %r" % err)
banner = """-------------------------------------------------------
mpirun was unable to launch the specified application as it could not access
or execute an executable:

Executable: /x
--------------------------------------------------------
"""
ok(sys.modules["aiarun.run"]._error_line(banner) == "mpirun was unable to launch the "
   "specified application as it could not access or execute an executable:",
   "mpirun's banner gives its first sentence, not its ruler")

words = [sys.modules["aiarun.run"]._scalar(v, "w")
         for v in ("auto", "data/x.csv", ".5", "7", "yes", "a b")]
ok(words == ["auto", "data/x.csv", '".5"', '"7"', '"yes"', '"a b"'],
   "a str is written bare only where YAML reads it back as text: %s" % words)

# step: "auto" in a dict is the keyword, as in overrides
a = aiarun.run(dict(good, algorithm={"plugin": "gd", "step": "auto"}),
               np=3, mpirun=mpirun, progress=False, frames=False)
b = aiarun.run(dict(good, algorithm={"plugin": "gd"}), np=3, mpirun=mpirun,
               progress=False, frames=False,
               overrides={"algorithm.step": "auto"})
ok(a.summary["loss"] == b.summary["loss"] and a.summary["iterations"] == 30,
   "step: 'auto' in a dict runs, as in overrides (loss %s, %s)"
   % (a.summary["loss"], b.summary["loss"]))
try:
    import matplotlib  # noqa: F401
    fig = aiarun.plot(r.history, out="one.png")
    ok(os.path.getsize("one.png") > 0 and len(fig.axes[0].lines) == 1,
       "plot(r.history): one history (a DataFrame or dict), one line")
except ImportError:
    print("ok %d # SKIP matplotlib is not installed" % (n + 1))
    n += 1

# timeout=: the run is stopped (SIGTERM: aiarun writes its summary and
# exits 1) and AiarunError says so
import time
t0 = time.time()
try:
    aiarun.run(job, np=3, mpirun=mpirun, progress=False, echo=False,
               timeout=2, overrides={"stop.iterations": None,
                                     "stop.time": 100,
                                     "stragglers.work_ms": 5})
    ok(False, "timeout= raises AiarunError")
except aiarun.AiarunError as e:
    ok(e.status == 1 and "timeout=" in e.message,
       "timeout=2 stops a 100 s run and raises AiarunError: %s" % e.message)
ok(time.time() - t0 < 60, "and well before its stop.time")

# progress: a simulated run of many virtual seconds prints progress
# lines, which become the bar (or are passed on without tqdm)
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stderr(buf):
    p = aiarun.run(job, simulate=4, progress=True,
                   overrides={"stop.iterations": 300,
                              "simulate.row_us": 100})
text = buf.getvalue()
try:
    import tqdm  # noqa: F401
    import re
    seen = sorted(set(int(v) for v in re.findall(r"(\d+)%\|", text)))
    ok(p.summary["stop"] and seen and seen[-1] == 100 and
       [v for v in seen if 0 < v < 100],
       "progress: a tqdm bar through the share done to 100%% (%s)" % seen)
    odd = re.findall(r"%/s|\d+\.\d+/\d+|\d{4,}(?:\.\d+)?[a-z%]*/s", text)
    ok(not odd, "progress: no rate in %%/s, no float counts (%s)" % odd)
except ImportError:
    ok("progress: iteration" in text,
       "progress: without tqdm, aiarun's progress lines passed on")
open("count", "w").write("%d %d\n" % (n, failed))
PY
PYTHONPATH="$top_srcdir/python" own_session "$AIA_PYTHON" run.py "$job" \
    "$test_count" 2>py-err.txt
py_rc=$?
read -r test_count py_failed <count || { test_count=$((test_count + 1))
    echo "not ok $test_count - run.py ended early"; py_failed=1; }
test_failed=$((test_failed + py_failed))
[ $py_rc = 0 ] || { diag "run.py exited $py_rc; its stderr:"; tail_of py-err.txt; }

# pip install into a fresh venv that sees the system's packages (NumPy),
# from a copy of python/ (a build writes into the folder it builds)
if ! "$AIA_PYTHON" -m venv --system-site-packages venv >venv.txt 2>&1; then
    skip_test "$AIA_PYTHON -m venv fails (install python3-venv): $(tail -1 venv.txt)"
    skip_test "no venv"
    skip_test "no venv"
else
    cp -R "$top_srcdir/python" pkg && chmod -R u+w pkg
    expect_ok "pip install --no-build-isolation --no-index ./python into a venv" \
        venv/bin/python -m pip install -q --no-build-isolation --no-index ./pkg
    mkdir elsewhere && cd elsewhere || exit 99
    cp "$job" gd-lrmse.yaml
    AIARUN_MPIRUN=$MPIRUN own_session ../venv/bin/python -c "import aiarun; print(aiarun.__file__); r = aiarun.run('gd-lrmse.yaml', np=5); print(r.summary['gap'])" \
        >venv-out.txt 2>venv-err.txt
    is "$?" 0 "the venv's python runs the README's line"
    like "$(cat venv-out.txt)" "/venv/lib/python[0-9.]+/site-packages/aiarun/__init__.py
[-+0-9.e]+$" "from the installed package, printing the gap: $(tail -1 venv-out.txt)"
    cd .. || exit 99
fi

# the same from a notebook, executed headless by a Jupyter kernel of the
# venv's (or the configured) python
py=venv/bin/python pypath=
[ -x "$py" ] || py=$AIA_PYTHON pypath=$top_srcdir/python
if ! "$py" -c 'import nbformat, nbclient, ipykernel' 2>/dev/null; then
    skip_test "a notebook: install python3-nbclient, python3-nbformat and python3-ipykernel"
    skip_test "a notebook: install python3-nbclient, python3-nbformat and python3-ipykernel"
else
    cp "$job" gd-lrmse.yaml
    cat > nb.py <<'PY'
import json, os, sys
import nbformat, nbclient
# a kernel of this very interpreter (a venv's), not the system's python3
spec = os.path.abspath("kernels/aiarun-test")
os.makedirs(spec)
json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                    "{connection_file}"],
           "display_name": "aiarun test", "language": "python"},
          open(os.path.join(spec, "kernel.json"), "w"))
os.environ["JUPYTER_PATH"] = os.getcwd()
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in (
    "import aiarun",
    "r = aiarun.run('gd-lrmse.yaml', np=5)",
    "print('gap', r.summary['gap'], len(r.history))",
    # a bar (the progress lines of many virtual seconds): no TqdmWarning
    # where ipywidgets is missing
    "s = aiarun.run('gd-lrmse.yaml', simulate=4, overrides="
    "{'stop.iterations': 300, 'simulate.row_us': 100})")]
# bounds for a hang only: a loaded machine starts a kernel slowly
nbclient.NotebookClient(nb, timeout=900, startup_timeout=600,
                        kernel_name="aiarun-test",
                        resources={"metadata": {"path": "."}}).execute()
nbformat.write(nb, "run.ipynb")
for out in nb.cells[2].outputs:
    if out.get("name") == "stdout":
        print(out["text"].strip())
bar = " ".join(o.get("text", "") for o in nb.cells[3].outputs)
warned = [str(o) for c in nb.cells for o in c.outputs
          if "TqdmWarning" in str(o) or "IProgress" in str(o)]
print("bar %s warnings %d %s" % ("100%|" in bar or "widget" in str(
    nb.cells[3].outputs), len(warned), warned[:1]), file=sys.stderr)
PY
    PYTHONPATH=$pypath AIARUN_MPIRUN=$MPIRUN own_session "$py" nb.py >nb-out.txt 2>nb-err.txt
    nb_rc=$?
    like "$nb_rc $(cat nb-out.txt)" "^0 gap [-+0-9.e]+ [0-9]+$" \
        "a notebook runs aiarun.run in a kernel and prints the gap"
    like "$(grep '^bar ' nb-err.txt)" "^bar True warnings 0 " \
        "its progress bar shows, with no TqdmWarning"
    [ $nb_rc = 0 ] || tail_of nb-err.txt
fi
done_testing
