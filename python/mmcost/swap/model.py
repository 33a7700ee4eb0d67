"""The swap model's fields, their checks and priors, and its solve (see :mod:`mmcost.swap`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from .. import _validate as v
from .. import cpu_models, lanes
from ..lanes import any_of, maximum, minimum
from ..locks import LockSystem, analytic_many
from ..mechanism import Mechanism, Quantity, Result, knob
from ..model import Prior
from ..tlb import flush_knob
from . import paths, reclaim, stations
from .constants import CONFIG_HZ_CHOICES, PAGE_KB, PMD_KB
from .devices import COMPRESSORS, DEVICES, SWAP_DATA, compress_us_per_page, decompress_us_per_page, figures
from .stations import site_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _dsb_growth() -> tuple[float, str]:
    """Growth of a DSB ISH wait per CPU in the inner shareable domain, from
    the two measurements of Barry Song's cover letter (v2 of "arm64: support
    batched/deferred tlb shootdown during page reclamation", lore
    20220711034615.482895-1-21cnbao@gmail.com): ``ptep_clear_flush`` (a TLBI
    and a DSB per page) takes 5.36% of one process paging out on an 8-core
    Snapdragon 888 and 16.99% on a Kunpeng 920 with "around 100" (96) cores.
    A share s is a cost ratio s / (1 - s) to the rest; with the rest alike,
    (1 + g (n2 - 1)) / (1 + g (n1 - 1)) = r gives g."""
    s1, n1, s2, n2 = 0.0536, 8, 0.1699, 96
    r = (s2 / (1 - s2)) / (s1 / (1 - s1))
    g = (r - 1) / ((n2 - 1) - r * (n1 - 1))
    return g, (f"Barry Song's arm64 batched-flush cover letter (v2, July 2022): ptep_clear_flush 5.36% of a paging-"
               f"out run on 8 cores, 16.99% on ~96 (Kunpeng 920): a cost ratio {r:.2f}, so {g:.3f} per CPU")


DSB_GROWTH, DSB_GROWTH_SOURCE = _dsb_growth()


def _free_lines() -> tuple[float, float, str]:
    """Per-page costs of freeing swapped-out zram memory, from the base kernel
    of Wenchao Hao's "mm/zsmalloc: reduce lock contention in zs_free()" (v6,
    June 2026; x86 i7-12700: processes each munmap 256 MB paged out to zram
    with lzo-rle, concurrently): 11.7 ms alone, 24.1 ms for 2, 63.0 ms for 4.
    With the work serialised (every freer waits for the shared lines), n
    processes take n pages (z + (n - 1)/n L): z is the serial part alone, L
    the lines that move when another CPU wrote them last. The 2- and
    4-process ratios give z and L (in units of the one-process time per page)."""
    t1, t2, t4, pages = 11.7e3, 24.1e3, 63.0e3, 256 * 2**20 // 4096
    a, b = t2 / t1, t4 / t1  # 2z + L = a, 4z + 3L = b
    z = (3 * a - b) / 2
    line = a - 2 * z
    per_page = t1 / pages
    return z * per_page, line * per_page, (
        f"Wenchao Hao, 'mm/zsmalloc: reduce lock contention in zs_free()' v6 (June 2026), base kernel, x86: "
        f"munmap of 256 MB in zram by 1/2/4 processes 11.7/24.1/63.0 ms: {line * per_page:.2f} us per page of "
        f"lines moved between freers, {z * per_page:.2f} us serial alone")


ZS_FREE_SERIAL_US, FREE_LINE_US, FREE_LINE_SOURCE = _free_lines()


#: the machine profile of the boot kvm_6_18_thp_split ran on (its kernel speed; checked by _split_costs)
SPLIT_PROFILE = ("kvm_6_18_swapin", "second_vm_profile_b.toml")


def _split_costs() -> tuple[tuple[float, float], tuple[float, float], str]:
    """What splitting an anonymous large folio to 4K costs, per page and per
    folio, in generic microseconds, from this project's own measurement
    (``kvm_6_18_thp_split``: one MADV_PAGEOUT of 64 MiB of folios whose last
    4K page was zapped, so that each is split first, against a 4K region
    paged out in the same run). Per size the median over the runs of the
    difference per page times the pages swapped per folio is the split's
    cost per folio; the line through 64K and 2M gives its per-page and
    per-folio parts, less the split's one local full flush, which the model
    charges apart (16K is left out to check them:
    tests/test_kvm_6_18_thp_split.py). They are that VM's; its kernel speed
    (the ``kvm_6_18_swapin`` profile of the same boot,
    :func:`mmcost.cpu_models.kernel_speed`) takes them to the generic machine.
    Each sd: the runs' spread of the median, :data:`~mmcost.cpu_models.MEASURED_ALLOWANCE`
    and :data:`~mmcost.cpu_models.KERNEL_SPEED_TRANSFER` in quadrature.
    Returns ((per page, sd), (per folio, sd), source)."""
    from .. import datasets

    d = datasets.load("kvm_6_18_thp_split")
    src = datasets.source("kvm_6_18_thp_split")
    wide = d.pivot_table(index=["variant", "run"], columns="metric", values="value").reset_index()
    per_folio = {}
    for kb in (64, 2048):
        runs = wide[wide["variant"] == f"{kb}K split first"]
        cost = (runs["reclaim_us_per_page"] - runs["reference_reclaim_us_per_page"]) * (kb // PAGE_KB - 1)
        q1, med, q3 = np.percentile(cost, [25, 50, 75])
        per_folio[kb] = (med, 1.253 * (q3 - q1) / 1.349 / np.sqrt(len(cost)))  # the median's standard error
    (a_val, a_se), (b_val, b_se) = per_folio[64], per_folio[2048]
    span = PMD_KB // PAGE_KB - 64 // PAGE_KB
    slope = (b_val - a_val) / span
    slope_se = np.hypot(a_se, b_se) / span
    share = 64 // PAGE_KB / span  # the intercept is a (1 + share) - b share
    profile_path = datasets.path(SPLIT_PROFILE[0]) / SPLIT_PROFILE[1]
    profile = tomllib.loads(profile_path.read_text())
    if profile["machine"]["boot_id"] != src["machine_boot_id"]:
        raise RuntimeError("kvm_6_18_thp_split was not measured on the VM of second_vm_profile_b.toml")
    # each split's unmap_folio ends in one local full flush (TTU_BATCH_FLUSH, try_to_unmap_flush: the caller
    # alone ran the mm), which the model charges apart (paths.split_pte_flush): out of the per-folio part, at
    # the x86 preset's price (a profile does not time it)
    flush_us = cpu_models.default_for("x86").costs()["full_flush_us"]
    icpt = a_val - 64 // PAGE_KB * slope - flush_us
    icpt_se = np.hypot(a_se * (1 + share), b_se * share)
    speed = cpu_models.kernel_speed(profile["fault"]["4K"]["fault_us_per_folio"]["value"])
    rel = np.hypot(cpu_models.MEASURED_ALLOWANCE, cpu_models.KERNEL_SPEED_TRANSFER)
    page = (slope / speed, np.hypot(rel * slope, slope_se) / speed)
    folio = (icpt / speed, np.hypot(rel * icpt, icpt_se) / speed)
    return page, folio, (
        f"measured on 6.18 (kvm_6_18_thp_split): a folio split before MADV_PAGEOUT costs {slope:.3f} us a page and "
        f"{icpt:.2f} us a folio (its local flush, {flush_us:.2f} us, taken out) more than its pages' 4K path (the "
        f"line through 64K and 2M) on a VM whose kernel speed is {speed:.2f}: divided by it")


(SPLIT_US_PER_PAGE, SPLIT_PAGE_SD), (SPLIT_US_PER_FOLIO, SPLIT_FOLIO_SD), SPLIT_SOURCE = _split_costs()

def _compressor_priors(data: str) -> dict[str, tuple[str, float]]:
    """Priors of the compressor-derived fields, centred on the compressor's table values for ``data``
    (mmcost.swap.devices.figures); each relative width 0.5."""
    if data == "usemem":
        speed = ratio = ("the compressor measured on usemem's data at another machine's clock, carried by the clock "
                         "(mmcost.swap.devices.usemem_figures)")
    else:
        speed = "the compressor's lzbench speed (mmcost.swap_devices.COMPRESSORS) at the preset's clock"
        ratio = "lzbench's Silesia ratio for the compressor; a workload's own data differs"
    return {"compress_us_per_page": (speed, 0.5), "decompress_us_per_page": (speed, 0.5),
            "compression_ratio": (ratio, 0.5)}


#: The costs of the kernel's own code paths whose priors are a generic machine's (a server core's,
#: read off the code or a thread), which ``kernel_speed`` scales to the machine: reclaim, the LRU, the
#: swap allocator and cache, the memcg counter, the buddy allocator, the exit's frees, brd's and the
#: block layer's work. Not in it: what a profile measures itself (the fault path, PTEs, IPIs, zeroing,
#: compression with zram's and zs_malloc's work, which its zram write includes), lines moved between
#: CPUs (the hardware's: ``lock_line_us``, ``lru_line_us``, ``free_line_us``, ``cold_line_us``, and
#: ``memcg_charge_hold_us``, whose prior is a line moved) and user time. The own work of the slot lock,
#: swap_avail_lock and zone->lock is in it; the lines their sections move (``lock_line_us``,
#: swap.paths.moved_share) are not. ``add_to_swap_us_per_folio``
#: is a part of ``reclaim_us_per_folio`` and scales with it.
KERNEL_PATH_FIELDS = ("reclaim_us_per_folio", "reclaim_us_per_page", "lru_hold_us_per_folio", "reference_us_per_folio",
                      "reference_us_per_page", "slot_hold_us_per_acquisition", "slot_us_per_slot", "swapcache_us_per_folio", "swapcache_us_per_page",
                      "tag_hold_us_per_page", "split_us_per_page", "swap_map_hold_us", "swap_avail_hold_us",
                      "zone_lock_hold_us", "swap_free_us_per_page",
                      "page_free_us_per_page", "zs_free_hold_us", "add_to_swap_us_per_folio", "brd_alloc_us_per_page",
                      "brd_xa_hold_us", "io_submit_us_per_io", "split_us_per_folio",
                      "split_locked_us_per_page")

#: windows a source's swap-out rate is averaged over (:attr:`SwapModel.rate_window`)
RATE_WINDOWS = ("loop", "lkp_job")
#: /sys/kernel/mm/transparent_hugepage/defrag (v4.6 on; v4.6's 444eb2a449ef added "defer", v4.11 "defer+madvise")
THP_DEFRAG = ("always", "defer", "defer+madvise", "madvise", "never")
#: the share of large faults that succeed while global reclaim runs, where a large fault may not reclaim or
#: compact (:attr:`SwapModel.thp_defrag`): nothing in the model decides it, so a flat prior's mean and sd
PRESSURE_SHARE_PRIOR = Prior(
    0.5, 0.29, "not modelled: a fault whose gfp mask may not reclaim or compact (GFP_TRANSHUGE_LIGHT) takes a "
    "large folio only where a free block of its order is at hand, which depends on how the reclaimed folios come "
    "back to the buddy allocator (split THPs return 4K pages through the per-CPU lists) and what else allocates; "
    "the mean and sd of a flat prior over [0, 1] (1/2, 1/sqrt(12)) as a Gaussian clipped to it, about 4% of the "
    "draws at each end")


@dataclass(frozen=True)
class SwapModel(Mechanism):
    """One swap-out configuration (see :mod:`mmcost.swap`). Fields named
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
    memcg_mb: float | None = knob(512.0, kind="float", unit="MiB", lower=1.0, upper=2.0**30, none_values=(float("inf"),),
                                  doc="memcg limit; None (a cell 'none' or inf): no memcg limit, global reclaim "
                                      "(give swapped_share)")
    memcgs: int = knob(1, unit="count", doc="memcgs the processes are spread over evenly, each limited to memcg_mb")
    swapped_share: float | None = knob(None, kind="float", unit="1", upper=1.0,
                                       doc="share of written bytes swapped out; None: from memcg_mb")
    rate_window: str = knob(
        "loop", choices=RATE_WINDOWS,
        doc="the window swapout_kib_s is averaged over: 'loop', the write loop usemem times its throughput over; "
            "'lkp_job', an LKP job's vmstat.swap.so: the mean of the vmstat monitor's 1 s samples over the whole "
            "test, the writers' exit included (SwapModel.rate_window_s)")
    folio_kb: int = knob(4, unit="KiB", doc="folio size faults ask for (the one hugepages-<size>kB enabled)")
    madvise: bool = knob(False, doc="MADV_HUGEPAGE: large-folio faults may reclaim, so they never fall back")
    large_share: float | None = knob(None, kind="float", unit="1", upper=1.0,
                                     doc="share of bytes faulted as folio_kb (the rest 4K); None: the fallback rule; "
                                         "no effect with folio_kb=4 (every fault is 4K)")
    thp_defrag: str | None = knob(None, kind="str", choices=THP_DEFRAG,
                                  doc="transparent_hugepage/defrag under global reclaim: whether a large fault may "
                                      "reclaim and compact (SwapModel.large_fault_may_reclaim); None: not stated, "
                                      "every fault large")
    pressure_large_share: float | None = knob(
        None, kind="float", unit="1", upper=1.0, prior=PRESSURE_SHARE_PRIOR,
        doc="global reclaim with thp_defrag set: the share of large faults that succeed while reclaim runs; None: "
            "1 where the fault may reclaim and compact, else 0.5 (PRESSURE_SHARE_PRIOR's mean)")
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
    swap_data: str = knob("silesia", choices=SWAP_DATA,
                          doc="what the swapped pages hold, for the compressor's speeds and ratio: lzbench's Silesia "
                              "corpus, or usemem's data (each word its index: mmcost-writer, usemem), measured")
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
    zs_size_classes: int = knob(1, unit="count",
                                doc="zsmalloc size classes the compressed pages fall in, each under its own "
                                    "class->lock (1: every page compresses alike, as usemem's pattern does)")
    zram_us_per_page: float = knob(
        0.3, unit="us", upper=100.0,
        prior=Prior(0.3, 0.15, "zram_write_page besides compression and zs_malloc: zram_slot_lock, the object "
                               "copy (zs_obj_write / zs_map_object), flags and stats: a few hundred ns"),
        doc="zram/zswap store work per page, outside any shared lock")
    zs_malloc_hold_us: float = knob(
        0.15, unit="us", upper=100.0,
        prior=Prior(0.15, 0.1, "zs_malloc under its size class's lock (mm/zsmalloc.c: find a zspage with a free "
                               "object, take it, fix the fullness list): one or two lines the last holder dirtied"),
        doc="per page stored, under its zsmalloc size class lock")
    brd_alloc_share: float = knob(1.0, unit="1", upper=1.0,
                                  doc="brd: share of pages written to sectors it has not backed yet (a fresh "
                                      "device: 1; brd frees a page only on discard)")
    brd_alloc_us_per_page: float = knob(
        0.3, unit="us", upper=100.0,
        prior=Prior(0.3, 0.15, "brd_insert_page: alloc_page(GFP_NOIO | __GFP_ZERO) from the per-CPU lists, "
                               "besides the zeroing (charged at the core's write bandwidth)"),
        doc="brd: allocating the backing page of a new sector, zeroing excluded")
    brd_xa_hold_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "brd_insert_page: xa_lock(&brd->brd_pages) around one __xa_cmpxchg insert "
                               "(drivers/block/brd.c; a radix_tree_insert under brd_lock before v6.4)"),
        doc="brd: the device-wide page-tree lock held per new backing page")
    # --- machine ---------------------------------------------------------------------------------
    cpu_model: str | None = knob(None, kind="str", choices=tuple(cpu_models.PRESETS), path_suffix=".toml",
                                 doc="CPU preset (mmcost.cpu_models) or a machine profile's path (mmcost measure "
                                     "machine); None: generic for the arch")
    arch: str | None = knob(None, kind="str", choices=("x86", "arm64"), doc="None: the cpu_model's",
                            aliases=(("x86_64", "x86"), ("amd64", "x86"), ("aarch64", "arm64")))
    virtualized: bool = knob(False, doc="a KVM guest: IPIs exit to the host, page walks are 2-D")
    numa_nodes: int | None = knob(None, kind="int", unit="count",
                                  doc="NUMA nodes (each its own LRU lists and kswapd), writers and their memory "
                                      "spread evenly; None: the cpu_model's sockets, else 1")
    machine_cpus: int | None = knob(None, kind="int", unit="count",
                                    doc="CPUs of the machine (arm64: the inner shareable domain every DSB waits "
                                        "on); None: the cpu_model's, else cpus")
    cgroup_v2: bool = knob(False, doc="the memcg is cgroup v2 (memory.max); v1 limit reclaim is never throttled")
    inactive_anon_mb: float | None = knob(None, kind="float", unit="MiB", lower=1.0, upper=2.0**30,
                                          doc="inactive anon LRU the reclaimers scan; None: the memcg limit's "
                                              "inactive share (inactive_is_low), no throttling under global reclaim")
    kswapd_share: float | None = knob(None, kind="float", unit="1", upper=1.0,
                                      doc="share of folios kswapd reclaims, pgsteal_kswapd / (pgsteal_kswapd + "
                                          "pgsteal_direct); None: 0 under a memcg limit, else kswapd's capacity")
    kernel: str = knob("6.18", doc="kernel version: selects every switch left None (mmcost.kernel)")
    # --- kernel switches (None: from the kernel) ---------------------------------------------------
    slot_cache: bool | None = knob(None, kind="bool", kernel=True, doc="per-CPU swap slot cache (v4.11-v6.14)")
    swap_alloc_lock: str | None = knob(None, kind="str", kernel=True, choices=("si_lock", "per_cluster"),
                                       doc="swap allocation under si->lock or per-cluster locks (v6.14)")
    swap_map_lock: str | None = knob(None, kind="str", kernel=True, choices=("si_lock", "cluster"),
                                     doc="the lock of swap-out's swap_map count updates (swap_duplicate, "
                                         "page_swapcount, swapcache_free): si->lock before v4.11, the cluster's after")
    slot_lock_partitions: int | None = knob(None, kind="int", doc="allocation locks; None: 1, or cpus per-cluster")
    swapcache_lock_partitions: int | None = knob(None, kind="int", kernel=True,
                                                 doc="contended swap cache tree locks (0: not contended, v4.11)")
    writeback_tags: bool | None = knob(None, kind="bool", kernel=True, doc="radix-tree writeback tags (before v4.9)")
    swap_cache_stats: bool | None = knob(None, kind="bool", kernel=True,
                                         doc="swap_cache_info's global counters written at every swap cache insert "
                                             "and delete (before v6.0)")
    memcg_charge_batch: int | None = knob(None, kind="int", kernel=True,
                                          doc="pages one memcg charge takes for the per-CPU stock (MEMCG_CHARGE_BATCH: "
                                              "32, 64 from v6.1)")
    pcp_high_order: bool | None = knob(None, kind="bool", kernel=True,
                                       doc="per-CPU page lists also cache orders 1-3 and the pageblock order (v5.13)")
    throttle_isolated_ms: float | None = knob(None, kind="float", kernel=True, unit="ms", upper=1e4,
                                              doc="sleep of a reclaimer that finds too many folios isolated")
    lru_lock_scope: str | None = knob(None, kind="str", kernel=True, choices=("zone", "node", "lruvec"),
                                      doc="what one LRU lock covers: a zone (to v4.7), a node (v4.8), a lruvec (v5.11)")
    lru_gen: bool | None = knob(None, kind="bool", kernel=True,
                                doc="MGLRU (CONFIG_LRU_GEN, v6.1; off unless built with LRU_GEN_ENABLED or "
                                    "/sys/kernel/mm/lru_gen/enabled set): evict_folios instead of shrink_inactive_list")
    anon_lru_start: str | None = knob(None, kind="str", kernel=True, choices=("active", "inactive"),
                                      doc="the list a new anon folio joins: active (to v5.8), inactive (v5.9)")
    lru_add_batch: int | None = knob(None, kind="int", kernel=True,
                                     doc="folios per lru_add folio_batch (PAGEVEC_SIZE: 15, 31 from v6.10)")
    swap_whole_mthp: bool | None = knob(None, kind="bool", kernel=True, doc="mTHP below PMD size swapped out whole")
    swap_whole_pmd_thp: bool | None = knob(None, kind="bool", kernel=True, doc="PMD THP swapped out whole (v4.14)")
    thp_swap_delay_split: bool | None = knob(None, kind="bool", kernel=True,
                                             doc="a PMD THP gets a swap cluster and the swap cache whole, then is "
                                                 "split before pageout (v4.13, 38d8b4e6bdc8)")
    anon_mthp: bool | None = knob(None, kind="bool", kernel=True, doc="anonymous mTHP faults exist (v6.8)")
    batched_split_flush: bool | None = knob(None, kind="bool", kernel=True,
                                            doc="a split's PTE unmaps flushed once, not one by one (v6.8)")
    freeze_walk_once: bool | None = knob(None, kind="bool", kernel=True,
                                         doc="a PMD THP's split freezes it in one rmap walk, not one per subpage "
                                             "(v4.11)")
    split_remap_dirty: bool | None = knob(None, kind="bool", kernel=True,
                                          doc="a split THP's pages are mapped back with their dirty bit (v6.0); "
                                              "before, clean")
    flush_dirty_before_pageout: bool | None = knob(None, kind="bool", kernel=True,
                                                   doc="try_to_unmap_flush_dirty before pageout (v4.3)")
    batched_unmap_flush: bool | None = knob(None, kind="bool", kernel=True,
                                            doc="deferred, batched unmap flush (x86 v4.3, arm64 v6.5)")
    tlbi_range: bool | None = knob(None, kind="bool", kernel=True,
                                   doc="arm64: range TLBIs where the CPU preset has FEAT_TLBIRANGE (v5.9)")
    contpte: bool | None = knob(None, kind="bool", kernel=True,
                                doc="arm64: 64K blocks of large folios mapped with the contiguous bit (v6.9)")
    mm_cpus: int | None = knob(None, kind="int", doc="CPUs in each mm's cpumask; None: min(threads, cpus)")
    pv_ipi: bool | None = flush_knob("pv_ipi")
    pv_tlb_flush: bool | None = flush_knob("pv_tlb_flush")
    concurrent_flush: bool | None = flush_knob("concurrent_flush")
    preempted_share: float = flush_knob("preempted_share")
    # --- costs ---------------------------------------------------------------------------------
    fault_us_per_folio: float | None = knob(None, kind="float", unit="us", lower=0.01, upper=100.0,
                                            doc="per fault, besides zeroing and PTEs; None: the cpu_model's (a "
                                                "machine profile's measured, else cpu_models.FAULT_PRIOR)")
    user_us_per_page: float = knob(0.1, unit="us", upper=10.0,
                                   prior=Prior(0.1, 0.05, "usemem's store loop over a just-zeroed, cache-hot 4 KiB "
                                                          "page: 16-32 B per cycle at 2.5-3 GHz"),
                                   doc="user time writing one page")
    core_write_gb_s: float | None = knob(None, kind="float", unit="GB/s", lower=0.05, upper=500.0,
                                         doc="one core's streaming write bandwidth (clear_page, memcpy)")
    mem_bw_gb_s: float | None = knob(None, kind="float", unit="GB/s", lower=0.1, upper=1e5,
                                     doc="sustained DRAM bandwidth shared by all writers (a station; None: the cpu_model's, "
                                         "cpu_models.SUSTAINED_BW_SHARE of its peak)")
    pte_us: float | None = knob(None, kind="float", unit="us", upper=5.0,
                                doc="per PTE set, cleared or walked; None: the cpu_model's (cpu_models.PTE_PRIOR)")
    host_touch_us_per_page: float | None = knob(
        None, kind="float", unit="us", upper=1000.0,
        doc="a guest's first touch of a 4 KiB page its host does not back (taken back through free page reporting, "
            "mm/page_reporting.c, v5.7): the EPT violation and the host's fault, per page; None: the cpu_model's "
            "(a machine profile's measured, mmcost-probe firsttouch; else 0, no host)")
    unbacked_share: float = knob(
        0.0, upper=1.0,
        doc="share of the large folios a run faults before its memcg limit recycles memory that land on memory the "
            "host does not back (mmcost.swap.paths.unbacked_touch_us); 0: backed (a run after mmcost measure "
            "swapout's warm-up, or bare metal)")
    kernel_speed: float | None = knob(None, kind="float", lower=0.05, upper=20.0,
                                      doc="time the machine takes for the kernel's own paths, relative to the "
                                          "generic machine of the kernel-path priors (the fields of the model's "
                                          "KERNEL_PATHS are multiplied by it: their fitted values are the generic "
                                          "machine's); None: the cpu_model's (a machine profile's measured fault "
                                          "path, cpu_models.kernel_speed; a preset's 1)")
    reclaim_us_per_folio: float = knob(
        1.5, unit="us", lower=0.01, upper=1000.0,
        prior=Prior(1.5, 1.25, "shrink_folio_list's work once per folio, whatever its size (mm/vmscan.c, v6.x), "
                               "besides its reference checks (reference_us_per_folio, paid per scan pass) and its "
                               "LRU lock holds: 0.79 us measured on 6.18 for what lazyfree reclaim does per folio "
                               "(folio lock, try_to_unmap's rmap walk set-up: anon_vma lock, vma lookup, PMD walk "
                               "and PTE lock; the free; kvm_6_18_lazyfree_unmap's reclaim_folio_us), plus what "
                               "swap-out adds once per folio: add_to_swap's mem_cgroup_try_charge_swap, pageout -> "
                               "swap_writepage's bio allocation and submission, the writeback flag flips and "
                               "folio_end_writeback, mem_cgroup_swapout: a handful of atomics and a bio, ~0.5-1 us. "
                               "Its spread is the old prior's, 1.25 us: one prior serves every era and CPU, and "
                               "older kernels do more per folio (page-based APIs, si->lock for the swap_map)"),
        doc="per folio reclaimed, outside any lock, whatever its size (the per-page work is reclaim_us_per_page)")
    reclaim_us_per_page: float = knob(
        0.08, unit="us", upper=100.0,
        prior=Prior(0.08, 0.05, "shrink_folio_list's work per 4K page of the folio besides the PTE write (pte_us), "
                                "the swap cache entry (swapcache_us_per_page) and the reference checks' young-bit "
                                "tests (reference_us_per_page), v6.x: try_to_unmap_one's "
                               "page_vma_mapped_walk step per PTE (no batching for a swap-backed folio; 354dffd29575, "
                               "v6.15, batches lazyfree only), swap_duplicate of the entry, the MM_ANONPAGES / "
                               "MM_SWAPENTS counters, folio_remove_rmap_pte; "
                               "swap_cgroup_record per entry; free_pages_prepare's tail-page check. "
                               "0.078 us a page measured on 6.18 for lazyfree reclaim's batched per-page work, PTE "
                               "clear included (kvm_6_18_lazyfree_unmap's page_us); swap-out's loop adds an "
                               "iteration and the entry's work per PTE"),
        doc="per 4K page of a folio reclaimed, outside any lock, besides its PTE (pte_us), swap cache entry "
            "(swapcache_us_per_page) and device work")
    lru_hold_us_per_folio: float = knob(0.05, unit="us", upper=100.0,
                              prior=Prior(0.05, 0.03, "one list operation on a folio under the lruvec lock "
                                                      "(isolate_lru_folios' move to the isolation list, "
                                                      "move_folios_to_lru's putback, lru_add_fn's add): its flags, "
                                                      "list links and counters, ~0.05 us; the previous prior, 0.1, "
                                                      "covered an isolation and its putback together"),
                              doc="per folio per list operation under the memcg's lruvec lock")
    # --- the LRU scan (mmcost.swap.paths.lru_scan) ---------------------------------------------------------
    referenced_share: float = knob(1.0, unit="1", upper=1.0,
                                   doc="share of folios with a young PTE when reclaim first reaches them (usemem "
                                       "writes each page once, right after its fault: 1); each is scanned twice")
    reference_us_per_folio: float = knob(
        0.3, unit="us", upper=100.0,
        prior=Prior(0.3, 0.15, "one pass of shrink_folio_list over a folio up to its reference check: folio_trylock, "
                               "folio_check_references -> folio_referenced -> rmap_walk_anon (anon_vma read lock, "
                               "interval-tree lookup, page_vma_mapped_walk's PGD-PMD walk and PTE lock), the unlock "
                               "(mm/vmscan.c, mm/rmap.c, v6.x). try_to_unmap's own walk set-up is of the same kind, "
                               "and the whole of lazyfree reclaim, folio lock, that walk, unmap and free, measured "
                               "0.79 us a folio on 6.18 (kvm_6_18_lazyfree_unmap; MADV_PAGEOUT skips the reference "
                               "check): a third to a half of it"),
        doc="per folio per scan pass (the reference check's rmap walk set-up), outside any lock")
    reference_us_per_page: float = knob(
        0.03, unit="us", upper=10.0,
        prior=Prior(0.03, 0.02, "folio_referenced_one per PTE: ptep_clear_flush_young_notify, a locked test-and-"
                                "clear of the accessed bit on a line the walk already holds; tens of ns (the 0.078 "
                                "us a page of lazyfree reclaim on 6.18, kvm_6_18_lazyfree_unmap, bounds it with "
                                "the PTE clear and the rmap update)"),
        doc="per PTE tested per rmap walk (and per young PTE cleared by MGLRU's aging walk)")
    lru_line_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "per acquisition of the LRU lock another CPU held last: the lock word and the "
                               "shared lines it wrote, the list head and the memcg's lru_zone_size "
                               "(mem_cgroup_update_lru_size); the lruvec and node counters are per-CPU in v6.x "
                               "(__mod_memcg_lruvec_state, __mod_node_page_state) and move nothing: one or two "
                               "lines at 70-100 ns a handoff (this VM's profile: 90 ns; Boyd-Wickizer et al., "
                               "Linux Symposium 2012, sec. 3)"),
        doc="per acquisition of the LRU lock, the lines the previous holder (another writer) moved")
    slot_hold_us_per_acquisition: float = knob(
        0.2, unit="us", upper=100.0,
        prior=Prior(0.2, 0.15, "the holder's own work per acquisition of the swap allocation lock, in lines it "
                               "already has: the lock and unlock (two atomics), get_swap_pages -> "
                               "scan_swap_map_slots / cluster_alloc_range finding the slot and updating the "
                               "cluster's count and the device's counters (mm/swapfile.c): a few hundred ns; the "
                               "lines a contended section moves are mmcost.swap.paths.slot_hold_us's, at "
                               "lock_line_us each (together the old prior, 1.0 us, under contention)"),
        doc="per allocation under si->lock or a cluster's lock, whatever it allocates (a cache refill, one page, "
            "a large folio), besides the lines moved from the last holder's CPU (swap.paths.slot_hold_us)")
    slot_us_per_slot: float = knob(
        0.03, unit="us", upper=10.0,
        prior=Prior(0.03, 0.02, "per slot scanned and taken: one swap_map byte (SWAP_HAS_CACHE) and the "
                                "cluster's count in lines the holder already has, tens of ns"),
        doc="per swap slot allocated, under si->lock")
    swapcache_us_per_folio: float = knob(
        0.3, unit="us", upper=50.0,
        prior=Prior(0.3, 0.15, "add_to_swap_cache + __remove_mapping once per folio: the lock, folio flags and "
                               "refcount, the lruvec and memcg swap-cache counters: a few hundred ns"),
        doc="per folio swap cache insert + delete, besides its entries (half each)")
    swapcache_us_per_page: float = knob(
        0.2, unit="us", upper=50.0,
        prior=Prior(0.2, 0.1, "one xas_store per subpage index on insert and one on delete "
                              "(__add_to_swap_cache / __delete_from_swap_cache loop over folio_nr_pages; from v6.18 "
                              "__swap_table_set per entry): ~100 ns each"),
        doc="per subpage entry of a folio in the swap cache, insert + delete (half each)")
    tag_hold_us_per_page: float = knob(
        0.1, unit="us", upper=50.0,
        prior=Prior(0.1, 0.05, "the radix tree walks of a writeback-tag site besides the lines it moves "
                               "(lock_line_us): __test_set_page_writeback walks three times (tag_set "
                               "WRITEBACK, tag_clear DIRTY and TOWRITE), test_clear_page_writeback once, down "
                               "a tree of height ~4 in nodes every CPU reads (v4.7 lib/radix-tree.c): tens of ns "
                               "a walk"),
        doc="per folio and writeback-tag site, under the tree lock, besides the lines moved")
    split_us_per_page: float = knob(
        round(SPLIT_US_PER_PAGE, 3), unit="us", upper=100.0,
        prior=Prior(round(SPLIT_US_PER_PAGE, 3), round(SPLIT_PAGE_SD, 3), SPLIT_SOURCE),
        doc="per page of a folio split to 4K: the tail's struct page, its migration entry and PTE mapped back, "
            "remap_page's locked rmap walk for it; the lruvec lock holds its struct page line and LRU add "
            "(mmcost.swap.paths.split_work)")
    compress_us_per_page: float | None = knob(None, kind="float", unit="us", upper=1e4,
                                              doc="compression of one page; None: the compressor's")
    decompress_us_per_page: float | None = knob(None, kind="float", unit="us", upper=1e4,
                                                doc="decompression (zswap writeback); None: the compressor's")
    io_submit_us_per_io: float = knob(3.0, unit="us", upper=1000.0,
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
    vm_exit_us: float | None = knob(None, kind="float", unit="us", upper=100.0,
                                    doc="one VM exit and re-entry (a guest's IPI send); None: the cpu_model's "
                                        "(cpu_models.VM_EXIT_PRIOR; 0 in a profile, whose IPI send includes it)")
    posted_interrupts: bool = knob(True, doc="APICv/AVIC: an IPI reaches a running vCPU without a VM exit")
    tlbi_us: float | None = knob(None, kind="float", unit="us", upper=100.0,
                                 doc="one broadcast TLBI's slot at the DVM node (arm64; posted, pipelined)")
    dsb_us: float | None = knob(None, kind="float", unit="us", upper=100.0,
                                doc="one DSB ISH's sync at the DVM node (arm64) on a one-CPU domain; it grows with "
                                    "machine_cpus (mmcost.swap.paths.dsb_wait_us)")
    dsb_growth_per_cpu: float = knob(DSB_GROWTH, unit="1", upper=1.0, prior=Prior(DSB_GROWTH, 0.03, DSB_GROWTH_SOURCE),
                                     doc="relative growth of a DSB ISH wait per further CPU in the domain")
    swap_map_hold_us: float = knob(
        0.03, unit="us", upper=100.0,
        prior=Prior(0.03, 0.02, "swap_info_get / __swap_duplicate to spin_unlock (mm/swapfile.c, v3.9-v4.10): read "
                                "p->max and one swap_map byte, write it back; the byte's line is the reclaimer's own "
                                "(it allocated the slot from its per-CPU cluster): tens of ns besides the lock's own "
                                "line, which moves (lock_line_us, SWAP_MAP_LINES)"),
        doc="per swap_map count operation under si->lock on the swap-out path (swap_map_lock='si_lock'), besides "
            "the line it moves")
    swap_avail_hold_us: float = knob(
        0.03, unit="us", upper=100.0,
        prior=Prior(0.03, 0.02, "get_swap_pages: spin_lock(&swap_avail_lock), plist_requeue of the one device on "
                                "swap_avail_heads (no sibling: reads only), unlock (mm/swapfile.c, v4.x-v6.13): two "
                                "atomics in a line the holder has, tens of ns; the lock's line, when another CPU "
                                "took it last, is mmcost.swap.paths.avail_hold_us's (AVAIL_LINES)"),
        doc="per get_swap_pages call under the global swap_avail_lock (si->lock era), besides the line it moves "
            "(swap.paths.avail_hold_us)")
    zone_lock_hold_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "rmqueue_buddy / free_one_page under zone->lock (mm/page_alloc.c): the free-list "
                               "unlink and expand(), or __free_one_page's buddy merges, over a few orders in lines "
                               "the holder has: ~100 ns; the lines the last holder wrote, when another CPU, are "
                               "mmcost.swap.paths.zone_hold_us's (ZONE_LOCK_LINES; together the old prior, 0.5 us "
                               "+- 0.3, a few hundred ns under contention)"),
        doc="per buddy allocation or free of a folio the per-CPU lists do not cache, under zone->lock, besides the "
            "lines it moves (swap.paths.zone_hold_us)")
    memcg_charge_hold_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "one page_counter update (an atomic add or sub on the memcg's usage, its memsw or "
                               "swap usage, or an ancestor's, mm/page_counter.c) whose line another CPU wrote last: "
                               "one modified line fetched from another core, ~0.05-0.1 us within a socket, ~0.1-0.2 "
                               "us across one (Molka et al., ICPP 2015); an update of a line the CPU holds is part of "
                               "the fault's own cost"),
        doc="per page_counter update that moves its cache line (the updates: mmcost.swap.paths.memcg_charge_cycle)")
    swap_free_us_per_page: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "zap_pte_range -> free_swap_and_cache_nr -> the swap entry's count and cache "
                               "check, zram_slot_free_notify outside zsmalloc: 0.18 us per page in all with zs_free "
                               "(Wenchao Hao, 'mm/zsmalloc: reduce lock contention in zs_free()' v6, June 2026: "
                               "munmap of 256 MB paged out to zram in 11.7 ms on an i7-12700)"),
        doc="at exit: per swapped-out page freed, outside shared locks")
    zs_free_hold_us: float = knob(
        round(ZS_FREE_SERIAL_US, 3), unit="us", upper=100.0,
        prior=Prior(round(ZS_FREE_SERIAL_US, 3), 0.05, FREE_LINE_SOURCE),
        doc="at exit: per zram/zswap object freed, under its zsmalloc size class lock, when no other CPU frees")
    free_line_us: float = knob(
        round(FREE_LINE_US, 3), unit="us", upper=100.0, prior=Prior(round(FREE_LINE_US, 3), 0.12, FREE_LINE_SOURCE),
        doc="at exit: per page freed, the shared lines another freer wrote last (the zsmalloc pool lock's reader "
            "count and class lock, zram's stats, nr_swap_pages), moved once per page they are shared")
    page_free_us_per_page: float = knob(
        0.05, unit="us", upper=100.0,
        prior=Prior(0.05, 0.03, "zap_pte_range for a present page: rmap, counters, batched free to the per-CPU "
                                "lists (free_pages_and_swap_cache): tens of ns per page"),
        doc="at exit: per resident page freed")
    build_factor: float = knob(
        1.0, unit="1", lower=0.5, upper=2.0,
        prior=Prior(1.0, 0.03, "run-to-run spread of LKP swap throughput: the seeds print 2-7% stddev"),
        doc="a kernel build's nuisance factor on every rate, no mechanism behind it; fit it per variant "
            "(build_factor@<variant>) with its source's own stddev as the prior")
    # (last: a band's prior draws of the fields above stay as they were)
    lock_line_us: float = knob(
        0.2, unit="us", upper=50.0,
        prior=Prior(0.2, 0.1, "one cache line the previous holder of a contended lock, another CPU, wrote last, "
                              "fetched by the next, with the queued spinlock's hand-over: a modified line from "
                              "another core's cache takes ~0.05-0.1 us within a Haswell-EP socket and ~0.1-0.2 us "
                              "across QPI (Molka et al., 'Cache coherence protocol and memory performance of the "
                              "Intel Haswell-EP architecture', ICPP 2015); the lines each section moves are "
                              "mmcost.swap.paths.TREE_LOCK_LINES and SWAP_MAP_LINES"),
        doc="per cache line moved with a contended lock's section, when another CPU held the lock last "
            "(swap.paths.moved_share): the swap cache's tree_lock where it is one station (to v4.10), si->lock's "
            "swap_map sections (swap_map_lock='si_lock', to v4.10), the swap allocation's "
            "(swap.paths.slot_hold_us), swap_avail_lock's and zone->lock's")
    add_to_swap_us_per_folio: float = knob(
        0.3, unit="us", upper=100.0,
        prior=Prior(0.3, 0.15, "add_to_swap outside its locks (mm/swap_state.c, v4.8-v4.13): get_swap_page's "
                               "atomic_long_dec(&nr_swap_pages), a line every allocating CPU writes (one per cache "
                               "refill with the slot cache), mem_cgroup_try_charge_swap (returns early on cgroup "
                               "v1), radix_tree_maybe_preload, SetPageDirty: a few hundred ns"),
        doc="the part of reclaim_us_per_folio that is add_to_swap's own work (included in it, not added): what a "
            "tail page of a THP split after add_to_swap (thp_swap_delay_split) does not pay")
    cold_line_us: float = knob(
        0.1, unit="us", upper=10.0,
        prior=Prior(0.1, 0.05, "one cache line fetched from local DRAM, not from another core: ~0.1 us load-to-use "
                               "on a Haswell-EP socket (Molka et al., 'Cache coherence protocol and memory performance "
                               "of the Intel Haswell-EP architecture', ICPP 2015); less where the hardware prefetcher "
                               "streams an array (struct pages lie 64 B apart), hence the spread"),
        doc="per cache line a path touches first since it left the caches: a THP's tail struct page at swap-out "
            "(mmcost.swap.paths.delay_split)")
    # --- memory.high (cgroup v2; mmcost.swap.paths.high_governs): last, so that no field above moves -------------
    memcg_high_mb: float | None = knob(
        None, kind="float", unit="MiB", lower=1.0, upper=2.0**30, none_values=(float("inf"),),
        doc="memory.high of each memcg (cgroup v2 only, v4.0); None (a cell 'none' or inf): none. Below memcg_mb it "
            "holds the memcg: charges succeed, the writer reclaims the batch it charged on its return to user "
            "space (mem_cgroup_handle_over_high) and may be throttled (memcg_high_throttle); at or above "
            "memcg_mb it changes nothing")
    memcg_high_throttle: str | None = knob(
        None, kind="str", kernel=True, choices=("none", "after_reclaim", "after_no_progress"),
        doc="when a task over memory.high sleeps: never (to v5.3), after one reclaim pass (v5.4, 0e4b01df8659), "
            "only after MAX_RECLAIM_RETRIES passes without progress (v5.8, b3ff92916af3)")
    config_hz: int = knob(1000, unit="Hz",
                          doc="CONFIG_HZ (100, 250, 300 or 1000): the jiffy of the over-high sleep's arithmetic "
                              "(calculate_high_delay) and of its HZ/100 floor")
    # --- the split's fixed work (last, so that no field above moves) ------------------------------------------------
    split_us_per_folio: float = knob(
        round(SPLIT_US_PER_FOLIO, 3), unit="us", upper=1000.0,
        prior=Prior(round(SPLIT_US_PER_FOLIO, 3), round(SPLIT_FOLIO_SD, 3), SPLIT_SOURCE),
        doc="per folio split to 4K besides its pages' part and its flush: unmap_folio's rmap walk under the "
            "anon_vma write lock, the refcount freeze, the deferred-split queue (mmcost.swap.paths.split_work)")
    split_locked_us_per_page: float = knob(
        round(SPLIT_US_PER_PAGE / 2, 3), unit="us", upper=100.0,
        prior=Prior(round(SPLIT_US_PER_PAGE / 2, 3), round(SPLIT_US_PER_PAGE / 4, 3),
                    "half of the measured split work a page (split_us_per_page), +- a quarter: under "
                    "folio_lruvec_lock __split_huge_page_tail writes the tail's struct page and adds it to the LRU, "
                    "outside it remap_page walks the rmap locked and maps the PTE back, halves of like size in the "
                    "code; a contended lruvec lock tells them apart (small_thp_swapout fits it)"),
        doc="the part of split_us_per_page done under the lruvec lock (at most all of it; "
            "mmcost.swap.paths.split_work)")

    METRICS: ClassVar = ("usemem_throughput_kib_s", "swapout_kib_s", "vm_scalability_throughput_kib_s",
                         "sys_time_s", "real_time_s", "exit_time_s", "munmap_time_ms", "tlb_shootdowns_per_swapped_page",
                         "kswapd_reclaim_share_pct", "cycles_share_pct", "large_fault_share_pct",
                         "memcg_failcnt_per_swapped_page", "memcg_high_throttle_share_pct",
                         "memcg_high_events_per_swapped_page")
    FREE: ClassVar = ("reclaim_us_per_folio", "core_write_gb_s")
    #: the fields ``kernel_speed`` scales (:data:`KERNEL_PATH_FIELDS`)
    KERNEL_PATHS: ClassVar = KERNEL_PATH_FIELDS

    # --- configuration ---------------------------------------------------------------------------
    def check(self) -> None:
        # every float field within its own bounds before anything is derived from it (an error then names
        # the field the user set: memcg_mb=-inf said "think_time must be finite", bytes_per_process=0
        # divided by zero, bytes_per_process=inf solved)
        v.fields_in_bounds(self)
        # sizes (ValueError naming the field and the limit): the kernel's own maxima, and what one lock
        # network's exact MVA can solve at once (one station per lock partition, population = running)
        processes = v.count("processes", self.processes)
        v.at_most("processes", processes, v.MAX_TASKS, "PID_MAX_LIMIT: tasks a 64-bit kernel can have")
        threads = v.count("threads", self.threads)
        v.at_most("processes x threads", processes * threads, v.MAX_TASKS,
                  "PID_MAX_LIMIT: every writer thread is a task")
        if self.cpus is not None:
            v.at_most("cpus", v.count("cpus", self.cpus), v.MAX_CPUS, "CONFIG_NR_CPUS's largest value")
        else:
            v.at_most("processes x threads", processes * threads, v.MAX_CPUS,
                      "with cpus None each writer runs on a CPU of its own; CONFIG_NR_CPUS's largest value")
        kb = v.count("folio_kb", self.folio_kb, minimum=PAGE_KB)
        if kb % PAGE_KB or (kb // PAGE_KB) & (kb // PAGE_KB - 1) or kb > PMD_KB:
            raise ValueError(f"folio_kb must be 4 KiB times a power of two, at most {PMD_KB}, got {kb}")
        v.at_most("queue_depth", v.count("queue_depth", self.queue_depth), 65536,
                  "an NVMe queue holds at most 65536 entries (CAP.MQES is 16 bits, zero-based)")
        v.at_most("memcgs", v.count("memcgs", self.memcgs), 65535,
                  "MEM_CGROUP_ID_MAX: memcg ids are 16 bits (mm/memcontrol.c)")
        v.at_most("zs_size_classes", v.count("zs_size_classes", self.zs_size_classes), 255,
                  "ZS_SIZE_CLASSES with 4 KiB pages: (4096 - 32) / 16 + 1 (mm/zsmalloc.c)")
        if self.memcgs > self.processes:
            raise ValueError(f"memcgs: {self.memcgs} memcgs for {self.processes} processes leaves some empty")
        if self.memcgs > 1 and self.memcg_mb is None:
            raise ValueError("memcgs: several memcgs need their limit, memcg_mb")
        for name, limit, why in (("slot_lock_partitions", v.MAX_STATIONS, "stations of one lock network"),
                                 ("mm_cpus", v.MAX_CPUS, "CONFIG_NR_CPUS's largest value"),
                                 ("numa_nodes", 1024, "MAX_NUMNODES: NODES_SHIFT is at most 10"),
                                 ("machine_cpus", v.MAX_CPUS, "CONFIG_NR_CPUS's largest value")):
            if self.get(name) is not None:
                v.at_most(name, v.count(name, self.get(name)), limit, why)
        if self.swapcache_lock_partitions is not None:
            v.at_most("swapcache_lock_partitions",
                      v.count("swapcache_lock_partitions", self.swapcache_lock_partitions, minimum=0),
                      v.MAX_STATIONS, "stations of one lock network")
        from ..kernel import parse_version

        parse_version(self.kernel)
        if self.switch("swap_map_lock") == "si_lock" and self.switch("swap_alloc_lock") == "per_cluster":
            raise ValueError("swap_map_lock: 'si_lock' with swap_alloc_lock='per_cluster' is no kernel's (the swap_map "
                             "counts moved to the cluster lock in v4.11, 235b62176712, before allocation did in "
                             "v6.14); kernel " + repr(self.kernel))
        if self.switch("lru_gen") and parse_version(self.kernel) < (6, 1):
            raise ValueError(f"lru_gen: MGLRU (CONFIG_LRU_GEN) is in no kernel before v6.1 (ec1c86b25f4b); kernel "
                             f"{self.kernel!r}")
        v.count("lru_add_batch", self.switch("lru_add_batch"))
        if self.config_hz not in CONFIG_HZ_CHOICES or isinstance(self.config_hz, bool):
            raise ValueError(f"config_hz must be one of kernel/Kconfig.hz's {CONFIG_HZ_CHOICES}, got {self.config_hz!r}")
        if self.memcg_high_mb is not None:
            if not self.cgroup_v2:
                raise ValueError("memcg_high_mb: memory.high is a cgroup v2 file (the default hierarchy's memory_files, "
                                 "241994ed8649, v4.0); a cgroup v1 memcg has no high limit for memory (its "
                                 "memory.soft_limit_in_bytes is reclaimed only under global pressure): set "
                                 "cgroup_v2=True or leave memcg_high_mb None")
            if self.memcg_mb is None:
                raise ValueError("memcg_high_mb: give memcg_mb (memory.max) with it; for a memcg without a max, a "
                                 "memcg_mb above the data written")
            if parse_version(self.kernel) < (4, 0):
                raise ValueError(f"memcg_high_mb: memory.high is in no kernel before v4.0 (241994ed8649); kernel "
                                 f"{self.kernel!r}")
            # held at memory.high, the usage runs over it by the batches the writers have charged and not yet
            # reclaimed; a memory.max within them is reached too, and both limits acting at once is not modelled
            batch = max(int(self.switch("memcg_charge_batch")), self.folio_kb // PAGE_KB)
            in_flight_mb = paths.memcg_writers(self) * batch / 256
            if self.memcg_high_mb < self.memcg_mb < self.memcg_high_mb + in_flight_mb:
                raise ValueError(f"memcg_high_mb: {self.memcg_high_mb:g} MiB is within the writers' in-flight "
                                 f"charges ({in_flight_mb:g} MiB: {paths.memcg_writers(self):g} writers x {batch} "
                                 f"pages) of memcg_mb ({self.memcg_mb:g} MiB), where memory.max is reached too; "
                                 "set it lower, or at or above memcg_mb")
        self._check_network_size()
        if self.swapped_share is None:
            if self.memcg_mb is None:
                raise ValueError("memcg_mb: give a memcg limit or swapped_share (the share of written bytes swapped)")
            self._swapped_share()  # raises naming memcg_mb when nothing would swap
        elif any_of(self.swapped_share <= 0):
            raise ValueError(f"swapped_share must be > 0 (nothing would swap), got {self.swapped_share}")

        if self.cpu_model is not None and self.arch is not None:  # (see cpu_models.check_arch)
            cpu_models.check_arch(self.arch, self.cpu_model)

    def _check_network_size(self) -> None:
        """The writers' lock network within what one exact MVA solves at once
        (:data:`mmcost._validate.MAX_STATIONS`, ``MAX_NETWORK_CELLS``): the
        stations the rows of :mod:`mmcost.swap.stations` make, one per lock partition."""
        slots = paths.slot_partitions(self)
        stations = (self.nodes * (self.memcgs if self.switch("lru_lock_scope") == "lruvec" else 1) + slots
                    + self.nodes + (self.switch("swapcache_lock_partitions") or 0) + self.zs_size_classes + 8)
        why = "stations of one lock network: LRU locks (numa_nodes x memcgs), swap allocation locks, zsmalloc classes"
        v.at_most("lock partitions", stations, v.MAX_STATIONS, why)
        v.at_most("writers on CPUs x lock partitions", self.running * stations, v.MAX_NETWORK_CELLS,
                  "the exact MVA's work per solve")

    def table_origin(self, name: str) -> str:
        """``profile <file>`` for a cost a machine profile measured, else the preset's name."""
        out = cpu_models.origin(self.cpu_model, getattr(self, "arch", None), name, getattr(self, "compressor", None))
        data = getattr(self, "swap_data", "silesia")
        return f"{out}/{data}" if out.startswith("compressor") and data != "silesia" else out

    def table_values(self) -> dict:
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(self.arch or "x86")
        out = dict(cpu.costs())
        out["arch"] = cpu.arch if self.cpu_model else (self.arch or "x86")
        out["compress_us_per_page"] = compress_us_per_page(self.compressor, cpu.clock_ghz, self.swap_data)
        out["decompress_us_per_page"] = decompress_us_per_page(self.compressor, cpu.clock_ghz, self.swap_data)
        out["compression_ratio"] = figures(self.compressor, self.swap_data)[2]
        # a machine profile's, for this compressor
        for name in ("compress_us_per_page", "decompress_us_per_page", "compression_ratio"):
            if f"{name}@{self.compressor}" in cpu.measured:
                out[name] = cpu.measured[f"{name}@{self.compressor}"].value
        return out

    @property
    def PRIORS(self) -> dict:  # noqa: N802 - the Mechanism hook
        """Priors of the table-derived costs (compressor speeds and ratio), relative to the table's value."""
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(self.arch or "x86")
        measured = {k.split("@")[0]: p for k, p in cpu.measured_priors().items()
                    if "@" not in k or k.endswith(f"@{self.compressor}")}
        return cpu_models.relative_priors(self.table_values(), _compressor_priors(self.swap_data), measured)

    @property
    def writers(self) -> int:
        return self.processes * self.threads

    @property
    def nodes(self) -> int:
        """NUMA nodes: ``numa_nodes``, else the cpu_model's sockets, else 1."""
        if self.numa_nodes is not None:
            return self.numa_nodes
        return cpu_models.get(self.cpu_model).sockets if self.cpu_model else 1

    @property
    def domain_cpus(self) -> int:
        """CPUs a broadcast TLBI and its DSB reach: the whole machine."""
        if self.machine_cpus is not None:
            return self.machine_cpus
        return cpu_models.get(self.cpu_model).cpus if self.cpu_model else (self.cpus or self.writers)

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
            return self.swapped_share  # a float field (coerced), or a lane array
        # (held at memory.high where it is below memory.max: mmcost.swap.paths.memcg_limit_mb)
        limit_mb = paths.memcg_limit_mb(self)
        w_bytes, limit = self.written_bytes / self.memcgs, limit_mb * 2**20
        # share > 0 iff L < W (with zswap too: R < W iff L < W), checked first; then the pool, W(1-w)/c < L,
        # makes (1-w)/c < 1 and the division safe (a compression ratio of 1 divided by zero)
        if any_of(limit >= w_bytes):
            name = "memcg_mb" if self.memcg_high_mb is None else "memcg_mb and memcg_high_mb"
            raise ValueError(f"{name}: the limit ({limit_mb:g} MiB) is not below the data written "
                             f"({w_bytes / 2**20:g} MiB): nothing would swap")
        resident = limit
        if self.swap_device == "zswap":
            kept = (1.0 - self.zswap_writeback_share) / self.compression_ratio
            if any_of(kept >= 1):  # the pool holds each page at full size: the charge is W whatever is swapped
                raise ValueError(f"compression_ratio: zswap keeping every page at full size (compression_ratio "
                                 f"{self.compression_ratio}, zswap_writeback_share {self.zswap_writeback_share}) "
                                 "frees nothing under the memcg limit; raise either")
            resident = (limit - w_bytes * kept) / (1.0 - kept)
            if any_of(resident <= 0):
                raise ValueError(f"memcg_mb: the zswap pool alone ({w_bytes * kept / 2**20:.0f} MiB) exceeds the "
                                 f"limit ({self.memcg_mb:g} MiB); raise zswap_writeback_share")
        return 1.0 - resident / w_bytes

    def large_fault_share(self) -> float:
        """Share of written bytes that were faulted as ``folio_kb`` folios.

        A large-folio fault charges the memcg with a gfp mask that cannot
        reclaim unless the VMA is madvised (``vma_thp_gfp_mask``): at the limit
        the charge fails and the fault falls back to order 0
        (``anon_fault_fallback_charge``), after which the range is filled with
        4K pages. The 4K faults' charges do reclaim, ``fault_reclaim_pages`` at a
        time, and the headroom each leaves is what the next large faults use:
        a folio of n pages succeeds while n fits, so a share ~ 1 - n / R of the
        bytes after the limit is first reached, and every fault before it.
        With ``folio_kb`` = 4 every fault is a 4K folio: 1, whatever
        ``large_share`` says (0, "no large folios", is as true). Held at
        memory.high below memory.max (:func:`mmcost.swap.paths.high_governs`)
        the large charge succeeds and the writer reclaims after it: 1.

        Under global reclaim the allocation itself decides: with
        ``thp_defrag`` unset every fault is large (a setting not stated);
        where the fault may reclaim and compact
        (:meth:`large_fault_may_reclaim`) too. Where it may not
        (``GFP_TRANSHUGE_LIGHT``), every fault before reclaim starts finds a
        free block (the share 1 - s of the bytes that stays resident, s the
        swapped share: what the writers filled memory with) and a share
        ``pressure_large_share`` of those after it (by default 1 where the
        fault may reclaim and compact, the flat prior's 1/2 where it may not)."""
        if self.folio_kb == PAGE_KB:
            return 1.0
        if self.large_share is not None:
            return self.large_share
        if self.memcg_mb is None:
            if self.thp_defrag is None:
                return 1.0
            p = self.pressure_large_share
            if p is None:
                p = 1.0 if self.large_fault_may_reclaim() else PRESSURE_SHARE_PRIOR.value
            before = self._fill_share()
            return before + (1.0 - before) * p
        if self.madvise:
            return 1.0
        before = self._fill_share()
        steady = maximum(0.0, 1.0 - (self.folio_kb // PAGE_KB) / self.fault_reclaim_pages)
        out = before + (1.0 - before) * steady
        if self.memcg_high_mb is not None:  # held at memory.high every charge succeeds below memory.max
            out = lanes.where(paths.high_governs(self), 1.0, out)
        return out

    def swapped_large_share(self) -> float:
        """Share of the swapped bytes that were ``folio_kb`` folios. Reclaim
        takes the oldest folios first (the inactive list's tail;
        ``shrink_inactive_list`` -> ``isolate_lru_folios``), and a sequential
        writer's oldest are the ones it faulted before the memcg's limit was
        first reached (a share b of what it writes, all large unless the
        written share a says fewer: a / b of them), then those after it (large
        at the steady share (a - b) / (1 - b)): of the share s swapped, min(s,
        b) comes from the first and the rest from the second. Under global
        reclaim the same with b the resident share 1 - s where ``thp_defrag``
        is set (:meth:`large_fault_share`), a where it is not; held at
        memory.high, where every large charge succeeds: a. On
        this project's guest (kvm_6_18_machine_epyc, warmed_2m.csv) one
        process at 2M in 512M swapped only THPs (thp_swpout x 512 = pswpout)
        where 66% of what it wrote was, and two processes 59-66% THP pages
        against 41-50% written."""
        a = self.large_fault_share()
        if self.folio_kb == PAGE_KB or (self.memcg_mb is None and self.thp_defrag is None):
            return a
        s = self._swapped_share()
        b = self._fill_share()
        first = minimum(1.0, a / maximum(b, 1e-12))  # (b = 0: everything swapped under global reclaim)
        steady = maximum(0.0, (a - b) / maximum(1.0 - b, 1e-12))
        out = (minimum(s, b) * first + maximum(s - b, 0.0) * steady) / s
        if self.memcg_high_mb is not None:
            out = lanes.where(paths.high_governs(self), a, out)
        return out

    def _fill_share(self) -> float:
        """Share of the written bytes faulted before reclaim starts: the memcg's limit over them (memory.high's
        where it governs), or under global reclaim what stays resident, 1 - s."""
        if self.memcg_mb is None:
            return 1.0 - self._swapped_share()
        return minimum(1.0, paths.memcg_limit_mb(self) * 2**20 * self.memcgs / self.written_bytes)

    def large_fault_may_reclaim(self) -> bool:
        """Whether a large anonymous fault may reclaim and compact under global reclaim: its gfp mask
        (``alloc_hugepage_direct_gfpmask``, v4.6-v5.11; ``vma_thp_gfp_mask`` from v5.12's 164cc4fef445) has
        ``__GFP_DIRECT_RECLAIM`` with ``thp_defrag`` 'always' (``GFP_TRANSHUGE``, with ``__GFP_NORETRY`` for
        an unadvised VMA from v4.8's 25160354d4ad; before it ``GFP_TRANSHUGE`` carried it for every VMA), or
        'madvise' / 'defer+madvise' (v4.11, 21440d7eb904) for a ``MADV_HUGEPAGE`` VMA. 'never', 'madvise' for
        an unadvised VMA (``GFP_TRANSHUGE_LIGHT``), 'defer' and 'defer+madvise' for an unadvised VMA
        (``GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM``: kswapd and kcompactd woken, the fault not waiting):
        no reclaim, no compaction in the fault, a fallback to 4K where no free block is at hand. Unset: True
        (every fault large, as before the setting was a field)."""
        d = self.thp_defrag
        return d is None or d == "always" or (self.madvise and d in ("madvise", "defer+madvise"))

    def resident_large_share(self) -> float:
        """Share of the bytes the write phase left resident (the newest) that are in large folios: the
        written mix (:meth:`large_fault_share`) less the swapped (:meth:`swapped_large_share`)."""
        s = self._swapped_share()
        left = (self.large_fault_share() - s * self.swapped_large_share()) / maximum(1.0 - s, 1e-12)
        return minimum(1.0, maximum(0.0, left))

    # --- the paths (mmcost.swap.paths), who reclaims (mmcost.swap.reclaim), the networks (mmcost.swap.stations) --
    def _mix(self, by_kswapd: bool = False) -> tuple[dict[str, float], float]:
        """Holds of the average folio swapped out, and the KiB it holds (:func:`mmcost.swap.paths.swap_out_mix`)."""
        return paths.swap_out_mix(self.at_kernel_speed(), by_kswapd)

    def _kswapd_cpus(self) -> tuple[float, bool]:
        return reclaim.kswapd_cpus(self)

    def _isolation_threshold(self, pages: int) -> float | None:
        return reclaim.isolation_threshold(self, pages)

    def system(self) -> LockSystem:
        """The closed network this configuration solves (see the package
        docstring), as a LockSystem with its parameters (fittable)."""
        return replace(self._network()[0])

    def _network(self) -> tuple[LockSystem, float, dict]:
        """The writers' network at kswapd's share of the reclaim, the KiB per
        folio swapped and the solve's side values (:func:`mmcost.swap.reclaim.network`)."""
        return reclaim.network(self.at_kernel_speed())

    def at_kernel_speed(self):
        """This configuration with every field of :attr:`KERNEL_PATHS` multiplied by
        ``kernel_speed`` (itself where that is 1): what the networks are built from. A raw copy,
        as a lane model is (:func:`mmcost.lanes.from_columns`): for solving only."""
        k = self.kernel_speed
        if k is None or (np.ndim(k) == 0 and k == 1.0):
            return self
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        for key in ("_cache", "_configured_cache"):  # solutions of the unscaled values
            out.__dict__.pop(key, None)
        for name in self.KERNEL_PATHS:
            val = getattr(self, name) * k
            if isinstance(val, np.ndarray):  # a lane model's: read-only, as lanes.from_columns makes them
                val.flags.writeable = False
            out.__dict__[name] = val
        out.__dict__["kernel_speed"] = 1.0
        return out

    # --- exit: the writers free what they wrote ----------------------------------------------------
    def exit_system(self) -> LockSystem:
        """The processes exiting together (see :meth:`_exit_network`), as a
        LockSystem with its parameters."""
        return replace(self._exit_network())

    def _exit_network(self) -> LockSystem:
        """The processes exiting together, each freeing its swapped-out pages
        and its resident ones; one operation frees one swap entry
        (:func:`mmcost.swap.paths.exit_free` on the rows of
        :data:`mmcost.swap.stations.EXITS`)."""
        m = self.at_kernel_speed()
        d = paths.exit_free(m)
        return stations.network(m, stations.EXITS, d, d["work"], paths.exit_freers(m))

    def _exit_time_s(self, solved=None) -> tuple[float, float]:
        """(seconds from the writers' last store to their exit, CPU seconds it
        costs), from the exit network's solution (solved here if not given)."""
        res = self._exit_network().analytic() if solved is None else solved
        x = float(res.throughput_per_s)  # entries freed per second, all processes
        entries = self._swapped_share() * self.written_bytes / 4096
        t = entries / x / self.build_factor
        return t, t * res.system_values["cpus"]

    # --- the window a source averages its swap-out rate over ---------------------------------------------
    def rate_window_s(self, loop_s, exit_s):
        """Seconds ``swapout_kib_s`` is averaged over, from the write loop's and
        the exit's (:attr:`rate_window`):

        - ``loop``: the write loop, as usemem times its throughput (a counter
          read around the loop);
        - ``lkp_job``: the whole test, as LKP averages ``vmstat.swap.so``. The
          vmstat monitor (lkp-tests ``programs/vmstat/monitor``: ``vmstat -n
          1``) starts on the ``activate-monitor`` event (``bin/run-monitor``),
          which ``lib/job.sh`` ``wakeup_pre_test`` sends just before
          ``run_test`` starts the test program, and stops when
          ``bin/post-run`` ends the job after it; ``lib/matrix.rb``
          ``create_stats_matrix`` reports the mean of its 1 s samples
          (``v.sum / stats_part_len``, every sample without
          ``stats_part_begin`` or ``stats_part_end``). The test program
          (``programs/vm-scalability/run`` -> vm-scalability's
          ``case-swap-w-seq``: ``usemem -n $nr_task`` with
          ``unit_size / nr_task`` bytes each, ``unit_size`` 3/4 of
          MemAvailable + SwapTotal, no ``--runtime``) ends when every usemem
          process has freed its memory (``timing_free``) and exited.
          ``vm-scalability.throughput`` is the sum of the processes' ``bytes
          / usecs`` (``programs/vm-scalability/parse``), each timed from
          usemem's start to the end of its write loop (``output_statistics``
          before ``timing_free``): the loop's.

        The rest of the job (``wakeup_pre_test``'s ``sleep 1``, the tmpfs
        mount, the monitors' stop) is about a second of jobs of 90-310 s (the
        delay-split letters' ``vm-scalability.time.elapsed_time``) and is left
        out."""
        return loop_s + exit_s if self.rate_window == "lkp_job" else loop_s

    def lkp_swapped_share(self, ratio: float, tol: float = 1e-6, max_iter: int = 50) -> float:
        """The share of written bytes swapped, from a source's published
        swap-out rate / write throughput (``ratio``): their windows differ
        (:meth:`rate_window_s`), so ``ratio = s * loop / window`` and ``s =
        ratio * window / loop``, with the loop and the exit this configuration
        takes at that ``s`` (solved by fixed-point iteration from ``s =
        ratio``; the window's share of the loop moves little with ``s``, both
        scaling with the bytes swapped). With ``rate_window='loop'``: the
        ratio."""
        ratio = v.scalar("ratio", ratio, positive=True)
        if ratio >= 1:
            raise ValueError(f"ratio: a swap-out rate at or above the write throughput ({ratio:g}) swaps more than "
                             "is written")
        if self.rate_window == "loop":
            return ratio
        s = ratio
        for _ in range(max_iter):
            r = self.set(swapped_share=s).solve()
            exit_s = r["exit_time_s"]
            loop = r["real_time_s"] - exit_s
            new = ratio * self.rate_window_s(loop, exit_s) / loop
            if new >= 1:
                raise ValueError(f"ratio: {ratio:g} over the {self.rate_window} window means every written byte "
                                 f"and more is swapped (the exit takes {exit_s / loop:.2f} of the loop)")
            if abs(new - s) < tol:
                return float(new)
            s = new
        raise RuntimeError(f"lkp_swapped_share did not converge from ratio {ratio:g} in {max_iter} iterations")

    # --- solving ---------------------------------------------------------------------------------------
    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """Throughputs, times and counters of this configuration; ``solver="simulated"``
        runs the DES and reports 99% intervals. ``result["swapout_kib_s"]``,
        ``result.table()``; ``result.details["locks"]`` is the lock result."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        net, kib, info = self._network()
        if solver == "analytic":
            res, exit_res = analytic_many([net, self._exit_network()])
        else:
            res, exit_res = net.simulate(**simulate_kwargs), self._exit_network().analytic()
        return self._result(solver, kib, info, res, exit_res)

    @classmethod
    def solve_many(cls, models) -> list[Result]:
        """``[m.solve() for m in models]``, faster. Configurations that differ
        only in float fields (a band's draws of one row) are solved as one lane
        model (:mod:`mmcost.lanes`): the network built once with arrays for
        holds, one batch MVA. The rest have every lock network (the writers'
        and the exit's) solved in one batch (:func:`~mmcost.locks.analytic_many`)."""
        out: list = [None] * len(models)
        single = []
        for idx in lanes.groups(models):
            if len(idx) < lanes.MIN_LANES:
                single += idx
                continue
            for i, res in zip(idx, cls._solve_lanes([models[i] for i in idx])):
                out[i] = res
        built = [(i, models[i]._network(), models[i]._exit_network()) for i in single]
        solved = analytic_many([x for _, (net, _, _), ex in built for x in (net, ex)])
        for j, (i, (_, kib, info), _) in enumerate(built):
            out[i] = models[i]._result("analytic", kib, info, solved[2 * j], solved[2 * j + 1])
        return out

    @classmethod
    def solve_draws(cls, base: SwapModel, draws: list[dict]) -> list[Result] | None:
        """``[base.set(**d).solve() for d in draws]`` (a band's draws of one
        row) as one lane model built from the draws' columns, with no copy
        per draw (:func:`mmcost.lanes.from_draws`); None where the copies must
        be made."""
        lane = lanes.from_draws(base, draws)
        return None if lane is None else cls._lane_results(lane, lanes.views(lane))

    @classmethod
    def _solve_lanes(cls, models) -> list[Result]:
        """Each of ``models`` (one of :func:`mmcost.lanes.groups`) solved
        through their lane model."""
        return cls._lane_results(lanes.stack(models), models)

    @staticmethod
    def _lane_results(lane: SwapModel, models: list) -> list[Result]:
        """Each lane's :class:`Result`, from ``models[i]``'s fields and the lane
        model's networks solved as one batch."""
        n = lanes.count(lane)
        net, kib, info = lane._network()
        writers, exits = net.analytic_lanes(n), lane._exit_network().analytic_lanes(n)
        take = lanes.take
        return [m._result("analytic", take(kib, i), {k: take(x, i) for k, x in info.items()}, writers[i], exits[i])
                for i, m in enumerate(models)]

    def _result(self, solver: str, kib: float, info: dict, res, exit_res) -> Result:
        """The configuration's numbers from its network's solution ``res`` and
        its exit network's ``exit_res`` (:meth:`_network`, :meth:`_exit_network`)."""
        x = float(res.throughput_per_s) * self.build_factor  # folios swapped per second
        half = float(res.system_values.get("throughput_per_s_ci99", 0.0)) / x * self.build_factor if x > 0 else 0.0
        s = info["swapped_share"]
        swapout = x * kib  # over the write loop
        per_proc = swapout / s / self.processes
        loop = self.bytes_per_process / 1024 / per_proc  # the write loop, which usemem's throughput times
        exit_s, exit_cpu = self._exit_time_s(exit_res)
        reported = swapout * loop / self.rate_window_s(loop, exit_s)  # the same bytes over the source's window
        at_device = 0.0  # writers waiting for the block device, off-CPU (Little's law)
        if info["device_us"] > 0 and "device" in res.lock_values:  # (a lane without the station has device_us 0)
            row = res.lock_values["device"]
            at_device = (row["wait_per_acquisition_us"] + info["device_us"]) * row["acquisitions_per_s"] / 1e6
        # kswapd's CPU is no writer's: time(1) leaves it out, and where kswapd shares the writers' CPUs it
        # takes that time from them
        kswapd_cpus = 0.0 if self._kswapd_cpus()[1] else info["kswapd_us"] * x / 1e6
        user = self.written_bytes / 4096 * self.user_us_per_page * 1e-6
        asleep = info["throttled_us"] * x / 1e6  # writers throttled in reclaim, off-CPU
        sys_time = max(0.0, (self.running - at_device - kswapd_cpus - asleep) * loop - user) + exit_cpu
        values = [("swapout_kib_s", reported, "KiB/s"), ("usemem_throughput_kib_s", per_proc, "KiB/s"),
                  ("vm_scalability_throughput_kib_s", per_proc * self.processes, "KiB/s"),
                  ("real_time_s", loop + exit_s, "s"), ("sys_time_s", sys_time, "s"),
                  ("exit_time_s", exit_s, "s"), ("munmap_time_ms", 1e3 * exit_s, "ms"),
                  ("tlb_shootdowns_per_swapped_page", info["shootdowns"] / (kib / PAGE_KB), "1/page"),
                  ("kswapd_reclaim_share_pct", 100 * info["kswapd_share"], "%"),
                  ("large_fault_share_pct", 100 * self.large_fault_share(), "%"),
                  ("swapped_share", s, "1"), ("folios_per_s", x, "1/s"),
                  ("memcg_failcnt_per_swapped_page", paths.memcg_failures_per_swapped_page(self), "1/page"),
                  # writers asleep over memory.high: sleep per folio over a writer's time per folio
                  ("memcg_high_throttle_share_pct", 100 * info.get("high_sleep_us", 0.0) * x / self.running / 1e6,
                   "%"),
                  ("memcg_high_events_per_swapped_page", paths.high_events_per_swapped_page(self), "1/page")]
        scale = {"swapout_kib_s", "usemem_throughput_kib_s", "vm_scalability_throughput_kib_s", "folios_per_s"}
        qs = tuple(Quantity(n, val, u, val * (1 - half) if n in scale else val, val * (1 + half) if n in scale else val)
                   for n, val, u in values)
        title = (f"{self.processes} x {self.threads} writers on {self.cpus or self.writers} CPUs, "
                 f"{self.folio_kb}K folios, {self.swap_device}, kernel {self.kernel}")
        return Result(qs, solver, 0.99 if solver == "simulated" else 1.0, bool(self.fitted_on), title,
                      details={"locks": res})

    def metric_value(self, result: Result, metric: str, rows: pd.DataFrame) -> np.ndarray:
        if metric == "cycles_share_pct":
            sites = result.details["locks"].site_values
            if "call_site" not in rows.columns:
                raise ValueError("cycles_share_pct rows need a call_site column")
            return np.array([float(sites[site_of(c)]["spin_share_pct"]) if site_of(c) in sites else 0.0
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
        d = paths.swap_out(self.at_kernel_speed(), kb, whole=whole or kb == PAGE_KB)
        return sum(d[k] for k in ("reclaim", "targets", "lru", "slot", "avail", "memcg", "zone", "cache_insert",
                                  "cache_delete", "tags", "zs", "brd_xa", "map_dup", "map_count", "map_free"))


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


#: the machine profiles whose swap-in probes measured do_swap_page's per-folio work (mmcost-probe swapin):
#: the EPYC guest's and a second Xeon guest's, Linux 6.18
SWAPIN_PROFILES = (("kvm_6_18_machine_epyc", "profile_e.toml"), ("kvm_6_18_swapin", "second_vm_profile.toml"))
#: that work on the generic machine (a kernel path's cost: per era in the joint fit, kernel_speed scales it):
#: the mean over SWAPIN_PROFILES of each one's measure.profile.swapin_per_folio (1.93 and 0.02 us), and its
#: sd: their spread (ddof 1) with one VM's kernel speed carried to another and a measurement's allowance.
#: The two VMs disagree by more than either's own error: the prior says so. tests/test_swap_in.py
#: recomputes both. A study on a probed machine sets that machine's own (measure.profile.swapin_per_folio).
SWAPIN_PER_FOLIO_MEASURED = 0.98
SWAPIN_PER_FOLIO_SD = 1.37
_SWAPIN_PER_FOLIO_PRIOR = Prior(
    SWAPIN_PER_FOLIO_MEASURED, SWAPIN_PER_FOLIO_SD,
    "do_swap_page once per folio besides the fault, the read and the PTEs (mm/memory.c, v6.18): get_swap_device, "
    "alloc_swap_folio's checks and allocation from the per-CPU lists, the folio lock, the PTE lock and pte_same "
    "recheck, the rmap's set-up, arch_swap_restore, counters. Measured on 6.18 by two VMs' swap-in probes "
    "(data/kvm_6_18_machine_epyc/profile_e.toml, data/kvm_6_18_swapin/second_vm_profile.toml; mmcost-probe "
    "swapin: swap-in faults without reclaim at 4K, 16K and 64K, the line's intercept less the fault's own work "
    "and the lookup and folio_add_lru at their priors, over the VM's kernel speed, the median over lzo-rle, lzo "
    "and lz4: mmcost.measure.profile.swapin_per_folio): their mean, the width their spread "
    "(swap.model.SWAPIN_PROFILES)")


@dataclass(frozen=True)
class SwapInModel(SwapModel):
    """Write, then read back: :class:`SwapModel`'s write phase (every metric
    of it as it is), then each process reads its memory back, ``seq`` (in
    address order) or ``rand`` (page by page in a random order), faulting in
    what was swapped out (:func:`mmcost.swap.paths.swap_in`) on a
    SWP_SYNCHRONOUS_IO device (zram, brd, pmem: the read is done in the
    fault). Under the memcg limit the memory is still over it, so every
    swap-in swaps another folio out (:func:`mmcost.swap.reclaim.readback_network`).

    Metrics besides the write phase's: ``swapin_throughput_kib_s`` (KiB/s
    per process, the read-back's own time), ``major_fault_latency_us`` (one
    swap-in fault, the reclaim in its charge included, the user's reads
    not), ``pswpin_count`` (pages read from the device, all processes),
    ``pgmajfault_count`` (one per folio swapped in) and
    ``large_swapin_share_pct``."""

    name: str = field(default="swapin", kw_only=True)
    readback: str = knob("seq", choices=("seq", "rand"),
                         doc="read-back order: every word in address order, or page by page in a random order")
    readback_fault_share: float | None = knob(
        None, kind="float", unit="1", upper=1.0,
        doc="share of the pages read back that fault (pswpin / pages); None: 1 for seq under a memcg limit, the "
            "LRU's random-pass miss share for rand, the swapped share without a limit")
    swapin_large_share: float | None = knob(
        None, kind="float", unit="1", upper=1.0,
        doc="share of the bytes swapped in as folio_kb folios (swpin x folio / pswpin); None: the charge rule")
    swapin_us_per_folio: float = knob(
        SWAPIN_PER_FOLIO_MEASURED, unit="us", upper=100.0, prior=_SWAPIN_PER_FOLIO_PRIOR,
        doc="per folio swapped in, outside any shared lock, besides fault_us_per_folio, the read and the PTEs "
            "(generic-machine us: kernel_speed scales it; one machine's probe: measure.profile.swapin_per_folio)")
    swapin_us_per_page: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "per page of a folio swapped in: folio_add_new_anon_rmap's per-page part, "
                               "swap_cgroup_clear / mem_cgroup_swapin_uncharge_swap, the MM_ANONPAGES / "
                               "MM_SWAPENTS counters: tens of ns"),
        doc="per 4K page swapped in, besides its PTE (pte_us), walk and slot free (swap_free_us_per_page)")
    zram_read_us_per_page: float = knob(
        0.2, unit="us", upper=100.0,
        prior=Prior(0.2, 0.1, "zram_read_page besides decompression: zram_slot_lock, zs_obj_read_begin / "
                              "zs_obj_read_end (the zspage lock, an object spanning two pages copied), flags "
                              "and stats: a few hundred ns"),
        doc="zram's read work per page outside decompression")
    swapcache_lookup_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "swap_cache_get_folio before v6.18: filemap_get_folio on the entry's 64 MiB "
                               "address_space, an RCU XArray walk of 2-3 nodes (cache misses on a cold tree)"),
        doc="swap cache lookup per fault before the swap table (v6.18)")
    swap_table_lookup_us: float = knob(
        0.03, unit="us", upper=100.0,
        prior=Prior(0.03, 0.02, "swap_cache_get_folio from v6.18: __swap_table_get, one atomic load of the "
                                "cluster's table slot under RCU"),
        doc="swap cache lookup per fault with the swap table (v6.18)")
    swapin_skip_swapcache: bool | None = knob(None, kind="bool", kernel=True,
                                              doc="SWP_SYNCHRONOUS_IO swap-in bypasses the swap cache (v4.15-v6.19)")
    swapin_mthp: bool | None = knob(None, kind="bool", kernel=True,
                                    doc="mTHP swap-in from SWP_SYNCHRONOUS_IO devices (v6.12)")
    swap_table: bool | None = knob(None, kind="bool", kernel=True, doc="the swap cache is the swap table (v6.18)")

    #: do_swap_page's own work and zram's read besides decompression are kernel paths too
    KERNEL_PATHS: ClassVar = KERNEL_PATH_FIELDS + ("swapin_us_per_folio", "swapin_us_per_page", "zram_read_us_per_page",
                                                   "swapcache_lookup_us", "swap_table_lookup_us")
    METRICS: ClassVar = SwapModel.METRICS + ("swapin_throughput_kib_s", "major_fault_latency_us", "pswpin_count",
                                             "pgmajfault_count", "large_swapin_share_pct",
                                             "readback_tlb_shootdowns_per_swapped_page")

    def check(self) -> None:
        super().check()
        if self.memcg_high_mb is not None:
            raise ValueError("memcg_high_mb: the read-back under memory.high (its swap-in charges reclaiming on the "
                             "return to user space) is not modelled; leave memcg_high_mb None for SwapInModel")
        from .devices import SYNCHRONOUS

        if self.swap_device not in SYNCHRONOUS:
            raise ValueError(f"swap_device: swap-in is modelled for the SWP_SYNCHRONOUS_IO devices {SYNCHRONOUS} "
                             f"(the read done in the fault), not {self.swap_device!r}: a zswap load or a disk's "
                             "readahead (swapin_readahead, page-cluster) is another path")
        from ..kernel import parse_version

        if parse_version(self.kernel) < (4, 15) and not self.switch("swapin_skip_swapcache"):
            raise ValueError(f"kernel: before v4.15 (0bcac06f27d7) a swap-in from {self.swap_device} went through "
                             "swapin_readahead (page-cluster readahead into the swap cache), which is not modelled; "
                             f"kernel {self.kernel!r}")
        if self.readback_fault_share is not None and any_of(self.readback_fault_share <= 0):
            raise ValueError(f"readback_fault_share must be > 0 (a read-back that faults nothing has no swap-in "
                             f"to model), got {self.readback_fault_share}")

    def large_swapin_share(self) -> float:
        """Share of the bytes swapped in that come back as ``folio_kb`` folios.

        ``alloc_swap_folio`` (v6.12, ``swapin_mthp``) tries the orders below
        PMD order the VMA allows, never where zswap was ever enabled, and only
        on a range whose PTEs are swap entries with contiguous offsets
        (``can_swapin_thp``): a range written as one large folio and swapped
        out whole (times ``1 - contiguous_failure``); a range faulted as 4K
        pages or split got its slots page by page, taken here as not
        contiguous. The ranges swapped in are those swapped when the write
        ended (a share s of the pages, in :meth:`swapped_large_share`'s mix)
        and, where the read-back faults more than s (:meth:`readback_faults`),
        the resident ones it evicts before reading them, in
        :meth:`resident_large_share`'s mix: a sequential read back under the
        limit swaps every page in, the newest too. Its memcg charge uses
        ``vma_thp_gfp_mask``, which cannot reclaim unless the VMA is madvised,
        so at the limit a large charge succeeds while the headroom the last
        order-0 charge's reclaim left holds it (``fault_reclaim_pages``, as for
        faults: the steady state, the read-back starting at the limit); a
        failed charge counts ``swpin_fallback_charge`` and ``swpin_fallback``.
        4K: 1."""
        kb = self.folio_kb
        if kb == PAGE_KB:
            return 1.0
        if kb >= PMD_KB or not self.switch("swapin_mthp") or self.swap_device == "zswap":
            return 0.0
        if self.swapin_large_share is not None:
            return self.swapin_large_share
        s = self._swapped_share()
        late = maximum(self.readback_faults() - s, 0.0)  # resident pages evicted, then read back
        mix = (s * self.swapped_large_share() + late * self.resident_large_share()) / maximum(s + late, 1e-12)
        eligible = mix * (1.0 - self.contiguous_failure)
        if self.madvise or self.memcg_mb is None:
            return eligible
        return eligible * maximum(0.0, 1.0 - (kb // PAGE_KB) / self.fault_reclaim_pages)

    def readback_faults(self) -> float:
        """Share of the pages read back that fault (``pswpin`` over the pages).

        Without a memcg limit nothing is evicted while reading back: the
        swapped share s. Under one, the memory is still over the limit: a
        sequential read chases the LRU's eviction point, and every page
        faults (1). A random pass over the pages: of the resident pages (a
        share l = 1 - s, the oldest on the LRU) each read removes one from the
        unread resident set, a hit by reading it or a miss by evicting it,
        while a read hits with chance (resident unread) / (unread), so the
        hits are the integral of (l - x) / (1 - x) over x from 0 to l,
        l + (1 - l) ln(1 - l), and the misses the rest."""
        if self.readback_fault_share is not None:
            return self.readback_fault_share
        s = self._swapped_share()
        if self.memcg_mb is None:
            return s
        if self.readback == "seq":
            return 1.0
        resident = 1.0 - s
        hits = resident + (1.0 - resident) * np.log1p(-resident)
        return float(1.0 - hits) if lanes.count(self) is None else 1.0 - hits

    def _readback_network(self) -> tuple[LockSystem, dict]:
        return reclaim.readback_network(self.at_kernel_speed())

    def readback_system(self) -> LockSystem:
        """The read-back's closed network, as a LockSystem with its parameters."""
        return replace(self._readback_network()[0])

    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """As :meth:`SwapModel.solve`, with the read-back's network solved too
        (``solver="simulated"``: both networks by the DES)."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        net, kib, info = self._network()
        back, back_info = self._readback_network()
        if solver == "analytic":
            res, exit_res, back_res = analytic_many([net, self._exit_network(), back])
        else:
            res, exit_res = net.simulate(**simulate_kwargs), self._exit_network().analytic()
            back_res = back.simulate(**simulate_kwargs)
        return self._result(solver, kib, info, res, exit_res, (back_res, back_info))

    @staticmethod
    def _lane_results(lane: SwapModel, models: list) -> list[Result]:
        n = lanes.count(lane)
        net, kib, info = lane._network()
        back, back_info = lane._readback_network()
        writers, exits, backs = (net.analytic_lanes(n), lane._exit_network().analytic_lanes(n),
                                 back.analytic_lanes(n))
        take = lanes.take
        return [m._result("analytic", take(kib, i), {k: take(x, i) for k, x in info.items()}, writers[i], exits[i],
                          (backs[i], {k: take(x, i) for k, x in back_info.items()}))
                for i, m in enumerate(models)]

    def _result(self, solver: str, kib: float, info: dict, res, exit_res, back=None) -> Result:
        """The write phase's numbers (:meth:`SwapModel._result`) and the
        read-back's from its network's solution ``back`` = (result, info)."""
        out = super()._result(solver, kib, info, res, exit_res)
        if back is None:
            net, back_info = self._readback_network()
            back = (net.analytic(), back_info)
        back_res, bi = back
        x = float(back_res.throughput_per_s) * self.build_factor  # folios swapped in per second, all processes
        half = float(back_res.system_values.get("throughput_per_s_ci99", 0.0)) / x * self.build_factor if x > 0 \
            else 0.0
        f = bi["fault_share"]
        per_proc = x * bi["kib"] / f / self.processes
        latency = self.running / x * 1e6 - bi["user_us"]
        pages = self.written_bytes / 4096
        values = [("swapin_throughput_kib_s", per_proc, "KiB/s", True), ("major_fault_latency_us", latency, "us", False),
                  ("pswpin_count", f * pages, "count", False),
                  ("pgmajfault_count", f * pages / (bi["kib"] / PAGE_KB), "count", False),
                  ("large_swapin_share_pct", 100 * self.large_swapin_share(), "%", False),
                  ("readback_tlb_shootdowns_per_swapped_page",
                   bi["shootdowns"] / (bi["kib"] / PAGE_KB) if bi["reclaimed"] else 0.0, "1/page", False),
                  ("swapin_folios_per_s", x, "1/s", True)]
        qs = tuple(Quantity(n, val, u, val * (1 - half) if scaled else val, val * (1 + half) if scaled else val)
                   for n, val, u, scaled in values)
        details = dict(out.details, readback=back_res)
        return Result(out.quantities + qs, out.solver, out.level, out.calibrated,
                      out.title + f", read back {self.readback}", details=details)
