"""The M/M/1//N closed form against exact rational arithmetic."""

from fractions import Fraction
from math import factorial

import numpy as np
import pytest

from mmcost import queueing


def exact_p0(n: int, z: Fraction, s: Fraction) -> Fraction:
    # p0 = [sum_{k=0}^{N} N!/(N-k)! (S/Z)^k]^-1 (Kleinrock 1975, sec. 3.8),
    # summed in exact rationals: independent of the Erlang-B recursion.
    r = s / z
    return 1 / sum(Fraction(factorial(n), factorial(n - k)) * r**k for k in range(n + 1))


@pytest.mark.parametrize("z,s", [(Fraction(1), Fraction(1, 2)), (Fraction(15), Fraction(3, 4)), (Fraction(2), Fraction(3))])
def test_against_exact_rational_sum(z, s):
    ns = np.arange(1, 31)
    df = queueing.machine_repairman(ns, float(z), float(s))
    for n in ns:
        u = 1 - exact_p0(int(n), z, s)
        x = u / s
        assert df.loc[n, "utilization"] == pytest.approx(float(u), rel=1e-12)
        assert df.loc[n, "throughput"] == pytest.approx(float(x), rel=1e-12)
        assert df.loc[n, "response_time"] == pytest.approx(float(n / x - z), rel=1e-10)


def test_zero_think_time_saturates():
    df = queueing.machine_repairman([1, 5, 100], 0.0, 2.0)
    np.testing.assert_allclose(df["throughput"], 0.5, rtol=1e-15)
    np.testing.assert_allclose(df["response_time"], [2.0, 10.0, 200.0], rtol=1e-14)


def test_large_population_stays_finite():
    df = queueing.machine_repairman([10, 1000, 100000], 1.0, 1e-3)
    assert np.isfinite(df.to_numpy()).all()
    assert df.loc[100000, "utilization"] == pytest.approx(1.0, abs=1e-12)


def test_scalar_and_array_n():
    assert list(queueing.machine_repairman(4, 1.0, 1.0).index) == [4]
    assert list(queueing.machine_repairman([2, 3], 1.0, 1.0).index) == [2, 3]


@pytest.mark.parametrize(
    "args,exc,field",
    [
        ((0, 1.0, 1.0), ValueError, r"n\[0\]"),
        (([1, 2.5], 1.0, 1.0), ValueError, r"n\[1\]"),
        ((3, -1.0, 1.0), ValueError, "think_time"),
        ((3, 1.0, 0.0), ValueError, "service_time"),
        ((3, 1.0, float("nan")), ValueError, "service_time"),
        (("3", 1.0, 1.0), TypeError, "n"),
    ],
)
def test_bad_input(args, exc, field):
    with pytest.raises(exc, match=field):
        queueing.machine_repairman(*args)
