"""aiarun's Python package: run a job and get its results back, read
what aiarun writes, plot it, and the Python side of the ``python``
problem plugin.

    import aiarun
    r = aiarun.run("job.yaml", np=5)            # mpirun -np 5 aiarun job.yaml
    r.summary["gap"], r.history, r.answers, r.x # dict, frames, NumPy
    h = aiarun.read_history("run.csv")          # dict of NumPy arrays
    df = aiarun.read_history("run.jsonl", frame=True)   # pandas
    it = aiarun.read_iterates("x.bin")          # it.x: (records, dim) memmap
    s = aiarun.read_summary("out.txt")          # {"stop": "iterations", ...}
    aiarun.plot(["a.csv", "b.csv"], out="loss.png")

NumPy is required; pandas only for ``frame=True`` (and the frames of
``run``), matplotlib only for ``plot``, tqdm only for ``run``'s progress
bar.  ``aiarun.bridge`` is what the plugin calls (see its
documentation for the class a job names).
"""

from .read import (Iterates, parse_summary, read_answers, read_final,
                   read_history, read_iterates, read_summary, read_table,
                   read_workers)
from .plot import plot
from .run import AiarunError, Result, run

__version__ = "0.1.0"

__all__ = ["AiarunError", "Iterates", "Result", "parse_summary", "plot", "read_answers", "read_final",
           "read_history", "read_iterates", "read_summary", "read_table",
           "read_workers", "run"]
