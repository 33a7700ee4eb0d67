"""Argument checks for the public API.

Every check names the argument it rejects, so a notebook user sees
``ValueError: demands[2] must be finite and >= 0, got nan`` rather than a crash
or a silent NaN. TypeError for the wrong kind of object, ValueError for a value
outside the domain.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers

import numpy as np

#: set while a lane model (mmcost.lanes) is checked: scalar() then takes an
#: array of lanes and checks each; anywhere else an array is a TypeError
_LANES = contextvars.ContextVar("mmcost_checking_lanes", default=False)


@contextlib.contextmanager
def checking_lanes():
    """Within: :func:`scalar` checks each lane of an array (a lane model's
    ``check()``), naming the first lane that fails."""
    token = _LANES.set(True)
    try:
        yield
    finally:
        _LANES.reset(token)


def float_array(name: str, value, *, positive: bool = False, allow_empty: bool = False) -> np.ndarray:
    """A 1-D float64 array of finite values >= 0 (or > 0 with ``positive``)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a sequence of numbers, got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.number)):
        raise TypeError(f"{name} must contain numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got complex values")
    arr = np.atleast_1d(arr.astype(np.float64))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else (arr < 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        rule = "> 0" if positive else ">= 0"
        raise ValueError(f"{name}[{i}] must be finite and {rule}, got {arr[i]}")
    return arr


def scalar(name: str, value, *, positive: bool = False) -> float:
    """A finite real number >= 0 (or > 0 with ``positive``)."""
    t = type(value)
    if t is not float and t is not int:  # the common cases skip the abstract-class checks
        if t is np.ndarray and _LANES.get():
            bad = ~np.isfinite(value) | ((value <= 0) if positive else (value < 0))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, got {value[i]} "
                                 f"(lane {i})")
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, got {v}")
    return v


def bounded(name: str, value, lower: float, upper: float) -> None:
    """A finite value in ``[lower, upper]`` (each lane of an array while a
    lane model is checked), else a ValueError naming ``name``: a field's
    own bounds, checked before anything is derived from it."""
    rule = f">= {lower:g}" if upper == math.inf else f"in [{lower:g}, {upper:g}]"
    if isinstance(value, np.ndarray):
        bad = ~np.isfinite(value) | (value < lower) | (value > upper)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} must be finite and {rule}, got {value[i]} (lane {i})")
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and lower <= v <= upper):
        raise ValueError(f"{name} must be finite and {rule}, got {v}")


def fields_in_bounds(model) -> None:
    """Every float field of a mechanism (:mod:`mmcost.mechanism`; nested
    ones too) finite and within its own bounds (``knob(lower=, upper=)``),
    where it is set: what a model checks first, so that no field reaches a
    formula outside them and an error names the field the user set, not
    one derived from it (``memcg_mb=-inf`` said "think_time must be
    finite")."""
    leaves = model.leaves
    getters = leaves.getters
    for name in leaves.lane_leaves[0]:
        value = getters[name](model)
        if value is not None:
            lf = leaves[name]
            if len(lf.path) > 1:  # as the user wrote it (costs.irq_us, streams[0].entries), and its column
                where = "".join(f".{key}" if kind == "attr" else f"[{key}]" for kind, key in lf.path)[1:]
                name = f"{where} (column {name})"
            bounded(name, value, lf.knob.lower, lf.knob.upper)


def count(name: str, value, *, minimum: int = 1) -> int:
    """An integer >= minimum; floats are accepted only when integral (8.0)."""
    if type(value) is int:
        v = value
    elif isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    elif isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        v = int(value)
    else:
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def count_array(name: str, value, *, minimum: int = 1) -> np.ndarray:
    """A 1-D int64 array of integers >= minimum."""
    arr = float_array(name, value)
    if not np.all(arr == np.floor(arr)):
        i = int(np.flatnonzero(arr != np.floor(arr))[0])
        raise ValueError(f"{name}[{i}] must be an integer, got {arr[i]}")
    if (arr < minimum).any():
        i = int(np.flatnonzero(arr < minimum)[0])
        raise ValueError(f"{name}[{i}] must be >= {minimum}, got {arr[i]:g}")
    return arr.astype(np.int64)


def same_length(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {a.size} and {b.size}")


#: Documented size limits, checked before anything is allocated (README, "Limits").
#: MVA populations solved (each needs O(K) work; the table O(N K) memory)
MAX_POPULATION = 10_000_000
#: cells of a per-population MVA table (population x stations): 400 MB of float64
MAX_TABLE_CELLS = 50_000_000
#: states of a birth-death chain
MAX_CHAIN_STATES = 100_000_000
#: stations of an MVA network solved as a table (four DataFrame columns each: 10^6 took 70 s)
MAX_TABLE_STATIONS = 10_000
#: measured points of a USL fit (each evaluated hundreds of times)
MAX_FIT_POINTS = 1_000_000
#: replications of one simulation (each keeps its counters until the summary)
MAX_REPLICATIONS = 1_000_000
#: expected units of work (events; a TLB call's folios and PTEs) of one simulated replication: about
#: 3 s of one core (the TLB DES does ~4e7 a second: a call of 2^26 PTE flushes, 14 calls a replication,
#: took 25 s each), so a run of eight replications is refused before it takes minutes
MAX_EVENTS = 100_000_000
#: CPUs of a machine (and tasks on a CPU each): CONFIG_NR_CPUS is at most 8192 (x86-64 MAXSMP;
#: arm64 allows 4096); a lock network's population is at most this
MAX_CPUS = 8192
#: tasks: PID_MAX_LIMIT on 64-bit kernels (include/linux/threads.h, 4 * 1024 * 1024)
MAX_TASKS = 4 * 1024 * 1024
#: stations of one lock network (a partitioned lock is one station per partition; each is
#: a list entry per solve and a column of the MVA)
MAX_STATIONS = 100_000
#: population x stations of one lock network: the MVA's work per solve (the C++ core does
#: ~1e9 per second; a solve with fixed points does ten or more)
MAX_NETWORK_CELLS = 200_000_000


def at_most(name: str, value: float, limit: float, what: str = "") -> None:
    """Refuse ``value`` above ``limit`` (or NaN), naming both (and what it would cost)."""
    if not value <= limit:
        extra = f" ({what})" if what else ""
        raise ValueError(f"{name} = {value:.4g} is above the limit of {limit:.4g}{extra}")
