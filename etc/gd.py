"""aiarun's gd written in NumPy, for the python algorithm
(etc/python-gd.yaml runs it; t/t0920-python-alg.t checks that it ends at
gd's iterate).  Workers answer a query with their rows' mean gradient;
the coordinator keeps each worker's latest and at a round's end steps
along their row-weighted mean, shrunk as the table ages."""
import numpy as np


class GD:
    def __init__(self, step="auto"):
        self.step = step  # a number, or auto: 1/L (create asks the runtime)

    def create(self, ctx):
        self.ctx, n, d = ctx, ctx.nworkers, ctx.dim
        self.step = ctx.auto_step("step", 1.0, "1/L, gradient descent's step")
        self.x = np.zeros(d)         # the coordinator's iterate
        self.G = np.zeros((n, d))    # each worker's latest gradient,
        self.n = np.zeros(n)         # the rows behind it,
        self.sent = np.zeros(n)      # the round of its query
        self.now = 0                 # and the latest round heard
        self.sum = np.empty(d)
        return d                     # queries and answers: d values

    def init(self, query):
        query[:] = self.x

    def worker(self, query, answer, step):
        self.ctx.gradient(query, out=answer)

    def absorb(self, answer, info):
        w = info.worker
        self.G[w], self.n[w], self.sent[w] = answer, info.rows, info.sent_round
        self.now = max(self.now, info.round)

    def query(self, query):
        total = self.n.sum()
        if total > 0:
            age = np.maximum(self.now - self.sent, 0)
            f = self.ctx.age_factor(total, self.n @ age, self.n[age <= 1].sum())
            self.sum[:] = 0
            for e in np.flatnonzero(self.n):   # in worker order, as gd
                self.sum += self.n[e] * self.G[e]
            self.x -= self.step * f * (self.sum / total)
        query[:] = self.x

    def save(self):
        return np.concatenate([self.x, self.G.ravel(), self.n, self.sent])

    def load(self, state):
        d, n = len(self.x), len(self.n)
        self.x[:], self.G.flat[:] = state[:d], state[d:d + n * d]
        self.n[:], self.sent[:] = state[d + n * d:-n], state[-n:]
        self.now = int(self.sent.max())
