"""Seed 000: usemem swap-out of 4K, 64K and 2M folios on Ampere Altra, three kernels.

Mechanism: :class:`mmcost.swap.SwapModel` with the source's defaults
(``[model]`` in source.toml: Altra, 80 cores, ``kernel = "6.6+anon_mthp"``)
and one kernel per variant, the patch naming the switch it changes
(``"6.6+anon_mthp+swap_whole_mthp"``: the baseline splits 64K folios before
swap-out, patch 2 swaps them out whole). The rows carry the
rest (70 processes, 1 GiB each, 40 GiB memcg, brd, arm64).

The table holds changes against the 4K baseline, so only cost ratios matter.
Free: the split cost per subpage, the broadcast TLBI's slot at the DVM
station, the per-folio reclaim cost, the si->lock hold per allocation, the
memcg page-counter hold and the LRU lock's hold per list operation; all six
land within about one prior width (the LRU hold at 0.019 us, 1.0 below its
0.05 prior). The LRU hold is free because the reclaim engine makes the
lruvec lock the 4K baseline's bound: 70 writers in one memcg on one node
share one lruvec, which each swapped 4K folio holds for three list
operations on the reclaim side (isolated twice, put back once) and, through
the fault's ``lru_add`` batch, 1/s = 2.3 more (s = 0.43 swapped), with the
lines moved per acquisition; at the 0.05 us prior that caps 4K at about
453k KiB/s a process, where 2M (DRAM-bound) comes out +174%. The per-page
reclaim cost stays at its prior: these rows move it exactly as they move
the per-folio one (the fit's NotIdentifiableWarning when both are freed).
The other costs stay at their priors and vary in the bands; the DSB's round
trip is Barry Song's (:func:`mmcost.cpu_models._dsb_cycles`). Held out: each
cell predicted by a fit to the other eight: median 2.2 points, max 9.1 (the
4K swap-file-small-thp cell, +9.1% for a patch that changes nothing a 4K
folio does; 26.1 for whole 64K folios before the reference check's TLBIs).

What ranks whole 64K folios below 2M (+30.6% vs +56-60%) is arm64's
reference check (:func:`mmcost.swap.paths.young_flush`): a 64K folio's 16
young PTEs are 16 more broadcast TLBIs, a PMD-mapped 2M THP's young bit one
synchronous flush, so whole 64K folios send the DVM station two TLBIs a page
(as many as 4K) and 2M one; 64K runs at the station's capacity, 2M at DRAM's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import plot, report
from ..swap import SwapModel
from ._study import Section, Study

LABELS = {4: "4K Page", 64: "64K THP", 2048: "2M THP"}


class SmallThpSwapout(Study):
    id = "small_thp_swapout"
    mechanism = SwapModel
    free = ("split_locked_us_per_page", "tlbi_us", "reclaim_us_per_folio", "slot_hold_us_per_acquisition", "memcg_charge_hold_us",
            "lru_hold_us_per_folio")
    # from tlbi_us's prior (0.1 us) every cell is bound at the DVM station, where no other free cost moves a
    # prediction, and least squares stays there (chi2 722, 2M +99%); from 0.07 it reaches chi2 27.8
    start = {"tlbi_us": 0.07}
    miss = ("predicted from the other sources, the LRU lock's hold per list operation is its 0.05 us prior (0.019 in "
            "this source's fit): the lruvec lock that 70 writers in one memcg share, 3 reclaim list operations and "
            "2.3 lru_add ones a swapped 4K folio, bounds the 4K baseline, so the large folios' gains come out too "
            "large (2M +133% for +54-60%)")

    def fit_rows(self) -> pd.DataFrame:
        """The 3 x 3 table, with each change's standard error computed from the
        two configurations' published relative standard deviations (5 runs
        each): sd(change) = (1 + change) sqrt(r_self^2 + r_ref^2) / sqrt(n), in points."""
        df = self.data()
        d = df[df["metric"] == "usemem_throughput_kib_s_change_pct"].copy()
        ref = d[(d["variant"] == d["baseline"]) & (d["folio_kb"] == d["baseline_folio_kb"])]
        r_ref = float(ref["stddev_pct"].iloc[0]) / 100
        r_self = d["stddev_pct"].astype(float) / 100
        d["stddev"] = (100 + d["value"].astype(float)) * np.sqrt(r_self**2 + r_ref**2) / np.sqrt(d["n_runs"].astype(float))
        return d.reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        rows, pred = self._leave_one_out()
        config = [f"{LABELS.get(int(r.folio_kb), r.folio_kb)}, {r.variant}" for r in rows.itertuples()]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        df = self.data()
        mean = report.markdown_table(df, row="folio_kb", column="variant", fmt="{:.1f}%", row_labels=LABELS,
                                     corner="alloc size")
        rsd = report.markdown_table(df, row="folio_kb", column="variant", value="stddev_pct", fmt="{:.1f}%",
                                    row_labels=LABELS, corner="alloc size")
        fig = plot.before_after(df, "usemem_throughput_kib_s_change_pct", list(dict.fromkeys(df["variant"])),
                                by="folio_kb", ylabel="usemem throughput change vs 4K baseline [%]",
                                title="usemem, 70 processes, Ampere Altra (arm64), brd swap, v6.6-rc4 + anonfolio")
        fit = self.fit()
        res = fit.residuals
        fitted = report.markdown_table(res, row="folio_kb", column="variant", value="measured", fmt="{:.1f}%",
                                       row_labels=LABELS, corner="alloc size", model=res.assign(best=res["predicted"]))
        held = self.held_out()
        err = held["error"].abs()
        loo = self.fit_rows().assign(best=held["predicted"].to_numpy())
        held_text = report.markdown_table(loo, row="folio_kb", column="variant", value="value", fmt="{:.1f}%",
                                          row_labels=LABELS, corner="alloc size", model=loo)
        held_text += (f"\nleave-one-out error over the 9 cells: median {err.median():.1f} points, "
                      f"max {err.max():.1f} points")
        band = plot.scaling(fit, "folio_kb", "usemem_throughput_kib_s_change_pct",
                            xs=[4, 16, 32, 64, 128, 256, 512, 2048], logx=True, fixed_priors=True, n_samples=60,
                            configs={"variant": "swap-file-small-thp", "baseline": "baseline", "baseline_folio_kb": 4,
                                     "processes": 70, "memcg_mb": 40 * 1024, "swap_device": "brd", "arch": "arm64"},
                            ylabel="usemem throughput change vs 4K baseline [%]",
                            title="swap-file-small-thp by folio size: 70 processes, arm64, brd swap, v6.6-rc4")
        return [Section("usemem throughput vs 4K/baseline (mean of 5)", mean, fig, "small_thp_swapout_change.png"),
                Section("standard deviation as % of mean", rsd),
                Section.of_fit("swap model (mmcost.swap.SwapModel), fit", fit),
                Section("swap model: measured (model), change vs 4K/baseline", fitted),
                Section("swap model: measured (each cell predicted by a fit to the other eight)", held_text, band,
                        "small_thp_swapout_folio_sizes.png")]


study = SmallThpSwapout()
