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
  unmap (one entry per PTE, one PMD for a 2M THP), and its TLB flush. The
  reclaimer's own work has a part paid once per folio whatever its size
  (``reclaim_us_per_folio``: folio lock, the rmap walks' set-up, add_to_swap,
  pageout's bio, the free) and a part per 4K page (``reclaim_us_per_page``:
  the unmap loop's step, the entry's swap count and counters per PTE, the
  young-bit test, swap_cgroup_record), besides the PTE writes (``pte_us``)
  and the swap cache entries (``swapcache_us_per_page``); data at one folio
  size see only their sum, and a fit freeing both says so. These kernel-path
  costs' priors are a generic machine's; ``kernel_speed`` scales them
  (:data:`~mmcost.swap.model.KERNEL_PATH_FIELDS`) to the machine, from a
  machine profile's measured 4K fault (:func:`mmcost.cpu_models.kernel_speed`). A dirty
  folio is flushed before ``pageout()`` (``try_to_unmap_flush_dirty``,
  commit d950c9477d51, v4.3), so an anonymous folio being swapped out is
  flushed alone, not once per 32-folio batch. The flush goes to the CPUs of
  the *owner's* mm: the memcg's LRU mixes the pages of every process in it,
  so a reclaimer mostly unmaps other processes' pages and IPIs the CPUs they
  run on (x86; remote shootdowns, VM exits in a guest) or broadcasts TLBIs
  that queue at the interconnect's DVM node and waits one DSB per flush
  (arm64); swap slot allocation under ``si->lock`` (or per-cluster locks),
  and before v4.11 (235b62176712) ``si->lock`` three more times a page for
  the entry's ``swap_map`` count: ``try_to_unmap_one`` -> ``swap_duplicate``,
  ``swap_writepage`` -> ``try_to_free_swap`` -> ``page_swapcount``, and the
  swap-cache removal, ``__remove_mapping`` -> ``swapcache_free`` ->
  ``swap_info_get`` (``swap_map_lock``; from v4.11 the cluster's own lock,
  taken by the CPU that allocated the cluster, so no station);
  the swap cache, the device's CPU work (copy, compression, I/O submit), free;
- a large folio the kernel cannot swap out whole (before v6.10 below PMD
  size: ``add_to_swap`` fails, ``split_folio_to_list`` splits it) pays the
  split under the lruvec lock, the split's unmap/remap of every PTE with one
  flush, then the 4K path per page; ``contiguous_failure`` of the others
  fail their contiguous slot allocation and split after the failed scan.

Who reclaims: under a memcg limit the writers themselves; under global
reclaim kswapd (one thread per node, owner of no mm, so all its flushes are
remote) takes the share its CPU can and the allocators reclaim the rest
(``kswapd_share``). A direct reclaimer that finds too many pages isolated
sleeps (``too_many_isolated``), off-CPU. Which faults get large folios: under
a memcg limit the charge decides (``large_fault_share``: a large charge that
may not reclaim fails at the limit); under global reclaim the allocation,
where ``thp_defrag`` is given: a fault whose gfp mask may not reclaim or
compact falls back where no free block is at hand, so the faults that fill
memory are large and a share ``pressure_large_share`` of those after it, and
reclaim swaps the oldest first (``swapped_large_share``). At exit every process frees its
swap entries (:meth:`SwapModel.exit_system`), which ``real_time_s`` includes
and usemem's throughput does not; ``swapout_kib_s`` includes it where the
source averaged the rate over the whole job, as LKP's ``vmstat.swap.so``
does (``rate_window = "lkp_job"``, :meth:`SwapModel.rate_window_s`).

The writers contend at the shared stations (lruvec lock, ``si->lock``, the
swap cache tree lock where it was one, ``swap_avail_lock``, the memcg page
counter, ``zone->lock`` for orders the per-CPU lists skip, zsmalloc's class
lock, brd's page tree, the arm64 DVM node, a block device, DRAM bandwidth:
the rows of :mod:`mmcost.swap.stations`) through :class:`mmcost.locks.LockSystem`: exact MVA (``solve()``) or the C++
DES (``solve("simulated")``). At most ``cpus``
writers run at once (a spinlock holder is not preempted), so more tasks than
CPUs time-share the CPUs. Times in microseconds.

The memcg at its limit: every charge smaller than MEMCG_CHARGE_BATCH first
tries a whole batch for the per-CPU stock and fails (memory.failcnt counts
it), then charges its own pages; writers that reclaim together leave whole
batches for the stocks (:func:`mmcost.swap.paths.memcg_charge_cycle`). The
counter updates cost a cache line each only where another writer updated
the line last. ``memcg_failcnt_per_swapped_page`` is the model's
memory.failcnt per page swapped, checked on this kernel
(``data/kvm_6_18_memcg_failcnt``).

memory.high (cgroup v2, ``memcg_high_mb``) below memory.max holds the memcg
instead: every charge succeeds and refills the per-CPU stock (no failed
attempt, no large-folio fallback), and the charge that finds the usage over
memory.high makes the writer reclaim that batch on its return to user space
(``mem_cgroup_handle_over_high`` -> ``reclaim_high``,
:func:`mmcost.swap.paths.high_reclaim_pages`); from v5.4 to v5.7 it then
sleeps off-CPU for ``calculate_high_delay``'s penalty when the other writers'
pending batches leave the memcg far enough over
(:func:`mmcost.swap.paths.over_high_sleep_us`,
``memcg_high_throttle_share_pct``); from v5.8 it reclaims more instead. At or
above memory.max it changes nothing. No measurement on this project's
machine checks it (its guest's memory controller is cgroup v1).

Swap-in: :class:`SwapInModel` is the same write phase followed by a
read-back (usemem-style, sequential or random) that faults the pages in
again from a SWP_SYNCHRONOUS_IO device (zram, brd, pmem): ``do_swap_page``
with its swap cache lookup, the v4.15-v6.19 bypass of the swap cache and
its removal by the swap table's phase II, mTHP swap-in from v6.12 with its
fallback to order 0, zram's decompression, the slot freed on swap-in, and,
under the memcg limit, the swap-out every swap-in forces
(:func:`mmcost.swap.paths.swap_in`, :func:`mmcost.swap.reclaim.readback_network`).

The package is organised around the kernel's paths:

- :mod:`mmcost.swap.model`: :class:`SwapModel` and :class:`SwapInModel`, their fields (workload,
  device, machine, kernel switches, costs with their priors), checks and
  ``solve``;
- :mod:`mmcost.swap.paths`: one function per kernel path, taking the model
  and returning the *holds* one operation of the path puts on each station,
  keyed and united as :data:`mmcost.swap.paths.HOLDS` says;
- :mod:`mmcost.swap.stations`: one row per shared resource (which lock or
  device, its partitions, its kind, its call sites in path order); the
  network is built from the rows;
- :mod:`mmcost.swap.reclaim`: who reclaims (kswapd's share) and the
  throttling of direct reclaimers, the fixed points around the network;
- :mod:`mmcost.swap.devices`: the swap devices and compressors, and what
  each costs per page written (``mmcost.swap_devices`` is the old name);
- :mod:`mmcost.swap.constants`: the kernel's own constants.

Adding a kernel path is one function in ``paths.py`` (its holds), at most
one row in ``stations.py`` (a lock or device it is the first to take), its
fields on the model and its switch in :mod:`mmcost.kernel`: the swap-in path
is :func:`mmcost.swap.paths.swap_in`, no new row (its ``zs_free``,
``folio_add_lru`` and slot frees are sites on existing rows), the fields of
:class:`SwapInModel` and the switches ``swapin_skip_swapcache``,
``swapin_mthp`` and ``swap_table``.

Two rules every path and station keeps:

1. **Per folio swapped, unless named for the fault.** A path's holds are per
   operation of the path: for swap-out, per folio *swapped out*, except the
   keys ``fault`` and ``*_fault`` (:data:`mmcost.swap.paths.PER_WRITTEN`),
   which are per folio *written* (the swap-in path has none: its holds are per
   folio swapped in); 1/s folios are written per folio swapped
   (s = the swapped share), and the network divides those keys by s
   (:func:`mmcost.swap.stations.amount`). A new per-written key ends in
   ``_fault``; anything else is counted once per folio swapped.
2. **Every expression works on lanes of draws.** A band's draws and a
   sweep's rows are solved as one *lane model* whose float fields are NumPy
   arrays (:mod:`mmcost.lanes`, :meth:`SwapModel.solve_draws`,
   ``SwapModel._solve_lanes``). So a field may be an array anywhere: use
   :func:`~mmcost.lanes.minimum`, :func:`~mmcost.lanes.maximum`,
   :func:`~mmcost.lanes.any_of`, :func:`~mmcost.lanes.where` instead of
   ``min``, ``max``, ``if x > 0``; write ``a = a + b`` rather than ``a += b``
   on a value that may be a field (an in-place add would change the field's
   array); keep each lane's arithmetic in the same order as its
   configuration's own solve (a lane equals its configuration to the last
   bit); a branch on a float field either computes both sides
   (:func:`~mmcost.lanes.where`) or raises :class:`~mmcost.lanes.Diverge`
   (:func:`~mmcost.lanes.same`). ``tests/test_lanes.py`` checks a lane
   against its configuration.
"""

from __future__ import annotations

from .constants import MEMCG_CHARGE_BATCH, PAGE_KB, PMD_KB, RECLAIM_BATCH, SLOT_CACHE_BATCH
from .model import (DSB_GROWTH, DSB_GROWTH_SOURCE, FREE_LINE_SOURCE, FREE_LINE_US, ZS_FREE_SERIAL_US, SwapInModel,
                    SwapModel, mthp_inputs)
from .stations import SWAPCACHE_SITES, site_of

__all__ = ["DSB_GROWTH", "DSB_GROWTH_SOURCE", "FREE_LINE_SOURCE", "FREE_LINE_US", "MEMCG_CHARGE_BATCH", "PAGE_KB",
           "PMD_KB", "RECLAIM_BATCH", "SLOT_CACHE_BATCH", "SWAPCACHE_SITES", "ZS_FREE_SERIAL_US", "SwapInModel", "SwapModel",
           "mthp_inputs", "site_of"]
