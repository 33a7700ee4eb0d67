"""The seed 003 and 004 lock models: mechanism switches, invariances, errors."""

import numpy as np
import pandas as pd
import pytest

import mmcost
from mmcost import swap_alloc_lock
from mmcost.swap_alloc_lock import SwapAllocLockModel
from mmcost.swap_cache_lock import SITES, SwapCacheLockModel, site_of


def test_writeback_tag_switch_removes_exactly_the_two_tag_sites():
    m = SwapCacheLockModel()
    p = m.values()
    before = {c.site for c in m.system(8, True, p).critical}
    after = {c.site for c in m.system(8, False, p).critical}
    assert before == {s for s, _ in SITES}
    assert before - after == {"__test_set_page_writeback", "test_clear_page_writeback"}
    assert all(c.irq_disabled for c in m.system(8, True, p).critical)  # spin_lock_irq / _irqsave


def test_swap_cache_model_predictions_follow_the_lock():
    m = SwapCacheLockModel()
    rows = pd.DataFrame({"metric": ["swapout_kib_s", "swapout_kib_s"], "variant": ["base", "base+patch"], "processes": [8, 8]})
    base, patched = m.evaluate(rows)
    assert patched > base  # fewer critical sections per page
    one = m.evaluate(rows.assign(processes=1))
    p = m.values()
    # one process never waits: 4 KiB per (work + 4 or 2 holds)
    np.testing.assert_allclose(one, [4e6 / (p["work_us"] + 4 * p["hold_us"]), 4e6 / (p["work_us"] + 2 * p["hold_us"])], rtol=1e-12)
    assert site_of("_raw_spin_lock_irq.__add_to_swap_cache.add_to_swap_cache") == "__add_to_swap_cache"
    with pytest.raises(ValueError, match="unknown variant"):
        m.evaluate(rows.assign(variant="v2"))


def test_swap_alloc_model_accounting():
    m = SwapAllocLockModel()
    p = m.values()
    after = m.totals(96, "after", p)
    assert after["sys_time_s"] == p["sys_other_cpu_s"] + p["lock_hold_cpu_s"]
    assert after["real_time_s"] == pytest.approx((p["user_cpu_s"] + after["sys_time_s"]) / 96)
    before = m.totals(96, "before", p)
    # every CPU busy: user + sys (spinning included) = N x real
    assert p["user_cpu_s"] + before["sys_time_s"] == pytest.approx(96 * before["real_time_s"], rel=1e-9)
    assert before["real_time_s"] >= p["lock_hold_cpu_s"]  # the global lock serialises its holds
    one = m.totals(1, "before", p)
    assert one["sys_time_s"] == pytest.approx(after["sys_time_s"], rel=1e-12)  # nobody to wait for


def test_swap_alloc_results_do_not_depend_on_the_page_count(monkeypatch):
    m = SwapAllocLockModel()
    p = m.values()
    ref = m.totals(48, "before", p)
    monkeypatch.setattr(swap_alloc_lock, "PAGES", 3.7e4)
    other = m.totals(48, "before", p)
    assert other["real_time_s"] == pytest.approx(ref["real_time_s"], rel=1e-9)
    assert other["sys_time_s"] == pytest.approx(ref["sys_time_s"], rel=1e-9)


def test_swap_alloc_fit_reproduces_seed003():
    df = mmcost.datasets.load("swap_alloc_locks")
    data = df[(df["experiment"] == "make_j96") & (df["folio_kb"] == 4) & df["metric"].isin(SwapAllocLockModel.METRICS)]
    f = SwapAllocLockModel().fit(data)
    np.testing.assert_allclose(f.residuals["predicted"], f.residuals["measured"], rtol=0.005)
    table = f.model.contention_table(96)
    assert table["lock_utilization"].item() > 0.99 and table["contended"].item() == pytest.approx(table["acquisitions"].item(), rel=1e-3)
