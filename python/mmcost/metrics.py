"""The one metric vocabulary shared by data files, parsers and models.

Names are snake_case with the unit last (``swapout_kib_s``, ``sys_time_s``).
A published relative change is the metric's name plus ``_change_pct`` with a
``baseline`` column naming its reference. Add a name here, with its unit and
meaning, before a data file, parser or model uses it.
"""

from __future__ import annotations

import re

import pandas as pd

#: metric -> (unit, meaning)
METRICS: dict[str, tuple[str, str]] = {
    # throughput and time
    "usemem_throughput_kib_s": ("KiB/s", "usemem per-process throughput (usemem.c output_statistics)"),
    "usemem_bytes": ("bytes", "bytes written by one usemem process"),
    "usemem_time_us": ("us", "time one usemem process took"),
    "vm_scalability_throughput_kib_s": ("KiB/s", "LKP vm-scalability.throughput (sum over processes)"),
    "swapout_kib_s": ("KiB/s", "swap-out rate, vmstat 'so' column (LKP vmstat.swap.so)"),
    "swapout_gb_s": ("GB/s", "swap-out bandwidth as quoted in prose"),
    "user_time_s": ("s", "user CPU time (shell time / perf stat)"),
    "sys_time_s": ("s", "system CPU time (shell time / perf stat)"),
    "real_time_s": ("s", "wall-clock time (shell time 'real'/'total', perf stat 'time elapsed')"),
    "cpu_pct": ("%", "CPU utilisation printed by shell time (100% = one CPU)"),
    "runtime_s": ("s", "benchmark-reported runtime (XSBench 'Runtime')"),
    "threads_count": ("count", "threads the benchmark reports it used"),
    "lookups_count": ("count", "XSBench lookups"),
    "lookups_per_s": ("1/s", "XSBench lookups per second"),
    "transactions_count": ("count", "sysbench transactions"),
    "transactions_per_s": ("1/s", "sysbench transactions per second"),
    "queries_count": ("count", "sysbench queries"),
    "queries_per_s": ("1/s", "sysbench queries per second"),
    "ignored_errors_count": ("count", "sysbench ignored errors"),
    "ignored_errors_per_s": ("1/s", "sysbench ignored errors per second"),
    "reconnects_count": ("count", "sysbench reconnects"),
    "reconnects_per_s": ("1/s", "sysbench reconnects per second"),
    "events_count": ("count", "sysbench total number of events"),
    "latency_min_ms": ("ms", "sysbench latency minimum"),
    "latency_avg_ms": ("ms", "sysbench latency average"),
    "latency_max_ms": ("ms", "sysbench latency maximum"),
    "latency_p95_ms": ("ms", "sysbench latency 95th percentile"),
    "latency_sum_ms": ("ms", "sysbench latency sum"),
    # TLB
    "tlb_shootdowns": ("count", "TLB shootdown interrupts of one CPU (/proc/interrupts 'TLB' row; cpu column)"),
    "itlb_flush_count": ("count", "perf event itlb.itlb_flush"),
    "dtlb_thread_flush_count": ("count", "perf event tlb_flush.dtlb_thread"),
    "stlb_any_flush_count": ("count", "perf event tlb_flush.stlb_any"),
    "dtlb_load_miss_count": ("count", "perf event dTLB-load-misses"),
    "dtlb_store_miss_count": ("count", "perf event dTLB-store-misses"),
    "itlb_load_miss_count": ("count", "perf event iTLB-load-misses"),
    "tlb_shootdowns_per_s": ("1/s", "TLB shootdown interrupts per CPU per second (model output)"),
    "tlb_overhead_pct": ("%", "share of every CPU's time lost to TLB maintenance (model output: IPIs, flushes, refill misses)"),
    # locks
    "lock_contended_count": ("count", "perf lock contention 'contended'"),
    # perf prints each wait in its own unit (ns, us, ms, s, m, h); the parser converts every one to us
    "lock_wait_total_us": ("us", "perf lock contention 'total wait': the wait of every contended acquisition, summed"),
    "lock_wait_max_us": ("us", "perf lock contention 'max wait': the longest single wait"),
    "lock_wait_avg_us": ("us", "perf lock contention 'avg wait': mean wait of a contended acquisition, total wait / "
                               "contended (tools/perf/builtin-lock.c); LockSystem predicts the same"),
    "lock_wait_per_acquisition_us": ("us", "mean wait over all acquisitions, uncontended ones waiting 0 "
                                           "(lock_wait_avg_us x contended share; model output)"),
    "cycles_share_pct": ("%", "perf-profile cycles-pp share of one call chain (call_site column)"),
    "operations_per_s": ("1/s", "operations completed per second by all CPUs (lock model output)"),
    "lock_acquisitions_per_s": ("1/s", "acquisitions of one lock (lock column) or call site (call_site column)"),
    "lock_contended_per_s": ("1/s", "contended acquisitions per second of one lock or call site"),
    "lock_utilization": ("1", "share of time one lock is held (model output)"),
    "memcg_failcnt_per_swapped_page": ("1/page", "memory.failcnt's growth (v1: charges the memcg's limit refused, "
                                                 "batch attempts included) per 4 KiB page swapped out"),
    "memcg_high_throttle_share_pct": ("%", "share of a writer's time asleep over memory.high "
                                           "(mem_cgroup_handle_over_high's schedule_timeout_killable; model output, "
                                           "psi's memory stall includes it)"),
    "memcg_high_events_per_swapped_page": ("1/page", "memory.events 'high' (cgroup v2: reclaim_high passes that found "
                                                     "the memcg over memory.high) per 4 KiB page swapped out"),
    "tlb_shootdowns_per_swapped_page": ("1/page", "TLB shootdown interrupts (all CPUs) per 4 KiB page swapped out"),
    "exit_time_s": ("s", "time from the writers' last store to their exit: freeing swapped and resident memory "
                         "(model output; real_time_s minus the write loop's time)"),
    "munmap_time_ms": ("ms", "time to munmap memory that was swapped out (concurrent processes: until the last)"),
    "pageout_time_us": ("us", "time one madvise(MADV_PAGEOUT) call took"),
    "pglazyfreed_count": ("count", "vmstat pglazyfreed: lazyfree (MADV_FREE) pages reclaimed"),
    "reclaim_us_per_page": ("us", "the reclaiming task's time per 4K page reclaimed (unmap, discard or pageout, free)"),
    "reference_reclaim_us_per_page": ("us", "reclaim_us_per_page of a run's 4K reference region, paged out in the "
                                            "same process next to the measured one: its paired baseline"),
    "helper_on_cpu_pct": ("%", "share of a call a helper thread was on its CPU, running the mm (not lazy)"),
    "helper_lost_us": ("us", "time a thread spinning on another CPU lost during a call (flush IPIs it took)"),
    "nr_tlb_remote_flush": ("count", "vmstat: flush_tlb_multi calls (CONFIG_DEBUG_TLBFLUSH kernels)"),
    "nr_tlb_remote_flush_received": ("count", "vmstat: remote flush_tlb_func runs, all CPUs (CONFIG_DEBUG_TLBFLUSH)"),
    "nr_tlb_local_flush_all": ("count", "vmstat: the sender's own full flushes (CONFIG_DEBUG_TLBFLUSH)"),
    "nr_tlb_local_flush_one": ("count", "vmstat: the sender's own single-entry flushes (CONFIG_DEBUG_TLBFLUSH)"),
    "folios_per_flush": ("folios", "folios migrated or reclaimed per TLB flush operation (batch fill)"),
    "migrated_pages_per_s": ("pages/s", "pages one migrating thread moves per second (closed loop)"),
    "migration_time_s": ("s", "time to migrate migration_pages pages (closed loop)"),
    "tlb_shootdowns_per_folio": ("1/folio", "flush IPIs received (all CPUs) per folio migrated or reclaimed"),
    "ipi_receive_us_per_folio": ("us", "time flush IPIs take from their target CPUs, per folio migrated or reclaimed"),
    "flush_ipi_sender_us_per_folio": ("us", "the flushing thread's time for IPIs and their acknowledgements, per "
                                            "folio (beyond its own flush)"),
    "migrator_busy_pct": ("%", "share of the migrating thread's CPU (kswapd for demotion) the migrations take"),
    "kswapd_reclaim_share_pct": ("%", "pgsteal_kswapd / (pgsteal_kswapd + pgsteal_direct), /proc/vmstat"),
    "large_fault_share_pct": ("%", "share of bytes faulted as the requested large folio size (the rest fell back to 4K)"),
    "swapin_throughput_kib_s": ("KiB/s", "read-back throughput per process: its bytes over the read-back's own time "
                                         "(usemem's formula; mmcost-writer --readback, mmcost.swap.SwapInModel)"),
    "major_fault_latency_us": ("us", "mean time of one major (swap-in) fault, the reclaim in its charge included"),
    "large_swapin_share_pct": ("%", "share of bytes swapped in as the large folio size (the rest fell back to 4K)"),
    "readback_tlb_shootdowns_per_swapped_page": ("1/page", "TLB shootdown IPIs per page swapped out during a "
                                                           "read-back (model output: the reclaim its swap-ins force)"),
    # swap / mTHP
    "thp_swap_alloc_failure_change_pct": ("%", "change of mTHP swap-slot allocation failures"),
    "fault_alloc_count": ("count", "mTHP anon_fault_alloc"),
    "fault_fallback_count": ("count", "mTHP anon_fault_fallback"),
    "swpout_count": ("count", "mTHP swpout"),
    "swpout_fallback_count": ("count", "mTHP swpout_fallback"),
    "fault_fallback_charge_count": ("count", "mTHP anon_fault_fallback_charge: memcg charge failed"),
    "split_count": ("count", "mTHP split"),
    # /proc/vmstat event counters (mmcost.parse.vmstat: <name>_count)
    "pswpout_count": ("count", "/proc/vmstat pswpout: pages swapped out"),
    "pgfault_count": ("count", "/proc/vmstat pgfault: page faults"),
    "pgmajfault_count": ("count", "/proc/vmstat pgmajfault: major page faults"),
    "thp_fault_alloc_count": ("count", "/proc/vmstat thp_fault_alloc: PMD THP faults that got a huge page"),
    "thp_fault_fallback_count": ("count", "/proc/vmstat thp_fault_fallback: PMD THP faults that fell back"),
    "thp_swpout_count": ("count", "/proc/vmstat thp_swpout: PMD THPs swapped out whole"),
    "thp_swpout_fallback_count": ("count", "/proc/vmstat thp_swpout_fallback: PMD THPs split before swap-out"),
    "pswpin_count": ("count", "/proc/vmstat pswpin: pages swapped in"),
    "nr_tlb_remote_flush_count": ("count", "/proc/vmstat nr_tlb_remote_flush (CONFIG_DEBUG_TLBFLUSH)"),
    "nr_tlb_remote_flush_received_count": ("count", "/proc/vmstat nr_tlb_remote_flush_received (CONFIG_DEBUG_TLBFLUSH)"),
    "nr_tlb_local_flush_all_count": ("count", "/proc/vmstat nr_tlb_local_flush_all (CONFIG_DEBUG_TLBFLUSH)"),
    "nr_tlb_local_flush_one_count": ("count", "/proc/vmstat nr_tlb_local_flush_one (CONFIG_DEBUG_TLBFLUSH)"),
    "zram_orig_data_size_peak_bytes": ("bytes", "zram mm_stat orig_data_size, peak during the run"),
    "zram_compr_data_size_peak_bytes": ("bytes", "zram mm_stat compr_data_size, peak during the run"),
    "zram_mem_used_total_peak_bytes": ("bytes", "zram mm_stat mem_used_total, peak during the run"),
    # mmcost measure swapin (mmcost.measure.swapin_runs): the read-back phase, per process
    "swapin_bytes": ("bytes", "bytes one process read back (mmcost-writer --readback)"),
    "swapin_time_us": ("us", "one process's read-back time alone (mmcost-writer --readback)"),
    "swapped_at_start_pages": ("pages", "pages /proc/self/pagemap showed swapped (bit 62) when the read-back began"),
    "swapped_at_touch_pages": ("pages", "pages pagemap showed swapped just before each 2 MiB was read back (in order)"),
    # ... and its counters, deltas over the read-back phase
    "swpin_count": ("count", "mTHP swpin: large folios swapped in whole (v6.12)"),
    "swpin_fallback_count": ("count", "mTHP swpin_fallback: large folio swap-ins that fell back to a smaller order"),
    "swpin_fallback_charge_count": ("count", "mTHP swpin_fallback_charge: ... because the memcg charge failed"),
    "workingset_refault_anon_count": ("count", "/proc/vmstat workingset_refault_anon: anon refaults (shadow entries)"),
    "workingset_restore_anon_count": ("count", "/proc/vmstat workingset_restore_anon: refaults of pages active at eviction"),
    "swap_ra_count": ("count", "/proc/vmstat swap_ra: pages read by swap readahead"),
    "swap_ra_hit_count": ("count", "/proc/vmstat swap_ra_hit: readahead pages later faulted"),
    "swpin_zero_count": ("count", "/proc/vmstat swpin_zero: zero-filled pages swapped in from the zero map (v6.12)"),
    "swpout_zero_count": ("count", "/proc/vmstat swpout_zero: zero-filled pages kept in the zero map, not written"),
    "zswpin_count": ("count", "/proc/vmstat zswpin: pages loaded from zswap"),
    "thp_split_page_count": ("count", "/proc/vmstat thp_split_page: huge pages split"),
    "memcg_pgfault_count": ("count", "memcg memory.stat pgfault"),
    "memcg_failcnt_count": ("count", "memcg memory.failcnt (v1): charges the memory counter refused at its limit"),
    "memcg_memsw_failcnt_count": ("count", "memcg memory.memsw.failcnt (v1): charges the memory+swap counter refused"),
    "memcg_pgmajfault_count": ("count", "memcg memory.stat pgmajfault"),
    "memcg_pgpgin_count": ("count", "memcg memory.stat pgpgin (v1: pages charged)"),
    "memcg_pgpgout_count": ("count", "memcg memory.stat pgpgout (v1: pages uncharged)"),
    "memcg_workingset_refault_anon_count": ("count", "memcg memory.stat workingset_refault_anon"),
    "memcg_swap_bytes": ("bytes", "memcg memory.stat swap (v1), its change"),
    "memcg_rss_bytes": ("bytes", "memcg memory.stat rss (v1), its change"),
    "memcg_anon_bytes": ("bytes", "memcg memory.stat anon (v2), its change"),
    "memcg_swapcached_bytes": ("bytes", "memcg memory.stat swapcached, its change"),
    # ... and the write phase before it (swap-out), named write_<metric>
    **{f"write_{k}": ("count", f"write phase of mmcost measure swapin: {what}") for k, what in (
        ("pswpout_count", "/proc/vmstat pswpout"), ("pswpin_count", "/proc/vmstat pswpin"),
        ("thp_swpout_count", "/proc/vmstat thp_swpout"), ("thp_swpout_fallback_count", "/proc/vmstat thp_swpout_fallback"),
        ("swpout_count", "mTHP swpout"), ("swpout_fallback_count", "mTHP swpout_fallback"),
        ("fault_alloc_count", "mTHP anon_fault_alloc"), ("fault_fallback_count", "mTHP anon_fault_fallback"),
        ("tlb_shootdowns", "/proc/interrupts TLB shootdowns"))},
    # published corpus (issue 32): workloads and counters of the further threads
    "usemem_total_throughput_kib_s": ("KiB/s", "usemem throughput summed over its processes ('Throughput (Sum)', 'total throughput')"),
    "swap_cached_kib": ("KiB", "/proc/meminfo SwapCached (LKP meminfo.SwapCached)"),
    "instructions_per_cycle": ("1", "instructions per cycle (LKP perf-stat.ipc)"),
    "cache_miss_rate_pct": ("%", "cache misses per cache reference (LKP perf-stat.cache-miss-rate%)"),
    "op_cost_cycles": ("cycles", "cost of one operation in CPU cycles (in-kernel micro-benchmark; the operation in the variant column)"),
    "unixbench_shell_lpm": ("lpm", "UnixBench 'Shell Scripts' result, loops per minute"),
    "unixbench_index": ("index", "UnixBench 'System Benchmarks Index Score' of the tests run"),
    "llama_total_time_ms": ("ms", "llama.cpp llama_print_timings 'total time' of one inference"),
    "program_runtime_s": ("s", "a test program's runtime as the source words it (how it was timed not stated)"),
    # a micro-benchmark whose unit the source does not print (kept as printed, unit "unstated")
    "swapout_result": ("unstated", "a swap-out micro-benchmark's per-run result, unit not printed by the source"),
    "swapin_result": ("unstated", "a swap-in micro-benchmark's per-run result, unit not printed by the source"),
    "unixbench_shell1_result": ("unstated", "UnixBench shell1 per-iteration result; whether score or lpm not stated"),
    "sysbench_fileio_result": ("unstated", "sysbench fileio result as printed in a table; unit not printed by the source"),
    "performance_unstated": ("unstated", "a benchmark's 'performance' as the source words it; metric not stated"),
}

#: mTHP stats file -> metric (hugepages-<size>kB/stats/, transhuge.rst)
MTHP_COUNTERS = {
    "anon_fault_alloc": "fault_alloc_count",
    "anon_fault_fallback": "fault_fallback_count",
    "anon_fault_fallback_charge": "fault_fallback_charge_count",
    "swpout": "swpout_count",
    "swpout_fallback": "swpout_fallback_count",
    "split": "split_count",
}

#: perf event name -> metric (events not listed become snake_case + '_count')
PERF_EVENTS = {
    "itlb.itlb_flush": "itlb_flush_count",
    "tlb_flush.dtlb_thread": "dtlb_thread_flush_count",
    "tlb_flush.stlb_any": "stlb_any_flush_count",
    "dTLB-load-misses": "dtlb_load_miss_count",
    "dTLB-store-misses": "dtlb_store_miss_count",
    "iTLB-load-misses": "itlb_load_miss_count",
}

#: LKP metric name -> metric (perf-profile.cycles-pp.* is handled by prefix)
LKP_NAMES = {
    "vm-scalability.throughput": "vm_scalability_throughput_kib_s",
    "vmstat.swap.so": "swapout_kib_s",
}

CHANGE_SUFFIX = "_change_pct"


def snake(name: str) -> str:
    """``dTLB-load-misses`` -> ``dtlb_load_misses``."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def unit_of(metric: str) -> str:
    """The unit of a vocabulary metric (``_change_pct`` metrics are in %)."""
    if metric.endswith(CHANGE_SUFFIX):
        return "%"
    if metric in METRICS:
        return METRICS[metric][0]
    raise KeyError(f"unknown metric {metric!r}; see mmcost.metrics.METRICS")


def ceiling(metric: str) -> float | None:
    """The largest value a share of a whole can take (100 in %, 1 as a
    fraction): a metric whose name or description says it is a share (a
    lock's utilisation, a large-folio share, a CPU's busy share); None for
    every other metric, a relative change included."""
    if metric.endswith(CHANGE_SUFFIX) or metric not in METRICS:
        return None
    unit, what = METRICS[metric]
    if unit not in ("%", "1") or not ("share" in metric or "share" in what):
        return None
    return 100.0 if unit == "%" else 1.0


#: axis-label words where the name alone reads badly (the unit is added by label())
LABELS = {
    "usemem_throughput_kib_s": "usemem throughput per process",
    "tlb_shootdowns": "TLB shootdowns per CPU",
    "tlb_shootdowns_per_s": "TLB shootdowns per CPU per second",
    "cycles_share_pct": "share of cycles",
    "runtime_s": "runtime",
    "swapout_kib_s": "swap-out rate",
    "tlb_overhead_pct": "CPU time lost to TLB maintenance",
    "sys_time_s": "system CPU time",
    "user_time_s": "user CPU time",
    "real_time_s": "wall-clock time",
    "itlb_flush_count": "iTLB flushes",
    "dtlb_thread_flush_count": "dTLB thread flushes",
    "stlb_any_flush_count": "sTLB flushes",
}

#: the words of snake_case names that are acronyms or kernel names
_WORDS = {"tlb": "TLB", "itlb": "iTLB", "dtlb": "dTLB", "stlb": "sTLB", "cpu": "CPU", "cpus": "CPUs",
          "ipi": "IPI", "thp": "THP", "mthp": "mTHP", "memcg": "memcg", "zram": "zram", "numa": "NUMA",
          "lru": "LRU", "kib": "KiB", "mib": "MiB", "gb": "GB"}

#: unit suffixes a name ends in, longest first (what label() strips before adding [unit])
_UNIT_SUFFIXES = ("_kib_s", "_gb_s", "_per_s", "_count", "_bytes", "_cycles", "_kib", "_pct", "_us", "_ms", "_ns", "_s")

#: configuration columns as axis words
COLUMN_LABELS = {"folio_kb": "folio size", "cpu": "CPU", "cpus": "CPUs", "processes": "processes",
                 "threads": "threads", "memcg_mb": "memcg limit [MiB]", "fast_mem_mb": "fast memory [MiB]",
                 "swap_mb": "swap size [MiB]", "variant": "kernel"}


def words(name: str) -> str:
    """A snake_case name as words: ``itlb_flush`` -> ``iTLB flush``."""
    return " ".join(_WORDS.get(w, w) for w in name.split("_") if w)


def label(metric: str, baseline: str | None = None) -> str:
    """An axis label in words with its unit: ``usemem_throughput_kib_s`` ->
    ``usemem throughput per process [KiB/s]``; a ``_change_pct`` metric ->
    ``... change vs <baseline> [%]``. Names outside the vocabulary get
    their words and no unit."""
    base = metric.removesuffix(CHANGE_SUFFIX)
    change = base != metric
    text = LABELS.get(base)
    if text is None:
        stem = base
        for suffix in _UNIT_SUFFIXES:
            if stem.endswith(suffix) and stem != suffix:
                stem = stem[: -len(suffix)]
                break
        text = words(stem)
    if change:
        return f"{text} change{f' vs {baseline}' if baseline else ''} [%]"
    unit = METRICS[base][0] if base in METRICS else ""
    return f"{text} [{unit}]" if unit and unit not in ("1", "count", "unstated") else text


def column_label(column: str) -> str:
    """A configuration column as axis words (``folio_kb`` -> ``folio size``)."""
    return COLUMN_LABELS.get(column, words(column))


def folio_label(kb: float) -> str:
    """A folio size in KiB as kernel people write it: 4K, 64K, 2M."""
    kb = float(kb)
    if kb >= 1024 and (kb / 1024).is_integer():
        return f"{kb / 1024:g}M"
    return f"{kb:g}K"


def for_perf_event(event: str) -> str:
    return PERF_EVENTS.get(event, snake(event) + "_count")


def for_lkp(name: str) -> tuple[str, str | None]:
    """(metric, call_site) for an LKP metric name."""
    prefix = "perf-profile.cycles-pp."
    if name.startswith(prefix):
        return "cycles_share_pct", name[len(prefix) :]
    return LKP_NAMES.get(name, snake(name)), None


def table(pattern: str | None = None) -> pd.DataFrame:
    """The vocabulary as a DataFrame (metric, unit, meaning); ``pattern`` filters by regex."""
    df = pd.DataFrame([(m, u, d) for m, (u, d) in METRICS.items()], columns=["metric", "unit", "meaning"])
    if pattern is not None:
        keep = df["metric"].str.contains(pattern, regex=True) | df["meaning"].str.contains(pattern, regex=True, case=False)
        df = df[keep]
    return df.reset_index(drop=True)
