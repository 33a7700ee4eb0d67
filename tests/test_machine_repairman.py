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


def mp_closed_form(n: int, z: float, s: float):
    """(X, R, U, Q) of M/M/1//N from p0 = [sum_k N!/(N-k)! (S/Z)^k]^-1
    (Kleinrock 1975, sec. 3.8) with R = N/X - Z and Q = X R, at 1300 digits:
    N/X - Z cancels some 600 of them when Z = 1e308 and S = 1e-308."""
    import mpmath

    with mpmath.workdps(1300):
        z_, s_ = mpmath.mpf(z), mpmath.mpf(s)
        if z == 0:
            u = mpmath.mpf(1)
        else:
            r = s_ / z_  # U = 1 - p0 = T / (1 + T), T the sum's terms k >= 1: no 1 - p0 cancellation
            t = mpmath.fsum(mpmath.factorial(n) / mpmath.factorial(n - k) * r**k for k in range(1, n + 1))
            u = t / (1 + t)
        x = u / s_
        resp = n / x - z_
        return x, resp, u, x * resp


@pytest.mark.parametrize(
    "ns,z,s",
    [
        ([1], 1.0, 1e308),  # S at the top of the double range: X subnormal, R = S
        ([1, 2, 5], 1e308, 1e-308),  # Z/S = 1e616 overflows: every customer thinking
        ([1, 2, 5, 30], 1e308, 1.0),
        ([1, 2, 10], 1e300, 3e299),
        ([1, 2, 5], 1e-300, 1e300),  # Z/S underflows: the server always busy
        ([1, 3, 40], 7e-300, 2e-300),  # X near the top of the double range
    ],
)
def test_extreme_but_valid_times_against_mpmath(ns, z, s):
    df = queueing.machine_repairman(ns, z, s)
    assert np.isfinite(df.to_numpy()).all()
    for n in ns:
        x, resp, u, q = (float(v) for v in mp_closed_form(n, z, s))
        got = df.loc[n]
        assert got["throughput"] == pytest.approx(x, rel=1e-12)
        assert got["response_time"] == pytest.approx(resp, rel=1e-12)
        assert got["utilization"] == pytest.approx(u, rel=1e-12, abs=1e-300)
        assert got["queue_length"] == pytest.approx(q, rel=1e-12, abs=1e-300)


def test_unrepresentable_response_time_names_service_time():
    # n = 2, S = 1e308: R = S (1 + U(1)) ~ 2e308 is beyond a double: an error, not inf.
    with pytest.raises(ValueError, match="service_time"):
        queueing.machine_repairman([1, 2], 1.0, 1e308)
    # subnormal times: X ~ 1 / 9e-310 is beyond a double
    with pytest.raises(ValueError, match="service_time"):
        queueing.machine_repairman([1, 3], 7e-310, 2e-310)
