"""Ryan Roberts' "Swap-out mTHP without splitting" v5: seed 000's table on an 8-vCPU Altra VM.

Mechanism: :class:`mmcost.swap.SwapModel`, with nothing fitted here: the
costs are seed 000's fit (:mod:`.small_thp_swapout`: split cost per subpage,
broadcast TLBI, per-folio reclaim, ``si->lock`` hold) and every other field
at its prior, and the rows carry this machine (8 vCPUs, a KVM guest on
Ampere Altra, v6.9-rc1, 70 usemem processes x 1 GiB in a 40 GiB memcg, brd).
The two kernels are the ``swap_whole_mthp`` switch (the series: a large
folio gets contiguous slots and is swapped out whole, merged in v6.10).

Held out: every cell but the reference, predicted from seed 000's fit.

=====================================  ====  =========================================
rows                                    n    how
=====================================  ====  =========================================
4K, baseline (0% by definition)          1   fitted: the reference of every change
64K and 2M baseline, all of the series   5   predicted from seed 000's fit
not expressible                          0
=====================================  ====  =========================================

Known miss: with 70 writers on 8 CPUs the lock stations that hold 4K back
on seed 000's 80 cores (``si->lock``, the DVM node, the lruvec lock) are
barely contended, so the predicted gains are the per-page CPU cost ratios:
2M is predicted about +167% where +91% was measured, and whole 64K folios
about +108% for +46% (v4: +118% for +44%). What a guest adds to the 4K path (stage-2 faults on
brd's and the fault path's fresh pages, vCPU preemption of lock holders)
is not modelled; the thread does not say how the 8 vCPUs are placed.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import plot, report
from ..fit import FitResult
from ..swap import SwapModel
from ._study import Section, Study
from . import small_thp_swapout

LABELS = small_thp_swapout.LABELS
METRIC = "usemem_throughput_kib_s_change_pct"


class RobertsMthpSwapoutV5(Study):
    id = "roberts_mthp_swapout_v5"
    miss = ('70 writers on 8 vCPUs: lock holders preempted in a guest are not modelled, so the 4K baseline is too '
            'fast and the gains too large')
    mechanism = SwapModel
    free = ()
    #: the series' variant in measurements.csv
    series = "swap-out-mthp-v5"

    def fit(self) -> FitResult:
        """Seed 000's fit, its variants renamed to this source's (nothing is fitted to this source)."""
        if self._fit is None:
            seed = small_thp_swapout.study.fit()
            (kernel,) = self.data()["kernel"].unique()  # the series is its rows' kernel with the patch on top
            variants = {"baseline": {"kernel": kernel}, self.series: {"kernel": f"{kernel}+swap_whole_mthp"}}
            self._fit = replace(seed, model=replace(seed.model, variants=variants))
        return self._fit

    def reference(self) -> pd.DataFrame:
        df = self.data()
        return df[(df["variant"] == df["baseline"]) & (df["folio_kb"] == df["baseline_folio_kb"])]

    def fitted_rows(self):
        return [(self.reference(), "the reference of every change (0% by definition)")]

    def held_out(self) -> pd.DataFrame:
        df = self.data()
        rows = df.drop(index=self.reference().index).reset_index(drop=True)
        # (the variant names the kernel and its patch: the rows' kernel column would undo the patch)
        pred = self.fit().predict(rows.drop(columns="kernel"), level=self.level, n_samples=60, seed=5,
                                  fixed_priors=True)
        config = [f"{LABELS.get(int(r.folio_kb), r.folio_kb)}, {r.variant}" for r in rows.itertuples()]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        df = self.data()
        table = report.markdown_table(df, row="folio_kb", column="variant", fmt="{:.1f}%", row_labels=LABELS,
                                      corner="alloc size")
        held = self.held_out()
        lines = [f"{'cell':<28} {'published':>9} {'predicted':>9} {'90% band':>16}"]
        for r in held.itertuples():
            lines.append(f"{r.configuration[:28]:<28} {r.published:>+8.1f}% {r.predicted:>+8.1f}% "
                         f"[{r.lo:+.0f}, {r.hi:+.0f}]")
        lines.append("costs: seed 000's fit (small_thp_swapout); 8 vCPUs, KVM guest")
        fig = plot.before_after(df, METRIC, list(dict.fromkeys(df["variant"])), by="folio_kb",
                                ylabel="usemem throughput change vs 4K baseline [%]",
                                title=f"usemem, 70 processes, 8-vCPU Altra VM, brd swap: {self.series}")
        return [Section("usemem throughput vs 4K/baseline (mean of 6)", table, fig, f"{self.id}_change.png"),
                Section("swap model with seed 000's costs: each cell predicted", "\n".join(lines))]


study = RobertsMthpSwapoutV5()
