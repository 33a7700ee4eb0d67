"""Swap-out throughput: tasks writing anonymous memory into a memcg that must swap.

:class:`SwapModel` is the usemem / vm-scalability ``swap-w-seq`` workload as
the kernel runs it, and a :class:`~mmcost.mechanism.Mechanism`: every field
below is a fitted parameter, a fixed parameter with a prior, or a column of
the user's frame (``SwapModel().fit(df)``, ``fit.predict(configs)``).

``processes`` processes of ``threads`` threads each (one mm per process)
write ``bytes_per_process`` into a memcg of ``memcg_mb``; everything beyond
the limit is reclaimed by the writers themselves (memcg direct reclaim:
``try_charge_memcg`` -> ``try_to_free_mem_cgroup_pages``) and written to the
swap device. In steady state each writer alternates faulting in new folios
and reclaiming old ones, so the operation is *swap out one folio*:

- fault side, for the 1/s folios written per folio swapped (s = swapped
  share): the fault (``do_anonymous_page``, ``alloc_anon_folio`` for mTHP,
  ``do_huge_pmd_anonymous_page`` for 2M), ``clear_page`` at one core's write
  bandwidth, one PTE (or PMD) install and one first-touch page walk per
  translation (a 2-D walk in a guest), and usemem's own store;
- reclaim side (``shrink_folio_list``): the lruvec lock, the rmap walk and
  unmap (one entry per PTE, one PMD for a 2M THP), and its TLB flush. A dirty
  folio is flushed before ``pageout()`` (``try_to_unmap_flush_dirty``,
  commit d950c9477d51, v4.3), so an anonymous folio being swapped out is
  flushed alone, not once per 32-folio batch. The flush goes to the CPUs of
  the *owner's* mm: the memcg's LRU mixes the pages of every process in it,
  so a reclaimer mostly unmaps other processes' pages and IPIs the CPUs they
  run on (x86; remote shootdowns, VM exits in a guest) or broadcasts TLBIs
  that queue at the interconnect's DVM node and waits one DSB per flush
  (arm64); swap slot allocation under ``si->lock`` (or per-cluster locks),
  the swap cache, the device's CPU work (copy, compression, I/O submit), free;
- a large folio the kernel cannot swap out whole (before v6.10 below PMD
  size: ``add_to_swap`` fails, ``split_folio_to_list`` splits it) pays the
  split under the lruvec lock, the split's unmap/remap of every PTE with one
  flush, then the 4K path per page; ``contiguous_failure`` of the others
  fail their contiguous slot allocation and split after the failed scan.

The writers contend at the shared stations (lruvec lock, ``si->lock``, the
swap cache tree lock where it was one, the arm64 DVM node, a block device,
DRAM bandwidth) through :class:`mmcost.locks.LockSystem`: exact MVA
(``solve()``) or the C++ DES (``solve("simulated")``). At most ``cpus``
writers run at once (a spinlock holder is not preempted), so more tasks than
CPUs time-share the CPUs. Times in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from . import cpu_models
from . import _validate as v
from .locks import Critical, Dist, Lock, LockSystem, Work
from .mechanism import Mechanism, Quantity, Result, knob
from .model import Prior
from .swap_devices import COMPRESSED, COMPRESSORS, DEVICES, RAM_DISKS, compress_us_per_page, decompress_us_per_page

PAGE_KB = 4
PMD_KB = 2048
#: folios per shrink_folio_list call (SWAP_CLUSTER_MAX, include/linux/swap.h)
RECLAIM_BATCH = 32
#: swap slots taken under si->lock per per-CPU cache refill (SWAP_SLOTS_CACHE_SIZE, mm/swap_slots.c)
SLOT_CACHE_BATCH = 64

#: priors of the compressor-derived fields, centred on the compressor's table values
_COMPRESSOR_PRIORS = {
    "compress_us_per_page": ("the compressor's lzbench speed (mmcost.swap_devices.COMPRESSORS) at the preset's "
                             "clock", 0.5),
    "decompress_us_per_page": ("the compressor's lzbench speed (mmcost.swap_devices.COMPRESSORS) at the "
                               "preset's clock", 0.5),
    "compression_ratio": ("lzbench's Silesia ratio for the compressor; a workload's own data differs", 0.5),
}


@dataclass(frozen=True)
class SwapModel(Mechanism):
    """One swap-out configuration (see the module docstring). Fields named
    like the kernel thing they are; ``None`` means "from the table": the
    ``kernel`` for switches, ``cpu_model`` for primitive costs and
    bandwidths, ``compressor`` for compression costs and ratio."""

    name: str = field(default="swap", kw_only=True)
    # --- workload --------------------------------------------------------------------------------
    processes: int = knob(1, unit="count", doc="writer processes, each with its own mm")
    threads: int = knob(1, unit="count", doc="writer threads per process (sharing its mm)")
    cpus: int | None = knob(None, kind="int", unit="count", doc="CPUs (vCPUs) the writers run on; None: one each")
    bytes_per_process: float = knob(float(2**30), unit="bytes", lower=4096.0, upper=2.0**50,
                                    doc="bytes each process writes (split among its threads)")
    memcg_mb: float | None = knob(512.0, kind="float", unit="MiB", lower=1.0, upper=2.0**30,
                                  doc="memcg limit; None: no memcg (give swapped_share)")
    swapped_share: float | None = knob(None, kind="float", unit="1", upper=1.0,
                                       doc="share of written bytes swapped out; None: from memcg_mb")
    folio_kb: int = knob(4, unit="KiB", doc="folio size faults ask for (the one hugepages-<size>kB enabled)")
    madvise: bool = knob(False, doc="MADV_HUGEPAGE: large-folio faults may reclaim, so they never fall back")
    large_share: float | None = knob(None, kind="float", unit="1", upper=1.0,
                                     doc="share of bytes faulted as folio_kb (the rest 4K); None: the fallback rule")
    fault_reclaim_pages: float = knob(
        32.0, unit="pages", lower=1.0, upper=1e6,
        prior=Prior(32.0, 16.0, "try_charge_memcg reclaims max(nr_pages, SWAP_CLUSTER_MAX = 32) pages per "
                                "charge that hits the limit (mm/memcontrol.c); overshoot makes it larger"),
        doc="headroom one order-0 charge's reclaim leaves for the large-folio faults after it")
    contiguous_failure: float = knob(0.0, unit="1", upper=1.0,
                                     doc="share of large folios failing contiguous slot allocation (swpout_fallback)")
    # --- swap device -------------------------------------------------------------------------------
    swap_device: str = knob("zram", choices=DEVICES, doc="brd, pmem, zram, zswap, nvme or ssd")
    compressor: str = knob("lzo-rle", choices=tuple(COMPRESSORS), doc="zram comp_algorithm / zswap compressor")
    compression_ratio: float | None = knob(None, kind="float", unit="1", lower=1.0, upper=1e4,
                                           doc="original / compressed size; None: the compressor's typical")
    zswap_writeback_share: float = knob(0.0, unit="1", upper=1.0,
                                        doc="zswap: share of stored pages written back to the backing device")
    bandwidth_mib_s: float = knob(3000.0, unit="MiB/s", lower=1e-3, upper=1e7,
                                  prior=Prior(3000.0, 1500.0, "PCIe 4.0 x4 NVMe SSD sequential write: 2-5 GB/s"),
                                  doc="block device (nvme/ssd, zswap backing) write bandwidth")
    latency_us: float = knob(20.0, unit="us", upper=1e6,
                             prior=Prior(20.0, 10.0, "NVMe flash write to the drive's DRAM cache: ~10-30 us"),
                             doc="block device write latency")
    queue_depth: int = knob(32, unit="count", doc="block device I/Os in flight")
    # --- machine ---------------------------------------------------------------------------------
    cpu_model: str | None = knob(None, kind="str", choices=tuple(cpu_models.PRESETS),
                                 doc="CPU preset (mmcost.cpu_models); None: generic for the arch")
    arch: str | None = knob(None, kind="str", choices=("x86", "arm64"), doc="None: the cpu_model's",
                            aliases=(("x86_64", "x86"), ("amd64", "x86"), ("aarch64", "arm64")))
    virtualized: bool = knob(False, doc="a KVM guest: IPIs exit to the host, page walks are 2-D")
    kernel: str = knob("6.18", doc="kernel version: selects every switch left None (mmcost.kernel)")
    # --- kernel switches (None: from the kernel) ---------------------------------------------------
    slot_cache: bool | None = knob(None, kind="bool", kernel=True, doc="per-CPU swap slot cache (v4.11-v6.14)")
    swap_alloc_lock: str | None = knob(None, kind="str", kernel=True, choices=("si_lock", "per_cluster"),
                                       doc="swap allocation under si->lock or per-cluster locks (v6.14)")
    slot_lock_partitions: int | None = knob(None, kind="int", doc="allocation locks; None: 1, or cpus per-cluster")
    swapcache_lock_partitions: int | None = knob(None, kind="int", kernel=True,
                                                 doc="contended swap cache tree locks (0: not contended, v4.10)")
    writeback_tags: bool | None = knob(None, kind="bool", kernel=True, doc="radix-tree writeback tags (before v4.9)")
    swap_whole_mthp: bool | None = knob(None, kind="bool", kernel=True, doc="mTHP below PMD size swapped out whole")
    swap_whole_pmd_thp: bool | None = knob(None, kind="bool", kernel=True, doc="PMD THP swapped out whole (v4.13)")
    anon_mthp: bool | None = knob(None, kind="bool", kernel=True, doc="anonymous mTHP faults exist (v6.8)")
    batched_split_flush: bool | None = knob(None, kind="bool", kernel=True,
                                            doc="a split's PTE unmaps flushed once, not one by one (v6.8)")
    flush_dirty_before_pageout: bool | None = knob(None, kind="bool", kernel=True,
                                                   doc="try_to_unmap_flush_dirty before pageout (v4.3)")
    batched_unmap_flush: bool | None = knob(None, kind="bool", kernel=True,
                                            doc="deferred, batched unmap flush (x86 v4.3, arm64 v6.5)")
    mm_cpus: int | None = knob(None, kind="int", doc="CPUs in each mm's cpumask; None: min(threads, cpus)")
    # --- costs ---------------------------------------------------------------------------------
    fault_us: float = knob(1.5, unit="us", lower=0.01, upper=100.0,
                           prior=Prior(1.5, 0.75, "will-it-scale page_fault1: one anonymous fault (entry, allocation, "
                                                  "memcg charge, rmap) costs 1-2 us on a server core"),
                           doc="per fault, besides zeroing and PTEs")
    user_us_per_page: float = knob(0.1, unit="us", upper=10.0,
                                   prior=Prior(0.1, 0.05, "usemem's store loop over a just-zeroed, cache-hot 4 KiB "
                                                          "page: 16-32 B per cycle at 2.5-3 GHz"),
                                   doc="user time writing one page")
    core_write_gb_s: float | None = knob(None, kind="float", unit="GB/s", lower=0.05, upper=500.0,
                                         doc="one core's streaming write bandwidth (clear_page, memcpy)")
    mem_bw_gb_s: float | None = knob(None, kind="float", unit="GB/s", lower=0.1, upper=1e5,
                                     doc="DRAM bandwidth shared by all writers (a station)")
    pte_us: float = knob(0.05, unit="us", upper=5.0,
                         prior=Prior(0.05, 0.03, "one PTE update with its rmap and counter work: tens of ns"),
                         doc="per PTE set, cleared or walked")
    reclaim_us: float = knob(3.0, unit="us", lower=0.01, upper=1000.0,
                             prior=Prior(3.0, 1.5, "shrink_folio_list per folio without I/O (folio_referenced + "
                                                   "try_to_unmap rmap walks, add_to_swap, __remove_mapping, free)"),
                             doc="per folio reclaimed, outside any lock")
    lru_hold_us: float = knob(0.1, unit="us", upper=100.0,
                              prior=Prior(0.1, 0.05, "isolate_lru_folios / move_folios_to_lru: list and counter "
                                                     "updates, ~0.1 us per folio under the lruvec lock"),
                              doc="per folio under the memcg's lruvec lock")
    slot_hold_us: float = knob(
        1.0, unit="us", upper=100.0,
        prior=Prior(1.0, 0.6, "get_swap_pages -> scan_swap_map_slots / swap_alloc_cluster under si->lock write "
                              "swap_info_struct fields (cluster_next, lowest_bit, highest_bit, inuse_pages, "
                              "cluster lists): several cache lines that sit on the previous holder's core when "
                              "the lock is busy, 100-200 ns each on a server mesh (Boyd-Wickizer et al., Linux "
                              "Symposium 2012, sec. 3: a contended section's data moves with its lock)"),
        doc="per allocation under si->lock, whatever it allocates (a cache refill, one page, a large folio)")
    slot_us_per_slot: float = knob(
        0.03, unit="us", upper=10.0,
        prior=Prior(0.03, 0.02, "per slot scanned and taken: one swap_map byte (SWAP_HAS_CACHE) and the "
                                "cluster's count in lines the holder already has, tens of ns"),
        doc="per swap slot allocated, under si->lock")
    swapcache_us: float = knob(0.5, unit="us", upper=50.0,
                               prior=Prior(0.5, 0.25, "__add_to_swap_cache + __remove_mapping: one tree or xarray "
                                                      "insert and delete, a few hundred ns each"),
                               doc="per folio swap cache insert + delete (half each)")
    tag_hold_us: float = knob(0.25, unit="us", upper=50.0,
                              prior=Prior(0.25, 0.15, "one radix_tree_tag_set/clear walk under tree_lock"),
                              doc="per folio and writeback-tag site")
    split_us_per_page: float = knob(0.5, unit="us", upper=100.0,
                                    prior=Prior(0.5, 0.25, "__split_huge_page_tail per subpage: flags, refcount, "
                                                           "mapping and LRU link of one struct page"),
                                    doc="per subpage of a split folio, under the lruvec lock")
    compress_us_per_page: float | None = knob(None, kind="float", unit="us", upper=1e4,
                                              doc="compression of one page; None: the compressor's")
    decompress_us_per_page: float | None = knob(None, kind="float", unit="us", upper=1e4,
                                                doc="decompression (zswap writeback); None: the compressor's")
    io_submit_us: float = knob(3.0, unit="us", upper=1000.0,
                               prior=Prior(3.0, 1.5, "swap_writepage -> submit_bio -> nvme_queue_rq and its "
                                                     "completion interrupt: a few us of CPU per I/O"),
                               doc="CPU per block I/O (one per folio)")
    invlpg_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one INVLPG")
    full_flush_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="a local full flush")
    ipi_send_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI per target, sender")
    irq_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI handling on a target")
    walk_ns: float | None = knob(None, kind="float", unit="ns", upper=1e5, doc="one native page walk")
    refill_pages_per_full_flush: float = knob(
        8.0, unit="pages", upper=1e6,
        prior=Prior(8.0, 6.0, "usemem's loop between faults touches its code, stack and data pointers: a handful "
                              "of 4K translations, each one walk after a full flush (mmcost.tlb.refill_misses, "
                              "working set << TLB)"),
        doc="translations re-walked after a full flush")
    nested_walk_factor: float = knob(3.0, unit="1", lower=1.0, upper=20.0,
                                     prior=Prior(3.0, 1.0, "Bhargava et al., ASPLOS 2008: a 2-D walk makes up to 24 "
                                                           "references instead of 4, cut by page-walk caches"),
                                     doc="page-walk cost in a guest over native")
    vm_exit_factor: float = knob(3.0, unit="1", lower=1.0, upper=100.0,
                                 prior=Prior(3.0, 1.5, "Agesen et al., USENIX ATC 2012: an ICR write exits and the "
                                                       "interrupt is injected on entry; Ouyang & Lange, VEE 2016"),
                                 doc="IPI cost in a guest over native")
    tlbi_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one broadcast TLBI at the DVM node")
    dsb_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one DSB ISH wait (arm64)")

    METRICS: ClassVar = ("usemem_throughput_kib_s", "swapout_kib_s", "vm_scalability_throughput_kib_s",
                         "sys_time_s", "real_time_s", "tlb_shootdowns_per_swapped_page", "cycles_share_pct",
                         "large_fault_share_pct")
    FREE: ClassVar = ("reclaim_us", "core_write_gb_s")

    # --- configuration ---------------------------------------------------------------------------
    def check(self) -> None:
        v.count("processes", self.processes)
        v.count("threads", self.threads)
        if self.cpus is not None:
            v.count("cpus", self.cpus)
        kb = v.count("folio_kb", self.folio_kb, minimum=PAGE_KB)
        if kb % PAGE_KB or (kb // PAGE_KB) & (kb // PAGE_KB - 1) or kb > PMD_KB:
            raise ValueError(f"folio_kb must be 4 KiB times a power of two, at most {PMD_KB}, got {kb}")
        v.count("queue_depth", self.queue_depth)
        for name in ("slot_lock_partitions", "mm_cpus"):
            if self.get(name) is not None:
                v.count(name, self.get(name))
        if self.swapcache_lock_partitions is not None:
            v.count("swapcache_lock_partitions", self.swapcache_lock_partitions, minimum=0)
        if self.swapped_share is None:
            if self.memcg_mb is None:
                raise ValueError("memcg_mb: give a memcg limit or swapped_share (the share of written bytes swapped)")
            self._swapped_share()  # raises naming memcg_mb when nothing would swap
        elif self.swapped_share <= 0:
            raise ValueError(f"swapped_share must be > 0 (nothing would swap), got {self.swapped_share}")
        from .kernel import parse_version

        parse_version(self.kernel)

    def table_values(self) -> dict:
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(self.arch or "x86")
        out = dict(cpu.costs())
        out["arch"] = cpu.arch if self.cpu_model else (self.arch or "x86")
        out["compress_us_per_page"] = compress_us_per_page(self.compressor, cpu.clock_ghz)
        out["decompress_us_per_page"] = decompress_us_per_page(self.compressor, cpu.clock_ghz)
        out["compression_ratio"] = COMPRESSORS[self.compressor][2]
        return out

    @property
    def PRIORS(self) -> dict:  # noqa: N802 - the Mechanism hook
        return cpu_models.relative_priors(self.table_values(), _COMPRESSOR_PRIORS)

    @property
    def writers(self) -> int:
        return self.processes * self.threads

    @property
    def running(self) -> int:
        """Writers on a CPU at once (the closed network's population)."""
        return min(self.writers, self.cpus or self.writers)

    @property
    def written_bytes(self) -> float:
        return self.processes * self.bytes_per_process

    def _swapped_share(self) -> float:
        """Share of written bytes swapped out. With zswap the compressed pool is
        charged to the memcg too (``obj_cgroup_charge_zswap``): a limit L
        holding resident R and the pool of what stays in it, (W - R)(1 - w)/c,
        gives R = (L - W(1-w)/c) / (1 - (1-w)/c)."""
        if self.swapped_share is not None:
            return float(self.swapped_share)
        w_bytes, limit = self.written_bytes, self.memcg_mb * 2**20
        resident = limit
        if self.swap_device == "zswap":
            kept = (1.0 - self.zswap_writeback_share) / self.compression_ratio
            resident = (limit - w_bytes * kept) / (1.0 - kept)
            if resident <= 0:
                raise ValueError(f"memcg_mb: the zswap pool alone ({w_bytes * kept / 2**20:.0f} MiB) exceeds the "
                                 f"limit ({self.memcg_mb:g} MiB); raise zswap_writeback_share")
        share = 1.0 - resident / w_bytes
        if share <= 0:
            raise ValueError(f"memcg_mb: the limit ({self.memcg_mb:g} MiB) is not below the data written "
                             f"({w_bytes / 2**20:g} MiB): nothing would swap")
        return share

    def large_fault_share(self) -> float:
        """Share of written bytes that were faulted as ``folio_kb`` folios.

        A large-folio fault charges the memcg with a gfp mask that cannot
        reclaim unless the VMA is madvised (``vma_thp_gfp_mask``): at the limit
        the charge fails and the fault falls back to order 0
        (``anon_fault_fallback_charge``), after which the range is filled with
        4K pages. The 4K faults' charges do reclaim, ``fault_reclaim_pages`` at a
        time, and the headroom each leaves is what the next large faults use:
        a folio of n pages succeeds while n fits, so a share ~ 1 - n / R of the
        bytes after the limit is first reached, and every fault before it."""
        if self.large_share is not None:
            return float(self.large_share)
        if self.folio_kb == PAGE_KB or self.madvise:
            return 1.0
        if self.memcg_mb is None:
            return 1.0
        before = min(1.0, self.memcg_mb * 2**20 / self.written_bytes)
        steady = max(0.0, 1.0 - (self.folio_kb // PAGE_KB) / self.fault_reclaim_pages)
        return before + (1.0 - before) * steady

    # --- the operation: swap out one folio -----------------------------------------------------------
    def _targets(self, folios: float) -> float:
        """Expected remote CPUs of one flush covering ``folios`` folios: the
        union of the owners' cpumasks, minus the reclaimer's CPU. The memcg's
        LRU holds every process's pages in fault order, so each folio belongs
        to a uniformly drawn process."""
        cpus = self.cpus or self.writers
        mm = self.mm_cpus or min(self.threads, cpus)
        p = self.processes
        hit = 1.0 - (1.0 - 1.0 / p) ** folios  # a given mm owns at least one folio of the flush
        return min(cpus - 1, (mm - 1) * hit + (p - 1) * mm * hit)

    def _flush(self, entries: int, folios: float, batched: bool) -> dict:
        """One flush round for ``entries`` unmapped translations of ``folios``
        folios: the sender's CPU time, the targets' CPU time, shootdowns,
        broadcast TLBIs (arm64). x86 ``arch_tlbbatch_flush`` is a full flush;
        an unbatched flush (``ptep_clear_flush``) INVLPGs up to the ceiling."""
        vm = self.vm_exit_factor if self.virtualized else 1.0
        walk_us = self.walk_ns * 1e-3 * (self.nested_walk_factor if self.virtualized else 1.0)
        refill = self.refill_pages_per_full_flush * walk_us
        if self.arch == "arm64":
            return dict(sender=self.dsb_us, targets=0.0, shootdowns=0.0, tlbis=float(entries))
        full = batched or entries > 33  # tlb_single_page_flush_ceiling
        local = self.full_flush_us + refill if full else entries * self.invlpg_us
        t = self._targets(folios)
        sender = local + (t * self.ipi_send_us + (self.irq_us if t > 0 else 0.0)) * vm
        return dict(sender=sender, targets=t * (self.irq_us * vm + local), shootdowns=t, tlbis=0.0)

    def _zero_us(self, pages: float) -> float:
        return pages * 4.096 / self.core_write_gb_s

    def _device(self, pages: int) -> tuple[float, float, float]:
        """(writer CPU us, block-device station us, DRAM bytes) per I/O of ``pages`` pages."""
        dev, kib = self.swap_device, pages * PAGE_KB
        io = max(kib / 1024 / self.bandwidth_mib_s * 1e6, self.latency_us / self.queue_depth)
        if dev in RAM_DISKS:  # memcpy: read 4 KiB, write 4 KiB
            return 2 * self._zero_us(pages), 0.0, 8192.0 * pages
        if dev in COMPRESSED:
            store = self._zero_us(pages) / self.compression_ratio
            cpu = pages * self.compress_us_per_page + store
            dram = 4096.0 * pages * (1 + 1 / self.compression_ratio)
            if dev == "zswap" and self.zswap_writeback_share > 0:
                w = self.zswap_writeback_share
                cpu += w * (pages * self.decompress_us_per_page + self.io_submit_us)
                return cpu, w * io, dram + w * 8192.0 * pages
            return cpu, 0.0, dram
        return self.io_submit_us, io, 4096.0 * pages  # nvme/ssd: DMA reads the page

    def _whole(self, kb: int) -> bool:
        if kb == PAGE_KB:
            return True
        if kb == PMD_KB:
            return bool(self.switch("swap_whole_pmd_thp"))
        return bool(self.switch("swap_whole_mthp"))

    def _stages(self, kb: int) -> dict[str, float]:
        """Per folio of ``kb`` KiB swapped out: ``fault`` (per folio written),
        ``work`` (the rest of the writers' CPU time, targets' included), the
        holds at each station, ``tlbis``, ``dram`` bytes and ``shootdowns``."""
        pages = kb // PAGE_KB
        if self._whole(kb):
            whole = self._path(kb, whole=True)
            f = self.contiguous_failure if pages > 1 else 0.0
            if f == 0:
                return whole
            split = self._path(kb, whole=False)
            split["slot"] += self.slot_hold_us  # the failed contiguous scan
            return {k: (1 - f) * whole[k] + f * split[k] for k in whole}
        return self._path(kb, whole=False)

    def _path(self, kb: int, whole: bool) -> dict[str, float]:
        pages = kb // PAGE_KB
        entries = 1 if kb == PMD_KB else pages  # translations faulted: a 2M THP is one PMD
        walk_us = self.walk_ns * 1e-3 * (self.nested_walk_factor if self.virtualized else 1.0)
        per_folio_flush = bool(self.switch("flush_dirty_before_pageout"))
        batched = bool(self.switch("batched_unmap_flush"))
        slot_cache = bool(self.switch("slot_cache"))
        # one acquisition per 64-slot refill of the per-CPU cache, per page without it, per large folio
        per_slot = (self.slot_hold_us / SLOT_CACHE_BATCH if slot_cache else self.slot_hold_us) + self.slot_us_per_slot
        units = 1 if whole else pages  # swap-cache entries, slot allocations, I/Os
        d = {"fault": self.fault_us + self._zero_us(pages) + pages * self.user_us_per_page
                      + entries * (self.pte_us + walk_us),
             "lru": self.lru_hold_us,
             "slot": self.slot_hold_us + pages * self.slot_us_per_slot if (whole and pages > 1) else per_slot * pages,
             "cache_insert": units * self.swapcache_us / 2, "cache_delete": units * self.swapcache_us / 2,
             "tags": units * self.tag_hold_us if self.switch("writeback_tags") else 0.0,
             "dram_fault": 4096.0 * pages}

        def flushes(n_entries, folios):  # flush rounds per folio and their cost
            if not batched:  # one flush per PTE as it is cleared (ptep_clear_flush)
                one = self._flush(1, 1, batched=False)
                return {k: x * n_entries for k, x in one.items()}
            group = 1 if per_folio_flush else RECLAIM_BATCH
            one = self._flush(n_entries * group, folios * group, batched=True)
            return {k: x / group for k, x in one.items()}

        if whole:
            cpu, dev, dram = self._device(pages)
            work = self.reclaim_us + pages * self.pte_us + cpu
            if kb == PMD_KB:
                # shrink_folio_list passes TTU_SPLIT_HUGE_PMD for a PMD-mappable folio (v4.5 on): try_to_unmap
                # splits the PMD (pmdp_invalidate: a synchronous flush of the range; 512 PTEs written), then
                # unmaps and invalidates every PTE like a PTE-mapped folio's
                sync = self._flush(1, 1, batched=False)
                work += pages * self.pte_us + sync["sender"] + sync["targets"]
            else:
                sync = dict.fromkeys(("tlbis", "shootdowns"), 0.0)
            fl = flushes(pages, 1)
            d["work"] = work + fl["sender"] + fl["targets"]
            d["device"], d["dram"] = dev, dram
            d["tlbis"], d["shootdowns"] = fl["tlbis"] + sync["tlbis"], fl["shootdowns"] + sync["shootdowns"]
        else:  # split: unmap + remap every PTE (one flush), then the 4K path per page
            cpu, dev, dram = self._device(1)
            if batched and self.switch("batched_split_flush"):
                split = self._flush(pages, 1, batched=True)
            else:  # try_to_migrate without TTU_BATCH_FLUSH: ptep_clear_flush per PTE
                split = {k: x * pages for k, x in self._flush(1, 1, batched=False).items()}
            fl = flushes(1, 1)
            d["work"] = (2 * pages * self.pte_us + split["sender"] + split["targets"]
                         + pages * (self.reclaim_us + self.pte_us + cpu + fl["sender"] + fl["targets"]))
            d["lru"] += pages * self.split_us_per_page
            d["device"] = pages * dev
            d["tlbis"] = split["tlbis"] + pages * fl["tlbis"]
            d["shootdowns"] = split["shootdowns"] + pages * fl["shootdowns"]
            d["dram"] = pages * dram
        return d

    def _mix(self) -> tuple[dict[str, float], float]:
        """Stages of the average folio swapped, and the KiB it holds."""
        if self.folio_kb not in (PAGE_KB, PMD_KB) and not self.switch("anon_mthp"):
            raise ValueError(f"folio_kb={self.folio_kb}: kernel {self.kernel} has no anonymous mTHP (v6.8); "
                             "set anon_mthp=True for a patched kernel")
        share = self.large_fault_share()
        sizes = [(self.folio_kb, share)]
        if self.folio_kb > PAGE_KB and share < 1:
            sizes.append((PAGE_KB, 1 - share))  # fallback faults got 4K folios
        folios = [(kb, s / kb) for kb, s in sizes if s > 0]  # folios per KiB written
        total = sum(w for _, w in folios)
        per_size = [(w / total, kb, self._stages(kb)) for kb, w in folios]
        d = {k: sum(w * st[k] for w, _, st in per_size) for k in per_size[0][2]}
        return d, sum(w * kb for w, kb, _ in per_size)

    def system(self) -> LockSystem:
        """The closed network this configuration solves (see the module docstring)."""
        return self._network()[0]

    def _network(self) -> tuple[LockSystem, float, dict]:
        d, kib = self._mix()
        s = self._swapped_share()

        def hold(us):
            return Dist.exponential(us)

        partitions = self.slot_lock_partitions or (
            (self.cpus or self.writers) if self.switch("swap_alloc_lock") == "per_cluster" else 1)
        stages = [Work(hold(d["fault"] / s + d["work"])),
                  Critical("lru_lock", "isolate_lru_folios", hold(d["lru"])),
                  Critical("si_lock", "get_swap_pages", hold(d["slot"]))]
        locks = [Lock("lru_lock"), Lock("si_lock", partitions=int(partitions))]
        contended = self.switch("swapcache_lock_partitions")
        if contended:
            # the swap cache's tree lock: spin_lock_irq at every site (v4.8 mm/swap_state.c, mm/vmscan.c,
            # mm/page-writeback.c); with writeback tags two more sites take it per page
            stages.append(Critical("swapcache", "__add_to_swap_cache", hold(d["cache_insert"]), irq_disabled=True))
            if self.switch("writeback_tags"):
                stages.append(Critical("swapcache", "__test_set_page_writeback", hold(d["tags"]), irq_disabled=True))
                stages.append(Critical("swapcache", "test_clear_page_writeback", hold(d["tags"]), irq_disabled=True))
            stages.append(Critical("swapcache", "__remove_mapping", hold(d["cache_delete"]), irq_disabled=True))
            locks.append(Lock("swapcache", partitions=int(contended)))
        else:
            stages[0] = Work(hold(d["fault"] / s + d["work"] + d["cache_insert"] + d["cache_delete"] + d["tags"]))
        if self.arch == "arm64" and d["tlbis"] > 0:
            # a broadcast TLBI is a DVM operation, and the interconnect serialises them (Arm CoreLink CMN-600
            # TRM: one DVM node handles every DVM message): all CPUs' TLBIs queue at one FIFO station
            stages.append(Critical("dvm", "tlbi_broadcast", hold(d["tlbis"] * self.tlbi_us)))
            locks.append(Lock("dvm"))
        if d["device"] > 0:
            stages.append(Critical("device", "swap_writepage", hold(d["device"])))
            locks.append(Lock("device"))
        # DRAM: every byte zeroed, copied or compressed crosses the memory controllers (GB/s = 1e3 B/us)
        dram_bytes = d["dram_fault"] / s + d["dram"]  # per folio swapped
        stages.append(Critical("dram", "memory_bandwidth", hold(dram_bytes / (self.mem_bw_gb_s * 1e3))))
        locks.append(Lock("dram"))
        info = dict(kib=kib, swapped_share=s, shootdowns=d["shootdowns"], tlbis=d["tlbis"], device_us=d["device"])
        return LockSystem(self.running, tuple(locks), tuple(stages)), kib, info

    # --- solving ---------------------------------------------------------------------------------------
    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """Throughputs, times and counters of this configuration; ``solver="simulated"``
        runs the DES and reports 99% intervals. ``result["swapout_kib_s"]``,
        ``result.table()``; ``result.details["locks"]`` is the lock result."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        net, kib, info = self._network()
        res = net.analytic() if solver == "analytic" else net.simulate(**simulate_kwargs)
        x = float(res.system["throughput_per_s"])  # folios swapped per second
        half = float(res.system.get("throughput_per_s_ci99", 0.0)) / x if x > 0 else 0.0
        s = info["swapped_share"]
        swapout = x * kib
        per_proc = swapout / s / self.processes
        real = self.bytes_per_process / 1024 / per_proc
        at_device = 0.0  # writers waiting for the block device, off-CPU (Little's law)
        if "device" in res.locks.index:
            row = res.locks.loc["device"]
            at_device = (row["wait_avg_us"] + info["device_us"]) * row["acquisitions_per_s"] / 1e6
        user = self.written_bytes / 4096 * self.user_us_per_page * 1e-6
        sys_time = max(0.0, (self.running - at_device) * real - user)
        values = [("swapout_kib_s", swapout, "KiB/s"), ("usemem_throughput_kib_s", per_proc, "KiB/s"),
                  ("vm_scalability_throughput_kib_s", per_proc * self.processes, "KiB/s"),
                  ("real_time_s", real, "s"), ("sys_time_s", sys_time, "s"),
                  ("tlb_shootdowns_per_swapped_page", info["shootdowns"] / (kib / PAGE_KB), "1/page"),
                  ("large_fault_share_pct", 100 * self.large_fault_share(), "%"),
                  ("swapped_share", s, "1"), ("folios_per_s", x, "1/s")]
        scale = {"swapout_kib_s", "usemem_throughput_kib_s", "vm_scalability_throughput_kib_s", "folios_per_s"}
        qs = tuple(Quantity(n, val, u, val * (1 - half) if n in scale else val, val * (1 + half) if n in scale else val)
                   for n, val, u in values)
        title = (f"{self.processes} x {self.threads} writers on {self.cpus or self.writers} CPUs, "
                 f"{self.folio_kb}K folios, {self.swap_device}, kernel {self.kernel}")
        return Result(qs, solver, 0.99 if solver == "simulated" else 1.0, bool(self.fitted_on), title,
                      details={"locks": res, "system": net})

    def metric_value(self, result: Result, metric: str, rows: pd.DataFrame) -> np.ndarray:
        if metric == "cycles_share_pct":
            sites = result.details["locks"].sites
            if "call_site" not in rows.columns:
                raise ValueError("cycles_share_pct rows need a call_site column")
            return np.array([float(sites.loc[site_of(c), "spin_share_pct"]) if site_of(c) in sites.index else 0.0
                             for c in rows["call_site"]])
        return np.full(len(rows), result[metric])

    def swapout_cpu_us(self, kb: int, whole: bool) -> float:
        """CPU time to swap out one folio of ``kb`` KiB, whole or split to 4K
        first, without waiting at any shared station; the fault that wrote it is
        not included. ``swapout_cpu_us(kb, False) - swapout_cpu_us(kb, True)``
        is what one ``swpout_fallback`` costs."""
        kb = v.count("kb", kb, minimum=PAGE_KB)
        if kb % PAGE_KB or (kb // PAGE_KB) & (kb // PAGE_KB - 1) or kb > PMD_KB:
            raise ValueError(f"kb must be 4 KiB times a power of two, at most {PMD_KB}, got {kb}")
        if not isinstance(whole, bool):
            raise TypeError(f"whole must be a bool, got {type(whole).__name__}")
        d = self._path(kb, whole=whole or kb == PAGE_KB)
        return sum(d[k] for k in ("work", "lru", "slot", "cache_insert", "cache_delete", "tags"))


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
