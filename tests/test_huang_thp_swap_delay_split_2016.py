"""huang_thp_swap_delay_split_2016: seed 004's costs predict the 2016 RFC's base kernel (nothing fitted here).

Tolerances: the base throughput within 25% (its published 1% stddev is a
known miss: xfail), the __add_to_swap_cache spinning share within a factor
of two; the patched kernel is the delay-split path, its throughput and
swap-out gains within 10 points (issue 35), with the THP setting of the
author's LKP job (defrag=never). The THP share at which the insert site's
spinning changes as published gives the gain within 10 points and the
elapsed time within 2, and the fill's THPs alone the gain within 2 (checks
between the thread's rows, not predictions). LKP's windows (swap-out over the job with the
exit, throughput over the loop): at the published throughput gain the
model's exit gives the published swap-out change within 6 points and the
elapsed-time change within 2."""

import pytest
from mmcost import studies

STUDY = studies.get("huang_thp_swap_delay_split_2016")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 9, 8, 0)
    acc = STUDY.accounting()
    patched = acc[acc["variant"] == "base+patchset"]
    assert set(patched.loc[patched["status"] == "predicted", "metric"]) == {
        "vm_scalability_throughput_kib_s", "vm_scalability_throughput_kib_s_change_pct", "swapout_kib_s",
        "swapout_kib_s_change_pct", "cycles_share_pct", "cycles_share_pct_change_pct", "real_time_s_change_pct"}


def test_the_base_kernel_is_placed_in_its_era():
    m = STUDY.fit().model
    assert m.kernel == "4.8" and m.switch("writeback_tags") is True and m.switch("slot_cache") is False
    assert m.rate_window == "lkp_job"
    assert STUDY.swapout_ratio() == pytest.approx(1118821 / 2460636)
    assert m.swapped_share == pytest.approx(STUDY.swapped_share())
    # the ratio back from the base kernel at that share, over LKP's windows
    r = m.set(processes=16, swap_device="pmem", folio_kb=2048).configure(variant="base").solve()
    assert r["swapout_kib_s"] / r["vm_scalability_throughput_kib_s"] == pytest.approx(1118821 / 2460636, rel=1e-4)
    assert m.swapped_share > 1.2 * STUDY.swapout_ratio()


def test_base_kernel_predicted_within_the_stated_tolerances():
    held = STUDY.held_out().set_index("configuration")
    thr = held.loc["base"]
    assert abs(thr["predicted"] / thr["published"] - 1) < 0.25
    share = held.loc["base, __add_to_swap_cache"]
    assert 0.5 < share["predicted"] / share["published"] < 2.0


@pytest.mark.xfail(strict=True, reason="known miss: base throughput predicted 7.4% high with seed 004's costs, "
                   "published stddev 1%; and the insert site's spinning (17.0% for 9.82%, -67% for -31.6%)")
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


def test_the_delay_split_takes_the_tree_lock_once_a_thp_at_the_insert():
    """Split first, each of a THP's 512 pages takes the tree lock at each of the four sites; delayed, the
    insert takes it once a THP (one hold for its 512 entries) and the rest 512 times: the network's count
    (locks.Critical.count), so acquisitions and spinning are per acquisition, as a queued lock serves them.
    Every fault a THP here (pressure_large_share 1: no 4K page enters the swap cache alone)."""
    m = STUDY.fit().model.set(processes=16, swap_device="pmem", folio_kb=2048, pressure_large_share=1.0)
    base, patched = (m.configure(variant=v).solve().details["locks"] for v in ("base", "base+patchset"))
    sites = ("__add_to_swap_cache", "__test_set_page_writeback", "test_clear_page_writeback", "__remove_mapping")
    acq = base.sites.loc[list(sites), "acquisitions_per_s"]
    assert acq.to_numpy() == pytest.approx(acq.iloc[0], rel=1e-12)
    assert base.locks.loc["swapcache", "acquisitions_per_s"] == pytest.approx(4 * acq.iloc[0], rel=1e-12)
    p = patched.sites
    for col in ("acquisitions_per_s", "spin_share_pct"):
        assert p.loc["__add_to_swap_cache", col] == pytest.approx(p.loc["__remove_mapping", col] / 512, rel=1e-12)
    assert patched.locks.loc["swapcache", "acquisitions_per_s"] == pytest.approx(
        p.loc["__remove_mapping", "acquisitions_per_s"] * (3 + 1 / 512), rel=1e-12)


def test_the_profile_and_the_gain_agree_on_one_thp_share():
    """A check between the thread's own rows: the THP share at which the model's insert site spins
    -31.6% less (the published profile's change) gives the published throughput and swap-out changes
    within issue 35's 10 points and the elapsed time within 2 (the windows test's), and a share strictly
    inside (0, 1): the 4K rest is what still enters the swap cache a page at a time."""
    c = STUDY.thp_share_from_profile()
    assert 0.0 < c["thp_share"] < 1.0 and c["spin"] == pytest.approx(-31.6, abs=0.01)
    assert abs(c["throughput"] - 10.6) <= 10 and abs(c["swapout"] - 12.1) <= 10 and abs(c["time"] - -7.9) <= 2
    with pytest.raises(ValueError, match="spin_change_pct"):  # more than every page a THP could give
        STUDY.thp_share_from_profile(-100.5)
    # the published values' ends: 9.82 +- 8% and 6.72 +- 2% (LKP's %stddev), taken apart
    lo, hi = STUDY.spin_change_range_pct()
    assert (lo, hi) == pytest.approx((100 * (6.72 * 0.98 / (9.82 * 1.08) - 1), 100 * (6.72 * 1.02 / (9.82 * 0.92) - 1)))
    shares = [STUDY.thp_share_from_profile(x)["thp_share"] for x in (lo, hi)]
    assert min(shares) < c["thp_share"] < max(shares)


def test_the_swap_cache_holds_the_in_flight_thp_tails_the_profile_implies():
    """A third row, meminfo.SwapCached (+3807 KiB with the patch): a THP enters the swap cache whole and
    leaves it a subpage at a time, so at the profile's THP share the in-flight tails give the rise within
    a factor 1.5 (the loop's time per subpage is mostly tree-lock waiting, the model's), where every page
    a THP gives more than twice it."""
    pub = STUDY.data().set_index(["variant", "metric"])["value"]
    rise = pub[("base+patchset", "swap_cached_kib")] - pub[("base", "swap_cached_kib")]
    at_profile = STUDY.swap_cached_rise_kib(STUDY.thp_share_from_profile()["thp_share"])
    assert rise / 1.5 <= at_profile <= rise * 1.5
    assert STUDY.swap_cached_rise_kib(1.0) > 2 * rise


def test_the_delay_split_gain_within_10_points():
    """Issue 35's target, from seed 004's costs with nothing fitted here: the throughput gain +15.9% for
    +10.6% and swap-out +10.8% for +12.1%, both inside their 90% bands (+20.8% and +13.9% while every
    fault was taken for a THP: 10.2 points off)."""
    held = STUDY.held_out()
    change = held[held["metric"].isin(["vm_scalability_throughput_kib_s_change_pct", "swapout_kib_s_change_pct"])]
    assert len(change) == 2 and (change["error"].abs() <= 10).all()
    assert ((change["lo"] <= change["published"]) & (change["published"] <= change["hi"])).all()


def test_the_thp_setting_is_the_lkp_jobs():
    """defrag=never (intel/lkp-tests jobs/vm-scalability-swap.yaml, July 2016 - April 2017): a THP fault may
    not reclaim or compact, so the fill's faults are THPs and half of those after it at the prediction;
    reclaim swaps the fill's first. By hand from the swapped share s: written 1 - s + s/2, swapped
    ((1 - s) + (2s - 1)/2) / s (s > 1/2: the fill is swapped whole)."""
    assert STUDY.source()["model"]["thp_defrag"] == "never"
    m = STUDY._configured()
    assert m.thp_defrag == "never" and not m.large_fault_may_reclaim() and m.pressure_large_share == 0.5
    s = m._swapped_share()
    assert 0.5 < s < 1
    assert m.large_fault_share() == pytest.approx(1 - s + s / 2)
    assert m.swapped_large_share() == pytest.approx(((1 - s) + (2 * s - 1) / 2) / s)
    assert STUDY.at_fill_floor()["thp_share"] == pytest.approx((1 - s) / s)


def test_the_fill_alone_agrees_with_the_threads_rows():
    """A check between the thread's rows, not a prediction: with every fault after the fill a 4K one (the
    fewest THPs defrag=never gives here), the gain is within 2 points of the published +10.6%, the time
    within 2 of -7.9%, the insert's spin change within 10 of -31.6% and the SwapCached rise within a
    factor 1.5 of 3807 KiB; with every fault a THP none of the four holds."""
    pub = STUDY.data().set_index(["variant", "metric"])["value"]
    rise = pub[("base+patchset", "swap_cached_kib")] - pub[("base", "swap_cached_kib")]
    p = pub["base+patchset"]
    f, every = STUDY.at_fill_floor(), STUDY.changes(pressure_large_share=1.0)
    for c, holds in ((f, True), (every, False)):
        checks = [abs(c["throughput"] - p["vm_scalability_throughput_kib_s_change_pct"]) <= 2,
                  abs(c["time"] - p["real_time_s_change_pct"]) <= 2,
                  abs(c["spin"] - p["cycles_share_pct_change_pct"]) <= 10,
                  rise / 1.5 <= STUDY.swap_cached_rise_kib(c["thp_share"]) <= 1.5 * rise]
        assert all(checks) if holds else not any(checks), (c, checks)


def window_at_published_gain(study, processes):
    """(swap-out change, elapsed-time change) in % that the model's base loop and exit give at the
    published throughput gain: the same bytes swapped, the exit unchanged by the patch."""
    pub = study.data().set_index(["variant", "metric"])["value"]
    gain = 1 + pub[("base+patchset", "vm_scalability_throughput_kib_s_change_pct")] / 100
    m = study.fit().model.set(processes=processes, swap_device="pmem", folio_kb=2048)
    base, patched = (m.configure(variant=v).solve() for v in ("base", "base+patchset"))
    assert patched["exit_time_s"] == pytest.approx(base["exit_time_s"])
    loop, exit_s = base["real_time_s"] - base["exit_time_s"], base["exit_time_s"]
    after = loop / gain + exit_s
    return 100 * ((loop + exit_s) / after - 1), 100 * (after / (loop + exit_s) - 1)


def test_the_windows_give_the_published_swapout_and_time_at_the_published_gain():
    """+7.3% for +12.1% swap-out, -6.8% for -7.9% elapsed: the windows are not what the gain misses."""
    so, time = window_at_published_gain(STUDY, 16)
    assert abs(so - 12.1) <= 6 and abs(time - -7.9) <= 2
    held = STUDY.held_out().set_index(["metric", "configuration"])
    r = held.loc[("real_time_s_change_pct", "base+patchset")]
    assert r["lo"] <= r["predicted"] <= r["hi"] < 0
