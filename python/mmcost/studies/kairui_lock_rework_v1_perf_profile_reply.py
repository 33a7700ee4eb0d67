"""Kairui Song's perf profile in reply to Huang Ying, "mm, swap: rework of swap allocator locks" v1 (Oct. 2024).

Mechanism: none yet. The rows are ``perf record -g`` *children* shares of
cc1's page-fault path during make -j64 in a 1 GiB memcg on ZRAM, before
(the global ``si->lock``) and after (per-cluster locks). The lock models
(:mod:`mmcost.swap_alloc_lock`, :mod:`mmcost.swap_alloc_lock_scaling`)
give sys and real time and, for the swap-out path, the spinning share of
one call site as a *self* share (LKP's cycles-pp): a call graph's
inclusive shares (``asm_exc_page_fault``, ``pageout``,
``try_to_unmap_flush_dirty``) need the whole fault and reclaim path of a
build, which no mechanism here has. The ~20% brd claim names no metric.

====================================  ====  =======================================
rows                                   n    how
====================================  ====  =======================================
children shares, before and after     11    not expressible: inclusive call-graph
                                             shares of a build's fault path
brd claim (~20%)                        1    not expressible: metric not stated
====================================  ====  =======================================
"""

from __future__ import annotations

from ..swap_alloc_lock import SwapAllocLockModel
from ._study import Section, Study


class KairuiLockReworkPerfProfile(Study):
    id = "kairui_lock_rework_v1_perf_profile_reply"
    mechanism = SwapAllocLockModel
    free = ()
    NOT_EXPRESSIBLE = (
        ({"metric": "cycles_share_pct"},
         "perf record -g children (inclusive) shares of a build's fault path: no mechanism has that path"),
        ({"metric": "performance_unstated_change_pct"}, "the claim names no metric"),
    )

    def sections(self) -> list[Section]:
        df = self.data()
        shares = df[df["metric"] == "cycles_share_pct"]
        lines = [f"{'function (children)':<50} {'before':>8} {'after':>8}"]
        for site in dict.fromkeys(shares["call_site"]):
            vals = shares[shares["call_site"] == site].set_index("variant")["value"]
            fmt = {v: (f"{vals[v]:.2f}%" if v in vals.index else "-") for v in ("before", "after")}
            lines.append(f"{site[:50]:<50} {fmt['before']:>8} {fmt['after']:>8}")
        lines.append("not expressible: inclusive shares of the build's fault path")
        return [Section("make -j64, 1G memcg, ZRAM: perf record -g children shares", "\n".join(lines))]


study = KairuiLockReworkPerfProfile()
