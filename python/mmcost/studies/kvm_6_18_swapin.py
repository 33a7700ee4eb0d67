"""This project's swap-in matrix, measured with ``mmcost measure swapin`` on a 2-vCPU KVM guest, 6.18.

Each process writes 512 MiB past a 256 MiB memcg (swap-out to the run's own
zram device), then reads it back, in address order or page by page in a
shuffled order; the read-back is timed alone (:mod:`mmcost.measure.swapin_runs`).

Nothing is fitted or predicted yet: swap-in is not a path of
:class:`mmcost.swap.SwapModel` (issue 36, step 2). The study shows the
table per configuration (folio size, processes, compressor, order):
read-back and write throughput per process, the kernel-counter identity
(pswpin against the pages read back that pagemap showed swapped), the share
of large folios swapped in whole (``swpin`` over ``swpin + swpin_fallback``
of the size: ``alloc_swap_folio()``, mm/memory.c, orders below PMD only, so
2 MiB comes back as 4 KiB pages), how many fallbacks were the memcg refusing
the charge, and the pages the read-back swapped out again.

====================================  =====  ==============================
rows                                   n     how
====================================  =====  ==============================
every row                              all   not expressible: no swap-in
                                             path in SwapModel yet
====================================  =====  ==============================
"""

from __future__ import annotations

import pandas as pd

from ._study import Section, Study

#: the table's columns: (name, metric, how per run: "mean" over processes or "sum")
_PER_RUN = (("swapin_kib_s", "swapin_throughput_kib_s", "mean"), ("write_kib_s", "usemem_throughput_kib_s", "mean"),
            ("pswpin", "pswpin_count", "sum"), ("at_touch", "swapped_at_touch_pages", "sum"),
            ("at_start", "swapped_at_start_pages", "sum"), ("pswpout", "pswpout_count", "sum"),
            ("majflt", "pgmajfault_count", "sum"), ("swpin", "swpin_count", "sum"),
            ("fallback", "swpin_fallback_count", "sum"), ("fallback_charge", "swpin_fallback_charge_count", "sum"))


class Kvm618Swapin(Study):
    id = "kvm_6_18_swapin"
    mechanism = type(None)
    free = ()
    NOT_EXPRESSIBLE = (
        ({}, "swap-in (do_swap_page, large-folio swap-in, refaults) is not a SwapModel path yet (issue 36, step 2)"),
    )

    def __repr__(self) -> str:
        return f"<study {self.id}: measured swap-in, nothing fitted>"

    def runs(self) -> pd.DataFrame:
        """One row per run: its configuration and the numbers of :data:`_PER_RUN` (NaN where the
        kernel kept none, e.g. no mTHP counter for 4K)."""
        df = self.data()
        keys = ["run", "experiment", "folio_kb", "processes", "compressor"]
        out = df[keys].drop_duplicates("run").set_index("run")
        for name, metric, how in _PER_RUN:
            part = df[df["metric"] == metric].groupby("run")["value"]
            out[name] = part.mean() if how == "mean" else part.sum()
        out["order"] = out["experiment"].map({"usemem_swapin": "seq", "usemem_swapin_random": "rand"})
        return out.reset_index()

    def table(self) -> pd.DataFrame:
        """Per configuration: runs, read-back and write KiB/s per process (mean), pswpin over the pages
        swapped at touch, the share of large folios swapped in whole, the share of fallbacks that were
        the memcg's charge, and the read-back's own swap-outs per page swapped in."""
        r = self.runs()
        r["whole"] = r["swpin"] / (r["swpin"] + r["fallback"])
        r["charge"] = r["fallback_charge"] / r["fallback"]
        r["identity"] = r["pswpin"] / r["at_touch"]
        r["out_per_in"] = r["pswpout"] / r["pswpin"]
        g = r.groupby(["order", "folio_kb", "processes", "compressor"])
        t = g.agg(runs=("run", "size"), swapin_kib_s=("swapin_kib_s", "mean"), sd=("swapin_kib_s", "std"),
                  write_kib_s=("write_kib_s", "mean"), identity=("identity", "mean"), whole=("whole", "mean"),
                  charge=("charge", "mean"), out_per_in=("out_per_in", "mean"))
        return t.reset_index().sort_values(["order", "folio_kb", "processes", "compressor"], ascending=[False, True,
                                                                                                      True, True])

    def text(self) -> str:
        lines = [f"{'order':<5} {'folio':>5} {'p':>1} {'comp':<7} {'n':>2} {'read':>8} {'sd':>4} "
                 f"{'write':>8} {'in/touch':>8} {'whole':>5} {'charge':>6} {'out/in':>6}"]

        def pct(x):
            return "   -" if pd.isna(x) else f"{x:4.0%}"

        for r in self.table().itertuples():
            lines.append(f"{r.order:<5} {str(r.folio_kb) + 'K':>5} {r.processes:>1} {r.compressor:<7} {r.runs:>2} "
                         f"{r.swapin_kib_s:>8.0f} {r.sd / r.swapin_kib_s:>4.0%} {r.write_kib_s:>8.0f} "
                         f"{'-' if pd.isna(r.identity) else format(r.identity, '.4f'):>8} "
                         f"{pct(r.whole):>5} {pct(r.charge):>6} {r.out_per_in:>6.2f}")
        lines += ["", "read, write: KiB/s per process, mean of the runs (sd: of read). in/touch:",
                  "pswpin over the pages pagemap showed swapped just before they were read.",
                  "whole: large folios swapped in whole of all tried, swpin / (swpin +",
                  "swpin_fallback); 2048K: none tried (alloc_swap_folio() stops below PMD",
                  "order). charge: the fallbacks that were the memcg refusing the charge.",
                  "out/in: the read-back's pswpout per pswpin."]
        return "\n".join(lines)

    def sections(self) -> list[Section]:
        return [Section("swap-in from zram per folio size, processes, compressor (measured; no model yet)",
                        self.text())]


study = Kvm618Swapin()
