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
import numbers
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


class AiarunError(RuntimeError, ValueError):
    """A run that failed, or a job or argument refused before it starts:
    ``message`` is aiarun's one-line error (the first ``aiarun[rank]:``
    error line on stderr, mpirun's own where aiarun gave none, or what
    run() refused), ``status`` the exit status (aiarun(1), EXIT STATUS: 1
    failed while running, 2 a bad job, plugin or usage), ``stderr`` all
    of it, ``command`` the command line that was run.  A ValueError too,
    as what run() refuses once raised ValueError."""

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


# a text written as it is (YAML's plain scalar, which aiarun reads as
# the job file's own words: `step: auto`); any other is quoted
_PLAIN = re.compile(r"^[A-Za-z_./][A-Za-z0-9_./:+-]*$")
_NOT_TEXT = {"true", "false", "yes", "no", "on", "off", "y", "n", "null",
             ".inf", ".nan"}


def _number(text):
    """Whether YAML would read text as a number (".5", "1e3")."""
    try:
        float(text)
        return True
    except ValueError:
        return False


def _scalar(v, where):
    """A Python value as a YAML scalar: text plain where YAML reads it
    back as that text (so that ``"auto"`` is the keyword, as in a job
    file and on the command line), else quoted; numbers (NumPy's too) as
    JSON writes them.  ``where``: the key path, for the error."""
    if v is None:
        return "null"
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if v else "false"
    if isinstance(v, str):
        if _PLAIN.match(v) and not v.endswith(":") and \
                v.lower() not in _NOT_TEXT and not _number(v):
            return v
        return json.dumps(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return json.dumps(float(v))
    raise AiarunError("%s: a %s is not a job value (give a number, a str, "
                      "a bool, None, a list or a dict)"
                      % (where, type(v).__name__), 2)


def _yaml_value(v, where="overrides", flow=False):
    """A Python value as the text of ``-o KEY=VALUE``: YAML, its text
    written as a dict job writes it (_scalar), a list or dict in flow
    style; None removes the key."""
    if v is None and not flow:
        return ""
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(_yaml_value(e, "%s[%d]" % (where, i), True)
                                  for i, e in enumerate(v))
    if isinstance(v, dict):
        return "{%s}" % ", ".join(
            "%s: %s" % (json.dumps(str(k)),
                        _yaml_value(e, "%s[%r]" % (where, k), True))
            for k, e in v.items())
    if flow and isinstance(v, str) and ":" in v:
        return json.dumps(v)  # a colon in a flow plain scalar is a key's
    return _scalar(v, where)


def _job_text(job):
    """A dict job as a YAML file's text, block style, and for each line
    (from 1) the key path it holds (``job['pool']['wait']['nwait']``), so
    that aiarun's file:line:column becomes the dict's key."""
    lines, paths = [], [None]

    def key(k, where):
        if not isinstance(k, str):
            raise AiarunError("%s: a key %r: job keys are str"
                              % (where, k), 2)
        return _scalar(k, where)

    def emit(v, indent, where):
        pad = " " * indent
        if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
            v = v.tolist()
        if isinstance(v, dict):
            for k, e in v.items():
                w = "%s[%r]" % (where, k)
                head = pad + key(k, w) + ":"
                block(head, e, indent, w)
        elif isinstance(v, (list, tuple)):
            for i, e in enumerate(v):
                block(pad + "-", e, indent, "%s[%d]" % (where, i))

    def block(head, e, indent, w):
        if hasattr(e, "tolist") and not isinstance(e, (str, bytes)):
            e = e.tolist()
        if isinstance(e, (dict, list, tuple)) and e:
            lines.append(head)
            paths.append(w)
            emit(e, indent + 2, w)
        else:
            text = "{}" if isinstance(e, dict) else "[]" if \
                isinstance(e, (list, tuple)) else _scalar(e, w)
            lines.append(head + " " + text)
            paths.append(w)

    if not isinstance(job, dict):
        raise AiarunError("job: a dict of the job file's sections", 2)
    emit(job, 0, "job")
    return "".join(ln + "\n" for ln in lines), paths


def _job_where(message, path, paths):
    """aiarun's message with the temporary job file's place (PATH:LINE:COL
    or PATH:LINE) given as the dict's key path, and the file's name as
    "the job dict" where it stands alone."""
    def at(m):
        n = int(m.group(1))
        return paths[n] if 0 < n < len(paths) else "the job dict"
    message = re.sub(re.escape(path) + r":(\d+)(?::\d+)?", at, message)
    return message.replace(path, "the job dict")


def _which(name, given, env):
    """The program: given (``aiarun=``), else the environment's, else
    PATH's; refused with its name when it is not a program that can be
    run (mpirun's own message would be a banner)."""
    prog = given or os.environ.get(env)
    how = "%s=" % name if given else env if prog else "PATH"
    prog = prog or shutil.which(name)
    if not prog:
        raise AiarunError("%s not found: give %s= or set %s, or put it on "
                          "PATH" % (name, name, env), 2)
    found = shutil.which(prog)
    if not found:
        raise AiarunError("%s %s (%s): no such program, or not executable"
                          % (name, prog, how), 2)
    return os.path.abspath(found) if os.sep in prog else prog


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
    not a warning and not the launcher's; else the launcher's first
    paragraph in one line (mpirun's banner between rulers of dashes);
    else the last line."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if _aiarun_line(ln) and " progress: " not in ln \
                and ": warning: " not in ln:
            return ln
    para = []
    for ln in stderr.splitlines():
        if re.match(r"^\s*[-=*]{8,}\s*$", ln) or not ln.strip():
            if para:
                break
            continue
        para.append(ln.strip())
    if para:
        return " ".join(para)
    return lines[-1] if lines else "no message on stderr"


def _aiarun_line(ln):
    return re.match(r"^aiarun(\[\d+\])?: ", ln) is not None


def _tqdm():
    """tqdm's class: tqdm.auto's (a widget in a notebook) where ipywidgets
    is there to draw it, else the text bar (tqdm.auto without ipywidgets
    warns, TqdmWarning, and falls back to text anyway); None without
    tqdm."""
    try:
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
        return tqdm
    except ImportError:
        pass
    try:
        from tqdm import tqdm
        return tqdm
    except ImportError:
        return None


class _Progress:
    """Progress lines to a tqdm bar (the percent of the stop rule where the
    line gives one, else iterations), or as they are to stderr.  The bar
    counts whole units and shows no rate: aiarun's lines come a few a
    second, so tqdm's rate (units over the first fraction of a second)
    means nothing."""

    def __init__(self, show):
        self.bar = None
        self.show = show
        self.tqdm = _tqdm() if show else None

    def write(self, text):
        """A line of stderr that does not break the bar."""
        if self.bar is not None:
            self.bar.write(text.rstrip("\n"), file=sys.stderr)
        else:
            sys.stderr.write(text)
            sys.stderr.flush()

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
            self.bar = self.tqdm(
                total=100 if pct else None, desc="aiarun", leave=True,
                file=sys.stderr, bar_format=(
                    "{desc}: {percentage:3.0f}%|{bar}| "
                    "[{elapsed}<{remaining}{postfix}]") if pct else
                "{desc}: {n} iterations [{elapsed}{postfix}]")
        n = int(pct.group(1)) if pct else int(it.group(1)) if it else 0
        self.bar.update(max(0, n - self.bar.n))
        post = []
        if pct and it:
            post.append("iteration %s" % it.group(1))
        loss = re.search(r"loss (\S+)", text)
        if loss:
            post.append("loss %s" % loss.group(1).rstrip(","))
        if post:
            self.bar.set_postfix_str(", ".join(post))

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
    from there, and removed after; aiarun's errors name the dict's key,
    ``job['pool']['wait']['nwait']``).  In a dict and in ``overrides`` a
    str is text, except a word that a job file writes bare (``"auto"``,
    a path, a name), which is written bare as there: ``"auto"`` is the
    keyword of ``step: auto``, ``"7"`` is text, not a number.  ``np``: the ranks of ``mpirun -np``
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
    ``echo``: copy aiarun's other stderr lines to sys.stderr: warnings
    as they come, the rest when the run ends (a failed run's: all but
    the line the AiarunError carries; mpirun's banners stay in its
    ``stderr``).

    The job's own output files are written where it names them, as
    under mpirun; the outputs it does not name are asked for in the
    scratch folder.  Raises AiarunError for exit statuses 1 and 2 (and
    any other that is not 0, 3 or 4), and for what it refuses before
    starting (a dict that is not a job, a program that is not there, a
    ``keep`` that is not a folder); KeyboardInterrupt stops the run as
    SIGTERM does (aiarun writes its checkpoint and summary) and is
    raised again.
    """
    if (np is None) == (simulate is None):
        raise AiarunError("give one of np (mpirun -np) and simulate (workers "
                          "of --simulate)", 2)
    cwd = os.path.abspath(cwd or os.getcwd())
    prog = _which("aiarun", aiarun, "AIARUN")
    launcher = None if simulate is not None else \
        _which("mpirun", mpirun, "AIARUN_MPIRUN")
    overrides = dict(overrides or {})
    made_job, text, paths = None, None, None
    if isinstance(job, dict):
        # checked and written out before any file is made, so that a
        # refused dict leaves nothing behind
        out = job.get("output")
        if out is not None and not isinstance(out, dict):
            raise AiarunError("job['output']: a section is a dict, not a %s"
                              % type(out).__name__, 2)
        named = dict(out or {})
        text, paths = _job_text(job)
    else:
        job_path = os.path.join(cwd, os.fspath(job))
        if not os.path.exists(job_path):
            raise AiarunError("%s: no such job file" % job, 2)
        named = _output_section(job_path)
    args = []
    for k, v in overrides.items():
        args += ["-o", "%s=%s" % (k, _yaml_value(v, "overrides[%r]" % k))]
    if keep:
        if os.path.exists(keep) and not os.path.isdir(keep):
            raise AiarunError("keep=%s: not a folder" % keep, 2)
        try:
            os.makedirs(keep, exist_ok=True)
        except OSError as e:
            raise AiarunError("keep=%s: %s" % (keep, e.strerror or e), 2)
    scratch = keep or tempfile.mkdtemp(prefix="aiarun-run-")
    try:
        if text is not None:
            fd, made_job = tempfile.mkstemp(prefix=".aiarun-job-",
                                            suffix=".yaml", dir=cwd)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            job_path = made_job
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
                args += ["-o", "%s=%s" % (full, _yaml_value(files[key]))]
        args += ["--progress", "lines" if progress else "off", job_path]
        if simulate is not None:
            cmd = [prog, "--simulate", str(int(simulate))] + args
        else:
            flags = []
            if _is_ompi(launcher):
                flags.append("--oversubscribe")
                if hasattr(os, "geteuid") and os.geteuid() == 0:
                    flags.append("--allow-run-as-root")
            cmd = [launcher, "-np", str(int(np))] + flags + \
                list(mpirun_args) + [prog] + args
        where = (lambda t: _job_where(t, made_job, paths)) if made_job \
            else (lambda t: t)
        return _start(cmd, cwd, files, progress, frames, timeout, echo,
                      where)
    finally:
        if made_job:
            try:
                os.unlink(made_job)
            except OSError:
                pass
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _start(cmd, cwd, files, progress, frames, timeout, echo, where):
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
    err, held = [], []
    try:
        try:
            for line in proc.stderr:
                err.append(line)
                m = _PROGRESS.match(line.rstrip("\n"))
                if m:
                    bar.line(m.group(1))
                elif echo and _aiarun_line(line) and ": warning: " in line:
                    bar.write(where(line))
                elif echo:
                    held.append(line)  # an error's, or mpirun's banner
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
    # the lines held back, once the run is over: on a failure aiarun's
    # other lines only, not the one the AiarunError carries (nor mpirun's
    # banner about the exit status: both are in its stderr)
    failed = timed_out or rc not in (0, 3, 4)
    message = where(_error_line(stderr)) if failed else None
    for line in held:
        if not failed or (_aiarun_line(line) and
                          where(line.rstrip("\n")) != message):
            sys.stderr.write(where(line))
    if timed_out:
        raise AiarunError("stopped after %g s (timeout=)" % timeout,
                          rc if rc else 1, stderr, cmd)
    if rc not in (0, 3, 4):
        if rc < 0:
            raise AiarunError("killed by signal %d" % -rc, 128 - rc, stderr,
                              cmd)
        raise AiarunError(message, rc, stderr, cmd)
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
