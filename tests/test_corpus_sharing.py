"""Which costs the bundled sources share in the joint fit."""

import warnings

import pytest

from mmcost import studies
from mmcost.corpus import fit_all, sharing


def test_a_per_primitive_cost_is_per_cpu_model_and_a_kernel_cost_per_era_at_the_machines_speed():
    k = sharing.keys(studies.get("small_thp_swapout"))  # Ampere Altra, v6.6
    assert k["tlbi_us"] == ("tlbi_us@cpu:ampere-altra", None)
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:6", "log_machine@cpu:ampere-altra")
    k = sharing.keys(studies.get("swapcache_wb_tags"))  # Haswell-EP, v4.7
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:4", "log_machine@cpu:haswell-ep")


def test_a_study_predicting_with_another_sources_fit_shares_that_sources_machine():
    """Roberts v5 names no machine of its own: it predicts with seed 000's fit on the Altra."""
    k = sharing.keys(studies.get("roberts_mthp_swapout_v5"))
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:6", "log_machine@cpu:ampere-altra")


def test_a_fitted_parameter_without_a_prior_is_its_sources_own():
    """swap_alloc_locks fits CPU-second totals of one build: no other source has them."""
    study = studies.get("swap_alloc_locks")
    k = sharing.keys(study)
    assert all(k[n] == (f"{n}@source:swap_alloc_locks", None) for n in study.free)


def test_the_joint_fit_shares_one_cost_across_machines_and_fits_each_source_once():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = fit_all()
    sources = {m.source for m in joint.members}
    assert "kvm_6_18_swapout" in sources and "kvm_6_18_memcgs" not in sources  # the same rows: one member
    table = joint.table().set_index("parameter")
    users = table.loc["reclaim_us_per_folio@era:6", "sources"]
    assert "small_thp_swapout" in users and "kvm_6_18_swapout" in users
    # every global with a prior is within 5 sigma of it, or the report would show a cost bent to fit
    pulls = table["pull"].dropna().abs()
    assert (pulls < 5).all(), pulls[pulls >= 5]
    assert joint.params["log_machine@cpu:generic-x86"] != pytest.approx(0.0, abs=1e-6)  # the data move it
