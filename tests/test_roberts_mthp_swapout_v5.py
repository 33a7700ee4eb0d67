"""roberts_mthp_swapout_v5 (and v4, the same setup one series earlier): seed 000's costs predict the
8-vCPU Altra VM's table (nothing fitted here).

Tolerances: the series changes nothing at 4K (predicted 0, published within
10 points); swapping 64K out whole beats splitting it, as published; the
2M gain is a known miss (xfail: about +167% predicted for about +90%;
+253% before the arm64 flush was split into TLBIs at the node and the DSB's round trip)."""

import pytest
from mmcost import studies

SERIES = {"roberts_mthp_swapout_v5": "swap-out-mthp-v5", "roberts_mthp_swapout_v4": "swap-out-mthp-v4"}


@pytest.fixture(params=list(SERIES))
def study(request):
    return studies.get(request.param)


def test_every_row_is_accounted_for(study):
    c = study.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 5, 0, 0)
    assert list(study.held_out().columns) == studies.HELD_OUT_COLUMNS


def test_nothing_is_fitted_to_this_source(study):
    seed = studies.get("small_thp_swapout").fit()
    assert study.fit().params == seed.params


def test_the_series_changes_nothing_at_4k_and_wins_at_64k(study):
    held = study.held_out().set_index("configuration")
    at4 = held.loc[f"4K Page, {SERIES[study.id]}"]
    assert at4["predicted"] == pytest.approx(0.0, abs=1e-9) and abs(at4["error"]) <= 10
    assert held.loc[f"64K THP, {SERIES[study.id]}", "predicted"] > held.loc["64K THP, baseline", "predicted"] + 50
    assert (held["lo"] <= held["hi"]).all()


@pytest.mark.xfail(strict=True, reason="known miss: on 8 vCPUs the lock stations that hold 4K back on seed 000's "
                   "80 cores are barely contended; 2M predicted about +167% for about +90% (guest costs not modelled)")
@pytest.mark.parametrize("source", list(SERIES))
def test_2m_gain_within_10_points(source):
    held = studies.get(source).held_out().set_index("configuration")
    assert abs(held.loc["2M THP, baseline", "error"]) <= 10
