"""roberts_mthp_swapout_v4: seed 000's costs predict the 8-vCPU Altra VM's table (nothing fitted here).

Tolerances: the series changes nothing at 4K (predicted 0, published within
10 points); swapping 64K out whole beats splitting it, as published; the
2M gain is a known miss (xfail: about +270% predicted for about +90%)."""

import pytest
from mmcost import studies

STUDY = studies.get("roberts_mthp_swapout_v4")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 5, 0, 0)
    assert list(STUDY.held_out().columns) == studies.HELD_OUT_COLUMNS


def test_nothing_is_fitted_to_this_source():
    seed = studies.get("small_thp_swapout").fit()
    assert STUDY.fit().params == seed.params


def test_the_series_changes_nothing_at_4k_and_wins_at_64k():
    held = STUDY.held_out().set_index("configuration")
    at4 = held.loc["4K Page, swap-out-mthp-v4"]
    assert at4["predicted"] == pytest.approx(0.0, abs=1e-9) and abs(at4["error"]) <= 10
    assert held.loc["64K THP, swap-out-mthp-v4", "predicted"] > held.loc["64K THP, baseline", "predicted"] + 50
    assert (held["lo"] <= held["hi"]).all()


@pytest.mark.xfail(strict=True, reason="known miss: on 8 vCPUs the lock stations that hold 4K back on seed 000's "
                   "80 cores are barely contended; 2M predicted about +270% for about +90% (guest costs not modelled)")
def test_2m_gain_within_10_points():
    held = STUDY.held_out().set_index("configuration")
    assert abs(held.loc["2M THP, baseline", "error"]) <= 10
