"""Seed 000's mechanism: usemem swap-out of 4K, 64K and 2M folios on Ampere Altra, three kernels.

70 usemem processes (one per core) each write 1 GiB into a 40 GiB memcg with a
35 GiB brd swap device (v6.6-rc4 + anonfolio). Kernel variants are mechanism
switches of :class:`mmcost.swap.SwapModel`, not parameters:

- ``baseline``: a large folio below PMD size cannot enter the swap cache whole
  (``add_to_swap`` -> ``folio_alloc_swap`` handles only PMD-size THP), so
  ``shrink_folio_list`` splits it: ``split_small_thp = True``;
- ``remove-huge-flag`` (patch 1): drops ``SWP_HUGE``-style special casing,
  same mechanisms as baseline;
- ``swap-file-small-thp`` (patch 2): allocates contiguous swap slots for any
  large folio and swaps it out whole: ``split_small_thp = False``.

The published numbers are changes of the mean usemem throughput against the
4K baseline, so only cost *ratios* matter: the per-page memory costs (zeroing,
brd copy) set the scale from Altra's memory bandwidth, and the per-folio
reclaim cost, the lruvec-lock hold and the split cost are fitted; the
remaining per-operation costs carry priors and vary in the bands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from .model import Model, Parameter, Prior, config_value
from .swap import SwapCosts, SwapDevice, SwapModel, large_fault_share
from .tlb import TlbCosts

MEMCG_MB = 40 * 1024  # seed 000's memcg limit (40G read as GiB)
_ALTRA_BW = ("Ampere Altra Q80: 8 channels of DDR4-3200 = 204.8 GB/s shared by the 70 writing cores, "
             "about 2.9 GB/s each")
_TLB = "mmcost.tlb.TlbCosts priors (Arm Neoverse N1; commit 43b3dfdd0455)"


@dataclass(frozen=True)
class SmallThpSwapoutModel(Model):
    """``variants`` maps each kernel to ``split_small_thp``."""

    name: str = "small_thp_swapout"
    variants: dict = field(default_factory=lambda: {"baseline": True, "remove-huge-flag": True,
                                                    "swap-file-small-thp": False})
    #: True: every fault gets its folio size (MADV_HUGEPAGE or defrag=always). False: for 256K and larger,
    #: faults after the memcg first reached its limit fall back to 4K (mmcost.swap.large_fault_share)
    madvise: bool = True

    PARAMETERS: ClassVar = (
        Parameter("reclaim_us", 3.0, "us", 0.01, 1000.0, free=False,
                  prior=Prior(3.0, 1.5, "shrink_folio_list per folio without I/O (folio_referenced + try_to_unmap rmap "
                                        "walks, add_to_swap, __remove_mapping, free): a few us"),
                  doc="per folio reclaimed: isolation bookkeeping, rmap walk, free"),
        Parameter("lru_hold_us", 0.1, "us", 0.0, 100.0, free=False,
                  prior=Prior(0.1, 0.05, "isolate_lru_folios / move_folios_to_lru: list and counter updates, "
                                         "~0.1 us per folio under the lruvec lock"),
                  doc="per folio under the memcg lruvec lock"),
        Parameter("split_us_per_page", 0.5, "us", 0.0, 100.0,
                  prior=Prior(0.5, 0.25, "__split_huge_page_tail per subpage: flags, refcount, mapping and LRU "
                                         "link of one struct page, a few hundred ns"),
                  doc="per subpage of a split folio, under the lruvec lock"),
        Parameter("fault_us", 1.5, "us", 0.05, 50.0, free=False,
                  prior=Prior(1.5, 0.75, "will-it-scale page_fault1: one anonymous fault (entry, allocation, charge) "
                                         "costs 1-2 us on a server core")),
        Parameter("zero_us_per_page", 1.4, "us", 0.05, 50.0, prior=Prior(1.4, 0.7, "clear_page of 4 KiB at " + _ALTRA_BW),
                  doc="clear_page of 4 KiB; brd's memcpy moves twice the bytes (read + write): 2x this"),
        Parameter("pte_us", 0.05, "us", 0.0, 5.0, free=False,
                  prior=Prior(0.05, 0.03, "one PTE update plus its rmap/counter work: tens of ns")),
        Parameter("swapcache_us", 0.5, "us", 0.0, 20.0, free=False,
                  prior=Prior(0.5, 0.25, "seed 004 fit (mmcost.swap_cache_lock): swap-cache insert/delete hold ~0.5 us")),
        Parameter("slot_hold_us", 2.5, "us", 0.0, 50.0, free=False,
                  prior=Prior(2.5, 1.5, "seed 003 perf lock contention on si->lock (avg wait 2.25-2.74 us, "
                                        "mmcost.swap_alloc_lock's hold prior): one allocation scan")),
        Parameter("tlbi_us", 0.1, "us", 0.0, 100.0, doc="one broadcast TLBI at the interconnect's DVM node"),
        Parameter("zram_compress_us_per_page", 6.0, "us", 0.1, 100.0, free=False,
                  prior=Prior(6.0, 3.0, "lzo-rle/lz4 compress 0.5-1.5 GB/s per core (lzbench); zram's default "
                                        "lzo-rle: ~3-8 us per 4 KiB page"),
                  doc="zram only (predictions): compression per 4 KiB page"),
        Parameter("dsb_us", 1.0, "us", 0.05, 20.0, free=False, prior=Prior(1.0, 0.5, _TLB)),
    )
    METRICS: ClassVar = ("usemem_throughput_kib_s", "swapout_kib_s")

    def swap_model(self, p: dict | None = None, *, variant: str = "baseline", folio_kb: int = 4,
                   processes: int = 70, device: str = "brd", large_share: float = 1.0,
                   memcg_mb: float | None = None, slot_lock_partitions: int = 1) -> SwapModel:
        """The :class:`~mmcost.swap.SwapModel` of one configuration at parameters
        ``p``; ``device``: ``brd`` (seed 000) or ``zram`` (the compressed copy is
        stored with the same memcpy; compression adds its own cost)."""
        p = {**self.values(), **(p or {})}
        if variant not in self.variants:
            raise ValueError(f"{self.name}: unknown variant {variant!r}; known: {list(self.variants)}")
        costs = SwapCosts(fault_us=p["fault_us"], zero_us_per_page=p["zero_us_per_page"], pte_us=p["pte_us"],
                          reclaim_us=p["reclaim_us"], lru_hold_us=p["lru_hold_us"], slot_hold_us=p["slot_hold_us"],
                          swapcache_us=p["swapcache_us"], split_us_per_page=p["split_us_per_page"])
        memcg = memcg_mb or MEMCG_MB
        if not self.madvise and folio_kb >= 256:
            large_share = large_fault_share(int(folio_kb), memcg, processes * 1024.0, madvise=False)
        if device not in ("brd", "zram"):
            raise ValueError(f"swap_device must be 'brd' or 'zram' for this model, got {device!r}")
        dev = SwapDevice(device, copy_us_per_page=2 * p["zero_us_per_page"],
                         compress_us_per_page=p["zram_compress_us_per_page"] if device == "zram" else 0.0)
        return SwapModel(processes=int(processes), bytes_per_process=2**30, memcg_mb=memcg, folio_kb=int(folio_kb),
                         large_share=large_share, split_small_thp=self.variants[variant], device=dev, arch="arm64",
                         slot_lock_partitions=int(slot_lock_partitions),
                         costs=costs, tlb_costs=TlbCosts(tlbi_us=p["tlbi_us"], dsb_us=p["dsb_us"]))

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        out = np.empty(len(rows))
        cache = {}
        for i, (_, r) in enumerate(rows.iterrows()):
            key = (r["variant"], int(r["folio_kb"]), int(config_value(r, "processes", 70)),
                   str(config_value(r, "swap_device", "brd")), float(config_value(r, "memcg_mb", MEMCG_MB)),
                   int(config_value(r, "slot_lock_partitions", 1)))
            if key not in cache:
                cache[key] = self.swap_model(p, variant=key[0], folio_kb=key[1], processes=key[2], device=key[3],
                                             memcg_mb=key[4], slot_lock_partitions=key[5]).solve()
            out[i] = cache[key][metric]
        return out


def fit_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The 3 x 3 table, with each change's standard error computed from the two
    configurations' published relative standard deviations (5 runs each):
    sd(change) = (1 + change) sqrt(r_self^2 + r_ref^2) / sqrt(n), in points."""
    d = df[df["metric"] == "usemem_throughput_kib_s_change_pct"].copy()
    ref = d[(d["variant"] == d["baseline"]) & (d["folio_kb"] == d["baseline_folio_kb"])]
    r_ref = float(ref["stddev_pct"].iloc[0]) / 100
    r_self = d["stddev_pct"].astype(float) / 100
    d["stddev"] = (100 + d["value"].astype(float)) * np.sqrt(r_self**2 + r_ref**2) / np.sqrt(d["n_runs"].astype(float))
    return d.reset_index(drop=True)
