"""mmcost.swap: the swap-out mechanism. Its two solvers against each other, a
closed form for one writer, physics that must hold for any parameters
(property tests), the kernel's switches, and bad configurations."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mmcost.swap import SwapModel, mthp_inputs
from mmcost.swap import paths

SEED = 2026
PAGE_KIB = 4


def small(**kw):
    base = dict(processes=8, bytes_per_process=2**30, memcg_mb=4096, swap_device="brd", cpu_model="generic-x86")
    return SwapModel(**{**base, **kw})


def test_swapped_share_is_everything_beyond_the_limit():
    m = small()
    r = m.solve()
    assert r["swapped_share"] == pytest.approx(1 - 4096 / (8 * 1024))
    assert r["usemem_throughput_kib_s"] == pytest.approx(r["swapout_kib_s"] / r["swapped_share"] / 8)
    assert r["real_time_s"] == pytest.approx(2**30 / 1024 / r["usemem_throughput_kib_s"] + r["exit_time_s"])


def test_one_writer_has_no_contention_and_costs_add_up():
    """P = 1: throughput is one folio per (sum of every stage's time), stage by stage from the docstring."""
    m = SwapModel(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="brd", cpu_model="generic-x86",
                  fault_us_per_folio=1.0, core_write_gb_s=4.096, user_us_per_page=0.1, pte_us=0.1, walk_ns=30.0, reclaim_us_per_folio=2.0,
                  reclaim_us_per_page=0.05,
                  lru_hold_us_per_folio=0.3, slot_hold_us_per_acquisition=6.4, slot_us_per_slot=0.02,
                  swapcache_us_per_folio=0.3, swapcache_us_per_page=0.2, full_flush_us=0.1,
                  refill_pages_per_full_flush=8.0, mem_bw_gb_s=50.0, kernel="6.6", brd_alloc_us_per_page=0.3,
                  brd_xa_hold_us=0.1, swap_avail_hold_us=0.1, memcg_charge_hold_us=0.2,
                  reference_us_per_folio=0.25, reference_us_per_page=0.03)
    s = 0.5
    # (x86 on 6.6: no young-bit TLBIs, no DVM station; swap_map counts off si->lock since v4.11, so no map_*
    # holds and their lines; one writer: no lines moved at the lruvec lock)
    fault = 1.0 + 1.0 + 0.1 + 0.1 + 0.03          # fault, clear_page at 4.096 GB/s, store, PTE, first-touch walk
    fault += -0.3 + 0.3                           # folio_add_lru's list work leaves the fault for the lruvec lock
    reclaim = 2.0 + 0.05 + 0.1 + 2.0 + (0.1 + 8 * 0.03)  # per folio, per page, unmap, brd memcpy, a flush + refill
    reclaim += 0.3 + 1.0                          # brd_insert_page: a new page, zeroed at 4.096 GB/s
    reclaim += 2 * (0.25 + 0.03)                  # two reference checks: kept young, then reclaimed old
    # swap cache; lruvec: isolated twice, put back once; si->lock; swap_avail_lock
    stations = 0.5 + 3 * 0.3 + 6.4 / 64 + 0.02 + 0.1 / 64
    stations += 0.1                                    # brd's xa_lock (one writer: no memcg counter line moves)
    stations += (4096 / s + 8192 + 4096) / 50e3        # DRAM: zeroing, brd's memcpy, brd's new page
    per_folio = fault / s + reclaim + stations
    assert m.solve()["swapout_kib_s"] == pytest.approx(4 * 1e6 / per_folio, rel=1e-9)
    assert m.solve()["tlb_shootdowns_per_swapped_page"] == 0.0  # its own mm on its own CPU: local flushes


@pytest.mark.parametrize("lru_gen", [False, True], ids=["classic LRU", "MGLRU"])
def test_one_arm64_writer_costs_add_up_with_the_young_bit_tlbis(lru_gen):
    """The same writer on arm64 (v6.6, 4 PEs): the flush is one TLBI and a DSB whose wait grows with the PEs
    (0.5 x (1 + 0.1 x 3) us, the sender's); the classic LRU's first reference check finds the PTE young and
    ptep_clear_flush_young sends one more TLBI without a DSB, so two TLBIs a folio queue at the DVM node
    (0.2 us each). MGLRU: the aging walk clears the young bit in the page table (no TLBI), one rmap walk
    plus the young PTE's test, two list operations and no putback."""
    m = SwapModel(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="brd", cpu_model="generic-arm64",
                  machine_cpus=4, fault_us_per_folio=1.0, core_write_gb_s=4.096, user_us_per_page=0.1, pte_us=0.1,
                  walk_ns=30.0, reclaim_us_per_folio=2.0, reclaim_us_per_page=0.05, lru_hold_us_per_folio=0.3,
                  slot_hold_us_per_acquisition=6.4, slot_us_per_slot=0.02, swapcache_us_per_folio=0.3,
                  swapcache_us_per_page=0.2, mem_bw_gb_s=50.0, kernel="6.6", brd_alloc_us_per_page=0.3,
                  brd_xa_hold_us=0.1, swap_avail_hold_us=0.1, memcg_charge_hold_us=0.2,
                  reference_us_per_folio=0.25, reference_us_per_page=0.03, tlbi_us=0.2, dsb_us=0.5,
                  dsb_growth_per_cpu=0.1, lru_gen=lru_gen)
    s = 0.5
    fault = 1.0 + 1.0 + 0.1 + 0.1 + 0.03 - 0.3 + 0.3  # as on x86; folio_add_lru's work at the lruvec lock
    reclaim = 2.0 + 0.05 + 0.1 + 2.0 + 0.3 + 1.0      # per folio, per page, unmap, brd's memcpy and new page
    reclaim += 0.5 * (1 + 0.1 * 3)                    # the flush's DSB ISH, waited for by the sender
    if lru_gen:
        reclaim += (0.25 + 0.03) + 0.03               # one rmap walk; the aging walk tests the young PTE
        lru, dvm = 2 * 0.3, 1 * 0.2                   # two scans under the lock; the unmap's TLBI only
    else:
        reclaim += 2 * (0.25 + 0.03)                  # two reference checks: kept young, then reclaimed old
        lru, dvm = 3 * 0.3, 2 * 0.2                   # isolated twice, put back once; unmap's and young TLBIs
    stations = 0.5 + lru + 6.4 / 64 + 0.02 + 0.1 / 64 + dvm
    stations += 0.1
    stations += (4096 / s + 8192 + 4096) / 50e3
    per_folio = fault / s + reclaim + stations
    r = m.solve()
    assert r["swapout_kib_s"] == pytest.approx(4 * 1e6 / per_folio, rel=1e-9)
    assert r["tlb_shootdowns_per_swapped_page"] == 0.0


@pytest.mark.parametrize("cfg", [
    dict(folio_kb=4),
    dict(folio_kb=64, kernel="6.9", swap_whole_mthp=False),
    pytest.param(dict(folio_kb=64, large_share=0.6), marks=pytest.mark.xfail(strict=True, reason=(
        "known bias: MVA 4.6% below the DES. Half the data is written before the limit, all of it 64K, and that "
        "half is what is swapped (swapped_large_share 1.0), while 40% of what is written are 4K folios: the lruvec "
        "lock's fault-side hold (their lru_add batches) per operation is several times its isolation hold, holds "
        "a FCFS station of a product-form network may not have different (BCMP)"))),
    dict(folio_kb=2048, madvise=True),
    dict(folio_kb=16, swap_device="nvme", bandwidth_mib_s=1500.0, latency_us=20.0, queue_depth=4),
], ids=["4K", "64K split", "64K whole 60%", "2M", "16K nvme"])
def test_simulation_agrees_with_mva(cfg):
    """Within the DES's 99% interval, widened by 1%: the lruvec lock's two sites hold it for different
    times (a reclaim pass's isolation and putback, the fault's lru_add batch), and so do the memcg
    counter's (a charge's failed batch attempt and retry at the fault, the uncharge at swap-out), which a
    FCFS station of a product-form network may not have (BCMP), so the MVA is close, not exact, where
    they are busy (at utilisation 0.89 in the 4K case the DES sits 0.1-0.3% below it; 64K split, the
    lruvec lock at 0.73 and the counter at 0.39: 0.5% below)."""
    m = small(lru_hold_us_per_folio=0.6, slot_hold_us_per_acquisition=5.0, **cfg)
    a = m.solve()
    s = m.solve("simulated", ops=60_000, replications=8, seed=SEED, progress=False)
    lo, hi = [q for q in s.quantities if q.name == "swapout_kib_s"][0].lo, s.table().loc["swapout_kib_s", "hi"]
    assert lo * 0.99 <= a["swapout_kib_s"] <= hi * 1.01
    assert s.level == 0.99 and a.level == 1.0


# --- physics, for any parameters ----------------------------------------------------------------
costs = st.fixed_dictionaries(dict(
    fault_us_per_folio=st.floats(0.1, 5), core_write_gb_s=st.floats(1, 30), pte_us=st.floats(0, 0.5),
    reclaim_us_per_folio=st.floats(0.1, 10), lru_hold_us_per_folio=st.floats(0, 3), slot_hold_us_per_acquisition=st.floats(0, 10),
    swapcache_us_per_page=st.floats(0, 2), split_us_per_page=st.floats(0, 2)))
sizes = st.sampled_from([4, 16, 64, 256, 2048])
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(costs, sizes, st.floats(100, 5000), st.floats(1.01, 10))
def test_more_device_bandwidth_never_slows_swap_out(c, kb, bw, factor):
    def swapout(b):
        return small(folio_kb=kb, swap_device="nvme", bandwidth_mib_s=b, latency_us=10.0, queue_depth=8,
                     **c).solve()["swapout_kib_s"]

    assert swapout(bw * factor) >= swapout(bw) * (1 - 1e-9)


@SETTINGS
@given(costs, sizes, st.floats(0.01, 2), st.floats(1.01, 10))
def test_cheaper_tlb_invalidation_never_slows_swap_out(c, kb, tlbi, factor):
    def swapout(t):
        return small(folio_kb=kb, cpu_model="ampere-altra", tlbi_us=t, **c).solve()["swapout_kib_s"]

    assert swapout(tlbi / factor) >= swapout(tlbi) * (1 - 1e-9)


@SETTINGS
@given(costs, sizes, st.integers(1, 40))
def test_more_processes_never_raise_per_process_throughput(c, kb, p):
    def per_process(n):
        return SwapModel(processes=n, bytes_per_process=2**30, memcg_mb=256, folio_kb=kb, swap_device="brd",
                         **c).solve()["usemem_throughput_kib_s"]

    assert per_process(p + 1) <= per_process(p) * (1 + 1e-9)


@SETTINGS
@given(costs, st.integers(1, 48), st.integers(1, 16), st.integers(1, 8))
def test_more_lock_partitions_never_slow_swap_out(c, p, k, extra):
    def swapout(slot_parts, cache_parts):
        return SwapModel(processes=p, bytes_per_process=2**30, memcg_mb=256, swap_device="brd", slot_cache=False,
                         slot_lock_partitions=slot_parts, swapcache_lock_partitions=cache_parts,
                         **c).solve()["swapout_kib_s"]

    base = swapout(k, k)
    assert swapout(k + extra, k) >= base * (1 - 1e-9)
    assert swapout(k, k + extra) >= base * (1 - 1e-9)


@SETTINGS
@given(costs, st.integers(1, 48))
def test_dropping_writeback_tags_or_adding_the_slot_cache_never_slows_swap_out(c, p):
    def swapout(**kw):
        base = dict(processes=p, bytes_per_process=2**30, memcg_mb=256, swap_device="brd", swapcache_lock_partitions=1)
        return SwapModel(**{**base, **c, **kw}).solve()["swapout_kib_s"]

    assert swapout(writeback_tags=False) >= swapout(writeback_tags=True) * (1 - 1e-9)
    assert swapout(slot_cache=True) >= swapout(slot_cache=False) * (1 - 1e-9)


@SETTINGS
@given(costs, st.sampled_from([16, 64, 2048]), st.floats(0, 0.9), st.floats(0.01, 0.1))
def test_more_contiguous_failures_never_speed_swap_out_up(c, kb, f, more):
    def swapout(fail):
        return small(folio_kb=kb, contiguous_failure=fail, madvise=True, **c).solve()["swapout_kib_s"]

    assert swapout(f + more) <= swapout(f) * (1 + 1e-9)


# --- CPUs, mms and guests ------------------------------------------------------------------------------
def test_more_tasks_than_cpus_time_share_the_cpus():
    """At most `cpus` writers run at once: doubling the tasks on 2 CPUs (same swapped share) keeps the
    total swap-out rate and halves each task's (arm64: no IPIs, whose targets grow with the mms)."""
    two = small(processes=2, cpus=2, swapped_share=0.5, cpu_model="ampere-altra").solve()
    four = small(processes=4, cpus=2, swapped_share=0.5, cpu_model="ampere-altra").solve()
    assert four["swapout_kib_s"] == pytest.approx(two["swapout_kib_s"], rel=1e-12)
    assert four["usemem_throughput_kib_s"] == pytest.approx(two["usemem_throughput_kib_s"] / 2, rel=1e-12)


def test_shootdowns_follow_the_owner_mm_cpumask():
    """An unmap IPIs the CPUs of the folio's mm: none for one single-threaded process, one per page for
    two threads of one mm, half a page's worth for two processes that reclaim each other's pages."""
    def shootdowns(**kw):
        return small(cpus=2, swapped_share=0.5, **kw).solve()["tlb_shootdowns_per_swapped_page"]

    assert shootdowns(processes=1, threads=1) == 0.0
    assert shootdowns(processes=1, threads=2) == pytest.approx(1.0)
    assert shootdowns(processes=2, threads=1) == pytest.approx(0.5)
    # arm64 broadcasts TLBIs instead: no IPIs at all
    assert shootdowns(processes=2, threads=1, cpu_model="ampere-altra") == 0.0


def test_two_processes_in_one_memcg_pay_remote_flushes_and_a_guest_pays_more():
    one = small(processes=1, cpus=2, swapped_share=0.5).solve()["swapout_kib_s"]
    two = small(processes=2, cpus=2, swapped_share=0.5).solve()["swapout_kib_s"]
    guest = small(processes=2, cpus=2, swapped_share=0.5, virtualized=True).solve()["swapout_kib_s"]
    assert one < two < 2 * one  # the second CPU helps, minus the IPIs each sends the other
    assert guest < two


def test_block_device_waits_are_off_cpu():
    r = small(swap_device="nvme", bandwidth_mib_s=200.0, latency_us=50.0, queue_depth=4).solve()
    assert r["sys_time_s"] < 8 * r["real_time_s"] * 0.5  # the writers mostly sleep on the device


def test_zswap_pool_is_charged_to_the_memcg():
    zram = small(swap_device="zram").solve()["swapped_share"]
    zswap = small(swap_device="zswap").solve()["swapped_share"]
    assert zswap > zram
    with pytest.raises(ValueError, match="memcg_mb"):
        small(swap_device="zswap", memcg_mb=400, compression_ratio=1.2)


# --- the kernel's switches -----------------------------------------------------------------------------
def test_kernel_version_selects_the_switches_and_a_column_overrides_them():
    old = small(kernel="4.8")
    assert old.switch("slot_cache") is False and old.switch("swapcache_lock_partitions") == 1
    assert old.switch("writeback_tags") is True
    new = small(kernel="6.18")
    assert new.switch("slot_cache") is False and new.switch("swap_alloc_lock") == "per_cluster"
    assert small(kernel="6.6").switch("slot_cache") is True
    assert small(kernel="4.8", writeback_tags=False).switch("writeback_tags") is False


def test_v48_swap_cache_has_the_four_published_call_sites():
    m = small(kernel="4.8")
    sites = set(m.solve().details["locks"].sites.index)
    assert {"__add_to_swap_cache", "__remove_mapping", "__test_set_page_writeback", "test_clear_page_writeback"} <= sites
    assert "__test_set_page_writeback" not in set(m.set(writeback_tags=False).solve().details["locks"].sites.index)


# --- si->lock on the swap-out path, era by era (mmcost.kernel's swap_map_lock) ---------------------------
MAP_SITES = {"__swap_duplicate", "page_swapcount", "swapcache_free"}


def test_before_4_11_the_swap_map_counts_add_three_si_lock_holds_to_a_lone_writer_s_cycle():
    """P = 1 waits nowhere, so a folio's cycle is the sum of its stages: v3.9-v4.10 take si->lock three
    more times a 4K page besides scan_swap_map (try_to_unmap_one -> __swap_duplicate, swap_writepage ->
    try_to_free_swap -> page_swapcount, __remove_mapping -> swapcache_free -> swap_info_get), each h:
    the cycle is 3 h longer than the same kernel with them under the cluster lock (v4.11, 235b62176712).
    h is the section's own work: alone on the lock it moves no line (SWAP_MAP_LINES, the lock's, comes
    from another CPU only when one held it last), so a dearer line changes nothing."""
    own, line = 0.05, 0.2
    h = own

    def per_folio_us(kernel):
        r = SwapModel(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="brd", cpu_model="generic-x86",
                      kernel=kernel, swap_map_hold_us=own, lock_line_us=line).solve()
        return PAGE_KIB * 1e6 / r["swapout_kib_s"]

    assert per_folio_us("4.10") - per_folio_us("4.10+swap_map_lock=cluster") == pytest.approx(3 * h, rel=1e-9)
    line = 0.8
    assert per_folio_us("4.10") - per_folio_us("4.10+swap_map_lock=cluster") == pytest.approx(3 * h, rel=1e-9)
    assert per_folio_us("4.11") == pytest.approx(per_folio_us("4.11+swap_map_lock=cluster"), rel=1e-15)


def test_si_lock_utilisation_is_the_folio_rate_times_its_holds_in_each_era():
    """Utilisation law, U = X D, with D from the kernel by hand: v4.7 holds si->lock for the allocation
    (hold + one slot) and three swap_map operations (3 h) a 4K folio; v4.11 for a 64-slot cache refill
    (hold / 64 + one slot) and nothing else; the sites are the kernel's functions. An allocation's hold
    is its own work and the 4 lines its section writes (SLOT_LINES), a swap_map section's its own work
    and the lock's line, each moved from the last holder's CPU (n - 1)/n of the time with n writers on
    the one si->lock."""
    from mmcost.swap.paths import SLOT_LINES, SWAP_MAP_LINES

    own, line, own_hold, slot = 0.05, 0.15, 0.2, 0.03
    n = small().running
    assert SLOT_LINES == 4 and SWAP_MAP_LINES == 1 and n > 1
    h = own + line * (n - 1) / n
    hold = own_hold + 4 * line * (n - 1) / n
    for kernel, demand, sites in (("4.7", hold + slot + 3 * h, MAP_SITES | {"get_swap_pages"}),
                                  ("4.11", hold / 64 + slot, {"get_swap_pages"})):
        m = small(kernel=kernel, swap_map_hold_us=own, lock_line_us=line, slot_hold_us_per_acquisition=own_hold,
                  slot_us_per_slot=slot, swapcache_lock_partitions=0)
        res = m.solve()
        locks = res.details["locks"]
        assert locks.lock_values["si_lock"]["utilization"] == pytest.approx(res["folios_per_s"] * demand / 1e6,
                                                                            rel=1e-9), kernel
        assert {s for s in locks.sites.index if locks.sites.loc[s, "lock"] == "si_lock"} == sites, kernel


def test_more_swap_map_holds_under_si_lock_never_speed_swap_out_up():
    fast, slow = (small(kernel="4.7", swap_map_hold_us=h).solve()["swapout_kib_s"] for h in (0.1, 0.5))
    assert slow < fast
    assert small(kernel="6.6", swap_map_hold_us=0.5).solve()["swapout_kib_s"] == pytest.approx(
        small(kernel="6.6", swap_map_hold_us=0.1).solve()["swapout_kib_s"], rel=1e-15)  # cluster era: not a station


def test_swap_map_under_si_lock_with_per_cluster_allocation_is_no_kernel():
    with pytest.raises(ValueError, match="swap_map_lock"):
        small(kernel="6.18+swap_map_lock=si_lock")


def test_mthp_below_pmd_size_needs_a_kernel_that_has_it():
    with pytest.raises(ValueError, match="folio_kb"):
        small(folio_kb=64, kernel="6.6").solve()
    assert small(folio_kb=64, kernel="6.6", anon_mthp=True).solve()["swapout_kib_s"] > 0


def test_a_failed_contiguous_allocation_takes_the_split_path():
    whole_failing = small(folio_kb=64, contiguous_failure=1.0, slot_hold_us_per_acquisition=0.0, slot_us_per_slot=0.0,
                          madvise=True).solve()
    split = small(folio_kb=64, swap_whole_mthp=False, slot_hold_us_per_acquisition=0.0, slot_us_per_slot=0.0,
                  madvise=True).solve()
    assert whole_failing["swapout_kib_s"] == pytest.approx(split["swapout_kib_s"], rel=1e-12)


# --- the fault-time folio mix ----------------------------------------------------------------------
def test_large_fault_share_follows_the_charge_rule():
    """Before the limit every fault gets its size; after it, a folio of n pages fits the headroom
    an order-0 charge's reclaim leaves (fault_reclaim_pages) a share 1 - n/R of the time."""
    m = SwapModel(processes=1, bytes_per_process=4096 * 2**20, memcg_mb=256)
    before = 256 / 4096
    assert m.set(folio_kb=2048).large_fault_share() == pytest.approx(before)
    assert m.set(folio_kb=64).large_fault_share() == pytest.approx(before + (1 - before) * (1 - 16 / 32))
    assert m.set(folio_kb=16, fault_reclaim_pages=64.0).large_fault_share() == pytest.approx(
        before + (1 - before) * (1 - 4 / 64))
    assert m.set(folio_kb=2048, madvise=True).large_fault_share() == 1.0
    assert m.set(folio_kb=4).large_fault_share() == 1.0
    assert m.set(folio_kb=64, large_share=0.3).large_fault_share() == 0.3


def test_fallback_mix_sits_between_the_pure_sizes():
    pure_large = small(folio_kb=2048, madvise=True).solve()["swapout_kib_s"]
    pure_small = small(folio_kb=4).solve()["swapout_kib_s"]
    mixed = small(folio_kb=2048, large_share=0.5).solve()["swapout_kib_s"]
    assert min(pure_large, pure_small) < mixed < max(pure_large, pure_small)


# --- bad configurations ---------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,field", [
    (dict(folio_kb=12), ValueError, "folio_kb"),
    (dict(folio_kb=4096), ValueError, "folio_kb"),
    (dict(folio_kb=2.5), TypeError, "folio_kb"),
    (dict(memcg_mb=8 * 1024), ValueError, "memcg_mb"),
    (dict(memcg_mb=-1.0), ValueError, "memcg_mb"),
    (dict(memcg_mb=None), ValueError, "memcg_mb"),
    (dict(processes=0), ValueError, "processes"),
    (dict(large_share=1.5), ValueError, "large_share"),
    (dict(thp_defrag="sometimes"), ValueError, "thp_defrag"),
    (dict(thp_defrag=True), TypeError, "thp_defrag"),
    (dict(pressure_large_share=float("nan")), ValueError, "pressure_large_share"),
    (dict(pressure_large_share=-0.1), ValueError, "pressure_large_share"),
    (dict(contiguous_failure=-0.1), ValueError, "contiguous_failure"),
    (dict(swap_device="tape"), ValueError, "swap_device"),
    (dict(compressor="gzip9"), ValueError, "compressor"),
    (dict(cpu_model="pentium"), ValueError, "cpu_model"),
    (dict(reclaim_us_per_folio=float("nan")), ValueError, "reclaim_us_per_folio"),
    (dict(arch="mips"), ValueError, "arch"),
    (dict(bandwidth_mib_s=-5.0), ValueError, "bandwidth_mib_s"),
    (dict(queue_depth=0), ValueError, "queue_depth"),
    (dict(kernel="latest"), ValueError, "kernel"),
    (dict(slot_lock_partitions=0), ValueError, "slot_lock_partitions"),
    (dict(swapcache_lock_partitions=-1), ValueError, "swapcache_lock_partitions"),
    (dict(slot_cache="maybe"), TypeError, "slot_cache"),
    (dict(processes="8"), TypeError, "processes"),
])
def test_invalid_configurations_name_the_field(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        small(**kwargs)


def test_mthp_counters_become_model_inputs():
    from mmcost import parse

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
    m = small(folio_kb=16, **got)
    assert m.large_fault_share() == got["large_share"] and m.solve()["swapout_kib_s"] > 0
    with pytest.raises(ValueError, match="folio_kb"):
        mthp_inputs(rows, 64)
    with pytest.raises(TypeError, match="rows"):
        mthp_inputs("hugepages-16kB", 16)


def test_swapout_cpu_of_a_split_fallback():
    def diff(split_us):
        m = SwapModel(processes=96, folio_kb=64, swap_device="zram", compress_us_per_page=6.0,
                      split_us_per_page=split_us)
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


def test_unfitted_costs_say_so():
    r = SwapModel().solve()
    assert "unfitted" in r.note and "unfitted" in str(r) and "<table>" in r._repr_html_()
    assert math.isfinite(r["swapout_kib_s"])


def test_swap_cache_trunks_from_v4_11_and_whole_pmd_thp_writes_from_v4_14():
    """4b3ef9daa4fc (one swap cache address_space per 64 MiB, v4.11): v4.10's per-device tree lock
    is a station with its two call sites, v4.11's is not. bd4c82c22c36 (v4.14) writes a PMD THP
    whole; v4.13 still split it before pageout(): the same as v4.14 with the switch off."""
    sites = {k: set(small(kernel=k).solve().details["locks"].sites.index) for k in ("4.10", "4.11")}
    assert {"__add_to_swap_cache", "__remove_mapping"} <= sites["4.10"]
    assert not {"__add_to_swap_cache", "__remove_mapping"} & sites["4.11"]
    thp = dict(folio_kb=2048, madvise=True)
    assert not small(**thp, kernel="4.13").switch("swap_whole_pmd_thp")
    assert small(**thp, kernel="4.14").switch("swap_whole_pmd_thp")
    split = small(**thp, kernel="4.13").solve()["swapout_kib_s"]
    assert split == pytest.approx(small(**thp, kernel="4.14", swap_whole_pmd_thp=False).solve()["swapout_kib_s"])
    # the whole write saves the split and 511 of 512 passes of the rest (bd4c82c22c36's letter: +42%, 5.81 ->
    # 8.25 GB/s, 16 processes on PMEM; this small brd model, +94%: a check of the direction, not of that machine)
    assert small(**thp, kernel="4.14").solve()["swapout_kib_s"] > 1.4 * split


def test_arch_and_cpu_model_of_different_architectures_are_refused_both_ways():
    with pytest.raises(ValueError, match=r"arch='arm64'.*cpu_model='generic-x86'"):
        small(arch="arm64")
    with pytest.raises(ValueError, match=r"arch='x86'.*cpu_model='ampere-altra'"):
        small(cpu_model="ampere-altra", arch="x86")
    altra = small(cpu_model="ampere-altra")
    assert altra.arch == "arm64"
    with pytest.raises(ValueError, match=r"arch='x86'.*cpu_model='ampere-altra'"):
        altra.configure(arch="x86")  # a fit made on the Altra preset asked about x86
    assert altra.configure(arch="x86", cpu_model="generic-x86").arch == "x86"


def test_a_4k_run_with_no_large_folios_is_the_4k_run():
    """Issue 31: folio_kb=4 with large_share=0 ("no large folios") raised IndexError in _mix. Every fault
    of a 4K run is a 4K folio: the same numbers as large_share left empty, or 1."""
    plain = small(folio_kb=4).solve()
    for share in (0.0, 0.3, 1.0):
        r = small(folio_kb=4, large_share=share).solve()
        for q in plain.quantities:
            assert r[q.name] == q.value, q.name
    assert plain["large_fault_share_pct"] == 100.0  # every byte faulted at the folio size asked for


#: issue 31's configuration: Brent's bracket had no sign change (the throttling sleep's excess is +7e-15 at
#: the top of the bracket: the sleep at full length is its own fixed point)
DEVICE_BOUND = dict(processes=10, threads=4, bytes_per_process=128 * 2**20, memcg_mb=64, folio_kb=64, madvise=True,
                    swap_device="nvme", compressor="lz4", kernel="6.8", virtualized=True, cgroup_v2=True)


def test_a_throttling_fixed_point_at_the_end_of_its_bracket_is_found():
    r = SwapModel(**DEVICE_BOUND).solve()
    # 40 writers saturate the NVMe station: one 64 KiB folio per max(64 KiB / 3000 MiB/s, 20 us / 32) = 20.83 us
    # (Denning-Buzen bound 1 / D_max; the MVA at 40 customers is within 1e-6 of it)
    assert r["folios_per_s"] == pytest.approx(3000 * 1024 / 64, rel=1e-5)
    assert r["swapout_kib_s"] == pytest.approx(3000 * 1024, rel=1e-5)


def test_the_same_fixed_point_in_a_lane_model():
    base = SwapModel(**DEVICE_BOUND)
    bandwidths = [1500.0, 2000.0, 2500.0, 3000.0, 3500.0]
    together = SwapModel.solve_draws(base, [{"bandwidth_mib_s": b} for b in bandwidths])
    assert together is not None
    models = [base.set(bandwidth_mib_s=b) for b in bandwidths]
    for b, r, stacked, m in zip(bandwidths, together, SwapModel.solve_many(models), models):  # (lanes.groups too)
        assert r["folios_per_s"] == pytest.approx(b * 1024 / 64, rel=1e-4)  # the device's bound, as above
        assert stacked["folios_per_s"] == r["folios_per_s"]
        assert r["folios_per_s"] == pytest.approx(m.solve()["folios_per_s"], rel=1e-12)


@pytest.mark.parametrize("kwargs,field", [
    (dict(bytes_per_process=0.0), "bytes_per_process"),            # divided by zero
    (dict(bytes_per_process=math.inf), "bytes_per_process"),       # solved, with real_time_s inf
    (dict(memcg_mb=-math.inf), "memcg_mb"),                        # said "think_time must be finite"
    (dict(compression_ratio=0.5), "compression_ratio"),
    (dict(inactive_anon_mb=0.0), "inactive_anon_mb"),
    (dict(throttle_isolated_ms=1e300), "throttle_isolated_ms"),
    (dict(swapped_share=2.0), "swapped_share"),
    (dict(kswapd_share=1.5, memcg_mb=None, swapped_share=0.5), "kswapd_share"),
    (dict(build_factor=0.0), "build_factor"),
])
def test_fields_are_checked_against_their_bounds_when_the_model_is_built(kwargs, field):
    """Issue 31: each is a ValueError naming the field the user set, before anything is derived from it."""
    with pytest.raises(ValueError, match=rf"^{field} must be finite and (in \[|>=)"):
        small(**kwargs)
    # (memcg_mb=inf is no limit, global reclaim: it needs the share swapped, and says so)
    with pytest.raises(ValueError, match=r"^memcg_mb: give a memcg limit or swapped_share"):
        small(memcg_mb=math.inf)


@pytest.mark.parametrize("kwargs,match", [
    (dict(processes=2**22 + 1, cpus=64), r"^processes = 4\.194e\+06 is above the limit of 4\.194e\+06 \(PID_MAX_LIMIT"),
    (dict(processes=4096, threads=2048, cpus=64), r"^processes x threads = 8\.389e\+06 is above .*PID_MAX_LIMIT"),
    (dict(processes=10**4), r"^processes x threads = 1e\+04 is above the limit of 8192 \(with cpus None"),
    (dict(cpus=10**5), r"^cpus = 1e\+05 is above the limit of 8192"),
    (dict(processes=64, cpus=64, zs_size_classes=10**7), r"^zs_size_classes = 1e\+07 is above the limit of 255"),
    (dict(processes=10**5, memcgs=10**5, cpus=64), r"^memcgs = 1e\+05 is above the limit of 6\.554e\+04"),
    (dict(slot_lock_partitions=10**6), r"^slot_lock_partitions = 1e\+06 is above the limit of 1e\+05"),
    (dict(swapcache_lock_partitions=10**6), r"^swapcache_lock_partitions = 1e\+06 is above"),
    (dict(numa_nodes=4096, memcg_mb=None, swapped_share=0.5), r"^numa_nodes = 4096 is above the limit of 1024"),
    (dict(processes=64, cpus=64, slot_lock_partitions=99_999), r"^lock partitions = 1e\+05 is above the limit of 1e\+05"),
    (dict(processes=8192, cpus=8192, slot_lock_partitions=50_000, memcg_mb=None, swapped_share=0.5),
     r"^writers on CPUs x lock partitions = 4\.097e\+08 is above the limit of 2e\+08"),
])
def test_sizes_beyond_the_kernel_or_the_solver_are_refused_at_once(kwargs, match):
    """Issue 31: processes and partitions had no size bound (1e6 writers ran for minutes, 1e7 zsmalloc
    classes 17 s); each is refused when the model is built, naming the field, the limit and why."""
    with pytest.raises(ValueError, match=match):
        small(**kwargs)


def test_zswap_that_compresses_nothing_names_the_field():
    """Issue 31's property test: compression_ratio 1 with no writeback divided by zero (the pool keeps every
    page whole, so the memcg's charge is everything written, whatever is swapped)."""
    with pytest.raises(ValueError, match="^compression_ratio: zswap keeping every page at full size"):
        small(swap_device="zswap", compression_ratio=1.0, zswap_writeback_share=0.0)
    assert small(swap_device="zswap", compression_ratio=1.0, zswap_writeback_share=0.75).solve()["swapout_kib_s"] > 0


# --- the package: paths, stations, the two rules (issue 36) ----------------------------------------------
def test_every_hold_a_path_returns_is_named_with_its_unit_and_read_by_a_station():
    """Each key a path returns is in paths.HOLDS with a unit; each key a station row reads is a key some path
    returns; the per-folio-written keys are exactly those named for the fault."""
    from mmcost.swap import paths, stations

    m = small(kernel="4.8", arch="arm64", cpu_model=None, swap_device="zswap", zswap_writeback_share=0.3,
              folio_kb=2048, madvise=True)
    returned = set(paths.swap_out(m, 2048, True)) | set(paths.swap_out(m, 2048, False)) | set(paths.exit_free(m))
    returned |= set(paths.exit_free(small(kernel="6.6", swap_device="zram")))  # the slot cache's batched free
    counts = {k for k in returned if k.startswith("n:")}  # how often a counted key's lock is taken
    counted = {k.removeprefix("n:") for k in counts} | {"lru_add"}  # (the swap-in's: tests/test_swap_in.py)
    assert counted == set(paths.COUNTED) <= set(paths.HOLDS)
    assert returned - counts <= set(paths.HOLDS)
    assert all(unit in ("us", "bytes", "TLBIs", "count") for unit, _ in paths.HOLDS.values())
    read = {k for row in stations.WRITERS + stations.EXITS for site in row.sites for k in site.keys}
    assert read <= set(paths.HOLDS)
    assert paths.PER_WRITTEN == {"fault", "lru_fault", "memcg_fault", "zone_fault", "dram_fault"}


def test_the_network_is_built_from_the_rows_in_path_order():
    """v4.8 on arm64, 64K folios split (no mTHP swap-out then): the stations in the order the path takes
    them, written out by hand from the kernel's v4.8 swap-out path, and the per-written DRAM bytes divided
    by the swapped share."""
    from mmcost.swap import paths

    m = small(kernel="4.8", arch="arm64", cpu_model=None, anon_mthp=True, folio_kb=64, large_share=1.0,
              mem_bw_gb_s=10.0)
    net = m.system()
    assert [lock.name for lock in net.locks] == ["lru_lock", "si_lock", "swap_avail_lock", "zone_lock",
                                                 "memcg_counter", "swapcache", "dvm", "brd_xa", "dram"]
    sites = [c.site for c in net.critical]
    assert sites[:3] == ["isolate_lru_folios", "folio_batch_move_lru", "get_swap_pages"]
    assert sites[3:6] == ["__swap_duplicate", "page_swapcount", "swapcache_free"]  # si->lock before v4.11
    assert sites.index("__add_to_swap_cache") < sites.index("__test_set_page_writeback") < \
        sites.index("test_clear_page_writeback") < sites.index("__remove_mapping")
    d, _ = paths.swap_out_mix(m)
    s = 1 - 4096 / (8 * 1024)
    dram = [c for c in net.critical if c.site == "memory_bandwidth"][0]
    assert dram.hold.mean_us == pytest.approx((d["dram_fault"] / s + d["dram"]) / (10.0 * 1e3), rel=1e-12)


def test_the_dram_station_runs_at_the_presets_sustained_bandwidth():
    """Without mem_bw_gb_s the DRAM station takes the cpu_model's sustained bandwidth: Haswell-EP's
    two sockets of 4 channels of DDR4-2133 x 8 bytes (136.5 GB/s peak, ark.intel.com) x 0.7, the share
    STREAM sustains; a swapped 2M folio's bytes cross it at that rate."""
    from mmcost import cpu_models
    from mmcost.swap import paths

    sustained = 2 * 4 * 2133 * 8 / 1000 * 0.7
    assert cpu_models.get("haswell-ep").costs()["mem_bw_gb_s"] == pytest.approx(sustained, rel=1e-12)
    m = SwapModel(cpu_model="haswell-ep", kernel="6.6", processes=4, cpus=4, folio_kb=2048, swap_device="pmem",
                  memcg_mb=512)
    assert m.mem_bw_gb_s == pytest.approx(sustained, rel=1e-12)
    d, _ = paths.swap_out_mix(m)
    s = m._swapped_share()
    dram = [c for c in m.system().critical if c.site == "memory_bandwidth"][0]
    assert dram.hold.mean_us == pytest.approx((d["dram_fault"] / s + d["dram"]) / (sustained * 1e3), rel=1e-9)


def test_swap_devices_keeps_its_old_name():
    import mmcost.swap.devices as new
    import mmcost.swap_devices as old

    assert old.COMPRESSORS is new.COMPRESSORS and old.compress_us_per_page is new.compress_us_per_page


# --- the arm64 flush: broadcast TLBIs at the DVM station, the DSB's wait on the flushing CPU -----------
def altra(**kw):
    base = dict(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="brd", cpu_model="ampere-altra",
                kernel="6.6+anon_mthp+swap_whole_mthp", madvise=True, machine_cpus=80)
    return SwapModel(**{**base, **kw})


@pytest.mark.parametrize("kb, kernel, tlbis, dsbs", [
    (4, "6.6", 1 + 1, 1),                                  # a young PTE's TLBI; unmap's TLBI and dirty flush's DSB
    (64, "6.6+anon_mthp+swap_whole_mthp", 16 + 16, 1),    # 16 young PTEs (no DSB), 16 unmap TLBIs, one DSB
    (64, "6.9+swap_whole_mthp", 16 + 16 + 16, 1 + 1),     # v6.9 contpte: the 64K block unfolds (16 TLBIs, a DSB)
    (2048, "6.6", 1 + 1 + 512, 1 + 1 + 1),                # young PMD, PMD split (one TLBI, a DSB each), 512 PTEs
])
def test_arm64_tlbis_and_dsbs_per_folio_as_the_kernel_issues_them(kb, kernel, tlbis, dsbs):
    from mmcost.swap import paths

    m = altra(folio_kb=kb, kernel=kernel)
    d = paths.swap_out(m, kb, whole=True)
    assert d["tlbis"] == tlbis and d["dsbs"] == dsbs
    # x86 clears the accessed bit without a flush and sends no TLBIs at all
    x = paths.swap_out(altra(folio_kb=kb, kernel=kernel, cpu_model="generic-x86"), kb, whole=True)
    assert x["tlbis"] == 0 and x["dsbs"] == 0


def test_one_arm64_writer_pays_each_tlbi_at_the_node_and_each_dsb_round_trip():
    """One writer, nothing queued: a whole 64K folio's 32 TLBIs (16 young, 16 unmapped) each hold the
    DVM station tlbi_us and its one DSB waits dsb_us (1 + g (N - 1)) on the CPU. Raising tlbi_us by
    0.2 us and dsb_us by 0.3 us on N = 80 PEs with g = 0.04 adds 32 x 0.2 + 0.3 x (1 + 0.04 x 79)
    = 6.4 + 1.248 us to every folio's cycle."""
    def us_per_folio(tlbi, dsb):
        m = altra(folio_kb=64, tlbi_us=tlbi, dsb_us=dsb, dsb_growth_per_cpu=0.04)
        return 1e6 / m.solve()["folios_per_s"]

    assert us_per_folio(0.3, 0.5) - us_per_folio(0.1, 0.2) == pytest.approx(6.4 + 1.248, rel=1e-9)


def test_range_tlbis_need_both_the_cpu_feature_and_the_kernel(monkeypatch):
    """FEAT_TLBIRANGE is the preset's, not a free switch: Neoverse N1 (Armv8.2) has none, so a v6.9
    contpte unfold flushes its 16 pages one TLBI each; with the feature it is one range TLBI, and
    before v5.9 the kernel does not use it."""
    from dataclasses import replace

    from mmcost import cpu_models
    from mmcost.swap import paths

    assert not cpu_models.get("ampere-altra").tlbi_range
    assert paths.contpte_unfold(altra(kernel="6.9"), 64)["tlbis"] == 16
    monkeypatch.setitem(cpu_models.PRESETS, "ampere-altra", replace(cpu_models.PRESETS["ampere-altra"], tlbi_range=True))
    assert paths.contpte_unfold(altra(kernel="6.9"), 128) == pytest.approx(
        dict(sender=2 * altra(kernel="6.9").dsb_us * (1 + altra().dsb_growth_per_cpu * 79)
             + 2 * 32 * altra().pte_us, targets=0.0, shootdowns=0.0, tlbis=2.0, dsbs=2.0))
    assert paths.contpte_unfold(altra(kernel="6.9", tlbi_range=False), 64)["tlbis"] == 16
    assert paths.contpte_unfold(altra(kernel="6.8"), 64)["dsbs"] == 0  # no contpte before v6.9


def test_simulation_agrees_with_mva_at_a_saturated_dvm_station():
    m = altra(processes=12, cpus=12, memcg_mb=6144, folio_kb=64, tlbi_us=0.4)
    a = m.solve()
    assert a.details["locks"].lock_values["dvm"]["utilization"] > 0.9
    s = m.solve("simulated", ops=60_000, replications=8, seed=SEED, progress=False)
    lo, hi = [q for q in s.quantities if q.name == "swapout_kib_s"][0].lo, s.table().loc["swapout_kib_s", "hi"]
    assert lo <= a["swapout_kib_s"] <= hi


@pytest.mark.parametrize("kw, err, match", [
    (dict(machine_cpus=-4), ValueError, "machine_cpus"), (dict(machine_cpus=0), ValueError, "machine_cpus"),
    (dict(dsb_us=-1.0), ValueError, "dsb_us"), (dict(tlbi_us=float("nan")), ValueError, "tlbi_us"),
    (dict(dsb_growth_per_cpu=-0.1), ValueError, "dsb_growth_per_cpu"),
    (dict(contpte="yes"), TypeError, "contpte"), (dict(tlbi_range=2), TypeError, "tlbi_range"),
])
def test_bad_arm64_flush_inputs_are_refused_naming_the_field(kw, err, match):
    with pytest.raises(err, match=match):
        altra(**kw)


# --- the swap cache tree_lock before v4.11 and the THP delay split (issue 35) -------------------------------
def _holds(m, kb=4):
    from mmcost.swap import paths
    return paths.swap_out_sized(m, kb)


def test_tree_lock_holds_per_page_are_the_lines_each_site_moves():
    """v4.7 (one contended tree_lock per device): insert 2 lines, delete 3, each tag site 2 plus its walks
    (mm/swap_state.c, mm/vmscan.c, mm/page-writeback.c); without the tags 5 lines a page instead of 9.
    Each line comes from another CPU (n - 1)/n of the time with n writers on the lock."""
    S, P, T = 0.3, 0.2, 0.1
    n = small().running
    L = 0.25 * (n - 1) / n  # a line's cost, as moved
    kw = dict(swapcache_us_per_folio=S, swapcache_us_per_page=P, lock_line_us=0.25, tag_hold_us_per_page=T)
    tags = _holds(small(kernel="4.7", **kw))
    assert tags["cache_insert"] == pytest.approx(S / 2 + P / 2 + 2 * L)
    assert tags["cache_delete"] == pytest.approx(S / 2 + P / 2 + 3 * L)
    assert tags["tags"] == pytest.approx(T + 2 * L)
    per_page = tags["cache_insert"] + tags["cache_delete"] + 2 * tags["tags"]  # two tag sites
    assert per_page == pytest.approx(S + P + 9 * L + 2 * T)
    no_tags = _holds(small(kernel="4.7+writeback_tags=false", **kw))
    assert no_tags["cache_insert"] + no_tags["cache_delete"] == pytest.approx(S + P + 5 * L)
    assert no_tags["tags"] == 0.0
    # from v4.11 (64 MiB trunks) the lock is no station and moves nothing: the sections' own work only
    late = _holds(small(kernel="4.11", **kw))
    assert late["cache_insert"] + late["cache_delete"] == pytest.approx(S + P)


def test_delay_split_allocates_and_inserts_once_per_thp():
    """38d8b4e6bdc8 (v4.13): a 2M THP takes one swap cluster (one si->lock hold and one swap_avail_lock walk
    for its 512 slots) and one swap cache insert with 512 entries, and runs add_to_swap once; split before
    (v4.8's add_to_swap), each of its 512 pages takes its own. The insert's loop touches the 511 cold tail
    struct pages first, under the lock (cold_line_us each), where the split touched them before."""
    kw = dict(swapcache_us_per_folio=0.3, swapcache_us_per_page=0.2, lock_line_us=0.25,
              slot_hold_us_per_acquisition=1.0, slot_us_per_slot=0.03, swap_avail_hold_us=0.1,
              add_to_swap_us_per_folio=0.4, cold_line_us=0.12, madvise=True)
    before = _holds(small(kernel="4.8", **kw), 2048)
    after = _holds(small(kernel="4.8+thp_swap_delay_split", **kw), 2048)
    n = small().running  # on si->lock, an allocation's 4 lines come from another writer (n - 1)/n of the time
    moved = 0.25 * (n - 1) / n  # (and the tree lock's and swap_avail_lock's lines as well)
    hold = 1.0 + 4 * moved
    avail = 0.1 + moved
    assert before["slot"] == pytest.approx(512 * hold + 512 * 0.03)
    assert after["slot"] == pytest.approx(hold + 512 * 0.03)
    assert (before["avail"], after["avail"]) == (pytest.approx(512 * avail), pytest.approx(avail))
    assert before["cache_insert"] == pytest.approx(512 * (0.15 + 0.1 + 2 * moved))
    assert after["cache_insert"] == pytest.approx(0.15 + 512 * 0.1 + 2 * moved + 511 * 0.12)
    assert before["reclaim"] - after["reclaim"] == pytest.approx(511 * 0.4 + 511 * 0.12)
    for key in ("cache_delete", "tags", "map_dup", "map_count", "map_free", "lru", "targets"):
        assert after[key] == before[key], key  # the split, removals, tags and swap_map counts stay per page


def test_delay_split_is_the_v4_13_kernel_and_only_its_2m_thp():
    from mmcost.kernel import features
    assert features("4.12")["thp_swap_delay_split"] is False and features("4.13")["thp_swap_delay_split"] is True
    m = small(kernel="4.13")
    assert _holds(m, 4) == _holds(small(kernel="4.12"), 4)  # 4K folios: nothing to delay
    assert _holds(small(kernel="4.14"), 2048)["slot"] == _holds(small(kernel="4.14", thp_swap_delay_split=False),
                                                                2048)["slot"]  # v4.14 swaps the THP whole


def test_contended_tree_lock_simulation_agrees_with_mva():
    """Seed 004's era: 8 writers on one tree_lock at four sites, si->lock four times a page."""
    m = small(kernel="4.7", memcg_mb=None, swapped_share=0.5, swap_device="pmem", lock_line_us=0.4)
    a = m.solve()
    util = a.details["locks"].lock_values["swapcache"]["utilization"]
    assert util > 0.6  # a contended case
    s = m.solve("simulated", ops=40_000, replications=6, seed=SEED, progress=False)
    q = [q for q in s.quantities if q.name == "swapout_kib_s"][0]
    # the 99% interval, and 3% for the MVA's own error: several call sites with different holds on one FIFO
    # lock are not product-form, and MVA's residual-life approximation is biased high; this DES measures it
    # at 2.9-3.0% here (2.0-2.4% while the lines moved with si->lock, swap_avail_lock and the tree lock were
    # charged at every acquisition, not (n - 1)/n of them)
    assert q.lo * 0.97 <= a["swapout_kib_s"] <= q.hi * 1.03


@pytest.mark.parametrize("field", ["lock_line_us", "add_to_swap_us_per_folio"])
def test_new_costs_refuse_negative_values_by_name(field):
    with pytest.raises(ValueError, match=field):
        small(kernel="4.7", **{field: -0.1}).solve()


def test_delay_split_patch_value_is_checked():
    with pytest.raises(ValueError, match="thp_swap_delay_split"):
        small(kernel="4.8+thp_swap_delay_split=maybe").solve()


# --- the memcg charge at the limit (mmcost.swap.paths.memcg_charge_cycle) ----------------------------------
# try_charge_memcg by hand, cgroup v1 (memsw), a memcg below the root: a failed batch attempt is the memsw
# charge at the memcg and the root (2 updates), the memory counter's add and sub at the memcg (2), the memsw
# uncharge (2): F = 6; a charge that succeeds is memsw and memory at both levels: S = 4 (v2: F = 2, S = 2)
@pytest.mark.parametrize("cfg, updates, failures", [
    # 32 pages each: a failed batch then a charge; the 33rd attempt fails too and reclaims 32
    (dict(folio_kb=4), (32 * (6 + 4) + 6) / 32, 33 / 32),
    (dict(folio_kb=4, cgroup_v2=True), (32 * (2 + 2) + 2) / 32, 33 / 32),
    # the fallback range's 16 4K pages (one reclaims), one 64K that fits in what is left (a failed batch,
    # a charge), one that does not (two failed attempts, no reclaim: it falls back)
    (dict(folio_kb=64), (16 * 10 + 6 + (6 + 4) + 2 * 6) / 32, (16 + 1 + 1 + 2) / 32),
    # 2M: no batch attempt (512 > 64); every range falls back, 16 reclaims of 32 among its 512 4K charges
    (dict(folio_kb=2048), (512 * 10 + 16 * 6 + 6) / 512, (512 + 16 + 1) / 512),
    # MADV_HUGEPAGE: the 2M charge may reclaim: one failure, a reclaim of 512, the charge
    (dict(folio_kb=2048, madvise=True), (4 + 6) / 512, 1 / 512),
    # 128K on 6.0 (MEMCG_CHARGE_BATCH 32: no batch attempt for it) and 6.1 (64: one), R = 48: half a 128K
    # fits; on 6.0 the 48-page margin is one and a half batches: half of it is charged a folio at a time
    # (48 - (48 - 32) / 2 = 24 pages left after whole batches), the other half through 0.75 batch charges
    (dict(folio_kb=128, kernel="6.0", fault_reclaim_pages=48.0), (0.5 * 32 * 10 + 0.5 * 4 + 2 * 6 + 0.75 * 4) / 48,
     (0.5 * 32 + 2) / 48),
    (dict(folio_kb=128, kernel="6.1", fault_reclaim_pages=48.0), (32 * 10 + 6 + 0.5 * 10 + 2 * 6) / 48,
     (32 + 1 + 0.5 + 2) / 48),
], ids=["4K v1", "4K v2", "64K", "2M", "2M madvise", "128K 6.0", "128K 6.1"])
def test_memcg_charges_at_the_limit_by_hand(cfg, updates, failures):
    m = small(**{"processes": 1, "memcg_mb": 512, "fault_reclaim_pages": 32.0, **cfg})
    c = paths.memcg_charge_cycle(m)
    assert c["updates"] == pytest.approx(updates, rel=1e-12)
    assert c["failures"] == pytest.approx(failures, rel=1e-12)


def test_two_writers_reclaim_together_and_stock_whole_batches():
    """Two 4K writers, R = 42: both reclaim when the margin runs out, 84 pages, between one and two batches:
    96 - 84 / 2 = 54 of them are left after whole batches and charged a page at a time with a failed batch
    attempt, 30 go through stocks. Per writer's 42 pages: 27 tried charges (10 updates each), one more
    failure (6 updates), 30/84 x 42 / 64 batch charges (4 each)."""
    m = small(processes=2, bytes_per_process=2**29, memcg_mb=512, fault_reclaim_pages=42.0, cpus=2)
    c = paths.memcg_charge_cycle(m)
    assert c["updates"] == pytest.approx((27 * 10 + 6 + 15 / 64 * 4) / 42, rel=1e-12)
    assert c["failures"] == pytest.approx((27 + 1) / 42, rel=1e-12)


def test_memcg_counter_lines_move_only_between_writers():
    """One writer keeps the counters' lines; two in one memcg find each line last written by the other half
    the time, at both levels. Two 4K writers, R = 32: their 64-page margin is one batch, which the linear
    step still charges a page at a time, so a page at the limit (s = 1/2) makes 326/32 updates, as one
    writer's, below it 4/64."""
    one = small(processes=1, bytes_per_process=2**30, memcg_mb=512, fault_reclaim_pages=32.0)
    assert paths.memcg_charges(one, 1, 1) == (0.0, 0.0)
    two = small(processes=2, bytes_per_process=2**29, memcg_mb=512, fault_reclaim_pages=32.0, cpus=2)
    fault, out = paths.memcg_charges(two, 1, 1)
    assert fault == pytest.approx(0.5 * (0.5 * 326 / 32 + 0.5 * 4 / 64), rel=1e-12)
    assert out == pytest.approx(0.5 * 2, rel=1e-12)  # memcg1_swapout: the memory counter at both levels
    # cgroup v2: the swap counter per folio, the memory counter once per 31 freed folios
    assert paths.memcg_charges(two.set(cgroup_v2=True), 1, 1)[1] == pytest.approx(0.5 * 2 * (1 + 1 / 31), rel=1e-12)


def test_memcg_stock_refills_by_the_charged_folio_s_size():
    """In a 2M writer's mix, a 4K folio (a fallback) below the limit comes from the stock, 4 updates per 64
    pages; the 2M folio charges its own 512 pages, 4 updates. Two writers (half the lines move), s = 1/2."""
    two = small(processes=2, bytes_per_process=2**29, memcg_mb=512, folio_kb=2048, fault_reclaim_pages=32.0, cpus=2)
    cycle = paths.memcg_charge_cycle(two)["updates"]
    assert paths.memcg_charges(two, 1, 1)[0] == pytest.approx(0.5 * (0.5 * cycle + 0.5 * 4 / 64), rel=1e-12)
    assert paths.memcg_charges(two, 512, 1)[0] == pytest.approx(0.5 * 512 * (0.5 * cycle + 0.5 * 4 / 512),
                                                                rel=1e-12)


def test_memcg_failcnt_of_a_first_fill_of_whole_thps():
    """One writer, 1 GiB of 2M THPs into 512 MiB (s = 1/2): every swapped page makes room for one charged
    after a whole THP was reclaimed, 512 at once: per 512 pages the 2M attempt fails once (no batch attempt
    above 64 pages) and the 4K charge that reclaims fails twice: 3/512. With 4 GiB written (s = 7/8) a
    seventh of the swapped pages are the first fill's, the rest cycle as in the steady state."""
    m = small(processes=1, bytes_per_process=2**30, memcg_mb=512, folio_kb=2048, fault_reclaim_pages=32.0)
    assert paths.memcg_failures_per_swapped_page(m) == pytest.approx(3 / 512, rel=1e-12)
    m4 = m.set(bytes_per_process=2**32)
    steady = paths.memcg_charge_cycle(m4)["failures"]
    assert paths.memcg_failures_per_swapped_page(m4) == pytest.approx(3 / 512 / 7 + 6 / 7 * steady, rel=1e-12)


def test_a_guest_s_pv_tlb_flush_sends_no_ipi_to_a_preempted_vcpu():
    """kvm_flush_tlb_multi (v4.16): a target preempted a quarter of its time is flushed by the host at its
    next VM entry. One process on 5 vCPUs: a page flush reaches the 4 others; 3 of them are IPI'd."""
    from mmcost.swap import paths

    base = dict(processes=1, threads=5, cpus=5, memcg_mb=256, virtualized=True, irq_us=1.1, ipi_send_us=0.7,
                invlpg_us=0.13, vm_exit_us=2.9)
    on = paths.flush(small(**base, preempted_share=0.25), 1, 1, False)
    # 3 IPIs (0.7 each), one PV IPI hypercall (2.9), one wait for a handler (1.1 + 0.13), the local INVLPG under it
    assert on["sender"] == pytest.approx(3 * 0.7 + 2.9 + 1.1 + 0.13, rel=1e-12)
    assert on["shootdowns"] == pytest.approx(3.0, rel=1e-12)
    assert on["targets"] == pytest.approx(3 * (1.1 + 0.13) + 0.13, rel=1e-12)
    # before v4.16, or on a dedicated vCPU (the default share, 0), every target is IPI'd
    for m in (small(**base, preempted_share=0.25, kernel="4.15", pv_ipi=True), small(**base)):
        assert paths.flush(m, 1, 1, False)["shootdowns"] == pytest.approx(4.0, rel=1e-12)
    with pytest.raises(ValueError, match="preempted_share"):
        small(**base, preempted_share=-0.1)


def test_a_slot_hold_moves_lines_only_when_another_cpu_held_the_lock_last():
    """swap.paths.slot_hold_us by hand: one writer, or each CPU on its own cluster (v6.14 on), pays the
    holder's own work alone; 8 writers on v4.7's one si->lock pay 4 lines 7 times in 8 as well."""
    from mmcost.swap.paths import slot_hold_us

    own, line = 0.2, 0.15
    kw = dict(slot_hold_us_per_acquisition=own, lock_line_us=line)
    assert slot_hold_us(small(processes=1, memcg_mb=512, kernel="4.7", **kw)) == pytest.approx(own)
    assert slot_hold_us(small(processes=8, cpus=8, kernel="6.18", **kw)) == pytest.approx(own)
    assert slot_hold_us(small(processes=8, cpus=8, kernel="4.7", **kw)) == pytest.approx(own + 4 * line * 7 / 8)


def test_zone_and_swap_avail_holds_move_lines_only_when_another_cpu_held_the_lock_last():
    """swap.paths.zone_hold_us and avail_hold_us by hand: a lone writer pays the section's own work;
    8 writers on one node's zone->lock pay its 3 lines (the lock word, the order's free_area, the next
    block's struct page) 7 times in 8, and on two nodes 3 of 4; swap_avail_lock (one for the machine)
    moves its one line 7 times in 8."""
    from mmcost.swap.paths import avail_hold_us, zone_hold_us

    own, avail, line = 0.1, 0.03, 0.15
    kw = dict(zone_lock_hold_us=own, swap_avail_hold_us=avail, lock_line_us=line, kernel="4.7")
    one = small(processes=1, memcg_mb=512, **kw)
    assert zone_hold_us(one) == pytest.approx(own) and avail_hold_us(one) == pytest.approx(avail)
    eight = small(processes=8, cpus=8, **kw)
    assert zone_hold_us(eight) == pytest.approx(own + 3 * line * 7 / 8)
    assert zone_hold_us(eight.set(numa_nodes=2)) == pytest.approx(own + 3 * line * 3 / 4)
    assert avail_hold_us(eight) == pytest.approx(avail + line * 7 / 8)


def test_swap_out_and_swap_in_charge_zone_lock_lines_by_the_writers_sharing_it():
    """The paths themselves (not the helper alone): 8 writers on one node's zone->lock, 64K folios (order 4,
    no per-CPU list), pay its own work and 3 lines 7 times in 8 at the folio's allocation, its free after
    swap-out, and a swap-in's allocation."""
    own, line = 0.1, 0.15
    m = small(processes=8, cpus=8, folio_kb=64, kernel="6.18", zone_lock_hold_us=own, lock_line_us=line)
    hold = own + 3 * line * 7 / 8
    d = paths.swap_out_sized(m, 64)
    assert d["zone"] == pytest.approx(hold) and d["zone_fault"] == pytest.approx(hold)
    from mmcost.swap import SwapInModel

    reader = SwapInModel(processes=8, cpus=8, swap_device="zram", folio_kb=64, kernel="6.18",
                         zone_lock_hold_us=own, lock_line_us=line)
    assert paths.swap_in(reader, 64)["zone"] == pytest.approx(hold)


def test_a_lone_writers_64k_folios_pay_the_buddy_allocators_own_work_only():
    """A 64K folio (order 4: no per-CPU list keeps it) is allocated and freed under zone->lock; one writer
    moves no line, so its zone holds are the own work alone, and more lines cost it nothing."""
    cfg = dict(processes=1, memcg_mb=512, folio_kb=64, kernel="6.18", zone_lock_hold_us=0.1)
    d = paths.swap_out_sized(small(**cfg), 64)
    assert d["zone"] == pytest.approx(0.1) and d["zone_fault"] == pytest.approx(0.1)
    a, b = (small(**cfg, lock_line_us=x).solve()["swapout_kib_s"] for x in (0.1, 0.4))
    assert a == pytest.approx(b, rel=1e-12)
