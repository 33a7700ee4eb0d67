"""Measure on your own kernel: ``mmcost measure swapout`` and ``mmcost measure verify``.

:func:`swapout` runs the swap-out benchmark matrix with its counters
(:mod:`mmcost.measure.swapout_runs`); every kernel setting it touches is recorded
and restored (:mod:`mmcost.measure.machine`). :func:`verify` closes the
loop: fit the swap model to some configurations, predict the others with
bands, and compare with what was measured (:mod:`mmcost.measure.verify`).
"""

from .machine import Machine, MeasureError
from .swapout_runs import matrix, swapout
from .verify import verify

__all__ = ["Machine", "MeasureError", "matrix", "swapout", "verify"]
