"""Readers for every file aiarun writes.

``read_history``, ``read_answers`` and ``read_workers`` read a table in
CSV or JSON Lines (told apart by the file's first character) into a dict
of NumPy arrays, one per column in the file's order, or a pandas
DataFrame with ``frame=True``.  An empty CSV field or a JSON ``null`` is
NaN; a column with no missing value and only integers is int64.

``read_iterates`` maps the binary iterate file (``output.iterates``)
without reading it; ``read_final`` reads ``output.final``;
``parse_summary`` and ``read_summary`` the ``stop=...`` summary line.
"""

import csv
import json
import os

import numpy as np

ITERATES_MAGIC = b"AIAITER1"
ITERATES_VERSION = 1
ITERATES_HEADER = 24  # magic, uint32 version, uint32 0, uint64 dim


def _fail(path, why):
    raise ValueError("%s: %s" % (path, why))


def _column(values):
    """A list of floats (NaN for missing) as int64 when it can be."""
    a = np.array(values, dtype=np.float64)
    if a.size and not np.isnan(a).any() and (a == np.round(a)).all() \
            and np.abs(a).max() < 2.0 ** 53:
        return a.astype(np.int64)
    return a


def _number(path, where, key, v):
    if v is None or v == "":
        return np.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        _fail(path, "%s: column %s: %r is not a number" % (where, key, v))


def _read_csv(path, f):
    rows = list(csv.reader(f))
    if not rows:
        _fail(path, "empty: no header line")
    names = rows[0]
    cols = {n: [] for n in names}
    text = {}
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(names):
            _fail(path, "line %d: %d fields, the header has %d"
                  % (i, len(row), len(names)))
        for n, v in zip(names, row):
            try:
                cols[n].append(np.nan if v == "" else float(v))
            except ValueError:
                text.setdefault(n, []).append(i)
                cols[n].append(v)
    out = {}
    for n in names:
        if n in text:  # a column of words (a worker marked UNTRUSTED, say)
            out[n] = np.array([str(v) for v in cols[n]], dtype=object)
        else:
            out[n] = _column(cols[n])
    return out


def _read_jsonl(path, f):
    names, cols = None, None
    for i, line in enumerate(f, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            _fail(path, "line %d: not JSON: %s" % (i, e))
        if not isinstance(obj, dict):
            _fail(path, "line %d: not a JSON object" % i)
        if names is None:
            names = list(obj)
            cols = {n: [] for n in names}
        if list(obj) != names:
            _fail(path, "line %d: keys %s, the first line has %s"
                  % (i, list(obj), names))
        for n in names:
            cols[n].append(_number(path, "line %d" % i, n, obj[n]))
    if names is None:
        _fail(path, "empty: no rows")
    return {n: _column(cols[n]) for n in names}


def read_table(path, frame=False):
    """Any of aiarun's tables, CSV or JSON Lines: a dict of arrays, or a
    pandas DataFrame when ``frame`` is true."""
    with open(path, newline="") as f:
        first = f.read(1)
        f.seek(0)
        table = _read_jsonl(path, f) if first == "{" else _read_csv(path, f)
    if frame:
        import pandas as pd
        return pd.DataFrame(table)
    return table


def read_history(path, frame=False):
    """``output.history``: iteration, epoch, time, loss, suboptimality,
    change, and the problem's metric when it has one."""
    t = read_table(path, frame)
    for need in ("iteration", "epoch", "time", "loss"):
        if need not in t:
            _fail(path, "no column %r: not a history (columns: %s)"
                  % (need, ", ".join(t)))
    return t


def read_answers(path, frame=False):
    """``output.answers``: one row per absorbed answer (time, rank,
    sent_round, round, staleness, iteration, compute, delay, rtt)."""
    t = read_table(path, frame)
    for need in ("rank", "sent_round", "round", "staleness"):
        if need not in t:
            _fail(path, "no column %r: not an answer log (columns: %s)"
                  % (need, ", ".join(t)))
    return t


def read_workers(path, frame=False):
    """``output.workers``: the per-worker table, one row per worker."""
    t = read_table(path, frame)
    for need in ("rank", "answers", "fresh", "stale"):
        if need not in t:
            _fail(path, "no column %r: not a worker table (columns: %s)"
                  % (need, ", ".join(t)))
    return t


class Iterates:
    """The iterate file as a NumPy memory map: ``iteration``, ``epoch``
    (int64), ``time`` (float64) are arrays of the records, ``x`` the
    (records, dim) array of models.  ``len()`` is the number of records;
    a record cut short (a run still writing) is left out."""

    def __init__(self, path):
        self.path = path
        size = os.path.getsize(path)
        if size < ITERATES_HEADER:
            _fail(path, "%d bytes: too short for an iterate file" % size)
        head = np.fromfile(path, dtype=np.uint8, count=ITERATES_HEADER)
        if head[:8].tobytes() != ITERATES_MAGIC:
            _fail(path, "not an aiarun iterate file (no AIAITER1 at the "
                  "start)")
        version = int(head[8:12].view("<u4")[0])
        if version != ITERATES_VERSION:
            _fail(path, "iterate layout version %d, this reader knows %d"
                  % (version, ITERATES_VERSION))
        self.dim = int(head[16:24].view("<u8")[0])
        self.dtype = np.dtype([("iteration", "<i8"), ("epoch", "<i8"),
                               ("time", "<f8"), ("x", "<f8", (self.dim,))])
        n = (size - ITERATES_HEADER) // self.dtype.itemsize
        if n:
            self.records = np.memmap(path, dtype=self.dtype, mode="r",
                                     offset=ITERATES_HEADER, shape=(n,))
        else:
            self.records = np.zeros(0, dtype=self.dtype)
        self.iteration = self.records["iteration"]
        self.epoch = self.records["epoch"]
        self.time = self.records["time"]
        self.x = self.records["x"]

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        return "Iterates(%r: %d records of dim %d)" % (self.path, len(self),
                                                       self.dim)


def read_iterates(path):
    """``output.iterates`` (aiarun(5), OUTPUTS): an :class:`Iterates`."""
    return Iterates(path)


def read_final(path):
    """``output.final``: the final model, one value a line."""
    x = np.loadtxt(path, dtype=np.float64, ndmin=1)
    return x


def parse_summary(text):
    """The values of the last ``stop=...`` line in ``text`` (aiarun's
    stdout): a dict with ``stop`` as text, counts as ints and the rest as
    floats.  ValueError when there is no summary line."""
    line = None
    for ln in text.splitlines():
        if ln.startswith("stop="):
            line = ln
    if line is None:
        raise ValueError("no summary line (stop=...) in the text")
    out = {}
    for field in line.split():
        key, sep, value = field.partition("=")
        if not sep:
            raise ValueError("summary field %r is not key=value" % field)
        try:
            out[key] = int(value)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out


def read_summary(path):
    """The summary line of a file holding aiarun's stdout."""
    with open(path) as f:
        try:
            return parse_summary(f.read())
        except ValueError as e:
            _fail(path, str(e))
