"""mmcost.swap.paths.split_pmd_thp: a PMD-mapped THP split before swap-out, counted per THP by hand.

What the kernel does per THP (x86, batched unmap flush, one THP per
shrink_page_list call), read off mm/huge_memory.c, mm/rmap.c, mm/migrate.c:

- v4.8: freeze_page walks the rmap 1 + 511 times (the tails' try_to_unmap),
  the PMD becomes migration entries under one pmdp_invalidate flush,
  unfreeze_page walks 512 times (remove_migration_ptes per subpage) and maps
  the pages back clean: 1024 walks, 2 flush rounds (pmdp_invalidate, then the
  list's try_to_unmap_flush), where the model charged 512 synchronous flushes
  and one per page before each pageout (1024 rounds);
- v4.11 (c7ab0d2fdc84): freeze_page walks once: 513 walks, 2 flush rounds;
- v6.0 (2e3468778dbe): the pages come back dirty, so every pageout flushes
  first again: 1 + 512 rounds.

The first freeze walk and the 512 remap walks are in swap.paths.split_work's
measured costs (kvm_6_18_thp_split: the remap walks run with the anon_vma
locked); split_pmd_thp counts the walks beyond them, v4.8's 511.
"""

import pytest
from mmcost.swap import SwapModel
from mmcost.swap import paths

THP = 2048
PAGES = 512


def model(kernel, **kw):
    return SwapModel(processes=8, bytes_per_process=2**30, memcg_mb=4096, swap_device="pmem", folio_kb=THP,
                     cpu_model="haswell-ep", kernel=kernel, **kw).at_kernel_speed()


@pytest.mark.parametrize("kernel, walk_once, remap_dirty", [("4.8", False, False), ("4.11", True, False),
                                                          ("4.13", True, False), ("5.19", True, False),
                                                          ("6.0", True, True)])
def test_the_switches_by_kernel(kernel, walk_once, remap_dirty):
    m = model(kernel)
    assert m.switch("freeze_walk_once") is walk_once and m.switch("split_remap_dirty") is remap_dirty


@pytest.mark.parametrize("kernel, walks", [("4.8", 511), ("4.11", 0)])
def test_the_split_s_rmap_walks_and_its_one_synchronous_flush(kernel, walks):
    """The walks beyond split_work's measured ones (its per-folio freeze walk, its per-page remap walks):
    v4.6-v4.10's try_to_unmap per tail page."""
    m = model(kernel)
    sync, n = paths.split_pmd_thp(m, PAGES)
    assert n == walks
    # pmdp_invalidate flushes the 2M range once, synchronously (a full flush: 512 pages over the ceiling)
    assert sync == paths.flush(m, PAGES, 1, False)


@pytest.mark.parametrize("kernel", ["4.8", "4.11"])
def test_two_flush_rounds_a_thp_before_v6_0(kernel):
    """The split's flush and the list's one batched flush: 2 rounds, not 512 + 512."""
    m = model(kernel)
    d = paths.swap_out(m, THP, whole=False, by_kswapd=True)
    rounds = paths.flush(m, PAGES, 1, False, True)["shootdowns"] + paths.flush(m, PAGES, 1, True, True)["shootdowns"]
    assert d["shootdowns"] == pytest.approx(rounds)
    one = paths.flush(m, 1, 1, True, True)["shootdowns"]  # one round's targets (kswapd: every owner CPU)
    assert d["shootdowns"] == pytest.approx(2 * one)
    assert d["targets"] == pytest.approx(paths.flush(m, PAGES, 1, False, True)["targets"]
                                         + paths.flush(m, PAGES, 1, True, True)["targets"])


def test_from_v6_0_every_pageout_flushes_first_again():
    m = model("6.0")
    d = paths.swap_out(m, THP, whole=False, by_kswapd=True)
    per_page = paths.flush(m, 1, 1, True, True)["shootdowns"]  # flush_dirty_before_pageout, one folio each
    assert d["shootdowns"] == pytest.approx(paths.flush(m, PAGES, 1, False, True)["shootdowns"] + PAGES * per_page)


def test_the_per_subpage_freeze_walks_cost_511_walks():
    m = model("4.11")
    once = paths.swap_out(m, THP, whole=False)["reclaim"]
    per_tail = paths.swap_out(m.set(freeze_walk_once=False), THP, whole=False)["reclaim"]
    assert per_tail - once == pytest.approx(511 * m.reference_us_per_folio)


def test_the_delay_split_keeps_the_split_s_flushes():
    """v4.13 splits after add_to_swap, before the unmap: the same two rounds."""
    m = model("4.11+thp_swap_delay_split")
    split = paths.swap_out(m, THP, whole=False)
    delayed = paths.swap_out_sized(m, THP)
    for key in ("shootdowns", "targets"):
        assert delayed[key] == pytest.approx(split[key])


def test_a_pte_mapped_mthp_split_still_flushes_each_pte_before_v6_8():
    """try_to_migrate of a PTE-mapped folio clears and flushes PTE by PTE until 3027c6f8eb9d (v6.8)."""
    m = SwapModel(processes=8, bytes_per_process=2**30, memcg_mb=4096, swap_device="pmem", folio_kb=64,
                  cpu_model="haswell-ep", kernel="6.7+anon_mthp").at_kernel_speed()
    d = paths.swap_out(m, 64, whole=False)
    one_sync, one = paths.flush(m, 1, 1, False)["shootdowns"], paths.flush(m, 1, 1, True)["shootdowns"]
    assert d["shootdowns"] == pytest.approx(16 * one_sync + 16 * one)


def test_on_arm64_the_split_s_flush_is_one_tlbi_and_one_dsb():
    """flush_pmd_tlb_range invalidates the PMD with one TLBI at its stride, then one DSB ISH."""
    m = SwapModel(processes=8, bytes_per_process=2**30, memcg_mb=4096, swap_device="brd", folio_kb=THP,
                  cpu_model="generic-arm64", kernel="6.6", swap_whole_pmd_thp=False).at_kernel_speed()
    sync, _ = paths.split_pmd_thp(m, PAGES)
    assert (sync["tlbis"], sync["dsbs"], sync["shootdowns"]) == (1.0, 1.0, 0.0)


def test_the_delay_split_moves_the_cold_tail_lines_under_the_insert_s_lock():
    """511 tail struct pages, cold_line_us each: off the reclaimer's CPU, onto __add_to_swap_cache's hold."""
    m = model("4.8+thp_swap_delay_split")
    warm, cold = (paths.swap_out_sized(m.set(cold_line_us=c), THP) for c in (0.0, 0.25))
    assert cold["cache_insert"] - warm["cache_insert"] == pytest.approx(511 * 0.25)
    assert cold["reclaim"] - warm["reclaim"] == pytest.approx(-511 * 0.25)
    assert {k for k in cold if cold[k] != warm[k]} == {"cache_insert", "reclaim"}


@pytest.mark.parametrize("kernel, moves", [("4.11", False), ("4.8", True)])
def test_the_move_matters_only_where_the_swap_cache_lock_is_a_station(kernel, moves):
    """v4.11's 64 MiB trunks: the insert's hold is CPU work, the same time either way; v4.8's one tree lock."""
    base = SwapModel(processes=16, swap_device="pmem", folio_kb=THP, cpu_model="haswell-ep", memcg_mb=None,
                     swapped_share=0.6, kernel=kernel + "+thp_swap_delay_split")
    warm, cold = (base.set(cold_line_us=c).solve()["vm_scalability_throughput_kib_s"] for c in (0.0, 0.2))
    if moves:
        assert cold < 0.95 * warm
    else:
        # (1e-4: kswapd's capacity counts its "reclaim" key only, not the insert's hold that v4.11 makes CPU
        # work, so it moves by 2e-6 here)
        assert cold == pytest.approx(warm, rel=1e-4)
