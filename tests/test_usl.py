"""USL evaluation and fitting against published coefficients."""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import curve_fit

from mmcost import queueing
from mmcost.fit import NotIdentifiableWarning

# Cisco benchmark, concurrency 1..32 vs throughput, from Schwartz, "Practical
# Scalability Analysis with the Universal Scalability Law" (VividCortex 2015),
# as transcribed in codahale/usl4j src/test/.../ModelTest.java, which also
# lists the book's fitted values below and checks them to 0.02%.
CISCO_X = [
    955.16, 1878.91, 2688.01, 3548.68, 4315.54, 5130.43, 5931.37, 6531.08, 7219.8, 7867.61, 8278.71,
    8646.7, 9047.84, 9426.55, 9645.37, 9897.24, 10097.6, 10240.5, 10532.39, 10798.52, 11151.43,
    11518.63, 11806, 12089.37, 12075.41, 12177.29, 12211.41, 12158.93, 12155.27, 12118.04, 12140.4,
    12074.39,
]  # fmt: skip
BOOK = dict(sigma=0.02671591, kappa=7.690945e-4, lam=995.6486, n_max=35, x_max=12341)


def test_cisco_fit_reproduces_book_coefficients():
    fit = queueing.usl_fit(np.arange(1, 33), CISCO_X)
    for name in ("sigma", "kappa", "lam"):
        assert fit.params[name] == pytest.approx(BOOK[name], rel=2e-4)
    n_max, x_max = fit.model.peak()
    assert int(n_max) == BOOK["n_max"]  # the book (and usl4j) floor N_max to an integer
    # The book's X_max is the throughput at that integer N, truncated.
    assert int(fit.model.throughput(BOOK["n_max"])) == BOOK["x_max"]
    assert x_max >= fit.model.throughput(BOOK["n_max"])  # the continuous peak is at N = 35.57
    assert fit.dof == 29


def test_standard_errors_agree_with_scipy_curve_fit():
    n = np.arange(1, 33, dtype=float)
    fit = queueing.usl_fit(n, CISCO_X)

    def f(n, s, k, lam):
        return lam * n / (1 + s * (n - 1) + k * n * (n - 1))

    popt, pcov = curve_fit(f, n, CISCO_X, p0=[0.03, 1e-3, 1000.0])
    np.testing.assert_allclose([fit.params[p] for p in ("sigma", "kappa", "lam")], popt, rtol=1e-5)  # two optimisers' tolerances
    np.testing.assert_allclose([fit.stderr[p] for p in ("sigma", "kappa", "lam")], np.sqrt(np.diag(pcov)), rtol=1e-3)
    assert fit.correlation.loc["sigma", "sigma"] == pytest.approx(1.0)


def test_r_usl_package_coef_example():
    # smoeding/usl (CRAN) tests/coef.R: data generated with sigma = kappa =
    # 0.02, printed to 4 decimals; the package recovers 0.02 and 0.02 to 3
    # significant digits (tests/coef.Rout.save).
    fit = queueing.usl_fit([1, 2, 4, 6, 8, 10], [1, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557])
    assert float(f"{fit.params['sigma']:.3g}") == 0.02
    assert float(f"{fit.params['kappa']:.3g}") == 0.02


def test_usl_closed_form_values():
    # Amdahl's law is USL with kappa = 0: speedup at N -> 1/sigma.
    assert queueing.usl(1, 0.1, 0.0, 5.0) == pytest.approx(5.0)
    assert queueing.usl(1e9, 0.1, 0.0, 1.0) == pytest.approx(10.0, rel=1e-7)
    x = queueing.usl(np.array([2.0, 4.0]), 0.02, 0.02, 1.0)
    np.testing.assert_allclose(x, [2 / 1.06, 4 / (1 + 0.06 + 0.24)], rtol=1e-15)


def test_usl_fit_warns_when_not_identifiable():
    # Three points and three coefficients: no degrees of freedom left.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = queueing.usl_fit([1, 2, 3], [1.0, 1.9, 2.7])
    assert any("identifiable" in str(w.message) for w in caught)
    assert np.isnan(fit.stderr["sigma"]) and fit.dof == 0


def test_reprs():
    fit = queueing.usl_fit(np.arange(1, 33), CISCO_X)
    assert "sigma" in str(fit) and "<table>" in fit._repr_html_()
    from mmcost.fit import FitResult

    assert isinstance(fit, FitResult)  # the one result type of every fit


@pytest.mark.parametrize(
    "call,exc,field",
    [
        (lambda: queueing.usl(0, 0.1, 0.1, 1.0), ValueError, r"n\[0\]"),
        (lambda: queueing.usl(2, -0.1, 0.1, 1.0), ValueError, "sigma"),
        (lambda: queueing.usl(2, 0.1, float("nan"), 1.0), ValueError, "kappa"),
        (lambda: queueing.usl(2, 0.1, 0.1, 0.0), ValueError, "lam"),
        (lambda: queueing.usl(0.1, 20.0, 0.0, 1.0), ValueError, "denominator"),
        (lambda: queueing.usl_fit([1, 2], [1.0, 2.0]), ValueError, "at least 3"),
        (lambda: queueing.usl_fit([1, 2, 3], [1.0, float("nan"), 2.0]), ValueError, r"throughput\[1\]"),
        (lambda: queueing.usl_fit([1, 2, 3, 4], [1.0, 2.0, 3.0]), ValueError, "same length"),
    ],
)
def test_bad_input(call, exc, field):
    with pytest.raises(exc, match=field):
        call()


def exact_usl(n, sigma, kappa, lam):
    n = np.asarray(n, float)
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def quiet_fit(n, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        return queueing.usl_fit(n, x, **kw)


def test_usl_fit_reproduces_issue_31_case_in_any_unit():
    # N = 92..512, sigma = 0, kappa = lam = 0.01: a residual of 2e-3 before,
    # and the same data x 1e-3 misfitted lam by 37%.
    n = np.linspace(92, 512, 10)
    x = exact_usl(n, 0.0, 0.01, 0.01)
    for scale in (1.0, 1e-3, 1e6):
        fit = quiet_fit(n, x * scale)
        got = exact_usl(n, fit.params["sigma"], fit.params["kappa"], fit.params["lam"])
        np.testing.assert_allclose(got, x * scale, rtol=1e-10)
        assert fit.params["lam"] == pytest.approx(0.01 * scale, rel=1e-6)
        assert fit.params["kappa"] == pytest.approx(0.01, rel=1e-6)
        assert fit.params["sigma"] == 0.0 and fit.at_bound == {"sigma": "lower"}


def test_usl_fit_reproduces_exact_data_over_random_coefficients_and_units():
    # Random (sigma, kappa, lam, N range), some on a bound (sigma or kappa 0):
    # the fit gives back the curve that made the data, and the same data in
    # another unit give the same sigma and kappa and lam in that unit.
    rng = np.random.default_rng(31)
    for case in range(60):
        sigma = rng.uniform(0, 1) * rng.choice([0, 1])
        kappa = 10 ** rng.uniform(-6, -1) * rng.choice([0, 1, 1])
        lam = 10 ** rng.uniform(-3, 6)
        lo = int(10 ** rng.uniform(0, 2.5))
        n = np.unique(np.linspace(lo, lo + int(10 ** rng.uniform(0.7, 3)), 12).round())
        x = exact_usl(n, sigma, kappa, lam)
        fit = quiet_fit(n, x)
        p = fit.params
        np.testing.assert_allclose(exact_usl(n, p["sigma"], p["kappa"], p["lam"]), x, rtol=1e-9, err_msg=str(case))
        scaled = quiet_fit(n, x * 1e-3).params
        assert scaled["sigma"] == pytest.approx(p["sigma"], rel=1e-6, abs=1e-12), case
        assert scaled["kappa"] == pytest.approx(p["kappa"], rel=1e-6, abs=1e-12), case
        assert scaled["lam"] == pytest.approx(p["lam"] * 1e-3, rel=1e-6), case


@pytest.mark.parametrize("sigma", [1.0, 1.2])
def test_sigma_pushed_against_its_upper_bound_is_flagged(sigma):
    # Data that want sigma >= 1 (1.2 is outside the law's range): the fit
    # ends on sigma = 1 and says so, rather than at 1 - 1e-7 unflagged.
    n = np.arange(1, 33)
    fit = quiet_fit(n, exact_usl(n, sigma, 1e-3, 1.0))
    assert fit.params["sigma"] == 1.0
    assert fit.at_bound == {"sigma": "upper"}
    assert math.isnan(fit.stderr["sigma"]) and "at its upper bound" in str(fit)


def test_sigma_just_inside_its_bound_is_a_fitted_value():
    n = np.arange(1, 33)
    fit = quiet_fit(n, exact_usl(n, 1 - 1e-7, 1e-3, 1.0))
    assert fit.params["sigma"] == pytest.approx(1 - 1e-7, rel=1e-12)
    assert fit.at_bound == {}


def test_usl_fit_prints_the_units():
    fit = queueing.usl_fit(np.arange(1, 33), CISCO_X, unit="ops/s")
    assert fit.model.params["lam"].unit == "ops/s"
    assert "ops/s" in str(fit) and "metric/unit" not in str(fit)
    assert "metric/unit" not in str(queueing.usl_fit(np.arange(1, 33), CISCO_X))
    from mmcost.usl import UslModel

    assert UslModel(metric="transactions_per_s", n_column="threads").params["lam"].unit == "1/s"


def test_usl_fit_refuses_more_points_than_its_limit():
    n = np.arange(1, 10**6 + 2, dtype=float)
    with pytest.raises(ValueError, match=r"len\(n\) = 1e\+06 is above the limit"):
        queueing.usl_fit(n, n)
