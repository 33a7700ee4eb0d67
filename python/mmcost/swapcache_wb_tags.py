"""Seed 004 on the whole swap-out path: vm-scalability swap-w-seq, v4.8, writeback tags on or off.

:mod:`mmcost.swap_cache_lock` models only the swap cache's tree lock and
over-predicts the patch's gain (+63% for a published +22.3%). Here the same
measurements drive :class:`mmcost.swap.SwapModel` configured as v4.8 was:

- the swap cache is one radix tree per swap device, its ``tree_lock`` taken
  with interrupts off at ``__add_to_swap_cache`` and ``__remove_mapping`` and,
  with writeback tags, at ``__test_set_page_writeback`` and
  ``test_clear_page_writeback`` (Huang Ying's patch removes these two);
- there is no per-CPU swap slot cache yet (it arrived in v4.11, commit
  67afa38e0): every page takes ``si->lock`` in ``get_swap_page`` ->
  ``scan_swap_map``, a second shared station the lock-only model lacks;
- the 8 processes are single-threaded, so reclaim's TLB flush is local (x86,
  no IPI); PMEM is written by the CPU (``pmem_rw_page``, a memcpy).

Fitted to the base kernel only (throughput, swap-out rate and the four call
sites' cycle shares), then the patched kernel is predicted by switching
``writeback_tags`` off. The swapped share of the bytes written is taken from
the base kernel's own swap-out / throughput ratio (no memcg: the test fills RAM
and part of swap).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from .model import Model, Parameter, Prior, config_value
from .swap import SwapCosts, SwapDevice, SwapModel
from .swap_cache_lock import site_of
from .tlb import TlbCosts

PROCESSES = 8
_HASWELL_BW = ("Xeon E5 v3: ~60 GB/s per socket shared by the writers, a few GB/s per core: "
               "clear_page of 4 KiB in ~0.5-1 us")


@dataclass(frozen=True)
class SwapWSeqModel(Model):
    """``variants`` maps each kernel to ``writeback_tags``; ``swapped_share``
    is the share of written bytes that are swapped out (from the data)."""

    name: str = "swap_w_seq"
    variants: dict = field(default_factory=lambda: {"base": True, "base+patch": False})
    swapped_share: float = 0.5

    PARAMETERS: ClassVar = (
        Parameter("reclaim_us", 3.0, "us", 0.01, 1000.0, doc="per page reclaimed, outside any lock"),
        Parameter("swapcache_hold_us", 0.5, "us", 0.001, 100.0,
                  doc="tree_lock hold at each call site (the four published shares agree within their noise)"),
        Parameter("slot_hold_us", 0.5, "us", 0.0, 50.0, free=False,
                  prior=Prior(0.5, 0.25, "scan_swap_map for one slot under si->lock (v4.8, one page per "
                                         "acquisition): the order of one radix-tree update; si->lock contention is "
                                         "what the v4.11 slot cache (commit 67afa38e0) removed"),
                  doc="si->lock per page (no slot cache in v4.8)"),
        Parameter("fault_us", 1.0, "us", 0.05, 50.0, free=False,
                  prior=Prior(1.0, 0.5, "will-it-scale page_fault1 on Haswell-EP: ~1 us per anonymous fault")),
        Parameter("zero_us_per_page", 0.7, "us", 0.05, 20.0, free=False, prior=Prior(0.7, 0.35, _HASWELL_BW)),
        Parameter("lru_hold_us", 0.1, "us", 0.0, 100.0, free=False,
                  prior=Prior(0.1, 0.05, "isolate_lru_pages / putback: list and counter updates per page")),
    )
    METRICS: ClassVar = ("swapout_kib_s", "vm_scalability_throughput_kib_s", "cycles_share_pct")

    def swap_model(self, p: dict | None = None, *, variant: str = "base", processes: int = PROCESSES) -> SwapModel:
        p = {**self.values(), **(p or {})}
        if variant not in self.variants:
            raise ValueError(f"{self.name}: unknown variant {variant!r}; known: {list(self.variants)}")
        costs = SwapCosts(fault_us=p["fault_us"], zero_us_per_page=p["zero_us_per_page"], pte_us=0.05,
                          reclaim_us=p["reclaim_us"], lru_hold_us=p["lru_hold_us"], slot_hold_us=p["slot_hold_us"],
                          swapcache_us=2 * p["swapcache_hold_us"], tag_hold_us=p["swapcache_hold_us"])
        written = float(2**30)
        memcg_mb = processes * written * (1 - self.swapped_share) / 2**20  # reproduces the swapped share
        return SwapModel(processes=int(processes), bytes_per_process=written, memcg_mb=memcg_mb, folio_kb=4,
                         split_small_thp=True, slot_cache=False, swapcache_lock_partitions=1,
                         writeback_tags=self.variants[variant],
                         device=SwapDevice("pmem", copy_us_per_page=2 * p["zero_us_per_page"]), arch="x86",
                         costs=costs, tlb_costs=TlbCosts())

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        out = np.empty(len(rows))
        cache = {}
        for i, (_, r) in enumerate(rows.iterrows()):
            key = (r["variant"], int(config_value(r, "processes", PROCESSES)))
            if key not in cache:
                cache[key] = self.swap_model(p, variant=key[0], processes=key[1]).solve()
            res = cache[key]
            if metric == "swapout_kib_s":
                out[i] = res["swapout_kib_s"]
            elif metric == "vm_scalability_throughput_kib_s":
                out[i] = res["swapout_kib_s"] / self.swapped_share
            else:
                sites = res["result"].sites
                site = site_of(r["call_site"])
                out[i] = sites.loc[site, "spin_share_pct"] if site in sites.index else 0.0
        return out


def swapped_share(df: pd.DataFrame, variant: str = "base") -> float:
    """Swap-out rate / write throughput of one kernel: the share of written bytes swapped."""
    part = df[(df["experiment"] == "vm_scalability_swap_w_seq") & (df["variant"] == variant)].set_index("metric")["value"]
    return float(part["swapout_kib_s"]) / float(part["vm_scalability_throughput_kib_s"])
