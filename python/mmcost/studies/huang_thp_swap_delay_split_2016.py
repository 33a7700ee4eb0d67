"""Huang Ying's "THP swap: Delay splitting THP during swapping out" (RFC, August 2016).

Mechanism: :class:`mmcost.swap.SwapModel` with seed 004's fit
(:mod:`.swapcache_wb_tags`: per-folio reclaim, swap cache and writeback-tag
holds, same author, benchmark and machine class), nothing fitted here: the
base kernel of vm-scalability swap-w-seq with 16 processes writing 2M THPs
to PMEM, on the v4.8-era mmotm the series is based on (a THP is split
before ``add_to_swap``; radix-tree writeback tags still on). The swapped
share is the base kernel's swap-out / throughput ratio, as in seed 004.

What is missing: the series itself. It allocates a swap cluster for the
whole THP and adds it to the swap cache whole, then splits it
(38d8b4e6bdc8, v4.13); SwapModel has the split before ``add_to_swap``
(to v4.12) and the whole swap-out (``swap_whole_pmd_thp``, v4.14), not this
step between them, and adding it is a new path, not a knob.

=======================================  ====  ========================================
rows                                      n    how
=======================================  ====  ========================================
base swap-out rate (vmstat.swap.so)        1   fitted: the swapped share's input
base throughput, __add_to_swap_cache       2   predicted from seed 004's fit
  spinlock share
base elapsed time                          1   not expressible: the bytes written
                                               (RAM and swap size) are not stated
base SwapCached, IPC                       2   not expressible: no such output
base+patchset (6 values, 6 changes)       12   not expressible: delay-split path
=======================================  ====  ========================================

Known misses: the base throughput is predicted about 17% high (within its
90% band's edge) and the ``__add_to_swap_cache`` spinning share at about
17% for 9.8% (16 writers on one tree lock, seed 004's holds).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import report
from ..fit import FitResult
from ..swap import SwapModel, site_of
from ._study import Section, Study
from . import swapcache_wb_tags

_DELAY_SPLIT = ("the series' path: a THP added to the swap cache whole, split after (38d8b4e6bdc8, v4.13); "
                "SwapModel has split-before (to v4.12) and whole swap-out (v4.14), not this step")
_NO_OUTPUT = "no such output: SwapModel predicts no IPC, cache-miss rate or SwapCached size"
_NO_SIZE = "the bytes written are not stated (swap-w-seq fills RAM and part of swap; memory size unknown)"
_CHILDREN = ("a perf children share of the whole add_to_swap call chain: SwapModel's cycles_share_pct is the "
             "spinlock slow path of one call site")


class HuangThpSwapDelaySplit2016(Study):
    id = "huang_thp_swap_delay_split_2016"
    miss = ("predicted with seed 004's costs: the v4.8 base is too fast by the same missing v4.7-era reclaim path "
            '(issue 35)')
    mechanism = SwapModel
    free = ()
    #: the kernel the series is based on (mmcost.kernel selects the switches)
    kernel = "4.8"
    NOT_EXPRESSIBLE = (
        ({"variant": "base+patchset"}, _DELAY_SPLIT),
        ({"variant": "base", "metric": ("instructions_per_cycle", "swap_cached_kib", "cache_miss_rate_pct")},
         _NO_OUTPUT),
        ({"variant": "base", "metric": "real_time_s"}, _NO_SIZE),
        ({"variant": "base", "metric": "cycles_share_pct", "call_site": "add_to_swap.shrink_page_list"}, _CHILDREN),
    )

    def base(self) -> pd.DataFrame:
        df = self.data()
        return df[(df["variant"] == "base") & df["metric"].isin(SwapModel.METRICS)].reset_index(drop=True)

    def swapped_share(self) -> float:
        v = self.base().set_index("metric")["value"]
        return float(v["swapout_kib_s"]) / float(v["vm_scalability_throughput_kib_s"])

    def fit(self) -> FitResult:
        """Seed 004's fit on this source's kernel and swapped share (nothing is fitted to this source)."""
        if self._fit is None:
            seed = swapcache_wb_tags.study.fit()
            model = replace(seed.model.set(kernel=self.kernel, swapped_share=self.swapped_share()),
                            variants={"base": {}})
            self._fit = replace(seed, model=model)
        return self._fit

    def fitted_rows(self):
        b = self.base()
        return [(b[b["metric"] == "swapout_kib_s"], "the swapped share's input (swap-out / throughput)")]

    def predicted_rows(self) -> pd.DataFrame:
        b = self.base()
        keep = b["metric"].isin(["vm_scalability_throughput_kib_s"]) | (
            (b["metric"] == "cycles_share_pct") & ~b["call_site"].astype(str).str.startswith("add_to_swap."))
        return b[keep].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        rows = self.predicted_rows()
        pred = self.fit().predict(rows, level=self.level, n_samples=60, seed=6, fixed_priors=True)
        config = ["base" + (f", {site_of(c)}" if isinstance(c, str) else "") for c in rows["call_site"]]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        lkp = self.data()
        rows = report.compare(lkp, "base", "base+patchset")
        held = self.held_out()
        lines = [f"{'held out: base kernel':<34} {'published':>11} {'model':>11} {'90% band':>20}"]
        for r in held.itertuples():
            what = r.metric.replace("vm_scalability_throughput_kib_s", "throughput KiB/s").replace(
                "cycles_share_pct", "spinning % " + r.configuration.removeprefix("base, "))
            lines.append(f"{what[:34]:<34} {r.published:>11.4g} {r.predicted:>11.4g} [{r.lo:.3g}, {r.hi:.3g}]")
        lines.append(f"seed 004's costs (swapcache_wb_tags), kernel {self.kernel}, PMEM")
        lines.append("the patched kernel is not expressible (delay-split path missing)")
        return [Section(f"vm-scalability swap-w-seq, THP, PMEM swap ({self.id})",
                        report.lkp_block(rows, "base", "base+patchset")),
                Section("swap model with seed 004's costs: the base kernel predicted", "\n".join(lines))]


study = HuangThpSwapDelaySplit2016()
