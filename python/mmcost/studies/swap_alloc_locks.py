"""Seed 003: make -j96 in a memcg on ZRAM, the global si->lock before Kairui Song's series and after.

Mechanism: :class:`mmcost.swap_alloc_lock.SwapAllocLockModel`: the build's
CPU time outside the allocator lock and its total hold under the global
``si->lock`` (one queued lock shared by the 96 jobs, exact MVA) before, and
uncontended per-cluster locks after; the two kernels are the mechanism's
``swap_alloc_lock`` switch (v6.14's per-cluster allocator). Fitted per folio size (4K, 64K) to the
two kernels' sys and real times. Held out: each of the four numbers of a
folio size predicted by a fit to the other three.
"""

from __future__ import annotations

import warnings

import pandas as pd

from .. import plot, report
from ..fit import NotIdentifiableWarning
from ..swap_alloc_lock import SwapAllocLockModel
from ._study import Section, Study


class SwapAllocLocks(Study):
    id = "swap_alloc_locks"
    mechanism = SwapAllocLockModel
    free = ("user_cpu_s", "sys_other_cpu_s", "lock_hold_cpu_s")

    def model(self):
        return SwapAllocLockModel()

    def builds(self) -> pd.DataFrame:
        df = self.data()
        part = df[df["experiment"] == "make_j96"]
        return part[part["metric"].isin(SwapAllocLockModel.METRICS)].reset_index(drop=True)

    def fit_rows(self, folio_kb: int = 4) -> pd.DataFrame:
        b = self.builds()
        return b[b["folio_kb"] == folio_kb].reset_index(drop=True)

    def fit_of(self, folio_kb: int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            return self.model().fit(self.fit_rows(folio_kb))

    def held_out(self) -> pd.DataFrame:
        parts = []
        for kb in sorted(self.builds()["folio_kb"].unique()):
            fit = self.fit_of(int(kb))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotIdentifiableWarning)
                loo = fit.loo()
            config = [f"{kb}K, {v}" for v in loo["variant"]]
            pred = pd.DataFrame({"best": loo["predicted"], "lo": loo["predicted"], "hi": loo["predicted"]})
            parts.append(self._held_out_frame(loo.assign(value=loo["measured"]), config, pred))
        return pd.concat(parts, ignore_index=True)

    def sections(self) -> list[Section]:
        df = self.data()
        out = []
        for kb, part in df[df["experiment"] == "make_j96"].groupby("folio_kb"):
            rows = report.compare(part, "before", "after")
            out.append(Section(f"time make -j96, {kb}K folios, 10G ZRAM", report.lkp_block(rows, "before", "after")))
        out[-1].figure = plot.before_after(df[df["experiment"] == "make_j96"], "sys_time_s", ["before", "after"],
                                           by="folio_kb", title="make -j96, 10G ZRAM, 2 x Xeon 8255C (VM): global "
                                                                "si->lock (before) vs the series (after)")
        out[-1].figure_name = "swap_alloc_locks_sys_time.png"
        sb = report.compare(df[df["experiment"] == "sysbench_mysql"], "before", "after")
        out.append(Section("sysbench mysql, 96 workers, 1G memcg, ZRAM", report.lkp_block(sb, "before", "after")))
        held = self.held_out()
        for kb in sorted(self.builds()["folio_kb"].unique()):
            fit = self.fit_of(int(kb))
            res = fit.residuals
            h = held[held["configuration"].str.startswith(f"{kb}K")]
            lines = [f"{'variant':<8} {'metric':<12} {'measured':>10} {'fitted':>10} {'left out':>10}"]
            for (_, r), p in zip(res.iterrows(), h["predicted"]):
                lines.append(f"{r['variant']:<8} {r['metric']:<12} {r['measured']:>10.2f} {r['predicted']:>10.2f} "
                             f"{p:>10.2f}")
            lines.append("left out: predicted by a fit to the other three numbers")
            out.append(Section.of_fit(f"global si->lock model (mmcost.swap_alloc_lock), make -j96, {kb}K", fit,
                                      "\n".join(lines)))
        return out


study = SwapAllocLocks()
