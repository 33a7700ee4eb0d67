"""kvm_6_18_thp_split: large folios paged out whole or split first on this kernel, each run against its own 4K region.

The split's costs a page and a folio are read off the 64K and 2M runs
(mmcost.swap.model._split_costs); the rest is predicted. Tolerances: the
16K split's cost within 25% (its line through two sizes, the third); the
whole-folio path's saving against 4K within 0.15 us a page at 16K and 64K
(the runs' medians move by ~0.05 us between the two orders of a run's two
regions); at 2M it is 0.36 us short, a known miss (strict xfail)."""

from pathlib import Path

import numpy as np
import pytest
from mmcost import cpu_models, studies
from mmcost.swap import SwapModel, paths
from mmcost.swap import model as swap_model

STUDY = studies.get("kvm_6_18_thp_split")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (118, 60, 0, 0)


def test_every_kept_run_did_what_its_variant_says():
    """The kernel's counters of each kept run (raw/): every folio swapped whole (stats/swpout) or split
    (stats/split), and pswpout every page of both regions."""
    raw = Path(__file__).resolve().parents[1] / "data" / STUDY.id / "raw"  # (the repository's: not installed)
    for r in STUDY.runs().itertuples():
        text = (raw / f"{r.run}.txt").read_text().split()
        got = dict(zip(text[0::2], text[1::2]))
        folios, pages, ref = int(got["folios"]), int(got["pages"]), int(got["ref_pages"])
        assert int(got["vmstat.pswpout"]) == pages + ref, r.run
        assert int(got["stats.split" if r.split else "stats.swpout"]) == folios, r.run
        assert pages == (folios * (r.folio_kb // 4 - 1) if r.split else folios * r.folio_kb // 4)


def test_the_split_costs_are_the_line_through_64k_and_2m():
    """Recomputed from the runs with np.polyfit (not the study's code): the per-page and per-folio parts at
    this VM's kernel speed, the folio's one local full flush (the model charges it apart) out of the latter."""
    r = STUDY.runs()
    kb = np.array([64, 2048])
    cost = [float(((p["measured"] - p["reference"]) * (k // 4 - 1)).median())
            for k in kb for p in [r[r["split"] & (r["folio_kb"] == k)]]]
    slope, icpt = np.polyfit(kb // 4, cost, 1)
    speed = STUDY._model(4).kernel_speed
    flush = cpu_models.default_for("x86").costs()["full_flush_us"]
    assert swap_model.SPLIT_US_PER_PAGE * speed == pytest.approx(slope, rel=1e-9)
    assert swap_model.SPLIT_US_PER_FOLIO * speed == pytest.approx(icpt - flush, rel=1e-9)
    assert 0 < swap_model.SPLIT_US_PER_PAGE < 1 and 0 < swap_model.SPLIT_US_PER_FOLIO < 10


def test_the_16k_split_is_predicted():
    t = STUDY.table().set_index("variant")
    assert t.loc["16K split first", "model"] == pytest.approx(t.loc["16K split first", "measured"], rel=0.25)


@pytest.mark.parametrize("kb", [16, 64])
def test_a_whole_folio_saves_what_the_kernel_saves(kb):
    t = STUDY.table().set_index("variant")
    row = t.loc[f"{kb}K whole"]
    assert row["measured"] < 0 and row["model"] == pytest.approx(row["measured"], abs=0.15)


@pytest.mark.xfail(strict=True, reason="known miss: a whole 2M folio saves 1.50 us a page against 4K where the "
                   "model saves 1.14: its per-folio part is the same at 64K and 2M")
def test_a_whole_pmd_thp_saves_what_the_kernel_saves():
    row = STUDY.table().set_index("variant").loc["2048K whole"]
    assert row["model"] == pytest.approx(row["measured"], abs=0.15)


def test_the_bands_hold_most_held_out_runs():
    held = STUDY.held_out()
    inside = (held["lo"] <= held["published"]) & (held["published"] <= held["hi"])
    assert inside.mean() >= 0.7 and (held["lo"] < held["predicted"]).all() and (held["predicted"] < held["hi"]).all()


def test_split_work_by_hand():
    """split_work: the per-folio part plus the pages' part; the lruvec lock holds
    split_locked_us_per_page a page, at most the page's whole split work."""
    m = SwapModel(split_us_per_page=0.4, split_us_per_folio=2.0, split_locked_us_per_page=0.1)
    cpu, lru = paths.split_work(m, 16)
    assert (cpu, lru) == pytest.approx((2.0 + 16 * 0.3, 16 * 0.1))
    cpu, lru = paths.split_work(m.set(split_locked_us_per_page=0.9), 16)
    assert (cpu, lru) == pytest.approx((2.0, 16 * 0.4))


def test_the_split_path_of_a_pte_mapped_folio_pays_the_measured_split():
    """swap_out's split path for a 64K folio on 6.18: split_work's CPU in reclaim and its lock part in
    the LRU holds, nothing else of the split (no per-PTE charge, no rmap walk beyond it)."""
    base = SwapModel(kernel="6.18", folio_kb=64)
    d0 = paths.swap_out(base.set(split_us_per_page=0.0, split_us_per_folio=0.0, split_locked_us_per_page=0.0),
                        64, whole=False)
    d1 = paths.swap_out(base.set(split_us_per_page=0.4, split_us_per_folio=2.0, split_locked_us_per_page=0.1),
                        64, whole=False)
    assert d1["reclaim"] - d0["reclaim"] == pytest.approx(2.0 + 16 * 0.3)
    assert d1["lru"] - d0["lru"] == pytest.approx(16 * 0.1)
