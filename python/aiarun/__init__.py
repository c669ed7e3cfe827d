"""aiarun: the Python side of aiarun.

``aiarun.bridge`` is what the ``python`` problem plugin calls: a job's
class gets a :class:`aiarun.bridge.Context` and NumPy views of aiarun's
buffers.
"""

__version__ = "0.1.0"
