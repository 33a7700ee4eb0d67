"""mmcost.tlb: the analytic solver against hand-derived cases, the DES against
the analytic solver, the refill formula against a simulated TLB, bad input."""

import math
import os
import signal
import threading
import time

import numpy as np
import pytest
from mmcost import _core
from mmcost.locks import Dist
from mmcost.tlb import (TlbCosts, TlbModel, TlbStream, deferred_flush_rate, dirty_flushes_per_call, flush_targets,
                        mean_fill, refill_misses)

SEED = 2026


# --- refill misses after a full flush -------------------------------------------------------
def test_refill_fits_in_tlb_misses_every_page_once():
    assert refill_misses(1536, 26) == 26
    assert refill_misses(64, 64) == 64


def test_refill_matches_the_direct_sum_and_its_large_working_set_limit():
    c, w = 100, 700
    direct = sum(1 - (w - c) / (w - k) for k in range(c))
    assert refill_misses(c, w) == pytest.approx(direct, rel=1e-12)
    c, w = 1536, 10**7  # W >> C: about C^2 / 2W
    assert refill_misses(c, w) == pytest.approx(c * c / (2 * w), rel=1e-3)


def test_thp_mapping_shrinks_the_working_set_in_translations():
    """5.6 GiB uniformly accessed: 4K pages overflow a 1536-entry STLB by far
    (few useful entries lost per flush); 2M pages almost fit it (many lost)."""
    small = TlbStream.covering("dtlb_load", 1536, 5648, page_kb=4)
    huge = TlbStream.covering("dtlb_load", 1536, 5648, page_kb=2048)
    assert small.working_set_pages == 512 * huge.working_set_pages
    assert huge.refill > 100 * small.refill
    with pytest.raises(ValueError, match="page_kb"):
        TlbModel(streams=(TlbStream("dtlb_load", 1536, 100, page_kb=12),))


def test_refill_matches_a_simulated_tlb_under_uniform_access():
    """Count misses after a flush in a random-replacement TLB and subtract the
    steady-state miss ratio; independent of the closed form."""
    rng = np.random.default_rng(SEED)
    c, w, accesses, trials = 12, 30, 400, 4000
    extra = np.empty(trials)
    for t in range(trials):
        cached, misses = set(), 0
        pages = rng.integers(0, w, accesses)
        evict = rng.integers(0, c, accesses)
        for page, e in zip(pages, evict):
            if page not in cached:
                misses += 1
                if len(cached) == c:
                    cached.remove(sorted(cached)[e])
                cached.add(page)
        extra[t] = misses - accesses * (1 - c / w)
    half = 3 * extra.std(ddof=1) / math.sqrt(trials)
    assert abs(extra.mean() - refill_misses(c, w)) < half


# --- analytic counts: hand-derivable cases ----------------------------------------------------
def test_batched_x86_one_full_flush_per_call_ipis_to_all_but_the_sender():
    m = TlbModel(cpus=16, policy="batched", promotion_rate_per_s=32_000, demotion_rate_per_s=32_000, batch_folios=32,
                 other_round_rate_per_s=3.0, natural_flush_rate_per_s=7.0)
    calls = 64_000 * 0.5 / 32
    r = m.analytic()
    assert r.rate("calls") == pytest.approx(calls)
    assert r.rate("shootdowns") == pytest.approx((calls + 3.0) * 15 / 16)
    assert r.rate("full_flushes") == pytest.approx(calls + 3.0 + 7.0)
    assert r.rate("ipis") == pytest.approx((calls + 3.0) * 15 / 16)
    # without commit 4d4b6d66db the PROT_NONE promotions are flushed too, one folio per NUMA-hinting
    # fault (migrate_misplaced_folio), each a batch flush of its own
    old = m.replace(skip_inaccessible=False).analytic()
    assert old.rate("calls") == pytest.approx(calls + 32_000)
    assert old.rate("full_flushes") == pytest.approx(calls + 32_000 + 3.0 + 7.0)
    # clean reclaim unmaps are flushed once per call like demotions, and migrc never defers them
    reclaim = m.replace(demotion_rate_per_s=0.0, reclaim_unmap_rate_per_s=32_000, dirty_fraction=0.0)
    assert reclaim.analytic().rate("shootdowns") == pytest.approx(r.rate("shootdowns"))
    deferred = reclaim.replace(policy="deferred", reuse=Dist.deterministic(1000.0)).analytic()
    assert deferred.rate("shootdowns") == pytest.approx(r.rate("shootdowns"))
    assert deferred.rate("deferred_calls") == 0


def test_one_cpu_never_sends_an_ipi():
    for policy in ("immediate", "batched", "deferred"):
        r = TlbModel(cpus=1, policy=policy, demotion_rate_per_s=1000, batch_folios=4, entries_per_folio=40,
                     reuse=Dist.deterministic(2000.0)).analytic()
        assert r.rate("shootdowns") == 0 and r.rate("ipis") == 0


def test_immediate_flushes_every_pte_with_invlpg_unless_the_ceiling_is_zero():
    """ptep_clear_flush per PTE: 100 folios/s x 33 PTEs = 3300 one-page flushes;
    kswapd shares the 4 CPUs, so each reaches 3 by IPI and the lazy 4th later."""
    base = dict(cpus=4, policy="immediate", demotion_rate_per_s=100.0, batch_folios=5, entries_per_folio=33)
    r = TlbModel(**base).analytic()
    assert r.rate("invlpg") == pytest.approx(3300)
    assert r.rate("full_flushes") == 0
    assert r.rate("shootdowns") == pytest.approx(3300 * 3 / 4)
    assert r.rate("rounds") == pytest.approx(3300)
    r = TlbModel(**base, flush_ceiling=0).analytic()
    assert r.rate("invlpg") == 0
    assert r.rate("full_flushes") == pytest.approx(3300)


def test_migrc_deterministic_reuse_without_natural_flushes():
    """A CPU flushed at time 0 waits Exp(lambda) for a deferred call, then R
    for its reuse: r = 1 / (1/lambda + R)."""
    lam, reuse_us = 200.0, 3000.0
    m = TlbModel(cpus=4, policy="deferred", demotion_rate_per_s=lam * 8, batch_folios=8, reuse=Dist.deterministic(reuse_us))
    r = m.analytic()
    expected = 1 / (1 / lam + reuse_us / 1e6)
    assert r.rate("full_flushes") == pytest.approx(expected, rel=1e-12)
    assert r.rate("shootdowns") == pytest.approx(expected * 3 / 4, rel=1e-12)
    assert r.rate("reuse_rounds") == pytest.approx(expected, rel=1e-12)


def test_migrc_deterministic_reuse_races_natural_flushes():
    """Natural flushes at rate nu: the reuse flush happens with probability
    exp(-nu R), and the pending period lasts (1 - exp(-nu R)) / nu."""
    lam, reuse_s, nu = 50.0, 0.01, 30.0
    m = TlbModel(cpus=2, policy="deferred", demotion_rate_per_s=lam, batch_folios=1, natural_flush_rate_per_s=nu,
                 reuse=Dist.deterministic(reuse_s * 1e6))
    p = math.exp(-nu * reuse_s)
    migrc = p / (1 / lam + (1 - p) / nu)
    assert m.analytic().rate("full_flushes") == pytest.approx(migrc + nu, rel=1e-12)


def test_migrc_exponential_reuse_at_low_call_rate():
    """Calls rarely overlap: each one is flushed iff its reuse (rate 1/m) beats
    a natural flush (rate nu), and a flushed CPU waits 1/lambda for the next."""
    lam, mean_s, nu = 1e-3, 0.02, 40.0
    rate = deferred_flush_rate(lam, nu, Dist.exponential(mean_s * 1e6), 1)
    assert rate == pytest.approx(lam * (1 / mean_s) / (1 / mean_s + nu), rel=1e-3)


def test_arm64_has_no_ipis_and_pays_tlbi_per_entry():
    m = TlbModel(cpus=8, arch="arm64", policy="batched", demotion_rate_per_s=3200, batch_folios=32, entries_per_folio=16)
    r = m.analytic()
    assert r.rate("shootdowns") == 0 and r.rate("full_flushes") == 0
    assert r.rate("tlbi_ops") * 8 == pytest.approx(100 * 32 * 16)
    assert r.rate("dsb_syncs") * 8 == pytest.approx(100)


# --- the DES against the analytic solver -----------------------------------------------------
CASES = {
    "x86 batched": dict(policy="batched"),
    "x86 immediate invlpg": dict(policy="immediate", entries_per_folio=8),
    "x86 migrc det": dict(policy="deferred", reuse=Dist.deterministic(4000.0)),
    "x86 migrc exp + writable": dict(policy="deferred", reuse=Dist.exponential(60_000.0), writable_fraction=0.01),
    "x86 migrc lognormal": dict(policy="deferred", reuse=Dist.lognormal(30_000.0, 2.5)),
    "x86 migrc empirical": dict(policy="deferred", reuse=Dist.empirical([500.0, 5000.0, 90_000.0])),
    "arm64 migrc exp": dict(policy="deferred", arch="arm64", reuse=Dist.exponential(60_000.0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_simulation_agrees_with_analysis_within_its_99pct_ci(name):
    m = TlbModel(cpus=6, promotion_rate_per_s=2000, demotion_rate_per_s=2000, reclaim_unmap_rate_per_s=400, batch_folios=16,
                 natural_flush_rate_per_s=15.0, other_round_rate_per_s=2.0, **CASES[name])
    a, s = m.analytic(), m.simulate(horizon_s=60, replications=8, seed=SEED, progress=False)
    for q in ("shootdowns", "full_flushes", "invlpg", "ipis", "tlbi_ops", "dsb_syncs", "calls", "deferred_calls"):
        lo, hi = s.rates.loc[q, "lo"], s.rates.loc[q, "hi"]
        assert lo - 1e-9 <= a.rate(q) <= hi + 1e-9, (q, a.rate(q), lo, hi)
    assert a.overhead == pytest.approx(s.overhead, rel=0.05)


def test_simulation_counts_reuse_rounds_when_cpus_stay_in_step():
    m = TlbModel(cpus=4, policy="deferred", demotion_rate_per_s=3200, batch_folios=32, other_round_rate_per_s=5.0,
                 reuse=Dist.exponential(80_000.0))
    a, s = m.analytic(), m.simulate(horizon_s=60, replications=8, seed=SEED, progress=False)
    lo, hi = s.rates.loc["reuse_rounds", ["lo", "hi"]]
    assert lo <= a.rate("reuse_rounds") <= hi


def test_same_seed_same_result_whatever_the_threads():
    m = TlbModel(cpus=8, policy="deferred", demotion_rate_per_s=5000, reuse=Dist.lognormal(5000.0, 1.5),
                 natural_flush_rate_per_s=10.0)
    one = m.simulate(horizon_s=5, replications=4, threads=1, seed=7, progress=False)
    two = m.simulate(horizon_s=5, replications=4, threads=2, seed=7, progress=False)
    other = m.simulate(horizon_s=5, replications=4, threads=2, seed=8, progress=False)
    np.testing.assert_array_equal(one.rates["value"].to_numpy(), two.rates["value"].to_numpy())
    np.testing.assert_array_equal(one.per_cpu_shootdowns_per_s, two.per_cpu_shootdowns_per_s)
    assert not np.array_equal(one.rates["value"].to_numpy(), other.rates["value"].to_numpy())


def test_ctrl_c_stops_the_des_cleanly():
    m = TlbModel(cpus=8, policy="deferred", demotion_rate_per_s=1e6, reuse=Dist.exponential(1000.0))
    before = threading.active_count()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        m.simulate(horizon_s=90, replications=4, threads=2, progress=False)  # 9e7 units each (limit 1e8): seconds
    assert time.monotonic() - t0 < 5
    timer.join()
    assert threading.active_count() == before
    assert m.simulate(horizon_s=0.01, replications=2, progress=False).rate("calls") > 0  # still usable


# --- costs ---------------------------------------------------------------------------------------
def test_a_guest_pays_more_for_the_same_flushes_and_overload_is_refused():
    m = TlbModel(cpus=16, policy="batched", promotion_rate_per_s=5e4, demotion_rate_per_s=5e4,
                 streams=(TlbStream("dtlb_load", 1536, 20_000),))
    bare, guest = m.analytic(), m.replace(virtualized=True).analytic()
    assert guest.overhead > bare.overhead > 0
    assert guest.runtime_s(100.0) > bare.runtime_s(100.0) > 100.0
    # irq_us comes from the CPU preset (generic x86: 2500 cycles at 2.5 GHz = 1 us); with posted
    # interrupts a running vCPU takes the IPI without an exit, without them each one exits once
    assert guest.model.costs.irq_us == pytest.approx(1.0)
    exit_us = guest.model.costs.vm_exit_us  # the preset's (cpu_models.VM_EXIT_PRIOR)
    assert exit_us == pytest.approx(1.0)
    assert guest.costs()["cpu_share"]["ipi_receive"] == pytest.approx(bare.costs()["cpu_share"]["ipi_receive"])
    no_pi = m.replace(virtualized=True, costs=TlbCosts(posted_interrupts=False)).analytic()
    assert no_pi.costs()["cpu_share"]["ipi_receive"] == pytest.approx(no_pi.rate("shootdowns") * (1.0 + exit_us) / 1e6)
    # PV IPIs: one hypercall per round instead of one exiting ICR write per target
    per_target = m.replace(virtualized=True, pv_ipi=False).analytic().costs()["cpu_share"]["ipi_send"]
    per_round = guest.costs()["cpu_share"]["ipi_send"]
    assert per_target - per_round == pytest.approx(guest.rate("rounds") * (15 - 1) * exit_us / 16 / 1e6)
    # overload is not an error in the middle of a band draw: the runtime is infinite and flagged
    over = m.replace(demotion_rate_per_s=1e9)
    assert over.analytic().saturated and math.isinf(over.analytic().runtime_s(1.0))
    assert over.solve().details["saturated"] and "saturated" in over.solve().title


# --- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,exc,field",
    [
        (dict(cpus=0), ValueError, "cpus"),
        (dict(cpus=2.5), TypeError, "cpus"),
        (dict(demotion_rate_per_s=float("nan")), ValueError, "demotion_rate_per_s"),
        (dict(promotion_rate_per_s=-1.0), ValueError, "promotion_rate_per_s"),
        (dict(reclaim_unmap_rate_per_s="fast"), TypeError, "reclaim_unmap_rate_per_s"),
        (dict(writable_fraction=1.5), ValueError, "writable_fraction"),
        (dict(batch_folios=0), ValueError, "batch_folios"),
        (dict(arch="sparc"), ValueError, "arch"),
        (dict(policy="lazy"), ValueError, "policy"),
        (dict(virtualized="yes"), TypeError, "virtualized"),
        (dict(reuse=Dist.lognormal(float("nan"), 1.0)), ValueError, "reuse.mean_us"),
        (dict(reuse=5.0), TypeError, "reuse"),
        (dict(policy="deferred", reuse=Dist.deterministic(0.0)), ValueError, "reuse.mean_us"),
        (dict(costs=TlbCosts(irq_us=-1.0)), ValueError, "costs.irq_us"),
        (dict(costs=TlbCosts(nested_walk_factor=0.5)), ValueError, "costs.nested_walk_factor"),
        (dict(costs=TlbCosts(refill_ns=-1.0)), ValueError, "refill_ns"),
        (dict(cpus=4, mm_cpus=5), ValueError, "mm_cpus"),
        (dict(mms=0), ValueError, "mms"),
        (dict(migrate_fraction=0.0), ValueError, "migrate_fraction"),
        (dict(dirty_fraction=1.5), ValueError, "dirty_fraction"),
        (dict(pti="yes"), TypeError, "pti"),
        (dict(sender_in_mm="often"), TypeError, "sender_in_mm"),
        (dict(streams=(TlbStream("dtlb_load", 1536, float("inf")),)), ValueError, r"streams\[0\].working_set_pages"),
        (dict(streams=("dtlb",)), TypeError, r"streams\[0\]"),
    ],
)
def test_invalid_inputs_name_the_field(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        TlbModel(**kwargs)


def test_simulation_arguments_are_checked():
    m = TlbModel(demotion_rate_per_s=10.0)
    for kwargs, field in [(dict(horizon_s=0.0), "horizon_s"), (dict(replications=1), "replications"),
                          (dict(warmup_s=float("nan")), "warmup_s")]:
        with pytest.raises(ValueError, match=field):
            m.simulate(progress=False, **kwargs)
    # the core checks its own arguments too, naming the field
    with pytest.raises(ValueError, match="horizon"):
        det = _core.sim.Distribution(kind=_core.sim.DistKind.deterministic, mean=1.0)
        p = _core.tlb.TlbSimParams(cpus=2, arch=_core.tlb.Arch.x86, policy=_core.tlb.Policy.batched, call_rate=1.0,
                                   batch_folios=1, reuse=det, warmup=0.0, horizon=-1.0)
        _core.tlb.simulate(p, 2, 1, 1)
    with pytest.raises(ValueError, match="reuse.samples"):
        empty = _core.sim.Distribution(kind=_core.sim.DistKind.empirical, mean=0.0)
        p = _core.tlb.TlbSimParams(cpus=2, arch=_core.tlb.Arch.x86, policy=_core.tlb.Policy.deferred, call_rate=1.0,
                                   batch_folios=1, reuse=empty, warmup=0.0, horizon=1.0)
        _core.tlb.simulate(p, 2, 1, 1)


# --- who is flushed, batch fill and the migrator (hand-derived) --------------------------------
def test_targets_are_the_owners_cpus_minus_the_sender():
    # one mm on 4 of 16 CPUs, kswapd on a free CPU: every flush IPIs the 4, and kswapd's CPU is not flushed
    r = TlbModel(cpus=16, mm_cpus=4, demotion_rate_per_s=3200.0, batch_folios=32).analytic()
    assert r.rate("rounds") == pytest.approx(100.0)
    assert r.rate("shootdowns") == pytest.approx(100.0 * 4 / 16)
    assert r.rate("full_flushes") == pytest.approx(100.0 * 4 / 16)
    assert r.rate("local_full_flushes") == 0
    # a task of the mm migrating its own pages flushes its CPU locally and IPIs the other 3
    r = TlbModel(cpus=16, mm_cpus=4, demotion_rate_per_s=3200.0, sender_in_mm=True).analytic()
    assert r.rate("shootdowns") == pytest.approx(100.0 * 3 / 16)
    assert r.rate("local_full_flushes") == pytest.approx(100.0)
    # two mms of 2 CPUs and one-folio batches: each flush reaches one mm's 2 CPUs
    assert flush_targets(16, 2, 2, 1, False) == pytest.approx(2.0)
    # 32 folios of 2 mms: both are hit unless all 32 come from one, 1 - 2 * 0.5^32
    assert flush_targets(16, 2, 2, 32, False) == pytest.approx(4 * (1 - 0.5**32))
    assert flush_targets(4, 4, 1, 32, False) == 3.0  # kswapd took a CPU of the mm: it is lazy


def test_batch_fill_and_the_flush_per_dirty_folio():
    # demote_folio_list takes each of 32 isolated folios with p = 0.25: E[fill | fill > 0]
    assert mean_fill(32, 0.25) == pytest.approx(8.0 / (1 - 0.75**32))
    assert mean_fill(1, 0.3) == pytest.approx(1.0)
    # shrink_folio_list: one flush per dirty folio before pageout, one at the end if the last is clean
    assert dirty_flushes_per_call(32, 1.0) == 32 and dirty_flushes_per_call(32, 0.0) == 1
    assert dirty_flushes_per_call(4, 0.5) == pytest.approx(2.5)  # E[D] + P(last clean) = 2 + 0.5
    m = TlbModel(cpus=8, reclaim_unmap_rate_per_s=3200.0, batch_folios=32, dirty_fraction=0.5)
    q = m.solve()
    assert q["folios_per_flush"] == pytest.approx(32 / 16.5)
    assert m.replace(flush_dirty_before_pageout=False).solve()["folios_per_flush"] == pytest.approx(32.0)
    assert m.replace(dirty_fraction=1.0).solve()["folios_per_flush"] == pytest.approx(1.0)


def test_migration_throughput_feeds_back_from_the_flush_cost():
    """A migrator on its own CPU moving one mm's folios: per folio it pays its
    rmap, 2 PTE updates, the copy and 1/32 of a flush round (batched) or one
    round per PTE (per-folio)."""
    base = dict(cpus=8, mm_cpus=7, demotion_rate_per_s=1e4, batch_folios=32, migration_pages=1e6,
                copy_us_per_page=1.0, pte_us=0.05, rmap_us_per_folio=2.0,
                costs=TlbCosts(irq_us=1.0, ipi_send_us=0.5, full_flush_us=0.1, invlpg_us=0.1))
    batched = TlbModel(**base).solve()
    round_us = 7 * 0.5 + (1.0 + 0.1)  # 7 ICR writes, then the slowest ack (its handler and flush)
    per_folio = 2.0 + 2 * 0.05 + 1.0 + round_us / 32
    assert batched["migrated_pages_per_s"] == pytest.approx(1e6 / per_folio)
    assert batched["migration_time_s"] == pytest.approx(1e6 * per_folio / 1e6)
    assert batched["migrator_busy_pct"] == pytest.approx(100 * 1e4 * per_folio / 1e6)
    immediate = TlbModel(**base, policy="immediate").solve()
    per_folio_imm = 2.0 + 2 * 0.05 + 1.0 + 7 * 0.5 + (1.0 + 0.1)
    assert immediate["migrated_pages_per_s"] == pytest.approx(1e6 / per_folio_imm)
    # a cheaper flush moves more pages per second
    assert batched["migrated_pages_per_s"] > immediate["migrated_pages_per_s"]
    deferred = TlbModel(**base, policy="deferred", reuse=Dist.deterministic(1000.0)).solve()
    assert deferred["migrated_pages_per_s"] == pytest.approx(1e6 / (2.0 + 2 * 0.05 + 1.0))


def test_pti_without_invpcid_turns_a_page_flush_into_a_user_tlb_flush():
    base = dict(cpus=4, policy="immediate", demotion_rate_per_s=1000.0, entries_per_folio=1)
    plain = TlbModel(**base).analytic()
    pti = TlbModel(**base, pti=True).analytic()
    no_invpcid = TlbModel(**base, pti=True, invpcid=False).analytic()
    assert pti.rate("invlpg") == pytest.approx(2 * plain.rate("invlpg"))  # kernel and user PCID
    assert pti.rate("user_flushes") == 0
    assert no_invpcid.rate("user_flushes") == pytest.approx(plain.rate("page_flushes"))
    assert no_invpcid.costs()["cpu_share"]["refill_misses"] > 0 == plain.costs()["cpu_share"]["refill_misses"]
    # a Meltdown-affected preset turns PTI on by default
    assert TlbModel(cpu_model="skylake-sp").pti_on and not TlbModel(cpu_model="xeon-8255c").pti_on


def test_every_flush_drops_the_paging_structure_caches():
    # 1M 4K pages span 1954 PDEs and 4 PDPTEs: 32 + 4 + 1 references; 64 pages: 1 + 1 + 1
    assert TlbStream("d", 1536, 1e6).pwc_refill == 37
    assert TlbStream("i", 128, 64).pwc_refill == 3
    r = TlbModel(cpus=4, policy="immediate", demotion_rate_per_s=1000.0).analytic()
    pwc = sum(s.pwc_refill for s in r.model.streams)
    walk_us = r.model.costs.walk_ns * 1e-3
    assert r.costs()["cpu_share"]["pwc_refill"] == pytest.approx(r.rate("page_flushes") * pwc * walk_us / 4 / 1e6)


def test_invlpgb_replaces_ipis_with_broadcasts():
    m = TlbModel(cpus=16, cpu_model="zen3-epyc", demotion_rate_per_s=3200.0, kernel="6.18")
    assert m.broadcast_on and not m.replace(kernel="6.12").broadcast_on
    r = m.analytic()
    # arch_tlbbatch_flush -> invlpgb_flush_all_nonglobals: every CPU flushes, no IPI, one TLBSYNC
    assert r.rate("shootdowns") == 0 and r.rate("ipis") == 0
    assert r.rate("full_flushes") == pytest.approx(100.0)
    assert r.rate("tlbsyncs") == pytest.approx(100.0 / 16)


def test_vmstat_counters_follow_the_kernel_accounting():
    m = TlbModel(cpus=8, mm_cpus=4, sender_in_mm=True, demotion_rate_per_s=3200.0, work_s=10.0)
    q, r = m.solve(), m.analytic()
    t = q["runtime_s"]
    assert q["nr_tlb_remote_flush"] == pytest.approx(100.0 * t)  # native_flush_tlb_multi, once per call
    assert q["nr_tlb_remote_flush_received"] == pytest.approx(100.0 * 3 * t)  # flush_tlb_func on each target
    assert q["nr_tlb_local_flush_all"] == pytest.approx(100.0 * t)
    assert q["nr_tlb_local_flush_one"] == 0
    assert r.rate("shootdowns") * 8 * t == pytest.approx(q["nr_tlb_remote_flush_received"])


NEW_MECHANISMS = {
    "targets, kswapd outside": dict(cpus=12, mm_cpus=3, mms=3, demotion_rate_per_s=4000.0, batch_folios=8),
    "targets, task inside": dict(cpus=12, mm_cpus=3, mms=3, sender_in_mm=True, demotion_rate_per_s=4000.0,
                                 batch_folios=8),
    "batch fill": dict(cpus=6, demotion_rate_per_s=6000.0, migrate_fraction=0.2),
    "dirty folios": dict(cpus=6, reclaim_unmap_rate_per_s=6000.0, dirty_fraction=0.3),
    "per-PTE, task": dict(cpus=8, mm_cpus=4, policy="immediate", demotion_rate_per_s=1500.0, entries_per_folio=2,
                          sender_in_mm=True),
    "one-folio promotions": dict(cpus=6, promotion_rate_per_s=1500.0, kernel="6.3"),  # flushed before v6.4
    "migrc, natural flushes": dict(cpus=6, policy="deferred", demotion_rate_per_s=6000.0,
                                   natural_flush_rate_per_s=40.0, reuse=Dist.deterministic(2000.0)),
    "INVLPGB batched": dict(cpus=8, cpu_model="zen3-epyc", demotion_rate_per_s=4000.0, other_round_rate_per_s=5.0),
    "INVLPGB per-PTE": dict(cpus=8, cpu_model="zen3-epyc", policy="immediate", demotion_rate_per_s=1000.0),
    "INVLPGB migrc": dict(cpus=8, cpu_model="zen3-epyc", policy="deferred", demotion_rate_per_s=4000.0,
                          writable_fraction=0.01, reuse=Dist.deterministic(2000.0)),
    "COW page flushes and migrc": dict(cpus=6, mm_cpus=4, policy="deferred", demotion_rate_per_s=3000.0,
                                       other_page_flush_rate_per_s=2000.0, reuse=Dist.deterministic(1500.0)),
    "arm64 range TLBI, 64K folios": dict(cpus=8, arch="arm64", tlbi_range=True, entries_per_folio=16,
                                         reclaim_unmap_rate_per_s=3000.0, dirty_fraction=0.2),
    "PTI without INVPCID": dict(cpus=4, pti=True, invpcid=False, policy="immediate", demotion_rate_per_s=1000.0),
}


@pytest.mark.parametrize("name", list(NEW_MECHANISMS))
def test_simulation_agrees_with_analysis_on_each_new_mechanism(name):
    m = TlbModel(**NEW_MECHANISMS[name])
    a, s = m.analytic(), m.simulate(horizon_s=20, replications=8, seed=SEED, progress=False)
    approximate = ("rounds", "flushes", "reuse_rounds") if m.natural_flush_rate_per_s else ()
    for q in ("shootdowns", "full_flushes", "invlpg", "rounds", "flushes", "folios", "local_full_flushes",
              "local_one_flushes", "reuse_rounds", "invlpgb_ops", "tlbsyncs", "user_flushes", "page_flushes",
              "tlbi_ops", "dsb_syncs"):
        lo, hi = s.rates.loc[q, "lo"], s.rates.loc[q, "hi"]
        if q in approximate:  # CPUs joining a migrc round independently: a stated approximation
            assert a.rate(q) == pytest.approx(s.rate(q), rel=0.10), (q, a.rate(q), s.rate(q))
            continue
        assert lo - 1e-9 <= a.rate(q) <= hi + 1e-9, (q, a.rate(q), lo, hi)


def test_other_page_flushes_are_an_input_and_bands_vary_the_flush_costs():
    """COW faults of a 4-CPU mm: each IPIs the other 3 and INVLPGs 4 CPUs;
    they are not migration flushes (folios_per_flush unchanged)."""
    base = TlbModel(cpus=8, mm_cpus=4, demotion_rate_per_s=3200.0)
    cow = base.replace(other_page_flush_rate_per_s=1000.0)
    a, b = base.analytic(), cow.analytic()
    assert b.rate("shootdowns") - a.rate("shootdowns") == pytest.approx(1000.0 * 3 / 8)
    assert b.rate("invlpg") - a.rate("invlpg") == pytest.approx(1000.0 * 4 / 8)
    assert cow.solve()["folios_per_flush"] == pytest.approx(base.solve()["folios_per_flush"])
    # INVLPG and the full flush are parameters with priors, so a band draws them
    assert {"invlpg_us", "full_flush_us", "vm_exit_us"} <= {k for k, p in base.params.items() if p.prior}


def test_each_flush_ipi_evicts_user_translations_from_a_full_tlb():
    """A per-PTE flush leaves the TLB's other entries, but its IPI handler's
    few kernel translations evict live user ones: with one data stream that
    fills its STLB, each IPI costs irq_tlb_entries later misses; with a
    working set of half the STLB, half as many (the evicted entry is live
    with that probability)."""
    def misses(ws):
        m = TlbModel(cpus=4, policy="immediate", demotion_rate_per_s=1000.0, work_s=1.0, irq_tlb_entries=3.0,
                     streams=(TlbStream("dtlb_load", 1536, ws),))
        q, r = m.solve(), m.analytic()
        return q["dtlb_load_miss_count"], r.rate("shootdowns") * 4 * q["runtime_s"]

    full, ipis = misses(1e6)
    assert full == pytest.approx(3.0 * ipis)
    half, ipis_half = misses(768)
    assert half == pytest.approx(3.0 * ipis_half * 0.5)


def test_arm64_contpte_refills_one_entry_per_64k_and_range_tlbi_one_op_per_folio():
    """contpte maps a 64K folio as one TLB entry: a stream of 64K pages over
    the same memory has 16x fewer translations to refill; FEAT_TLBIRANGE
    turns a batch's 16 TLBIs per folio into one."""
    ws_mib = 4.0  # 1024 translations of 4K or 64 of 64K: both fit the 1280-entry TLB, each refilled once
    small = TlbStream.covering("dtlb_load", 1280, ws_mib, page_kb=4)
    cont = TlbStream.covering("dtlb_load", 1280, ws_mib, page_kb=64)
    assert small.refill == pytest.approx(16 * cont.refill)
    base = dict(cpus=8, arch="arm64", entries_per_folio=16, reclaim_unmap_rate_per_s=3200.0, dirty_fraction=0.0)
    per_page = TlbModel(**base).analytic()
    ranged = TlbModel(**base, tlbi_range=True).analytic()
    assert per_page.rate("tlbi_ops") == pytest.approx(16 * ranged.rate("tlbi_ops"))
    assert per_page.rate("dsb_syncs") == pytest.approx(ranged.rate("dsb_syncs"))  # one DSB per batch either way


def test_an_arm64_kvm_guest_solves():
    """Found by tests/test_properties.py: the PV-IPI switch is x86's, and an
    arm64 guest asked for it (ValueError). arm64 broadcasts TLBIs: no IPI, no exit."""
    guest = TlbModel(arch="arm64", virtualized=True, demotion_rate_per_s=1e5).solve()
    metal = TlbModel(arch="arm64", virtualized=False, demotion_rate_per_s=1e5).solve()
    assert guest["tlb_shootdowns_per_s"] == metal["tlb_shootdowns_per_s"] == 0.0
    assert math.isfinite(guest["runtime_s"])


@pytest.mark.parametrize("lam, kappa, mean_s, b", [
    (1e-3, 40.0, 0.02, 1), (50.0, 30.0, 0.08, 16), (3200.0, 0.0, 0.06, 32), (1e3, 1e4, 0.06, 32),
    (1e5, 1e-3, 0.5, 1),
    (1e6, 1.0, 1.0, 1),  # a pending period of ~1 us in a reuse time of 1 s: adaptive quadrature missed it (gave 0)
])
def test_migrc_exponential_reuse_matches_the_integral_to_arbitrary_precision(lam, kappa, mean_s, b):
    """The renewal rate r = (1 - kappa I) / (1 / lambda_d + I), with I the
    module docstring's integral, evaluated by mpmath at 30 digits."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    beta = mpmath.mpf(b) / mean_s

    def integrand(t):  # S_1(t) exp(-lambda_d int_0^t (1 - S_1) - kappa t), S_1 = exp(-beta t)
        return mpmath.exp(-beta * t - lam * (t + mpmath.expm1(-beta * t) / beta) - kappa * t)

    w = 1 / (beta + lam + kappa)  # the integrand's own time scale, and the reuse's
    i = mpmath.quad(integrand, [0, w, 10 * w, 100 * w, 1 / beta, mpmath.inf])
    exact = float((1 - kappa * i) / (1 / mpmath.mpf(lam) + i))
    assert deferred_flush_rate(lam, kappa, Dist.exponential(mean_s * 1e6), b) == pytest.approx(exact, rel=1e-11)


def test_migrc_pending_integral_beyond_its_range_is_an_error_not_a_nan():
    with pytest.raises(ValueError, match="reuse"):
        deferred_flush_rate(1e9, 0.0, Dist.exponential(1e9), 1)  # 1e9 calls/s, reuse 1000 s: a = 1e12


# --- kernel eras: each change at the release it landed in (mmcost.kernel) ------------------------
def test_prot_none_promotions_need_no_flush_from_v6_4():
    """4d4b6d66db63 (set_tlb_ubc_flush_pending skips an inaccessible PTE) landed in v6.4: v6.3
    flushes each NUMA-hinting promotion (one folio, one batch flush of its own), v6.4 none."""
    base = dict(cpus=8, promotion_rate_per_s=1000.0)
    assert TlbModel(**base, kernel="6.3").analytic().rate("flushes") == pytest.approx(1000.0)
    assert TlbModel(**base, kernel="6.4").analytic().rate("flushes") == 0


def test_pti_is_the_kernels_from_v4_15_on_a_meltdown_cpu():
    """Mainline PTI (aa8c6248f8c7) is v4.15: a 4.7 or 4.14 kernel on Skylake-SP has none, so a
    single-page flush is one INVLPG, not the kernel's and the user PCID's two. A stable backport
    is named as a patch; the field wins over both."""
    base = dict(cpus=4, cpu_model="skylake-sp", policy="immediate", demotion_rate_per_s=1000.0)
    plain = TlbModel(**base, kernel="4.14").analytic().rate("invlpg")
    assert plain == pytest.approx(1000.0 * 4 / 4)  # every CPU of the mm flushes each folio's one entry
    assert not TlbModel(**base, kernel="4.7").pti_on and not TlbModel(**base, kernel="4.14").pti_on
    assert TlbModel(**base, kernel="4.15").analytic().rate("invlpg") == pytest.approx(2 * plain)
    assert TlbModel(**base, kernel="4.14+pti").pti_on and TlbModel(**base, kernel="4.7", pti=True).pti_on
    assert not TlbModel(**{**base, "cpu_model": "xeon-8255c"}, kernel="4.15").pti_on  # Cascade Lake: no Meltdown


def test_invlpgb_is_off_under_pti_from_v6_16_and_in_a_kvm_guest():
    """v6.15 used INVLPGB with PTI forced on (pti=on on Zen 3); 94a17f2dc90b (v6.16) clears the
    feature when PTI is on. KVM does not expose INVLPGB to a guest: a guest flushes by IPI."""
    m = TlbModel(cpus=16, cpu_model="zen3-epyc", demotion_rate_per_s=3200.0, pti=True)
    assert m.replace(kernel="6.15").broadcast_on and not m.replace(kernel="6.16").broadcast_on
    assert m.replace(kernel="6.16").analytic().rate("shootdowns") == pytest.approx(100.0 * 15 / 16)
    guest = TlbModel(cpus=16, cpu_model="zen3-epyc", demotion_rate_per_s=3200.0, kernel="6.18", virtualized=True)
    assert not guest.broadcast_on and guest.replace(virtualized=False).broadcast_on
    assert guest.replace(invlpgb=True).broadcast_on  # a hypervisor that exposes it: the field says so


# --- a row's kernel sets the switches it leaves empty ----------------------------------------------
def test_a_row_kernel_sets_the_migration_flush_of_a_fitted_model():
    """Migration flushed each PTE at once before v6.3 and once per batch from v6.3 (7e12beb8ca2a).
    A model that pinned its era (policy and switch, as study variants did) and was fitted follows
    each row's kernel; a switch the row sets itself wins over the row's kernel. By hand, 8 CPUs
    all running the mm, 32-folio calls at R folios/s: a batched call is one round to 7 CPUs,
    R/32 x 7/8 shootdowns per CPU-second; per PTE R x 7/8."""
    import pandas as pd

    pinned = TlbModel(cpus=8, kernel="6.9", policy="batched", batched_migration_flush=True,
                      demotion_rate_per_s=3200.0, batch_folios=32)
    rows = pd.DataFrame(dict(metric="tlb_shootdowns_per_s", value=[6400 / 32 * 7 / 8] * 2, stddev=1.0))
    fit = pinned.fit(rows, free=["demotion_rate_per_s"])
    assert fit.params["demotion_rate_per_s"] == pytest.approx(6400.0)
    ask = pd.DataFrame(dict(metric=["folios_per_flush"] * 3 + ["tlb_shootdowns_per_s"] * 2,
                            kernel=["6.2", "6.3", "6.2", "6.2", "6.3"],
                            batched_migration_flush=[None, None, True, None, None]))
    best = fit.predict(ask)["best"].to_numpy()
    np.testing.assert_allclose(best, [1.0, 32.0, 32.0, 6400 * 7 / 8, 6400 / 32 * 7 / 8], rtol=1e-9)
    # migrc's deferral is in no kernel: a row's kernel leaves it
    assert pinned.replace(policy="deferred").configure(kernel="6.2").flush_policy.value == "deferred"
    assert pinned.configure(kernel="6.2", policy="batched").flush_policy.value == "batched"


# --- arch and cpu_model agree ----------------------------------------------------------------------
def test_arch_and_cpu_model_of_different_architectures_are_refused_both_ways():
    with pytest.raises(ValueError, match=r"arch='arm64'.*cpu_model='skylake-sp'"):
        TlbModel(arch="arm64", cpu_model="skylake-sp")
    with pytest.raises(ValueError, match=r"arch='x86'.*cpu_model='ampere-altra'"):
        TlbModel(arch="x86", cpu_model="ampere-altra")
    assert TlbModel(cpu_model="ampere-altra").arch.value == "arm64"  # arch left empty: the preset's
    altra = TlbModel(cpu_model="ampere-altra", cpus=8, demotion_rate_per_s=1000.0)
    with pytest.raises(ValueError, match=r"arch='x86'.*cpu_model='ampere-altra'"):
        altra.configure(arch="x86")  # a row asking x86 of an Altra model names a preset too
    x86 = altra.configure(cpu_model="generic-x86")  # a row's preset brings its arch
    assert x86.arch.value == "x86" and x86.costs.irq_us == pytest.approx(2500 / 2.5e3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(policy="deferred", reuse=Dist.exponential(5e-324)), r"^reuse\.mean_us must be in \[0\.001, 1e\+15\] us"),
    (dict(policy="deferred", reuse=Dist.lognormal(5e-324, 1.0)), r"^reuse\.mean_us must be in"),  # gave NaN
    (dict(reuse=Dist.exponential(math.inf)), r"^reuse\.mean_us \(column reuse_mean_us\) must be finite and >= 0"),
    (dict(costs=TlbCosts(irq_us=1e300)), r"^costs\.irq_us \(column irq_us\) must be finite and in \[0, 100\]"),
    (dict(streams=(TlbStream("dtlb_load", 1536, math.inf),)),
     r"^streams\[0\]\.working_set_pages \(column dtlb_load_working_set_pages\) must be finite"),
    (dict(work_s=0.0), r"^work_s must be finite and in \[1e-09, 1e\+09\]"),
    (dict(demotion_rate_per_s=1e300), r"^demotion_rate_per_s must be finite and in \[0, 1e\+12\]"),
])
def test_fields_are_checked_against_their_bounds_when_the_model_is_built(kwargs, match):
    """Issue 31: a reuse of 5e-324 us raised ZeroDivisionError (its first-reuse rate 32 / mean overflows);
    each is a ValueError naming the field as the user wrote it."""
    with pytest.raises(ValueError, match=match):
        TlbModel(**kwargs)


@pytest.mark.parametrize("entries,pages", [(1, 1e12), (1536, 1e12), (1536, 1e6), (7.5, 1e10), (1536, 29184.0),
                                           (1536, 32256.0), (2.5, 60.0), (1e5, 1e7), (128, 129)])
def test_refill_misses_against_mpmath_where_the_working_set_dwarfs_the_tlb(entries, pages):
    """Issue 31's property test: W = 1e12 pages with C = 1 entry gave -0.6 refill misses (a miss count of
    -inf): the digamma difference cancels. The exact sum, at 80 digits."""
    import mpmath

    with mpmath.workdps(80):
        c, w = mpmath.mpf(entries), mpmath.mpf(pages)
        exact = float(c - (w - c) * (mpmath.digamma(w + 1) - mpmath.digamma(w - c + 1)))
    assert refill_misses(entries, pages) == pytest.approx(exact, rel=1e-12)
    lanes_ = TlbStream("dtlb_load", np.array([entries, entries]), np.array([pages, pages])).refill
    assert lanes_[0] == pytest.approx(exact, rel=1e-12)


def test_a_lognormal_reuse_far_slower_than_the_natural_flushes_defers_no_flush():
    """Found by the 2,000-example property run: a lognormal reuse of mean 1e15 us (31 years) with one
    natural flush a second gave a deferred flush rate of -1/s (the integral's grid started far beyond
    the 1 s the integrand decays in), then an OverflowError. Every folio's pending flush is cleared by
    a natural one first: the rate is 0 (at most the chance a 1 s wait outlasts a 31-year reuse)."""
    from mmcost.tlb import _deferred_flush_rate

    rate = _deferred_flush_rate(1000.0, 1.0, Dist.lognormal(1e15, 1.0), 1)
    assert 0.0 <= rate < 1e-6
    # and a lognormal reuse the grid always resolved is unchanged: the rate lies between the
    # no-natural-flush case and zero
    assert 0 < _deferred_flush_rate(300.0, 2.0, Dist.lognormal(5e5, 1.0), 1) < _deferred_flush_rate(
        300.0, 0.0, Dist.lognormal(5e5, 1.0), 1)


def test_a_measured_refill_cost_replaces_the_nested_walk_for_every_walk_charged():
    """Hand-derived: a guest, one full flush per call of 32 folios at 1,000 demotions/s over 4 CPUs; two streams
    that fit their TLBs (30 + 10 pages refilled per full flush). With refill_ns = 15 each refill costs 15 ns, not
    walk_ns x nested_walk_factor; the paging-structure refill is a quarter walk each, at the same price."""
    streams = (TlbStream("itlb_load", 128, 30.0), TlbStream("dtlb_store", 1536, 10.0))
    base = dict(cpus=4, policy="batched", demotion_rate_per_s=1000.0, virtualized=True, streams=streams)
    nested = TlbModel(**base, costs=TlbCosts(walk_ns=30.0, nested_walk_factor=3.0)).analytic()
    measured = TlbModel(**base, costs=TlbCosts(walk_ns=30.0, nested_walk_factor=3.0, refill_ns=15.0)).analytic()
    assert measured.rate("full_flushes") == nested.rate("full_flushes") > 0
    flushes = measured.rate("full_flushes") + measured.rate("user_flushes")
    scale = 4 / measured.model.busy_cpus
    share = measured.costs()["cpu_share"]
    assert share["refill_misses"] == pytest.approx(flushes * 40 * 15e-3 * scale / 1e6, rel=1e-12)
    assert nested.costs()["cpu_share"]["refill_misses"] == pytest.approx(share["refill_misses"] * 90 / 15, rel=1e-12)
    pwc = sum(s.pwc_refill for s in streams)  # 1 PDE + 1 PDPTE + 1 PML4E each: 6
    assert pwc == 6
    assert share["pwc_refill"] == pytest.approx(
        (flushes + measured.rate("page_flushes")) * pwc * 15e-3 / 4 * scale / 1e6, rel=1e-12)
    # bare metal: a measured refill is the machine's walk too, no factor either way
    bare = TlbModel(**{**base, "virtualized": False}, costs=TlbCosts(walk_ns=30.0, refill_ns=15.0)).analytic()
    assert bare.costs()["cpu_share"]["refill_misses"] == pytest.approx(share["refill_misses"], rel=1e-12)


# --- one flush cost for TlbModel and SwapModel (mmcost.tlb.flush_cost) ----------------------------------------
# primitive costs (us) chosen so that no two sums coincide
IRQ, SEND, FULL, INVLPG, EXIT = 1.1, 0.7, 0.3, 0.13, 2.9


def _hand_sender(t, loc, own, virt, pv_ipi, posted, concurrent):
    """One flush's sender time from the kernel's order of events, by cases: ``a`` the chance of a remote
    target (t <= 1: exactly t), ``loc`` of the sender's own CPU being in the mask, independently."""
    a = min(1.0, t)
    exit_recv = EXIT if virt and not posted else 0.0
    send = t * SEND + ((a if pv_ipi else t) * EXIT if virt else 0.0)
    remote = IRQ + exit_recv + own  # IPI delivered, handler entered, own flush, csd unlocked
    if concurrent:  # smp_call_function_many_cond: send, run_local, csd_lock_wait
        with_local = a * max(own, remote) + (1 - a) * own
        return send + loc * with_local + (1 - loc) * a * remote
    return loc * own + send + a * remote  # flush_tlb_func_local, then flush_tlb_others (send, wait)


FLUSH_CASES = [  # (processes, threads, cpus, folios): each process one mm on `threads` CPUs
    (1, 2, 2, 1),   # one target, the sender's own mm: t = 1, local = 1
    (2, 1, 2, 1),   # the other process's folio half the time: t = 1/2, local = 1/2
    (4, 2, 8, 1),   # t = (2 - 1)/4 + 3 x 2/4 = 7/4, local = 1/4
    (4, 2, 8, 32),  # a batch of 32 folios: nearly every mm
]


@pytest.mark.parametrize("processes, threads, cpus, folios", FLUSH_CASES)
@pytest.mark.parametrize("virt, pv_ipi, posted", [(False, False, True), (True, False, True), (True, True, True),
                                                  (True, False, False), (True, True, False)])
@pytest.mark.parametrize("kernel", ["6.18", "5.12"])
def test_tlb_and_swap_models_charge_one_flush_the_same_hand_derived_time(processes, threads, cpus, folios, virt,
                                                                        pv_ipi, posted, kernel):
    from mmcost.swap import SwapModel
    from mmcost.swap import paths

    hit = 1 - (1 - 1 / processes) ** folios  # a given mm owns one of the flushed folios
    t = min(cpus - 1, (threads - 1) * hit + (processes - 1) * threads * hit)
    concurrent = kernel == "6.18"  # 4ce94eabac16, v5.13
    tlb = TlbModel(cpus=cpus, mm_cpus=threads, mms=processes, sender_in_mm=True, virtualized=virt, pv_ipi=pv_ipi,
                   pti=False, invlpgb=False, kernel=kernel, policy="batched",
                   costs=TlbCosts(irq_us=IRQ, ipi_send_us=SEND, full_flush_us=FULL, invlpg_us=INVLPG,
                                  vm_exit_us=EXIT, posted_interrupts=posted)).analytic()
    walks, walk_ns = 5.0, 40.0
    swap = SwapModel(processes=processes, threads=threads, cpus=cpus, bytes_per_process=2**30, memcg_mb=256,
                     swap_device="brd", cpu_model="generic-x86", kernel=kernel, virtualized=virt, pv_ipi=pv_ipi,
                     irq_us=IRQ, ipi_send_us=SEND, full_flush_us=FULL, invlpg_us=INVLPG, vm_exit_us=EXIT,
                     posted_interrupts=posted, refill_pages_per_full_flush=walks, walk_ns=walk_ns)
    refill = walks * walk_ns * 1e-3 * (swap.nested_walk_factor if virt else 1.0)
    for own, full in ((INVLPG, False), (FULL, True)):
        want = _hand_sender(t, hit, own, virt, pv_ipi, posted, concurrent)
        if full:
            got_tlb = tlb.flush_sender_us("batch", folios)
            got_swap = paths.flush(swap, 1, folios, True)
        else:
            if folios != 1:
                continue
            got_tlb = tlb.flush_sender_us("page")
            got_swap = paths.flush(swap, 1, 1, False)
        assert got_tlb == pytest.approx(want, rel=1e-12, abs=1e-12)
        # the swap side adds the sender's TLB refill after a full flush, when its own TLB was flushed
        assert got_swap["sender"] - (hit * refill if full else 0.0) == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert got_swap["shootdowns"] == pytest.approx(t, rel=1e-12)
        exit_recv = EXIT if virt and not posted else 0.0
        assert got_swap["targets"] == pytest.approx(t * (IRQ + exit_recv + own + (refill if full else 0.0)),
                                                    rel=1e-12)


def test_one_flush_by_hand_guest_without_pv_ipis_or_posted_interrupts():
    from mmcost.tlb import flush_cost

    kw = dict(targets=1.0, full=False, local=1.0, full_flush_us=FULL, invlpg_us=INVLPG, ipi_send_us=SEND,
              irq_us=IRQ, virtualized=True, vm_exit_us=EXIT, pv_ipi=False, posted_interrupts=False)
    # send 0.7 + an exit 2.9 = 3.6; the target: exit 2.9 + irq 1.1 + INVLPG 0.13 = 4.13, the local INVLPG under it
    assert flush_cost(**kw)["sender"] == pytest.approx(7.73, rel=1e-12)
    # before v5.13 the local INVLPG came first
    assert flush_cost(**kw, concurrent=False)["sender"] == pytest.approx(7.86, rel=1e-12)
    # kswapd (not in the mask) waits for the target's handler all the same
    assert flush_cost(**{**kw, "local": 0.0})["sender"] == pytest.approx(7.73, rel=1e-12)


def test_pv_tlb_flush_skips_the_preempted_vcpus_ipis():
    """kvm_flush_tlb_multi (v4.16) drops a preempted target from the mask: 4 targets preempted a quarter of
    the time leave 3 IPIs, each 0.7 us, one PV IPI hypercall of 2.9 us, and one wait of 1.1 + 0.13 us
    (posted interrupts); the fourth is flushed by the host at its next entry (0.13 us, no IPI)."""
    from mmcost.tlb import flush_cost

    kw = dict(targets=4.0, full=False, local=1.0, full_flush_us=FULL, invlpg_us=INVLPG, ipi_send_us=SEND,
              irq_us=IRQ, virtualized=True, vm_exit_us=EXIT, pv_ipi=True, preempted_share=0.25)
    on = flush_cost(**kw, pv_tlb_flush=True)
    assert on["sender"] == pytest.approx(3 * 0.7 + 2.9 + 1.1 + 0.13, rel=1e-12)
    assert on["shootdowns"] == pytest.approx(3.0, rel=1e-12)
    assert on["targets"] == pytest.approx(3 * (1.1 + 0.13) + 0.13, rel=1e-12)
    off = flush_cost(**kw, pv_tlb_flush=False)
    assert off["sender"] == pytest.approx(4 * 0.7 + 2.9 + 1.1 + 0.13, rel=1e-12)
    assert off["shootdowns"] == pytest.approx(4.0, rel=1e-12)
    # bare metal has no steal time: the share changes nothing
    bare = flush_cost(**{**kw, "virtualized": False}, pv_tlb_flush=True)
    assert bare["sender"] == pytest.approx(4 * 0.7 + 1.1 + 0.13, rel=1e-12)

    # TlbModel: 10 mm-wide flush rounds a second from one of 5 vCPUs reach 4 targets, 3 of them by IPI;
    # every one of the 5 still flushes its TLB
    m = TlbModel(cpus=5, virtualized=True, preempted_share=0.25, other_round_rate_per_s=10.0, kernel="6.18")
    r = m.analytic()
    assert r.rate("shootdowns") == pytest.approx(10 * 3 / 5, rel=1e-12)
    assert r.rate("ipis") == pytest.approx(10 * 3 / 5, rel=1e-12)
    assert r.rate("full_flushes") == pytest.approx(10.0, rel=1e-12)
    assert m.replace(kernel="4.15").analytic().rate("shootdowns") == pytest.approx(10 * 4 / 5, rel=1e-12)
    assert m.replace(virtualized=False).analytic().rate("shootdowns") == pytest.approx(10 * 4 / 5, rel=1e-12)
    with pytest.raises(ValueError, match="preempted_share"):
        m.simulate(horizon_s=0.01, replications=2, progress=False)
    with pytest.raises(ValueError, match="preempted_share"):
        TlbModel(preempted_share=1.5)
