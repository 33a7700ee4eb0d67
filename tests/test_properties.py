"""Property-based checks of the analytic solvers (issue 18): on any input,
finite or not, huge or tiny, every outcome is a correct answer checked
against an independent reference, or a ValueError/TypeError naming the
argument; never a silent NaN or inf.

CI runs MMCOST_HYPOTHESIS_EXAMPLES (default 200) examples per property;
``MMCOST_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/test_properties.py``
runs ten thousand."""

import math
from dataclasses import replace
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


# --- the mechanisms on random configurations ------------------------------------------------------
MECH = settings(max_examples=max(20, int(os.environ.get("MMCOST_HYPOTHESIS_EXAMPLES", "200")) // 4), deadline=None)

from mmcost.locks import Critical, Dist, Lock, LockSystem, Work  # noqa: E402
from mmcost.swap import SwapModel  # noqa: E402
from mmcost.tlb import TlbCosts, TlbModel, TlbStream  # noqa: E402


@MECH
@given(st.integers(1, 256), st.lists(st.tuples(st.integers(0, 2), WIDE, st.booleans()), min_size=1, max_size=6),
       WIDE, st.integers(1, 4))
def test_lock_analytic_within_the_asymptotic_bounds(cpus, sections, work, partitions):
    """Denning & Buzen's bounds: X <= min(N / (Z + D), 1 / D_max) for any
    closed network, D_max the busiest station's demand per cycle."""
    locks = tuple(Lock(f"L{i}", partitions=partitions if i == 0 else 1) for i in range(3))
    stages = (Work(Dist.exponential(work)),) + tuple(
        Critical(f"L{lock}", f"site{j}", Dist.exponential(hold), irq_disabled=irq)
        for j, (lock, hold, irq) in enumerate(sections))
    try:
        res = LockSystem(cpus, locks, stages).analytic()
    except ValueError as exc:  # a hold or work beyond its documented bound (1e9 us)
        assert named(exc, "work_us", *(f"site{j}_hold_us" for j in range(len(sections)))), exc
        return
    x = res.throughput_per_s / 1e6
    demand = {}
    for lock, hold, _ in sections:
        demand[lock] = demand.get(lock, 0.0) + hold / (partitions if lock == 0 else 1)
    total = work + sum(h for _, h, _ in sections)
    assert math.isfinite(x) and x > 0
    assert x <= min(cpus / total, 1 / max(demand.values())) * (1 + 1e-9)
    for row in res.site_values.values():
        assert all(math.isfinite(v) for k, v in row.items() if k not in ("lock", "wait_max_us", "wait_sd_us"))


@MECH
@given(st.integers(1, 64), st.lists(st.tuples(st.integers(0, 1), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3)),
                                    min_size=1, max_size=5), st.floats(1e-2, 1e3))
def test_counted_sites_keep_the_totals_and_share_one_wait_per_acquisition(cpus, sections, work):
    """Critical.count re-expresses a lock's numbers per acquisition: the throughput, utilisation and total
    wait are those of the same network without counts; a lock's acquisitions are its sites' sum; every
    site of a counted lock waits the lock's mean wait; spinning shares add up to the same total."""
    locks = (Lock("L0"), Lock("L1"))
    plain = [Critical(f"L{lock}", f"site{j}", Dist.exponential(hold)) for j, (lock, hold, _) in enumerate(sections)]
    counted = [replace(c, count=n) for c, (_, _, n) in zip(plain, sections)]
    a = LockSystem(cpus, locks, (Work(Dist.exponential(work)), *plain)).analytic()
    b = LockSystem(cpus, locks, (Work(Dist.exponential(work)), *counted)).analytic()
    assert b.throughput_per_s == a.throughput_per_s
    for name, row in b.lock_values.items():
        assert row["utilization"] == a.lock_values[name]["utilization"]
        assert row["wait_total_us_per_s"] == pytest.approx(a.lock_values[name]["wait_total_us_per_s"], rel=1e-9)
        mine = [r for r in b.site_values.values() if r["lock"] == name]
        assert row["acquisitions_per_s"] == pytest.approx(sum(r["acquisitions_per_s"] for r in mine), rel=1e-9)
        assert sum(r["spin_share_pct"] for r in mine) == pytest.approx(
            sum(r["spin_share_pct"] for r in a.site_values.values() if r["lock"] == name), rel=1e-9, abs=1e-12)
        for r in mine:
            assert r["wait_per_acquisition_us"] == pytest.approx(row["wait_per_acquisition_us"], rel=1e-9)
    for c in counted:
        assert b.site_values[c.site]["acquisitions_per_s"] == pytest.approx(
            a.site_values[c.site]["acquisitions_per_s"] * c.count, rel=1e-9)


@MECH
@given(st.sampled_from([4, 16, 32, 64, 128, 2048]), st.integers(1, 64), st.one_of(st.none(), st.integers(1, 128)),
       st.sampled_from(["brd", "zram", "zswap", "nvme"]), st.sampled_from(["5.10", "6.6", "6.9", "6.18"]),
       st.sampled_from(["generic-x86", "generic-arm64", "xeon-8255c", "ampere-altra"]),
       st.one_of(st.none(), st.integers(64, 4096)))
def test_swap_model_gives_finite_positive_numbers_or_names_the_field(kb, processes, cpus, device, kernel, cpu, memcg):
    try:
        model = SwapModel(folio_kb=kb, processes=processes, cpus=cpus, swap_device=device, kernel=kernel,
                          cpu_model=cpu, memcg_mb=memcg)
        res = model.solve()
    except (ValueError, TypeError) as exc:
        assert named(exc, "folio_kb", "processes", "cpus", "swap_device", "kernel", "cpu_model", "memcg_mb"), exc
        return
    for qty in res.quantities:
        assert math.isfinite(qty.value) and qty.value >= 0, qty


@MECH
@given(st.sampled_from(["immediate", "batched", "deferred"]), st.sampled_from(["x86", "arm64"]),
       st.integers(1, 512), st.floats(0, 1e7), st.floats(0, 1e6), st.integers(1, 512), st.booleans())
def test_tlb_model_is_finite_or_flagged_saturated(policy, arch, cpus, demotions, reclaims, batch, virtualized):
    res = TlbModel(policy=policy, arch=arch, cpus=cpus, demotion_rate_per_s=demotions,
                   reclaim_unmap_rate_per_s=reclaims, batch_folios=batch, virtualized=virtualized).solve()
    rates = res.details["rates"]
    assert all(math.isfinite(v) and v >= 0 for v, _, _ in rates.bounds.values())
    if res.details["saturated"]:
        assert res["runtime_s"] == math.inf
    else:
        assert math.isfinite(res["runtime_s"]) and res["runtime_s"] > 0


# --- bands as lane models: each lane is its draw's own solve ------------------------------------------
from mmcost import lanes  # noqa: E402


def _draws(base, rng, n, zero=()):
    """``n`` draws moving every float parameter by up to 50% (clipped to its
    bounds), the ``zero`` ones 0 in every third draw."""
    out = []
    for i in range(n):
        d = {k: float(np.clip(p.value * rng.uniform(0.5, 1.5), p.lower, p.upper))
             for k, p in base.params.items() if "@" not in k}
        for k in zero:
            if k in d and i % 3 == 0:
                d[k] = 0.0
        out.append(d)
    return out


def _same_results(together, alone):
    for a, b in zip(together, alone, strict=True):
        assert a.title == b.title
        for qa, qb in zip(a.quantities, b.quantities, strict=True):
            assert qa.name == qb.name
            if math.isnan(qb.value) or math.isinf(qb.value):
                assert qa.value == qb.value or (math.isnan(qa.value) and math.isnan(qb.value)), qa.name
            else:
                assert qa.value == pytest.approx(qb.value, rel=1e-11, abs=1e-300), qa.name


@MECH
@given(st.sampled_from(["immediate", "batched", "deferred"]), st.sampled_from(["x86", "arm64"]),
       st.integers(1, 128), st.sampled_from([None, 0.25, 0.5, 1.0]), st.integers(1, 4), st.booleans(), st.booleans(),
       st.sampled_from(["5.10", "6.1", "6.9", "6.18"]), st.sampled_from([1, 16, 512]),
       st.sampled_from(["exponential", "deterministic", "lognormal"]),
       st.tuples(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0, 1e5)), st.integers(0, 2**32 - 1))
def test_a_tlb_band_solves_its_draws_as_their_own_solves(policy, arch, cpus, mm_share, mms, in_mm, virtualized,
                                                         kernel, entries, reuse, rates, seed):
    """``solve_draws`` (one lane model from the draws' columns) against a
    copy and a solve per draw, on random configurations: every branch of the
    TLB model (policies, arches, kernels' switches, the reuse laws, PTI,
    INVLPGB, saturation) taken the same way in every lane, or the group
    falls back to the copies."""
    cpu = {"x86": ["generic-x86", "skylake-sp", "zen3-epyc"], "arm64": ["ampere-altra"]}[arch][seed % (3 if arch == "x86" else 1)]
    law = {"exponential": Dist.exponential(3000.0), "deterministic": Dist.deterministic(2000.0),
           "lognormal": Dist.lognormal(3000.0, 1.5)}[reuse]
    try:
        base = TlbModel(policy=policy, arch=arch, cpu_model=cpu, cpus=cpus, mms=mms, sender_in_mm=in_mm,
                        mm_cpus=None if mm_share is None else max(1.0, round(cpus * mm_share)), virtualized=virtualized,
                        kernel=kernel, entries_per_folio=entries, reuse=law, demotion_rate_per_s=rates[0],
                        reclaim_unmap_rate_per_s=rates[1], promotion_rate_per_s=rates[2],
                        natural_flush_rate_per_s=20.0, other_round_rate_per_s=2.0, other_page_flush_rate_per_s=50.0)
    except ValueError:  # e.g. mms x mm_cpus beyond the machine
        return
    draws = _draws(base, np.random.default_rng(seed), lanes.MIN_LANES + 2, zero=("natural_flush_rate_per_s",))
    try:
        alone = [base.set(**d).solve() for d in draws]
    except ValueError:  # a draw the model rejects: no lane model (the band's copies then raise its error)
        assert TlbModel.solve_draws(base, draws) is None
        return
    together = TlbModel.solve_draws(base, draws)
    if together is not None:
        _same_results(together, alone)


@MECH
@given(st.integers(1, 64), st.lists(st.tuples(st.integers(0, 2), st.floats(0.01, 10.0), st.booleans(),
                                              st.sampled_from(["exponential", "deterministic", "lognormal"])),
                                    min_size=1, max_size=5),
       st.floats(0.1, 10.0), st.integers(1, 4), st.sampled_from([0.0, 0.02]), st.integers(0, 2**32 - 1))
def test_a_lock_band_solves_its_draws_as_their_own_solves(cpus, sections, work, partitions, irq, seed):
    locks = tuple(Lock(f"L{i}", partitions=partitions if i == 0 else 1, handoff_us=0.05) for i in range(3))
    law = {"exponential": Dist.exponential, "deterministic": Dist.deterministic,
           "lognormal": lambda m: Dist.lognormal(m, 1.5)}
    stages = (Work(Dist.exponential(work)),) + tuple(
        Critical(f"L{lock}", f"site{j}", law[kind](hold), irq_disabled=off)
        for j, (lock, hold, off, kind) in enumerate(sections))
    base = LockSystem(cpus, locks, stages, irq_rate_per_us=irq, irq_service_us=1.0)
    draws = _draws(base, np.random.default_rng(seed), lanes.MIN_LANES + 2, zero=("irq_rate_per_us",))
    alone = [base.set(**d).solve() for d in draws]
    together = LockSystem.solve_draws(base, draws)
    assert together is not None, "a queued-lock network's band took the copies"
    _same_results(together, alone)


@MECH
@given(st.sampled_from([4, 16, 64, 2048]), st.integers(1, 32), st.one_of(st.none(), st.integers(1, 64)),
       st.sampled_from(["brd", "zram", "zswap", "nvme"]), st.sampled_from(["5.10", "6.6", "6.18"]),
       st.sampled_from(["generic-x86", "generic-arm64", "xeon-8255c"]), st.one_of(st.none(), st.integers(64, 4096)),
       st.integers(0, 2**32 - 1))
def test_a_swap_band_solves_its_draws_as_their_own_solves(kb, processes, cpus, device, kernel, cpu, memcg, seed):
    try:
        base = SwapModel(folio_kb=kb, processes=processes, cpus=cpus, swap_device=device, kernel=kernel,
                         cpu_model=cpu, memcg_mb=memcg, swapped_share=None if memcg else 0.5)
    except ValueError:
        return
    draws = _draws(base, np.random.default_rng(seed), lanes.MIN_LANES + 2)
    try:
        alone = [base.set(**d).solve() for d in draws]
    except ValueError:  # a draw the model rejects, or cannot solve: the band raises too (itself or by the copies)
        try:
            together = SwapModel.solve_draws(base, draws)
        except ValueError:
            return
        assert together is None
        return
    together = SwapModel.solve_draws(base, draws)
    assert together is not None, "a valid band took the copies"
    _same_results(together, alone)


# --- random valid configurations of every field (issue 31) -----------------------------------------------
# MMCOST_PROPERTY_EXAMPLES examples per model (default 100: the three take well under a minute);
# ``MMCOST_PROPERTY_EXAMPLES=2000 python -m pytest tests/test_properties.py -k every_field`` for a local run.
# Each outcome is a result whose numbers are finite (inf or NaN only where the model documents it), or a
# ValueError naming a field: no other exception, no silent NaN.
FIELDS = settings(max_examples=int(os.environ.get("MMCOST_PROPERTY_EXAMPLES", "100")), deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: issue 31 cases that fail for reasons in the lock model, fixed on another branch (locks.py): a stage's
#: squared coefficient of variation of -2e-16 (rounding) refused. Accepted here as known, case by case
def in_bounds(lower, upper):
    """A value of a field's own range: its ends, log-uniform across it, or uniform."""
    lo = max(lower, 1e-300) if lower == 0 else lower
    hi = min(upper, 1e300)
    ends = st.sampled_from([float(lower), float(min(upper, 1e300))])
    spread = st.floats(math.log10(lo), math.log10(hi)).map(lambda e: min(max(10.0**e, lower), upper))
    return st.one_of(ends, spread, st.floats(float(lower), float(hi)))


def optional_floats(model, draw, most=12, skip=()):
    """Up to ``most`` of ``model``'s float fields, each anywhere in its bounds."""
    names = sorted(n for n in model.params if n not in skip and "@" not in n)
    p = model.params
    return {n: draw(in_bounds(p[n].lower, p[n].upper))
            for n in draw(st.lists(st.sampled_from(names), max_size=most, unique=True))}


def answered_or_named(make, fields, allowed_nonfinite=lambda q, res: False):
    """``make()`` and solve it; a ValueError must name one of ``fields``. Returns the result or None."""
    try:
        model = make()
        res = model.solve()
    except ValueError as exc:
        assert named(exc, *fields), exc
        return None
    for quantity in res.quantities:
        assert math.isfinite(quantity.value) or allowed_nonfinite(quantity, res), (quantity, model)
    return res


_SWAP_FIELDS = tuple(SwapModel().leaves) + ("lock partitions", "writers on CPUs")


@FIELDS
@given(st.data())
def test_swap_model_on_every_field_answers_finite_numbers_or_names_a_field(data):
    draw = data.draw
    kw = dict(processes=draw(st.integers(1, 256)), threads=draw(st.integers(1, 8)),
              cpus=draw(st.one_of(st.none(), st.integers(1, 512))),
              bytes_per_process=draw(st.one_of(in_bounds(4096.0, 2.0**40), in_bounds(2.0**22, 2.0**36))),
              folio_kb=draw(st.sampled_from([4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048])),
              madvise=draw(st.booleans()), swap_device=draw(st.sampled_from(["brd", "pmem", "zram", "zswap", "nvme", "ssd"])),
              compressor=draw(st.sampled_from(["lz4", "lzo", "lzo-rle", "zstd", "deflate"])),
              kernel=draw(st.sampled_from(["4.4", "4.8", "4.10", "4.14", "5.4", "5.10", "5.15", "6.1", "6.6", "6.8",
                                           "6.10", "6.12", "6.14", "6.18"])),
              cpu_model=draw(st.sampled_from([None, "generic-x86", "generic-arm64", "ampere-altra", "xeon-8255c",
                                              "zen3-epyc", "kunpeng-920", "snapdragon-888"])),
              virtualized=draw(st.booleans()), cgroup_v2=draw(st.booleans()),
              memcgs=draw(st.integers(1, 4)), queue_depth=draw(st.integers(1, 65536)),
              zs_size_classes=draw(st.integers(1, 255)))
    if kw["cpu_model"] is None:
        kw["arch"] = draw(st.sampled_from([None, "x86", "arm64"]))
    kw["memcgs"] = min(kw["memcgs"], kw["processes"])
    written_mb = kw["processes"] * kw["bytes_per_process"] / 2**20 / kw["memcgs"]
    # mostly a limit below what each memcg's processes write (the valid ones); sometimes anything
    below = st.floats(1e-3, 0.999).map(lambda f: min(max(1.0, f * written_mb), 2.0**30))
    kw["memcg_mb"] = draw(st.one_of(below, below, in_bounds(1.0, 2.0**20), st.none()) if written_mb > 1.0
                          else st.none())
    if kw["memcg_mb"] is None:
        kw["memcgs"] = 1
    if kw["memcg_mb"] is None or draw(st.floats(0, 1)) < 0.2:
        kw["swapped_share"] = draw(st.floats(1e-6, 1.0))
    for name, strategy in (("large_share", st.floats(0, 1)), ("kswapd_share", st.floats(0, 1)),
                           ("numa_nodes", st.integers(1, 8)), ("machine_cpus", st.integers(1, 8192)),
                           ("inactive_anon_mb", in_bounds(1.0, 1e6)), ("mm_cpus", st.integers(1, 64)),
                           ("slot_lock_partitions", st.integers(1, 64)), ("swapcache_lock_partitions", st.integers(0, 64)),
                           ("throttle_isolated_ms", st.floats(0, 1e3))):
        if draw(st.floats(0, 1)) < 0.15:
            kw[name] = draw(strategy)
    floats = optional_floats(SwapModel(), draw, skip=set(kw) | {"bytes_per_process", "memcg_mb"})
    answered_or_named(lambda: SwapModel(**kw).set(**floats), _SWAP_FIELDS)


def _tlb_nonfinite(q, res) -> bool:
    """What TlbModel documents as inf or NaN: a saturated configuration's run (runtime_s inf, its
    counters inf), a ratio with nothing to divide by (NaN: folios_per_flush without flushes, the
    per-folio ones without folios), migration_time_s without migration_pages (NaN), the migrator's
    throughput where its costs are all 0 (inf)."""
    if q.name == "migrated_pages_per_s":
        return q.value == math.inf
    if q.name in ("folios_per_flush", "tlb_shootdowns_per_folio", "ipi_receive_us_per_folio"):
        return math.isnan(q.value)
    if q.name == "migration_time_s" and res.details["rates"].model.migration_pages is None:
        return math.isnan(q.value)
    return res.details["saturated"] and q.value == math.inf


_TLB_FIELDS = tuple(TlbModel().leaves) + ("reuse", "costs", "streams", "mm_cpus")


@FIELDS
@given(st.data())
def test_tlb_model_on_every_field_answers_finite_numbers_or_names_a_field(data):
    draw = data.draw
    rate = st.one_of(st.just(0.0), in_bounds(1e-3, 1e12))
    reuse_mean = in_bounds(1e-3, 1e15)
    reuse = draw(st.one_of(reuse_mean.map(Dist.exponential), reuse_mean.map(Dist.deterministic),
                           st.tuples(reuse_mean, st.floats(0.01, 10.0)).map(lambda t: Dist.lognormal(*t)),
                           st.lists(st.floats(0.0, 1e9), min_size=1, max_size=50).filter(lambda x: sum(x) > 0)
                           .map(Dist.empirical)))
    cpus = draw(st.integers(1, 8192))
    kw = dict(policy=draw(st.sampled_from([None, "immediate", "batched", "deferred"])),
              arch=draw(st.sampled_from(["x86", "arm64"])), cpus=cpus, virtualized=draw(st.booleans()),
              kernel=draw(st.sampled_from(["4.4", "4.19", "5.10", "6.1", "6.3", "6.5", "6.8", "6.15", "6.18"])),
              promotion_rate_per_s=draw(rate), demotion_rate_per_s=draw(rate), reclaim_unmap_rate_per_s=draw(rate),
              batch_folios=draw(st.integers(1, 65536)), entries_per_folio=draw(st.sampled_from([1, 16, 512, 2**18])),
              flush_ceiling=draw(st.integers(0, 2**31 - 1)), mms=draw(st.integers(1, 10**6)),
              sender_in_mm=draw(st.booleans()), reuse=reuse, lazyfree=draw(st.booleans()),
              tlbi_range=draw(st.booleans()), invpcid=draw(st.booleans()))
    cpu = draw(st.sampled_from({"x86": [None, "generic-x86", "skylake-sp", "haswell-ep", "zen3-epyc", "xeon-8255c"],
                                "arm64": [None, "generic-arm64", "ampere-altra", "kunpeng-920"]}[kw["arch"]]))
    if cpu:
        kw["cpu_model"] = cpu
    for name, strategy in (("mm_cpus", st.floats(1.0, float(cpus))), ("pti", st.booleans()), ("invlpgb", st.booleans()),
                           ("folio_pages", st.integers(1, 2**18)), ("migration_pages", in_bounds(1.0, 1e12)),
                           ("working_set_mb", in_bounds(1e-6, 1e12)), ("fast_mem_mb", in_bounds(1e-6, 1e12)),
                           ("reference_fast_mem_mb", in_bounds(1e-6, 1e12))):
        if draw(st.floats(0, 1)) < 0.2:
            kw[name] = draw(strategy)
    if draw(st.booleans()):
        kw["costs"] = TlbCosts(**{k: draw(in_bounds(0.0, 100.0)) for k in ("irq_us", "ipi_send_us", "full_flush_us",
                                                                              "invlpg_us", "tlbi_us", "dsb_us")})
    if draw(st.booleans()):
        kw["streams"] = (TlbStream("dtlb_load", draw(in_bounds(1.0, 1e5)), draw(in_bounds(1.0, 1e12)),
                                   draw(in_bounds(0.0, 1e9)), draw(st.sampled_from([4, 64, 2048]))),)
    skip = set(kw) | {"reuse_mean_us", "reuse_cv", "irq_us", "ipi_send_us", "full_flush_us", "invlpg_us",
                      "tlbi_us", "dsb_us"} | {n for n in TlbModel().params if n.startswith(("dtlb", "itlb"))}
    floats = optional_floats(TlbModel(), draw, skip=skip)  # nested ones too (costs_*, counters)
    answered_or_named(lambda: TlbModel(**kw).set(**floats), _TLB_FIELDS, _tlb_nonfinite)


@FIELDS
@given(st.data())
def test_lock_system_on_every_field_answers_finite_numbers_or_names_a_field(data):
    draw = data.draw
    law = {"exponential": Dist.exponential, "deterministic": Dist.deterministic,
           "lognormal": lambda m: Dist.lognormal(m, draw(st.floats(0.01, 10.0)))}
    hold = in_bounds(1e-6, 1e6)
    nlocks = draw(st.integers(1, 3))
    locks = tuple(Lock(f"L{i}", partitions=draw(st.integers(1, 64)), handoff_us=draw(st.floats(0, 10)))
                  for i in range(nlocks))
    stages = (Work(law[draw(st.sampled_from(list(law)))](draw(hold))),) + tuple(
        Critical(f"L{draw(st.integers(0, nlocks - 1))}", f"site{j}", law[draw(st.sampled_from(list(law)))](draw(hold)),
                 irq_disabled=draw(st.booleans()))
        for j in range(draw(st.integers(1, 5))))
    irq = draw(st.floats(0, 0.9))
    service = draw(in_bounds(1e-6, 10.0))
    fields = ("cpus", "stages", "locks", "irq_rate_per_us", "irq_service_us", "work_us") + tuple(
        f"site{j}" for j in range(len(stages))) + tuple(f"L{i}" for i in range(nlocks))
    answered_or_named(lambda: LockSystem(draw(st.integers(1, 1024)), locks, stages,
                                         irq_rate_per_us=irq / service, irq_service_us=service), fields)
