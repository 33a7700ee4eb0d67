"""Birth-death CTMC against the product form, hand cases, MVA and the closed form."""

import numpy as np
import pytest
from scipy.special import logsumexp

from mmcost import _core, queueing


def product_form(lam, mu):
    """pi_k ∝ prod_{i<k} lam_i / mu_i (Kleinrock, Queueing Systems I, eq. 3.11), in logs."""
    with np.errstate(divide="ignore"):
        logs = np.concatenate([[0.0], np.cumsum(np.log(lam) - np.log(mu))])
    return np.exp(logs - logsumexp(logs))


def test_single_state_by_hand():
    # Two states: pi_0 = mu / (lam + mu), X = lam pi_0.
    r = queueing.birth_death([3.0], [5.0])
    np.testing.assert_allclose(r.probabilities, [5 / 8, 3 / 8], rtol=1e-15)
    assert r.throughput == pytest.approx(15 / 8, rel=1e-15)
    assert r.response_time == pytest.approx(1 / 5, rel=1e-14)


def test_two_customers_by_hand():
    # lam = (2, 1), mu = (2, 2): pi ∝ (1, 1, 1/2) = (2/5, 2/5, 1/5).
    r = queueing.birth_death([2.0, 1.0], [2.0, 2.0])
    np.testing.assert_allclose(r.probabilities, [0.4, 0.4, 0.2], rtol=1e-15)
    assert r.mean_number == pytest.approx(0.8, rel=1e-15)
    assert r.utilization == pytest.approx(0.6, rel=1e-15)


@pytest.mark.parametrize("n", [5, 64, 2000])
def test_matches_product_form_for_arbitrary_rates(n):
    rng = np.random.default_rng([n, 20261201])
    lam = rng.uniform(0.1, 2.0, n)
    mu = rng.uniform(0.5, 3.0, n)
    r = queueing.birth_death(lam, mu)
    pi = product_form(lam, mu)
    np.testing.assert_allclose(r.probabilities, pi, rtol=1e-9, atol=1e-13)
    assert r.throughput == pytest.approx(float(np.sum(pi[1:] * mu)), rel=1e-9)
    assert r.throughput == pytest.approx(float(np.sum(pi[:-1] * lam)), rel=1e-9)  # flow balance


def test_ticket_lock_like_state_dependent_service():
    # Handoff time growing linearly with waiters (Boyd-Wickizer et al. 2012):
    # mu_k = 1 / (S + c (k - 1)). Check against the product form exactly.
    n, z, s, c = 48, 20.0, 1.0, 0.05
    k = np.arange(1, n + 1)
    r = queueing.finite_source(n, z, 1 / (s + c * (k - 1)))
    pi = product_form((n - np.arange(n)) / z, 1 / (s + c * (k - 1)))
    np.testing.assert_allclose(r.probabilities, pi, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("n,z,s", [(1, 1.0, 0.5), (16, 10.0, 1.0), (500, 50.0, 0.2)])
def test_finite_source_equals_machine_repairman_and_mva(n, z, s):
    r = queueing.finite_source(n, z, np.full(n, 1 / s))
    mr = queueing.machine_repairman(n, z, s).iloc[0]
    mva = queueing.mva([s], z, n).iloc[-1]
    assert r.throughput == pytest.approx(mr["throughput"], rel=1e-9)
    assert r.mean_number == pytest.approx(mr["queue_length"], rel=1e-9)
    assert r.response_time == pytest.approx(mr["response_time"], rel=1e-9)
    assert r.throughput == pytest.approx(mva["throughput"], rel=1e-9)
    assert r.mean_number == pytest.approx(mva["queue_length_0"], rel=1e-9)


def test_no_arrivals_means_empty_station():
    r = queueing.birth_death([0.0, 0.0], [1.0, 1.0])
    np.testing.assert_array_equal(r.probabilities, [1.0, 0.0, 0.0])
    assert r.throughput == 0.0 and r.response_time == 0.0


@pytest.mark.parametrize(
    "lam,mu,exc,field",
    [
        ([1.0], [0.0], ValueError, r"service_rates\[0\]"),
        ([1.0, 1.0], [1.0], ValueError, "same length"),
        ([float("nan")], [1.0], ValueError, r"arrival_rates\[0\]"),
        ([-1.0], [1.0], ValueError, r"arrival_rates\[0\]"),
        ([], [], ValueError, "arrival_rates"),
        (["a"], [1.0], TypeError, "arrival_rates"),
    ],
)
def test_bad_input(lam, mu, exc, field):
    with pytest.raises(exc, match=field):
        queueing.birth_death(lam, mu)


def test_core_rejects_zero_service_rate():
    with pytest.raises(ValueError, match="service_rates"):
        _core.queueing.birth_death([1.0], [0.0])


def test_finite_source_checks_lengths():
    with pytest.raises(ValueError, match="service_rates"):
        queueing.finite_source(3, 1.0, [1.0, 1.0])
    with pytest.raises(ValueError, match="think_time"):
        queueing.finite_source(3, 0.0, [1.0, 1.0, 1.0])


def exact_chain(lam, mu, digits=50):
    """The product form in mpmath at ``digits`` significant digits: the
    reference for rates a double's arithmetic cannot normalise naively."""
    import mpmath

    with mpmath.workdps(digits):
        w = [mpmath.mpf(1)]
        for a, b in zip(lam, mu):
            w.append(w[-1] * mpmath.mpf(float(a)) / mpmath.mpf(float(b)))
        total = mpmath.fsum(w)
        pi = [x / total for x in w]
        x = mpmath.fsum(p * mpmath.mpf(float(m)) for p, m in zip(pi[1:], mu))
        mean = mpmath.fsum(k * p for k, p in enumerate(pi))
        return ([float(p) for p in pi], float(x), float(mean), float(mpmath.fsum(pi[1:])))


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_rates_spanning_24_orders_of_magnitude_against_mpmath(seed):
    """Issue 18's reproducer (seed 3): the LU solver gave a mean of 999.996
    where the exact answer is 74. Every probability is compared relative to
    itself, down to the smallest a double holds."""
    rng = np.random.default_rng(seed)
    lam, mu = 10 ** rng.uniform(-12, 12, 1000), 10 ** rng.uniform(-12, 12, 1000)
    r = queueing.birth_death(lam, mu)
    pi, x, mean, util = exact_chain(lam, mu)
    assert r.mean_number == pytest.approx(mean, rel=1e-11)
    assert r.throughput == pytest.approx(x, rel=1e-11)
    assert r.utilization == pytest.approx(util, rel=1e-11)
    pi = np.array(pi)
    normal = pi > 1e-300  # below, a double has no relative precision left
    np.testing.assert_allclose(r.probabilities[normal], pi[normal], rtol=1e-10)
    assert np.all(r.probabilities[~normal] <= 1e-290)


def test_a_nearly_idle_station_keeps_its_utilisation():
    """pi_0 = 1 - 1e-20: 1 - pi_0 would be 0 in a double; the sum of the
    other states is not."""
    r = queueing.birth_death([1e-20, 1.0], [1.0, 1.0])
    pi, x, mean, util = exact_chain([1e-20, 1.0], [1.0, 1.0])
    assert r.utilization == pytest.approx(util, rel=1e-14)
    assert r.throughput == pytest.approx(x, rel=1e-14)


def test_a_million_states_against_the_mm1k_closed_form():
    """M/M/1/K with rho = 0.999 and K = 10^6: pi_k = (1 - rho) rho^k / (1 - rho^(K+1))."""
    k, rho = 10**6, 0.999
    r = queueing.birth_death(np.full(k, rho), np.ones(k))
    n = np.arange(k + 1)
    closed = (1 - rho) * rho**n / (1 - rho ** (k + 1))
    normal = closed > 1e-300
    np.testing.assert_allclose(r.probabilities[normal], closed[normal], rtol=1e-8)
    # L = rho / (1 - rho) - (K + 1) rho^(K+1) / (1 - rho^(K+1)); rho^(K+1) underflows to 0
    assert r.mean_number == pytest.approx(rho / (1 - rho), rel=1e-9)


def test_ten_thousand_cpus_finite_source_equals_machine_repairman():
    """The ticket-lock chain at 10,000 CPUs (the LU needed 71 s and 1 GB)."""
    n, z, s = 10_000, 50.0, 0.01
    r = queueing.finite_source(n, z, np.full(n, 1 / s))
    mr = queueing.machine_repairman(n, z, s).iloc[0]
    assert r.throughput == pytest.approx(mr["throughput"], rel=1e-9)
    assert r.mean_number == pytest.approx(mr["queue_length"], rel=1e-9)


def exact_response_time(lam, mu, digits=40):
    """W = L / X = sum_k k w_k / sum_k w_k mu_{k-1} in mpmath (whose exponent
    range is unbounded): the reference where L and X lie below a double."""
    import mpmath

    with mpmath.workdps(digits):
        w, num, den = mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(0)
        for k, (a, b) in enumerate(zip(lam, mu), start=1):
            w = w * mpmath.mpf(float(a)) / mpmath.mpf(float(b))
            num += k * w
            den += w * mpmath.mpf(float(b))
        return num / den


def test_response_time_where_mean_number_underflows_by_hand():
    # One customer at most: W is the service time 1/mu = 1e-182, although
    # L = pi_1 ~ 1e-424 and X = 1e-242 x pi_0 are far apart in a double.
    r = queueing.birth_death([1e-242], [1e182])
    assert r.response_time == pytest.approx(1e-182, rel=1e-12, abs=0)


def test_response_time_with_rates_spanning_424_orders_against_mpmath():
    # 200 short chains with rates log-uniform in 1e-242..1e182 (issue 31's
    # range): in some, L and X are below a double while W = L / X is not.
    for seed in range(200):
        rng = np.random.default_rng([seed, 31])
        n = int(rng.integers(1, 8))
        lam, mu = 10 ** rng.uniform(-242, 182, n), 10 ** rng.uniform(-242, 182, n)
        r = queueing.birth_death(lam, mu)
        assert r.response_time == pytest.approx(float(exact_response_time(lam, mu)), rel=1e-11, abs=0), seed
