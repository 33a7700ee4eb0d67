"""Two writers in one memcg or in their own: predicted with another source's fit, never fitted here."""

import pytest
from mmcost import studies

STUDY = studies.get("kvm_6_18_memcgs")


@pytest.fixture(scope="module")
def held():
    return STUDY.held_out()


def test_writers_in_their_own_memcgs_send_no_shootdowns(held):
    """4 of the 5 separate runs: 1-3 TLB interrupts in all (the fifth had a writer migrated, see source.toml)."""
    tlb = held[(held["metric"] == "tlb_shootdowns_per_swapped_page") & held["configuration"].str.startswith("separate")]
    assert (tlb["predicted"] == 0).all()
    assert (tlb["published"] < 1e-4).sum() == 4


def test_writers_sharing_a_memcg_flush_each_others_cpu_every_other_page(held):
    tlb = held[(held["metric"] == "tlb_shootdowns_per_swapped_page") & held["configuration"].str.startswith("shared")]
    assert tlb["predicted"].to_numpy() == pytest.approx(0.5)
    assert tlb["published"].median() == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize("layout, tolerance", [("shared", 0.05), ("separate", 0.10)])
def test_throughput_of_each_layout_is_predicted(held, layout, tolerance):
    tp = held[(held["metric"] == "usemem_throughput_kib_s") & held["configuration"].str.startswith(layout)]
    assert tp["predicted"].median() == pytest.approx(tp["published"].median(), rel=tolerance)
    assert ((tp["lo"] <= tp["published"]) & (tp["published"] <= tp["hi"])).all()


def test_a_held_out_row_has_its_configurations_repetition_spread_as_sigma():
    """The runs are this source's published spread: each held-out row's sigma
    is the sample standard deviation of its variant's runs, computed here
    from the raw rows with the standard library."""
    import statistics

    study = studies.get("kvm_6_18_memcgs")
    data = study.data()
    held = study.held_out()
    sigma = study.held_out_sigma()
    assert len(sigma) == len(held) > 0
    for (metric, config), s in zip(zip(held["metric"], held["configuration"]), sigma):
        variant = config.rsplit(", ", 1)[0]
        values = data[(data["metric"] == metric) & (data["variant"] == variant)]["value"].tolist()
        assert len(values) >= 2
        assert s == pytest.approx(statistics.stdev(values), rel=1e-12)
