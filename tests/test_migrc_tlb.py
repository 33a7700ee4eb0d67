"""Seed 001 (migrc): the TLB model fitted to the published counters.

The tolerances are issue 7's: shootdown interrupts per CPU and itlb.itlb_flush
within 10% before and after. The cover letter's rounded claims are checked
against the model's predicted changes, which the fit never sees."""

import warnings

import numpy as np
import pandas as pd
import pytest
from mmcost import datasets, studies
from mmcost.studies.migrc_tlb import SCENARIOS

STUDY = studies.get("migrc_tlb")


@pytest.fixture(scope="module")
def seed():
    return datasets.load("migrc_tlb")


@pytest.fixture(scope="module")
def fit(seed):
    return STUDY.fit()


def test_shootdowns_per_cpu_and_itlb_flushes_within_10_percent(fit):
    res = fit.residuals
    for variant in ("before", "after"):
        part = res[(res["variant"] == variant) & (res["metric"] == "tlb_shootdowns")]
        assert len(part) == 16
        assert part["predicted"].mean() == pytest.approx(part["measured"].mean(), rel=0.10)
        itlb = res[(res["variant"] == variant) & (res["metric"] == "itlb_flush_count")].iloc[0]
        assert itlb["predicted"] == pytest.approx(itlb["measured"], rel=0.10)


def test_the_after_itlb_count_follows_from_the_before_kernel(seed):
    """Hold out the after-kernel itlb.itlb_flush: its events per full flush,
    calibrated on the before kernel, must carry over."""
    data = STUDY.fit_rows()
    out = (data["variant"] == "after") & (data["metric"] == "itlb_flush_count")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refit = STUDY.model().fit(data[~out], free=list(STUDY.free))
    assert refit.model.evaluate(data[out])[0] == pytest.approx(data.loc[out, "value"].iloc[0], rel=0.10)


@pytest.mark.parametrize("metric", ["itlb_flush_count_change_pct", "tlb_shootdowns_change_pct", "itlb_load_miss_count_change_pct"])
def test_cover_letter_claims_hold_in_the_model(fit, seed, metric):
    claim = seed[(seed["experiment"] == "cover_letter_claims") & (seed["metric"] == metric)]
    assert claim["bound"].iloc[0] == "at_most"
    predicted = fit.model.evaluate(claim)[0]
    assert predicted <= claim["value"].iloc[0]


def test_cover_letter_runtime_claim_is_refuted_by_the_refill_measured_on_this_kernel(fit, seed):
    """The hypothesis for seed 001's missing gain (a refill walk after a full
    flush costs several DRAM latencies in a KVM guest), measured with
    mmcost-probe refill on this project's guest (data/kvm_6_18_machine/
    tlb_refill.csv): a refill costs tens of ns, and even a whole load of a
    1 GiB random chase as the price of every walk leaves the prediction more
    than 2 points from -5.7%."""
    claim = seed[(seed["experiment"] == "cover_letter_claims") & (seed["metric"] == "runtime_s_change_pct")]
    published = STUDY.measured_runtime_change_pct()
    assert fit.model.evaluate(claim)[0] > claim["value"].iloc[0]  # the claim (at most -5%) is not reached
    rp = STUDY.refill_prediction()
    raw = pd.read_csv(datasets.path("kvm_6_18_machine") / "tlb_refill.csv")
    fits = raw[raw["case"] == "fits_stlb"]
    # the measured refill: us per flush over the hot pages (all refilled: the set fits the STLB), in ns
    assert rp["measured_refill_ns"] == pytest.approx(np.median(fits["refill_us_per_flush"] * 1e3
                                                               / fits["hot_pages_touched"]))
    assert 5 < rp["measured_refill_ns"] < 50  # tens of ns: a walk over cached page-table lines, not DRAM's
    # the bound on any walk: a whole load of the 4K chase over 1 GiB, which the same chase on 2M pages undercuts
    big = raw[(raw["bytes"] == 1 << 30) & (raw["stride"] == 1)].groupby("huge")["base_ns_per_load"].median()
    assert rp["load_ns_1gib"] == pytest.approx(big[0]) and big[1] < big[0]
    # the model with every walk at the measured refill, and at the bound, against the published change
    row = pd.DataFrame([{"metric": "runtime_s_change_pct", "variant": "after", "baseline": "before"}])
    for ns in (rp["measured_refill_ns"], rp["load_ns_1gib"]):
        assert fit.model.set(refill_ns=ns).evaluate(row)[0] - published > 2.0
    # what -5.7% would need: more than twice the bound, and the root is one
    assert rp["needed_refill_ns"] > 2 * rp["load_ns_1gib"]
    assert fit.model.set(refill_ns=rp["needed_refill_ns"]).evaluate(row)[0] == pytest.approx(published, abs=0.01)


def test_the_refill_measurement_table_counts_only_what_refills():
    tab = STUDY.refill_measurements()
    counted = tab[tab["case"].isin(["fits_stlb", "cold_traffic"])]
    assert np.isfinite(counted["ns_per_refill"]).all()
    assert tab[~tab["case"].isin(["fits_stlb", "cold_traffic"])]["ns_per_refill"].isna().all()
    assert (counted["ns_per_refill_min"] <= counted["ns_per_refill"]).all()
    # a 4K chase over 1 GiB misses the STLB in its steady state: slower per load than the same chase on 2M pages
    big = tab[(tab["bytes"] == 1 << 30) & (tab["stride"] == 1)].set_index("huge")["base_ns_per_load"]
    assert big[0] > big[1]


def test_predictions_follow_the_physics(fit):
    rows = STUDY.scenario_rows()
    rows["value"] = fit.model.evaluate(rows)
    v = rows.set_index(["scenario", "metric", "variant"])["value"]
    chg = "runtime_s_change_pct"
    # a guest pays more per flush than bare metal, so migrc saves more there
    assert v[("seed 001 machine", chg, "after")] < v[("bare metal", chg, "after")] < 0
    # a fast node that holds the working set leaves nothing to migrate
    assert v[("1:4 of 100 GiB", chg, "after")] == pytest.approx(0.0, abs=1e-9)
    # bigger calls: fewer flushes before migrc, and less for migrc to save
    sd = "tlb_shootdowns_per_s"
    assert v[("512-folio calls", sd, "before")] < v[("seed 001 machine", sd, "before")] / 10
    assert v[("512-folio calls", chg, "after")] > v[("seed 001 machine", chg, "after")]
    # arm64 has no shootdown IPIs at all
    assert v[("arm64, 16 CPUs", sd, "before")] == 0


def test_simulated_solver_reproduces_the_fitted_counts(fit):
    for variant in ("before", "after"):
        tm = fit.model.configure(variant=variant)
        a, s = tm.analytic(), tm.simulate(horizon_s=20, replications=8, seed=2026, progress=False)
        lo, hi = s.rates.loc["shootdowns", ["lo", "hi"]]
        assert lo <= a.rate("shootdowns") <= hi


def test_unknown_variant_and_bad_rows_are_refused(fit):
    rows = pd.DataFrame({"metric": ["runtime_s"], "variant": ["sideways"]})
    with pytest.raises(ValueError, match="variant"):
        fit.model.evaluate(rows)
    rows = pd.DataFrame({"metric": ["runtime_s"], "variant": ["after"], "cpus": [0]})
    with pytest.raises(ValueError, match="cpus"):
        fit.model.evaluate(rows)
    assert set(SCENARIOS) >= {"bare metal", "arm64, 16 CPUs"}
    assert np.isfinite(fit.model.evaluate(pd.DataFrame({"metric": ["runtime_s"], "variant": ["after"]}))).all()


def test_held_out_reports_the_runtime_change_and_the_claims(fit):
    held = STUDY.held_out()
    assert list(held.columns) == studies.HELD_OUT_COLUMNS
    runtime = held.iloc[0]
    assert runtime["metric"] == "runtime_s_change_pct" and runtime["lo"] <= runtime["predicted"] <= runtime["hi"]
    assert runtime["published"] == pytest.approx(100 * (913.210 / 968.783 - 1))


def test_the_per_folio_counterfactual_has_a_band_and_the_batch_fill_ratio(fit):
    """Without batching every folio's PTE is its own flush round: at the same
    demotion rate, shootdowns grow by the batch fill (32 folios per call),
    up to the small other-round share; kswapd's load and the runtime grow."""
    cf = STUDY.per_folio_counterfactual(n_samples=60).set_index("quantity")
    before = fit.model.evaluate(pd.DataFrame([{"metric": "tlb_shootdowns_per_s", "variant": "before"}]))[0]
    assert cf.loc["shootdowns/CPU/s", "best"] / before == pytest.approx(32.0, rel=0.02)
    change = cf.loc["runtime change vs batched %"]
    assert 0 < change["lo"] < change["best"] < change["hi"]
    assert cf.loc["kswapd busy % (per-folio)", "best"] > cf.loc["kswapd busy % (batched)", "best"]


def test_the_named_gap_is_what_the_readme_says():
    """The README names the missing mechanism with these numbers; if the model
    closes the gap, this fails and the README must change with it."""
    gap = STUDY.missing_mechanism()
    assert gap["sys_s_saved"] < 0.01 * gap["user_s_saved"]  # the gain is user time
    assert 40 < gap["measured_us_per_avoided_shootdown"] < 50  # "about 45 us"
    assert gap["model_us_per_avoided_shootdown"] < gap["measured_us_per_avoided_shootdown"] / 3  # "about 6 us"
    assert 95 < gap["misses_per_avoided_shootdown"] < 115  # "~103 TLB misses saved per avoided shootdown"
