"""USL evaluation and fitting against published coefficients."""

import warnings

import numpy as np
import pytest
from scipy.optimize import curve_fit

from mmcost import queueing

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
