"""The shared resources the swap paths queue at: one row each, and the network built from the rows.

A :class:`Station` row names the lock or device, its partitions (how many
independent instances the tasks spread over), its kind, and its call sites
in path order. Each :class:`Site` reads keys of a path's holds
(:data:`mmcost.swap.paths.HOLDS`): keys of :data:`~mmcost.swap.paths.PER_WRITTEN`
are divided by the swapped share (they are per folio written), the others
are per folio swapped, and several keys are summed left to right (those the
path has: the writers' ``lru_fault`` and a swap-in's ``lru_add`` share the
``folio_batch_move_lru`` site, each path with its own key). A row whose
holds are not in microseconds converts them (``to_us``: TLBIs at the DVM
node, bytes at DRAM bandwidth). :func:`network` walks the rows in order: a
station is in the network when one of its sites is (a site is there when
any lane's amount is positive, unless it says otherwise), and a row that is
absent from a kernel era (``present``) can hand its holds to the CPU work
of the cycle instead (``cpu_if_absent``: the swap cache's tree lock once it
no longer contends, v4.11).

The order of the rows is the order of the stations and stages in the
network; it is part of the numbers (the MVA's sums over stations), so a new
row goes where its lock is taken on the path, and the old rows keep theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..lanes import any_of, where
from ..locks import Critical, Dist, Lock, LockSystem, Work
from .paths import PER_WRITTEN, lru_lock_partitions, slot_partitions


@dataclass(frozen=True)
class Site:
    """One call site of a station: the kernel function that takes it, and
    the holds keys it puts there (summed, those a path has). ``when``:
    ``"any"`` (there when any lane's amount is positive), ``"always"``
    (there whenever the path has one of the keys), or a function of the
    model (a kernel switch)."""

    name: str
    keys: tuple[str, ...]
    when: str | Callable[[Any], bool] = "any"


@dataclass(frozen=True)
class Station:
    """One shared resource: ``name`` (the lock's name in the network),
    ``what`` (the kernel object), ``kind`` (``spinlock``, ``spin_lock_irq``,
    ``atomic`` line, ``fifo`` device or interconnect node, ``bandwidth``),
    ``partitions`` (a function of the model; None: one), ``sites`` in path
    order, ``unit`` of its holds and ``to_us`` converting them,
    ``present`` (a function of the model; None: every kernel has it) and
    ``cpu_if_absent`` (holds keys that are CPU work where it is absent)."""

    name: str
    what: str
    kind: str
    sites: tuple[Site, ...]
    partitions: Callable[[Any], int] | None = None
    unit: str = "us"
    to_us: Callable[[Any, Any], Any] | None = None
    present: Callable[[Any], bool] | None = None
    cpu_if_absent: tuple[str, ...] = ()


#: the writers' network (swap-out), in path order; the read-back's (swap-in with the swap-out it forces) too
WRITERS: tuple[Station, ...] = (
    Station("lru_lock", "the lruvec's lru_lock (a zone's before v4.8, a node's to v5.11)", "spinlock",
            # folio_add_lru's batch is emptied under the lock: the writers' faults and a swap-in's folio
            (Site("isolate_lru_folios", ("lru",), "always"), Site("folio_batch_move_lru", ("lru_fault", "lru_add"))),
            partitions=lru_lock_partitions),
    # before v4.11 (swap_map_lock) the same si->lock again, in path order: try_to_unmap_one ->
    # swap_duplicate, swap_writepage -> try_to_free_swap -> page_swapcount, __remove_mapping ->
    # swapcache_free -> swap_info_get (mm/swapfile.c, v3.9-v4.10)
    Station("si_lock", "si->lock, or the per-cluster allocation locks (v6.14)", "spinlock",
            (Site("get_swap_pages", ("slot",), "always"), Site("__swap_duplicate", ("map_dup",)),
             Site("page_swapcount", ("map_count",)), Site("swapcache_free", ("map_free",)),
             # a swap-in's slot freed (mmcost.swap.paths.slot_free), before v6.14
             Site("swapcache_free_entries", ("slot_free_batched",), "always"),
             Site("swap_entry_free", ("slot_free",), "always")),
            partitions=slot_partitions),
    Station("swap_avail_lock", "the global swap_avail_lock (get_swap_pages, to v6.13)", "spinlock",
            (Site("get_swap_pages_avail", ("avail",)),)),
    Station("zone_lock", "zone->lock, one ZONE_NORMAL per node", "spinlock",
            (Site("rmqueue_buddy", ("zone_fault", "zone")),), partitions=lambda m: m.nodes),
    # one root counter line above every memcg: a station for all of them
    Station("memcg_counter", "the memcg page_counter lines up to the root", "atomic",
            (Site("page_counter_charge", ("memcg_fault", "memcg")),)),
    # the swap cache's tree lock: spin_lock_irq at every site (v4.8 mm/swap_state.c, mm/vmscan.c,
    # mm/page-writeback.c); with writeback tags two more sites take it per page
    Station("swapcache", "the swap cache's tree_lock / xa_lock (contended to v4.10)", "spin_lock_irq",
            (Site("__add_to_swap_cache", ("cache_insert",), "always"),
             Site("__test_set_page_writeback", ("tags",), lambda m: bool(m.switch("writeback_tags"))),
             Site("test_clear_page_writeback", ("tags",), lambda m: bool(m.switch("writeback_tags"))),
             Site("__remove_mapping", ("cache_delete",), "always")),
            partitions=lambda m: m.switch("swapcache_lock_partitions"),
            present=lambda m: bool(m.switch("swapcache_lock_partitions")),
            cpu_if_absent=("cache_insert", "cache_delete", "tags")),
    # a broadcast TLBI is a DVM operation, and the interconnect serialises them (Arm CoreLink CMN-600
    # TRM: one DVM node handles every DVM message; every PE applies every one): all CPUs' TLBIs queue at one
    # FIFO station. The DSB's wait is the flushing CPU's, not this station's (mmcost.swap.paths.dvm_flush)
    Station("dvm", "the interconnect's DVM node (arm64)", "fifo", (Site("tlbi_broadcast", ("tlbis",)),),
            unit="TLBIs", to_us=lambda m, n: n * m.tlbi_us, present=lambda m: m.arch == "arm64"),
    Station("zs_class", "a zsmalloc size class's class->lock", "spinlock",
            (Site("zs_malloc", ("zs",)), Site("zs_free", ("zs_free",))), partitions=lambda m: m.zs_size_classes),
    Station("brd_xa", "brd's page tree (xa_lock(&brd->brd_pages); brd_lock before v6.4)", "spinlock",
            (Site("brd_insert_page", ("brd_xa",)),)),
    Station("device", "a block device (nvme/ssd, zswap's backing device)", "fifo",
            (Site("swap_writepage", ("device",)),)),
    # DRAM: every byte zeroed, copied or compressed crosses the memory controllers (GB/s = 1e3 B/us)
    Station("dram", "DRAM bandwidth shared by every CPU", "bandwidth",
            (Site("memory_bandwidth", ("dram_fault", "dram"), "always"),),
            unit="bytes", to_us=lambda m, b: b / (m.mem_bw_gb_s * 1e3)),
)

#: the exit network (exit_free): processes freeing their swap entries together
EXITS: tuple[Station, ...] = (
    Station("si_lock", "si->lock (swap_entry_free; swapcache_free_entries with the slot cache)", "spinlock",
            (Site("swapcache_free_entries", ("slot_free_batched",), "always"),
             Site("swap_entry_free", ("slot_free",), "always"))),
    Station("zs_class", "a zsmalloc size class's class->lock", "spinlock", (Site("zs_free", ("zs_free",), "always"),),
            partitions=lambda m: m.zs_size_classes),
)


def amount(d: dict, keys: tuple[str, ...], s) -> Any:
    """A site's amount per folio swapped: its keys summed left to right, the
    per-folio-written ones divided by the swapped share ``s``."""
    out = None
    for key in keys:
        x = d[key] / s if key in PER_WRITTEN else d[key]
        out = x if out is None else out + x
    return out


def count(d: dict, keys: tuple[str, ...], s) -> Any:
    """A site's acquisitions per folio swapped (:attr:`mmcost.locks.Critical.count`): the path's
    counts of its keys (``"n:" + key``, :data:`mmcost.swap.paths.COUNTED`) summed, a key without one
    taken once, the per-folio-written ones divided by the swapped share ``s``; None where the path counts
    none of them (once)."""
    if not any("n:" + key in d for key in keys):
        return None
    out = 0.0
    for key in keys:
        n = d.get("n:" + key, 1.0)
        out = out + (n / s if key in PER_WRITTEN else n)
    return out


def _site_on(site: Site, m, x) -> bool:
    if site.when == "always":
        return True
    if site.when == "any":
        return any_of(x > 0)
    return bool(site.when(m))


def network(m, rows: tuple[Station, ...], d: dict, work, population: int, s=1.0,
            throttled_us=None) -> LockSystem:
    """The closed network of ``population`` tasks, each cycling through its
    CPU ``work`` (us per operation) and the stations of ``rows`` loaded with
    the path's holds ``d`` (per operation; ``s``: the swapped share, for the
    per-folio-written keys). ``throttled_us``: a sleep per operation, off-CPU,
    after the work. Built from a validated model: names unique by
    construction, holds checked by the MVA core."""
    stages, locks = [], []
    for row in rows:
        if row.present is not None and not row.present(m):
            for key in row.cpu_if_absent:
                if key in d:  # (a path without the key has no such work)
                    work = work + d[key]
            continue
        here = []
        for site in row.sites:
            keys = tuple(k for k in site.keys if k in d)  # a path puts a site's keys that it has there
            if not keys:
                continue
            x = amount(d, keys, s)
            if _site_on(site, m, x):
                us = x if row.to_us is None else row.to_us(m, x)
                n = count(d, keys, s)
                # (a site held for nothing, as "always" sites may be, is taken once: its count is no count)
                n = 1.0 if n is None else where(x > 0, n, 1.0)
                here.append(Critical(row.name, site.name, Dist.exponential(us),
                                     irq_disabled=row.kind == "spin_lock_irq", count=n))
        if here:
            stages += here
            locks.append(Lock(row.name) if row.partitions is None
                         else Lock(row.name, partitions=int(row.partitions(m))))
    stages.insert(0, Work(Dist.exponential(work)))
    if throttled_us is not None and any_of(throttled_us > 0):  # asleep, off-CPU: a delay in the cycle
        stages.insert(1, Work(Dist.exponential(throttled_us)))
    if not locks:
        locks, stages = [Lock("none")], stages + [Critical("none", "none", Dist.exponential(1e-9))]
    return LockSystem.network(population, tuple(locks), tuple(stages), validate=False)


#: the swap cache tree lock's call sites in v4.8 (perf-profile cycles-pp chains name them)
SWAPCACHE_SITES = ("__add_to_swap_cache", "__remove_mapping", "__test_set_page_writeback", "test_clear_page_writeback")


def site_of(call_site: str) -> str:
    """The model's call site for a perf-profile call chain such as
    ``_raw_spin_lock_irq.__add_to_swap_cache.add_to_swap_cache...``: the first
    function after the lock primitive that is one of :data:`SWAPCACHE_SITES`
    (else the chain's second element)."""
    if not isinstance(call_site, str) or not call_site:
        raise ValueError(f"call_site must be a non-empty perf call chain, got {call_site!r}")
    parts = call_site.split(".")
    for p in parts:
        if p in SWAPCACHE_SITES:
            return p
    return parts[1] if len(parts) > 1 else parts[0]
