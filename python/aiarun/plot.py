"""Plots of aiarun's histories with matplotlib (the Agg backend: no
display needed), for people who do not use gnuplot (aiarun-plot)."""

import os

from . import read


def plot(histories, out=None, x="time", y=("loss", "suboptimality"),
         labels=None, title=None, logy=True):
    """Draw one or more histories, one line a run, one panel a column of
    ``y`` against column ``x``.

    ``histories``: file names or tables from :func:`aiarun.read_history`
    (dicts of arrays or pandas DataFrames, such as ``run(...).history``;
    a single one need not be in a list).  ``labels``: one per history
    (default: the file names).  ``out``: a file to save (PNG, SVG, PDF:
    by its name), or None.  On a log scale, values that are not positive
    are left out.  Returns the matplotlib Figure.
    """
    import matplotlib
    if os.environ.get("MPLBACKEND") is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if isinstance(histories, (str, os.PathLike, dict)) or \
            hasattr(histories, "columns"):  # one file, dict or DataFrame
        histories = [histories]
    if isinstance(y, str):
        y = (y,)
    tables, names = [], []
    for i, h in enumerate(histories):
        if isinstance(h, (str, os.PathLike)):
            names.append(os.path.basename(str(h)))
            h = read.read_history(h)
        else:
            names.append("run %d" % (i + 1))
            h = {k: np.asarray(h[k]) for k in h}
        tables.append(h)
    if labels is not None:
        names = list(labels)
    fig, axes = plt.subplots(len(y), 1, figsize=(7, 3 * len(y)),
                             squeeze=False, sharex=True)
    for ax, col in zip(axes[:, 0], y):
        for t, name in zip(tables, names):
            if col not in t or x not in t:
                raise ValueError("%s: no column %r (columns: %s)"
                                 % (name, col if col not in t else x,
                                    ", ".join(t)))
            xs = np.asarray(t[x], dtype=float)
            ys = np.asarray(t[col], dtype=float)
            keep = np.isfinite(ys) & (ys > 0 if logy else True)
            ax.plot(xs[keep], ys[keep], label=name)
        if logy:
            ax.set_yscale("log")
        ax.set_ylabel(col)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(x)
    axes[0, 0].legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if out is not None:
        fig.savefig(out)
    return fig
