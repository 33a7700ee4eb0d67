"""huang_thp_swap_delay_split_v8_2017: seed 004's costs on the v4.11-era -mm base kernel (nothing fitted here).

Tolerances: the base throughput's prediction is within a factor of two of
the published one and its band holds it; within 10% is a known miss (strict
xfail: 11.7 GB/s for 7.0 since the split's costs are measured on 6.18, 10.5
before; since the split of a PMD THP flushes as the kernel
does, twice a THP; 6.4 GB/s with the 1024 flush rounds it charged before).
The patched kernel is the delay-split path (the patch's changes within 10
points: met by a little since the split's costs are measured); the children share of add_to_swap is not
expressible. LKP's windows: at the published throughput gain the model's
exit gives the published swap-out change within 6 points and the
elapsed-time change within 2."""

import pytest
from mmcost import studies
from test_huang_thp_swap_delay_split_2016 import window_at_published_gain

STUDY = studies.get("huang_thp_swap_delay_split_v8_2017")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 6, 11, 0)


def test_the_base_kernel_is_placed_in_its_era():
    m = STUDY.fit().model
    assert m.kernel == "4.11" and m.switch("writeback_tags") is False
    # the series' own v6 (2017-03-08) patches a swapcache_free with _swap_info_get and free_swap_slot
    assert m.switch("swap_map_lock") == "cluster" and m.switch("slot_cache") is True


def test_base_throughput_within_a_factor_of_two():
    r = STUDY.held_out().set_index("configuration").loc["base"]
    assert 0.5 < r["predicted"] / r["published"] < 2.0 and r["lo"] <= r["predicted"] <= r["hi"]


@pytest.mark.xfail(strict=True, reason="known miss: 11.7 GB/s predicted for 7.0 (+66%; +49% before the split was measured): with the split's two flush "
                   "rounds a THP seed 004's costs leave the v4.11 split path ~2 us a swapped page short (compaction "
                   "after the split THPs come back as 4K pages, the machine: not modelled)")
def test_base_throughput_within_10_pct():
    r = STUDY.held_out().set_index("configuration").loc["base"]
    assert abs(r["predicted"] / r["published"] - 1) <= 0.10


def test_the_patched_kernel_is_the_delay_split_path():
    m = STUDY.fit().model.configure(variant="base+patchset")
    assert m.switch("thp_swap_delay_split") is True and m.switch("swap_whole_pmd_thp") is False


def test_the_delay_split_gains():
    held = STUDY.held_out()
    gain = held[held["metric"] == "vm_scalability_throughput_kib_s_change_pct"].iloc[0]
    assert gain["predicted"] > 0


def test_the_delay_split_gain_within_10_points():
    """Met by a little (about 9 points on the throughput) since the split's costs are measured
    (kvm_6_18_thp_split): +9.6% for +21.2% while the split's per-page work was a guess held under the lruvec
    lock with a reference check's rmap walk per subpage."""
    held = STUDY.held_out()
    change = held[held["metric"].str.endswith("_change_pct")]
    assert (change["error"].abs() <= 10).all()


def test_the_windows_give_the_published_swapout_and_time_at_the_published_gain():
    """+19.5% for +14.9% swap-out, -16.4% for -16.2% elapsed: the windows are not what the gain misses."""
    so, time = window_at_published_gain(STUDY, 8)
    assert abs(so - 14.9) <= 6 and abs(time - -16.2) <= 2


def test_the_thp_setting_is_the_revised_lkp_jobs():
    """defrag=always (the author's LKP job as revised on 2017-04-12 for 8 tasks, an inference): a THP fault
    compacts and reclaims before it falls back, so the prediction takes every fault for a THP and only the
    bands draw fewer; the 2016 RFC's defrag=never job left half the faults after the fill 4K."""
    assert STUDY.source()["model"]["thp_defrag"] == "always"
    m = STUDY._configured()  # the thread's 8 writers, PMEM, 2M THPs
    assert m.thp_defrag == "always" and m.large_fault_may_reclaim()
    assert m.large_fault_share() == 1.0 and m.swapped_large_share() == 1.0
    assert m.set(pressure_large_share=0.0).swapped_large_share() == pytest.approx(
        (1 - m._swapped_share()) / m._swapped_share())
