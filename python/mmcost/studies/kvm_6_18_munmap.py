"""munmap of memory swapped out to zram, 1, 2 and 4 processes at once, on this project's KVM guest (6.18).

Mechanism: the exit-time free path of :class:`mmcost.swap.SwapModel`
(:meth:`~mmcost.swap.SwapModel.exit_system`): per swap entry the zap and
free work, the cluster's swap_map, and ``zs_free`` under its size class's
lock, plus the shared lines (the zsmalloc pool lock's reader count, zram's
stats, ``nr_swap_pages``) that move between CPUs once several free at once.
Every page is swapped (``swapped_share = 1``; MADV_PAGEOUT reclaims in the
calling task, so no kswapd).

Free: the per-page free work, fitted to the one-process runs only (the bands
vary every fixed cost within its prior too). The moved
lines keep their prior, derived from the base kernel of Wenchao Hao's x86
runs of the same experiment. Held out: 2 and 4 processes (4 time-share the
2 vCPUs). A second fit frees the moved lines on the 2-process runs too and
predicts 4.
"""

from __future__ import annotations

import warnings

import pandas as pd

from ..fit import NotIdentifiableWarning
from ..swap import SwapModel
from ._study import Section, Study, repetition_sd


class Kvm618Munmap(Study):
    id = "kvm_6_18_munmap"
    miss = ("the exit path's swap-entry free is 0.1 us at its prior against 0.34 fitted here (zap_pte_range -> "
            'free_swap_and_cache_nr on 6.18); no other source measures it')
    mechanism = SwapModel
    free = ("swap_free_us_per_page",)

    def model(self):
        return super().model().set(memcg_mb=None)  # no memcg: MADV_PAGEOUT needs none

    def rows(self) -> pd.DataFrame:
        d = self.data()
        return d[d["metric"] == "munmap_time_ms"].reset_index(drop=True)

    def fit_rows(self) -> pd.DataFrame:
        r = self.rows()
        return r[r["processes"] == 1].reset_index(drop=True)

    def lines_fit(self):
        """The second fit: the per-page work and the moved lines, to 1 and 2 processes."""
        r = self.rows()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            return self.model().fit(r[r["processes"] <= 2].reset_index(drop=True),
                                    free=["swap_free_us_per_page", "free_line_us"])

    def _predicted(self, fit, rows: pd.DataFrame) -> pd.DataFrame:
        pred = fit.predict(rows, level=self.level, n_samples=100, seed=5, fixed_priors=True)
        return self._held_out_frame(rows, [f"{int(p)} proc" for p in rows["processes"]], pred,
                                    stddev=repetition_sd(rows, ["metric", "processes"]))

    def held_out(self) -> pd.DataFrame:
        r = self.rows()
        return self._predicted(self.fit(), r[r["processes"] > 1].reset_index(drop=True))

    def _summary(self, held: pd.DataFrame) -> str:
        g = held.groupby("configuration", sort=False)
        lines = [f"{'munmap of 256 MiB each':<24} {'measured':>9} {'model':>8} {'90% band':>18}"]
        for name, part in g:
            lines.append(f"{name:<24} {part['published'].median():>7.1f}ms {part['predicted'].median():>6.1f}ms "
                         f"[{part['lo'].median():6.1f}, {part['hi'].median():6.1f}]")
        return "\n".join(lines)

    def sections(self) -> list[Section]:
        r = self.rows()
        held = self.held_out()
        second = self.lines_fit()
        four = self._predicted(second, r[r["processes"] == 4].reset_index(drop=True))
        return [Section.of_fit("free path fitted to 1 process (moved lines at their x86 prior)", self.fit()),
                Section("2 and 4 processes predicted (medians of 5 runs)", self._summary(held)),
                Section.of_fit("moved lines fitted to 1 and 2 processes", second),
                Section("4 processes predicted by that fit", self._summary(four))]


study = Kvm618Munmap()
