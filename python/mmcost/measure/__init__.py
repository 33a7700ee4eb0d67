"""Measure on your own kernel: ``mmcost measure swapout``, ``swapin``, ``machine``, ``verify`` and ``restore``.

:func:`swapout` runs the swap-out benchmark matrix with its counters
(:mod:`mmcost.measure.swapout_runs`), :func:`swapin` the same matrix writing
past a memcg's limit and timing the read-back (:mod:`mmcost.measure.swapin_runs`); every kernel setting it touches is recorded
and restored (:mod:`mmcost.measure.controls`), and written to a journal on disk
before it is changed (:mod:`mmcost.measure.journal`), so that :func:`restore`
(or the next run) puts back what a killed run left. :func:`verify` closes the
loop: fit the swap model to some configurations, predict the others with
bands, and compare with what was measured (:mod:`mmcost.measure.verify`);
:func:`read_runs` reads a runs CSV and refuses one cut short. :func:`machine`
measures this machine's per-primitive costs into a profile that a model takes
as its ``cpu_model`` (:mod:`mmcost.measure.profile`); both hold the machine
through :func:`mmcost.measure.session.holding`.
"""

from .controls import Machine, MeasureError, restore
from .profile import machine
from .swapin_runs import swapin
from .swapout_runs import RUN_COLUMNS, matrix, swapout
from .verify import read_runs, verify

__all__ = ["Machine", "MeasureError", "RUN_COLUMNS", "machine", "matrix", "read_runs", "restore", "swapin", "swapout", "verify"]
