"""mmcost.swap: the composed swap-out model. Its two solvers against each other,
physics that must hold for any parameters (property tests), bad configurations."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mmcost.swap import SwapCosts, SwapDevice, SwapModel, large_fault_share
from mmcost.tlb import TlbCosts

SEED = 2026
BRD = SwapDevice("brd", copy_us_per_page=2.0)


def small(**kw):
    base = dict(processes=8, bytes_per_process=2**30, memcg_mb=4096, device=BRD)
    return SwapModel(**{**base, **kw})


def test_swapped_share_is_everything_beyond_the_limit():
    m = small()
    assert m.swapped_share == pytest.approx(1 - 4096 / (8 * 1024))
    r = m.solve()
    assert r["usemem_throughput_kib_s"] == pytest.approx(r["swapout_kib_s"] / m.swapped_share / 8)


def test_one_process_has_no_contention_and_costs_add_up():
    """P = 1: throughput is one folio per (sum of all stage times)."""
    c = SwapCosts(fault_us=1.0, zero_us_per_page=1.0, pte_us=0.1, reclaim_us=2.0, lru_hold_us=0.3, slot_hold_us=6.4,
                  swapcache_us=0.5)
    m = SwapModel(processes=1, bytes_per_process=2**30, memcg_mb=512, device=BRD, arch="x86", costs=c,
                  tlb_costs=TlbCosts(full_flush_us=0.0, invlpg_us=0.0))
    s = m.swapped_share
    per_folio = (1.0 + 1.0 + 0.1) / s + (2.0 + 0.1 + 0.5 + 2.0) + 0.3 + 6.4 / 64
    assert m.solve()["swapout_kib_s"] == pytest.approx(4 * 1e6 / per_folio, rel=1e-9)


@pytest.mark.parametrize("cfg", [
    dict(folio_kb=4),
    dict(folio_kb=64, split_small_thp=True),
    dict(folio_kb=64, split_small_thp=False, large_share=0.6),
    dict(folio_kb=2048),
    dict(folio_kb=16, device=SwapDevice("nvme", bandwidth_mib_s=1500.0, latency_us=20.0, queue_depth=4)),
], ids=["4K", "64K split", "64K whole 60%", "2M", "16K nvme"])
def test_simulation_agrees_with_mva(cfg):
    m = small(costs=SwapCosts(lru_hold_us=0.6, slot_hold_us=5.0), **cfg)
    a = m.solve()
    s = m.solve("simulated", ops=60_000, replications=8, seed=SEED, progress=False)
    assert abs(a["swapout_kib_s"] - s["swapout_kib_s"]) <= s["swapout_kib_s_ci99"]


# --- physics, for any parameters ----------------------------------------------------------------
costs = st.builds(SwapCosts, fault_us=st.floats(0.1, 5), zero_us_per_page=st.floats(0.1, 5), pte_us=st.floats(0, 0.5),
                  reclaim_us=st.floats(0.1, 10), lru_hold_us=st.floats(0, 3), slot_hold_us=st.floats(0, 10),
                  swapcache_us=st.floats(0, 2), split_us_per_page=st.floats(0, 2))
sizes = st.sampled_from([4, 16, 64, 256, 2048])
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(costs, sizes, st.floats(100, 5000), st.floats(1.01, 10))
def test_more_device_bandwidth_never_slows_swap_out(c, kb, bw, factor):
    dev = SwapDevice("nvme", bandwidth_mib_s=bw, latency_us=10.0, queue_depth=8)
    slow = small(costs=c, folio_kb=kb, device=dev).solve()["swapout_kib_s"]
    fast = small(costs=c, folio_kb=kb, device=SwapDevice("nvme", bandwidth_mib_s=bw * factor, latency_us=10.0,
                                                         queue_depth=8)).solve()["swapout_kib_s"]
    assert fast >= slow * (1 - 1e-9)


@SETTINGS
@given(costs, sizes, st.floats(0.01, 2), st.floats(1.01, 10))
def test_cheaper_tlb_invalidation_never_slows_swap_out(c, kb, tlbi, factor):
    cheap = small(costs=c, folio_kb=kb, tlb_costs=TlbCosts(tlbi_us=tlbi / factor)).solve()["swapout_kib_s"]
    dear = small(costs=c, folio_kb=kb, tlb_costs=TlbCosts(tlbi_us=tlbi)).solve()["swapout_kib_s"]
    assert cheap >= dear * (1 - 1e-9)


@SETTINGS
@given(costs, sizes, st.integers(1, 60))
def test_more_processes_never_raise_per_process_throughput(c, kb, p):
    def per_process(n):
        return SwapModel(processes=n, bytes_per_process=2**30, memcg_mb=256, folio_kb=kb, device=BRD,
                         costs=c).solve()["usemem_throughput_kib_s"]

    assert per_process(p + 1) <= per_process(p) * (1 + 1e-9)


# --- the fault-time folio mix ----------------------------------------------------------------------
def test_large_fault_share_follows_the_charge_rule():
    assert large_fault_share(2048, 256, 4096, madvise=True) == 1.0
    assert large_fault_share(256, 256, 4096, madvise=False) == pytest.approx(256 / 4096)
    assert large_fault_share(4, 256, 4096, madvise=False) == 1.0
    with pytest.raises(ValueError, match="measure it"):
        large_fault_share(64, 256, 4096, madvise=False)


def test_fallback_mix_sits_between_the_pure_sizes():
    pure_large = small(folio_kb=2048).solve()["swapout_kib_s"]
    pure_small = small(folio_kb=4).solve()["swapout_kib_s"]
    mixed = small(folio_kb=2048, large_share=0.5).solve()["swapout_kib_s"]
    assert min(pure_large, pure_small) < mixed < max(pure_large, pure_small)


# --- bad configurations ---------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,field", [
    (dict(folio_kb=12), ValueError, "folio_kb"),
    (dict(folio_kb=6), ValueError, "folio_kb"),
    (dict(folio_kb=4096), ValueError, "folio_kb"),
    (dict(folio_kb=2.5), TypeError, "folio_kb"),
    (dict(memcg_mb=8 * 1024), ValueError, "memcg_mb"),
    (dict(memcg_mb=-1.0), ValueError, "memcg_mb"),
    (dict(processes=0), ValueError, "processes"),
    (dict(large_share=1.5), ValueError, "large_share"),
    (dict(contiguous_failure=-0.1), ValueError, "contiguous_failure"),
    (dict(device="brd"), TypeError, "device"),
    (dict(costs=SwapCosts(reclaim_us=float("nan"))), ValueError, "costs.reclaim_us"),
    (dict(arch="mips"), ValueError, "arch"),
])
def test_invalid_configurations_name_the_field(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        small(**kwargs)


@pytest.mark.parametrize("kwargs,field", [
    (dict(kind="nvme", bandwidth_mib_s=-5.0), "bandwidth_mib_s"),
    (dict(kind="nvme", bandwidth_mib_s=math.nan), "bandwidth_mib_s"),
    (dict(kind="tape"), "kind"),
    (dict(kind="nvme", queue_depth=0), "queue_depth"),
    (dict(kind="zram", compress_us_per_page=-1.0), "compress_us_per_page"),
])
def test_invalid_devices_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        SwapDevice(**kwargs)


# --- kernel-era switches -------------------------------------------------------------------------
@SETTINGS
@given(costs, st.integers(1, 64), st.integers(1, 32), st.integers(1, 8))
def test_more_lock_partitions_never_slow_swap_out(c, p, k, extra):
    def swapout(slot_parts, cache_parts):
        return SwapModel(processes=p, bytes_per_process=2**30, memcg_mb=256, device=BRD, costs=c, slot_cache=False,
                         slot_lock_partitions=slot_parts, swapcache_lock_partitions=cache_parts).solve()["swapout_kib_s"]

    base = swapout(k, k)
    assert swapout(k + extra, k) >= base * (1 - 1e-9)
    assert swapout(k, k + extra) >= base * (1 - 1e-9)


@SETTINGS
@given(costs, st.integers(1, 64))
def test_dropping_writeback_tags_or_adding_the_slot_cache_never_slows_swap_out(c, p):
    def swapout(**kw):
        base = dict(processes=p, bytes_per_process=2**30, memcg_mb=256, device=BRD, costs=c, swapcache_lock_partitions=1)
        return SwapModel(**{**base, **kw}).solve()["swapout_kib_s"]

    assert swapout(writeback_tags=False) >= swapout(writeback_tags=True) * (1 - 1e-9)
    assert swapout(slot_cache=True) >= swapout(slot_cache=False) * (1 - 1e-9)


def test_v48_swap_cache_has_the_four_published_call_sites():
    m = small(swapcache_lock_partitions=1, writeback_tags=True, slot_cache=False, arch="x86")
    sites = set(m.solve()["result"].sites.index)
    assert {"__add_to_swap_cache", "__remove_mapping", "__test_set_page_writeback", "test_clear_page_writeback"} <= sites
    assert "__test_set_page_writeback" not in set(m.replace(writeback_tags=False).solve()["result"].sites.index)


@pytest.mark.parametrize("kwargs,exc,field", [
    (dict(slot_lock_partitions=0), ValueError, "slot_lock_partitions"),
    (dict(swapcache_lock_partitions=-1), ValueError, "swapcache_lock_partitions"),
    (dict(slot_cache="yes"), TypeError, "slot_cache"),
    (dict(writeback_tags=1), TypeError, "writeback_tags"),
])
def test_invalid_switches_name_the_field(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        small(**kwargs)


def test_a_failed_contiguous_allocation_takes_the_split_path():
    c = SwapCosts(slot_hold_us=0.0)  # no failed-scan cost: failure == the split policy exactly
    whole_failing = small(folio_kb=64, split_small_thp=False, contiguous_failure=1.0, costs=c).solve()
    split = small(folio_kb=64, split_small_thp=True, costs=c).solve()
    assert whole_failing["swapout_kib_s"] == pytest.approx(split["swapout_kib_s"], rel=1e-12)


@SETTINGS
@given(costs, st.sampled_from([16, 64, 2048]), st.floats(0, 0.9), st.floats(0.01, 0.1))
def test_more_contiguous_failures_never_speed_swap_out_up(c, kb, f, more):
    def swapout(fail):
        return small(folio_kb=kb, split_small_thp=False, contiguous_failure=fail, costs=c).solve()["swapout_kib_s"]

    assert swapout(f + more) <= swapout(f) * (1 + 1e-9)


def test_mthp_counters_become_model_inputs():
    from mmcost import parse
    from mmcost.swap import mthp_inputs

    text = "\n".join([
        "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/stats/anon_fault_alloc:94012",
        "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/stats/anon_fault_fallback:6001",
        "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/stats/swpout:81233",
        "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/stats/swpout_fallback:12",
        "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/stats/anon_fault_alloc:25",
        "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/stats/anon_fault_fallback:75",
    ])
    rows = parse.mthp_stats(text)
    got = mthp_inputs(rows, 16)
    assert got["large_share"] == pytest.approx(94012 / (94012 + 6001))
    assert got["contiguous_failure"] == pytest.approx(12 / (81233 + 12))
    assert mthp_inputs(rows, 2048) == {"large_share": pytest.approx(0.25)}
    m = small(folio_kb=16, split_small_thp=False, **got)
    assert m.large_share == got["large_share"] and m.solve()["swapout_kib_s"] > 0
    with pytest.raises(ValueError, match="folio_kb"):
        mthp_inputs(rows, 64)
    with pytest.raises(TypeError, match="rows"):
        mthp_inputs("hugepages-16kB", 16)


def test_swapout_cpu_of_a_split_fallback():
    from mmcost.swap import SwapCosts, SwapDevice, SwapModel

    def diff(split_us):
        m = SwapModel(processes=96, folio_kb=64, arch="x86", device=SwapDevice("zram", compress_us_per_page=6.0),
                      costs=SwapCosts(split_us_per_page=split_us))
        return m.swapout_cpu_us(64, False) - m.swapout_cpu_us(64, True)

    # each of the 16 subpages pays split_us_per_page once; compression is the same either way
    assert diff(1.5) - diff(0.5) == pytest.approx(16 * 1.0, rel=1e-12)
    assert diff(0.5) > 0
    m = SwapModel(folio_kb=4)
    assert m.swapout_cpu_us(4, True) == m.swapout_cpu_us(4, False)
    with pytest.raises(ValueError, match="kb must be"):
        m.swapout_cpu_us(48, True)
    with pytest.raises(TypeError, match="whole"):
        m.swapout_cpu_us(64, "yes")
