"""Barry Song and Yicong Yang's arm64 batched TLB flush for reclaim (v9, May 2023; 43b3dfdd0455, v6.5).

Mechanism: the arm64 flush costs of :mod:`mmcost.swap` and
:mod:`mmcost.cpu_models`. Before the series, ``ptep_clear_flush`` issues a
broadcast TLBI and waits one DSB ISH per page; after, reclaim only issues
the TLBIs (``arch_tlbbatch_add_pending``) and waits one DSB per
``shrink_folio_list`` batch of 32 folios (``arch_tlbbatch_flush``). The DSB
wait grows with the CPUs of the inner shareable domain
(:data:`mmcost.swap.DSB_GROWTH`, derived from this thread's two shares).
So the time saved is the measured ``ptep_clear_flush`` share s times the
DSB's part of it: change = -s x (1 - 1/32) x D(n) / (T + D(n)), with T and
D the presets' TLBI and DSB costs (their priors give the band) and n = 8
(Snapdragon 888) or 96 ("around 100 cores", as DSB_GROWTH reads it).

====================================  ====  =======================================
rows                                   n    how
====================================  ====  =======================================
ptep_clear_flush share (both CPUs)     2    fitted: DSB_GROWTH's source, and the
                                             changes' input
real time change (both CPUs)           2    predicted
per-run real/sys/user times            12    not expressible: no single-process
                                             MADV_PAGEOUT + refault loop workload
pmbench migration (> 50% less time)    1    not expressible: the migration's page
                                             count and rate are not stated
====================================  ====  =======================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import cpu_models
from ..swap import DSB_GROWTH, RECLAIM_BATCH
from ._study import Section, Study

#: experiment -> CPUs in the DSB's inner shareable domain
DOMAIN_CPUS = {"swap_bench_snapdragon888": 8, "swap_bench_kunpeng920": 96}
_WIDTH = 0.5  # the presets' relative prior width


def saved_share(tlbi: np.ndarray | float, dsb: np.ndarray | float, cpus: int) -> np.ndarray | float:
    """The part of a per-page ``ptep_clear_flush`` the batch removes: its DSB, but one per batch."""
    d = dsb * (1 + DSB_GROWTH * (cpus - 1))
    return (1 - 1 / RECLAIM_BATCH) * d / (tlbi + d)


class BarryYicongArm64BatchedTlb(Study):
    id = "barry_yicong_arm64_batched_tlb_v9"
    mechanism = type(None)
    free = ()
    NOT_EXPRESSIBLE = (
        ({"metric": ("real_time_s", "sys_time_s", "user_time_s")},
         "no single-process MADV_PAGEOUT + refault loop workload in SwapModel or TlbModel"),
        ({"experiment": "pmbench_migrate"}, "the migration's page count and rate are not stated"),
    )

    def __repr__(self) -> str:
        return f"<study {self.id}: arm64 TLBI/DSB costs, nothing fitted>"

    def shares(self) -> pd.DataFrame:
        df = self.data()
        return df[df["metric"] == "cycles_share_pct"]

    def fitted_rows(self):
        return [(self.shares(), "swap.DSB_GROWTH's source and the predicted changes' input")]

    def held_out(self) -> pd.DataFrame:
        df = self.data()
        rows = df[df["metric"] == "real_time_s_change_pct"].reset_index(drop=True)
        share = self.shares().set_index("experiment")["value"] / 100
        rng = np.random.default_rng(9)
        best, lo, hi = [], [], []
        for r in rows.itertuples():
            costs = cpu_models.get(r.cpu_model).costs()
            t, d = costs["tlbi_us"], costs["dsb_us"]
            n = DOMAIN_CPUS[r.experiment]
            s = float(share[r.experiment])
            best.append(-100 * s * saved_share(t, d, n))
            draws = -100 * s * saved_share(np.clip(rng.normal(t, _WIDTH * t, 2000), 0, None),
                                           np.clip(rng.normal(d, _WIDTH * d, 2000), 1e-9, None), n)
            q = (1 - self.level) / 2
            lo.append(float(np.quantile(draws, q)))
            hi.append(float(np.quantile(draws, 1 - q)))
        pred = pd.DataFrame({"best": best, "lo": lo, "hi": hi})
        return self._held_out_frame(rows, [f"{r.cpu_model}, batched" for r in rows.itertuples()], pred)

    def sections(self) -> list[Section]:
        held = self.held_out()
        lines = [f"{'CPU':<24} {'ptep_clear_flush':>16} {'published':>9} {'predicted':>9} {'90% band':>14}"]
        share = self.shares().set_index("cpu_model")["value"]
        for r in held.itertuples():
            cpu = r.configuration.split(",")[0]
            lines.append(f"{cpu:<24} {share[cpu]:>15.2f}% {r.published:>+8.1f}% {r.predicted:>+8.1f}% "
                         f"[{r.lo:+.1f}, {r.hi:+.1f}]")
        lines.append("real time change; presets' TLBI and DSB costs, one DSB per 32 folios")
        return [Section("arm64 paging-out microbenchmark: real time change with batched flushes",
                        "\n".join(lines))]


study = BarryYicongArm64BatchedTlb()
