"""huang_thp_swap_delay_split_v8_2017: seed 004's costs on the v4.11-era -mm base kernel (nothing fitted here).

Tolerances: the base throughput's prediction is within a factor of two of
the published one (a known miss beyond 10%: xfail); the patched kernel and
the children share of add_to_swap are not expressible."""

import pytest
from mmcost import studies

STUDY = studies.get("huang_thp_swap_delay_split_v8_2017")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 1, 16, 0)


def test_the_base_kernel_is_placed_in_its_era():
    m = STUDY.fit().model
    assert m.kernel == "4.11" and m.switch("writeback_tags") is False
    # the series' own v6 (2017-03-08) patches a swapcache_free with _swap_info_get and free_swap_slot
    assert m.switch("swap_map_lock") == "cluster" and m.switch("slot_cache") is True


def test_base_throughput_within_a_factor_of_two():
    r = STUDY.held_out().iloc[0]
    assert 0.5 < r["predicted"] / r["published"] < 2.0 and r["lo"] <= r["predicted"] <= r["hi"]


@pytest.mark.xfail(strict=True, reason="known miss: 5.0 GB/s predicted for 7.0 GB/s (this machine writes 3x "
                   "faster than seed 004's; its details are not in the thread)")
def test_base_throughput_within_10_pct():
    r = STUDY.held_out().iloc[0]
    assert abs(r["predicted"] / r["published"] - 1) <= 0.10
