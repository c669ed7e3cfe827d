"""Start an aiarun job from Python and get its results back as objects.

    import aiarun
    r = aiarun.run("job.yaml", np=5)            # mpirun -np 5 aiarun job.yaml
    r = aiarun.run(job_dict, simulate=100)      # aiarun --simulate 100
    r.summary["gap"], r.history, r.answers, r.x

:func:`run` starts ``mpirun`` (or ``aiarun --simulate N``) as a child
process, shows its progress (a tqdm bar where tqdm is installed: in a
terminal or a notebook), and returns a :class:`Result`.  A run that
fails raises :class:`AiarunError` with aiarun's one-line message and
its exit status.  aiarun itself is found as ``aiarun=``, else the
``AIARUN`` environment variable, else ``aiarun`` on PATH; mpirun as
``mpirun=``, else ``AIARUN_MPIRUN``, else ``mpirun`` on PATH.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import warnings

from . import read

# the outputs a Result carries: the job key, the file name in the
# scratch folder, and the reader
_OUTPUTS = (("history", "history.csv"), ("answers", "answers.csv"),
            ("workers", "workers.csv"), ("final", "final.txt"))

# aiarun's progress line (aiarun(1), --progress)
_PROGRESS = re.compile(r"^aiarun\[0\]: progress: (.*)$")
_ITERATION = re.compile(r"iteration (\d+)")
_PERCENT = re.compile(r", (\d+)%")


class AiarunError(RuntimeError):
    """A run that failed: ``message`` is aiarun's one-line error (the
    first ``aiarun[rank]:`` error line on stderr, or the end of stderr),
    ``status`` the exit status (aiarun(1), EXIT STATUS: 1 failed while
    running, 2 a bad job, plugin or usage), ``stderr`` all of it,
    ``command`` the command line that was run."""

    def __init__(self, message, status, stderr="", command=()):
        RuntimeError.__init__(self, "%s (exit status %d)" % (message, status))
        self.message = message
        self.status = status
        self.stderr = stderr
        self.command = list(command)


class Result:
    """What a run gave back.

    ``summary``: the summary line as a dict (``stop``, ``iterations``,
    ``loss``, ``gap``, ``test_accuracy``, ...: aiarun(1), OUTPUT);
    ``history``, ``answers``, ``workers``: the loss history, the answer
    log and the per-worker table, pandas DataFrames where pandas is
    installed (else dicts of NumPy arrays; None when the run wrote none);
    ``x``: the final iterate (a NumPy array); ``status``: the exit status
    (0, or 3 and 4 for a run that is done but left a worker behind or
    missed rows in its final evaluation: a warning says which);
    ``stdout``, ``stderr``: the text; ``command``: what was run.
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        s = self.summary
        return "Result(stop=%s, iterations=%s, loss=%s%s)" % (
            s.get("stop"), s.get("iterations"), s.get("loss"),
            "".join(", %s=%s" % (k, s[k]) for k in ("gap", "test_accuracy")
                    if k in s))


def _yaml_value(v):
    """A Python value as the text of ``-o KEY=VALUE``: YAML flow, which
    JSON is a part of; None removes the key."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _which(name, given, env):
    prog = given or os.environ.get(env) or shutil.which(name)
    if not prog:
        raise AiarunError("%s not found: give %s= or set %s, or put it on "
                          "PATH" % (name, name, env), 2)
    return prog


def _output_section(path):
    """A job file's ``output`` section as a dict (the file names are what
    matters), read with PyYAML where installed, else from the file's
    block or flow ``output:`` mapping line by line."""
    try:
        import yaml
    except ImportError:
        yaml = None
    with open(path) as f:
        text = f.read()
    if yaml is not None:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            doc = None  # aiarun says what is wrong with it
        out = doc.get("output") if isinstance(doc, dict) else None
        return dict(out) if isinstance(out, dict) else {}
    keys, inside, indent = {}, False, None
    for line in text.splitlines():
        line = line.split(" #")[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^output:\s*(.*)$", line)
        if m:
            inside = True
            for k, v in re.findall(r"[{,]\s*(\w+)\s*:\s*([^,}]*)",
                                   m.group(1)):
                keys[k] = v.strip().strip("'\"")
            continue
        if inside:
            if not line[0].isspace():
                break
            depth = len(line) - len(line.lstrip())
            indent = depth if indent is None else indent
            m = re.match(r"^\s+(\w+)\s*:\s*(.*)$", line)
            if m and depth == indent:
                keys[m.group(1)] = m.group(2).strip().strip("'\"")
    return keys


def _is_ompi(mpirun):
    try:
        v = subprocess.run([mpirun, "--version"], capture_output=True,
                           text=True, timeout=30)
        return "Open MPI" in v.stdout + v.stderr or \
            "OpenRTE" in v.stdout + v.stderr
    except (OSError, subprocess.TimeoutExpired):
        return False


def _error_line(stderr):
    """aiarun's one-line message: the first line that is not progress,
    not a warning and not the launcher's, else the last line."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if re.match(r"^aiarun\[\d+\]: ", ln) and " progress: " not in ln \
                and ": warning: " not in ln:
            return ln
    return lines[-1] if lines else "no message on stderr"


class _Progress:
    """Progress lines to a tqdm bar (percent of the stop rule where the
    line gives one, else iterations), or as they are to stderr."""

    def __init__(self, show):
        self.bar = None
        self.show = show
        self.tqdm = None
        if show:
            try:
                from tqdm.auto import tqdm
                self.tqdm = tqdm
            except ImportError:
                pass

    def line(self, text):
        if not self.show:
            return
        if self.tqdm is None:
            sys.stderr.write("aiarun[0]: progress: %s\n" % text)
            sys.stderr.flush()
            return
        pct = _PERCENT.search(text)
        it = _ITERATION.search(text)
        if self.bar is None:
            self.bar = self.tqdm(total=100 if pct else None,
                                 unit="%" if pct else " it",
                                 desc="aiarun", leave=True,
                                 bar_format=None if pct else
                                 "{desc}: {n} iterations [{elapsed}]{postfix}")
        n = float(pct.group(1)) if pct else int(it.group(1)) if it else 0
        self.bar.update(max(0, n - self.bar.n))
        loss = re.search(r"loss (\S+)", text)
        if loss:
            self.bar.set_postfix_str("loss %s" % loss.group(1).rstrip(","))

    def close(self, done):
        if self.bar is not None:
            if done and self.bar.total:
                self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()


def run(job, np=None, simulate=None, overrides=None, aiarun=None,
        mpirun=None, mpirun_args=(), progress=True, frames=None, cwd=None,
        keep=None, timeout=None, echo=True):
    """Run ``job`` and return a :class:`Result`.

    ``job``: a job file's path, or a dict of the job file's sections
    (written as a file in ``cwd``, so that its relative paths are taken
    from there, and removed after).  ``np``: the ranks of ``mpirun -np``
    (the coordinator and the workers); ``simulate``: instead, the number
    of workers of ``aiarun --simulate`` (no mpirun).  ``overrides``: a
    dict of ``-o KEY=VALUE`` (``{"pool.wait.nwait": 2}``; a value None
    removes the key).  ``mpirun_args``: more words for mpirun (with Open
    MPI, ``--oversubscribe`` is passed, and ``--allow-run-as-root`` as
    root).  ``progress``: a bar (tqdm) or the progress lines.
    ``frames``: pandas DataFrames (default: where pandas is installed).
    ``cwd``: the folder the run starts in (default: the current one).
    ``keep``: a folder to keep the outputs that the job does not name
    (history.csv, answers.csv, workers.csv, final.txt); default: a
    temporary folder, removed after they are read.  ``timeout``: seconds
    after which the run is stopped (SIGTERM) and AiarunError raised.
    ``echo``: copy aiarun's other stderr lines (warnings) to sys.stderr.

    The job's own output files are written where it names them, as
    under mpirun; the outputs it does not name are asked for in the
    scratch folder.  Raises AiarunError for exit statuses 1 and 2 (and
    any other that is not 0, 3 or 4); KeyboardInterrupt stops the run as
    SIGTERM does (aiarun writes its checkpoint and summary) and is
    raised again.
    """
    if (np is None) == (simulate is None):
        raise ValueError("give one of np (mpirun -np) and simulate (workers "
                         "of --simulate)")
    cwd = os.path.abspath(cwd or os.getcwd())
    prog = _which("aiarun", aiarun, "AIARUN")
    made_job = None
    if isinstance(job, dict):
        fd, made_job = tempfile.mkstemp(prefix=".aiarun-job-", suffix=".yaml",
                                        dir=cwd)
        with os.fdopen(fd, "w") as f:
            json.dump(job, f, indent=1)  # JSON is YAML
        job_path = made_job
        named = dict(job.get("output") or {})
    else:
        job_path = os.path.join(cwd, os.fspath(job))
        if not os.path.exists(job_path):
            raise AiarunError("%s: no such job file" % job, 2)
        named = _output_section(job_path)
    overrides = dict(overrides or {})
    scratch = keep or tempfile.mkdtemp(prefix="aiarun-run-")
    if keep:
        os.makedirs(keep, exist_ok=True)
    try:
        files = {}
        for key, name in _OUTPUTS:
            full = "output." + key
            if full in overrides:
                v = overrides[full]
                files[key] = None if v in (None, "") else \
                    os.path.join(cwd, str(v))
            elif named.get(key) not in (None, ""):
                files[key] = os.path.join(cwd, str(named[key]))
            else:
                files[key] = os.path.join(os.path.abspath(scratch), name)
                overrides[full] = files[key]
        args = []
        for k, v in overrides.items():
            args += ["-o", "%s=%s" % (k, _yaml_value(v))]
        args += ["--progress", "lines" if progress else "off", job_path]
        if simulate is not None:
            cmd = [prog, "--simulate", str(int(simulate))] + args
        else:
            launcher = _which("mpirun", mpirun, "AIARUN_MPIRUN")
            flags = []
            if _is_ompi(launcher):
                flags.append("--oversubscribe")
                if hasattr(os, "geteuid") and os.geteuid() == 0:
                    flags.append("--allow-run-as-root")
            cmd = [launcher, "-np", str(int(np))] + flags + \
                list(mpirun_args) + [prog] + args
        return _start(cmd, cwd, files, progress, frames, timeout, echo)
    finally:
        if made_job:
            try:
                os.unlink(made_job)
            except OSError:
                pass
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _start(cmd, cwd, files, progress, frames, timeout, echo):
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()),
                              daemon=True)
    reader.start()
    timer = None
    timed_out = []
    if timeout is not None:
        def stop():
            timed_out.append(True)
            proc.send_signal(signal.SIGTERM)
        timer = threading.Timer(timeout, stop)
        timer.start()
    bar = _Progress(progress)
    err = []
    try:
        try:
            for line in proc.stderr:
                err.append(line)
                m = _PROGRESS.match(line.rstrip("\n"))
                if m:
                    bar.line(m.group(1))
                elif echo:
                    sys.stderr.write(line)
            proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    finally:
        if timer:
            timer.cancel()
        bar.close(proc.returncode == 0)
        reader.join(timeout=60)
    stdout = "".join(out)
    stderr = "".join(err)
    rc = proc.returncode
    if timed_out:
        raise AiarunError("stopped after %g s (timeout=)" % timeout,
                          rc if rc else 1, stderr, cmd)
    if rc not in (0, 3, 4):
        if rc < 0:
            raise AiarunError("killed by signal %d" % -rc, 128 - rc, stderr,
                              cmd)
        raise AiarunError(_error_line(stderr), rc, stderr, cmd)
    try:
        summary = read.parse_summary(stdout)
    except ValueError:
        raise AiarunError("exit status %d but no summary line on stdout"
                          % rc, rc if rc else 1, stderr, cmd)
    if rc:
        warnings.warn("aiarun: exit status %d: %s" % (
            rc, "a worker was left behind" if rc == 3 else
            "the final evaluation missed rows (loss=nan, partial_loss=%s)"
            % summary.get("partial_loss")), RuntimeWarning, stacklevel=3)
    if frames is None:
        try:
            import pandas  # noqa: F401
            frames = True
        except ImportError:
            frames = False
    got = {}
    for key, _ in _OUTPUTS:
        path = files.get(key)
        if not path or not os.path.exists(path):
            got[key] = None
        elif key == "final":
            got[key] = read.read_final(path)
        elif key == "history":
            got[key] = read.read_history(path, frame=frames)
        elif key == "answers":
            got[key] = read.read_answers(path, frame=frames)
        else:
            got[key] = read.read_workers(path, frame=frames)
    return Result(summary=summary, history=got["history"],
                  answers=got["answers"], workers=got["workers"],
                  x=got["final"], status=rc, stdout=stdout, stderr=stderr,
                  command=cmd)
