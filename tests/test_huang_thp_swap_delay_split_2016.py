"""huang_thp_swap_delay_split_2016: seed 004's costs predict the 2016 RFC's base kernel (nothing fitted here).

Tolerances: the base throughput within 25% (its published 1% stddev is a
known miss: xfail), the __add_to_swap_cache spinning share within a factor
of two; the patched kernel is not expressible (delay-split path)."""

import pytest
from mmcost import studies

STUDY = studies.get("huang_thp_swap_delay_split_2016")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 2, 15, 0)
    acc = STUDY.accounting()
    assert (acc.loc[acc["variant"] == "base+patchset", "status"] == "not expressible").all()


def test_the_base_kernel_is_placed_in_its_era():
    m = STUDY.fit().model
    assert m.kernel == "4.8" and m.switch("writeback_tags") is True and m.switch("slot_cache") is False
    assert m.swapped_share == pytest.approx(1118821 / 2460636)


def test_base_kernel_predicted_within_the_stated_tolerances():
    held = STUDY.held_out().set_index("configuration")
    thr = held.loc["base"]
    assert abs(thr["predicted"] / thr["published"] - 1) < 0.25
    share = held.loc["base, __add_to_swap_cache"]
    assert 0.5 < share["predicted"] / share["published"] < 2.0


@pytest.mark.xfail(strict=True, reason="known miss: base throughput predicted ~17% high with seed 004's costs, "
                   "published stddev 1%")
def test_base_throughput_within_2_sigma():
    h, n = STUDY.counts()["hits"], STUDY.counts()["held_out"]
    assert h == n
