"""Reclaim takes the oldest folios first: the share of swapped bytes that
were large folios (SwapModel.swapped_large_share) by hand, and against the
kernel's counters on this project's two guests (mTHP swpout, thp_swpout and
pswpout) with nothing fitted."""

import numpy as np
import pandas as pd
import pytest

from mmcost import datasets
from mmcost.measure.verify import model_rows
from mmcost.swap import SwapModel

MIB = 2**20


def test_the_oldest_are_swapped_first_by_hand():
    # 768 MiB written into 512 MiB: the first 2/3 of it faulted before the limit, all 2M; 1/3 swapped
    m = SwapModel(folio_kb=2048, processes=1, memcg_mb=512, bytes_per_process=768 * MIB, large_share=2 / 3)
    assert m.swapped_large_share() == pytest.approx(1.0)
    # two writers, 1536 MiB: the limit is 1/3 of it; a written share 0.5 leaves 0.25 large after the limit;
    # 2/3 swapped: half from before the limit (all large), half from after (a quarter large)
    m2 = m.set(processes=2, large_share=0.5)
    assert m2.swapped_large_share() == pytest.approx((1 / 3 + 1 / 3 * 0.25) / (2 / 3))
    # fewer large folios written than fit before the limit: the early ones only partly large
    assert m.set(large_share=0.3).swapped_large_share() == pytest.approx(0.3 / (2 / 3))
    assert m.set(memcg_mb=None, swapped_share=0.4, large_share=0.7).swapped_large_share() == 0.7  # no limit
    assert m.set(folio_kb=4).swapped_large_share() == 1.0


def test_under_global_reclaim_the_fill_is_swapped_first_by_hand():
    """No memcg, thp_defrag given: the faults that fill memory before reclaim starts (the share 1 - s that
    stays resident) get large folios, a share p of those after it; reclaim swaps the oldest first."""
    m = SwapModel(folio_kb=2048, processes=4, memcg_mb=None, swapped_share=0.6, thp_defrag="never",
                  pressure_large_share=0.25)
    # written: 0.4 all large + 0.6 a quarter large; swapped 0.6: the fill's 0.4, then 0.2 a quarter large
    assert m.large_fault_share() == pytest.approx(0.4 + 0.6 * 0.25)
    assert m.swapped_large_share() == pytest.approx((0.4 + 0.2 * 0.25) / 0.6)
    # the newest 0.4 stay resident: all from after the fill
    assert m.resident_large_share() == pytest.approx(0.25)
    # less swapped than the fill: only the fill's large folios are swapped
    assert m.set(swapped_share=0.3).swapped_large_share() == pytest.approx(1.0)
    # unset: the pressure share is 1/2 where the fault may not reclaim, 1 where it may (defrag=always)
    assert m.set(pressure_large_share=None).large_fault_share() == pytest.approx(0.4 + 0.6 * 0.5)
    assert m.set(pressure_large_share=None, thp_defrag="always").large_fault_share() == 1.0
    # defrag not given: every fault large, as the model took it before the field
    assert m.set(thp_defrag=None).swapped_large_share() == 1.0
    # a written share given overrides the rule; the order still applies (the fill's 0.4 all large)
    assert m.set(large_share=0.7).swapped_large_share() == pytest.approx((0.4 + 0.2 * 0.5) / 0.6)
    # everything swapped (no fill left resident): the swapped mix is the written one, no division by zero
    assert m.set(swapped_share=1.0).swapped_large_share() == pytest.approx(0.25)
    # lanes: each lane as its own configuration
    from mmcost import lanes
    ps = [0.0, 0.25, 1.0]
    lane = lanes.from_columns(m, {"pressure_large_share": np.array(ps)}, len(ps))
    assert lane.swapped_large_share() == pytest.approx([m.set(pressure_large_share=p).swapped_large_share()
                                                        for p in ps])


def test_thp_defrag_leaves_memcg_reclaim_as_it_was():
    """Under a memcg limit the charge decides (its own gfp rule), whatever thp_defrag says."""
    m = SwapModel(folio_kb=2048, processes=2, memcg_mb=512, bytes_per_process=768 * MIB)
    for defrag in ("never", "always"):
        d = m.set(thp_defrag=defrag)
        assert (d.large_fault_share(), d.swapped_large_share()) == (m.large_fault_share(), m.swapped_large_share())


@pytest.mark.parametrize("defrag, madvise, may", [
    ("always", False, True), ("always", True, True),            # GFP_TRANSHUGE (| __GFP_NORETRY unadvised)
    ("madvise", True, True), ("defer+madvise", True, True),     # __GFP_DIRECT_RECLAIM for a madvised VMA
    ("madvise", False, False), ("defer+madvise", False, False),  # GFP_TRANSHUGE_LIGHT (+ kswapd for defer)
    ("defer", True, False), ("defer", False, False), ("never", True, False), ("never", False, False),
])
def test_which_faults_may_reclaim_follows_the_thp_gfp_mask(defrag, madvise, may):
    """v4.11+ alloc_hugepage_direct_gfpmask / vma_thp_gfp_mask: direct reclaim and compaction only with
    defrag=always, or with madvise / defer+madvise for a MADV_HUGEPAGE VMA."""
    m = SwapModel(folio_kb=2048, memcg_mb=None, swapped_share=0.5, thp_defrag=defrag, madvise=madvise)
    assert m.large_fault_may_reclaim() is may
    assert (m.large_fault_share() == 1.0) is may


@pytest.mark.parametrize("source, csv", [("kvm_6_18_machine", "measurements.csv"),
                                         ("kvm_6_18_machine_epyc", "measurements.csv"),
                                         ("kvm_6_18_machine_epyc", "warmed_2m.csv")])
def test_the_swapped_mix_is_the_kernels_within_6_points(source, csv):
    """Per large size, processes and limit (mean over runs): the model from each run's written share
    against the counters' swapped share; the written share itself, what the model took before, is up
    to 34 points off."""
    d = pd.read_csv(datasets.path(source) / csv)
    worst_model, worst_written = 0.0, 0.0
    for kb in sorted(set(d["folio_kb"]) - {4}):
        part = d[d["folio_kb"] == kb]
        written = model_rows(part).groupby("run")["large_share"].first()
        w = part.pivot_table(index=["run", "processes", "memcg_mb", "bytes_per_process"], columns="metric",
                             values="value", aggfunc="sum").reset_index()
        out = w["thp_swpout_count" if kb == 2048 else "swpout_count"] * (kb // 4) / w["pswpout_count"]
        a = w["run"].map(written)
        model = [SwapModel(folio_kb=kb, processes=int(p), memcg_mb=float(mb), bytes_per_process=float(b),
                           large_share=float(x), swap_device="zram").swapped_large_share()
                 for p, mb, b, x in zip(w["processes"], w["memcg_mb"], w["bytes_per_process"], a)]
        g = pd.DataFrame({"p": w["processes"], "mb": w["memcg_mb"], "measured": out, "model": model,
                          "written": a}).groupby(["p", "mb"]).mean()
        worst_model = max(worst_model, float((g["model"] - g["measured"]).abs().max()))
        worst_written = max(worst_written, float((g["written"] - g["measured"]).abs().max()))
    assert worst_model <= 0.06
    assert worst_written >= 0.3
