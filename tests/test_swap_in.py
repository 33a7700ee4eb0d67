"""mmcost.swap's swap-in path (SwapInModel: write, then read back): its analytic solution against the DES, a
closed form for one reader computed by hand from the fields, the kernel's switches (the SWP_SYNCHRONOUS_IO
bypass and its removal, the swap table, mTHP swap-in), the read-back's fault share against an LRU simulated
here, lanes against single solves, and bad input."""

import math
import random
from collections import OrderedDict

import numpy as np
import pytest
from mmcost import kernel
from mmcost.swap import SwapInModel, paths, stations

SEED = 2026


def one_reader(**kw):
    """One process, no memcg limit (nothing reclaimed while reading back), half of 1 GiB swapped to zram, 4K
    folios, every cost set here."""
    base = dict(processes=1, bytes_per_process=2.0**30, memcg_mb=None, swapped_share=0.5, kswapd_share=0.0,
                swap_device="zram", compressor="lzo-rle", cpu_model="generic-x86", kernel="6.18", folio_kb=4,
                fault_us_per_folio=1.0, swapin_us_per_folio=1.0, swap_table_lookup_us=0.05, swapcache_lookup_us=0.1,
                decompress_us_per_page=2.0, zram_read_us_per_page=0.2, compression_ratio=2.0, pte_us=0.1,
                walk_ns=30.0, swapin_us_per_page=0.1, swap_free_us_per_page=0.2, slot_us_per_slot=0.02,
                user_us_per_page=0.1, zs_free_hold_us=0.07, lru_hold_us_per_folio=0.3, mem_bw_gb_s=50.0,
                swapcache_us_per_folio=0.3, swapcache_us_per_page=0.2)
    return SwapInModel(**{**base, **kw})


# per folio swapped in on 6.18, by hand from the fields above (the SWP_SYNCHRONOUS_IO bypass, the swap table):
CPU = (1.0 + 1.0 + 0.05            # the fault, do_swap_page's own work, the swap table lookup
       + 2.0 + 0.2                 # zram: lzo-rle decompression, zram_read_page's other work
       + 0.1 + 0.03 + 0.1 + 0.2    # the PTE, the retried access's walk, per-page rmap/counters, swap_free_nr
       + 2 * 0.02                  # swapcache_prepare + swapcache_clear: SWAP_HAS_CACHE set and cleared
       + 0.02)                     # the slot freed under the cluster's own lock (v6.14 on)
USER = 0.1 / 0.5                   # the user reads 1 / fault share = 2 pages per fault
HOLDS = 0.07 + 0.3 + 4096 * (1 + 1 / 2.0) / 50e3  # zs_free, folio_add_lru, DRAM: decompressed page + object


def test_one_reader_costs_add_up_by_hand():
    """P = 1, no limit: a read-back fault is one folio per (sum of every stage), the user's read of the pages
    it stands for included; throughput per process = 4 KiB / fault share / cycle."""
    r = one_reader().solve()
    cycle = CPU + USER + HOLDS
    assert r["swapin_throughput_kib_s"] == pytest.approx(4 / 0.5 * 1e6 / cycle, rel=1e-12)
    assert r["major_fault_latency_us"] == pytest.approx(cycle - USER, rel=1e-12)
    assert r["pswpin_count"] == 0.5 * 2**30 / 4096
    assert r["pgmajfault_count"] == 0.5 * 2**30 / 4096
    assert "swapout_kib_s" in r.table().index  # the write phase's numbers are still there


def test_the_swap_table_and_the_bypass_by_kernel():
    """6.17: an XArray lookup (0.1 us) instead of the swap table's (0.05 us). 7.0 (swap table phase II: never
    bypass the swap cache): the folio enters and leaves the swap cache (0.3 + 0.2 us at the swap-out path's
    costs) instead of swapcache_prepare/clear (2 x 0.02 us)."""
    cycle = CPU + USER + HOLDS
    for version, extra in (("6.17", 0.1 - 0.05), ("7.0", 0.3 + 0.2 - 2 * 0.02)):
        r = one_reader(kernel=version).solve()
        assert r["major_fault_latency_us"] == pytest.approx(cycle + extra - USER, rel=1e-12), version
    assert kernel.features("6.18")["swapin_skip_swapcache"] and not kernel.features("7.0")["swapin_skip_swapcache"]


@pytest.mark.parametrize("folio_kb", [16, 64])
def test_the_resident_mix_is_the_written_less_the_swapped(folio_kb):
    """512 MiB written past a 256 MiB limit: the oldest half swapped, all large (faulted before the
    limit); the newest half left resident in the after-limit mix, 1 - n/32."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, folio_kb=folio_kb)
    assert (m._swapped_share(), m.swapped_large_share()) == (pytest.approx(0.5), pytest.approx(1.0))
    assert m.resident_large_share() == pytest.approx(1 - (folio_kb // 4) / 32)


# written large: all before the 256 MiB limit (half of 512 MiB), then 1 - n/32 (the fault's charge rule); swapped
# when the write ends: the oldest half, all written before the limit, all large (swapped_large_share); the sequential
# read-back under the limit faults every page, so the newest half too, evicted before it is read, in the resident
# mix (1 - n/32); swapped in large: of the ranges written and swapped whole, the charge rule again (the read-back's
# charge fits while the last order-0 reclaim's 32 pages of headroom hold it)
@pytest.mark.parametrize("folio_kb, version, share", [
    (16, "6.18", (0.5 * 1.0 + 0.5 * (1 - 4 / 32)) * (1 - 4 / 32)),
    (64, "6.18", (0.5 * 1.0 + 0.5 * (1 - 16 / 32)) * (1 - 16 / 32)),
    (2048, "6.18", 0.0),         # alloc_swap_folio tries the orders below PMD only
    (64, "6.11", 0.0),           # before 242d12c98174 (v6.12) every swap-in is order 0
    (4, "6.18", 1.0),
])
def test_large_swapin_share(folio_kb, version, share):
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, folio_kb=folio_kb, kernel=version)
    assert m.large_swapin_share() == pytest.approx(share)
    faults = m.solve()["pgmajfault_count"]
    pages = 2**29 / 4096
    large = folio_kb if folio_kb < 2048 else 4
    assert faults == pytest.approx(pages * share / (large / 4) + pages * (1 - share) if large > 4 else pages)


def lru_random_pass_misses(n, resident, seed):
    """Misses of one random pass over n pages through an LRU of `resident` pages that starts holding the last
    `resident` pages written, every miss evicting the least recently used page."""
    rng = random.Random(seed)
    lru = OrderedDict((p, None) for p in range(n - resident, n))
    misses = 0
    order = list(range(n))
    rng.shuffle(order)
    for p in order:
        if p in lru:
            lru.move_to_end(p)
        else:
            misses += 1
            lru.popitem(last=False)
            lru[p] = None
    return misses / n


def test_the_random_read_back_fault_share_is_an_lrus():
    """rand under a limit: 1 - (l + (1 - l) ln(1 - l)) of the pages fault (l: the resident share); against an
    LRU simulated here. seq: every page (the read chases the eviction point)."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, readback="rand")
    simulated = np.mean([lru_random_pass_misses(4000, 2000, seed) for seed in range(5)])
    assert m.readback_faults() == pytest.approx(1 - (0.5 + 0.5 * math.log(0.5)), rel=1e-12)
    assert m.readback_faults() == pytest.approx(simulated, abs=0.01)
    assert m.set(readback="seq").readback_faults() == 1.0


@pytest.mark.parametrize("cfg", [dict(folio_kb=4), dict(folio_kb=64)], ids=["4K", "64K"])
def test_simulation_agrees_with_mva(cfg):
    """Three readers under one memcg limit, each swap-in forcing a swap-out, contention at zsmalloc's class
    lock (zs_malloc and zs_free) and the lruvec lock: the DES's 99% interval holds the MVA's throughput."""
    m = SwapInModel(processes=3, cpus=3, memcg_mb=256.0, bytes_per_process=2.0**28, swap_device="zram",
                    cpu_model="generic-x86", lru_hold_us_per_folio=0.6, zs_free_hold_us=0.5, zs_malloc_hold_us=0.5,
                    **cfg)
    a = m.solve()
    s = m.solve("simulated", ops=40_000, replications=8, seed=SEED, progress=False)
    q = [q for q in s.quantities if q.name == "swapin_throughput_kib_s"][0]
    assert q.lo < q.hi and q.lo <= a["swapin_throughput_kib_s"] <= q.hi


def test_lanes_equal_single_solves():
    ms = [SwapInModel(processes=2, memcg_mb=256.0, bytes_per_process=2.0**29, folio_kb=64, readback="rand",
                      swapin_us_per_folio=x, decompress_us_per_page=y)
          for x, y in zip(np.linspace(0.5, 2, 5), np.linspace(1, 5, 5))]
    for lane, one in zip(SwapInModel.solve_many(ms), [m.solve() for m in ms]):
        for name in ("swapin_throughput_kib_s", "major_fault_latency_us", "usemem_throughput_kib_s"):
            assert lane[name] == one[name]


def test_a_read_back_frees_slots_as_often_as_it_allocates_them():
    """Under a limit each 4K folio swapped in forces one out: with the slot cache (v4.11-v6.13) si->lock is
    taken once per 64 slots allocated (get_swap_pages) and once per 64 freed (swapcache_free_entries), so
    the two sites take it equally often and spin alike (locks.Critical.count); the lruvec lock twice a pass
    per isolation batch of 32 (two passes) and once per lru_add batch of 15 (v6.6) swapped-in folios."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, kernel="6.6", processes=8)
    sites = m.readback_system().analytic().sites
    per_folio = sites.loc["zs_free", "acquisitions_per_s"]
    for site in ("get_swap_pages", "swapcache_free_entries"):
        assert sites.loc[site, "acquisitions_per_s"] == pytest.approx(per_folio / 64, rel=1e-9)
    assert sites.loc["get_swap_pages", "spin_share_pct"] == pytest.approx(sites.loc["swapcache_free_entries",
                                                                                    "spin_share_pct"], rel=1e-9)
    assert sites.loc["isolate_lru_folios", "acquisitions_per_s"] == pytest.approx(per_folio * 2 * 2 / 32, rel=1e-9)
    assert sites.loc["folio_batch_move_lru", "acquisitions_per_s"] == pytest.approx(per_folio / 15, rel=1e-9)


def test_the_path_is_one_function_and_sites_on_existing_rows():
    """The swap-in path's holds are keys of paths.HOLDS, and every station its network has is a row the
    swap-out path already had (zs_free, the slot frees, and folio_add_lru's lru_add at the lruvec lock's
    folio_batch_move_lru site, where the writers' faults put their lru_fault, are sites on them). Without a
    limit the read-back holds lru_add and not lru_fault: the site is there with the key it has."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, kernel="6.12")
    keys = set(paths.swap_in(m, 4))
    assert {k for k in keys if not k.startswith("n:")} <= set(paths.HOLDS)
    assert {k.removeprefix("n:") for k in keys if k.startswith("n:")} <= set(paths.COUNTED)
    rows = {row.name for row in stations.WRITERS}
    net = m.readback_system()
    assert {lock.name for lock in net.locks} <= rows
    assert {"zs_free", "folio_batch_move_lru", "zs_malloc", "isolate_lru_folios"} <= {c.site for c in net.critical}
    alone = one_reader().readback_system()  # no limit: nothing reclaimed, no isolation
    assert {"folio_batch_move_lru", "zs_free"} <= {c.site for c in alone.critical}
    assert "isolate_lru_folios" not in {c.site for c in alone.critical}
    old = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, kernel="5.15")  # slot cache
    assert "swapcache_free_entries" in {c.site for c in old.readback_system().critical}


@pytest.mark.parametrize("kw, match", [
    (dict(swap_device="nvme"), "^swap_device: swap-in is modelled for the SWP_SYNCHRONOUS_IO devices"),
    (dict(swap_device="zswap"), "^swap_device: .*zswap load"),
    (dict(swapin_us_per_folio=-1.0), "^swapin_us_per_folio"),
    (dict(zram_read_us_per_page=float("nan")), "^zram_read_us_per_page"),
    (dict(readback="backwards"), "^readback"),
    (dict(readback_fault_share=0.0), "^readback_fault_share must be > 0"),
    (dict(swapin_large_share=1.5), "^swapin_large_share"),
    (dict(kernel="4.14"), "^kernel: before v4.15 .* swapin_readahead"),  # the readahead path, not modelled
])
def test_bad_input_names_the_field(kw, match):
    with pytest.raises(ValueError, match=match):
        one_reader(**kw)


def test_a_folio_split_at_swap_out_comes_back_as_4k_pages():
    """can_swapin_thp needs contiguous swap offsets: a fifth of the 64K folios failing their contiguous slot
    allocation (split, slots page by page) takes a fifth off the large swap-ins."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, folio_kb=64)
    assert m.set(contiguous_failure=0.2).large_swapin_share() == pytest.approx(0.8 * m.large_swapin_share())


def test_a_folio_only_read_since_swap_in_waits_for_the_batch_flush():
    """Its PTEs are clean, so set_tlb_ubc_flush_pending does not mark the batch writable and no
    try_to_unmap_flush_dirty runs before pageout: one full flush per 32-folio batch instead of one per folio
    (one process on its own CPU: a local full flush and the refill walks, 0.1 + 8 x 0.03 us)."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29, full_flush_us=0.1,
                   refill_pages_per_full_flush=8.0)
    dirty, clean = paths.swap_out(m, 4, True), paths.swap_out(m, 4, True, dirty=False)
    assert dirty["reclaim"] - clean["reclaim"] == pytest.approx((1 - 1 / 32) * (0.1 + 8 * 0.03), rel=1e-12)
    old = m.set(kernel="4.2+swapin_skip_swapcache")  # before d950c9477d51 (v4.3) nothing was flushed early
    assert paths.swap_out(old, 4, True)["reclaim"] == paths.swap_out(old, 4, True, dirty=False)["reclaim"]


def test_the_pages_resident_at_the_start_are_reclaimed_dirty():
    """Under the limit a sequential read-back reclaims every page that was resident when it began (written:
    dirty PTEs, flushed one folio at a time) besides the ones it swapped in (clean, batched): half of the data
    here, so half the reclaimed folios take a flush of their own."""
    m = one_reader(memcg_mb=256.0, swapped_share=None, bytes_per_process=2.0**29)
    _, info = m._readback_network()
    assert info["dirty_share"] == pytest.approx(0.5)
    assert m.set(readback="rand").readback_system() is not None
    _, rand = m.set(readback="rand")._readback_network()
    assert rand["dirty_share"] == pytest.approx(0.5 / (1 - (0.5 + 0.5 * math.log(0.5))))


def test_the_per_folio_swapin_prior_is_what_the_probes_measured_on_6_18():
    """SwapInModel.swapin_us_per_folio's prior is the mean of the swap-in probes' measurements on two VMs
    (SWAPIN_PROFILES), its width their spread, recomputed here from the profiles' rounds within the digits
    they are quoted to."""
    import numpy as np

    from mmcost import cpu_models, datasets
    from mmcost.measure import profile as P
    from mmcost.swap.model import SWAPIN_PER_FOLIO_MEASURED, SWAPIN_PER_FOLIO_SD, SWAPIN_PROFILES

    paths = [datasets.path(folder) / name for folder, name in SWAPIN_PROFILES]
    per_vm = [P.swapin_per_folio(P.load(p), cpu_models.default_for("x86")) for p in paths]
    mean = float(np.mean(per_vm))
    assert mean == pytest.approx(SWAPIN_PER_FOLIO_MEASURED, abs=0.005)
    transfer = mean * np.hypot(cpu_models.KERNEL_SPEED_TRANSFER, cpu_models.MEASURED_ALLOWANCE)
    assert np.hypot(np.std(per_vm, ddof=1), transfer) == pytest.approx(SWAPIN_PER_FOLIO_SD, abs=0.005)
    prior = {p.name: p.prior for p in SwapInModel().parameters}["swapin_us_per_folio"]
    assert (prior.value, prior.width) == (SWAPIN_PER_FOLIO_MEASURED, SWAPIN_PER_FOLIO_SD)
    assert all(name in prior.source for _, name in SWAPIN_PROFILES)
    for path, value in zip(paths, per_vm):  # each VM's own, with an error under the VMs' spread
        own, sd = P.swapin_per_folio_prior(P.load(path), cpu_models.default_for("x86"))
        assert own == value and 0 < sd < SWAPIN_PER_FOLIO_SD
    # each compressor's decompression of usemem's data: a few us a page, under lzbench's Silesia figure for lzo
    for path in paths:
        cpu = cpu_models.get(str(path))
        for comp in ("lzo-rle", "lzo", "lz4"):
            assert 1.0 < cpu.measured[f"decompress_us_per_page@{comp}"].value < 0.5 * 5.7 * 4096 / (cpu.clock_ghz * 1e3)
