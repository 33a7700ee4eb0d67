"""Seed 000 (small-sized THP swap-out): the swap model fitted to the 3 x 3 table.

Issue 8's criteria: leave-one-out median absolute error at most 5 points and
maximum at most 15 over the 9 cells; every fitted parameter inside its bounds
and reported with a finite error."""

import math

import numpy as np
import pytest
from mmcost import datasets
from mmcost.small_thp_swapout import SmallThpSwapoutModel, fit_rows


@pytest.fixture(scope="module")
def data():
    return fit_rows(datasets.load("small_thp_swapout"))


@pytest.fixture(scope="module")
def fit(data):
    return SmallThpSwapoutModel().fit(data)


def test_change_errors_follow_from_the_published_relative_stddevs(data):
    row = data[(data["variant"] == "baseline") & (data["folio_kb"] == 64)].iloc[0]
    # -44.1% with 1.9% rsd against the 4K baseline's 3.4%, 5 runs each
    assert row["stddev"] == pytest.approx((100 - 44.1) * math.hypot(0.019, 0.034) / math.sqrt(5))


def test_leave_one_out_meets_the_issue_tolerances(fit):
    loo = fit.loo()
    err = (loo["predicted"] - loo["measured"]).abs()
    assert len(err) == 9
    assert err.median() <= 5.0
    assert err.max() <= 15.0


def test_fitted_parameters_are_physical_and_have_errors(fit):
    p = fit.model.params
    for name in fit.names:
        assert p[name].lower < fit.params[name] < p[name].upper
        assert np.isfinite(fit.stderr[name]) and fit.stderr[name] > 0
    assert not fit.warnings


def test_the_mechanisms_order_the_cells_as_published(fit, data):
    """Split 64K folios lose to 4K, whole 64K folios beat it, 2M beats both."""
    pred = fit.residuals.set_index(["variant", "folio_kb"])["predicted"]
    assert pred[("baseline", 64)] < 0 < pred[("swap-file-small-thp", 64)] < pred[("baseline", 2048)]
    # patch 1 changes no mechanism
    assert pred[("remove-huge-flag", 64)] == pytest.approx(pred[("baseline", 64)])


def test_seed_004_on_the_whole_path_fits_the_base_kernel_and_predicts_the_kept_sites():
    """v4.8 swap-out path fitted to the base kernel only; the two call sites that
    keep the tree lock are predicted for the patched kernel."""
    import warnings

    from mmcost.swapcache_wb_tags import SwapWSeqModel, swapped_share

    df = datasets.load("swapcache_wb_tags")
    lkp = df[df["experiment"] == "vm_scalability_swap_w_seq"]
    model = SwapWSeqModel(swapped_share=swapped_share(df))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = model.fit(lkp[(lkp["variant"] == "base") & lkp["metric"].isin(model.METRICS)])
    assert fit.chi2_dof < 1  # within the published %stddev
    after = lkp[(lkp["variant"] == "base+patch") & (lkp["metric"] == "cycles_share_pct")]
    pred = fit.model.evaluate(after)
    kept = after["value"].to_numpy() > 0
    assert np.all(np.abs(pred[kept] - after["value"].to_numpy()[kept]) < 1.5)  # points of CPU share
    assert np.all(pred[~kept] == 0)
    gain = fit.model.evaluate(lkp[(lkp["variant"] == "base+patch") & (lkp["metric"] == "swapout_kib_s_change_pct")])[0]
    assert gain > 0  # the sign of the published +22.3%; its size is the notebook's open question


def test_without_madvise_2m_faults_after_the_limit_fall_back():
    m = SmallThpSwapoutModel(madvise=False)
    assert m.swap_model(folio_kb=2048).large_share == pytest.approx(40 / 70)
    assert m.swap_model(folio_kb=64).large_share == 1.0  # below 256K the rule does not apply
    assert SmallThpSwapoutModel().swap_model(folio_kb=2048).large_share == 1.0
