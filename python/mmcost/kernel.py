"""The kernel changes the models' mechanisms depend on, and the switches they set.

Each :class:`Change` is one upstream change: the mechanism switch it sets, the
value before and from the release it landed in, the commit, and what it
changed on the path. :func:`features` folds the catalogue into the switch
values of one kernel version, which is what a ``kernel`` configuration column
selects; a column named like a switch still overrides it for its row.

Versions are mainline releases: ``"6.6"``, ``"v6.6-rc4"`` and
``"6.18.44-fc-v973"`` read as 6.6 and 6.18 (an -rc counts as its release,
which is what the tree has in it after the merge window). Stable trees that
backported a change (PTI reached 4.14.11, 4.9.75 and 4.4.110) are not
modelled: their version reads as mainline's, so name the backport as a patch.

A kernel with patches on top names them after ``+``, each a catalogue switch
set as the patch sets it: ``"6.6+anon_mthp+swap_whole_mthp"`` (a bool switch
named alone is True), ``"4.7+writeback_tags=false"``,
``"6.12+swap_alloc_lock=per_cluster"``. A study's kernel variants are such
strings, never pinned switch fields, so a ``kernel`` column sets every switch
its row leaves empty (:mod:`mmcost.mechanism`). Any other ``+`` text is a
local version and is ignored (``uname -r`` of a dirty tree ends in ``+``; a
Raspberry Pi kernel reads ``6.6.31+rpt-rpi-v8``), but a word within a typo of
a switch name is refused.

Commits are the mainline ids (12 hex digits) where known; a change known by
its series title only says so. The releases of 4d4b6d66db63, 4b3ef9daa4fc,
bd4c82c22c36 and PTI were read off the trees just before and at them (e.g.
``pte_accessible()`` in ``set_tlb_ubc_flush_pending``: absent from v6.3.8's
``mm/rmap.c``, present in v6.4's). Changes the models would not read are not
catalogued. The v6.18 swap table (the swap cache under the cluster lock
instead of an xarray lock; series by Kairui Song) changes no station of the
swap-out path, whose swap cache has been an uncontended lock since the v4.11
trunks and whose per-entry work is ``swapcache_us_per_page``; the swap-in
path (:class:`mmcost.swap.SwapInModel`) reads it for the swap cache lookup of
every fault.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd


@dataclass(frozen=True)
class Change:
    """One kernel change: from ``version`` on, ``switch`` is ``value`` (``before`` until then).

    ``arch`` limits it to one architecture (``x86``/``arm64``), ``""`` for all.
    ``read_by`` names the model that reads the switch."""

    switch: str
    value: object
    before: object
    version: str
    commit: str
    title: str
    effect: str
    read_by: str
    arch: str = ""


CHANGES: tuple[Change, ...] = (
    # --- reclaim unmap and its TLB flush ------------------------------------------------------
    Change("batched_unmap_flush", True, False, "4.3", "72b252aed506",
           "mm: send one IPI per CPU to TLB flush all entries after unmapping pages",
           "try_to_unmap() accumulates a cpumask and reclaim flushes once per shrink_page_list batch "
           "(arch_tlbbatch_flush: a full flush) instead of an IPI per page", "swap, tlb", arch="x86"),
    Change("flush_dirty_before_pageout", True, False, "4.3", "d950c9477d51",
           "mm: defer flush of writable TLB entries",
           "a PTE unmapped dirty may have a writable TLB entry, so shrink_folio_list() calls "
           "try_to_unmap_flush_dirty() before pageout() of every dirty folio: an anonymous folio being "
           "swapped out is flushed one folio at a time, not once per batch", "swap, tlb"),
    Change("batched_unmap_flush", True, False, "6.5", "43b3dfdd0455",
           "arm64: support batched/deferred tlb shootdown during page reclamation/migration",
           "arm64 issues the broadcast TLBI per page at unmap and waits one DSB ISH per batch "
           "(arch_tlbbatch_flush) instead of a DSB per page", "swap, tlb", arch="arm64"),
    Change("tlbi_range", True, False, "5.9", "d1d3aa98b1d4",
           "arm64: tlb: Use the TLBI RANGE feature in arm64",
           "__flush_tlb_range invalidates a range with range TLBIs (tlbi rvae1is / rvale1is, up to "
           "MAX_TLBI_RANGE_PAGES) where the CPU has FEAT_TLBIRANGE (Armv8.4, ARM64_HAS_TLB_RANGE); without it one "
           "TLBI per page, and flush_tlb_mm from MAX_TLBI_OPS (512) pages. Reclaim's per-PTE pending TLBIs "
           "(arch_tlbbatch_add_pending) are single-page either way", "swap", arch="arm64"),
    Change("contpte", True, False, "6.9", "4602e5757bcc",
           "arm64/mm: wire up PTE_CONT for user mappings (Ryan Roberts' contpte series)",
           "an aligned 64K block of a large folio mapped by one set_ptes gets the contiguous bit; the first "
           "ptep_get_and_clear of a block unfolds it (contpte_convert: clear 16 PTEs, a synchronous "
           "__flush_tlb_range of the block, rewrite them)", "swap", arch="arm64"),
    Change("skip_inaccessible", True, False, "6.4", "4d4b6d66db63",
           "mm,unmap: avoid flushing TLB in batch if PTE is inaccessible",
           "set_tlb_ubc_flush_pending() returns early when !pte_accessible(): a PROT_NONE PTE (NUMA hinting) "
           "cannot be cached in a TLB, so migrating its folio needs no flush (a fix to v6.3's 7e12beb8ca2a)",
           "tlb"),
    Change("invlpgb", True, False, "6.15", "4afeb0ed1753",
           "x86/mm: Enable broadcast TLB invalidation for multi-threaded processes",
           "AMD INVLPGB/TLBSYNC replace flush IPIs for multi-threaded mms (CPUs with the feature only): "
           "flush_tlb_mm_range -> broadcast_tlb_flush for an mm with a global ASID (active on > 3 CPUs), "
           "arch_tlbbatch_flush -> invlpgb_flush_all_nonglobals. Only where the CPU advertises "
           "X86_FEATURE_INVLPGB: KVM does not expose it to a guest (arch/x86/kvm/cpuid.c, CPUID 0x80000008 EBX)",
           "tlb", arch="x86"),
    Change("invlpgb_with_pti", False, True, "6.16", "94a17f2dc90b",
           "x86/mm: Disable INVLPGB when PTI is enabled",
           "pti_check_boottime_disable() clears X86_FEATURE_INVLPGB when it turns PTI on (the user-ASID flush "
           "bitmap cannot hold INVLPGB's global ASIDs); v6.15 used both (Cc: stable: 6.15.y has the fix)",
           "tlb", arch="x86"),
    Change("pti", True, False, "4.15", "aa8c6248f8c7",
           "x86/mm/pti: Add infrastructure for page table isolation",
           "page-table isolation (KAISER): with pti=auto the kernel isolates on a CPU with X86_BUG_CPU_MELTDOWN "
           "(arch/x86/mm/pti.c); a user flush is paid on the user PCID too. Mainline v4.15 (-rc4); the stable "
           "backports (4.14.11, 4.9.75, 4.4.110) are not modelled: name them as a patch (+pti)",
           "tlb", arch="x86"),
    Change("batched_lazyfree_unmap", True, False, "6.15", "354dffd29575",
           "mm: support batched unmap for lazyfree large folios during reclamation",
           "try_to_unmap_one clears a lazyfree (MADV_FREE) large folio's PTEs in one batch (get_and_clear_ptes, "
           "one pending flush, folio_remove_rmap_ptes) instead of one page_vma_mapped_walk iteration per PTE; "
           "v6.16's folio_unmap_pte_batch allows partial batches", "tlb"),
    Change("batched_migration_flush", True, False, "6.3", "7e12beb8ca2a",
           "migrate_pages: batch flushing TLB (series by Huang Ying)",
           "migrate_pages_batch unmaps a batch with TTU_BATCH_FLUSH and flushes once (try_to_unmap_flush) "
           "instead of ptep_clear_flush per PTE in try_to_migrate_one", "tlb"),
    Change("pv_ipi", True, False, "4.19", "",
           "KVM: X86: Implement PV IPIs in linux guest (series by Wanpeng Li)",
           "a KVM guest sends a flush IPI to a whole cpumask with one KVM_HC_SEND_IPI hypercall "
           "(kvm_send_ipi_mask) instead of one VM-exiting ICR write per target", "swap, tlb", arch="x86"),
    Change("pv_tlb_flush", True, False, "4.16", "858a43aae235",
           "KVM: X86: support paravirtualized help for TLB shootdowns (Wanpeng Li)",
           "kvm_flush_tlb_multi drops preempted vCPUs (steal_time.preempted) from the flush mask and sets "
           "KVM_VCPU_FLUSH_TLB: the host flushes them at their next VM entry, no IPI, no exit, no wait (with "
           "KVM_FEATURE_PV_TLB_FLUSH and steal time, not under KVM_HINTS_REALTIME)", "swap, tlb", arch="x86"),
    Change("concurrent_flush", True, False, "5.13", "4ce94eabac16",
           "x86/mm/tlb: Flush remote and local TLBs concurrently (Nadav Amit)",
           "flush_tlb_multi sends the IPIs, flushes the local TLB while the targets run their handlers, then "
           "waits (smp_call_function_many_cond); before, flush_tlb_func_local ran first, then flush_tlb_others",
           "swap, tlb", arch="x86"),
    # --- large folios on the swap-out path -----------------------------------------------------
    Change("swap_whole_pmd_thp", True, False, "4.14", "bd4c82c22c36",
           "mm, THP, swap: delay splitting THP after swapped out (series by Huang Ying)",
           "a PMD-size THP is written to swap whole and split only after swap-out. v4.13 gave it "
           "a swap cluster and the swap cache whole but still split it before pageout() ('We don't support THP "
           "writes' in shrink_page_list)", "swap"),
    Change("thp_swap_delay_split", True, False, "4.13", "38d8b4e6bdc8",
           "mm, THP, swap: delay splitting THP during swap out (series by Huang Ying)",
           "shrink_page_list() gives a PMD-mapped THP a whole swap cluster (get_swap_page -> "
           "get_huge_swap_page -> swap_alloc_cluster: one si->lock hold for 512 slots) and adds it to the swap "
           "cache whole (__add_to_swap_cache: 512 radix_tree_insert under one tree_lock hold), then splits it "
           "('XXX: We don't support THP writes': split_huge_page_to_list with the subpages in the swap cache); "
           "the tail pages then skip add_to_swap. Before, add_to_swap() split the THP after the first "
           "get_swap_page and every tail page took its own slot and swap cache insert", "swap"),
    Change("anon_mthp", True, False, "6.8", "",
           "mm: thp: support allocation of anonymous multi-size THP (series by Ryan Roberts)",
           "anonymous faults may allocate folios between 4K and PMD size (hugepages-<size>kB/enabled)", "swap"),
    Change("swap_whole_mthp", True, False, "6.10", "",
           "mm: swap: swap-out small-sized THP without splitting (series by Ryan Roberts)",
           "a large folio below PMD size gets contiguous swap slots and is swapped out whole; before, "
           "add_to_swap() failed for it and shrink_folio_list() split it to 4K pages", "swap"),
    Change("freeze_walk_once", True, False, "4.11", "c7ab0d2fdc84",
           "mm: convert try_to_unmap_one() to use page_vma_mapped_walk() (Kirill A. Shutemov)",
           "split_huge_page's freeze_page walks the rmap once for a PMD-mapped THP (try_to_unmap of the head with "
           "TTU_SPLIT_HUGE_PMD: the PMD becomes 512 migration entries); before, it walked it once more per tail "
           "page (v4.5-v4.10: try_to_unmap(page + i) for i = 1..511, each finding the migration entry already "
           "there)", "swap"),
    Change("split_remap_dirty", True, False, "6.0", "2e3468778dbe",
           "mm: remember young/dirty bit for page migrations (Peter Xu)",
           "a migration entry keeps the PTE's dirty bit and remove_migration_pte restores it; before (from v4.6), "
           "remove_migration_pte mapped every page of a split THP back clean and old (pte_mkold(mk_pte())), the "
           "PMD's dirty bit moved to PG_dirty (__split_huge_pmd_locked), so unmapping the subpages for swap-out "
           "set no writable flush (set_tlb_ubc_flush_pending(mm, pte_dirty = false)): no "
           "try_to_unmap_flush_dirty before each pageout, one try_to_unmap_flush for the list", "swap"),
    Change("batched_split_flush", True, False, "6.8", "3027c6f8eb9d",
           "mm: huge_memory: batch tlb flush when splitting a pte-mapped THP",
           "splitting a PTE-mapped large folio unmaps its PTEs with one batched flush (TTU_BATCH_FLUSH); "
           "before, each PTE was cleared and flushed synchronously (arm64: a TLBI and a DSB per PTE)", "swap"),
    # --- the swap allocator --------------------------------------------------------------------
    Change("slot_cache", True, False, "4.11", "67afa38e012e",
           "mm/swap: add cache for swap slots allocation",
           "a per-CPU cache of 64 swap slots (SWAP_SLOTS_CACHE_SIZE), refilled under si->lock: one "
           "acquisition per 64 order-0 allocations instead of one per page", "swap"),
    Change("swap_map_lock", "cluster", "si_lock", "4.11", "235b62176712",
           "mm/swap: add cluster lock",
           "the swap_map count operations of the swap-out path leave si->lock for the swap cluster's lock "
           "(lock_cluster_or_swap_info; a device with cluster_info, i.e. non-rotational): try_to_unmap_one -> "
           "swap_duplicate -> __swap_duplicate (one per PTE), swap_writepage -> try_to_free_swap -> "
           "page_swapcount, and __remove_mapping -> swapcache_free (the swap-cache removal: it drops "
           "SWAP_HAS_CACHE from an entry the PTE still holds, so the count never reaches 0 there and the "
           "slot cache's batched free, free_swap_slot, is not reached). Before, each took spin_lock(&si->lock) "
           "through swap_info_get (v3.9's ec8acf20afb8 to v4.10): with the allocation, 3 + 1 acquisitions a page",
           "swap"),
    Change("swap_alloc_lock", "per_cluster", "si_lock", "6.14", "",
           "mm, swap: rework of swap allocator locks (series by Kairui Song)",
           "allocation takes a per-cluster lock from per-CPU cluster lists instead of the device-wide "
           "si->lock (seed 003's series)", "swap"),
    Change("slot_cache", False, True, "6.15", "0ff67f990bd4",
           "mm, swap: remove swap slot cache",
           "the per-CPU slot cache goes: the per-CPU cluster is the fast path", "swap"),
    # --- the swap cache ------------------------------------------------------------------------
    Change("writeback_tags", False, True, "4.9", "371a096edf43",
           "mm: don't use radix tree writeback tags for pages in swap cache (Huang Ying, seed 004)",
           "AS_NO_WRITEBACK_TAGS: writeback start/end no longer take the swap cache tree_lock to set "
           "and clear PAGECACHE_TAG_WRITEBACK", "swap"),
    Change("swapcache_lock_partitions", 0, 1, "4.11", "4b3ef9daa4fc",
           "mm/swap: split swap cache into 64MB trunks",
           "one address_space (and tree lock) per 64 MiB of swap instead of one per device: sequential "
           "writers rarely meet on one lock (0 = not a contended station)", "swap"),
    Change("swap_cache_stats", False, True, "6.0", "",
           "mm/swap: remove swap_cache_info statistics (Miaohe Lin, 2022; series title only)",
           "swap_cache_info's add_total and del_total, one global line every CPU wrote at each swap cache "
           "insert and delete (INC_CACHE_INFO; ADD_CACHE_INFO once per THP from v4.13), are gone: 'help mitigate "
           "unneeded global swap_cache_info cacheline contention' (mmcost.swap.paths.stats_line_us)", "swap"),
    Change("memcg_charge_batch", 64, 32, "6.1", "1813e51eece0",
           "memcg: increase MEMCG_CHARGE_BATCH to 64 (Shakeel Butt)",
           "try_charge_memcg charges max(MEMCG_CHARGE_BATCH, nr_pages) and keeps the rest in the per-CPU stock: "
           "64 pages from v6.1, 32 before; at the memcg's limit the batch attempt fails for every smaller charge "
           "(mmcost.swap.paths.memcg_charge_cycle)", "swap"),
    Change("memcg_high_throttle", "after_reclaim", "none", "5.4", "0e4b01df8659",
           "mm, memcg: throttle allocators when failing reclaim over memory.high (Chris Down)",
           "mem_cgroup_handle_over_high, after its one reclaim_high pass, sleeps the charging task "
           "(schedule_timeout_killable) for calculate_high_delay's penalty when the memcg is still over memory.high "
           "and the penalty exceeds HZ/100 jiffies (capped at MEMCG_MAX_HIGH_DELAY_JIFFIES, 2 s); before, it "
           "reclaimed and returned (the return-to-user reclaim of b23afb93d317, queued on v4.3 for v4.4; v4.0's 241994ed8649 reclaimed "
           "in try_charge itself). Chris Down: 'present since v5.4'. e26733e0d0ec (March 2020, backported to "
           "5.4.y; its release not resolved) takes the penalty from the most-over ancestor: one level here (mmcost.swap.paths.over_high_sleep_us)", "swap"),
    Change("memcg_high_throttle", "after_no_progress", "after_reclaim", "5.8", "b3ff92916af3",
           "mm, memcg: reclaim more aggressively before high allocator throttling (Chris Down)",
           "while the penalty exceeds HZ/100, mem_cgroup_handle_over_high reclaims again (SWAP_CLUSTER_MAX pages a "
           "pass) as long as a pass reclaims anything, and sleeps only after MAX_RECLAIM_RETRIES (16, d977aa939fca) "
           "passes that reclaimed nothing: with a swap device that takes pages, never (the release is read off "
           "536d3bf261a2's stable tag, 5.8+, 'included in the same release')", "swap"),
    Change("pcp_high_order", True, False, "5.13", "44042b449872",
           "mm/page_alloc: allow high-order pages to be stored on the per-cpu lists",
           "orders 1 to PAGE_ALLOC_COSTLY_ORDER (3) and the pageblock order (a PMD THP) come from and go to "
           "the per-CPU lists; any other order still takes zone->lock per allocation and free", "swap"),
    # --- swap-in (mmcost.swap.paths.swap_in) ----------------------------------------------------
    Change("swapin_skip_swapcache", True, False, "4.15", "0bcac06f27d7",
           "mm, swap: skip swapcache for swapin of synchronous device (Minchan Kim)",
           "do_swap_page() reads an entry of a SWP_SYNCHRONOUS_IO device (zram, brd, pmem, btt) whose swap "
           "count is 1 straight into a new folio, without the swap cache and without readahead; from v6.8 "
           "(13ddaf26be32, 'mm/swap: fix race when skipping swapcache') it pins the entry with "
           "swapcache_prepare() and swapcache_clear() (SWAP_HAS_CACHE set and cleared per entry) instead", "swapin"),
    Change("swapin_mthp", True, False, "6.12", "242d12c98174",
           "mm: support large folios swap-in for sync io devices (Chuanhua Han, Barry Song)",
           "on the SWP_SYNCHRONOUS_IO path alloc_swap_folio() tries the mTHP orders the VMA allows, below PMD "
           "order, where the range's PTEs are contiguous swap entries (can_swapin_thp), falling back order by "
           "order to 0 on an allocation or memcg charge failure (swpin_fallback, swpin_fallback_charge); never "
           "where zswap was ever enabled (zswap_never_enabled)", "swapin"),
    Change("swap_table", True, False, "6.18", "",
           "mm, swap: introduce swap table as swap cache (phase I) (series by Kairui Song)",
           "the swap cache is a per-cluster array of entries (the swap table) under the cluster lock, read "
           "locklessly by swap_cache_get_folio (__swap_table_get: one load), instead of the 64 MiB address "
           "spaces' XArrays (filemap_get_folio's walk, xa_lock for inserts and deletes)", "swapin"),
    Change("swapin_skip_swapcache", False, True, "7.0", "",
           "mm, swap: never bypass the swap cache even for SWP_SYNCHRONOUS_IO (swap table phase II, series "
           "by Kairui Song, v3 25 Nov 2025, after v6.18's merge window; the release is read off the series' "
           "date and the mm tree it was queued in, not off a tree)",
           "a synchronous device's swap-in goes through the swap cache like any other (swapin_folio: insert "
           "into the swap table, read, map, then folio_free_swap removes it); mTHP swap-in stays limited to "
           "SWP_SYNCHRONOUS_IO devices", "swapin"),
    # --- reclaim ---------------------------------------------------------------------------------
    Change("throttle_isolated_ms", 20.0, 100.0, "5.16", "",
           "mm/vmscan: throttle reclaim and compaction when too may pages are isolated (series by Mel Gorman)",
           "a direct reclaimer finding too many pages isolated sleeps on the node's isolated waitqueue for at "
           "most HZ/50 instead of congestion_wait(BLK_RW_ASYNC, HZ/10)", "swap"),
    Change("anon_lru_start", "inactive", "active", "5.9", "",
           "mm/vmscan: protect the workingset on anonymous LRU (Joonsoo Kim)",
           "a new anonymous folio joins the inactive list (lru_cache_add_inactive_or_unevictable) instead of the "
           "active one: reclaim meets it on the inactive list, keeps it once for its young PTE (folio_check_references: "
           "FOLIOREF_KEEP) and takes it on the next pass, instead of deactivating it from the active list first",
           "swap"),
    Change("lru_gen", False, False, "6.1", "ec1c86b25f4b",
           "mm: multi-gen LRU: groundwork (series by Yu Zhao)",
           "CONFIG_LRU_GEN: reclaim by generations (evict_folios, the aging walk_mm) instead of the active/inactive "
           "lists. Mainline's CONFIG_LRU_GEN_ENABLED defaults to n, so a kernel's default stays the classic LRU; a "
           "distribution kernel that enables it (or /sys/kernel/mm/lru_gen/enabled) is lru_gen=True (a column, "
           "or +lru_gen)", "swap"),
    Change("lru_add_batch", 31, 15, "6.10", "",
           "mm: increase folio batch size (Matthew Wilcox; 'increase PAGEVEC_SIZE from 15 to 31', tested by LKP "
           "against 99fbb6bfc16f in March 2024)",
           "the per-CPU lru_add folio_batch holds 31 folios instead of 15: folio_batch_move_lru takes the LRU lock "
           "once per 31 order-0 faults (before v4.15's pagevec rework it was 14; not resolved). The release is "
           "inferred from the thread's date (after v6.9-rc1), not read off a tree", "swap"),
    Change("lru_lock_scope", "node", "zone", "4.8", "a52633d8e9c3",
           "mm, vmscan: move lru_lock to the node",
           "the LRU lock is per node (pgdat), shared by every memcg on it", "swap"),
    Change("lru_lock_scope", "lruvec", "node", "5.11", "6168d0da2b47",
           "mm/lru: replace pgdat lru_lock with lruvec lock",
           "the LRU lock is per (memcg, node) lruvec: writers in one memcg share it, other memcgs do not",
           "swap"),
)

#: the architectures a change may be limited to
_ARCHES = ("x86", "arm64")


def parse_version(version) -> tuple[int, int]:
    """(major, minor) of ``"6.6"``, ``"v6.6-rc4+anon_mthp"``, ``"4.8.0-rc2"``, ``6.6``;
    raises as :func:`patches` does for a bad ``+`` patch."""
    if isinstance(version, bool) or not isinstance(version, (str, int, float)):
        raise TypeError(f"kernel must be a version string such as '6.6', got {type(version).__name__}")
    text = str(version).strip()
    m = re.match(r"^v?(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"kernel: cannot read a version from {version!r} (expected e.g. '6.6' or 'v6.9-rc4')")
    _patches(text)
    return int(m.group(1)), int(m.group(2))


def patches(version) -> dict[str, object]:
    """The switches the ``+`` patches of ``version`` set: ``"6.6+anon_mthp+swap_whole_mthp"``
    -> ``{"anon_mthp": True, "swap_whole_mthp": True}``; ``"4.7+writeback_tags=false"`` ->
    ``{"writeback_tags": False}``. A value is read as the switch's catalogue values are (a bool,
    an int, a float, or one of its choices); words that name no switch are local version text."""
    parse_version(version)
    return dict(_patches(str(version).strip()))


@lru_cache(maxsize=256)
def _patches(text: str) -> tuple:
    known = _switch_values()
    out = {}
    for word in text.split("+")[1:]:
        word = word.strip()
        name, eq, raw = word.partition("=")
        name = name.strip()
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
            if close or eq:
                hint = f"; did you mean {close[0]!r}?" if close else f"; known switches: {sorted(known)}"
                raise ValueError(f"kernel {text!r}: +{word} names no switch of the catalogue{hint}")
            continue  # local version text (a dirty tree's trailing '+', a distribution's suffix)
        values = known[name]
        if not eq:
            if not all(isinstance(x, bool) for x in values):
                raise ValueError(f"kernel {text!r}: +{name} needs a value (+{name}=<value>), one of {sorted(map(str, values))}")
            out[name] = True
            continue
        out[name] = _patch_value(text, name, raw.strip(), values)
    return tuple(out.items())


def _patch_value(text: str, name: str, raw: str, values: tuple):
    if all(isinstance(x, bool) for x in values):
        if raw.lower() in ("true", "1", "yes", "on"):
            return True
        if raw.lower() in ("false", "0", "no", "off"):
            return False
    elif all(isinstance(x, int) and not isinstance(x, bool) for x in values):
        if re.fullmatch(r"\d+", raw):
            return int(raw)
    elif all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        try:
            x = float(raw)
        except ValueError:
            pass
        else:
            if x == x and x not in (float("inf"), float("-inf")) and x >= 0:
                return x
    elif raw in values:
        return raw
    raise ValueError(f"kernel {text!r}: +{name}={raw} is not a value of {name} "
                     f"(the catalogue's: {sorted(map(str, values))})")


@lru_cache(maxsize=1)
def _switch_values() -> dict[str, tuple]:
    out: dict[str, list] = {}
    for c in CHANGES:
        for x in (c.before, c.value):
            if x not in out.setdefault(c.switch, []):
                out[c.switch].append(x)
    return {k: tuple(v) for k, v in out.items()}


def features(version, arch: str = "x86") -> dict[str, object]:
    """The switch values of kernel ``version`` on ``arch``: every switch in
    :data:`CHANGES`, at its value after the last change at or before that
    version (its ``before`` value if none), then as its ``+`` patches set it."""
    if arch not in _ARCHES:
        raise ValueError(f"arch must be one of {list(_ARCHES)}, got {arch!r}")
    v = parse_version(version)
    return dict(_features(v, arch, _patches(str(version).strip())))


@lru_cache(maxsize=256)
def _features(v: tuple[int, int], arch: str, patched: tuple = ()) -> tuple:
    # every solve asks for its kernel's switches: the catalogue walk is done once per version
    out: dict[str, object] = {}
    for c in sorted(CHANGES, key=lambda c: parse_version(c.version)):
        if c.arch and c.arch != arch:
            continue
        if parse_version(c.version) <= v:
            out[c.switch] = c.value
        else:
            out.setdefault(c.switch, c.before)
    out.update(patched)
    return tuple(out.items())


def changes(switch: str | None = None) -> pd.DataFrame:
    """The catalogue as a table (one row per change), optionally for one switch."""
    rows = [dict(switch=c.switch, version=c.version, arch=c.arch or "all", value=c.value, before=c.before,
                 commit=c.commit or "(series; see title)", title=c.title, effect=c.effect, read_by=c.read_by)
            for c in CHANGES if switch is None or c.switch == switch]
    if not rows:
        raise ValueError(f"switch: no change in the catalogue sets {switch!r}; known: {sorted(switches())}")
    return pd.DataFrame(rows).sort_values(["switch", "version"], key=lambda s: s.map(
        lambda x: parse_version(x) if s.name == "version" else x)).reset_index(drop=True)


def switches() -> set[str]:
    return {c.switch for c in CHANGES}
