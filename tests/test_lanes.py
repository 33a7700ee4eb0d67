"""Lane models (mmcost.lanes): many configurations that differ in float fields
solved as one, each lane against the configuration's own solve."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from mmcost import lanes
from mmcost.locks import Critical, Lock, LockResult, LockSystem, Work
from mmcost.swap import SwapModel

N = lanes.MIN_LANES + 4

#: configurations whose every station and branch a lane model must reproduce
BASES = {
    "zram 64K, split share": dict(folio_kb=64, processes=8, cpus=8, kernel="6.18"),
    "v4.8 swap cache lock, 4 sites": dict(folio_kb=4, processes=16, cpus=16, kernel="4.8"),
    "zswap writeback to a disk": dict(folio_kb=16, processes=4, swap_device="zswap", zswap_writeback_share=0.3,
                                      swapped_share=0.5),
    "nvme": dict(folio_kb=2048, processes=4, swap_device="nvme", anon_mthp=True),
    "brd, 2 memcgs": dict(processes=4, swap_device="brd", memcgs=2, memcg_mb=256.0),
    "arm64 broadcast TLBI": dict(folio_kb=64, processes=8, cpu_model="ampere-altra"),
    "KVM guest, si_lock era": dict(processes=8, virtualized=True, kernel="5.15"),
    "kswapd at a given share": dict(processes=4, memcg_mb=None, swapped_share=0.5, kswapd_share=0.4),
}

#: the float fields drawn, and the ones that may be 0 in some lanes (a station or branch present in others)
DRAWN = ("reclaim_us_per_folio", "core_write_gb_s", "slot_hold_us_per_acquisition", "lru_hold_us_per_folio",
         "bandwidth_mib_s", "latency_us", "brd_alloc_share", "tlbi_us", "dsb_us", "memcg_mb", "large_share",
         "vm_exit_us", "compress_us_per_page", "swapcache_us_per_folio", "reclaim_us_per_page")
SOMETIMES_ZERO = ("contiguous_failure", "zswap_writeback_share", "kswapd_share", "swap_avail_hold_us")


def draws(base: SwapModel, rng) -> list[SwapModel]:
    out = []
    for i in range(N):
        values = {}
        for name in DRAWN:
            if base.get(name) is None or name not in base.params:
                continue
            p = base.params[name]
            values[name] = float(np.clip(p.value * rng.uniform(0.5, 1.5), p.lower, p.upper))
        for name in SOMETIMES_ZERO:
            if base.get(name) is not None:
                values[name] = 0.0 if i % 3 == 0 else float(rng.uniform(0.05, 0.5))
        out.append(base.set(**values))
    return out


def assert_same(lane_results, own_results, rtol):
    for a, b in zip(lane_results, own_results, strict=True):
        for qa, qb in zip(a.quantities, b.quantities, strict=True):
            assert qa.name == qb.name
            assert qa.value == pytest.approx(qb.value, rel=rtol, abs=1e-300), qa.name
        la, lb = a.details["locks"], b.details["locks"]
        for ours, theirs in ((la.lock_values, lb.lock_values), (la.site_values, lb.site_values)):
            for name, row in theirs.items():
                mine = ours[name]  # a lane may hold a station with no hold that its own network leaves out
                for col, x in row.items():
                    if isinstance(x, str):  # the lock a site takes
                        assert mine[col] == x
                    elif math.isnan(x):
                        assert math.isnan(mine[col])
                    else:
                        assert mine[col] == pytest.approx(x, rel=rtol, abs=1e-9), (name, col)


@pytest.mark.parametrize("name", list(BASES))
def test_each_lane_is_its_configuration_solved_alone(name):
    base = SwapModel(**BASES[name])
    models = draws(base, np.random.default_rng(sorted(BASES).index(name)))
    solved = SwapModel.solve_many(models)
    assert all(type(r.details["locks"]).__name__ == "_LaneLockResult" for r in solved), "the lane path was not taken"
    # equal to rounding: a zero hold in some lanes keeps a station the others' networks leave out
    assert_same(solved, [m.solve() for m in models], rtol=1e-12)


@pytest.mark.parametrize("setting", [
    dict(memcg_mb=None, swapped_share=0.5, processes=4),  # kswapd's share of the reclaim
    dict(memcg_mb=None, swapped_share=0.5, processes=16, cpus=8, inactive_anon_mb=1.0),  # and the throttle
    dict(memcg_mb=8.0, cgroup_v2=True, processes=8, cpus=8, bytes_per_process=2.0**28)])  # the throttle alone
def test_fixed_points_are_found_per_lane_as_for_each_configuration(setting):
    base = SwapModel(**setting)
    models = draws(base, np.random.default_rng(7))
    solved = SwapModel.solve_many(models)
    assert all(type(r.details["locks"]).__name__ == "_LaneLockResult" for r in solved)
    own = [m.solve() for m in models]
    # Chandrupatla for the lanes, Brent for one: both stop within 1e-12 of the share (of kswapd, of the sleep)
    assert_same(solved, own, rtol=1e-10)
    # the draws move the fixed points: each lane found its own
    kswapd = [r["kswapd_reclaim_share_pct"] for r in own]
    sleep = [m._network()[2]["throttled_us"] for m in models]
    if setting["memcg_mb"] is None:
        assert len(set(kswapd)) > N // 2 and 0 < min(kswapd) and max(kswapd) < 100
    if "inactive_anon_mb" in setting or setting.get("cgroup_v2"):
        assert len(set(sleep)) > N // 2 and min(sleep) > 0


def test_configurations_that_differ_in_more_than_floats_get_lanes_of_their_own():
    rng = np.random.default_rng(3)
    a, b = draws(SwapModel(processes=4), rng), draws(SwapModel(processes=8), rng)
    mixed = [m for pair in zip(a, b) for m in pair]
    assert len(lanes.groups(mixed)) == 2
    assert_same(SwapModel.solve_many(mixed), [m.solve() for m in mixed], rtol=1e-12)


def test_a_varying_float_switch_does_not_reach_the_shared_switch_cache():
    base = SwapModel(processes=4, kernel="6.18")
    before = base.switch("throttle_isolated_ms")
    models = [base.set(throttle_isolated_ms=float(x)) for x in np.linspace(5, 50, N)]
    lane = lanes.stack(models)
    assert isinstance(lane.throttle_isolated_ms, np.ndarray)
    assert lane.__dict__["_switches"] is not base.__dict__.get("_switches")
    lane._network()
    assert base.switch("throttle_isolated_ms") == before


def test_few_configurations_are_solved_one_by_one():
    models = draws(SwapModel(processes=4), np.random.default_rng(5))[: lanes.MIN_LANES - 1]
    assert not any(type(r.details["locks"]).__name__ == "_LaneLockResult" for r in SwapModel.solve_many(models))


def test_a_lane_result_pickles_and_compares_as_the_lock_result_it_stands_for():
    models = draws(SwapModel(folio_kb=64, processes=8), np.random.default_rng(11))
    lane, own = SwapModel.solve_many(models)[2].details["locks"], models[2].solve().details["locks"]
    assert lane.system_values == own.system_values
    back = pickle.loads(pickle.dumps(lane))
    assert type(back) is LockResult
    assert back.locks.shape == own.locks.shape and list(back.sites.index) == list(own.sites.index)
    assert (back.locks.fillna(0) == lane.locks.fillna(0)).all().all()


def test_helpers_keep_scalars_scalar():
    assert lanes.minimum(1.0, 2.0) == 1.0 and type(lanes.minimum(1.0, 2.0)) is float
    assert list(lanes.maximum(np.array([1.0, 3.0]), 2.0)) == [2.0, 3.0]
    assert lanes.any_of(np.array([False, True])) and not lanes.any_of(0.0 > 1.0)
    parts = [0.1, 1e16, -1e16, 0.2]
    assert lanes.total(parts) == ((0.1 + 1e16) + -1e16) + 0.2  # left to right, not compensated
    assert lanes.total(np.array([x, 2 * x]) for x in parts)[0] == lanes.total(parts)
    assert lanes.take(np.array([1.0, 2.0]), 1) == 2.0 and lanes.take(5.0, 1) == 5.0


def test_find_root_matches_the_closed_form_in_active_lanes_and_fills_the_others():
    # x^3 = a has the root a^(1/3); lanes with a < 0 have no root in [0, 2] and keep the fill
    a = np.array([0.5, -1.0, 1.0, 2.0, 7.0, 0.001, -3.0])
    calls = []

    def f(x):
        calls.append(np.shape(x))
        return x**3 - a

    where = a > 0
    got = lanes.find_root(f, 0.0, 2.0, a.size, xatol=1e-13, where=where, fill=-1.0)
    assert all(shape == a.shape for shape in calls)  # f sees every lane, as a lane model's arithmetic does
    np.testing.assert_allclose(got[where], np.cbrt(a[where]), rtol=0, atol=1e-12)
    assert (got[~where] == -1.0).all()
    # one configuration: Brent's method, the same root within the tolerance
    one = lanes.find_root(lambda x: x**3 - 2.0, 0.0, 2.0, None, xatol=1e-13)
    assert type(one) is float and abs(one - np.cbrt(2.0)) < 1e-12
    assert lanes.find_root(lambda x: x**3 - 2.0, 0.0, 2.0, None, xatol=1e-13, where=False, fill=0.5) == 0.5


def test_find_root_names_the_lanes_it_could_not_solve():
    # a function that turns NaN (a garbled network, say) stops the search with the lanes named, not a NaN root
    with pytest.raises(ArithmeticError, match=r"lane\(s\) \[0, 1, 2, 3\]"):
        lanes.find_root(lambda x: np.full_like(x, np.nan), 0.0, 2.0, 4, xatol=1e-13)


# --- TlbModel: float leaves at any depth (costs, streams, counters) vary between lanes --------------------

from mmcost.locks import Dist  # noqa: E402
from mmcost.mechanism import Mechanism  # noqa: E402
from mmcost.tlb import TlbModel  # noqa: E402

#: TLB configurations whose branches a lane model must reproduce
TLB_BASES = {
    "migrc, exponential reuse, KVM guest with PV IPIs": dict(
        cpus=16, policy="deferred", virtualized=True, demotion_rate_per_s=2e5, natural_flush_rate_per_s=50.0,
        other_round_rate_per_s=3.0, writable_fraction=0.1, reuse=Dist.exponential(3000.0), kernel="6.9"),
    "migrc, deterministic reuse (solved lane by lane)": dict(
        cpus=8, policy="deferred", demotion_rate_per_s=5e4, reuse=Dist.deterministic(2000.0)),
    "reclaim of 3 mms from inside one, PTI without INVPCID": dict(
        cpus=8, reclaim_unmap_rate_per_s=1e5, cpu_model="skylake-sp", invpcid=False, sender_in_mm=True, mms=3,
        mm_cpus=2.0, dirty_fraction=0.4, other_page_flush_rate_per_s=100.0),
    "arm64, 64K folios, lazyfree reclaim": dict(
        arch="arm64", cpu_model="ampere-altra", entries_per_folio=16, reclaim_unmap_rate_per_s=4e4, lazyfree=True,
        folio_pages=16),
    "x86 INVLPGB, global ASIDs": dict(cpu_model="zen3-epyc", kernel="6.18", mm_cpus=8.0, cpus=32,
                                      demotion_rate_per_s=1e5, other_page_flush_rate_per_s=10.0),
    "per-folio flushes, tiering, closed-loop migration": dict(
        policy="immediate", demotion_rate_per_s=1e4, working_set_mb=4096.0, fast_mem_mb=1024.0,
        reference_fast_mem_mb=2048.0, migration_pages=1e6, migrate_fraction=0.5),
    "v6.1: promotions flushed, migration batched": dict(kernel="6.1", promotion_rate_per_s=3e4,
                                                        demotion_rate_per_s=1e4),
}


def tlb_draws(base: TlbModel, rng, n=N) -> list[TlbModel]:
    """Every nonzero float parameter moved by up to 50%; the natural flush rate 0 in
    every third (the in-step branch of migrc's rounds)."""
    out = []
    for i in range(n):
        values = {name: float(np.clip(p.value * rng.uniform(0.5, 1.5), p.lower, p.upper))
                  for name, p in base.params.items() if "@" not in name and p.value != 0}  # (0 x u is 0)
        if "natural_flush_rate_per_s" in values:
            values["natural_flush_rate_per_s"] = 0.0 if i % 3 == 0 else values["natural_flush_rate_per_s"]
        out.append(base.set(**values))
    return out


def assert_same_tlb(lane_results, own_results, rtol):
    for a, b in zip(lane_results, own_results, strict=True):
        assert a.title == b.title
        for qa, qb in zip(a.quantities, b.quantities, strict=True):
            assert qa.name == qb.name
            if math.isnan(qb.value):
                assert math.isnan(qa.value), qa.name
            else:
                assert qa.value == pytest.approx(qb.value, rel=rtol, abs=1e-300), qa.name
        ra, rb = a.details["rates"], b.details["rates"]
        assert ra.costs()["cpu_share"].to_numpy() == pytest.approx(rb.costs()["cpu_share"].to_numpy(), rel=rtol)


@pytest.mark.parametrize("name", list(TLB_BASES))
def test_each_tlb_lane_is_its_configuration_solved_alone(name, monkeypatch):
    base = TlbModel(**TLB_BASES[name])
    models = tlb_draws(base, np.random.default_rng(sorted(TLB_BASES).index(name)))
    assert len(lanes.groups(models, nested=True)) == 1
    lane = lanes.stack(models, nested=True)
    assert isinstance(lane.costs.irq_us, np.ndarray) and isinstance(lane.streams[1].entries, np.ndarray)
    calls = []
    monkeypatch.setattr(TlbModel, "solve", lambda self, *a, **k: calls.append(self) or TlbModel.analytic(self))
    solved = TlbModel.solve_many(models)
    assert not calls, "the lane path was not taken"
    monkeypatch.undo()
    # the same IEEE operations per lane; hyp1f1, log1p and expm1 of NumPy's arrays may differ in the last bit
    assert_same_tlb(solved, [m.solve() for m in models], rtol=1e-12)


def test_tlb_lanes_that_branch_apart_are_solved_one_by_one():
    # mm_cpus across consider_global_asid's threshold of 3: INVLPGB for some lanes, IPIs for the others
    base = TlbModel(cpu_model="zen3-epyc", kernel="6.18", mm_cpus=3.0, cpus=8, demotion_rate_per_s=1e5,
                    other_page_flush_rate_per_s=10.0)
    models = [base.set(mm_cpus=x) for x in np.linspace(2.0, 6.0, N)]
    with pytest.raises(lanes.Diverge):
        TlbModel._solve_lanes(models)
    assert_same_tlb(TlbModel.solve_many(models), [m.solve() for m in models], rtol=0)


def test_a_band_over_rows_that_move_costs_with_their_cpu_equals_one_draw_at_a_time():
    # a row naming another CPU moves each drawn cost by that CPU's table ratio: the batch's copies
    # (cfg0 with the scaled draw) are the per-draw path's (the model at the draw, then configured)
    base = TlbModel(cpus=16, policy="deferred", demotion_rate_per_s=2e5, reuse=Dist.exponential(3000.0),
                    virtualized=True, cpu_model="xeon-8255c")
    base = base.with_free(["demotion_rate_per_s", "irq_us", "walk_ns"])
    rows = pd.DataFrame({"metric": ["tlb_overhead_pct", "tlb_shootdowns_per_s", "runtime_s"] * 2,
                         "cpu_model": ["skylake-sp"] * 3 + ["zen3-epyc"] * 3})
    plan = base.plan(rows)
    rng = np.random.default_rng(2)
    thetas = [{"demotion_rate_per_s": float(rng.uniform(1e5, 3e5)), "irq_us": float(rng.uniform(0.5, 3.0)),
               "walk_ns": float(rng.uniform(20.0, 80.0))} for _ in range(N)]
    together = plan.many(thetas)
    alone = np.array([base.set(**t).evaluate(rows) for t in thetas])
    assert together == pytest.approx(alone, rel=1e-12)


def test_a_band_solves_each_row_s_draws_as_one_lane_model_without_copies(monkeypatch):
    base = TlbModel(**TLB_BASES["migrc, exponential reuse, KVM guest with PV IPIs"])
    rows = pd.DataFrame({"metric": ["tlb_overhead_pct", "runtime_s", "tlb_shootdowns_per_s"],
                         "cpus": [8, 16, 32]})
    plan = base.plan(rows)
    thetas = [{name: float(np.clip(p.value * f, p.lower, p.upper)) for name, p in base.params.items()}
              for f in np.linspace(0.6, 1.4, N)]
    alone = np.array([base.set(**t).evaluate(rows) for t in thetas])
    copies = []
    monkeypatch.setattr(TlbModel, "_copy", lambda self, *a: copies.append(1) or Mechanism._copy(self, *a))
    together = plan.many(thetas)
    assert len(copies) == len(rows), "a draw was copied"  # each row configured once, at the model's values
    assert together == pytest.approx(alone, rel=1e-12)


def test_a_draw_the_lane_check_rejects_raises_as_its_copy_would():
    base = TlbModel(cpus=16, mm_cpus=4.0, demotion_rate_per_s=1e5)
    rows = pd.DataFrame({"metric": ["tlb_overhead_pct"]})
    thetas = [{"mm_cpus": float(x)} for x in np.linspace(2.0, 20.0, N)]  # the last ones exceed cpus
    with pytest.raises(ValueError, match=r"mm_cpus must be in \[1, cpus = 16\], got 17\.4"):
        base.plan(rows).many(thetas)


def test_scalar_takes_lanes_only_while_a_lane_model_is_checked():
    from mmcost import _validate as v

    with pytest.raises(TypeError, match="x must be a real number"):
        v.scalar("x", np.array([1.0, 2.0]))
    with v.checking_lanes():
        assert list(v.scalar("x", np.array([1.0, 2.0]))) == [1.0, 2.0]
        with pytest.raises(ValueError, match=r"x must be finite and >= 0, got -1.0 \(lane 1\)"):
            v.scalar("x", np.array([1.0, -1.0]))
    with pytest.raises(TypeError):
        v.scalar("x", np.array([1.0, 2.0]))


@pytest.mark.parametrize("name", ["zram 64K, split share", "brd, 2 memcgs", "kswapd at a given share"])
def test_a_swap_band_solves_each_row_s_draws_without_copies(name, monkeypatch):
    base = SwapModel(**BASES[name])
    rows = pd.DataFrame({"metric": ["swapout_kib_s", "sys_time_s", "real_time_s"], "processes": [4, 8, 8]})
    rng = np.random.default_rng(4)
    thetas = [{k: float(np.clip(base.params[k].value * rng.uniform(0.6, 1.4), base.params[k].lower,
                                base.params[k].upper)) for k in DRAWN if k in base.params} for _ in range(N)]
    alone = np.array([base.set(**t).evaluate(rows) for t in thetas])
    copies = []
    monkeypatch.setattr(SwapModel, "_copy", lambda self, *a: copies.append(1) or Mechanism._copy(self, *a))
    together = base.plan(rows).many(thetas)
    assert len(copies) <= len(rows), "a draw was copied"  # each row configured once, at the model's values
    assert together == pytest.approx(alone, rel=1e-12)


def test_a_swap_draw_that_would_swap_nothing_raises_as_its_copy_would():
    base = SwapModel(processes=4, memcg_mb=256.0, bytes_per_process=2.0**28)  # 1 GiB written into 256 MiB
    rows = pd.DataFrame({"metric": ["swapout_kib_s"]})
    thetas = [{"memcg_mb": float(x)} for x in np.linspace(256.0, 2048.0, N)]  # the last ones hold it all
    with pytest.raises(ValueError, match="memcg_mb: the limit .* nothing would swap"):
        base.plan(rows).many(thetas)


#: lock networks whose draws a band solves as one lane model
LOCK_BASES = {
    "two locks, four sites, interrupts": dict(cpus=16, locks=(Lock("tree", handoff_us=0.05), Lock("lru")),
                                              stages=(Work(Dist.exponential(3.0)),
                                                      Critical("tree", "add", Dist.exponential(0.4)),
                                                      Critical("lru", "isolate", Dist.lognormal(0.3, 1.5)),
                                                      Critical("tree", "delete", Dist.deterministic(0.2),
                                                               irq_disabled=True)),
                                              irq_rate_per_us=0.01, irq_service_us=2.0),
    "a partitioned lock": dict(cpus=32, locks=(Lock("cluster", partitions=8, handoff_us=0.1),),
                               stages=(Work(Dist.exponential(1.0)), Critical("cluster", "alloc", Dist.exponential(0.5)))),
}


@pytest.mark.parametrize("name", list(LOCK_BASES))
def test_a_lock_band_solves_each_row_s_draws_without_copies(name, monkeypatch):
    base = LockSystem(**LOCK_BASES[name])
    rows = pd.DataFrame({"metric": ["operations_per_s", "lock_wait_avg_us", "lock_utilization"],
                         "lock": [None, base.locks[0].name, base.locks[-1].name], "cpus": [4, 8, 16]})
    rng = np.random.default_rng(6)
    thetas = [{k: float(np.clip(p.value * rng.uniform(0.6, 1.4), p.lower, p.upper)) for k, p in base.params.items()}
              for _ in range(N)]
    alone = np.array([base.set(**t).evaluate(rows) for t in thetas])
    copies = []
    monkeypatch.setattr(LockSystem, "_copy", lambda self, *a: copies.append(1) or Mechanism._copy(self, *a))
    together = base.plan(rows).many(thetas)
    assert len(copies) <= len(rows), "a draw was copied"
    assert together == pytest.approx(alone, rel=1e-12)


def test_find_root_without_a_sign_change_returns_the_end_that_is_the_fixed_point():
    """Issue 31: a decreasing excess g(x) - x that keeps its sign over the bracket has its fixed point
    clipped to an end: hi where the excess is >= 0 there (+7e-15 of rounding at a fixed point that sits at
    hi), lo where it is <= 0 at lo. Brent's and Chandrupatla's raised instead."""
    shift = np.array([1e-15, 0.0, -0.25, 3.0, -2.0, -1e-15])  # excess 1 - x + shift - 1 on [0, 1]: root at shift

    def f(x):
        return shift - x

    want = np.clip(shift, 0.0, 1.0)
    np.testing.assert_allclose(lanes.find_root(f, 0.0, 1.0, shift.size, xatol=1e-13), want, rtol=0, atol=1e-12)
    for s, w in zip(shift, want):
        assert lanes.find_root(lambda x, s=s: s - x, 0.0, 1.0, None, xatol=1e-13) == pytest.approx(w, abs=1e-12)
    assert lanes.find_root(lambda x: 1.0 + 1e-15 - x, 0.0, 1.0, None, xatol=1e-13) == 1.0
    # a root inside the bracket: as before
    inside = np.array([0.3, 1 + 7e-15, 0.7])
    got = lanes.find_root(lambda x: inside - x, 0.0, 1.0, 3, xatol=1e-13)
    np.testing.assert_allclose(got, [0.3, 1.0, 0.7], rtol=0, atol=1e-12)
