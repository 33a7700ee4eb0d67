"""Seed 004's mechanism: the swap cache's radix-tree lock, taken at four call sites.

In v4.8-era reclaim every anonymous page swapped out takes the swap cache
``address_space->tree_lock`` (irq-disabled) in
``__add_to_swap_cache`` (mm/swap_state.c, insert), ``__test_set_page_writeback``
(mm/page-writeback.c, set PAGECACHE_TAG_WRITEBACK), ``test_clear_page_writeback``
(clear it at I/O completion; PMEM completes inside ``pmem_rw_page``) and
``__remove_mapping`` (mm/vmscan.c, delete). Huang Ying's patch (AS_NO_WRITEBACK_TAGS,
"mm: Don't use radix tree writeback tags for pages in swap cache", 2016)
stops the two writeback-tag sites from taking the lock. Kernel variants are
therefore mechanism switches, not parameters: ``writeback_tags`` on or off.

Model: the P processes are the CPUs of a :class:`~mmcost.locks.LockSystem`
whose operation (one page swapped out) is ``work_us`` outside the lock plus
one critical section per call site, each holding the queued spinlock for
``hold_us`` (the four sites do comparable radix-tree walks and tag updates;
the published before-patch shares 10.86/10.82/10.36/10.52% agree within their
±11-13% stddev, so one hold time is all the data can identify). Predicted:
``swapout_kib_s`` = pages/s x 4 KiB and each site's ``cycles_share_pct`` =
spin time at that site / (P x time), i.e. shares of the P busy CPUs' cycles
(LKP's perf-profile is system-wide; idle CPUs add few cycles).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from .locks import Critical, Dist, Lock, LockSystem, Work
from .model import Model, Parameter

#: call sites in path order, and whether the writeback-tag patch removes them
SITES = (
    ("__add_to_swap_cache", False),
    ("__test_set_page_writeback", True),
    ("test_clear_page_writeback", True),
    ("__remove_mapping", False),
)
PAGE_KIB = 4


def site_of(call_site: str) -> str:
    """'_raw_spin_lock_irq.__add_to_swap_cache.add_to_swap_cache...' -> '__add_to_swap_cache'."""
    parts = str(call_site).split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class SwapCacheLockModel(Model):
    """``variants`` maps each variant name to ``writeback_tags`` (True: the
    two tag sites take the lock)."""

    name: str = "swap_cache_tree_lock"
    variants: dict = field(default_factory=lambda: {"base": True, "base+patch": False})
    solver: str = "analytic"

    PARAMETERS: ClassVar = (
        Parameter("work_us", 5.0, "us", 0.01, 1000.0, doc="per-page time outside the tree lock (fault, reclaim, unmap, PMEM copy)"),
        Parameter("hold_us", 0.5, "us", 0.001, 100.0, doc="tree_lock hold per call site, handoff included"),
    )
    METRICS: ClassVar = ("swapout_kib_s", "cycles_share_pct")

    def system(self, processes: int, writeback_tags: bool, p) -> LockSystem:
        hold = Dist.exponential(p["hold_us"])
        stages = [Work(Dist.exponential(p["work_us"]))]
        # all four sites use spin_lock_irq/_irqsave: irq-disabled sections
        stages += [Critical("tree_lock", site, hold, irq_disabled=True) for site, tag in SITES if writeback_tags or not tag]
        return LockSystem(int(processes), (Lock("tree_lock"),), tuple(stages))

    def _solve(self, processes, variant, p):
        if variant not in self.variants:
            raise ValueError(f"{self.name}: unknown variant {variant!r}; known: {list(self.variants)}")
        s = self.system(processes, self.variants[variant], p)
        return s.analytic() if self.solver == "analytic" else s.simulate(progress=False, replications=4, ops=50_000)

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        out = np.empty(len(rows))
        cache = {}
        for i, (_, r) in enumerate(rows.iterrows()):
            key = (int(r["processes"]), r["variant"])
            if key not in cache:
                cache[key] = self._solve(*key, p)
            res = cache[key]
            if metric == "swapout_kib_s":
                out[i] = res.system["throughput_per_s"] * PAGE_KIB
            else:
                site = site_of(r["call_site"])
                out[i] = res.sites.loc[site, "spin_share_pct"] if site in res.sites.index else 0.0
        return out
