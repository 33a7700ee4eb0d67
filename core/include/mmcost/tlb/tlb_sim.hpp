// TLB flush batching: which CPUs flush, when, and how (IPI or broadcast TLBI),
// for page migrations under four kernel policies.
//
// Time is in seconds. Migration calls arrive as a Poisson stream (reclaim's
// swap-out unmaps as a second one, which migrc never defers); each unmaps
// `batch_folios` folios at once (shrink_folio_list -> demote_folio_list ->
// migrate_pages_batch in mm/vmscan.c and mm/migrate.c; reclaim isolates
// SWAP_CLUSTER_MAX = 32 folios per call). Folios whose PTEs were already
// PROT_NONE need no flush (commit 4d4b6d66db, "mm,unmap: avoid flushing tlb in
// batch if PTE is inaccessible"); the Python layer removes them from the rate
// by Poisson thinning before calling this.
//
// Every CPU runs the migrating mm (the XSBench threads of seed 001), so a flush
// targets all CPUs: the caller's own TLB locally, every other one by IPI on
// x86 (native_flush_tlb_multi -> flush_tlb_func, counted in /proc/interrupts
// "TLB shootdowns") or by broadcast TLBI on arm64 (no IPI, no interrupt).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "mmcost/sim/random.hpp"

namespace mmcost::tlb {

enum class Arch { X86 = 0, Arm64 = 1 };

// Immediate: one flush per PTE (try_to_migrate_one without TTU_BATCH_FLUSH ->
//   ptep_clear_flush -> flush_tlb_mm_range of one page): x86 INVLPGs it on the
//   mm's running CPUs (a full flush if tlb_single_page_flush_ceiling is 0).
// Batched: one flush per call (try_to_unmap_flush -> arch_tlbbatch_flush);
//   on x86 a full flush of every CPU in the batch's cpumask (v6.9
//   arch/x86/mm/tlb.c passes TLB_FLUSH_ALL), on arm64 one TLBI per entry at
//   unmap time and a single DSB at the end (commit 43b3dfdd0455).
// Deferred: migrc (Byungchul Park, "Reduce tlb and interrupt numbers over 90%
//   by improving folio migration", v9, 2024): a call whose folios are all
//   mapped read-only skips the flush; when the first of its source folios
//   is reused by the allocator, the CPUs that have not had a full flush since
//   the call are flushed (x86: IPI to exactly those; arm64: a broadcast
//   ASID flush of all CPUs). A call with a writable folio flushes as Batched.
enum class Policy { Immediate = 0, Batched = 1, Deferred = 2 };

struct TlbSimParams {
  int cpus = 1;
  Arch arch = Arch::X86;
  Policy policy = Policy::Batched;
  double call_rate = 0.0;        // migration calls (batches) per second; migrc may defer their flush
  double reclaim_call_rate = 0;  // reclaim unmap calls per second (swap-out); flushed as Batched under migrc
  int batch_folios = 32;         // folios unmapped per call
  int entries_per_folio = 1;     // TLB entries per folio (1 for 4K or PMD-mapped THP)
  int flush_ceiling = 33;        // tlb_single_page_flush_ceiling (x86 Immediate)
  double writable_fraction = 0;  // folios migrc cannot defer
  // Full flushes that need no migration: x86 per CPU (switch_mm_irqs_off with
  // a recycled PCID); arm64 a global ASID rollover (arch/arm64/mm/context.c).
  double natural_flush_rate = 0;
  // Other full-flush rounds of the mm per second (NUMA-balancing scans:
  // task_numa_work -> change_prot_numa -> flush_tlb_range above the ceiling).
  double other_round_rate = 0;
  // Other single-page flushes of the mm per second, by a task of it (COW faults: wp_page_copy ->
  // ptep_clear_flush; mprotect of one page): a page flush each.
  double other_page_rate = 0;
  sim::Distribution reuse;       // seconds from a folio's migration to its reuse
  // Who is flushed (arch/x86/mm/tlb.c, native_flush_tlb_multi + should_flush_tlb): `mms` mms, mm j on
  // CPUs [j*mm_cpus, (j+1)*mm_cpus) (mm_cpus = 0: all CPUs); lazy CPUs get no IPI. A sender outside every
  // mm (kswapd) runs on the last CPU when one is free, else on a (lazy) CPU of a random mm.
  int mm_cpus = 0;
  int mms = 1;
  bool sender_in_mm = false;
  double promotion_call_rate = 0;  // one-folio migrations by a task of the folio's mm (NUMA hinting)
  double migrate_fraction = 1;     // a migration call takes each of batch_folios folios with this chance (>= 1)
  double dirty_fraction = 1;       // reclaimed folios with a dirty PTE: flushed before pageout
  bool reclaim_batched = true;     // arch_tlbbatch_flush for reclaim (else ptep_clear_flush per PTE)
  bool flush_dirty = true;         // try_to_unmap_flush_dirty before pageout
  // x86 INVLPGB (v6.15): arch_tlbbatch_flush -> invlpgb_flush_all_nonglobals (every CPU, no IPI); an mm
  // on more than 3 CPUs has a global ASID, so its page and mm flushes broadcast too (broadcast_tlb_flush).
  // Broadcasts and their TLBSYNC waits are counted in tlbi_ops / dsb_syncs.
  bool broadcast = false;
  bool tlbi_range = false;  // arm64 FEAT_TLBIRANGE: one range TLBI per folio in a batch, not one per entry
  double warmup = 0;             // seconds simulated before counting
  double horizon = 1;            // seconds counted
  void validate() const;         // throws InvalidArgument naming the field
};

struct TlbSimResult {
  std::vector<double> shootdowns;   // per CPU: flush IPIs received
  std::vector<double> full_flushes; // per CPU: local + remote full flushes
  std::vector<double> invlpg;       // per CPU: single-entry invalidations
  double calls = 0;           // migration and reclaim calls counted
  double rounds = 0;          // flush operations issued (x86: flush_tlb_multi calls with a remote target)
  double ipis = 0;            // IPIs sent (x86)
  double tlbi_ops = 0;        // broadcast TLBI instructions (arm64)
  double dsb_syncs = 0;       // DSB ISH waits (arm64)
  double deferred_calls = 0;  // calls whose flush migrc deferred
  double reuse_rounds = 0;    // deferred calls that needed a flush at reuse
  double flushes = 0;         // flush operations (batch, page, reuse)
  double folios = 0;          // folios migrated and reclaimed
  double local_full = 0;      // the sender's own full flushes in flush_tlb_func (a task of the mm)
  double local_one = 0;       // the sender's own INVLPG'd entries (a task of the mm)
  double events = 0;          // all events processed, warm-up included
  bool stopped = false;
};

// One replication on stream (seed, replication). Checks `stop` every 4096 events.
TlbSimResult simulate_tlb(const TlbSimParams& p, std::uint64_t seed, std::uint64_t replication,
                          const std::atomic<bool>& stop);

}  // namespace mmcost::tlb
