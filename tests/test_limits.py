"""Issue 18's overflow and size reproducers: each gives a correct answer or a
ValueError naming the argument (and the limit), before anything is allocated."""

import mpmath
import numpy as np
import pytest

from mmcost import queueing as q
from mmcost.tlb import TlbModel


def test_mva_overflow_names_the_argument():
    with pytest.raises(ValueError, match="cycle time overflows"):
        q.mva([1.7976931348623157e308, 0.0, 0.01], 5.3e16, 19)
    with pytest.raises(ValueError, match=r"demands\[0\] x visits overflows"):
        q.mva([1e200], 1.0, 4, visits=[1e200])


@pytest.mark.parametrize("n,sigma,kappa,lam", [(1e308, 1e-3, 1e-3, 1e308), (1e200, 0.5, 0.5, 1.0),
                                               (3.0, 0.0, 0.0, 1e300), (1e160, 0.0, 1e-10, 1e-300)])
def test_usl_at_extreme_values_against_mpmath(n, sigma, kappa, lam):
    with mpmath.workdps(50):
        n_, s_, k_, l_ = map(mpmath.mpf, (n, sigma, kappa, lam))
        exact = float(l_ * n_ / (1 + s_ * (n_ - 1) + k_ * n_ * (n_ - 1)))
    assert q.usl(n, sigma, kappa, lam) == pytest.approx(exact, rel=1e-13)


def test_usl_overflow_is_an_error_not_inf():
    with pytest.raises(ValueError, match="overflows"):
        q.usl([2.0], 0.0, 0.0, 1.7e308)


@pytest.mark.parametrize("call,match", [
    (lambda: q.machine_repairman([2**31], 1.0, 1.0), r"max\(n\) = 2\.147e\+09 is above the limit of 1e\+07"),
    (lambda: q.mva([1.0] * 64, 1.0, 10**6), "population x stations"),
    (lambda: q.mva([1.0], 1.0, 10**8), "population = 1e\\+08 is above the limit"),
    (lambda: q.finite_source(2 * 10**8, 1.0, np.ones(1)), "n = 2e\\+08 is above the limit"),
])
def test_sizes_above_the_documented_limits_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_horizon_of_1e300_seconds_is_refused():
    with pytest.raises(ValueError, match=r"warmup_s \+ horizon_s = 1e\+300 is above the limit .* per replication"):
        TlbModel(demotion_rate_per_s=1e4).simulate(warmup_s=1e300, progress=False)
    model = TlbModel(policy="deferred", cpus=4, flush_ceiling=10**9, demotion_rate_per_s=2e10, batch_folios=65536)
    with pytest.raises(ValueError, match=r"warmup_s \+ horizon_s"):
        model.simulate(progress=False)


def test_a_run_of_minutes_is_refused_at_once():
    """Issue 31: the TLB DES does ~4e7 units of work a second (2^26-PTE calls, 14 a replication: 25 s each,
    100 s for 8 on 2 cores), so issue 18's budget of 1e10 units per replication let a run take many
    minutes; the budget is 1e8 units, and one call's units (batch_folios x entries_per_folio) a tenth."""
    # 21 s at 1e7 folios/s: 2.1e8 units a replication, which the old budget let through
    with pytest.raises(ValueError, match=r"warmup_s \+ horizon_s = 21 is above the limit of 10 \(1e\+08 units"):
        TlbModel(cpus=4, demotion_rate_per_s=1e7).simulate(progress=False)
    with pytest.raises(ValueError, match=r"batch_folios x entries_per_folio = 1\.678e\+07 is above the limit of 1e\+07"):
        TlbModel(cpus=4, batch_folios=65536, entries_per_folio=256, demotion_rate_per_s=1.0).simulate(progress=False)
    for field, value, limit in (("batch_folios", 2**31 - 1, r"6\.554e\+04"), ("entries_per_folio", 2**19, r"2\.621e\+05"),
                                ("cpus", 10**6, "8192"), ("flush_ceiling", 2**31, r"2\.147e\+09")):
        with pytest.raises(ValueError, match=rf"^{field} = .* is above the limit of {limit} \("):
            TlbModel(**{field: value})
