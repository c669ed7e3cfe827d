"""Least squares in NumPy, for aiarun's python problem: the same loss and
gradient as the lrmse plugin (etc/python-lsq.yaml runs it)::

    f(x) = 1/(2m) * sum_i (a_i . x - b_i)^2 + ridge/2 * ||x||^2

on the rows of the job's data file that this rank holds (ctx.X, ctx.y:
views of aiarun's buffers, never copied).  Its optimum, as lrmse's, comes
from the workers' Gram sums: the coordinator holds none of the rows.
"""
import numpy as np


class LeastSquares:
    """``ridge``: the L2 penalty; ``block``: rows per step of the gradient.

    The gradient takes the rows in blocks that stay in the cache between
    the two products (A x - b, then A' r): one pass over memory, as C's
    fused loop, instead of two.
    """

    def __init__(self, ridge=0.0, block=2048):
        self.ridge = float(ridge)
        self.block = int(block)

    def open(self, ctx):
        if ctx.X is None:
            raise ValueError("LeastSquares needs dense rows from a data file "
                             "(problem.data)")
        self.A, self.b = ctx.X, ctx.y
        self.sums = None
        self.r = np.empty(min(self.block, len(self.b)))
        self.t = np.empty(ctx.cols)
        return ctx.cols

    def loss(self, x):
        e = self.A @ x - self.b
        f = 0.5 * (e @ e) / len(self.b) if len(self.b) else 0.0
        return f + 0.5 * self.ridge * (x @ x)

    def smoothness(self):
        """L of this rank's gradient: the largest eigenvalue of A'A/m, plus
        ridge (step: auto takes its step from it)."""
        m = len(self.b)
        top = np.linalg.norm(self.A, 2) ** 2 / m if m else 0.0
        return top + self.ridge

    def summary_len(self):
        """A summary's length: A'A, A'b, b'b and the rows."""
        n = self.A.shape[1]
        return n * n + n + 2

    def summarize(self):
        """The sums over this worker's rows (the coordinator adds them)."""
        A, b = self.A, self.b
        return np.concatenate([(A.T @ A).ravel(), A.T @ b, [b @ b, len(b)]])

    def combine(self, total):
        """Every worker's sums added, on the coordinator (a view for the
        call: kept as a copy)."""
        self.sums = np.array(total)

    def optimum(self):
        """The minimiser (normal equations) and its loss, on the
        coordinator, from the workers' sums (or from its own rows, where
        it holds them: under --simulate)."""
        n = self.A.shape[1]
        s = self.summarize() if self.sums is None else self.sums
        G, Ab, (bb, m) = s[:n * n].reshape(n, n), s[n * n:-2], s[-2:]
        if m == 0:
            return None
        x = np.linalg.solve(G / m + self.ridge * np.eye(n), Ab / m)
        f = 0.5 * (x @ G @ x - 2 * (x @ Ab) + bb) / m
        return x, f + 0.5 * self.ridge * (x @ x)

    def gradient(self, x, idx, g):
        if idx is None:
            A, b = self.A, self.b
        else:
            A, b = self.A[idx], self.b[idx]
        g[:] = 0
        for s in range(0, len(b), self.block):
            Ab, bb = A[s:s + self.block], b[s:s + self.block]
            r = self.r[:len(bb)]
            np.dot(Ab, x, out=r)
            r -= bb
            np.dot(r, Ab, out=self.t)
            g += self.t
        g /= len(b)
        if self.ridge:
            g += self.ridge * x

    def hvp(self, x, v):
        """H v = A'A v / m + ridge v (the Hessian does not depend on x):
        the algorithm newton asks the workers for it."""
        m = len(self.b)
        hv = self.A.T @ (self.A @ v) / m if m else np.zeros_like(v)
        return hv + self.ridge * v
