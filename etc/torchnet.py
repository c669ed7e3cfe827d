"""A small neural network in PyTorch, for aiarun's python problem
(etc/python-torch.yaml runs it).

The data: points drawn uniformly in the square [-2, 2]^2, labelled by the
ring they fall in (radius below 0.9, below 1.6, or beyond): three classes
that no linear model separates.  Every rank draws the same points from
the job's seed and keeps the rows of its part; the coordinator also draws
a held-out test set, whose accuracy is the reported metric.

The model is one flat vector of doubles, aiarun's iterate x: the
network's weights are w0 + x, with w0 PyTorch's initialisation drawn from
the seed (an all-zero network would never break the symmetry of its
hidden units, and aiarun's methods start from x = 0).  The parameters are
views into one flat tensor, so loading an iterate is one addition, and
the gradient comes from autograd, flattened into aiarun's buffer.
"""
import numpy as np
import torch


def rings(n, rng):
    """n points of the three ring classes: features (n, 2), labels (n,)."""
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    r = np.hypot(X[:, 0], X[:, 1])
    return X, np.digitize(r, [0.9, 1.6])


class RingNet:
    """``rows``: training points over all workers; ``hidden``: width of the
    two hidden layers; ``test``: held-out points (coordinator)."""

    metric_name = "accuracy"

    def __init__(self, rows=2000, hidden=16, test=1000, l2=0.0):
        self.m, self.hidden, self.ntest = int(rows), int(hidden), int(test)
        self.l2 = float(l2)
        torch.set_num_threads(1)

    def open(self, ctx):
        rng = np.random.default_rng(ctx.seed)
        X, y = rings(self.m, rng)
        mine = ctx.partition.rows(self.m)
        self.rows = len(mine)
        self.X = torch.from_numpy(X[mine])
        self.y = torch.from_numpy(y[mine])
        if ctx.coordinator:
            Xt, yt = rings(self.ntest, np.random.default_rng(ctx.seed + 1))
            self.Xt, self.yt = torch.from_numpy(Xt), torch.from_numpy(yt)
        torch.manual_seed(ctx.seed)
        h = self.hidden
        self.net = torch.nn.Sequential(
            torch.nn.Linear(2, h), torch.nn.Tanh(),
            torch.nn.Linear(h, h), torch.nn.Tanh(),
            torch.nn.Linear(h, 3)).double()
        # the parameters become views of one flat tensor
        params = list(self.net.parameters())
        self.flat = torch.cat([p.detach().reshape(-1) for p in params])
        self.flat_np = self.flat.numpy()
        off = 0
        for p in params:
            n = p.numel()
            p.data = self.flat[off:off + n].view_as(p)
            off += n
        self.params = params
        self.w0 = self.flat_np.copy()
        return off

    def _load(self, x):
        np.add(self.w0, x, out=self.flat_np)

    def _loss(self, X, y):
        f = torch.nn.functional.cross_entropy(self.net(X), y)
        if self.l2:
            f = f + 0.5 * self.l2 * (self.flat @ self.flat)
        return f

    def loss(self, x):
        self._load(x)
        with torch.no_grad():
            return float(self._loss(self.X, self.y))

    def gradient(self, x, idx, g):
        self._load(x)
        for p in self.params:
            p.grad = None
        if idx is None:
            f = self._loss(self.X, self.y)
        else:
            i = torch.from_numpy(idx.astype(np.int64))
            f = self._loss(self.X[i], self.y[i])
        f.backward()
        np.concatenate([p.grad.numpy().ravel() for p in self.params], out=g)

    def metric(self, x):
        self._load(x)
        with torch.no_grad():
            guess = self.net(self.Xt).argmax(dim=1)
        return float((guess == self.yt).double().mean())
