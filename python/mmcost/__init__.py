"""mmcost: mechanism-level cost models of Linux memory management.

TLB flush batching, lock contention and swap throughput, solved analytically
and by simulation, fitted to published before/after measurements.

The mechanisms are models: :class:`mmcost.swap.SwapModel`,
:class:`mmcost.tlb.TlbModel` and :class:`mmcost.locks.LockSystem` fit a
user's tidy frame directly (``SwapModel().fit(df)``), every field a fitted
parameter, a fixed one with a prior, or a configuration column.
:mod:`mmcost.kernel` catalogues the kernel changes they switch on,
:mod:`mmcost.cpu_models` the CPU presets; :mod:`mmcost.queueing` holds the
analytic solvers, :mod:`mmcost.datasets` the bundled measurements and
``mmcost.studies`` one study per bundled source.
"""

import importlib
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mmcost")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"

__all__ = ["cpu_models", "datasets", "kernel", "locks", "metrics", "parse", "queueing", "swap", "tlb", "__version__"]
_SUBMODULES = frozenset(__all__) - {"__version__"} | {"fit", "model", "mechanism", "plot", "report", "studies",
                                                      "sweep", "usl", "measure"}


def __getattr__(name: str):
    # submodules load when first used (PEP 562): ``import mmcost`` stays quick, and
    # ``mmcost.swap`` works without its own import statement
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mmcost' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
