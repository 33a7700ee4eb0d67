"""Swap-out throughput: P processes writing anonymous memory into a memcg that must swap.

The usemem / vm-scalability ``swap-w-seq`` workload: ``processes`` processes
(one per CPU, single-threaded) each write ``bytes_per_process`` into a memcg
of ``memcg_mb``; everything beyond the limit is reclaimed by the writers
themselves (memcg direct reclaim: ``try_to_free_mem_cgroup_pages``) and
written to the swap device. In steady state each process alternates faulting
in new folios and reclaiming old ones, so the model's operation is *swap out
one folio*, which costs:

- fault side, for the 1/s folios written per folio swapped (s = swapped share
  of the bytes written): the fault (``do_anonymous_page`` / ``alloc_anon_folio``
  for mTHP, ``do_huge_pmd_anonymous_page`` for 2M), zeroing, PTE installs;
- reclaim side (``shrink_folio_list`` in mm/vmscan.c): LRU isolation under
  the memcg's lruvec lock (one lock for all P processes: a contended
  station), rmap walk and unmap (one entry per PTE; one PMD for a 2M THP) and
  its TLB flush (:class:`mmcost.tlb.TlbModel`, batched per 32 folios; on
  arm64 the broadcast TLBIs queue at the interconnect's DVM node, another
  shared station), swap slot allocation under ``si->lock`` (per-CPU slot
  cache refills of 64 slots for 4K, a contiguous scan per large folio:
  ``get_swap_pages``), swap cache insert/remove, writeback to the device, and
  free;
- a large folio that cannot be swapped out whole (v6.6 for sizes below PMD:
  ``add_to_swap`` refuses, ``split_folio_to_list`` splits it) pays the split
  under the lruvec lock (``__split_huge_page``), the split's own unmap/remap
  of every PTE with its TLB invalidations, and then the 4K path once per page.

The P processes contend on the lock stations through
:class:`mmcost.locks.LockSystem`: exact MVA (``analytic``) or the C++ DES
(``simulate``), so contention is computed, not assumed. A shared device
bandwidth (NVMe) is one more FIFO station. Times in microseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from . import _validate as v
from .locks import Critical, Dist, Lock, LockSystem, Work
from .tlb import Arch, Policy, TlbCosts, TlbModel

PAGE_KB = 4
PMD_KB = 2048
#: folios per shrink_folio_list call (SWAP_CLUSTER_MAX) and per TLB flush
RECLAIM_BATCH = 32
#: swap slots taken under si->lock per per-CPU cache refill (SWAP_SLOTS_CACHE_SIZE, mm/swap_slots.c)
SLOT_CACHE_BATCH = 64


@dataclass(frozen=True)
class SwapDevice:
    """Where swapped pages go. ``brd``/``pmem``: a RAM disk, the CPU copies each
    page (``copy_us_per_page``). ``zram``: the CPU compresses then stores
    (``compress_us_per_page`` + ``copy_us_per_page``). ``nvme``: DMA, so the
    CPU only submits; the device serves all CPUs at ``bandwidth_mib_s`` and
    ``queue_depth`` I/Os of ``latency_us`` in flight (a FIFO station whose
    service per folio is the larger of size / bandwidth and latency / depth:
    Little's law)."""

    kind: str = "brd"
    copy_us_per_page: float = 0.0
    compress_us_per_page: float = 0.0
    bandwidth_mib_s: float = math.inf
    latency_us: float = 0.0
    queue_depth: int = 1

    def __post_init__(self):
        if self.kind not in ("brd", "pmem", "zram", "nvme"):
            raise ValueError(f"device.kind must be brd, pmem, zram or nvme, got {self.kind!r}")
        v.scalar("device.copy_us_per_page", self.copy_us_per_page)
        v.scalar("device.compress_us_per_page", self.compress_us_per_page)
        bw = self.bandwidth_mib_s
        if isinstance(bw, bool) or not isinstance(bw, (int, float)) or math.isnan(bw) or bw <= 0:
            raise ValueError(f"device.bandwidth_mib_s must be > 0 (inf: not a bottleneck), got {bw!r}")
        v.scalar("device.latency_us", self.latency_us)
        v.count("device.queue_depth", self.queue_depth)

    def cpu_us(self, pages: int) -> float:
        """CPU time of the writer for one folio of ``pages`` pages."""
        if self.kind == "nvme":
            return 0.0
        return pages * (self.copy_us_per_page + (self.compress_us_per_page if self.kind == "zram" else 0.0))

    def station_us(self, pages: int) -> float:
        """Service time of the shared device station per folio (0: none)."""
        if self.kind != "nvme":
            return 0.0
        transfer = pages * PAGE_KB / 1024 / self.bandwidth_mib_s * 1e6 if math.isfinite(self.bandwidth_mib_s) else 0.0
        return max(transfer, self.latency_us / self.queue_depth)


@dataclass(frozen=True)
class SwapCosts:
    """Per-operation CPU costs (microseconds). Which are fitted and which carry
    priors is the fitting model's business (:mod:`mmcost.small_thp_swapout`)."""

    fault_us: float = 1.0          # per folio faulted: exception, allocation, memcg charge
    zero_us_per_page: float = 1.0  # clear_page per 4 KiB
    pte_us: float = 0.05           # per PTE set, cleared or walked
    reclaim_us: float = 2.0        # per folio reclaimed: isolation bookkeeping, folio_referenced, free
    lru_hold_us: float = 0.3       # per folio under the lruvec lock (isolate + putback share)
    slot_hold_us: float = 0.2      # si->lock per allocation (a refill of the per-CPU cache, or one large folio)
    swapcache_us: float = 0.5      # per folio swap cache insert + delete, half each (tree lock / xa_lock hold)
    tag_hold_us: float = 0.25      # per folio and writeback-tag site (set at writeback, clear at completion)
    split_us_per_page: float = 0.5  # per subpage of a split (__split_huge_page_tail, under the lruvec lock)

    def check(self) -> None:
        for name in self.__dataclass_fields__:
            v.scalar(f"costs.{name}", getattr(self, name))


@dataclass(frozen=True)
class SwapModel:
    """One configuration. ``folio_kb``: the folio size faults ask for;
    ``large_share``: the share of those faults that got it (the rest fell back
    to 4K: ``anon_fault_fallback``; see :func:`large_fault_share`).
    Kernel versions are mechanism switches: ``split_small_thp`` (v6.6 splits
    large folios below PMD size before swap-out; False swaps them out whole,
    Ryan Roberts' series), ``contiguous_failure``, ``slot_cache``,
    ``slot_lock_partitions``, ``swapcache_lock_partitions`` and
    ``writeback_tags`` (documented where they are declared)."""

    processes: int = 70
    bytes_per_process: float = 2**30
    memcg_mb: float = 40 * 1024
    folio_kb: int = 4
    large_share: float = 1.0
    split_small_thp: bool = True
    #: share of large folios whose contiguous swap-slot allocation fails, so they split after all
    contiguous_failure: float = 0.0
    #: per-CPU swap slot cache (mm/swap_slots.c, v4.11 commit 67afa38e0): si->lock once per 64 slots
    #: for 4K folios; False (v4.8): once per page
    slot_cache: bool = True
    #: si->lock (1) or that many per-cluster locks, picked at random (the v6.13 allocator rework)
    slot_lock_partitions: int = 1
    #: swap cache locking: 0 = uncontended (64 MiB address spaces since v4.10, commit 4b3ef9daa4fc);
    #: K >= 1 = a contended tree lock in K partitions (v4.8: one per swap device)
    swapcache_lock_partitions: int = 0
    #: v4.8 swap cache: set/clear PAGECACHE_TAG_WRITEBACK under the tree lock (seed 004's patch removes it)
    writeback_tags: bool = False
    device: SwapDevice = field(default_factory=SwapDevice)
    arch: Arch = Arch.ARM64
    costs: SwapCosts = field(default_factory=SwapCosts)
    tlb_costs: TlbCosts = field(default_factory=TlbCosts)

    def __post_init__(self):
        v.count("processes", self.processes)
        v.scalar("bytes_per_process", self.bytes_per_process, positive=True)
        v.scalar("memcg_mb", self.memcg_mb, positive=True)
        kb = v.count("folio_kb", self.folio_kb, minimum=PAGE_KB)
        if kb % PAGE_KB or (kb // PAGE_KB) & (kb // PAGE_KB - 1) or kb > PMD_KB:
            raise ValueError(f"folio_kb must be 4 KiB times a power of two, at most {PMD_KB}, got {kb}")
        for name in ("large_share", "contiguous_failure"):
            if v.scalar(name, getattr(self, name)) > 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.memcg_mb * 2**20 >= self.processes * self.bytes_per_process:
            raise ValueError(f"memcg_mb: the limit ({self.memcg_mb:g} MiB) is not below the data written "
                             f"({self.processes * self.bytes_per_process / 2**20:g} MiB): nothing would swap")
        for name in ("split_small_thp", "slot_cache", "writeback_tags"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        v.count("slot_lock_partitions", self.slot_lock_partitions)
        v.count("swapcache_lock_partitions", self.swapcache_lock_partitions, minimum=0)
        if not isinstance(self.device, SwapDevice):
            raise TypeError(f"device must be a SwapDevice, got {type(self.device).__name__}")
        try:
            object.__setattr__(self, "arch", Arch(self.arch))
        except ValueError:
            raise ValueError(f"arch must be one of {[a.value for a in Arch]}, got {self.arch!r}") from None
        if not isinstance(self.costs, SwapCosts):
            raise TypeError(f"costs must be a SwapCosts, got {type(self.costs).__name__}")
        self.costs.check()
        self.tlb_costs.check()

    def replace(self, **changes) -> SwapModel:
        return replace(self, **changes)

    @property
    def swapped_share(self) -> float:
        """Share of the bytes written that must be swapped out (all beyond the limit)."""
        return 1.0 - self.memcg_mb * 2**20 / (self.processes * self.bytes_per_process)

    # --- the operation: swap out one folio ---------------------------------------------------
    def _tlb_us(self, entries: int) -> float:
        """The writer's own CPU time for reclaim's TLB flush of a folio of
        ``entries`` entries (:class:`~mmcost.tlb.TlbModel`, batched per 32
        folios): usemem's mm runs on one CPU, so x86 flushes locally (no IPI);
        on arm64 the writer waits one DSB per call, while the broadcast TLBIs
        themselves are served by the interconnect (:attr:`tlbi_station`)."""
        costs = replace(self.tlb_costs, tlbi_us=0.0) if self.arch is Arch.ARM64 else self.tlb_costs
        tm = TlbModel(cpus=1, arch=self.arch, policy=Policy.BATCHED, reclaim_unmap_rate_per_s=1.0,
                      batch_folios=RECLAIM_BATCH, entries_per_folio=entries, costs=costs, streams=())
        return tm.analytic().overhead * 1e6  # CPU-s per s at one folio per s = us per folio

    @property
    def tlbi_station(self) -> bool:
        """arm64: a broadcast TLBI is a DVM operation, and the interconnect
        serialises them (Arm CoreLink CMN-600 TRM: one DVM node per mesh
        handles every DVM message), so all CPUs' TLBIs queue at one FIFO
        station of ``tlb_costs.tlbi_us`` each: contention, computed."""
        return self.arch is Arch.ARM64

    def _folio_stages(self, kb: int) -> dict[str, float]:
        """Per folio of ``kb`` KiB swapped out: ``fault`` (work per folio
        written), ``work`` (the rest of the writer's own time), the holds at
        each shared station (``lru``, ``slot``, the swap-cache sites) and
        ``tlbis`` (broadcast TLB invalidations). A large folio the kernel would
        swap out whole still splits when its contiguous slot allocation fails
        (``contiguous_failure``: ``thp_swpout_fallback`` / ``swpout_fallback``),
        after paying the failed scan."""
        pages = kb // PAGE_KB
        if pages == 1 or (self.split_small_thp and kb < PMD_KB):
            return self._path(kb, whole=pages == 1)
        f = self.contiguous_failure
        whole = self._path(kb, whole=True)
        if f == 0:
            return whole
        split = self._path(kb, whole=False)
        split["slot"] += self.costs.slot_hold_us  # the failed contiguous scan
        return {k: (1 - f) * whole[k] + f * split[k] for k in whole}

    def _path(self, kb: int, whole: bool) -> dict[str, float]:
        """:meth:`_folio_stages` for one path: the folio whole, or split to 4K."""
        c, pages = self.costs, kb // PAGE_KB
        entries = 1 if kb == PMD_KB else pages  # a 2M THP is one PMD; smaller folios are PTE-mapped
        units = 1 if whole else pages  # swap-cache entries, slot allocations, writebacks
        # one contiguous scan per whole large folio; per 4K slot otherwise (amortised by the per-CPU cache)
        per_slot = c.slot_hold_us / SLOT_CACHE_BATCH if self.slot_cache else c.slot_hold_us
        slot = c.slot_hold_us if (whole and pages > 1) else per_slot * pages
        d = {"fault": c.fault_us + pages * c.zero_us_per_page + entries * c.pte_us, "lru": c.lru_hold_us, "slot": slot,
             "cache_insert": units * c.swapcache_us / 2, "cache_delete": units * c.swapcache_us / 2,
             "tags": units * c.tag_hold_us if self.writeback_tags else 0.0}
        if whole:
            d["work"] = c.reclaim_us + entries * c.pte_us + self._tlb_us(entries) + self.device.cpu_us(pages)
            d["tlbis"] = entries
        else:  # split: unmap + remap every PTE (migration entries, their TLBIs), then the 4K path per page
            per_page = c.reclaim_us + c.pte_us + self._tlb_us(1) + self.device.cpu_us(1)
            d["work"] = 2 * pages * c.pte_us + self._tlb_us(pages) + pages * per_page
            d["lru"] += pages * c.split_us_per_page
            d["tlbis"] = 2 * pages
        if self.swapcache_lock_partitions == 0:  # uncontended: plain work
            d["work"] += d.pop("cache_insert") + d.pop("cache_delete") + d.pop("tags")
        return d

    def swapout_cpu_us(self, kb: int, whole: bool) -> float:
        """CPU time to swap out one folio of ``kb`` KiB, whole or split to 4K
        first, without waiting at any shared station: reclaim, unmap and TLB
        flush, the holds of the slot, swap-cache and LRU locks, the device's
        CPU work, and for a split its own cost (``split_folio_to_list``). The
        fault that wrote the folio is not included (it is the same either way).
        ``swapout_cpu_us(kb, False) - swapout_cpu_us(kb, True)`` is what one
        ``swpout_fallback`` costs."""
        kb = v.count("kb", kb, minimum=PAGE_KB)
        if kb % PAGE_KB or (kb // PAGE_KB) & (kb // PAGE_KB - 1) or kb > PMD_KB:
            raise ValueError(f"kb must be 4 KiB times a power of two, at most {PMD_KB}, got {kb}")
        if not isinstance(whole, bool):
            raise TypeError(f"whole must be a bool, got {type(whole).__name__}")
        d = self._path(kb, whole=whole or kb == PAGE_KB)
        return sum(val for k, val in d.items() if k not in ("fault", "tlbis"))

    def _network(self) -> tuple[LockSystem, float]:
        """The closed network (P CPUs, each swapping out one average folio per
        operation) and the KiB that folio holds."""
        sizes = [(self.folio_kb, self.large_share)]
        if self.folio_kb > PAGE_KB and self.large_share < 1:
            sizes.append((PAGE_KB, 1 - self.large_share))  # fallback faults got 4K folios
        folios = [(kb, share / kb) for kb, share in sizes if share > 0]  # folios per KiB written
        total = sum(w for _, w in folios)
        weights = [w / total for _, w in folios]
        per_size = [self._folio_stages(kb) for kb, _ in folios]
        d = {k: sum(w * st[k] for w, st in zip(weights, per_size)) for k in per_size[0]}
        kib = sum(w * kb for w, (kb, _) in zip(weights, folios))

        def hold(us):
            return Dist.exponential(us)

        stages = [Work(hold(d["fault"] / self.swapped_share + d["work"])),
                  Critical("lru_lock", "isolate_lru_folios", hold(d["lru"])),
                  Critical("si_lock", "get_swap_pages", hold(d["slot"]))]
        locks = [Lock("lru_lock"), Lock("si_lock", partitions=self.slot_lock_partitions)]
        if self.swapcache_lock_partitions:
            # the swap cache's tree lock: spin_lock_irq at every site (v4.8 mm/swap_state.c, mm/vmscan.c,
            # mm/page-writeback.c); with writeback tags two more sites take it per page
            stages.append(Critical("swapcache", "__add_to_swap_cache", hold(d["cache_insert"]), irq_disabled=True))
            if self.writeback_tags:
                stages.append(Critical("swapcache", "__test_set_page_writeback", hold(d["tags"]), irq_disabled=True))
                stages.append(Critical("swapcache", "test_clear_page_writeback", hold(d["tags"]), irq_disabled=True))
            stages.append(Critical("swapcache", "__remove_mapping", hold(d["cache_delete"]), irq_disabled=True))
            locks.append(Lock("swapcache", partitions=self.swapcache_lock_partitions))
        if self.tlbi_station:
            stages.append(Critical("dvm", "tlbi_broadcast", hold(d["tlbis"] * self.tlb_costs.tlbi_us)))
            locks.append(Lock("dvm"))
        dev = sum(w * self.device.station_us(kb // PAGE_KB) for w, (kb, _) in zip(weights, folios))
        if dev > 0:
            stages.append(Critical("device", "swap_writepage", hold(dev)))
            locks.append(Lock("device"))
        return LockSystem(self.processes, tuple(locks), tuple(stages)), kib

    def system(self) -> LockSystem:
        """The lock-contention network this configuration solves (see the module docstring)."""
        return self._network()[0]

    def solve(self, solver: str = "analytic", **simulate_kwargs) -> dict:
        """Per-process write throughput (``usemem_throughput_kib_s``, usemem's
        number), the swap-out rate of all processes (``swapout_kib_s``), and the
        lock result; ``solver="simulated"`` adds ``swapout_kib_s_ci99``."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        net, kib = self._network()
        res = net.analytic() if solver == "analytic" else net.simulate(**simulate_kwargs)
        swapout = res.system["throughput_per_s"] * kib  # folios/s x KiB
        out = {"swapout_kib_s": swapout, "usemem_throughput_kib_s": swapout / self.swapped_share / self.processes,
               "result": res}
        if solver == "simulated":
            out["swapout_kib_s_ci99"] = res.system["throughput_per_s_ci99"] * kib
        return out


def large_fault_share(folio_kb: int, memcg_mb: float, written_mb: float, *, madvise: bool) -> float:
    """The share of faults that get a large folio of ``folio_kb``.

    With MADV_HUGEPAGE (or ``defrag=always``) the fault may reclaim, so every
    fault gets its size. Without it the large-folio gfp mask has no direct
    reclaim: once the memcg sits at its limit the charge fails
    (``anon_fault_fallback_charge``) and the fault falls back to 4K, so for
    256K and larger only the faults before the limit was first reached got
    large folios: share = limit / bytes written (measured on 6.18 with zram and
    a 256 MiB memcg). Below 256K the fallback is partial and not predictable
    from the limit (94% of 16K and 63% of 64K faults succeeded there): pass the
    measured share (``mmcost.parse.mthp_stats``) instead."""
    kb = v.count("folio_kb", folio_kb, minimum=PAGE_KB)
    limit, written = v.scalar("memcg_mb", memcg_mb, positive=True), v.scalar("written_mb", written_mb, positive=True)
    if madvise or kb == PAGE_KB:
        return 1.0
    if kb < 256:
        raise ValueError(f"folio_kb={kb}: below 256K the fallback share is not a function of the limit; "
                         "measure it (hugepages-<size>kB/stats) and pass large_share")
    return min(1.0, limit / written)


def mthp_inputs(rows, folio_kb: int) -> dict:
    """``large_share`` and ``contiguous_failure`` for one folio size, from the
    per-size mTHP counters a user read with :func:`mmcost.parse.mthp_stats`:

    - ``large_share`` = anon_fault_alloc / (anon_fault_alloc + anon_fault_fallback).
      A fallback fault maps a 4K page into the range, after which the large
      order no longer fits there, so each fallback stands for one range of
      ``folio_kb`` filled with 4K pages: the count share is also the byte share.
    - ``contiguous_failure`` = swpout_fallback / (swpout + swpout_fallback):
      large folios that could not get contiguous swap slots and were split.

    Pass them to :class:`SwapModel` (``SwapModel(..., **mthp_inputs(rows, 64))``)."""
    import pandas as pd

    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"rows must be a DataFrame from mmcost.parse.mthp_stats, got {type(rows).__name__}")
    kb = v.count("folio_kb", folio_kb, minimum=PAGE_KB)
    part = rows[rows["folio_kb"] == kb].set_index("metric")["value"] if "folio_kb" in rows else pd.Series(dtype=float)
    if part.empty:
        raise ValueError(f"folio_kb: no hugepages-{kb}kB counters in rows (sizes present: "
                         f"{sorted(set(rows['folio_kb'])) if 'folio_kb' in rows else []})")

    def share(ok: str, failed: str) -> float:
        if ok not in part or failed not in part:
            raise ValueError(f"rows: hugepages-{kb}kB needs both {ok} and {failed}")
        total = float(part[ok]) + float(part[failed])
        if total <= 0:
            raise ValueError(f"rows: hugepages-{kb}kB has no {ok} or {failed} events to form a share from")
        return float(part[ok]) / total

    out = {"large_share": share("fault_alloc_count", "fault_fallback_count")}
    if "swpout_count" in part or "swpout_fallback_count" in part:
        out["contiguous_failure"] = 1.0 - share("swpout_count", "swpout_fallback_count")
    return out
