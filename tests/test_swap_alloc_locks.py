"""Seed 003 (swap_alloc_locks): the global si->lock build model, its accounting, invariances and study."""

import numpy as np
import pytest

import mmcost
from mmcost import swap_alloc_lock
from mmcost.swap_alloc_lock import SwapAllocLockModel


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


def test_study_holds_out_each_number_of_a_folio_size():
    """Each of a folio size's four numbers predicted by a fit to the other three: within 2.5%."""
    from mmcost import studies

    held = studies.get("swap_alloc_locks").held_out()
    assert list(held.columns) == studies.HELD_OUT_COLUMNS and len(held) == 8
    assert (held["error"].abs() / held["published"]).max() < 0.025
