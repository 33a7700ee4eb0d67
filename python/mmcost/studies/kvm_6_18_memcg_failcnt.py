"""memory.failcnt of swap-out at a memcg limit, on this project's KVM guest (6.18): how the memcg is charged.

Mechanism: :func:`mmcost.swap.paths.memcg_charge_cycle` in
:class:`mmcost.swap.SwapModel`. At the limit ``try_charge_memcg`` first
tries to charge a whole MEMCG_CHARGE_BATCH (64 pages) for the per-CPU
stock; that attempt fails and counts in memory.failcnt for every charge
smaller than the batch, then the charge retries with its own size, and a
charge that still does not fit reclaims ``fault_reclaim_pages`` and
retries (a large folio that may not reclaim falls back to 4K). So the
counter grows about once per 4K page swapped, not once per reclaim, and
every charge at the limit reaches the shared page_counter lines.

Free: ``fault_reclaim_pages``, the pages one charge's reclaim leaves, fitted
to the one-process 16K and 64K runs' large-folio share only (the mTHP
counters anon_fault_alloc and anon_fault_fallback: a large fault succeeds
while it fits in what the last reclaim left). Held out: memory.failcnt per
page swapped out of every run (4K-2M, one and two writers), which no fit
saw, and the two-writer runs' large-folio share.
"""

from __future__ import annotations

import pandas as pd

from ..measure.verify import model_rows
from ..swap import SwapModel
from ._study import Section, Study, repetition_sd

FAILCNT = "memcg_failcnt_per_swapped_page"
SHARE = "large_fault_share_pct"


class Kvm618MemcgFailcnt(Study):
    id = "kvm_6_18_memcg_failcnt"
    miss = ("two writers: concurrent reclaims leave room for whole batches, so fewer charges fail (0.31-0.63 per "
            "page at 4K between repetitions) than one reclaimer's cycle, the model's, makes")
    mechanism = SwapModel
    free = ("fault_reclaim_pages",)

    def runs(self) -> pd.DataFrame:
        """Per run: memory.failcnt per page swapped out and the large-folio share (%), with the run's
        configuration (:func:`mmcost.measure.verify.model_rows`), the share left to the model's rule."""
        d = self.data()
        per_run = d.pivot_table(index="run", columns="metric", values="value", aggfunc="sum")
        cfg = model_rows(d).drop_duplicates("run").set_index("run")
        # (the run's machine columns are provenance, not model fields)
        keep = [c for c in cfg.columns if c not in ("metric", "value", "large_share", "unit", "cpu_model_name",
                                                    "hypervisor", "boot_id", "machine_profile")]
        rows = []
        for run, c in cfg[keep].iterrows():
            base = {**c.to_dict(), "run": run}
            rows.append({**base, "metric": FAILCNT, "unit": "1/page",
                         "value": per_run.loc[run, "memcg_failcnt_count"] / per_run.loc[run, "pswpout_count"]})
            if c["folio_kb"] != 4:
                rows.append({**base, "metric": SHARE, "unit": "%", "value": 100 * cfg.loc[run, "large_share"]})
        return pd.DataFrame(rows)

    def fit_rows(self) -> pd.DataFrame:
        r = self.runs()
        one = (r["processes"] == 1) & r["folio_kb"].isin([16, 64]) & (r["metric"] == SHARE)
        return r[one].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        r = self.runs()
        rows = r[(r["metric"] == FAILCNT) | (r["processes"] == 2)].reset_index(drop=True)
        pred = self.fit().predict(rows, level=self.level, n_samples=60, seed=7, fixed_priors=True)
        config = [f"{'failcnt' if m == FAILCNT else 'share'}, {kb}K, {p} proc, {run}" for m, kb, p, run in
                  zip(rows["metric"], rows["folio_kb"], rows["processes"], rows["run"])]
        sd = repetition_sd(r, ["metric", "folio_kb", "processes"], rows)
        return self._held_out_frame(rows, config, pred, stddev=sd)

    def figure(self):
        """memory.failcnt per swapped page against folio size, one writer and two: each run, the model
        and its 90% band, and the stock's one failure per reclaim for scale."""
        import numpy as np
        from matplotlib.figure import Figure

        held = self.held_out()
        held = held[held["metric"] == FAILCNT]
        parts = held["configuration"].str.split(", ")
        held = held.assign(size=parts.str[1].map({"4K": "4K", "16K": "16K", "64K": "64K", "2048K": "2M"}),
                           writers=parts.str[2].str[0].astype(int))
        sizes = ["4K", "16K", "64K", "2M"]
        fig = Figure(figsize=(7.2, 3.6), layout="constrained")
        axes = fig.subplots(1, 2, sharey=True)
        for ax, (writers, part) in zip(axes, held.groupby("writers")):
            x = np.array([sizes.index(v) for v in part["size"]], float)
            ax.plot(x, part["published"], "o", mfc="none", color="C0", label="measured (each run)")
            model = part.groupby("size", sort=False)[["predicted", "lo", "hi"]].mean()
            xm = np.array([sizes.index(v) for v in model.index], float) + 0.15
            err = [model["predicted"] - model["lo"], model["hi"] - model["predicted"]]
            ax.errorbar(xm, model["predicted"], yerr=err, fmt="_", ms=12, capsize=3, color="C1", label="model (90% band)")
            ax.axhline(1 / 32, color="0.5", ls=":", lw=1, label="one failure per 32-page reclaim")
            ax.set_xticks(range(len(sizes)), sizes)
            ax.set_xlabel("folio size")
            ax.set_title(f"{writers} writer{'s' if writers > 1 else ''} in a 256 MiB memcg (held out)", fontsize=9)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("memory.failcnt per page swapped out")
        axes[0].legend(fontsize=7, loc="upper right")
        fig.suptitle("memcg charges at the limit, 6.18 KVM guest (v1): every charge's batch attempt fails",
                     fontsize=10)
        return fig

    def sections(self) -> list[Section]:
        held = self.held_out()
        parts = held["configuration"].str.split(", ")
        held = held.assign(kb=parts.str[1], p=parts.str[2], size=parts.str[1].str.rstrip("K").astype(int))
        held = held.sort_values(["metric", "p", "size"], ascending=[True, True, True], kind="stable")
        lines = [f"{'held out (mean of 3 runs)':<30} {'measured':>9} {'model':>9} {'90% band':>18}"]
        for (metric, kb, p), part in held.groupby(["metric", "kb", "p"], sort=False):
            name = "failcnt/page" if metric == FAILCNT else "large share %"
            kb = {"2048K": "2M"}.get(kb, kb)
            lines.append(f"{name + ', ' + kb + ', ' + p:<30} {part['published'].mean():>9.3f} "
                         f"{part['predicted'].mean():>9.3f} [{part['lo'].mean():.3f}, {part['hi'].mean():.3f}]")
        lines.append("failcnt/page: memory.failcnt / pswpout (a charge per 64 pages: ~0.03)")
        return [Section.of_fit("memcg charge cycle (fault_reclaim_pages) fitted to the 1-process 16K and 64K "
                               "large-folio shares", self.fit()),
                Section("memory.failcnt per swapped page, and the 2-process shares, held out", "\n".join(lines),
                        self.figure(), "kvm_6_18_memcg_failcnt.png")]


study = Kvm618MemcgFailcnt()
