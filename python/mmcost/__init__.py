"""mmcost: mechanism-level cost models of Linux memory management.

TLB flush batching, lock contention and swap throughput, solved analytically
and by simulation, fitted to published before/after measurements.

Submodules: :mod:`mmcost.queueing` (analytic solvers), :mod:`mmcost.datasets`
(the bundled measurements).
"""

from importlib.metadata import PackageNotFoundError, version

from . import datasets, metrics, parse, queueing

try:
    __version__ = version("mmcost")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"

__all__ = ["datasets", "metrics", "parse", "queueing", "__version__"]
