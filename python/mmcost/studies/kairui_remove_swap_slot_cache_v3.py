"""Kairui Song's "mm, swap: remove swap slot cache" v3 (March 2025; merged for v6.15).

Mechanism: :class:`mmcost.swap.SwapModel` at its priors (nothing fitted,
no other source's costs: no seed ran x86 with PMEM swap on this kernel),
the two kernels as the ``slot_cache`` switch (the per-CPU swap slot cache of
v4.11-v6.14, removed by this series: 0ff67f990bd4 in
:mod:`mmcost.kernel`); 31 usemem processes writing 1 GiB each into a 12 GiB
memcg on 32 CPUs, PMEM swap, the per-cluster allocator of v6.14 on both.
The relative change is predicted and applied to the measured 'before'
throughput (a point prediction from the priors; the band is the point).

====================================  ====  =======================================
rows                                   n    how
====================================  ====  =======================================
usemem sequential 4K, before            1    fitted: the reference level
usemem sequential 4K, after             1    predicted (before x predicted change)
usemem random 4K and 64K (-R)           4    not expressible: random access order
                                             (refaults, swap-in) is not a
                                             SwapModel workload
make -j96 on tmpfs, sys time            4    not expressible: the build models
                                             (swap_alloc_lock) have no slot cache
====================================  ====  =======================================

Known miss: SwapModel prices losing the slot cache at -1.4% (each
allocation then takes its CPU's own cluster lock instead of one refill per
64 slots: its own work, no lines moved from another CPU,
``mmcost.swap.paths.slot_hold_us``; -8% while every hold was priced as a
contended one's); the measured change is +2.8%: the series' per-CPU
cluster (``si->percpu_cluster`` under a local lock) does less than the
cache's refill and free path, which the model does not itemise.
"""

from __future__ import annotations

import pandas as pd

from ..swap import SwapModel
from ._study import Section, Study

#: the usemem test's machine and workload, as SwapModel fields (from the rows and source.toml)
SETUP = {"kernel": "6.14", "swap_device": "pmem", "arch": "x86", "folio_kb": 4}


class KairuiRemoveSwapSlotCache(Study):
    id = "kairui_remove_swap_slot_cache_v3"
    miss = ("losing the slot cache costs -1.4% in the model (each allocation its CPU's own cluster lock, no lines "
            "moved) where +2.8% was measured: the cache's refill and free path, which the series' per-CPU cluster "
            "skips, is not itemised")
    mechanism = SwapModel
    free = ()
    NOT_EXPRESSIBLE = (
        ({"experiment": "usemem_random"},
         "usemem -R's random access order (refaults, swap-in) is not a SwapModel workload"),
        ({"experiment": "make_j96_tmpfs"}, "the build models (swap_alloc_lock) have no per-CPU slot cache"),
    )

    def model(self):
        # v6.15's 0ff67f990bd4 (the series) on the v6.14 it was posted against: the one switch it changes
        return SwapModel(**SETUP, variants={"before": {"kernel": "6.14"}, "after": {"kernel": "6.14+slot_cache=false"}})

    def sequential(self, variant: str) -> pd.DataFrame:
        df = self.data()
        return df[(df["experiment"] == "usemem_sequential") & (df["variant"] == variant)]

    def fitted_rows(self):
        return [(self.sequential("before"), "the reference level of the change")]

    def predicted_change_pct(self) -> float:
        r = self.sequential("after").iloc[0]
        rows = pd.DataFrame([{"metric": "usemem_throughput_kib_s_change_pct", "variant": "after",
                              "baseline": "before", "processes": int(r["processes"]), "cpus": int(r["cpus"]),
                              "memcg_mb": float(r["memcg_mb"]), "bytes_per_process": float(r["bytes_per_process"])}])
        return float(self.model().evaluate(rows)[0])

    def held_out(self) -> pd.DataFrame:
        after = self.sequential("after").reset_index(drop=True)
        before = float(self.sequential("before")["value"].iloc[0])
        best = before * (1 + self.predicted_change_pct() / 100)
        pred = pd.DataFrame({"best": [best], "lo": [best], "hi": [best]})
        return self._held_out_frame(after, ["usemem sequential 4K, after"], pred)

    def sections(self) -> list[Section]:
        df = self.data()
        lines = [f"{'test':<18} {'folio':>5} {'before':>12} {'after':>12} {'change':>7}  sd before/after"]
        for (exp, kb), part in df.groupby(["experiment", "folio_kb"], sort=False):
            b = part[part["variant"] == "before"].iloc[0]
            a = part[part["variant"] == "after"].iloc[0]
            lines.append(f"{exp[:18]:<18} {int(kb):>4}K {b['value']:>12.0f} {a['value']:>12.0f} "
                         f"{100 * (a['value'] / b['value'] - 1):>+6.1f}%  {b['stddev']:.0f}/{a['stddev']:.0f}")
        held = self.held_out().iloc[0]
        lines.append(f"predicted (sequential 4K): change {self.predicted_change_pct():+.1f}%, after "
                     f"{held['predicted']:.0f} KiB/s")
        return [Section("usemem (KiB/s total) and make -j96 (sys s), slot cache on/off", "\n".join(lines))]


study = KairuiRemoveSwapSlotCache()
