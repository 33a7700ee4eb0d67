"""Seed 004 (swapcache_wb_tags): the whole v4.7-era swap-out path fitted to the base kernel.

The base kernel's throughput, swap-out rate and four call-site shares are
fitted within their published %stddev; the patched kernel is held out: its
throughput change and the insert site's share change within 10 points;
the swap-out change (the same number in the model, +36.0% for +22.3%) and
the delete site's share change (-19.2% for -33.1%) are known misses."""

import numpy as np
import pytest
from mmcost import studies

STUDY = studies.get("swapcache_wb_tags")


def test_the_kernel_is_placed_in_its_era():
    m = STUDY.model()
    assert m.kernel == "4.7"
    assert m.switch("slot_cache") is False and m.switch("swapcache_lock_partitions") == 1
    assert m.configure(variant="base").switch("writeback_tags") is True
    assert m.configure(variant="base+patch").switch("writeback_tags") is False


def test_base_kernel_is_fitted_within_its_noise():
    fit = STUDY.fit()
    assert fit.chi2_dof < 1


def test_held_out_patch_keeps_the_sign_and_removes_the_tag_sites():
    held = STUDY.held_out().set_index("configuration")
    gone = held.loc[[c for c in held.index if "writeback" in c], "predicted"]
    assert np.all(gone == -100.0)
    gain = held[held["metric"] == "swapout_kib_s_change_pct"].iloc[0]
    assert gain["predicted"] > 0 and gain["lo"] <= gain["predicted"] <= gain["hi"]


def test_swapped_share_comes_from_the_base_kernel():
    assert STUDY.swapped_share() == pytest.approx(1207402 / 2506952)


def _change(metric, site=""):
    held = STUDY.held_out()
    row = held[(held["metric"] == metric) & held["configuration"].str.endswith(site)]
    return row.iloc[0]


def test_the_tree_lock_stays_contended_after_the_patch():
    """The published profile: the insert site spins 23% less with 22-28% more pages."""
    r = _change("cycles_share_pct_change_pct", "__add_to_swap_cache")
    assert abs(r["error"]) <= 10
    m = STUDY.fit().model.set(processes=8, swap_device="pmem")
    after = m.configure(variant="base+patch").solve().details["locks"].lock_values
    assert after["swapcache"]["utilization"] > 0.5


@pytest.mark.xfail(strict=True, reason="known miss: the delete site spins 19.2% less for 33.1% published (13.9 "
                   "points): reclaim_us_per_folio stays at its 1.5 us prior (2.5 before the reclaim engine moved the "
                   "reference walks out of it; the base rows barely pull it, chi2 0.66 at 1.5, 0.13 at 3.6); at 2.5 "
                   "it would be -26.3%")
def test_the_delete_site_spins_less_as_published():
    r = _change("cycles_share_pct_change_pct", "__remove_mapping")
    assert abs(r["error"]) <= 10


def test_throughput_change_within_10_points():
    assert abs(_change("vm_scalability_throughput_kib_s_change_pct")["error"]) <= 10


def test_the_line_cost_is_within_its_prior():
    fit = STUDY.fit()
    p = fit.model.params["lock_line_us"].prior
    assert abs(fit.params["lock_line_us"] - p.value) <= 2 * p.width


@pytest.mark.xfail(strict=True, reason="known miss: +36.0% for +22.3% (the swapped share is the base kernel's, so "
                   "swap-out and throughput change alike)")
def test_swapout_change_within_10_points():
    assert abs(_change("swapout_kib_s_change_pct")["error"]) <= 10
