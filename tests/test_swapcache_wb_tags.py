"""Seed 004 (swapcache_wb_tags): the whole v4.7-era swap-out path fitted to the base kernel.

The base kernel's throughput, swap-out rate and four call-site shares are
fitted within their published %stddev; the patched kernel is held out. The
sign of the swap-out gain is the mechanism's; its size is an open miss
(held_out() reports it, the notebook discusses it)."""

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
