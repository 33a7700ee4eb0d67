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
- :func:`exit_free`: one swap entry freed at exit (``zap_pte_range`` ->
  ``free_swap_and_cache_nr``).
"""

from __future__ import annotations

from ..lanes import any_of, maximum
from ..tlb import flush_targets
from .constants import MEMCG_CHARGE_BATCH, MGLRU_BATCH, PAGE_KB, PMD_KB, RECLAIM_BATCH, SLOT_CACHE_BATCH
from .devices import COMPRESSED, store, zero_us

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
    "shootdowns": ("count", "remote CPUs flushed (a counter, no station)"),
    "tlbis_nosync": ("count", "broadcast TLBIs without a DSB of reclaim's young-bit clears (arm64 "
                              "ptep_clear_flush_young; a counter, no station: see lru_scan)"),
    "zs": ("us", "under a zsmalloc size class lock (zs_malloc)"),
    "brd_xa": ("us", "under brd's page-tree lock (brd_insert_page)"),
    "device": ("us", "at the block device (service per I/O: size / bandwidth or latency / depth)"),
    "dram_fault": ("bytes", "DRAM traffic per folio written (clear_page)"),
    "dram": ("bytes", "DRAM traffic per folio swapped (copy, compression, DMA)"),
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


def flush(m, entries: int, folios: float, batched: bool, by_kswapd: bool = False) -> dict:
    """One flush round for ``entries`` unmapped translations of ``folios``
    folios: the sender's CPU time, the targets' CPU time (us), shootdowns,
    broadcast TLBIs (arm64). x86 ``arch_tlbbatch_flush`` is a full flush;
    an unbatched flush (``ptep_clear_flush``) INVLPGs up to the ceiling.
    arm64's DSB ISH waits for every CPU of the domain to complete the
    TLBIs, so it grows with ``domain_cpus``."""
    walk_us = m.walk_ns * 1e-3 * (m.nested_walk_factor if m.virtualized else 1.0)
    refill = m.refill_pages_per_full_flush * walk_us
    if m.arch == "arm64":
        dsb = m.dsb_us * (1.0 + m.dsb_growth_per_cpu * (m.domain_cpus - 1))
        return dict(sender=dsb, targets=0.0, shootdowns=0.0, tlbis=float(entries))
    full = batched or entries > 33  # tlb_single_page_flush_ceiling
    local = m.full_flush_us + refill if full else entries * m.invlpg_us
    t = targets(m, folios, by_kswapd)
    send, receive = t * m.ipi_send_us, m.irq_us
    any_target = min(1.0, t)  # the chance a flush has a remote CPU at all (exact for one possible target)
    if m.virtualized:
        # flush_tlb_multi -> kvm_flush_tlb_multi -> kvm_send_ipi_mask: one hypercall for the whole mask with
        # PV IPIs, else an exit per ICR write; a posted interrupt reaches a running vCPU without one
        exits = any_target if m.switch("pv_ipi") else t
        send += exits * m.vm_exit_us
        receive = receive + (0.0 if m.posted_interrupts else m.vm_exit_us)  # (not +=: a lane's field)
    sender = local + send + any_target * receive  # flush_tlb_multi waits for the acknowledgements
    return dict(sender=sender, targets=t * (receive + local), shootdowns=t, tlbis=0.0)


# --- swap-out -------------------------------------------------------------------------------------------
def whole(m, kb: int) -> bool:
    """Whether the kernel swaps a folio of ``kb`` KiB out whole (else it splits it first)."""
    if kb == PAGE_KB:
        return True
    if kb == PMD_KB:
        return bool(m.switch("swap_whole_pmd_thp"))
    return bool(m.switch("swap_whole_mthp"))


def memcg_charges(m, pages: int, folios_out: int) -> tuple[float, float]:
    """page_counter updates (per folio written, per folio swapped out).
    A charge below MEMCG_CHARGE_BATCH pages comes from the per-CPU stock,
    refilled 64 pages at a time (``consume_stock`` / ``refill_stock``); a
    larger one charges the counters itself. Swap-out uncharges each folio
    leaving memory (``mem_cgroup_swapout``)."""
    if m.memcg_mb is None:
        return 0.0, 0.0
    fault = 1.0 if pages >= MEMCG_CHARGE_BATCH else pages / MEMCG_CHARGE_BATCH
    return fault, float(folios_out)


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
def lru_lock_sharers(m) -> float:
    """Writers whose faults and reclaim take one LRU lock: the running
    writers spread over the lock's instances (a lruvec per memcg and node
    from v5.11, a node's or a zone's before: ``lru_lock_scope``)."""
    parts = m.nodes * (m.memcgs if m.switch("lru_lock_scope") == "lruvec" else 1)
    return max(1.0, m.running / parts)


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
    and the broadcast TLBIs of the young-bit clears (``tlbis``).

    Lock holds: ``lru_hold_us_per_folio`` per folio per scan (isolation, a
    kept folio's putback) and, per acquisition, the lines the last holder
    moved (``lru_line_us``, paid when another writer held it last: (n - 1)/n of
    the time with n sharers). Classic reclaim takes the lock twice per
    ``shrink_inactive_list`` call, ``isolate_lru_folios`` of SWAP_CLUSTER_MAX
    pages' worth of folios and ``move_folios_to_lru`` of what it kept (mm/vmscan.c);
    MGLRU's ``evict_folios`` the same around batches of MIN_LRU_BATCH pages.
    The fault adds each folio through the per-CPU ``lru_add`` folio_batch
    (``folio_add_lru``, mm/swap.c), which ``folio_batch_move_lru`` empties under
    the lock once per ``lru_add_batch`` folios (PAGEVEC_SIZE 15, 31 from v6.10;
    14 before v4.15's pagevec rework, not resolved) or at once for a large folio.

    Young bits: x86's ``ptep_clear_flush_young`` flushes nothing ("clearing
    the accessed bit without a TLB flush doesn't cause data corruption",
    arch/x86/mm/pgtable.c); arm64's issues ``flush_tlb_page_nosync``, a
    broadcast TLBI without its DSB, for each young PTE it clears (a PMD's: one).
    MGLRU's aging walk clears them with ``ptep_test_and_clear_young``: no TLBI.
    They are counted (``tlbis_nosync``), not queued at the DVM station: that
    station charges every TLBI as if the interconnect serialised it, where
    TLBIs pipeline and the cost is the DSB that waits for them (issue 35's
    arm64 item), and this TLBI has no DSB of its own. Queued there they made
    small_thp_swapout's fit chi2 53 -> 912 (seed 000's DVM node is at
    utilisation 1.00)."""
    walks, scans, young = scans_per_folio(m)
    mglru = bool(m.switch("lru_gen"))
    per_hold = max(1, (MGLRU_BATCH if mglru else RECLAIM_BATCH) // pages)  # folios per isolation
    n = lru_lock_sharers(m)
    moved = (n - 1) / n * m.lru_line_us
    # rmap walks: one set-up each and one PTE test per entry; MGLRU's aging tests the young ones in the tables
    cpu = walks * (m.reference_us_per_folio + entries * m.reference_us_per_page)
    if mglru:
        cpu = cpu + young * entries * m.reference_us_per_page
    cpu = cpu + tails * (m.reference_us_per_folio + m.reference_us_per_page)
    # two acquisitions per pass (isolate, put back); the putback re-adds the kept folios (scans beyond the last)
    lru = scans * m.lru_hold_us_per_folio + 2 * scans / per_hold * moved
    if not mglru:
        lru = lru + (scans - 1) * m.lru_hold_us_per_folio
    batch = m.switch("lru_add_batch") if pages == 1 else 1
    tlbis = young * entries if m.arch == "arm64" and not mglru else 0.0
    return dict(cpu=cpu, lru=lru, lru_fault=m.lru_hold_us_per_folio + moved / batch, tlbis_nosync=tlbis)


def swap_out(m, kb: int, whole: bool, by_kswapd: bool = False) -> dict[str, float]:
    """Swap out one folio of ``kb`` KiB, ``whole`` or split to 4K first, by a
    direct reclaimer or by kswapd: the fault that wrote it (keys of
    :data:`PER_WRITTEN`) and ``shrink_folio_list``'s work, in :data:`HOLDS`'s units."""
    pages = kb // PAGE_KB
    entries = 1 if kb == PMD_KB else pages  # translations faulted: a 2M THP is one PMD
    walk_us = m.walk_ns * 1e-3 * (m.nested_walk_factor if m.virtualized else 1.0)
    per_folio_flush = bool(m.switch("flush_dirty_before_pageout"))
    batched = bool(m.switch("batched_unmap_flush"))
    slot_cache = bool(m.switch("slot_cache"))
    si_era = m.switch("swap_alloc_lock") == "si_lock"
    hold = m.slot_hold_us_per_acquisition
    units = 1 if whole else pages  # folios entering the swap cache, slot allocations, I/Os
    if whole and pages > 1:  # one contiguous allocation for the folio
        calls, slot = 1.0, hold + pages * m.slot_us_per_slot
    else:  # per page: one si->lock per 64-slot cache refill, else one per page
        calls = pages / SLOT_CACHE_BATCH if slot_cache else float(pages)
        slot = calls * hold + pages * m.slot_us_per_slot
    cache = units * m.swapcache_us_per_folio + pages * m.swapcache_us_per_page
    charge_fault, charge_out = memcg_charges(m, pages, units)
    buddy = 0.0 if on_pcp(m, pages) else m.zone_lock_hold_us  # the folio's alloc and free
    # swap_map count operations under si->lock before v4.11 (swap_map_lock): one swap_duplicate per PTE
    # unmapped (a 2M THP's PMD is split to PTEs first), one page_swapcount per swap_writepage, one
    # swapcache_free per entry leaving the swap cache
    map_holds = (pages, units, pages) if m.switch("swap_map_lock") == "si_lock" else (0, 0, 0)
    # the LRU side (lru_scan): a split folio is scanned whole, then each 4K tail once more
    scan = lru_scan(m, pages, entries, 0 if whole else pages - 1)
    # (the fault's measured cost includes folio_add_lru's list work, which is now a hold of the LRU lock)
    d = {"fault": maximum(m.fault_us_per_folio - m.lru_hold_us_per_folio, 0.0) + zero_us(m, pages) + pages * m.user_us_per_page
                  + entries * (m.pte_us + walk_us),
         "lru_fault": scan["lru_fault"], "lru": scan["lru"], "tlbis_nosync": scan["tlbis_nosync"], "slot": slot,
         "avail": calls * m.swap_avail_hold_us if si_era else 0.0,  # get_swap_pages' swap_avail_lock
         "memcg_fault": charge_fault * m.memcg_charge_hold_us,
         "memcg": charge_out * m.memcg_charge_hold_us,
         "zone_fault": buddy, "zone": buddy if whole else 0.0,  # a split folio is freed as 4K pages
         "cache_insert": cache / 2, "cache_delete": cache / 2,
         "tags": units * m.tag_hold_us_per_page if m.switch("writeback_tags") else 0.0,
         "map_dup": map_holds[0] * m.swap_map_hold_us, "map_count": map_holds[1] * m.swap_map_hold_us,
         "map_free": map_holds[2] * m.swap_map_hold_us,
         "dram_fault": 4096.0 * pages}

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
        sync = dict(sender=0.0, targets=0.0, tlbis=0.0, shootdowns=0.0)
        if kb == PMD_KB:
            # shrink_folio_list passes TTU_SPLIT_HUGE_PMD for a PMD-mappable folio (v4.5 on): try_to_unmap
            # splits the PMD (pmdp_invalidate: a synchronous flush of the range; 512 PTEs written), then
            # unmaps and invalidates every PTE like a PTE-mapped folio's
            sync = flush(m, 1, 1, False, by_kswapd)
            reclaim += pages * m.pte_us
        fl = flushes(pages, 1)
        d["reclaim"] = reclaim + fl["sender"] + sync["sender"] + scan["cpu"]
        d["targets"] = fl["targets"] + sync["targets"]
        d["tlbis"], d["shootdowns"] = fl["tlbis"] + sync["tlbis"], fl["shootdowns"] + sync["shootdowns"]
        d.update(device=dev["device"], zs=dev["zs"], brd_xa=dev["brd_xa"], dram=dev["dram"])
    else:  # split: unmap + remap every PTE (one flush), then the 4K path per page
        dev = store(m, 1)
        if batched and m.switch("batched_split_flush"):
            split = flush(m, pages, 1, True, by_kswapd)
        else:  # try_to_migrate without TTU_BATCH_FLUSH: ptep_clear_flush per PTE
            split = {k: x * pages for k, x in flush(m, 1, 1, False, by_kswapd).items()}
        fl = flushes(1, 1)
        d["reclaim"] = (2 * pages * m.pte_us + split["sender"]
                        + pages * (m.reclaim_us_per_folio + m.reclaim_us_per_page + m.pte_us + dev["cpu"]
                                   + fl["sender"]) + scan["cpu"])
        d["targets"] = split["targets"] + pages * fl["targets"]
        d["lru"] = d["lru"] + pages * m.split_us_per_page  # (not +=: a lane's field)
        d["tlbis"] = split["tlbis"] + pages * fl["tlbis"]
        d["shootdowns"] = split["shootdowns"] + pages * fl["shootdowns"]
        d.update({k: pages * dev[k] for k in ("device", "zs", "brd_xa", "dram")})
    return d


def swap_out_sized(m, kb: int, by_kswapd: bool = False) -> dict[str, float]:
    """Swap out one folio of ``kb`` KiB as the kernel does that size: whole
    where it can, with ``contiguous_failure`` of the large ones failing their
    contiguous slot allocation and split after the failed scan; else split."""
    pages = kb // PAGE_KB
    if whole(m, kb):
        one = swap_out(m, kb, True, by_kswapd)
        f = m.contiguous_failure if pages > 1 else 0.0
        if not any_of(f != 0):
            return one
        split = swap_out(m, kb, False, by_kswapd)
        split["slot"] += m.slot_hold_us_per_acquisition  # the failed contiguous scan
        return {k: (1 - f) * one[k] + f * split[k] for k in one}
    return swap_out(m, kb, False, by_kswapd)


def swap_out_mix(m, by_kswapd: bool = False) -> tuple[dict[str, float], float]:
    """Holds of the average folio swapped (the folio size and its 4K
    fallback, weighted by folios), and the KiB it holds."""
    if m.folio_kb not in (PAGE_KB, PMD_KB) and not m.switch("anon_mthp"):
        raise ValueError(f"folio_kb={m.folio_kb}: kernel {m.kernel} has no anonymous mTHP (v6.8); "
                         "set anon_mthp=True for a patched kernel")
    share = m.large_fault_share()
    sizes = [(m.folio_kb, share)]
    if m.folio_kb > PAGE_KB and any_of(share < 1):
        sizes.append((PAGE_KB, 1 - share))  # fallback faults got 4K folios
    folios = [(kb, s / kb) for kb, s in sizes if any_of(s > 0)]  # folios per KiB written
    total = sum(w for _, w in folios)
    per_size = [(w / total, kb, swap_out_sized(m, kb, by_kswapd)) for kb, w in folios]
    d = {k: sum(w * st[k] for w, _, st in per_size) for k in per_size[0][2]}
    return d, sum(w * kb for w, kb, _ in per_size)


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
    if m.switch("swap_alloc_lock") == "si_lock":
        batch = SLOT_CACHE_BATCH if m.switch("slot_cache") else 1
        per_entry = m.slot_hold_us_per_acquisition / batch + m.slot_us_per_slot
        d["slot_free_batched" if batch > 1 else "slot_free"] = per_entry
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


def exit_freers(m) -> int:
    """Processes freeing at once at exit (each on a CPU)."""
    return min(m.processes, m.cpus or m.processes)


#: the paths a model's solve runs: name -> function (the network of each is built by mmcost.swap.stations)
PATHS = {"swap_out": swap_out_mix, "exit_free": exit_free}
