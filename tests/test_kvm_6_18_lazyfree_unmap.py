"""The lazyfree study: this guest's own reclaim of MADV_FREE'd folios of 4K-128K."""

import pytest
from mmcost import datasets, studies
from mmcost.tlb import TlbModel

STUDY = studies.get("kvm_6_18_lazyfree_unmap")


def test_every_page_was_freed_lazily_in_folios_of_its_size():
    d = datasets.load("kvm_6_18_lazyfree_unmap")
    lazy = d[d["metric"] == "pglazyfreed_count"]
    assert len(lazy) == 49 and (lazy["value"] == 16384).all()
    faults = d[(d["metric"] == "fault_alloc_count") & (d["folio_kb"] > 4)]
    assert (faults["value"] * faults["folio_kb"] / 4 >= 16384).all()


def test_the_reclaimer_pays_per_folio_per_iteration_and_per_page():
    """Hand-derived: a 64K lazyfree folio costs one folio's work, one loop
    iteration (batched, v6.15) or 16 (before), 16 pages' work and 1/32 of a
    local full flush."""
    costs = dict(reclaim_folio_us=1.0, unmap_iter_us=0.1, page_us=0.2)
    m = TlbModel(cpus=2, mm_cpus=1, sender_in_mm=True, lazyfree=True, entries_per_folio=16,
                 reclaim_unmap_rate_per_s=1000.0, kernel="6.18", **costs)
    flush = m.costs.full_flush_us / 32  # clean PTEs: one flush per 32-folio batch, no remote CPU
    assert m.solve()["reclaim_us_per_page"] == pytest.approx((1.0 + 0.1 + 16 * 0.2 + flush) / 16)
    old = m.replace(kernel="6.14")
    assert old.solve()["reclaim_us_per_page"] == pytest.approx((1.0 + 16 * 0.1 + 16 * 0.2 + flush) / 16)


def _held_rel():
    held = STUDY.held_out().set_index("configuration")
    return (held["predicted"] - held["published"]) / held["published"]


def test_16k_and_128k_are_predicted_from_4k_and_64k():
    rel = _held_rel()
    assert list(rel.index) == ["16K folios", "32K folios", "128K folios", "256K folios", "512K folios"]
    assert abs(rel["16K folios"]) < 0.10 and abs(rel["128K folios"]) < 0.10


@pytest.mark.xfail(strict=True, reason="known miss: per-folio + per-page work fitted to 4K and 64K puts 32K 30% "
                                       "low and 256K/512K 2-2.5x high; the per-page work is far smaller than "
                                       "the 64K point implies and the per-folio work grows with the order")
def test_32k_256k_and_512k_are_predicted_from_4k_and_64k():
    rel = _held_rel()
    assert all(abs(rel[f"{kb}K folios"]) < 0.10 for kb in (32, 256, 512))


def test_the_known_miss_is_stated_as_measured():
    rel = _held_rel()
    assert -0.45 < rel["32K folios"] < -0.15
    assert rel["256K folios"] > 0.5 and rel["512K folios"] > 0.8


def test_before_batching_every_large_folio_costs_an_iteration_per_pte_more():
    """v6.14 pays unmap_iter_us for each PTE of a large folio instead of once:
    (entries - 1) x unmap_iter_us / pages more per page; a 4K folio is the same."""
    fit = STUDY.fit()
    before = STUDY.before_batching().set_index("folio_kb")
    after = dict(zip(before.index, fit.model.evaluate(STUDY._medians(STUDY.rows()))))
    it = fit.model.unmap_iter_us
    for kb in (4, 16, 32, 64, 128, 256, 512):
        pages = kb // 4
        assert before.loc[kb, "best"] - after[kb] == pytest.approx((pages - 1) * it / pages)


def test_the_report_sections_fit_in_80_columns():
    for section in STUDY.sections():
        assert max(len(line) for line in section.text.splitlines()) <= 80, section.title
