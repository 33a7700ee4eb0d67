"""The kernel paths of :class:`~mmcost.swap.SwapModel`, one function each.

A path function takes the model and returns the *holds* one operation of the
path puts on each station: a dict from a key of :data:`HOLDS` to an amount in
that key's unit (a float, or an array of lanes: see the package docstring).
:mod:`mmcost.swap.stations` says which station each key loads and builds the
network from them; a path never builds a network itself.

Paths:

- :func:`swap_out` (one folio of a size, whole or split),
  :func:`swap_out_sized` (with the contiguous-allocation failures of that
  size) and :func:`swap_out_mix` (the average folio of the workload's sizes):
  usemem's fault and the reclaimer's ``shrink_folio_list``;
- :func:`delay_split`: a PMD THP given a swap cluster and the swap cache whole,
  then split (v4.13, ``thp_swap_delay_split``), from its split path's holds;
- :func:`swap_in` (one folio of a size) and :func:`swap_in_mix` (the
  average folio a read-back faults in): ``do_swap_page``, the read from a
  SWP_SYNCHRONOUS_IO device, the slot freed; the swap-out a swap-in forces
  under a memcg limit is :func:`swap_out_sized`'s, combined by
  :func:`mmcost.swap.reclaim.readback_network`;
- :func:`exit_free`: one swap entry freed at exit (``zap_pte_range`` ->
  ``free_swap_and_cache_nr``).

The swap-in path shows what adding a path takes: this function (its holds,
keyed in :data:`HOLDS`), no new station (its zs_free, folio_add_lru and slot
frees are sites on existing rows of :mod:`mmcost.swap.stations`), its fields
(:class:`mmcost.swap.SwapInModel`) and its kernel switches
(``swapin_skip_swapcache``, ``swapin_mthp``, ``swap_table`` in
:mod:`mmcost.kernel`).
"""

from __future__ import annotations

import numpy as np

from .. import cpu_models
from ..lanes import any_of, maximum, minimum, where
from ..lanes import count as lane_count
from ..tlb import flush_cost, flush_targets, local_flush_chance
from .constants import (MEMCG_DELAY_PRECISION_SHIFT, MEMCG_DELAY_SCALING_SHIFT, MEMCG_MAX_HIGH_DELAY_S, MGLRU_BATCH,
                        PAGE_KB, PMD_KB, RECLAIM_BATCH, SLOT_CACHE_BATCH)
from .devices import COMPRESSED, load, store, zero_us

#: the keys a path's holds may have: (unit, what one operation puts there). Keys named ``fault`` or
#: ending in ``_fault`` are per folio *written* (the fault side); every other key is per folio *swapped*
#: (see :data:`PER_WRITTEN`).
HOLDS: dict[str, tuple[str, str]] = {
    "fault": ("us", "the writer's CPU per folio written: the fault, clear_page, PTE/PMD install, first-touch walk, "
                    "usemem's stores"),
    "reclaim": ("us", "the reclaimer's CPU: shrink_folio_list's work, the PTE clears, the device's CPU work, the "
                      "flush's sender"),
    "targets": ("us", "CPU of the flush's remote targets (their IPI handlers)"),
    "lru": ("us", "under the lruvec lock (isolate_lru_folios, move_folios_to_lru per scan pass; a split's tails)"),
    "lru_fault": ("us", "under the lruvec lock, per folio written (folio_add_lru's folio_batch, folio_batch_move_lru)"),
    "slot": ("us", "under si->lock or a cluster allocation lock (get_swap_pages)"),
    "avail": ("us", "under swap_avail_lock (get_swap_pages, si->lock era)"),
    "memcg_fault": ("us", "on the memcg page counter, per folio written (a stock refill, a large charge)"),
    "memcg": ("us", "on the memcg page counter, per folio swapped (mem_cgroup_swapout's uncharge)"),
    "zone_fault": ("us", "under zone->lock, per folio written (rmqueue_buddy for an order off the pcp lists)"),
    "zone": ("us", "under zone->lock, per folio swapped (free_one_page)"),
    "cache_insert": ("us", "swap cache insert (__add_to_swap_cache)"),
    "cache_delete": ("us", "swap cache delete (__remove_mapping)"),
    "tags": ("us", "per writeback-tag site under the swap cache's tree lock (before v4.9)"),
    "map_dup": ("us", "under si->lock: swap_duplicate per PTE (before v4.11)"),
    "map_count": ("us", "under si->lock: page_swapcount per swap_writepage (before v4.11)"),
    "map_free": ("us", "under si->lock: swapcache_free per entry (before v4.11)"),
    "tlbis": ("TLBIs", "broadcast TLBIs (arm64), queued at the interconnect's DVM node"),
    "dsbs": ("count", "DSB ISH waits after broadcast TLBIs (arm64; a counter, no station: the wait is the "
                      "sender's, in reclaim)"),
    "shootdowns": ("count", "remote CPUs flushed (a counter, no station)"),
    "zs": ("us", "under a zsmalloc size class lock (zs_malloc)"),
    "brd_xa": ("us", "under brd's page-tree lock (brd_insert_page)"),
    "device": ("us", "at the block device (service per I/O: size / bandwidth or latency / depth)"),
    "dram_fault": ("bytes", "DRAM traffic per folio written (clear_page)"),
    "dram": ("bytes", "DRAM traffic per folio swapped (copy, compression, DMA)"),
    # swap_in's keys, per folio swapped in (besides lru_add it reuses memcg, zone, cache_insert, cache_delete,
    # dram and the slot_free keys, in the same units)
    "swapin": ("us", "the faulting task's CPU per folio swapped in: the fault, do_swap_page's work, the read, the "
                     "PTEs, the slots freed outside shared locks"),
    "lru_add": ("us", "under the lruvec lock: the new folio's folio_add_lru (a per-CPU batch, per folio)"),
    # exit_free's keys, per swap entry freed
    "work": ("us", "the freer's CPU per entry, resident pages' share included"),
    "slot_free": ("us", "under si->lock per entry freed one at a time (swap_entry_free, before v4.11)"),
    "slot_free_batched": ("us", "under si->lock per entry freed in a slot-cache batch (swapcache_free_entries, "
                                "v4.11-v6.14)"),
    "zs_free": ("us", "under a zsmalloc size class lock per object freed (zs_free), moved lines included"),
}

#: the keys that are per folio written, not per folio swapped: the network divides them by the swapped
#: share s (1/s folios are written per folio swapped)
PER_WRITTEN = frozenset(k for k in HOLDS if k == "fault" or k.endswith("_fault"))

#: the keys whose lock a path takes a known number of times per operation, which it states as
#: ``"n:" + key`` beside the hold (:attr:`mmcost.locks.Critical.count`: the hold is their total): a
#: split THP's 512 swap cache inserts, one slot allocation per 64 with the slot cache. Any other key is
#: taken once per operation.
COUNTED = ("lru", "lru_fault", "lru_add", "slot", "avail", "cache_insert", "cache_delete", "tags", "map_dup",
           "map_count", "map_free", "slot_free", "slot_free_batched")


# --- lines a contended section moves from the CPU that held its lock last --------------------------------
#: cache lines each call site of the swap cache's tree_lock (v4.7-v4.10) writes that the previous holder,
#: another CPU, wrote last: they move with the lock (Boyd-Wickizer et al., Linux Symposium 2012, sec. 3), and
#: they, not the radix tree walks in lines every CPU only reads, are what a contended section costs. Read off
#: v4.7's source: the lock word with the address_space's nrpages (one line) at every site, and
#:
#: - __add_to_swap_cache (mm/swap_state.c): radix_tree_insert writes a leaf of the CPU's own swap cluster
#:   (percpu_cluster: local), swap_cache_info.add_total (one global line): 2;
#: - __remove_mapping (mm/vmscan.c) -> __delete_from_swap_cache: swap_cache_info.del_total (that line
#:   again), and mem_cgroup_swapout under the lock (swap_cgroup_record's ctrl->lock, one per swap device):
#:   3;
#: - __test_set_page_writeback (mm/page-writeback.c): radix_tree_tag_set(WRITEBACK) sets the leaf's bit and,
#:   the leaf having no other page under writeback (pmem completes each page before the next), its bit in
#:   the parent node that every writer's leaves share (the writers' clusters are taken in order from the
#:   free list, so they sit under one node); tag_clear(DIRTY) and tag_clear(TOWRITE) only read: 2;
#: - test_clear_page_writeback: radix_tree_tag_clear(WRITEBACK) clears both bits again: 2.
#:
#: Without the tags (371a096edf43, v4.9) the lock moves 5 lines a page instead of 9: the lock stays
#: contended (the published profile: __add_to_swap_cache 10.86% -> 8.31% of cycles with 22% more pages).
TREE_LOCK_LINES = {"__add_to_swap_cache": 2, "__remove_mapping": 3, "__test_set_page_writeback": 2,
                   "test_clear_page_writeback": 2}
#: the same for si->lock's swap_map sections before v4.11 (__swap_duplicate, page_swapcount and
#: swapcache_free through swap_info_get, v4.7 mm/swapfile.c): p->flags and p->max are read before the lock or
#: never written while swapping, the swap_map byte is in the reclaimer's own cluster: the lock's line only
SWAP_MAP_LINES = 1
#: the same for get_swap_pages' swap_avail_lock (v4.x-v6.13 mm/swapfile.c): plist_requeue of the one device
#: finds no same-priority sibling and writes nothing, so the lock's own line only
AVAIL_LINES = 1
#: the same for zone->lock around a buddy allocation or free (rmqueue_buddy -> __rmqueue_smallest / expand,
#: free_one_page -> __free_one_page, mm/page_alloc.c): the lock word, the order's free_area (its free_list
#: heads and nr_free, which every allocator and freer of the order writes) and the struct page the last
#: holder's list_del / list_add wrote (the block now at the list's head): 3, a lower bound (struct
#: free_area is ~104 B, not line-aligned; expand() and buddy merges write one more free_area and struct page
#: per order crossed); the zone's free-page counter is per-CPU (__mod_zone_page_state's vm_stat_diff)
ZONE_LOCK_LINES = 3


def moved_share(m, partitions=1):
    """The share of the acquisitions of a lock (or writes of a line) with
    ``partitions`` instances whose lines another CPU wrote last: (n - 1)/n
    with n running writers per instance, each equally likely to have been
    the last (Boyd-Wickizer et al., "Non-scalable locks are dangerous",
    Linux Symposium 2012, sec. 3: a contended section's cost is the lines
    its lock hands over). One writer per instance moves nothing."""
    n = maximum(1.0, m.running / partitions)
    return (n - 1) / n


def contended_hold_us(m, own, lines: int, partitions=1):
    """One hold of a lock with ``partitions`` instances: the holder's ``own``
    work and the ``lines`` its section writes, each fetched from another
    CPU (``lock_line_us``) :func:`moved_share` of the time."""
    return own + lines * moved_share(m, partitions) * m.lock_line_us


def zone_hold_us(m):
    """One buddy allocation or free under ``zone->lock`` (one per node's
    ZONE_NORMAL): its own work (``zone_lock_hold_us``) and the
    :data:`ZONE_LOCK_LINES` lines another CPU wrote last (``lock_line_us``,
    :func:`moved_share`)."""
    return contended_hold_us(m, m.zone_lock_hold_us, ZONE_LOCK_LINES, m.nodes)


def avail_hold_us(m):
    """One ``get_swap_pages`` pass under the global ``swap_avail_lock``
    (v4.x-v6.13): its own work (``swap_avail_hold_us``) and the
    :data:`AVAIL_LINES` line another CPU wrote last (:func:`moved_share`)."""
    return contended_hold_us(m, m.swap_avail_hold_us, AVAIL_LINES)


def swap_map_hold_us(m):
    """One ``swap_map`` count operation under ``si->lock`` (v3.9-v4.10): its
    own work (``swap_map_hold_us``) and :data:`SWAP_MAP_LINES` moved
    (:func:`moved_share` over the allocation lock's instances)."""
    return contended_hold_us(m, m.swap_map_hold_us, SWAP_MAP_LINES, slot_partitions(m))


def tree_lock_line_us(m):
    """Per line a swap cache ``tree_lock`` section writes where that lock is
    a contended station (one per device, to v4.10; 0 where it is not): the
    line moved from another CPU :func:`moved_share` of the time."""
    parts = m.switch("swapcache_lock_partitions")
    return contended_hold_us(m, 0.0, 1, parts) if parts else 0.0


#: cache lines a swap allocation's section writes that the last holder of its lock, when another CPU,
#: wrote last (read off the source): si->lock's era (to v6.13, scan_swap_map_slots) writes the lock word,
#: swap_info_struct's allocation fields (cluster_next, lowest_bit, highest_bit, inuse_pages: adjacent
#: ints, one line), the swap_map bytes' line and the cluster's swap_cluster_info: 4; a per-cluster
#: lock's (v6.14 on: cluster_alloc_range under ci->lock) the same lines of one cluster
SLOT_LINES = 4


def slot_partitions(m) -> int:
    """Swap allocation locks: si->lock, one per device, to v6.13; from v6.14 a cluster's
    lock on each CPU's own cluster (``slot_lock_partitions`` overrides)."""
    return m.slot_lock_partitions or ((m.cpus or m.writers) if m.switch("swap_alloc_lock") == "per_cluster" else 1)


def slot_hold_us(m):
    """One acquisition of a swap allocation lock: the holder's own work
    (``slot_hold_us_per_acquisition``) and the :data:`SLOT_LINES` lines the
    last holder wrote, fetched from its cache (``lock_line_us``) when that
    was another CPU: (n - 1)/n of the time with n running writers on the
    lock (:func:`slot_partitions`; the lines of a contended section move
    with its lock: Boyd-Wickizer et al., Linux Symposium 2012, sec. 3). One
    task alone, or each CPU on its own cluster (v6.14 on), moves none:
    MADV_PAGEOUT by one task on 6.18 measures 0.35-1.24 us a folio of fixed
    swap-out work (kvm_6_18_swapin's second VM), where a 1.0 us hold alone
    was the prior."""
    return contended_hold_us(m, m.slot_hold_us_per_acquisition, SLOT_LINES, slot_partitions(m))


# --- the flush of an unmap ------------------------------------------------------------------------------
def lru_sharers(m) -> float:
    """Processes whose pages lie on the LRU lists a reclaimer scans: its
    memcg's (memcg reclaim walks the memcg's lruvec on every node), or its
    node's under global reclaim."""
    if m.memcg_mb is None:
        return max(1.0, m.processes / m.nodes)
    return m.processes / m.memcgs


def targets(m, folios: float, by_kswapd: bool = False) -> float:
    """Expected remote CPUs of one flush covering ``folios`` folios: the
    union of the owners' cpumasks, minus the reclaimer's CPU. The LRU holds
    its processes' pages in fault order, so each folio belongs to a
    uniformly drawn one of them. kswapd owns no mm: every owner CPU is
    remote (``try_to_unmap_flush`` -> ``flush_tlb_multi``), except the one
    it took on a full machine, which is lazy (:func:`mmcost.tlb.flush_targets`)."""
    cpus = m.cpus or m.writers
    mm = m.mm_cpus or min(m.threads, cpus)
    return flush_targets(float(cpus), float(mm), lru_sharers(m), folios, sender_in_mm=not by_kswapd)


# --- the arm64 flush: broadcast TLBIs, one DSB ISH ---------------------------------------------------------
#: PTEs of one contiguous (PTE_CONT) block with 4K pages: CONT_PTES (arch/arm64/include/asm/pgtable-hwdef.h)
CONT_PTES = 16


def dsb_wait_us(m):
    """One DSB ISH after broadcast TLBIs: the DVM sync it sends completes
    once every PE of the inner shareable domain has answered (Arm ARM
    D8.13, TLB maintenance completion; the interconnect's DVM node forwards
    the sync to every PE and collects the answers: Arm CCN-502 TRM sec. 2.7,
    "DVM messages"), so it grows with the PEs: ``dsb_us`` on one PE, times
    1 + ``dsb_growth_per_cpu`` per further PE of ``domain_cpus``."""
    return m.dsb_us * (1.0 + m.dsb_growth_per_cpu * (m.domain_cpus - 1))


def dvm_flush(m, tlbis, dsbs) -> dict:
    """``tlbis`` broadcast TLBIs and ``dsbs`` DSB ISH waits (arm64), as the
    holds of one flush. A TLBI is posted: the PE issues it and goes on
    (``__flush_tlb_page_nosync``: dsb(ishst), ``tlbi vale1is``; v6.5's
    ``arch_tlbbatch_add_pending`` is exactly that, per PTE), and every PE
    of the domain must apply every broadcast TLBI to its own TLBs, so all
    CPUs' TLBIs queue at one station, ``tlbi_us`` each (the ``dvm`` row of
    :mod:`mmcost.swap.stations`; Andrea Arcangeli, "arm64: tlb: skip tlbi
    broadcast", Feb 2020, 32-CPU Ampere eMAG: the latency "increases almost
    linearly with the number of CPUs trying to send tlbi broadcasts at the
    same time"). The DSB (``flush_tlb_page``'s, ``arch_tlbbatch_flush``'s
    ``dsb(ish)``) waits for its sync's round trip to every PE
    (:func:`dsb_wait_us`), on the flushing CPU; the syncs of different PEs
    overlap (each PE has at most one outstanding, Arm CCN-502 TRM sec. 2.7),
    so ``dsbs`` is a counter, not a station. Charging the DSB's whole wait
    at the node instead (one sync completed after another) makes seed 000's
    4K cells node-bound and its fit push ``tlbi_us`` 19 prior widths up."""
    return dict(sender=dsbs * dsb_wait_us(m), targets=0.0, shootdowns=0.0, tlbis=tlbis, dsbs=dsbs)


def range_tlbi(m) -> bool:
    """Whether ``__flush_tlb_range`` invalidates a range with one range TLBI
    (``tlbi rvale1is``): the kernel's support (``tlbi_range``, d1d3aa98b1d4,
    v5.9) on a CPU with FEAT_TLBIRANGE (Armv8.4; the preset's
    ``tlbi_range``: Neoverse N1 and the other Armv8.2 presets have none).
    Without it a range of n pages is n TLBIs (and ``flush_tlb_mm`` from
    MAX_TLBI_OPS = 512 of them)."""
    cpu = cpu_models.get(m.cpu_model) if m.cpu_model else cpu_models.default_for("arm64")
    return bool(cpu.tlbi_range) and bool(m.switch("tlbi_range"))


def contpte_unfold(m, kb: int) -> dict:
    """Unmapping a PTE-mapped large folio of ``kb`` KiB whose PTEs are
    contiguous (PTE_CONT) blocks (arm64 ``contpte``, 4602e5757bcc, v6.9: a
    naturally aligned 64K block mapped by one ``set_ptes`` at fault gets the
    contiguous bit): the first ``ptep_get_and_clear`` of each block unfolds
    it (``contpte_try_unfold`` -> ``contpte_convert``: clear its 16 PTEs,
    ``__flush_tlb_range`` of the block, synchronously: 16 TLBIs, or one range
    TLBI (:func:`range_tlbi`), and a DSB; write the 16 PTEs back without the
    bit). Nothing before v6.9, on x86, for a 4K, 16K or 32K folio, or for a
    2M THP (PMD-mapped; the PMD split writes its PTEs one at a time)."""
    if m.arch != "arm64" or not (CONT_PTES * PAGE_KB <= kb < PMD_KB) or not m.switch("contpte"):
        return dvm_flush(m, 0.0, 0.0)
    blocks = kb // (CONT_PTES * PAGE_KB)
    per_block = 1.0 if range_tlbi(m) else float(CONT_PTES)
    out = dvm_flush(m, blocks * per_block, float(blocks))
    out["sender"] = out["sender"] + blocks * 2 * CONT_PTES * m.pte_us  # (not +=: a lane's field)
    return out


def young_flush(m, kb: int) -> dict:
    """The TLBIs of the reference check that finds a just-written folio's
    PTEs young (arm64; x86 clears the accessed bit without a flush):
    ``folio_referenced_one`` -> ``ptep_clear_flush_young`` issues one TLBI
    per young PTE and elides the DSB (arch/arm64/include/asm/pgtable.h:
    "We can elide the trailing DSB here"), while a PMD-mapped THP's
    ``pmdp_clear_flush_young`` flushes its 2M range synchronously
    (``flush_tlb_range``: 512 pages reach MAX_TLBI_OPS, so ``flush_tlb_mm``'s
    one TLBI, or one range TLBI, and a DSB). usemem writes each page once, so
    one check per folio finds it young (``folio_check_references`` keeps it,
    the next finds it old and reclaims it): ``referenced_share`` of the
    folios, as :func:`scans_per_folio` counts them. MGLRU's aging walk clears
    young bits with ``ptep_test_and_clear_young``, without a TLBI; so does
    x86's ``ptep_clear_flush_young`` ("clearing the accessed bit without a
    TLB flush doesn't cause data corruption", arch/x86/mm/pgtable.c)."""
    if m.arch != "arm64" or m.switch("lru_gen"):
        return dvm_flush(m, 0.0, 0.0)
    young = scans_per_folio(m)[2]
    if kb == PMD_KB:
        return dvm_flush(m, young, young)
    return dvm_flush(m, young * (kb // PAGE_KB), 0.0)


def flush(m, entries: int, folios: float, batched: bool, by_kswapd: bool = False) -> dict:
    """One flush round for ``entries`` unmapped translations of ``folios``
    folios: the sender's CPU time, the targets' CPU time (us), shootdowns,
    broadcast TLBIs (arm64). x86 ``arch_tlbbatch_flush`` is a full flush;
    an unbatched flush (``ptep_clear_flush``) INVLPGs up to the ceiling;
    its cost is :func:`mmcost.tlb.flush_cost`'s, the one ``TlbModel``
    charges (the local flush under the wait for the remote handlers from
    v5.13, before it otherwise), with the sender in the cpumask when its
    own mm owns a flushed folio (:func:`mmcost.tlb.local_flush_chance`;
    kswapd never). The TLB refill after a full flush
    (``refill_pages_per_full_flush`` walks) is counted here, once per
    flushed CPU, after the flush: in ``sender`` for the sender's own TLB,
    in ``targets`` for every remote one (the preempted vCPUs' too).
    arm64: :func:`dvm_flush` (one TLBI per entry, one DSB ISH)."""
    if m.arch == "arm64":
        return dvm_flush(m, float(entries), 1.0)
    walk_us = m.walk_ns * 1e-3 * (m.nested_walk_factor if m.virtualized else 1.0)
    refill = m.refill_pages_per_full_flush * walk_us
    full = batched or entries > 33  # tlb_single_page_flush_ceiling
    t = targets(m, folios, by_kswapd)
    local = local_flush_chance(lru_sharers(m), folios, not by_kswapd)
    virt = bool(m.virtualized)
    one = flush_cost(targets=t, full=full, local=local, entries=float(entries), full_flush_us=m.full_flush_us,
                     invlpg_us=m.invlpg_us, ipi_send_us=m.ipi_send_us, irq_us=m.irq_us, virtualized=virt,
                     vm_exit_us=m.vm_exit_us, pv_ipi=virt and bool(m.switch("pv_ipi")),
                     posted_interrupts=bool(m.posted_interrupts),
                     pv_tlb_flush=virt and bool(m.switch("pv_tlb_flush")), preempted_share=m.preempted_share,
                     concurrent=bool(m.switch("concurrent_flush")))
    after = refill if full else 0.0  # each flushed CPU's refill walks, after the flush
    return dict(sender=one["sender"] + local * after, targets=one["targets"] + t * after,
                shootdowns=one["shootdowns"], tlbis=0.0, dsbs=0.0)


# --- swap-out -------------------------------------------------------------------------------------------
def whole(m, kb: int) -> bool:
    """Whether the kernel swaps a folio of ``kb`` KiB out whole (else it splits it first)."""
    if kb == PAGE_KB:
        return True
    if kb == PMD_KB:
        return bool(m.switch("swap_whole_pmd_thp"))
    return bool(m.switch("swap_whole_mthp"))


#: folios per folio_batch (PAGEVEC_SIZE, include/linux/pagevec.h): shrink_folio_list frees in batches of it
FOLIO_BATCH = 31
#: page_counter levels a charge walks: the memcg's own counter and the root's above it (page_counter_try_charge
#: walks c->parent to the root; the runs modelled here put their memcg right below it)
MEMCG_LEVELS = 2


def charge_updates(m) -> tuple[float, float]:
    """page_counter updates of one failed charge attempt and of one that
    succeeds: the memcg's counter adds and subtracts where it refuses (its
    ancestors are not reached); with memsw accounting (cgroup v1) the memsw
    counter is charged first at every level and uncharged again on a
    refusal; a success charges every level of each counter."""
    memsw = not m.cgroup_v2
    return 2.0 + (2.0 * MEMCG_LEVELS if memsw else 0.0), float(MEMCG_LEVELS * (2 if memsw else 1))


def memcg_writers(m) -> float:
    """Writers charging one memcg at once: the running writers spread over the memcgs."""
    return max(1.0, m.running / m.memcgs)


def memcg_charge_cycle(m) -> dict[str, float]:
    """The memcg's charges at its limit, per page charged, as
    ``try_charge_memcg`` (mm/memcontrol.c; the same retry since v3.x's
    res_counter) makes them: ``updates`` (page_counter atomics) and
    ``failures`` (what memory.failcnt counts, v1).

    A charge of n pages first tries ``batch = max(MEMCG_CHARGE_BATCH, n)``
    (:data:`memcg_charge_batch`: 32, 64 from v6.1) to refill the per-CPU
    stock. Where the margin below the limit is smaller than the batch that
    attempt fails (``page_counter_try_charge`` adds, finds the usage over
    max, subtracts, counts a failure) and the charge retries with its own
    size. When n does not fit either, a charge that may block reclaims
    ``max(n, fault_reclaim_pages)`` pages (``try_to_free_mem_cgroup_pages``)
    and retries; a large-folio fault that may not (``vma_thp_gfp_mask``
    without MADV_HUGEPAGE) falls back to 4K pages, the first of which
    reclaims. One writer's cycle runs from one reclaim to the next: the
    fallback range's 4K pages, the large folios that fit in what the
    reclaim left (:meth:`SwapModel.large_fault_share`'s steady share), the
    large charge that fails. With memsw accounting (cgroup v1) the memsw
    counter is charged first and uncharged again when the memory counter
    refuses. A large-folio charge tries the batch too: the trylock stock rework's
    ``if (!gfpflags_allow_spinning(gfp_mask)) batch = nr_pages`` would spare
    a GFP_TRANSHUGE_LIGHT charge the attempt, yet this kernel's 16K runs
    count it (0.376 failures a page; 0.125 without it).

    k writers of one memcg at its limit run out of margin together and
    reclaim together (each failing charge reclaims), so a margin of k times
    the reclaim is there at once: whole batches of it go to the per-CPU
    stocks, one charge each, and only the rest is charged a folio at a time
    with a failed batch attempt: all of M = kR below a batch, half a batch
    on average from two batches up, linearly between.

    Measured on this project's KVM guest (6.18, v1, 256 MiB,
    ``data/kvm_6_18_memcg_failcnt``): memory.failcnt per page swapped
    1.024 at 4K, 0.376 at 16K, 0.625 at 64K with one writer (this cycle:
    1.031, 0.436, 0.619 with R fitted to the runs' large-folio shares);
    with two, 0.31-0.63 at 4K between repetitions, where this cycle makes
    1.015 with that R (0.667 with the 4K runs' own R, 42): whether two
    writers reclaim in step changes from run to run."""
    r = m.fault_reclaim_pages
    n = max(1, m.folio_kb // PAGE_KB)
    batch = int(m.switch("memcg_charge_batch"))
    fail, ok = charge_updates(m)
    below = 1.0 if n < batch else 0.0  # a charge below the batch tries the batch first
    # one writer's cycle, per cycle: charges that try a batch first and then succeed (`tried`), batch attempts
    # of the charge that then fails (`tried_fail`), charges without a batch attempt (`direct`), and failures
    # that are not batch attempts (`other`)
    if n == 1 or m.madvise:  # every charge may reclaim: one cycle per reclaim of max(n, R) pages
        pages = maximum(r, float(n))
        tried, tried_fail, direct, other = below * pages / n, 0.0, (1.0 - below) * pages / n, 1.0
    else:
        reclaims = maximum(1.0, n / r)  # the fallback range's 4K charges, and the reclaims among them
        large = maximum(0.0, (r - n) / n)  # large folios that fit in what the reclaim left
        pages = n * (1.0 + large)
        tried, tried_fail, direct = n + below * large, below, (1.0 - below) * large
        other = reclaims + 1.0  # the reclaiming 4K charges' second failures; the failing large charge's
    # k writers reclaiming together: a margin M = kR, of which whole batches go to stocks (one charge each)
    margin = memcg_writers(m) * r
    # what is left of it after whole batches: all of it below a batch; from two batches up half a batch on
    # average (margins vary by more than a batch: whose reclaims end together, how far each overshoots);
    # linear between, so that a margin never leaves more than a smaller one
    left = where(margin < batch, margin, maximum(batch / 2.0, 1.5 * batch - margin / 2.0))
    rest = left / margin  # the share of the margin charged a folio at a time
    stocked = (1.0 - rest) * pages / batch  # batch charges per cycle, each serving `batch` pages
    updates = rest * (tried * (fail + ok) + tried_fail * fail) + direct * ok + other * fail + stocked * ok
    failures = rest * (tried + tried_fail) + other
    return dict(updates=updates / pages, failures=failures / pages)


def memcg_failures_per_swapped_page(m) -> float:
    """memory.failcnt's growth per page swapped out: each page swapped makes
    room for one charged at the limit (:func:`memcg_charge_cycle`). The
    memcg's first fill is reclaimed first (the LRU's oldest): where its
    folios are larger than ``fault_reclaim_pages`` and leave whole, each
    reclaim frees a folio's pages at once and the charges after it come
    from the stock: per folio's worth of pages, the large attempt fails
    (twice below the batch: the batch, then its own size) and the 4K charge
    that reclaims fails twice (the batch, then its page); 1 - s of the
    written pages are that fill, s are swapped."""
    if m.memcg_mb is None:
        return 0.0
    out = _max_failures_per_swapped_page(m)
    if m.memcg_high_mb is not None:  # held at memory.high, no charge reaches memory.max
        out = where(high_governs(m), 0.0, out)
    return out


def _max_failures_per_swapped_page(m) -> float:
    n = max(1, m.folio_kb // PAGE_KB)
    cycle = memcg_charge_cycle(m)["failures"]
    if n == 1 or not whole(m, m.folio_kb):
        return cycle
    s = m._swapped_share()
    first = minimum(1.0, (1.0 - s) / s) * where(n > m.fault_reclaim_pages, 1.0, 0.0)
    large = 2.0 if n < int(m.switch("memcg_charge_batch")) else 1.0
    return first * (large + 2.0) / n + (1.0 - first) * cycle


def memcg_charges(m, pages: int, folios_out: int) -> tuple[float, float]:
    """page_counter updates (per folio written, per folio swapped out) that
    move their cache line. Below the limit a charge under the batch comes
    from the per-CPU stock, refilled a batch at a time (``consume_stock`` /
    ``refill_stock``), and a larger one charges the counters itself; at the
    limit (the written share that is swapped) every charge goes to the
    counters, failed batch attempts and all (:func:`memcg_charge_cycle`).
    Swap-out uncharges each folio leaving memory (v1: ``memcg1_swapout``;
    v2: the freed folios' batch, and the swap counter charged per folio,
    ``__mem_cgroup_try_charge_swap``).
    An update moves its line when another CPU updated it last: for each
    level, 1 - 1/k of them with k writers updating it (the memcg's own, all
    of them at the root). Held at memory.high below memory.max
    (:func:`high_governs`) every charge is a stock refill or a large
    folio's own, as below the limit."""
    if m.memcg_mb is None:
        return 0.0, 0.0
    # per page, below the limit: a batch refill per batch of pages, or the folio's own charge above it
    stock = charge_updates(m)[1] / max(int(m.switch("memcg_charge_batch")), pages)
    s = m._swapped_share()
    per_page = s * memcg_charge_cycle(m)["updates"] + (1.0 - s) * stock
    if m.memcg_high_mb is not None:  # below memory.max every charge refills the stock (high_governs)
        per_page = where(high_governs(m), stock, per_page)
    moved = (moved_share(m, m.memcgs) + (MEMCG_LEVELS - 1) * moved_share(m)) / MEMCG_LEVELS
    # the memory counter's uncharge: v1 per folio (memcg1_swapout); v2 once per folio batch of the freed
    # folios (shrink_folio_list -> mem_cgroup_uncharge_folios -> uncharge_batch, PAGEVEC_SIZE = 31), with
    # the swap counter charged per folio (__mem_cgroup_try_charge_swap; v1 counts swap in memsw instead)
    out = MEMCG_LEVELS * ((1.0 + 1.0 / FOLIO_BATCH) if m.cgroup_v2 else 1.0)
    return pages * per_page * moved, folios_out * out * moved


# --- memory.high: the writer's own reclaim on return to user, and the throttle ------------------------------
def high_governs(m):
    """Whether memory.high, not memory.max, holds the memcg (per lane: an
    array where ``memcg_high_mb`` or ``memcg_mb`` is one): ``memcg_high_mb``
    below ``memcg_mb``. With memory.high at or above memory.max the usage
    never exceeds it (``page_counter_try_charge`` refuses at max first), so
    the memcg is memory.max alone; False without a memory.high.

    Held at memory.high, the memcg's usage stays near it and every charge
    succeeds below memory.max (assumed to sit more than the writers'
    in-flight batches above it): ``try_charge_memcg`` charges a whole batch
    for the per-CPU stock (no failed attempt, memory.events ``max`` stays 0:
    :func:`memcg_charges`), a large folio's charge succeeds, so no fault falls
    back to 4K (:meth:`SwapModel.large_fault_share`), and the charge that finds
    the usage over memory.high adds its batch to
    ``current->memcg_nr_pages_over_high`` and sets TIF_NOTIFY_RESUME: the
    writer reclaims on its way back to user space
    (:func:`high_reclaim_pages`, :func:`over_high_sleep_us`)."""
    if m.memcg_high_mb is None:
        return False
    return m.memcg_high_mb < m.memcg_mb


def memcg_limit_mb(m):
    """The limit the memcg's usage is held at: ``memcg_mb`` (memory.max), or
    ``memcg_high_mb`` where it is lower (per lane)."""
    if m.memcg_high_mb is None:
        return m.memcg_mb
    return minimum(m.memcg_mb, m.memcg_high_mb)


def high_reclaim_pages(m, kb: int) -> int:
    """Pages one return to user space reclaims over memory.high after a charge
    of a ``kb`` KiB folio: ``mem_cgroup_handle_over_high`` -> ``reclaim_high``
    -> ``try_to_free_mem_cgroup_pages(memcg, nr_pages)``, which reclaims at
    least ``max(nr_pages, SWAP_CLUSTER_MAX)``, where ``nr_pages`` is what the
    charges since the last return added to ``memcg_nr_pages_over_high``: the
    charge's batch, ``max(MEMCG_CHARGE_BATCH, folio pages)`` (a charge below
    the batch is served by the stock and checks nothing; the refill is what
    finds the usage over memory.high). So a 4K writer reclaims 64 pages (32
    before v6.1, 1813e51eece0) per 64 pages written, a 2M THP's fault 512.
    The same amount since memory.high came in: v4.0 (241994ed8649) reclaimed
    ``nr_pages`` in ``try_charge`` itself (a 4K charge: SWAP_CLUSTER_MAX = 32,
    the batch of the time), b23afb93d317 ("memcg: punt high overage
    reclaim to return-to-userland path", Tejun Heo, August 2015; in the mm
    tree on top of v4.3, so v4.4: the release not read off a tree) moved it
    to the return to user space, Vladimir Davydov's 2016 fix reclaims the whole batch
    charged (the same 32 for a 4K charge), and from c9afe31ec443 ("memcg:
    synchronously enforce memory.high for large overcharges", Shakeel Butt,
    2022) an overcharge above MEMCG_CHARGE_BATCH (a THP's) is reclaimed in the
    charge: the same task and amount either way."""
    batch = int(m.switch("memcg_charge_batch"))
    return max(batch, kb // PAGE_KB, RECLAIM_BATCH)


def calculate_high_delay(usage, high, nr_pages: int, hz: int, batch: int):
    """The kernel's ``calculate_high_delay`` (mm/memcontrol.c, v5.4 on:
    0e4b01df8659; split into ``calculate_overage`` by the swap.high series of
    v5.8), in jiffies, in its integer arithmetic: with ``usage`` and ``high``
    in pages (ints or int arrays),

    - ``overage = ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / max(high, 1)``, 0 where usage <= high;
    - ``penalty = overage * overage * HZ >> MEMCG_DELAY_PRECISION_SHIFT >> MEMCG_DELAY_SCALING_SHIFT``;
    - ``penalty * nr_pages / MEMCG_CHARGE_BATCH``: the task's own share (``nr_pages`` its pages over high).

    Every division truncates, as the kernel's u64 ones do. Overages from
    2^24 (usage 16 times high) give a penalty over any cap and are taken at
    2^24: the capped sleep is the same, the kernel's u64 wraparound from
    usage about 128 times high is not reproduced."""
    usage = np.asarray(usage, dtype=np.int64)
    high = np.asarray(high, dtype=np.int64)
    over = np.maximum(usage - high, 0)
    overage = np.minimum((over << MEMCG_DELAY_PRECISION_SHIFT) // np.maximum(high, 1), 1 << 24)
    penalty = (overage * overage * hz) >> MEMCG_DELAY_PRECISION_SHIFT >> MEMCG_DELAY_SCALING_SHIFT
    out = penalty * nr_pages // batch
    return int(out) if out.ndim == 0 else out


def high_sleep_jiffies(penalty, hz: int):
    """The sleep ``mem_cgroup_handle_over_high`` takes for a penalty (jiffies):
    capped at MEMCG_MAX_HIGH_DELAY_JIFFIES (2 s), none at or below HZ / 100
    ("not even worth doing")."""
    capped = np.minimum(penalty, MEMCG_MAX_HIGH_DELAY_S * hz)
    out = np.where(capped <= hz // 100, 0, capped)
    return int(out) if np.ndim(out) == 0 else out


def over_high_sleep_us(m, busy, kib):
    """Expected throttling sleep per folio swapped (us), off-CPU, for writers
    held at memory.high that spend a share ``busy`` of their time between a
    charge over memory.high and the end of its reclaim (per lane), swapping
    ``kib`` KiB per folio.

    Each writer reclaims what it charges before it writes on
    (:func:`high_reclaim_pages`), so reclaim keeps up with its own
    allocations; what is still over memory.high when it checks (after its
    ``reclaim_high``: ``mem_find_max_overage``) is the batches the other k - 1
    writers of its memcg have charged and not yet reclaimed. Each is in that
    window a share ``busy`` of its time, independently: J ~ Binomial(k - 1,
    busy) of them, b pages each (the batch), over a usage the writer's own
    reclaim left uniformly within one batch below memory.high (a refill
    crosses high by at most a batch, the reclaim takes a batch back): the
    overage is J b - u, u uniform on 0 .. b - 1. The sleep is
    :func:`calculate_high_delay` of it with ``nr_pages`` = b,
    :func:`high_sleep_jiffies` of that, in seconds at CONFIG_HZ
    (``config_hz``); one such check per :func:`high_reclaim_pages` pages
    swapped.

    By era (``memcg_high_throttle``): before v5.4 no sleep; v5.4-v5.7
    (0e4b01df8659) the sleep after one reclaim pass, as above; from v5.8
    (b3ff92916af3) the writer reclaims again while its passes reclaim anything
    and sleeps only after MAX_RECLAIM_RETRIES passes that reclaimed nothing,
    which a writer whose memcg can swap does not meet: no sleep (its extra
    passes take pages the other writers would have reclaimed themselves: the
    same reclaim per page swapped). A memcg that cannot reclaim (no swap,
    a full device) is not modelled. No measurement on this project's machine
    checks it: its guest runs cgroup v1, which has no memory.high."""
    if m.memcg_high_mb is None or m.switch("memcg_high_throttle") != "after_reclaim":
        return 0.0
    governs = high_governs(m)
    if not any_of(governs):
        return 0.0
    from scipy.stats import binom  # here, not at import: mmcost.swap stays quick to import

    hz = int(m.config_hz)
    batch = int(m.switch("memcg_charge_batch"))
    b = max(batch, m.folio_kb // PAGE_KB)
    others = max(0, int(round(memcg_writers(m))) - 1)
    lanes_high = np.atleast_1d(np.floor(np.asarray(m.memcg_high_mb, dtype=float) * 256)).astype(np.int64)
    j = np.arange(others + 1)
    u = np.arange(b)
    over = j[:, None] * b - u[None, :]  # (J, U) pages over high
    pen = calculate_high_delay(lanes_high[:, None, None] + over[None], lanes_high[:, None, None], b, hz, batch)
    sleep_s = high_sleep_jiffies(pen, hz).mean(axis=2) / hz  # (lanes, J): mean over u
    pmf = binom.pmf(j[None, :], others, np.atleast_1d(np.asarray(busy, dtype=float))[:, None])
    per_check_us = (pmf * sleep_s).sum(axis=1) * 1e6
    per_folio = per_check_us * (np.asarray(kib, dtype=float) / PAGE_KB) / high_reclaim_pages(m, m.folio_kb)
    out = np.where(governs, per_folio, 0.0)
    return float(out[0]) if lane_count(m) is None else np.broadcast_to(out, (lane_count(m),)).copy()


def high_events_per_swapped_page(m):
    """memory.events ``high`` per page swapped (cgroup v2): ``reclaim_high``
    counts MEMCG_HIGH once per pass that finds the memcg over memory.high,
    one pass per :func:`high_reclaim_pages` pages in the steady state (the
    v5.8 retries of a writer that finds others' batches over it, and the
    checks that find the usage already back under, are not counted); 0 where
    memory.high does not hold the memcg."""
    if m.memcg_high_mb is None:
        return 0.0
    return where(high_governs(m), 1.0 / high_reclaim_pages(m, m.folio_kb), 0.0)


def on_pcp(m, pages: int) -> bool:
    """Whether the per-CPU page lists serve a folio of ``pages`` pages:
    order 0 always; orders 1-3 (up to PAGE_ALLOC_COSTLY_ORDER) and the
    pageblock order (PMD THP) from v5.13 (``pcp_high_order``). Any other
    order (a 64K-1M mTHP) is allocated and freed in the buddy allocator
    under ``zone->lock`` every time (``rmqueue_buddy``, ``free_one_page``)."""
    order = pages.bit_length() - 1
    if order == 0:
        return True
    return bool(m.switch("pcp_high_order")) and (order <= 3 or pages * PAGE_KB == PMD_KB)


# --- the LRU scan: who finds the folio, how often, under which lock ---------------------------------
def lru_lock_partitions(m) -> int:
    """LRU locks the writers spread over: a lruvec's per memcg and node from
    v5.11, a node's (or a zone's) before (``lru_lock_scope``)."""
    return m.nodes * (m.memcgs if m.switch("lru_lock_scope") == "lruvec" else 1)


def scans_per_folio(m) -> tuple[float, float, float]:
    """(rmap walks, scans under the LRU lock, young PTE clears as a share of
    the folio's entries) per folio reclaimed, with ``referenced_share`` r of
    the folios young when reclaim first reaches them (usemem: every one).

    Classic LRU (``lru_gen`` False), v5.9 on (``anon_lru_start``
    "inactive": "mm/vmscan: protect the workingset on anonymous LRU", Joonsoo
    Kim, adds new anon folios to the inactive list): ``shrink_inactive_list``
    isolates the folio and ``shrink_folio_list`` -> ``folio_check_references``
    -> ``folio_referenced`` walks its rmap; a young PTE is cleared
    (``folio_referenced_one`` -> ``ptep_clear_flush_young_notify``), the folio
    marked referenced and kept (FOLIOREF_KEEP) and put back on the list; on the
    next pass it is old and reclaimed: 1 + r walks and scans. Before v5.9 a new
    anon folio starts on the active list: ``shrink_active_list`` isolates it,
    clears its young bits (``folio_referenced``) and deactivates every anon
    folio, then ``shrink_inactive_list`` reclaims it: 2 walks and scans.

    MGLRU (``lru_gen``, CONFIG_LRU_GEN from v6.1: ``evict_folios``): the aging
    walk (``walk_mm`` -> ``walk_pte_range``) clears the young bits in the page
    tables without an rmap walk and promotes the folio's generation; eviction's
    ``scan_folios`` -> ``sort_folio`` moves a promoted folio under the lock
    (a scan) and takes it on a later pass, whose ``shrink_folio_list`` walks
    the rmap once and finds it old: 1 walk, 1 + r scans."""
    r = m.referenced_share
    if m.switch("lru_gen"):
        return 1.0, 1.0 + r, r
    if m.switch("anon_lru_start") == "active":
        return 2.0, 2.0, r
    return 1.0 + r, 1.0 + r, r


def lru_scan(m, pages: int, entries: int, tails: int = 0) -> dict:
    """The LRU side of reclaiming one folio of ``pages`` pages mapped by
    ``entries`` translations (a PMD-mapped THP: 1), and ``tails`` 4K folios a
    split leaves on the list (each checked once more, old): the reclaimer's
    CPU (``cpu``), the holds of the LRU lock on the reclaim side (``lru``, per
    folio reclaimed) and on the fault side (``lru_fault``, per folio written),
    (the young-bit clears' TLBIs are :func:`young_flush`'s).

    Lock holds: ``lru_hold_us_per_folio`` per folio per scan (isolation, a
    kept folio's putback) and, per acquisition, the lines the last holder
    moved (``lru_line_us``, paid when another writer held it last: (n - 1)/n of
    the time with n sharers). Classic reclaim takes the lock twice per
    ``shrink_inactive_list`` call, ``isolate_lru_folios`` of SWAP_CLUSTER_MAX
    pages' worth of folios and ``move_folios_to_lru`` of what it kept (mm/vmscan.c);
    MGLRU's ``evict_folios`` the same around batches of MIN_LRU_BATCH pages
    isolated, a promoted folio sorted (``sort_folio``) inside the hold that
    isolates a batch (``scan_folios`` counts the isolated ones): two
    acquisitions per batch evicted.
    The fault adds each folio through the per-CPU ``lru_add`` folio_batch
    (``folio_add_lru``, mm/swap.c), which ``folio_batch_move_lru`` empties under
    the lock once per ``lru_add_batch`` folios (PAGEVEC_SIZE 15, 31 from v6.10;
    14 before v4.15's pagevec rework, not resolved) or at once for a large folio.

    The young-bit clears' TLBIs (arm64) are :func:`young_flush`'s."""
    walks, scans, young = scans_per_folio(m)
    mglru = bool(m.switch("lru_gen"))
    per_hold = max(1, (MGLRU_BATCH if mglru else RECLAIM_BATCH) // pages)  # folios per isolation
    moved = moved_share(m, lru_lock_partitions(m)) * m.lru_line_us
    # rmap walks: one set-up each and one PTE test per entry; MGLRU's aging tests the young ones in the tables
    cpu = walks * (m.reference_us_per_folio + entries * m.reference_us_per_page)
    if mglru:
        cpu = cpu + young * entries * m.reference_us_per_page
    cpu = cpu + tails * (m.reference_us_per_folio + m.reference_us_per_page)
    # two acquisitions per pass (isolate, put back); the putback re-adds the kept folios (scans beyond the last).
    # MGLRU's scan_folios sorts a promoted folio within the hold that isolates the batch (it stops at
    # MIN_LRU_BATCH isolated, not scanned): two acquisitions per batch evicted, whatever was promoted
    taken = 2 * (1.0 if mglru else scans) / per_hold
    lru = scans * m.lru_hold_us_per_folio + taken * moved
    if not mglru:
        lru = lru + (scans - 1) * m.lru_hold_us_per_folio
    batch = m.switch("lru_add_batch") if pages == 1 else 1
    # (and how often each side takes the lock: per isolation batch twice a pass, per folio_batch once)
    return dict(cpu=cpu, lru=lru, lru_fault=m.lru_hold_us_per_folio + moved / batch, n_lru=taken,
                n_lru_fault=1.0 / batch)


def stats_line_us(m, writes: float) -> float:
    """Reclaimer CPU for ``writes`` writes to ``swap_cache_info``, the
    global statistics line of mm/swap_state.c (``add_total`` at
    ``__add_to_swap_cache``, ``del_total`` at ``__delete_from_swap_cache``:
    INC_CACHE_INFO, a plain increment, per page; ADD_CACHE_INFO once per
    folio from the THP series, v4.13), which every swapping CPU writes: with
    n of them at it, the last writer was another CPU (n - 1)/n of the time
    and the line comes from its cache (``lock_line_us``). Only where the swap
    cache's lock is no station (the 64 MiB trunks of v4.11 on): under the
    global tree lock of v4.10 and before it moves with the lock, in
    :data:`TREE_LOCK_LINES`. Gone in v6.0 (``swap_cache_stats``: "mm/swap:
    remove swap_cache_info statistics", whose message names this
    contention)."""
    if not m.switch("swap_cache_stats") or m.switch("swapcache_lock_partitions"):
        return 0.0
    return writes * moved_share(m) * m.lock_line_us


def unbacked_touch_us(m, kb: int) -> float:
    """The host's part of a large folio's first touch in a guest, averaged over
    the folios written: ``host_touch_us_per_page`` per 4 KiB page for the
    share ``unbacked_share`` of the large folios faulted before the memcg's limit
    starts recycling memory (all of them without a limit; under a limit the
    THPs written are the limit's worth and those that still fit after it,
    :meth:`~mmcost.swap.SwapModel.large_fault_share`).

    Free page reporting (mm/page_reporting.c, 36e66c554b5c, v5.7; virtio-balloon's
    VIRTIO_BALLOON_F_REPORTING, b0c504f15471) hands free blocks of at least
    ``page_reporting_order`` pages to the host, which drops their backing; the
    guest's next touch of such memory is an EPT violation and a host fault per
    host page, inside ``folio_zero_user``'s ``clear_page``. Measured on this
    project's KVM guests (6.18, reporting order 11 on the command line;
    ``mmcost-probe firsttouch``): a fresh 2M THP's first touch 4.5-6.5 ms
    against 0.2 ms for one that reuses memory freed a moment before; a large
    folio of any size is cut from a free block of its order or above, which
    may be one the host took back (the warm-up before a 64K run right after a
    4K one found 75% of its 64K folios' memory unbacked; before another, none),
    while 4K pages come from the per-CPU lists and the small blocks reclaim
    keeps freeing (1.7-2.0 us a fault in every state tried). Faults after the
    limit reuse what reclaim has just freed (backed)."""
    if kb == PAGE_KB or not any_of(m.unbacked_share > 0):
        return 0.0
    large = m.written_bytes * m.large_fault_share()  # (after the limit most large charges fail: 4K faults)
    fresh = 1.0 if m.memcg_mb is None else minimum(1.0, memcg_limit_mb(m) * 2**20 * m.memcgs / large)
    return fresh * m.unbacked_share * (kb // PAGE_KB) * m.host_touch_us_per_page


def swap_out(m, kb: int, whole: bool, by_kswapd: bool = False, dirty: bool = True) -> dict[str, float]:
    """Swap out one folio of ``kb`` KiB, ``whole`` or split to 4K first, by a
    direct reclaimer or by kswapd: the fault that wrote it (keys of
    :data:`PER_WRITTEN`) and ``shrink_folio_list``'s work, in :data:`HOLDS`'s units.
    ``dirty``: its PTEs are dirty (it was written since it was mapped), so
    the unmap's flush is done before ``pageout()`` one folio at a time
    (``try_to_unmap_flush_dirty``: ``set_tlb_ubc_flush_pending`` marks the
    batch writable for a dirty PTE, mm/rmap.c); a folio only read since
    it was swapped in has clean PTEs and its flush waits for the batch."""
    pages = kb // PAGE_KB
    entries = 1 if kb == PMD_KB else pages  # translations faulted: a 2M THP is one PMD
    walk_us = m.walk_ns * 1e-3 * (m.nested_walk_factor if m.virtualized else 1.0)
    per_folio_flush = bool(m.switch("flush_dirty_before_pageout")) and dirty
    batched = bool(m.switch("batched_unmap_flush"))
    slot_cache = bool(m.switch("slot_cache"))
    si_era = m.switch("swap_alloc_lock") == "si_lock"
    hold = slot_hold_us(m)
    units = 1 if whole else pages  # folios entering the swap cache, slot allocations, I/Os
    if whole and pages > 1:  # one contiguous allocation for the folio
        calls, slot = 1.0, hold + pages * m.slot_us_per_slot
    else:  # per page: one si->lock per 64-slot cache refill, else one per page
        calls = pages / SLOT_CACHE_BATCH if slot_cache else float(pages)
        slot = calls * hold + pages * m.slot_us_per_slot
    cache = units * m.swapcache_us_per_folio + pages * m.swapcache_us_per_page
    # where the swap cache's tree lock is a contended station (one per device, to v4.10), each hold also
    # moves the lines the previous holder wrote (TREE_LOCK_LINES), once per folio inserted or removed
    moved = units * tree_lock_line_us(m)
    charge_fault, charge_out = memcg_charges(m, pages, units)
    buddy = 0.0 if on_pcp(m, pages) else zone_hold_us(m)  # the folio's alloc and free
    # swap_map count operations under si->lock before v4.11 (swap_map_lock): one swap_duplicate per PTE
    # unmapped (a 2M THP's PMD is split to PTEs first), one page_swapcount per swap_writepage, one
    # swapcache_free per entry leaving the swap cache
    map_holds = (pages, units, pages) if m.switch("swap_map_lock") == "si_lock" else (0, 0, 0)
    map_hold = swap_map_hold_us(m)
    # the LRU side (lru_scan): a split folio is scanned whole, then each 4K tail once more
    scan = lru_scan(m, pages, entries, 0 if whole else pages - 1)
    # (the fault's measured cost includes folio_add_lru's list work, which is now a hold of the LRU lock)
    d = {"fault": maximum(m.fault_us_per_folio - m.lru_hold_us_per_folio, 0.0) + zero_us(m, pages)
                  + pages * m.user_us_per_page
                  + entries * (m.pte_us + walk_us) + unbacked_touch_us(m, kb),
         "lru_fault": scan["lru_fault"], "lru": scan["lru"], "slot": slot,
         "avail": calls * avail_hold_us(m) if si_era else 0.0,  # get_swap_pages' swap_avail_lock
         "memcg_fault": charge_fault * m.memcg_charge_hold_us,
         "memcg": charge_out * m.memcg_charge_hold_us,
         "zone_fault": buddy, "zone": buddy if whole else 0.0,  # a split folio is freed as 4K pages
         "cache_insert": cache / 2 + TREE_LOCK_LINES["__add_to_swap_cache"] * moved,
         "cache_delete": cache / 2 + TREE_LOCK_LINES["__remove_mapping"] * moved,
         # per writeback-tag site (both move as many lines): its tag walks and its lines
         "tags": (units * m.tag_hold_us_per_page + TREE_LOCK_LINES["__test_set_page_writeback"] * moved
                  if m.switch("writeback_tags") else 0.0),
         "map_dup": map_holds[0] * map_hold, "map_count": map_holds[1] * map_hold,
         "map_free": map_holds[2] * map_hold,
         "dram_fault": 4096.0 * pages,
         # how often each of those locks is taken (COUNTED): per allocation call, per folio entering and
         # leaving the swap cache (each tag site once a folio), per PTE, per writeback and per entry freed
         "n:lru": scan["n_lru"], "n:lru_fault": scan["n_lru_fault"], "n:slot": calls, "n:avail": calls, "n:cache_insert": float(units), "n:cache_delete": float(units),
         "n:tags": float(units), "n:map_dup": float(pages), "n:map_count": float(units), "n:map_free": float(pages)}

    def flushes(n_entries, folios):  # flush rounds per folio and their cost
        if not batched:  # one flush per PTE as it is cleared (ptep_clear_flush)
            one = flush(m, 1, 1, False, by_kswapd)
            return {k: x * n_entries for k, x in one.items()}
        group = 1 if per_folio_flush else RECLAIM_BATCH
        one = flush(m, n_entries * group, folios * group, True, by_kswapd)
        return {k: x / group for k, x in one.items()}

    if whole:
        dev = store(m, pages)
        reclaim = m.reclaim_us_per_folio + pages * (m.reclaim_us_per_page + m.pte_us) + dev["cpu"]
        sync = dict(sender=0.0, targets=0.0, tlbis=0.0, shootdowns=0.0, dsbs=0.0)
        if kb == PMD_KB:
            # shrink_folio_list passes TTU_SPLIT_HUGE_PMD for a PMD-mappable folio (v4.5 on): try_to_unmap
            # splits the PMD (pmdp_invalidate: a synchronous flush of the range; 512 PTEs written), then
            # unmaps and invalidates every PTE like a PTE-mapped folio's
            sync = flush(m, 1, 1, False, by_kswapd)
            reclaim += pages * m.pte_us
        fl = flushes(pages, 1)
        d["reclaim"] = reclaim + fl["sender"] + sync["sender"] + scan["cpu"] + stats_line_us(m, 2)
        d["targets"] = fl["targets"] + sync["targets"]
        d["tlbis"], d["shootdowns"] = fl["tlbis"] + sync["tlbis"], fl["shootdowns"] + sync["shootdowns"]
        d["dsbs"] = fl["dsbs"] + sync["dsbs"]
        d.update(device=dev["device"], zs=dev["zs"], brd_xa=dev["brd_xa"], dram=dev["dram"])
    else:  # split: unmap + remap every PTE, then the 4K path per page
        dev = store(m, 1)
        if kb == PMD_KB:  # the PMD to migration entries: one flush of its range (split_pmd_thp)
            split, walks = split_pmd_thp(m, pages, by_kswapd)
        else:
            split, walks = split_pte_flush(m, pages, by_kswapd), 0.0
        if kb == PMD_KB and batched and not m.switch("split_remap_dirty"):
            # its pages mapped back clean: their unmaps defer one flush to the end of the list
            # (try_to_unmap_flush), one a THP, which fills an isolation batch alone
            fl = {k: x / pages for k, x in flush(m, pages, 1, True, by_kswapd).items()}
        else:
            fl = flushes(1, 1)
        split_cpu, split_lru = split_work(m, pages)
        d["reclaim"] = (split_cpu + split["sender"] + walks * m.reference_us_per_folio
                        + stats_line_us(m, 2 * pages)
                        + pages * (m.reclaim_us_per_folio + m.reclaim_us_per_page + m.pte_us + dev["cpu"]
                                   + fl["sender"]) + scan["cpu"])
        d["targets"] = split["targets"] + pages * fl["targets"]
        d["lru"] = d["lru"] + split_lru  # (not +=: a lane's field)
        d["n:lru"] = d["n:lru"] + 1.0  # the split holds it once for every tail
        d["tlbis"] = split["tlbis"] + pages * fl["tlbis"]
        d["shootdowns"] = split["shootdowns"] + pages * fl["shootdowns"]
        d["dsbs"] = split["dsbs"] + pages * fl["dsbs"]
        d.update({k: pages * dev[k] for k in ("device", "zs", "brd_xa", "dram")})
    young = young_flush(m, kb)  # (arm64: the reference check that found the folio young)
    if any_of(young["tlbis"] > 0):
        d["reclaim"] = d["reclaim"] + young["sender"]
        d["tlbis"], d["dsbs"] = d["tlbis"] + young["tlbis"], d["dsbs"] + young["dsbs"]
    unfold = contpte_unfold(m, kb)  # (arm64 v6.9: the folio's contiguous blocks, at its first unmap)
    if any_of(unfold["dsbs"] > 0):
        d["reclaim"] = d["reclaim"] + unfold["sender"]
        d["tlbis"], d["dsbs"] = d["tlbis"] + unfold["tlbis"], d["dsbs"] + unfold["dsbs"]
    return d


def madvise_pageout_us(m, kb: int) -> float:
    """The caller's time to swap out one folio of ``kb`` KiB by
    ``madvise(MADV_PAGEOUT)``, alone on the machine (what ``mmcost-probe
    swapin`` times): ``madvise_cold_or_pageout_pte_range`` isolates the folio
    (``folio_isolate_lru``: one hold of the LRU lock) and ``reclaim_pages`` ->
    ``reclaim_folio_list`` runs ``shrink_folio_list`` with ignore_references
    (no rmap walk for young bits: "mm: madvise: pageout: ignore references
    rather than clearing young", 2024; 6.18 has it), then :func:`swap_out`'s reclaim
    side whole: the unmap, the swap slot and cache, the device's write, the
    free. Every ``us`` key of :data:`HOLDS` on the reclaim side, but no LRU
    scan, no remote CPU's time and no refill walks after the flush (the
    task touches its pages again only after the call returns). ``m`` a
    SwapModel as configured (this scales it: ``at_kernel_speed``)."""
    m = m.set(refill_pages_per_full_flush=0.0).at_kernel_speed()
    pages = kb // PAGE_KB
    d = swap_out(m, kb, whole=True, dirty=True)
    scan = lru_scan(m, pages, 1 if kb == PMD_KB else pages)
    own = [k for k, (unit, _) in HOLDS.items() if unit == "us" and k not in PER_WRITTEN and k != "targets" and k in d]
    return sum(d[k] for k in own) - scan["cpu"] - d["lru"] + m.lru_hold_us_per_folio


def split_work(m, pages: int):
    """(CPU outside any lock, hold of the lruvec lock) of splitting an
    anonymous large folio of ``pages`` pages to 4K, besides its flush
    (:func:`split_pmd_thp`, :func:`split_pte_flush`) and the extra rmap walks
    of v4.6-v4.10: ``split_us_per_folio`` + ``pages`` x ``split_us_per_page``,
    both measured on 6.18 (``kvm_6_18_thp_split``, :func:`mmcost.swap.model._split_costs`).
    Per folio: ``unmap_folio``'s one rmap walk under the anon_vma write lock
    (held across the split), the refcount freeze, the deferred-split queue,
    the lruvec lock's acquisition. Per page (``__split_huge_page`` /
    ``__split_unmapped_folio`` and ``remap_page``, mm/huge_memory.c): the
    tail's struct page, its migration entry and its PTE mapped back, and
    ``remap_page``'s ``remove_migration_ptes`` for its new folio, an rmap
    walk with the anon_vma already locked (RMP_LOCKED; ``unfreeze_page``'s
    per-subpage walk on v4.x; from v6.12 it also compares each page with the
    zero page, RMP_USE_SHARED_ZEROPAGE, which the measured data end at their
    first word). Of that, the lruvec lock holds
    ``split_locked_us_per_page`` (at most all of it): what
    ``__split_huge_page`` does under ``folio_lruvec_lock`` per tail,
    ``__split_huge_page_tail``'s struct page writes and its LRU add. Before
    the measurement the model charged ``split_us_per_page`` (a guess, 0.5
    us) all under the lock and each remap walk as a reference check's walk
    (``reference_us_per_folio``, for a PMD THP only)."""
    lru = pages * minimum(m.split_locked_us_per_page, m.split_us_per_page)
    return m.split_us_per_folio + pages * m.split_us_per_page - lru, lru


def split_pte_flush(m, pages: int, by_kswapd: bool = False) -> dict:
    """The flush of splitting a PTE-mapped large folio of ``pages`` pages:
    ``unmap_folio`` -> ``try_to_migrate`` turns each PTE into a migration
    entry, with one batched flush for all of them from 3027c6f8eb9d (v6.8,
    ``batched_split_flush``: TTU_BATCH_FLUSH) where reclaim batches its
    flushes, else ``ptep_clear_flush`` per PTE."""
    if m.switch("batched_unmap_flush") and m.switch("batched_split_flush"):
        return flush(m, pages, 1, True, by_kswapd)
    return {k: x * pages for k, x in flush(m, 1, 1, False, by_kswapd).items()}


def split_pmd_thp(m, pages: int, by_kswapd: bool = False) -> tuple[dict, float]:
    """The flush of splitting a PMD-mapped THP of ``pages`` pages, and the
    rmap walks it takes beyond :func:`split_work`'s
    (``split_huge_page_to_list``, mm/huge_memory.c, from v4.6's
    freeze_page/unfreeze_page on the generic rmap walkers):

    - ``freeze_page`` (``unmap_page`` from v4.18, ``unmap_folio`` later):
      ``try_to_unmap`` of the head with TTU_SPLIT_HUGE_PMD | TTU_MIGRATION ->
      ``split_huge_pmd_address(freeze = true)``: the PMD becomes migration
      entries directly, with one ``pmdp_invalidate`` (``flush_tlb_range`` of
      the 2M range, synchronous: over ``tlb_single_page_flush_ceiling`` a
      full flush on x86; on arm64 one TLBI at the PMD's stride and a DSB);
      no PTE is present, so nothing is flushed per page (the
      per-PTE ``ptep_clear_flush`` that 3027c6f8eb9d, v6.8, batched is a
      PTE-mapped folio's). One rmap walk (:func:`split_work`'s per-folio
      part), and from v4.6 to v4.10 one more per tail page
      (``try_to_unmap(page + i)``, each finding the migration entry:
      ``freeze_walk_once``, c7ab0d2fdc84, v4.11), each charged
      ``reference_us_per_folio`` (an rmap walk's set-up; with TTU_RMAP_LOCKED
      it skips the anon_vma lock, so this is an upper bound);
    - ``unfreeze_page`` (``remap_page`` from v5.x): ``remove_migration_ptes``
      once per subpage (:func:`split_work`'s per-page part).
      ``remove_migration_pte`` maps each page back old and, before
      2e3468778dbe (v6.0, ``split_remap_dirty``), clean
      (``pte_mkold(mk_pte())``; ``__split_huge_pmd_locked`` moved the PMD's
      dirty bit to PG_dirty), so the subpages' unmaps ask for no flush before
      their pageout: :func:`swap_out` charges one batched flush for the list.

    Before this was written the model charged a PMD THP's split as a
    PTE-mapped folio's, 512 synchronous flushes, and then one flush per
    subpage before its pageout: 1024 flush rounds a THP where v4.8-v5.19
    take 2 (tests/test_swap_pmd_split.py counts them per kernel).

    Returns (the flush's holds, the extra walks)."""
    if m.arch == "arm64":  # flush_pmd_tlb_range: one TLBI at the PMD's stride and a DSB (as young_flush's)
        sync = dvm_flush(m, 1.0, 1.0)
    else:
        sync = flush(m, pages, 1, False, by_kswapd)
    return sync, 0.0 if m.switch("freeze_walk_once") else float(pages - 1)


def madvise_split_pageout_us(m, kb: int) -> float:
    """The caller's time in ``madvise(MADV_PAGEOUT)`` for one large folio of
    ``kb`` KiB whose last 4K page is not mapped (what
    ``kvm_6_18_thp_split``'s 'split first' runs time, v6.9 on; before, it
    split every PTE-mapped large folio): ``madvise_cold_or_pageout_pte_range``
    finds fewer PTEs than the folio has pages and splits it (``split_folio``: :func:`split_work` and
    :func:`split_pte_flush`: the PMD was split when the page was zapped),
    then reclaims each mapped page as a 4K folio (:func:`madvise_pageout_us`)."""
    pages = kb // PAGE_KB
    k = m.set(refill_pages_per_full_flush=0.0).at_kernel_speed()
    cpu, lru = split_work(k, pages)
    return cpu + lru + split_pte_flush(k, pages)["sender"] + (pages - 1) * madvise_pageout_us(m, PAGE_KB)


def delay_split(m, split: dict, pages: int) -> dict[str, float]:
    """The holds of a PMD THP swapped out as v4.13 does it
    (``thp_swap_delay_split``, 38d8b4e6bdc8), from its split path's
    ``split`` (:func:`swap_out` with ``whole=False``): ``add_to_swap`` runs
    once on the THP, then ``split_huge_page_to_list`` splits it and its 4K
    pages go through the rest of ``shrink_page_list`` (unmap, ``pageout``,
    ``__remove_mapping``) one by one, as before. So, per THP:

    - one slot allocation for its ``pages`` slots (``get_swap_page`` ->
      ``get_huge_swap_page`` -> ``swap_alloc_cluster`` under ``si->lock``,
      one ``swap_avail_lock`` walk where the era has it) instead of one per
      page (or per slot-cache refill);
    - one swap cache insert (``__add_to_swap_cache`` inserts the ``pages``
      subpages under one ``tree_lock`` hold: its per-folio part and lines
      once, its per-entry part per page);
    - ``add_to_swap``'s own work once (``add_to_swap_us_per_folio``, part of
      each split page's ``reclaim_us_per_folio``);
    - the first touch of the THP's tail ``struct page`` lines moves under the
      insert's lock. They were last written when the THP was allocated
      (``prep_compound_page``); usemem's writes go through the PMD and the
      reference check reads the head, so seconds and many LLCs of data later
      they come from DRAM (``cold_line_us`` each). Split first (before
      v4.13), ``freeze_page`` touches them (``__split_huge_pmd_locked``:
      PG_dirty and ``_mapcount`` of every subpage) under the mm's own PMD
      lock, CPU work, and the insert finds them cached; delayed, the insert's
      loop (``set_page_private(page + i)`` before each ``radix_tree_insert``,
      "[RFC 08/11] mm, THP, swap: Support to add/delete THP to/from swap
      cache", as merged) touches them under the swap cache lock and the
      split finds them cached. The same time moves from the reclaimer's CPU
      (where the split path has it inside each subpage's
      ``reclaim_us_per_folio``, fitted on 4K pages whose struct page is as
      cold when reclaim isolates it) to the lock's hold: nothing changes
      where the lock is no station (v4.11's trunks); the global tree lock of
      v4.8-v4.10 holds it.

    The split itself, the swap cache removals, writeback tags and the
    ``swap_map`` counts stay per page."""
    si_era = m.switch("swap_alloc_lock") == "si_lock"
    moved = tree_lock_line_us(m)
    d = dict(split)
    d["slot"] = slot_hold_us(m) + pages * m.slot_us_per_slot
    d["avail"] = avail_hold_us(m) if si_era else 0.0
    d["n:slot"] = d["n:avail"] = d["n:cache_insert"] = 1.0  # one allocation, one insert a THP
    d["cache_insert"] = (m.swapcache_us_per_folio + pages * m.swapcache_us_per_page) / 2 \
        + TREE_LOCK_LINES["__add_to_swap_cache"] * moved
    cold = (pages - 1) * m.cold_line_us  # the tails' struct pages, first touched under the insert's lock
    d["cache_insert"] = d["cache_insert"] + cold
    # (and swap_cache_info's add_total once: ADD_CACHE_INFO(add_total, nr), stats_line_us)
    d["reclaim"] = split["reclaim"] - (pages - 1) * (m.add_to_swap_us_per_folio + stats_line_us(m, 1)) - cold
    return d


def swap_out_sized(m, kb: int, by_kswapd: bool = False, dirty: bool = True) -> dict[str, float]:
    """Swap out one folio of ``kb`` KiB as the kernel does that size: whole
    where it can, with ``contiguous_failure`` of the large ones failing their
    contiguous slot allocation and split after the failed scan; else split."""
    pages = kb // PAGE_KB
    if whole(m, kb):
        one = swap_out(m, kb, True, by_kswapd, dirty)
        f = m.contiguous_failure if pages > 1 else 0.0
        if not any_of(f != 0):
            return one
        split = swap_out(m, kb, False, by_kswapd, dirty)
        split["slot"] += slot_hold_us(m)  # the failed contiguous scan
        split["n:slot"] += 1.0
        return {k: (1 - f) * one[k] + f * split[k] for k in one}
    if kb == PMD_KB and m.switch("thp_swap_delay_split"):
        return delay_split(m, swap_out(m, kb, False, by_kswapd, dirty), pages)
    return swap_out(m, kb, False, by_kswapd, dirty)


def swap_out_mix(m, by_kswapd: bool = False, resident: bool = False) -> tuple[dict[str, float], float]:
    """Holds of the average folio swapped (the folio size and its 4K
    fallback, weighted by folios), and the KiB it holds: its reclaim side
    in the mix of what is swapped (``swapped_large_share``: reclaim takes the
    oldest folios, the large ones faulted before the limit first), its fault
    side (:data:`PER_WRITTEN`) for what is written with it, in the mix
    written (``large_fault_share``). ``resident``: the reclaim side in the
    mix the write phase left resident instead (the newest folios), which a
    read-back reclaims."""
    if m.folio_kb not in (PAGE_KB, PMD_KB) and not m.switch("anon_mthp"):
        raise ValueError(f"folio_kb={m.folio_kb}: kernel {m.kernel} has no anonymous mTHP (v6.8); "
                         "set anon_mthp=True for a patched kernel")
    written = m.large_fault_share()
    # what is swapped, or with resident what the write phase left in memory (the newest)
    swapped = m.resident_large_share() if resident else m.swapped_large_share()
    sizes = [(m.folio_kb, written, swapped)]
    if m.folio_kb > PAGE_KB and any_of(minimum(written, swapped) < 1):
        sizes.append((PAGE_KB, 1 - written, 1 - swapped))  # fallback faults got 4K folios
    # folios per KiB written and per KiB swapped, and each size's holds
    per_size = [(w / kb, v / kb, swap_out_sized(m, kb, by_kswapd)) for kb, w, v in sizes
                if any_of(w > 0) or any_of(v > 0)]
    per_swapped = sum(v for _, v, _ in per_size)
    kib = 1.0 / per_swapped  # the average folio swapped
    # the reclaim side per average folio swapped; the fault side per the kib / s KiB written with it
    d = {k: (kib * sum(w * st[k] for w, _, st in per_size) if k.removeprefix("n:") in PER_WRITTEN
             else sum(v * st[k] for _, v, st in per_size) / per_swapped) for k in per_size[0][2]}
    return d, kib


# --- exit: the writers free what they wrote ----------------------------------------------------------------
def exit_free(m) -> dict[str, float]:
    """Free one swap entry at exit (``exit_mmap`` -> ``zap_pte_range`` ->
    ``free_swap_and_cache_nr``), and the resident pages' share that comes
    with it. The entry's slot goes back under ``si->lock`` one entry at a
    time before the slot cache (``swap_entry_free`` via ``swap_info_get``:
    ``slot_free``), in 64-entry batches with it (``free_swap_slot`` ->
    ``swapcache_free_entries``, v4.11-v6.14: ``slot_free_batched``), under
    the cluster's own lock after (v6.14: a process frees its own clusters, no
    shared station). zram and zswap free the object with ``zs_free`` under
    its size class's lock (``zs_free``)."""
    s = m._swapped_share()
    resident_per_entry = (1 - s) / s
    # (at least a nanosecond an entry: costs a user set to 0 leave the exit a network that takes no time)
    work = maximum(m.swap_free_us_per_page + resident_per_entry * m.page_free_us_per_page, 1e-3)
    d = {}
    key, per_entry, taken = slot_free(m)
    if key is not None:
        d[key], d["n:" + key] = per_entry, taken
    else:
        work += m.slot_us_per_slot
    if m.swap_device in COMPRESSED:
        # with n freers a line was last written by another one (n - 1)/n of the time (Boyd-Wickizer et
        # al. 2012: a contended section's data moves with its lock)
        freers = exit_freers(m)
        moved = (freers - 1) / freers * m.free_line_us
        d["zs_free"] = m.zs_free_hold_us + moved
    d["work"] = work
    return d


def slot_free(m) -> tuple[str | None, float, float]:
    """Where one freed swap entry's slot goes back, per entry: under
    ``si->lock`` one at a time before the slot cache (``swap_entry_free``:
    key ``slot_free``), in 64-entry batches with it (``free_swap_slot`` ->
    ``swapcache_free_entries``, v4.11-v6.14: ``slot_free_batched``), the
    hold per entry and the lock's acquisitions per entry (1, or 1/64 a
    batch); (None, 0, 0) from v6.14, where the cluster's own lock frees it
    (``swap_entry_range_free`` under ``ci->lock``: CPU work)."""
    if m.switch("swap_alloc_lock") == "si_lock":
        batch = SLOT_CACHE_BATCH if m.switch("slot_cache") else 1
        return (("slot_free_batched" if batch > 1 else "slot_free"), slot_hold_us(m) / batch + m.slot_us_per_slot,
                1.0 / batch)
    return None, 0.0, 0.0


def exit_freers(m) -> int:
    """Processes freeing at once at exit (each on a CPU)."""
    return min(m.processes, m.cpus or m.processes)


# --- swap-in: a read-back faults its pages in from a synchronous device -------------------------------------
def swap_in(m, kb: int) -> dict[str, float]:
    """Swap in one folio of ``kb`` KiB (Linux 6.18 ``do_swap_page``, mm/memory.c):

    - the fault (``fault_us_per_folio``: the trap and ``handle_mm_fault``) and
      the swap cache lookup, ``swap_cache_get_folio``: from v6.18 one load of
      the cluster's swap table (``swap_table_lookup_us``), before an XArray
      walk of the 64 MiB address space (``swapcache_lookup_us``);
    - a miss on a SWP_SYNCHRONOUS_IO device whose entry has one user takes the
      bypass (v4.15-v6.19, ``swapin_skip_swapcache``; 0bcac06f27d7): the folio
      from ``alloc_swap_folio`` (mTHP from v6.12, ``swapin_mthp``),
      ``swapcache_prepare`` and later ``swapcache_clear`` set and clear
      SWAP_HAS_CACHE per entry under the cluster lock (two swap_map writes,
      ``slot_us_per_slot`` each; v6.8's 13ddaf26be32: Kairui Song measured
      its cost at 0.085 us a page, 10.93 s -> 11.16 s swapping in 10 GiB from
      zram); from phase II of the swap table (v7.0) the folio enters the
      swap cache instead (``swapin_folio``: ``cache_insert``) and leaves it
      once mapped (``folio_free_swap``: ``cache_delete``), at the swap-out
      path's swap cache costs;
    - ``mem_cgroup_swapin_charge_folio`` on the memcg counter (the per-CPU
      stock below 64 pages, as a fault's charge), the folio from the buddy
      allocator under ``zone->lock`` where the per-CPU lists do not keep its
      order, the read (:func:`mmcost.swap.devices.load`: zram's
      decompression per compressor);
    - per page: the PTE (``set_ptes``) and the retried access's walk,
      ``swapin_us_per_page`` (``folio_add_new_anon_rmap``'s per-page part,
      the swap cgroup record cleared, counters), and the slot freed by
      ``swap_free_nr`` (the entry's count to 0: ``swap_entry_range_free``,
      zram's ``swap_slot_free_notify`` -> ``zram_free_page`` -> ``zs_free``
      under the size class lock, with the lines other freers moved, as at
      exit; the slot under ``si->lock`` before v6.14, :func:`slot_free`);
    - ``folio_add_lru`` under the lruvec lock (``lru_add``), and the
      swap-in's own code once per folio (``swapin_us_per_folio``: the PTE
      lock and ``pte_same`` recheck, the folio lock, the rmap's set-up,
      ``arch_swap_restore``, the swap device reference).

    No flush: the PTEs were not present. The user's read of the pages is
    the read-back's (:func:`mmcost.swap.reclaim.readback_network`). Not
    modelled: an entry with more than one user (after fork) takes
    ``swapin_readahead`` even on zram until phase II, as every swap-in did
    before v4.15 (:class:`mmcost.swap.SwapInModel` refuses those kernels);
    usemem's private pages have one."""
    pages = kb // PAGE_KB
    walk_us = m.walk_ns * 1e-3 * (m.nested_walk_factor if m.virtualized else 1.0)
    dev = load(m, pages)
    lookup = m.swap_table_lookup_us if m.switch("swap_table") else m.swapcache_lookup_us
    key, per_entry, taken = slot_free(m)
    cpu = (m.fault_us_per_folio + m.swapin_us_per_folio + lookup + dev["cpu"]
           + pages * (m.pte_us + walk_us + m.swapin_us_per_page + m.swap_free_us_per_page))
    d = {"memcg": memcg_charges(m, pages, 0)[0] * m.memcg_charge_hold_us,
         "zone": 0.0 if on_pcp(m, pages) else zone_hold_us(m),
         "lru_add": m.lru_hold_us_per_folio, "dram": dev["dram"],
         "cache_insert": 0.0, "cache_delete": 0.0, "n:cache_insert": 0.0, "n:cache_delete": 0.0,
         "n:lru_add": 1.0 / (m.switch("lru_add_batch") if pages == 1 else 1)}  # folio_add_lru's folio_batch
    if m.switch("swapin_skip_swapcache"):
        cpu = cpu + 2 * pages * m.slot_us_per_slot  # swapcache_prepare + swapcache_clear
    else:
        cache = m.swapcache_us_per_folio + pages * m.swapcache_us_per_page
        d["cache_insert"], d["cache_delete"] = cache / 2, cache / 2
        d["n:cache_insert"] = d["n:cache_delete"] = 1.0  # the folio enters and leaves once
    if key is not None:
        d[key], d["n:" + key] = pages * per_entry, pages * taken
    else:
        cpu = cpu + pages * m.slot_us_per_slot
    if m.swap_device in COMPRESSED:
        d["zs_free"] = pages * (m.zs_free_hold_us + moved_share(m) * m.free_line_us)
    d["swapin"] = cpu
    return d


def swap_in_sizes(m) -> list[tuple[int, float]]:
    """The folio sizes a read-back faults in and each one's share of the
    folios (not of the bytes): ``folio_kb`` for the large share the kernel
    swaps in whole (:meth:`mmcost.swap.SwapInModel.large_swapin_share`),
    4K for the rest; a PMD THP comes back as 4K pages (alloc_swap_folio
    tries the orders below PMD order only)."""
    kb = m.folio_kb if m.folio_kb < PMD_KB else PAGE_KB
    share = m.large_swapin_share() if kb > PAGE_KB else 1.0
    sizes = [(kb, share)]
    if kb > PAGE_KB and any_of(share < 1):
        sizes.append((PAGE_KB, 1 - share))  # fallen back to order 0
    folios = [(size, s / size) for size, s in sizes if any_of(s > 0)]  # folios per KiB
    total = sum(w for _, w in folios)
    return [(size, w / total) for size, w in folios]


def swap_in_mix(m) -> tuple[dict[str, float], float]:
    """Holds of the average folio swapped in, and the KiB it holds."""
    per_size = [(w, kb, swap_in(m, kb)) for kb, w in swap_in_sizes(m)]
    d = {k: sum(w * st[k] for w, _, st in per_size) for k in per_size[0][2]}
    return d, sum(w * kb for w, kb, _ in per_size)


#: the paths a model's solve runs: name -> function (the network of each is built by mmcost.swap.stations)
PATHS = {"swap_out": swap_out_mix, "exit_free": exit_free, "swap_in": swap_in_mix}
