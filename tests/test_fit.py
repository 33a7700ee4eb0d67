"""The shared fitting workflow: recovery, coverage, LOO, bootstrap, bands, errors."""

import pickle
import warnings

import re

import numpy as np
import pandas as pd
import pytest

from mmcost.fit import NotIdentifiableWarning, PoorFitWarning
from mmcost.model import Parameter, Prior
from models_for_tests import DecayModel, LinearModel, ProductModel, SpeedupModel

X = np.arange(1, 13, dtype=float)


def data(y, sd, **cols):
    return pd.DataFrame({"metric": "runtime_s", "value": y, "stddev": sd, "cpus": X, **cols})


def linear_data(seed, sd=0.3):
    rng = np.random.default_rng([seed, 5])
    return data(2.0 + 0.7 * X + rng.normal(0, sd, X.size), sd)


def test_linear_fit_equals_weighted_least_squares_closed_form():
    df = linear_data(1)
    f = LinearModel().fit(df)
    a = np.column_stack([np.ones_like(X), X]) / 0.3
    b = df["value"].to_numpy() / 0.3
    coef, *_ = np.linalg.lstsq(a, b, rcond=None)
    cov = np.linalg.inv(a.T @ a)  # published sigma: absolute
    np.testing.assert_allclose([f.params["c0_s"], f.params["c1_s_per_cpu"]], coef, rtol=1e-7)
    np.testing.assert_allclose([f.stderr["c0_s"], f.stderr["c1_s_per_cpu"]], np.sqrt(np.diag(cov)), rtol=1e-6)
    assert f.absolute_sigma and f.dof == X.size - 2


def test_loo_matches_hat_matrix_formula():
    # For linear least squares, the leave-one-out residual is e_i / (1 - h_ii)
    # with H = A (A^T A)^-1 A^T (Cook & Weisberg, Residuals and Influence in
    # Regression, 1982): an exact check of the refit-per-point loop.
    df = linear_data(2)
    f = LinearModel().fit(df)
    a = np.column_stack([np.ones_like(X), X]) / 0.3
    h = np.diag(a @ np.linalg.inv(a.T @ a) @ a.T)
    loo = f.loo()
    np.testing.assert_allclose(loo["residual"], f.residuals["residual"] / (1 - h), rtol=1e-6)
    assert list(loo.columns) == list(f.residuals.columns)
    assert set(loo.attrs["summary"]) == {"rms_pull", "rmse", "median_abs_rel_error"}
    assert loo.attrs["summary"]["rms_pull"] > np.sqrt(np.mean(f.residuals["pull"] ** 2))  # held-out points fit worse


def test_coverage_of_reported_standard_errors():
    # 68% intervals must cover the truth in about 68% of trials (binomial sd
    # over 300 trials is 2.7%, so 0.60..0.76 is a 3-sigma band).
    rng = np.random.default_rng(20261201)
    truth = dict(a_s=8.0, b_per_cpu=0.25)
    hits = {k: 0 for k in truth}
    trials = 300
    y0 = truth["a_s"] * np.exp(-truth["b_per_cpu"] * X)
    sd = 0.05 * y0 + 0.02
    for _ in range(trials):
        f = DecayModel().fit(data(y0 + rng.normal(0, sd), sd))
        for k in truth:
            hits[k] += abs(f.params[k] - truth[k]) <= f.stderr[k]
    for k in truth:
        assert 0.60 <= hits[k] / trials <= 0.76, (k, hits[k] / trials)


def test_bootstrap_spread_matches_covariance():
    f = LinearModel().fit(linear_data(3))
    b = f.bootstrap(400, seed=1)
    sd = b.bootstrap_samples.std()
    for k in f.names:
        assert sd[k] == pytest.approx(f.stderr[k], rel=0.15)
    pred = b.predict(pd.DataFrame({"metric": ["runtime_s"], "cpus": [20.0]}), method="bootstrap", n_samples=2000)
    assert pred["lo"].item() < pred["best"].item() < pred["hi"].item()


def test_prediction_band_matches_linear_theory():
    f = LinearModel().fit(linear_data(4))
    x = np.array([0.0, 6.0, 30.0])
    pred = f.predict(pd.DataFrame({"metric": "runtime_s", "cpus": x}), level=0.9, n_samples=20000, seed=3)
    g = np.column_stack([np.ones_like(x), x])
    sd = np.sqrt(np.einsum("ij,jk,ik->i", g, f.covariance.to_numpy(), g))
    np.testing.assert_allclose((pred["hi"] - pred["lo"]) / (2 * 1.6449 * sd), 1.0, rtol=0.05)
    np.testing.assert_allclose(pred["best"], f.params["c0_s"] + f.params["c1_s_per_cpu"] * x, rtol=1e-12)
    # an empirical model's band is its parameters' alone (no structural error unless asked)
    assert list(pred.columns) == ["metric", "cpus", "best", "mean", "lo", "hi", "dropped_draws", "uninformative"]
    assert (pred["dropped_draws"] == 0).all()


def test_priors_pull_and_need_a_source():
    df = linear_data(5)
    free = LinearModel().fit(df)
    wrong = LinearModel().with_parameters(c1_s_per_cpu=dict(prior=Prior(1.5, 1e-4, "test: a deliberately wrong literature value")))
    with pytest.warns(PoorFitWarning):  # the prior drags the slope off the data
        tight = wrong.fit(df)
    assert tight.params["c1_s_per_cpu"] == pytest.approx(1.5, abs=1e-3)
    assert tight.chi2 > free.chi2 * 10
    assert "deliberately wrong" in str(tight)
    with pytest.raises(ValueError, match="source"):
        Prior(1.0, 0.1, "")
    with pytest.raises(ValueError, match="width"):
        Prior(1.0, 0.0, "x")


def test_fixed_parameters_stay_put():
    f = LinearModel().with_parameters(c0_s=2.0).fixed("c0_s").fit(linear_data(6))
    assert f.names == ["c1_s_per_cpu"] and f.model.values()["c0_s"] == 2.0
    assert "(fixed)" in str(f)


def test_unidentifiable_pair_is_flagged():
    df = data(3.0 * X, 0.1)
    with pytest.warns(NotIdentifiableWarning, match="a_s and b_1|near-singular"):
        f = ProductModel().fit(df)
    assert any("a_s" in w and "b_1" in w for w in f.warnings) or any("near-singular" in w for w in f.warnings)
    assert f.params["a_s"] * f.params["b_1"] == pytest.approx(3.0, rel=1e-6)


def test_a_pair_the_rows_see_only_as_a_sum_is_flagged_even_when_priors_split_it():
    """Every row at cpus = 4 sees c0 + 4 c1 only. With priors of 0.5 and 0.05 and 12 rows of sd 0.1, the
    posterior correlation is -4800 / sqrt(1204 x 19600) = -0.988, under the 0.99 limit: the priors decide
    the split, and the fit must say so. At two cpus values the rows separate them: no such warning."""
    priors = dict(c0_s=dict(prior=Prior(2.0, 0.5, "test")), c1_s_per_cpu=dict(prior=Prior(0.7, 0.05, "test")))
    m = LinearModel().with_parameters(**priors)
    one = pd.DataFrame({"metric": "runtime_s", "value": 5.0, "stddev": 0.1, "cpus": np.full(12, 4.0)})
    with pytest.warns(NotIdentifiableWarning, match="c0_s and c1_s_per_cpu move the rows alike"):
        f = m.fit(one)
    assert f.correlation.loc["c0_s", "c1_s_per_cpu"] == pytest.approx(-4800 / np.sqrt(1204 * 19600), abs=1e-3)
    two = one.assign(cpus=np.repeat([2.0, 8.0], 6), value=np.repeat([3.5, 7.7], 6))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        m.fit(two)
    assert not [w for w in seen if "move the rows alike" in str(w.message)]


def test_change_pct_rows_are_derived_from_the_baseline_row():
    # seed 000 style: changes relative to another variant at another folio size
    m = SpeedupModel()
    rows = pd.DataFrame({
        "metric": ["usemem_throughput_kib_s_change_pct"] * 3,
        "variant": ["patched", "base", "patched"],
        "baseline": ["base", "base", "base"],
        "folio_kb": [4, 64, 64],
        "baseline_folio_kb": [pd.NA, 4, 4],
    })
    p = m.values()
    got = m.evaluate(rows)
    np.testing.assert_allclose(got, [100 * (p["speedup_1"] - 1), 100 * (16 ** p["gain_1"] - 1),
                                     100 * (p["speedup_1"] * 16 ** p["gain_1"] - 1)], rtol=1e-12)
    # and a fit to published changes recovers the mechanism parameters
    truth = m.with_parameters(speedup_1=1.3, gain_1=0.2)
    rows = rows.assign(value=truth.evaluate(rows), stddev_pct=np.nan, stddev=0.5).fillna({"baseline_folio_kb": 4})
    f = m.fixed("base_kib_s").fit(rows)
    assert f.params["speedup_1"] == pytest.approx(1.3, rel=1e-6) and f.params["gain_1"] == pytest.approx(0.2, rel=1e-6)


def test_sigma_sources():
    df = pd.DataFrame({"metric": "runtime_s", "cpus": X[:4], "value": [10.0, 20, 30, 0.0],
                       "stddev": [1.0, np.nan, np.nan, np.nan], "stddev_pct": [np.nan, 5.0, np.nan, np.nan]})
    with pytest.warns(PoorFitWarning):  # 10, 20, 30, 0 is no line
        r = LinearModel().fit(df).residuals
    assert list(r["sigma_source"]) == ["stddev", "stddev_pct", "default 5%", "default 5%"]
    np.testing.assert_allclose(r["sigma"][:3], [1.0, 1.0, 1.5])
    assert r["sigma"][3] > 0  # a published zero still gets a scale


@pytest.mark.parametrize(
    "df,match",
    [
        (pd.DataFrame(), "empty"),
        (pd.DataFrame({"value": [1.0]}), "'metric'"),
        (pd.DataFrame({"metric": ["runtime_s"]}), "'value'"),
        (pd.DataFrame({"metric": ["runtime_s", "runtime_s"], "value": [1.0, np.nan], "cpus": [1, 2]}), "row 1"),
        (pd.DataFrame({"metric": ["tlb_shootdowns"], "value": [1.0], "cpus": [1]}), "tlb_shootdowns"),
    ],
)
def test_bad_data(df, match):
    with pytest.raises(ValueError, match=match):
        LinearModel().fit(df)


def test_bad_parameters_and_types():
    with pytest.raises(ValueError, match="c0_s.*outside its bounds"):
        LinearModel().with_parameters(c0_s=1000.0)
    with pytest.raises(ValueError, match="unknown parameter"):
        LinearModel().with_parameters(nope=1.0)
    with pytest.raises(ValueError, match="lower bound"):
        Parameter("x_s", 1.0, "s", 2.0, 1.0)
    with pytest.raises(TypeError, match="DataFrame"):
        LinearModel().fit([1, 2, 3])
    with pytest.raises(ValueError, match="no free parameter"):
        LinearModel().fixed("c0_s", "c1_s_per_cpu").fit(linear_data(1))
    f = LinearModel().fit(linear_data(1))
    with pytest.raises(ValueError, match="level"):
        f.predict(pd.DataFrame({"metric": ["runtime_s"], "cpus": [1]}), level=1.5)
    with pytest.raises(ValueError, match="bootstrap"):
        f.predict(pd.DataFrame({"metric": ["runtime_s"], "cpus": [1]}), method="bootstrap")


def test_reprs_and_pickle():
    f = LinearModel().fit(linear_data(7))
    text, html = str(f), f._repr_html_()
    for needle in ("c0_s", "c1_s_per_cpu", "s/cpu", "chi2/dof"):
        assert needle in text
    assert "<table>" in html and "s/cpu" in html and "c0_s" in repr(f)
    g = pickle.loads(pickle.dumps(f))
    assert g.params == f.params
    pd.testing.assert_frame_equal(g.residuals, f.residuals)


def test_no_warning_for_a_good_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearModel().fit(linear_data(8))


def test_a_parameter_on_its_bound_gets_a_one_sided_profile_limit_not_a_zero_error():
    """y = c0 + c1 x with c1 >= 0 and data falling with x: c1 sits on its
    bound. For a linear model the profile chi2 is a parabola, so the 95%
    one-sided limit has a closed form: with the unconstrained estimate b and
    its error s, chi2(t) - chi2(0) = ((t - b)^2 - b^2) / s^2 = 1.645^2 at
    t = b + sqrt(b^2 + 1.645^2 s^2) (Feldman & Cousins 1998)."""
    from scipy.special import ndtri

    rng = np.random.default_rng([7, 18])
    y = 2.0 - 0.1 * X + rng.normal(0, 0.3, X.size)  # the noise alone slopes +0.06
    df = data(y, 0.3)
    model = LinearModel().with_parameters(c1_s_per_cpu=dict(lower=0.0, value=0.1))
    with pytest.warns(NotIdentifiableWarning, match="c1_s_per_cpu .* is at its lower bound"):
        f = model.fit(df)
    assert f.at_bound == {"c1_s_per_cpu": "lower"} and f.params["c1_s_per_cpu"] == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(f.stderr["c1_s_per_cpu"]) and np.isfinite(f.stderr["c0_s"])
    assert "at its lower bound" in str(f) and "± 0 " not in str(f)
    a = np.column_stack([np.ones_like(X), X]) / 0.3
    (_, b), *_ = np.linalg.lstsq(a, y / 0.3, rcond=None)
    s = np.sqrt(np.linalg.inv(a.T @ a)[1, 1])
    assert b < 0
    z = float(ndtri(0.95))
    assert f.profile_limit("c1_s_per_cpu") == pytest.approx(b + np.sqrt(b**2 + z**2 * s**2), rel=1e-4)


def test_band_draws_keep_the_covariance_and_the_bound_side_keeps_the_correlation():
    """_bounded_gaussian_draws against the Gaussian's closed forms: without a
    bound the sample covariance is the covariance; with parameter 0 on its
    lower bound, it is half-normal (mean m0 + s0 sqrt(2/pi)) and parameter 1
    follows the conditional law m1 + c01/c00 (x0 - m0) with variance
    c11 - c01^2 / c00 (the Schur complement)."""
    from mmcost.fit import _bounded_gaussian_draws

    mean = np.array([1.0, 5.0])
    cov = np.array([[0.04, 0.03], [0.03, 0.09]])
    rng = np.random.default_rng(11)
    free = _bounded_gaussian_draws(mean, cov, [None, None], 200_000, rng)
    assert np.cov(free.T) == pytest.approx(cov, rel=0.02)
    bound = _bounded_gaussian_draws(mean, cov, ["lower", None], 200_000, rng)
    x0, x1 = bound.T
    assert x0.min() >= mean[0]
    assert x0.mean() == pytest.approx(mean[0] + 0.2 * np.sqrt(2 / np.pi), rel=0.01)
    slope = cov[0, 1] / cov[0, 0]
    resid = x1 - (mean[1] + slope * (x0 - mean[0]))
    assert resid.mean() == pytest.approx(0.0, abs=0.003)
    assert resid.var() == pytest.approx(cov[1, 1] - cov[0, 1] ** 2 / cov[0, 0], rel=0.02)
    upper = _bounded_gaussian_draws(mean, cov, [None, "upper"], 1000, rng)
    assert upper[:, 1].max() <= mean[1]


def test_a_covariance_rounding_left_indefinite_still_draws():
    from mmcost.fit import _bounded_gaussian_draws

    cov = np.array([[1.0, 1.0 + 1e-12], [1.0 + 1e-12, 1.0]])  # one eigenvalue -1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = _bounded_gaussian_draws(np.zeros(2), cov, [None, None], 1000, np.random.default_rng(0))
    assert np.isfinite(d).all() and np.allclose(d[:, 0], d[:, 1], atol=1e-5)


def test_a_fit_out_of_evaluations_warns_instead_of_failing():
    """Five exact USL points over a 4% range of N: three coefficients along a
    flat valley. From a naive start (lam = X/N at the smallest N; the USL's
    own analytic start would land on the coefficients) SciPy runs out of
    evaluations; the fit says what that means."""
    from mmcost.usl import UslModel

    n = np.array([138.0, 139, 141, 143, 144])
    df = pd.DataFrame({"metric": "throughput", "cpus": n, "value": n / (1 + 0.5 * (n - 1) + 0.0078125 * n * (n - 1)),
                       "stddev_pct": 1.0})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit = UslModel().fit(df, x0={"lam": float(df["value"].iloc[0] / n[0])})
    assert any(issubclass(w.category, NotIdentifiableWarning) and "not identified" in str(w.message) for w in seen)
    assert any("evaluations" in w for w in fit.warnings)
    assert fit.residuals["pull"].abs().max() < 0.1  # it still reproduces the data


def test_a_band_drops_the_draws_whose_change_baseline_is_zero_and_says_how_many():
    """c0 has the bound 0 and a best value a standard error above it, so the band's clipped draws
    put some at exactly 0: a change against cpus=0 (baseline c0) is not finite there. Those draws
    are dropped for that row only, counted, and warned about (more than 5%); the band is the
    quantiles of the other draws."""
    from mmcost.fit import InfeasibleDrawsWarning

    rng = np.random.default_rng(1)
    f = LinearModel().with_parameters(c0_s=dict(lower=0.0)).fit(data(0.1 + 0.7 * X + rng.normal(0, 0.3, X.size), 0.3))
    assert 0 < f.params["c0_s"] < 2 * f.stderr["c0_s"]
    ask = pd.DataFrame({"metric": ["runtime_s_change_pct", "runtime_s"], "cpus": [4.0, 4.0], "baseline_cpus": [0.0, np.nan],
                        "variant": "x", "baseline": "x"})
    n, seed = 400, 2
    draws = f.sample_params(n, seed)
    zero = draws["c0_s"].to_numpy() == 0.0  # the hand rule: a baseline c0 + c1 * 0 of exactly 0
    assert zero.mean() > 0.05
    with pytest.warns(InfeasibleDrawsWarning, match=rf"{zero.sum()} of {n} parameter draws .* row 0"):
        pred = f.predict(ask, n_samples=n, seed=seed)
    assert list(pred["dropped_draws"]) == [zero.sum(), 0]
    keep = draws[~zero]
    change = 100 * (keep["c1_s_per_cpu"] * 4 / keep["c0_s"])  # (c0 + 4 c1) / c0 - 1
    np.testing.assert_allclose([pred["lo"][0], pred["hi"][0]], np.quantile(change, [0.05, 0.95]), rtol=1e-9)
    np.testing.assert_allclose(pred["mean"][1], (draws["c0_s"] + 4 * draws["c1_s_per_cpu"]).mean(), rtol=1e-12)


def test_a_band_drops_the_draws_a_row_cannot_configure():
    """zswap charges its pool to the memcg: a drawn compression ratio c at or below W / L (1 GiB
    written, 700 MiB limit) leaves no room, and that draw is refused. With fixed_priors the
    ratio is drawn from its prior; the dropped draws are exactly those, in every row."""
    from mmcost.fit import InfeasibleDrawsWarning
    from mmcost.swap import SwapModel

    m = SwapModel(swap_device="zswap", memcg_mb=700, bytes_per_process=2**29, processes=2)
    rows = pd.DataFrame({"metric": "swapout_kib_s", "folio_kb": [4, 64]})
    fit = m.fit(rows.assign(value=m.evaluate(rows) * 1.01), free=["reclaim_us_per_folio"])
    n, seed = 100, 3
    ratio = fit.sample_params(n, seed, fixed_priors=True)["compression_ratio"].to_numpy()
    refused = int((ratio <= 1024 / 700).sum())
    assert n * 0.05 < refused < n
    # (a ratio drawn onto its bound of 1 keeps every page whole: refused naming compression_ratio)
    refusals = "zswap pool alone|zswap keeping every page at full size"
    with pytest.warns(InfeasibleDrawsWarning, match=refusals):
        pred = fit.predict(rows, n_samples=n, seed=seed, fixed_priors=True)
    assert list(pred["dropped_draws"]) == [refused, refused]
    assert np.isfinite(pred[["mean", "lo", "hi"]].to_numpy()).all()
    assert all(re.search(refusals, e) for e in pred.attrs["infeasible"])


def test_a_fit_far_above_chi2_dof_1_warns_and_says_what_it_does_to_the_bands():
    """One impossible point among 12 on a line: chi2/dof far above the limit of 4. With published
    sigma the errors stay as published (too narrow, the warning says so); with sigma scaled, the
    stderr is the absolute one times sqrt(chi2/dof), as the warning says."""
    y = 2.0 + 0.7 * X
    y[5] += 6.0  # 20 sigma off
    df = data(y, 0.3)
    with pytest.warns(PoorFitWarning, match=r"chi2/dof = .* NOT widened") as said:
        absolute = LinearModel().fit(df)
    assert absolute.chi2_dof > 4 and "worst row 5" in str(said[0].message)
    assert any("chi2/dof" in w for w in absolute.warnings)
    # no stddev published: sigma is the model's stated 5% and the covariance is scaled by chi2/dof
    unpublished = df.drop(columns="stddev")
    with pytest.warns(PoorFitWarning, match=r"widened by sqrt\(chi2/dof\)"):
        scaled = LinearModel().fit(unpublished)
    k = np.sqrt(scaled.chi2_dof)
    sigma = 0.05 * y
    g = np.column_stack([np.ones(X.size), X]) / sigma[:, None]  # weighted design: stderr^2 = diag((G^T G)^-1) chi2/dof
    np.testing.assert_allclose(np.sqrt(np.diag(np.linalg.inv(g.T @ g))) * k, list(scaled.stderr.values()), rtol=1e-6)
    with warnings.catch_warnings():  # absolute_sigma=False said: sigma are weights of unknown scale, no test
        warnings.simplefilter("error")
        assert LinearModel().fit(df, absolute_sigma=False).chi2_dof > 4
    # the threshold: chi2/dof > 4 and p < 1%. At 2 dof the outlier gives chi2 = 280 (p ~ 1e-61): warns;
    # a good fit at 10 dof does not, nor chi2/dof = 5 at 1 dof (p = 2.5%)
    with pytest.warns(PoorFitWarning):
        LinearModel().fit(data(y, 0.3).iloc[4:8])
    three = pd.DataFrame({"metric": "runtime_s", "value": 2.0 + 0.7 * X[:3], "stddev": 0.3, "cpus": X[:3]})
    three.loc[1, "value"] += 0.3 * np.sqrt(5 * 3 / 2)  # a middle point off by d: chi2 = (2/3) (d / sigma)^2 = 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearModel().fit(linear_data(3))
        assert LinearModel().fit(three).chi2 == pytest.approx(5.0)


def test_the_repr_keeps_significant_digits_and_the_html_is_escaped_with_correlations():
    """A parameter of 3.2e-06 prints as such (rounding to 6 decimals printed 3e-06); names, units
    and prior sources with HTML in them are escaped; the correlation matrix is in the HTML and
    its off-diagonal entry is the closed form of a straight line's fit, -sum(x) / sqrt(n sum(x^2))."""
    f = LinearModel().fit(data(3.2e-6 + 0.7 * X, 0.3))
    from dataclasses import replace

    f = replace(f, model=f.model.with_parameters(c0_s=3.2e-6))
    assert "'c0_s': 3.2e-06" in repr(f)
    src = "<script>alert('x')</script> & co"
    g = LinearModel().with_parameters(c1_s_per_cpu=dict(prior=Prior(0.7, 0.5, src), unit="s/<cpu>")).fit(linear_data(7))
    html = g._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "s/&lt;cpu&gt;" in html and "&amp; co" in html
    r = -X.sum() / np.sqrt(X.size * (X**2).sum())  # equal weights, no prior: corr(c0, c1) of the design
    f = LinearModel().fit(linear_data(7))
    assert "correlations" in f._repr_html_() and f"{r:+.3f}" in f._repr_html_()


def test_one_spelling_for_a_band_and_the_old_keyword_still_works_with_a_deprecation():
    """level (0.9) and lo/hi everywhere; predict(interval=...) and plot.scaling(interval=...) give
    the same band as level=... with a DeprecationWarning; both at once is refused."""
    import matplotlib

    from mmcost import plot

    matplotlib.use("Agg")
    f = LinearModel().fit(linear_data(2))
    ask = pd.DataFrame({"metric": "runtime_s", "cpus": [3.0, 30.0]})
    new = f.predict(ask, level=0.8, n_samples=200, seed=1)
    with pytest.warns(DeprecationWarning, match="interval= is deprecated, use level="):
        old = f.predict(ask, interval=0.8, n_samples=200, seed=1)
    pd.testing.assert_frame_equal(new, old)
    sd = np.std(f.sample_params(200, seed=1).to_numpy() @ np.array([[1.0, 1.0], [3.0, 30.0]]), axis=0)
    assert ((new["hi"] - new["lo"]) / (2 * 1.2816 * sd)).between(0.8, 1.2).all()  # an 80% band, not 90%
    with pytest.raises(TypeError, match="not both"), pytest.warns(DeprecationWarning):
        f.predict(ask, level=0.8, interval=0.9)
    with pytest.warns(DeprecationWarning, match="scaling"):
        fig = plot.scaling(f, "cpus", interval=0.8, n_samples=20)
    assert "80% band" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
