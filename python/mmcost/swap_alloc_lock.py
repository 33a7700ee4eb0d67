"""Seed 003's mechanism: the global swap allocator lock vs per-cluster locks.

Before Kairui Song's series ("mm, swap: rework of swap allocator locks",
2024), every swap slot allocation and free in ``mm/swapfile.c``
(``scan_swap_map_slots``, ``swap_entry_free`` ...) took the global
``si->lock``; after it, slots come from per-CPU clusters under per-cluster
locks (``cluster_move``, ``cluster_isolate_lock`` in the after-series
``perf lock contention`` rows), and ``si->lock`` is nearly never contended.

Model: ``make -jN`` keeps N CPUs busy (the published user + sys + N x real
accounting closes to 99.2%, see the notebook). Per swapped page a CPU works
outside the lock (user compile time and the rest of the kernel: reclaim, zram
compression, faults) and holds the allocator lock. The totals over the build
are the parameters: ``user_cpu_s``, ``sys_other_cpu_s`` and ``lock_hold_cpu_s``.
Before: one queued spinlock shared by the N CPUs (exact MVA per page; the
build's page count cancels out); the time spent spinning is system time. After:
the same holds under per-cluster locks, uncontended. So

    before: sys = S + H + W(N),  real = (U + S + H + W(N)) / N
    after:  sys = S + H,         real = (U + S + H) / N

with W(N) the total spin time from MVA. ``hold_us`` (one acquisition) only
converts totals into per-acquisition numbers for a ``perf lock contention``
table; the sys/real data cannot identify it, so it is fixed at a prior whose
source is the after-series rows (avg wait 2.25-2.74 us, max 3.95-4.58 us).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from .locks import Critical, Dist, Lock, LockSystem, Work
from .mechanism import Mechanism, Quantity, Result, knob
from .model import Prior

PAGES = 1.0e6  # any page count: the results do not depend on it (homogeneity)


@dataclass(frozen=True)
class SwapAllocLockModel(Mechanism):
    """A build on ``processes`` busy job slots; ``swap_alloc_lock`` (a kernel
    switch: ``si_lock`` before v6.14, ``per_cluster`` after) says whether the
    allocator's holds queue at one global lock. ``variants``: the seed's
    before/after kernels, the after one as a patch on v6.12 (:mod:`mmcost.kernel`):
    a row's ``kernel`` column sets the switch, as for every mechanism."""

    processes: int = knob(96, unit="count", doc="make -jN job slots, each keeping a CPU busy")
    user_cpu_s: float = knob(8000.0, unit="s", upper=1e7, doc="user CPU time of the whole build")
    sys_other_cpu_s: float = knob(30000.0, unit="s", upper=1e7, doc="kernel CPU time outside the allocator lock")
    lock_hold_cpu_s: float = knob(800.0, unit="s", lower=1e-3, upper=1e7,
                                  doc="total allocator-lock hold time of the build")
    hold_us: float = knob(2.5, unit="us", lower=0.05, upper=100.0,
                          prior=Prior(2.5, 1.5, "seed 003 after-series perf lock contention rows: avg wait 2.25-2.74 "
                                                "us, max 3.95-4.58 us (an uncontended per-cluster lock's wait is about "
                                                "a residual hold)"),
                          doc="one allocator-lock hold; only scales per-acquisition outputs")
    kernel: str = knob("6.12", doc="selects swap_alloc_lock when it is None")
    swap_alloc_lock: str | None = knob(None, kind="str", kernel=True, choices=("si_lock", "per_cluster"),
                                       doc="the global si->lock (before v6.14) or per-cluster locks")
    name: str = field(default="swap_alloc_lock", kw_only=True)
    variants: dict = field(default_factory=lambda: {"before": {},  # v6.12: the global si->lock
                                                    "after": {"kernel": "6.12+swap_alloc_lock=per_cluster"}},
                           kw_only=True)

    FREE: ClassVar = ("user_cpu_s", "sys_other_cpu_s", "lock_hold_cpu_s")
    METRICS: ClassVar = ("sys_time_s", "real_time_s")

    def check(self) -> None:
        from . import _validate as v

        v.count("processes", self.processes)

    def spin(self, n: int, p) -> dict:
        """Totals over the build with the global lock and n CPUs (MVA)."""
        return global_lock(n, p["lock_hold_cpu_s"], p["user_cpu_s"] + p["sys_other_cpu_s"])

    def totals(self, n: int, variant: str, p) -> dict:
        """sys and real time of the build on ``n`` job slots under ``variant``, at parameters ``p``."""
        cfg = self.set(**{k: val for k, val in p.items() if k in self.leaves}).configure(variant=variant, processes=n)
        r = cfg.solve()
        return dict(sys_time_s=r["sys_time_s"], real_time_s=r["real_time_s"])

    def solve(self) -> Result:
        p = self.values()
        n = self.processes
        base = p["sys_other_cpu_s"] + p["lock_hold_cpu_s"]
        if self.switch("swap_alloc_lock") == "si_lock":
            s = self.spin(n, p)
            sys_s, real_s = base + s["wait_total_s"], s["real_s"]
        else:  # per-cluster locks: the same holds, uncontended
            s = {}
            sys_s, real_s = base, (p["user_cpu_s"] + base) / n
        qs = (Quantity("sys_time_s", sys_s, "s", sys_s, sys_s), Quantity("real_time_s", real_s, "s", real_s, real_s))
        return Result(qs, "analytic", 1.0, bool(self.fitted_on), f"make -j{n}, {self.switch('swap_alloc_lock')}",
                      details=s)

    def metric_value(self, result: Result, metric: str, rows: pd.DataFrame) -> np.ndarray:
        return np.full(len(rows), result[metric])

    def contention_table(self, n: int, p=None) -> pd.DataFrame:
        """A ``perf lock contention``-style row for si->lock over the whole build, before the series:
        ``avg_wait_us`` as perf computes it, total wait / contended acquisitions
        (tools/perf/builtin-lock.c); ``wait_per_acquisition_us`` over all acquisitions."""
        p = {**self.values(), **(p or {})}
        s = self.spin(n, p)
        acquisitions = p["lock_hold_cpu_s"] / (p["hold_us"] * 1e-6)
        contended = acquisitions * s["busy_seen"]
        return pd.DataFrame([dict(
            threads=n, acquisitions=acquisitions, contended=contended, total_wait_s=s["wait_total_s"],
            avg_wait_us=s["wait_total_s"] / contended * 1e6 if contended > 0 else 0.0,
            wait_per_acquisition_us=s["wait_total_s"] / acquisitions * 1e6,
            lock_utilization=s["utilization"], type="spinlock", caller="si->lock (global)")])


def global_lock(n: int, hold_s: float, other_s: float, solver: str = "analytic", **simulate_kwargs) -> dict:
    """n job slots sharing one queued spinlock over a whole build.

    ``hold_s``: the lock's total hold time per build; ``other_s``: every other
    second of job-slot time (work and idle). The build is cut into cycles of
    one exponential hold and one exponential stretch of other work
    (:data:`PAGES` cycles; the count cancels out), and
    :class:`mmcost.locks.LockSystem` solves it by exact
    MVA (``solver="analytic"``) or its DES (``"simulated"``, keyword arguments
    go to :meth:`~mmcost.locks.LockSystem.simulate`; adds ``real_s_ci99``).
    Returns the build's total spin time ``wait_total_s``, its wall time
    ``real_s``, the lock's utilisation, the share of acquisitions that find it
    held (``busy_seen``) and the mean number of CPUs spinning (``spinning``)."""
    if solver not in ("analytic", "simulated"):
        raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
    hold_s, other_s = float(hold_s), float(other_s)
    if not (hold_s > 0 and other_s > 0 and math.isfinite(hold_s) and math.isfinite(other_s)):
        raise ValueError(f"hold_s and other_s must be finite and > 0, got {hold_s!r}, {other_s!r}")
    us = 1e6 / PAGES  # seconds per build -> microseconds per cycle
    system = LockSystem(int(n), (Lock("si_lock"),), (Work(Dist.exponential(other_s * us)),
                                                     Critical("si_lock", "si_lock", Dist.exponential(hold_s * us))))
    res = system.analytic() if solver == "analytic" else system.simulate(**simulate_kwargs)
    rate = res.throughput_per_s  # cycles per second
    real = PAGES / rate
    lock = res.lock_values["si_lock"]
    spinning = lock["wait_total_us_per_s"] / 1e6  # CPU-us spun per us
    out = dict(wait_total_s=spinning * real, real_s=real, utilization=float(lock["utilization"]),
               busy_seen=float(lock["contended_pct"]) / 100, spinning=float(spinning))
    if solver == "simulated":
        out["real_s_ci99"] = real * res.system_values["throughput_per_s_ci99"] / rate
    return out
