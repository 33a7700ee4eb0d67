"""Property-based checks of the analytic solvers (issue 18): on any input,
finite or not, huge or tiny, every outcome is a correct answer checked
against an independent reference, or a ValueError/TypeError naming the
argument; never a silent NaN or inf.

CI runs MMCOST_HYPOTHESIS_EXAMPLES (default 200) examples per property;
``MMCOST_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/test_properties.py``
runs ten thousand."""

import math
import os
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmcost import queueing as q

settings.register_profile("properties", max_examples=int(os.environ.get("MMCOST_HYPOTHESIS_EXAMPLES", "200")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("properties")

#: any float a caller could pass: NaN, infinities, negatives, zero, subnormals, 1e308
ANY = st.floats(allow_nan=True, allow_infinity=True)
#: rates across 24 orders of magnitude either side of 1
WIDE = st.floats(min_value=-12, max_value=12).map(lambda e: 10.0**e)


def named(exc: Exception, *names: str) -> bool:
    return any(re.search(rf"\b{re.escape(n)}", str(exc)) for n in names)


def exact_birth_death(lam, mu):
    with mpmath.workdps(60):
        w = [mpmath.mpf(1)]
        for a, b in zip(lam, mu):
            w.append(w[-1] * mpmath.mpf(a) / mpmath.mpf(b))
        total = mpmath.fsum(w)
        pi = [x / total for x in w]
        return (float(mpmath.fsum(k * p for k, p in enumerate(pi))),
                float(mpmath.fsum(p * mpmath.mpf(m) for p, m in zip(pi[1:], mu))))


@given(st.lists(st.tuples(WIDE, WIDE), min_size=1, max_size=60))
def test_birth_death_matches_mpmath_on_rates_spanning_24_orders(rates):
    lam, mu = zip(*rates)
    r = q.birth_death(lam, mu)
    mean, x = exact_birth_death(lam, mu)
    assert r.mean_number == pytest.approx(mean, rel=1e-10, abs=1e-300)
    assert r.throughput == pytest.approx(x, rel=1e-10, abs=1e-300)
    assert np.all(np.isfinite(r.probabilities)) and math.isfinite(r.response_time)


@given(st.lists(ANY, min_size=0, max_size=5), st.lists(ANY, min_size=0, max_size=5))
def test_birth_death_on_anything_answers_or_names_the_argument(lam, mu):
    try:
        r = q.birth_death(lam, mu)
    except (ValueError, TypeError) as exc:
        assert named(exc, "arrival_rates", "service_rates"), exc
        return
    assert np.all(np.isfinite(r.probabilities)) and math.isfinite(r.throughput) and math.isfinite(r.mean_number)
    assert r.probabilities.sum() == pytest.approx(1.0, rel=1e-12)


def mva_numpy(d, z, n):
    """Reiser-Lavenberg in NumPy: the reference for exponential stations."""
    qk = np.zeros(len(d))
    x = 0.0
    for k in range(1, n + 1):
        r = d * (1.0 + qk)
        x = k / (z + r.sum())
        qk = x * r
    return x, qk


@given(st.lists(st.floats(0.0, 1e6), min_size=1, max_size=6), st.floats(0.0, 1e6), st.integers(1, 300))
def test_mva_matches_the_numpy_recursion(demands, think, population):
    d = np.array(demands)
    if think == 0 and d.sum() == 0:
        with pytest.raises(ValueError, match="zero"):
            q.mva(d, think, population)
        return
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        x, qk = mva_numpy(d, think, population)
    if not (np.isfinite(x) and np.isfinite(qk).all()):  # the true answer is beyond a double: say so
        with pytest.raises(ValueError, match="overflows"):
            q.mva(d, think, population)
        return
    df = q.mva(d, think, population)
    top = df.iloc[-1]
    assert top["throughput"] == pytest.approx(x, rel=1e-11)
    np.testing.assert_allclose([top[f"queue_length_{k}"] for k in range(len(d))], qk, rtol=1e-9, atol=1e-12)
    assert np.isfinite(df.to_numpy()).all()


@given(st.lists(ANY, min_size=0, max_size=4), ANY, st.one_of(st.integers(-3, 50), ANY), st.lists(ANY, max_size=4))
def test_mva_on_anything_answers_or_names_the_argument(demands, think, population, visits):
    try:
        df = q.mva(demands, think, population, visits=visits if visits else None)
    except (ValueError, TypeError) as exc:
        assert named(exc, "demands", "think_time", "population", "visits", "mva"), exc
        return
    assert np.isfinite(df.to_numpy()).all(), "silent NaN/inf"


@given(st.one_of(st.floats(1e-300, 1e308), st.integers(1, 10**6)), st.floats(0, 1e3), st.floats(0, 1e3),
       st.floats(1e-300, 1e308))
def test_usl_matches_mpmath_or_says_it_overflows(n, sigma, kappa, lam):
    # the reference in exact rational arithmetic (every float is a fraction): no precision to run out of
    n_, s_, k_, l_ = map(Fraction, (n, sigma, kappa, lam))
    den = 1 + s_ * (n_ - 1) + k_ * n_ * (n_ - 1)
    exact = l_ * n_ / den if den > 0 else None
    try:
        x = q.usl(n, sigma, kappa, lam)
    except ValueError as exc:
        assert exact is None or exact > Fraction(1.7976931348623157e308), exc
        return
    assert exact is not None and math.isfinite(x)
    assert x == pytest.approx(float(exact), rel=1e-12, abs=1e-300)


@given(st.lists(st.integers(1, 400), min_size=1, max_size=5, unique=True), st.floats(0.0, 1e4), st.floats(1e-6, 1e4))
def test_machine_repairman_equals_mva(ns, think, service):
    mr = q.machine_repairman(ns, think, service)
    for n in ns:
        x, qk = mva_numpy(np.array([service]), think, n)
        assert mr.loc[n, "throughput"] == pytest.approx(x, rel=1e-9)
        assert mr.loc[n, "queue_length"] == pytest.approx(qk[0], rel=1e-8, abs=1e-12)
