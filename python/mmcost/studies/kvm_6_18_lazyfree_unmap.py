"""Reclaim of lazyfree folios of 4K to 128K on this project's KVM guest (6.18): per-folio and per-PTE work.

Mechanism: :class:`mmcost.tlb.TlbModel`'s reclaimer
(:meth:`~mmcost.tlb.TlbResult.reclaimer_us_per_page`): per folio the
reclaim bookkeeping (``reclaim_folio_us``) and the iterations of
``try_to_unmap_one``'s loop (``unmap_iter_us``; one per PTE, or one for a
lazyfree large folio's batch from v6.15, commit 354dffd29575), per 4K page
its PTE and counters (``page_us``), and the batch's local flush (clean
PTEs: one per 32 folios; single-threaded, no IPI).

Fitted: ``reclaim_folio_us`` and ``page_us`` on the 4K and 64K runs only
(``unmap_iter_us`` stays at its prior: on this kernel it is paid once per
folio, with the folio's own work). Held out: 16K, 32K, 128K, 256K and 512K
(16K and 128K within 5%; 32K 30% low, 256K and 512K 2-2.5x high: a stated
miss, the per-page work is far smaller and the per-folio work grows with
the folio's order). Predicted,
with a band: the same runs on a kernel before the batching (v6.14), where
every PTE of a large folio is its own loop iteration.
"""

from __future__ import annotations

import pandas as pd

from ..tlb import TlbModel
from ._study import Section, Study, repetition_sd

FITTED_KB = (4, 64)


class Kvm618LazyfreeUnmap(Study):
    id = "kvm_6_18_lazyfree_unmap"
    miss = ('without its own fit the per-folio and per-page reclaim costs sit at their priors (1.0 and 0.2 us), '
            "3-5x dearer than this kernel's lazyfree path (0.79 and 0.078 us fitted here): the per-page/per-folio "
            'split of issue 35')
    mechanism = TlbModel
    free = ("reclaim_folio_us", "page_us")

    def rows(self) -> pd.DataFrame:
        """Per run, the call's time per 4K page (derived from the measured
        time and the pages), with the folio size as ``entries_per_folio``."""
        d = self.data()
        t = d[d["metric"] == "pageout_time_us"]
        pages = t["bytes_per_process"] / 4096
        keep = ["experiment", "variant", "cpus", "virtualized", "arch", "kernel", "run", "n_runs", "folio_kb"]
        out = t[keep].assign(metric="reclaim_us_per_page", unit="us", value=t["value"] / pages)
        out["entries_per_folio"] = (out["folio_kb"] // 4).astype(int)
        return out.reset_index(drop=True)

    def fit_rows(self) -> pd.DataFrame:
        r = self.rows()
        return r[r["folio_kb"].isin(FITTED_KB)].reset_index(drop=True)

    def _medians(self, rows: pd.DataFrame) -> pd.DataFrame:
        g = rows.groupby("folio_kb", sort=True)
        out = g.first().reset_index()
        out["value"] = g["value"].median().to_numpy()
        return out

    def held_out(self) -> pd.DataFrame:
        r = self.rows()
        runs = r[~r["folio_kb"].isin(FITTED_KB)]
        rows = self._medians(runs)
        pred = self.fit().predict(rows, level=self.level, n_samples=100, seed=4, fixed_priors=True)
        return self._held_out_frame(rows, [f"{int(kb)}K folios" for kb in rows["folio_kb"]], pred,
                                    stddev=repetition_sd(runs, ["folio_kb"], rows))

    def before_batching(self) -> pd.DataFrame:
        """Every size on a v6.14 kernel (no batched lazyfree unmap), best and
        90% band, next to the measured 6.18 medians."""
        rows = self._medians(self.rows()).assign(batched_lazyfree_unmap=False)
        pred = self.fit().predict(rows, level=0.9, n_samples=100, seed=5, fixed_priors=True)
        return pd.DataFrame({"folio_kb": rows["folio_kb"], "measured_6_18": rows["value"],
                             "best": pred["best"], "lo": pred["lo"], "hi": pred["hi"]})

    def sections(self) -> list[Section]:
        r = self.rows()
        med = self._medians(r)
        fit = self.fit()
        model = fit.model.evaluate(med)
        held = set(self.held_out()["configuration"])
        lines = [f"{'folios':<8} {'measured us/page':>17} {'model':>8}  {'':<9}"]
        for (kb, meas), pred in zip(med[["folio_kb", "value"]].itertuples(index=False), model):
            tag = "held out" if f"{int(kb)}K folios" in held else "fitted"
            lines.append(f"{int(kb):>5}K   {meas:>17.3f} {pred:>8.3f}  {tag}")
        before = self.before_batching()
        lines2 = [f"{'folios':<8} {'6.18 measured':>14} {'v6.14 predicted':>17}"]
        for x in before.itertuples():
            lines2.append(f"{int(x.folio_kb):>5}K   {x.measured_6_18:>14.3f} {x.best:>10.3f} "
                          f"[{x.lo:.3f}, {x.hi:.3f}]")
        return [Section("MADV_PAGEOUT of 64 MiB of lazyfree folios: time per 4K page (medians of 7)",
                        "\n".join(lines)),
                Section.of_fit("reclaim costs fitted to 4K and 64K folios", fit),
                Section("the same runs before batched lazyfree unmap (v6.14; best [90% band])", "\n".join(lines2))]


study = Kvm618LazyfreeUnmap()
