"""UnixBench Shell Scripts with and without arm64 BATCHED_UNMAP_TLB_FLUSH (v2, July 2022): a control.

Mechanism: :class:`mmcost.tlb.TlbModel`'s flush policies. The batched
unmap flush (``try_to_unmap_flush``, ``arch_tlbbatch_add_pending`` /
``arch_tlbbatch_flush``, merged for arm64 as 43b3dfdd0455 in v6.5) runs
only when reclaim (``shrink_folio_list``) or migration unmaps a page.
UnixBench's shell1 forks and execs shell scripts with no memory pressure:
its reclaim and migration rates are zero, so the two policies cost the same
and the series is predicted to change nothing. Each ``batched-v2`` number
is predicted as the ``base`` number of the same run (no band: the thread
gives no run-to-run spread beyond Yicong Yang's three iterations).

====================================  ====  ======================================
rows                                   n    how
====================================  ====  ======================================
base (Xin Hao -c 1, -c 96; Yicong      7    fitted: the reference of each change
  Yang's three iterations)
batched-v2, the same                    7    predicted: no change (no reclaim)
not expressible                         0
====================================  ====  ======================================

Known miss: Xin Hao's -c 1 run, +27% with the series, which Barry Song
in the thread said "won't be affected by tlbbatch at all" and Yicong Yang
did not reproduce (rows checked against the three messages; see source.toml).
"""

from __future__ import annotations

import pandas as pd

from ..tlb import TlbModel
from ._study import Section, Study

KEYS = ["experiment", "metric", "run", "processes"]


class Arm64BatchedTlbV2Unixbench(Study):
    id = "arm64_batched_tlb_v2_unixbench"
    mechanism = TlbModel
    free = ()

    def fitted_rows(self):
        df = self.data()
        return [(df[df["variant"] == "base"], "the reference of each change (the kernel without the series)")]

    def held_out(self) -> pd.DataFrame:
        df = self.data().assign(run=lambda d: d["run"].fillna(""))
        base = df[df["variant"] == "base"].set_index(KEYS)["value"]
        rows = df[df["variant"] == "batched-v2"].reset_index(drop=True)
        best = [float(base.loc[tuple(r[k] for k in KEYS)]) for _, r in rows.iterrows()]
        pred = pd.DataFrame({"best": best, "lo": best, "hi": best})
        config = [f"{r.experiment.removeprefix('unixbench_')}{', ' + r.run if r.run else ''}" for r in rows.itertuples()]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        held = self.held_out()
        lines = [f"{'run':<28} {'metric':<22} {'batched-v2':>10} {'base':>9} {'change':>7}"]
        for r in held.itertuples():
            lines.append(f"{r.configuration[:28]:<28} {r.metric.removeprefix('unixbench_')[:22]:<22} "
                         f"{r.published:>10.1f} {r.predicted:>9.1f} {100 * (r.published / r.predicted - 1):>+6.1f}%")
        lines.append("predicted: no change (shell1 neither reclaims nor migrates)")
        return [Section("UnixBench shell1, arm64 (Kunpeng): the series predicted to change nothing",
                        "\n".join(lines))]


study = Arm64BatchedTlbV2Unixbench()
