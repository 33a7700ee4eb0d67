"""Two writers in one memcg or each in its own, on this project's KVM guest (6.18): whose pages a reclaimer unmaps.

Mechanism: :class:`mmcost.swap.SwapModel`. Memcg reclaim scans only its own
memcg's LRU: two processes sharing a memcg unmap each other's pages, and
each such flush IPIs the other process's CPU (``try_to_unmap_flush_dirty``
before ``pageout()``, to the owner mm's cpumask); in memcgs of their own
they unmap only their own, flushed locally. The rows carry the layout
(``memcgs``, ``memcg_mb`` per memcg).

Nothing is fitted here: the costs are the ``kvm_6_18_swapout`` study's fit
(one process, one 256 MiB memcg, lzo-rle, on the same guest), so every row
is held out: the shootdowns per swapped page and the per-process throughput
of both layouts.
"""

from __future__ import annotations

import pandas as pd

from . import get
from ._study import Section, Study, repetition_sd


class Kvm618Memcgs(Study):
    id = "kvm_6_18_memcgs"
    mechanism = type(get("kvm_6_18_swapout").model())
    level = 0.9

    def rows(self) -> pd.DataFrame:
        return self.data().reset_index(drop=True)

    def fit_rows(self) -> pd.DataFrame:
        return get("kvm_6_18_swapout").fit_rows()

    def fit(self):
        return get("kvm_6_18_swapout").fit()

    def held_out(self) -> pd.DataFrame:
        rows = self.rows()
        pred = self.fit().predict(rows, level=self.level, n_samples=60, seed=7, fixed_priors=True)
        sd = repetition_sd(rows, ["metric", "variant"])
        return self._held_out_frame(rows, [f"{v}, {r}" for v, r in zip(rows["variant"], rows["run"])], pred, stddev=sd)

    def summary(self) -> str:
        held = self.held_out()
        held["layout"] = held["configuration"].str.split(",").str[0]
        lines = [f"{'two writers, 768 MiB each':<40} {'measured':>10} {'model':>10}"]
        for (metric, layout), part in held.groupby(["metric", "layout"], sort=False):
            name = {"tlb_shootdowns_per_swapped_page": "shootdowns per swapped page",
                    "usemem_throughput_kib_s": "usemem KiB/s per process"}[metric]
            fmt = "{:>10.3f}" if "shootdowns" in metric else "{:>10.0f}"
            lines.append(f"{name + ', ' + layout:<40} " + fmt.format(part["published"].median()) + " "
                         + fmt.format(part["predicted"].median()))
        lines.append("medians of 5 runs; costs fitted on kvm_6_18_swapout's one-process corner")
        return "\n".join(lines)

    def sections(self) -> list[Section]:
        return [Section("one memcg or two: predicted with kvm_6_18_swapout's fit", self.summary())]


study = Kvm618Memcgs()
