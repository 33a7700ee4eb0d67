"""huang_thp_swap_delay_split_2016: seed 004's costs predict the 2016 RFC's base kernel (nothing fitted here).

Tolerances: the base throughput within 25% (its published 1% stddev is a
known miss: xfail), the __add_to_swap_cache spinning share within a factor
of two; the patched kernel is the delay-split path, its gain within 10
points a known miss (xfail)."""

import pytest
from mmcost import studies

STUDY = studies.get("huang_thp_swap_delay_split_2016")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 8, 9, 0)
    acc = STUDY.accounting()
    patched = acc[acc["variant"] == "base+patchset"]
    assert set(patched.loc[patched["status"] == "predicted", "metric"]) == {
        "vm_scalability_throughput_kib_s", "vm_scalability_throughput_kib_s_change_pct", "swapout_kib_s",
        "swapout_kib_s_change_pct", "cycles_share_pct", "cycles_share_pct_change_pct"}


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


@pytest.mark.xfail(strict=True, reason="known miss: base throughput predicted ~14% high with seed 004's costs, "
                   "published stddev 1%")
def test_base_throughput_within_2_sigma():
    h, n = STUDY.counts()["hits"], STUDY.counts()["held_out"]
    assert h == n


def test_the_patched_kernel_is_the_delay_split_path():
    m = STUDY.fit().model.configure(variant="base+patchset")
    assert m.kernel == "4.8+thp_swap_delay_split" and m.switch("thp_swap_delay_split") is True


def test_the_delay_split_gains_and_the_tree_lock_stays_the_bottleneck():
    held = STUDY.held_out().set_index(["metric", "configuration"])
    assert held.loc[("vm_scalability_throughput_kib_s_change_pct", "base+patchset"), "predicted"] > 0
    m = STUDY.fit().model.set(processes=16, swap_device="pmem", folio_kb=2048)
    for variant in ("base", "base+patchset"):
        locks = m.configure(variant=variant).solve().details["locks"].lock_values
        assert locks["swapcache"]["utilization"] > 0.9, variant


@pytest.mark.xfail(strict=True, reason="known miss: the delay split's gain +26% predicted for +10.6% throughput "
                   "(+12.1% swap-out): the model's tree-lock hold falls 22% a page")
def test_the_delay_split_gain_within_10_points():
    held = STUDY.held_out()
    change = held[held["metric"].isin(["vm_scalability_throughput_kib_s_change_pct", "swapout_kib_s_change_pct"])]
    assert (change["error"].abs() <= 10).all()
