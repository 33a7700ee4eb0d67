"""This project's own measurement: usemem-style swap-out on a 2-vCPU KVM guest, Linux 6.18, zram.

Mechanism: :class:`mmcost.swap.SwapModel` with the source's defaults
(``[model]``: generic x86 costs, KVM guest, 2 vCPUs, v6.18, lzo-rle); the
rows carry the rest (1 or 2 processes of 768 MiB, a 256 MiB memcg, 4K-2M
folios) and each run's measured large-folio share (its mTHP counters).

Free: the per-folio reclaim cost and one core's write bandwidth, fitted to
the one-process runs only. Held out: every two-process run (two mms sharing
one memcg's LRU, reclaiming each other's pages on 2 vCPUs) and the TLB
shootdowns per swapped page, which no run was fitted to.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..swap import SwapModel, mthp_inputs
from ._study import Section, Study


class Kvm618Usemem(Study):
    id = "kvm_6_18_usemem"
    mechanism = SwapModel
    free = ("reclaim_us", "core_write_gb_s")

    def runs(self) -> pd.DataFrame:
        """Per-process throughput rows with each run's large_share (mTHP counters)."""
        df = self.data()
        rows = df[df["metric"] == "usemem_throughput_kib_s"].copy()
        share = {}
        for run, part in df.groupby("run"):
            kb = int(part["folio_kb"].iloc[0])
            stats = part[part["metric"].isin(["fault_alloc_count", "fault_fallback_count"])]
            share[run] = mthp_inputs(stats, kb)["large_share"] if kb != 4 and len(stats) == 2 else 1.0
        rows["large_share"] = rows["run"].map(share).astype(float)
        return rows.reset_index(drop=True)

    def shootdowns(self) -> pd.DataFrame:
        """TLB shootdowns (all CPUs) per page swapped out, per run: /proc/interrupts over pswpout."""
        df = self.data()
        out = []
        for run, part in df.groupby("run", sort=False):
            tlb = part.loc[part["metric"] == "tlb_shootdowns", "value"].sum()
            pages = part.loc[part["source_name"] == "pswpout", "value"].sum()
            first = part.iloc[0]
            out.append(dict(metric="tlb_shootdowns_per_swapped_page", value=tlb / pages, run=run,
                            folio_kb=int(first["folio_kb"]), processes=int(first["processes"]), cpus=2,
                            memcg_mb=256, bytes_per_process=int(first["bytes_per_process"]), swap_device="zram",
                            virtualized=True, arch="x86"))
        rows = pd.DataFrame(out)
        return rows.merge(self.runs()[["run", "large_share"]].drop_duplicates(), on="run")

    def fit_rows(self) -> pd.DataFrame:
        r = self.runs()
        return r[r["processes"] == 1].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        r = self.runs()
        two = r[r["processes"] == 2]
        two = two.groupby("run", as_index=False).agg(
            {**{c: "first" for c in two.columns if c not in ("value", "run")}, "value": "mean"})
        rows = pd.concat([two, self.shootdowns()], ignore_index=True)
        pred = self.fit().predict(rows, interval=self.level, n_samples=60, seed=7, fixed_priors=True)
        config = [f"{m.split('_')[0]}, {kb}K, {p} proc, {run}" for m, kb, p, run in
                  zip(rows["metric"], rows["folio_kb"], rows["processes"], rows["run"])]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        fit = self.fit()
        held = self.held_out()
        r = self.runs()
        lines = [f"{'folio':>6} {'procs':>5} {'runs':>4} {'KiB/s per process':>18} {'large share':>11}"]
        for (kb, p), part in r.groupby(["folio_kb", "processes"]):
            per_run = part.groupby("run")["value"].mean()
            lines.append(f"{kb:>5}K {p:>5} {len(per_run):>4} {per_run.mean():>10.0f} ± {per_run.std():<6.0f} "
                         f"{part['large_share'].mean():>11.2f}")
        h = ["held out (fit to the 1-process runs only)", f"{'':<34} {'published':>10} {'model':>10} {'90% band':>20}"]
        for (metric, kb, p), part in held.assign(kb=held["configuration"].str.split(", ").str[1],
                                                 p=held["configuration"].str.split(", ").str[2]).groupby(
                ["metric", "kb", "p"], sort=False):
            name = "KiB/s per process" if metric.startswith("usemem") else "shootdowns/page"
            h.append(f"{name + ', ' + kb + ', ' + p:<34} {part['published'].mean():>10.4g} "
                     f"{part['predicted'].mean():>10.4g} [{part['lo'].mean():.4g}, {part['hi'].mean():.4g}]")
        err = held[held["metric"] == "usemem_throughput_kib_s"]
        h.append(f"median |error| of the 2-process throughput: "
                 f"{np.median(np.abs(err['error'] / err['published'])):.0%}")
        return [Section("usemem-style swap-out, 2-vCPU KVM guest, 6.18, zram, 256 MiB memcg", "\n".join(lines)),
                Section("swap model (mmcost.swap.SwapModel), fit to the 1-process runs", str(fit)),
                Section("swap model: the 2-process runs and the shootdowns, held out", "\n".join(h))]


study = Kvm618Usemem()
