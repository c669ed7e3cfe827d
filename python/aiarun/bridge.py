"""The Python side of aiarun's ``python`` problem plugin.

A job names a class::

    problem:
      plugin: python
      class: lsq:LeastSquares     # module:Class
      ridge: 0.1                  # every other key: a constructor argument

and aiarun, on every rank that holds the problem, builds it with those
arguments and calls:

``open(ctx) -> int``
    ``ctx`` is a :class:`Context`: this rank's role, rank, pool index, the
    seed, the job's folder, its :class:`Partition` and, when the job names
    a data file, the rows it holds (``ctx.X``, ``ctx.y``, ``ctx.row_ids``,
    or ``ctx.csr`` for sparse rows).  Returns the model's dimension.
``loss(x) -> float``
    the mean loss over this rank's rows (the coordinator holds every row).
``gradient(x, idx, g)``
    the gradient of the mean loss over rows ``idx`` (all rows when
    ``idx`` is None), written into ``g``, or returned (then copied).
``metric(x) -> float`` (optional)
    a second figure reported beside the loss, named by ``metric_name``.
``optimum() -> (x, f)`` (optional)
    the exact minimiser and its loss, asked on the coordinator; None when
    it cannot be had.  With a data file the coordinator holds none of the
    rows (``ctx.X`` is empty): it is then asked only after ``combine``.
``summary_len``, ``summarize() -> array``, ``combine(total)`` (optional,
all three or none)
    additive sums over the rows, so that ``optimum`` can answer with a
    data file: ``summary_len`` (attribute or method, the same on every
    rank) values; each worker's ``summarize()`` over its rows, and the
    coordinator's ``combine`` gets their element-wise sum (a view for
    the call: copy it).  ``etc/lsq.py``'s are A'A, A'b, b'b and m.
``hvp(x, v) -> array`` (optional)
    the Hessian of the mean loss over this rank's rows at ``x`` times
    ``v``: the algorithm ``newton`` asks the workers for it, and a job
    with ``stop.gap`` whose class cannot give ``optimum`` (no sums) finds
    the optimum over the workers' rows with it.
``rows`` (attribute or method; required without a data file)
    the rows this rank holds.

``x``, ``g``, ``idx`` and the data arrays are views of aiarun's buffers,
valid during the call only: copy what you keep.

The ``python`` algorithm plugin runs a class the same way (``algorithm:
{plugin: python, class: gd:GD}``); its ``create(ctx)`` is given an
:class:`AlgorithmContext`, and aiarun-plugin(7), ALGORITHMS IN PYTHON,
describes its methods.
"""

import numpy as np

#: partition index of the coordinator's view: every row
ALL = -1
BLOCK, CYCLIC = 0, 1


class Partition:
    """Which rows of the data a rank holds (as ``struct aia_partition``).

    Which part holds which row is the runtime's rule, asked through
    ``rules`` (the plugin's ``(first, owners)``), so that Python and the
    runtime that delivers the rows never disagree."""

    def __init__(self, index, count, scheme, weights, rules):
        self.index = index
        self.count = count
        self.scheme = "cyclic" if scheme == CYCLIC else "block"
        self.weights = None if weights is None else np.array(weights)
        self._first, self._owners = rules

    def first(self, m, p):
        """First row of part ``p`` of ``m`` rows under the block scheme."""
        return self._first(int(m), int(p))

    def owner(self, m, r):
        """The part that owns rows ``r`` (an int or an array) of ``m``."""
        r = np.asarray(r, dtype=np.int64)
        rows = np.ascontiguousarray(r.reshape(-1))
        out = np.empty_like(rows)
        self._owners(int(m), rows, out)
        return out.reshape(r.shape)[()]

    def rows(self, m):
        """The numbers of the rows this part holds, of ``m`` rows (all of
        them for the coordinator's view)."""
        if self.index == ALL:
            return np.arange(m)
        if self.scheme == "block":
            return np.arange(self.first(m, self.index),
                             self.first(m, self.index + 1))
        return np.nonzero(self.owner(m, np.arange(m)) == self.index)[0]


class Rank:
    """Where a class runs, told to both kinds: ``role`` ("coordinator" or
    "worker"), ``coordinator``, ``rank``, ``worker`` (pool index, -1 on the
    coordinator), ``nworkers``, ``seed`` and ``jobdir``."""

    def __init__(self, role, rank, worker, nworkers, seed, jobdir):
        self.role = role
        self.coordinator = role == "coordinator"
        self.rank = rank
        self.worker = worker
        self.nworkers = nworkers
        self.seed = seed
        self.jobdir = jobdir


class Context(Rank):
    """What ``open`` is told: see the module's documentation."""

    def __init__(self, role, rank, worker, nworkers, seed, jobdir,
                 partition, data):
        super().__init__(role, rank, worker, nworkers, seed, jobdir)
        self.partition = partition
        self.X = self.y = self.row_ids = self.csr = None
        self.rows = self.cols = self.total_rows = 0
        self.source = None
        if data is not None:
            self.rows, self.cols = data["rows"], data["cols"]
            self.total_rows = data["total_rows"]
            self.y, self.row_ids = data["y"], data["row_ids"]
            self.source = data["source"]
            if data["x"] is not None:
                self.X = data["x"].reshape(self.rows, self.cols)
            else:
                self.csr = (data["row_start"], data["col"], data["val"])

    def __repr__(self):
        return ("Context(role=%r, rank=%d, worker=%d, nworkers=%d, rows=%d)"
                % (self.role, self.rank, self.worker, self.nworkers,
                   self.rows))


def context(role, rank, worker, nworkers, seed, jobdir, index, count,
            scheme, weights, data, rules):
    """Called by the plugin: the Context handed to ``open``."""
    return Context(role, rank, worker, nworkers, seed, jobdir,
                   Partition(index, count, scheme, weights, rules), data)


def vector(buf, code):
    """Called by the plugin: a NumPy view of one of aiarun's buffers.  Row
    numbers (size_t) are seen as int64, NumPy's index type, so that they
    mix with other integers (they stay far below 2^63)."""
    a = np.frombuffer(buf, dtype=np.dtype(code))
    return a.view(np.int64) if code == "Q" else a


def put(g, r, what="gradient()", of="a model"):
    """Called by the plugins: copy what a method returned (a gradient, a
    query, an answer) into aiarun's buffer ``g``."""
    r = np.asarray(r, dtype=np.float64)
    if r.size != g.size:
        raise ValueError("%s returned %d values for %s of %d"
                         % (what, r.size, of, g.size))
    np.copyto(g, r.reshape(g.shape))


def doubles(r):
    """Called by the algorithm plugin: what save() returned, as one
    contiguous run of float64 values."""
    return np.ascontiguousarray(r, dtype=np.float64).reshape(-1)


#: levels of AlgorithmContext.log
LOG_LEVELS = {"error": 0, "warn": 1, "info": 2, "debug": 3}


class AlgorithmContext(Rank):
    """What an algorithm's ``create`` is told, on every rank.

    Facts: those of :class:`Rank`, ``pool_ranks``, ``asynchronous``
    (pool.mode: async), ``dim`` (the problem's model length), ``rows``
    (the rows this rank holds), and of the whole problem ``total_rows``,
    ``smoothness`` (L, 0 when unknown), ``smallest`` and ``largest`` (the
    workers' least and largest L).

    The problem and the runtime's rules, called through the plugin
    without a copy: :meth:`gradient`, :meth:`loss`, :meth:`auto_step`,
    :meth:`age_factor`, :meth:`log`.  Keep the context in the instance;
    it is valid until the run ends."""

    def __init__(self, role, rank, worker, nworkers, seed, jobdir,
                 asynchronous, pool_ranks, dim, rows, total_rows, smoothness,
                 smallest, largest, link):
        super().__init__(role, rank, worker, nworkers, seed, jobdir)
        self.asynchronous = asynchronous
        self.pool_ranks = pool_ranks
        self.dim = dim
        self.rows = rows
        self.total_rows = total_rows
        self.smoothness = smoothness
        self.smallest = smallest
        self.largest = largest
        (self._gradient, self._loss, self._auto_step, self._age_factor,
         self._log) = link

    def gradient(self, x, out=None, idx=None):
        """The gradient of this rank's loss at ``x`` (``dim`` float64
        values), the mean over rows ``idx`` (an int64 array of this rank's
        row numbers) or over all its rows (None), written into ``out``
        (a new array when None) and returned."""
        g = np.empty(self.dim) if out is None else out
        self._gradient(x, g, idx)
        return g

    def loss(self, x):
        """The mean loss over this rank's rows at ``x``."""
        return self._loss(x)

    def auto_step(self, name="step", scale=1.0, rule="scale/L"):
        """The step of the job's key ``name``: its number, or for ``auto``
        (or no key) ``scale / L``, L the problem's smoothness, ``rule``
        saying where that comes from in the run's report."""
        return self._auto_step(name, float(scale), str(rule))

    def age_factor(self, rows, age_rows, recent_rows, most=1.0):
        """The runtime's factor of a step along stale gradients (gd's and
        sag's): from the rows behind them, their sum of rows times age in
        rounds, the rows at most one round old, and ``most`` = 1/(step L).
        """
        return self._age_factor(float(rows), float(age_rows),
                                float(recent_rows), float(most))

    def log(self, text, level="info"):
        """One line on stderr, prefixed ``aiarun[rank]:`` (shown by level,
        as aiarun's own: ``error``, ``warn``, ``info`` with -v, ``debug``
        with -vv)."""
        self._log(LOG_LEVELS[level], str(text))

    def __repr__(self):
        return ("AlgorithmContext(role=%r, rank=%d, worker=%d, nworkers=%d, "
                "dim=%d)" % (self.role, self.rank, self.worker, self.nworkers,
                             self.dim))
