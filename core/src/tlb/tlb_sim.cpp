#include "mmcost/tlb/tlb_sim.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "mmcost/errors.hpp"
#include "mmcost/sim/event_queue.hpp"
#include "mmcost/sim/stop_check.hpp"

namespace mmcost::tlb {

void TlbSimParams::validate() const {
  if (cpus < 1) throw InvalidArgument("cpus must be >= 1");
  if (cpus >= sim::EventQueue::kMaxTargets) throw InvalidArgument("cpus must be below 2^20");
  if (arch != Arch::X86 && arch != Arch::Arm64) throw InvalidArgument("arch is unknown");
  if (policy != Policy::Immediate && policy != Policy::Batched && policy != Policy::Deferred)
    throw InvalidArgument("policy is unknown");
  check::finite_nonnegative("call_rate", call_rate);
  check::finite_nonnegative("reclaim_call_rate", reclaim_call_rate);
  if (batch_folios < 1) throw InvalidArgument("batch_folios must be >= 1");
  if (entries_per_folio < 1) throw InvalidArgument("entries_per_folio must be >= 1");
  if (flush_ceiling < 0) throw InvalidArgument("flush_ceiling must be >= 0");
  check::finite_nonnegative("writable_fraction", writable_fraction);
  if (writable_fraction > 1) throw InvalidArgument("writable_fraction must be <= 1");
  check::finite_nonnegative("natural_flush_rate", natural_flush_rate);
  check::finite_nonnegative("other_round_rate", other_round_rate);
  if (mm_cpus < 0 || mm_cpus > cpus) throw InvalidArgument("mm_cpus must be in [0, cpus]");
  if (mms < 1) throw InvalidArgument("mms must be >= 1");
  if (mms > 1 && static_cast<long long>(mms) * std::max(mm_cpus, 1) > cpus)
    throw InvalidArgument("mms * mm_cpus must not exceed cpus (the mms run on disjoint CPUs)");
  check::finite_nonnegative("promotion_call_rate", promotion_call_rate);
  check::finite_nonnegative("other_page_rate", other_page_rate);
  check::finite_positive("migrate_fraction", migrate_fraction);
  if (migrate_fraction > 1) throw InvalidArgument("migrate_fraction must be <= 1");
  check::finite_nonnegative("dirty_fraction", dirty_fraction);
  if (dirty_fraction > 1) throw InvalidArgument("dirty_fraction must be <= 1");
  check::finite_nonnegative("warmup", warmup);
  check::finite_positive("horizon", horizon);
  reuse.validate("reuse");
}

namespace {

enum EventKind : std::int32_t { kCall = 0, kNatural = 1, kOther = 2, kReuse = 3, kReclaim = 4, kPromotion = 5, kOtherPage = 6 };

class TlbSim {
 public:
  TlbSim(const TlbSimParams& p, std::uint64_t seed, std::uint64_t rep)
      : p_(p), n_(static_cast<std::size_t>(p.cpus)), rng_(seed, rep), last_flush_(n_, 0.0) {
    r_.shootdowns.assign(n_, 0.0);
    r_.full_flushes.assign(n_, 0.0);
    r_.invlpg.assign(n_, 0.0);
    k_ = p.mm_cpus > 0 ? static_cast<std::size_t>(p.mm_cpus) : n_;
    mms_ = static_cast<std::size_t>(p.mms);
    busy_ = std::min(n_, mms_ * k_);
    in_batch_.assign(mms_, 0);
  }

  TlbSimResult run(const std::atomic<bool>& stop) {
    const double end = p_.warmup + p_.horizon;
    if (p_.call_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.call_rate), 0, kCall);
    if (p_.reclaim_call_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.reclaim_call_rate), 0, kReclaim);
    if (p_.promotion_call_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.promotion_call_rate), 0, kPromotion);
    if (p_.other_page_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.other_page_rate), 0, kOtherPage);
    if (p_.other_round_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.other_round_rate), 0, kOther);
    if (p_.natural_flush_rate > 0) {
      // x86: each CPU's own stream; arm64: one global ASID-rollover stream
      const int streams = p_.arch == Arch::X86 ? p_.cpus : 1;
      for (int c = 0; c < streams; ++c) q_.schedule(rng_.exponential(1.0 / p_.natural_flush_rate), c, kNatural);
    }
    ticks_.watch(stop);
    try {
      events(stop, end);
    } catch (const sim::Interrupted&) {
      r_.stopped = true;
    }
    r_.events = static_cast<double>(q_.processed());
    return r_;
  }

 private:
  void events(const std::atomic<bool>& stop, double end) {
    while (!q_.empty()) {
      if ((q_.processed() & 4095) == 0 && stop.load(std::memory_order_relaxed)) {
        r_.stopped = true;
        break;
      }
      const sim::Event e = q_.pop();
      if (e.time > end) break;
      counting_ = e.time >= p_.warmup;
      switch (e.kind()) {
        case kCall: call(); break;
        case kNatural: natural(e.target()); break;
        case kOther: other(); break;
        case kReclaim: reclaim(); break;
        case kPromotion: promotion(); break;
        case kOtherPage: other_page(); break;
        default: reuse(e.target()); break;
      }
    }
  }

  int random_cpu() { return static_cast<int>(rng_.next() % n_); }
  std::size_t random_mm() { return static_cast<std::size_t>(rng_.next() % mms_); }
  int cpu_of(std::size_t mm) { return static_cast<int>(mm * k_ + rng_.next() % k_); }
  double add(bool counted) const { return counted ? 1.0 : 0.0; }

  // The flushing CPU: a task of `mm`, or kswapd (the last CPU when the mms leave one free, else a lazy CPU
  // it took from a random mm).
  int sender(std::size_t mm, bool in_mm) {
    if (in_mm) return cpu_of(mm);
    return busy_ < n_ ? static_cast<int>(n_ - 1) : cpu_of(random_mm());
  }

  void full_flush(std::size_t c) {
    last_flush_[c] = q_.now();
    r_.full_flushes[c] += add(counting_);
  }

  // A full flush of every CPU of the marked mms (x86: IPIs to all but the sender; arm64: one broadcast).
  // The sender's own CPU flushes when it is among them.
  void flush_mms(int sender, bool task) {
    double remote = 0;
    for (std::size_t j = 0; j < mms_; ++j) {
      if (!in_batch_[j]) continue;
      in_batch_[j] = 0;
      for (std::size_t c = j * k_; c < (j + 1) * k_ && c < n_; ++c) {
        full_flush(c);
        if (static_cast<int>(c) == sender) {
          r_.local_full += add(counting_ && task && p_.arch == Arch::X86);
        } else if (p_.arch == Arch::X86) {
          r_.shootdowns[c] += add(counting_);
          remote += 1;
        }
      }
    }
    if (p_.arch == Arch::X86) {
      r_.rounds += add(counting_ && remote > 0);
      r_.ipis += add(counting_) * remote;
    } else {
      r_.tlbi_ops += add(counting_);  // TLBI ASIDE1IS
      r_.dsb_syncs += add(counting_);
    }
  }

  bool global_asid() const { return p_.broadcast && k_ > 3; }

  // One INVLPGB (+ TLBSYNC) flushing every CPU of the marked mms, or of the machine (`all`).
  void broadcast_flush(bool all) {
    for (std::size_t c = 0; c < n_; ++c)
      if (all || (c / k_ < mms_ && in_batch_[c / k_])) full_flush(c);
    std::fill(in_batch_.begin(), in_batch_.end(), 0);
    r_.tlbi_ops += add(counting_);
    r_.dsb_syncs += add(counting_);
  }

  // arch_tlbbatch_flush over `folios` folios of the marked mms.
  void batch_flush(int sender, bool task, int folios) {
    r_.flushes += add(counting_);
    if (p_.arch == Arch::X86 && p_.broadcast) {
      broadcast_flush(true);
      return;
    }
    if (p_.arch == Arch::X86) {
      flush_mms(sender, task);
      return;
    }
    std::fill(in_batch_.begin(), in_batch_.end(), 0);
    r_.tlbi_ops += add(counting_) * folios * (p_.tlbi_range ? 1 : p_.entries_per_folio);
    r_.dsb_syncs += add(counting_);
  }

  // ptep_clear_flush of each PTE of one folio of `mm`: INVLPG on the mm's CPUs.
  void page_flushes(std::size_t mm, int sender, bool task) {
    for (int e = 0; e < p_.entries_per_folio; ++e) {
      ticks_.tick();
      r_.flushes += add(counting_);
      one_page_flush(mm, sender, task);
    }
  }

  // flush_tlb_mm_range of one page of `mm`, sent from CPU `sender`.
  void one_page_flush(std::size_t mm, int sender, bool task = true) {
    if (p_.arch == Arch::Arm64 || global_asid()) {  // one TLBI / INVLPGB, then its completion wait
      r_.tlbi_ops += add(counting_);
      r_.dsb_syncs += add(counting_);
      return;
    }
    if (p_.flush_ceiling < 1) {
      in_batch_[mm] = 1;
      flush_mms(sender, task);
      return;
    }
    double remote = 0;
    for (std::size_t c = mm * k_; c < (mm + 1) * k_ && c < n_; ++c) {
      r_.invlpg[c] += add(counting_);
      if (static_cast<int>(c) == sender) {
        r_.local_one += add(counting_ && task);
      } else {
        r_.shootdowns[c] += add(counting_);
        remote += 1;
      }
    }
    r_.rounds += add(counting_ && remote > 0);
    r_.ipis += add(counting_) * remote;
  }

  int fill() {  // Binomial(batch_folios, migrate_fraction) given > 0
    if (p_.migrate_fraction >= 1) return p_.batch_folios;
    for (;;) {
      int f = 0;
      for (int i = 0; i < p_.batch_folios; ++i) {
        ticks_.tick();
        f += rng_.uniform() < p_.migrate_fraction ? 1 : 0;
      }
      if (f > 0) return f;
    }
  }

  void call() {
    q_.schedule(rng_.exponential(1.0 / p_.call_rate), 0, kCall);
    r_.calls += add(counting_);
    const int folios = fill();
    r_.folios += add(counting_) * folios;
    const std::size_t own = random_mm();
    const int s = sender(own, p_.sender_in_mm);
    if (p_.policy == Policy::Immediate) {
      for (int f = 0; f < folios; ++f) {
        ticks_.tick();
        page_flushes(random_mm(), s, p_.sender_in_mm);
      }
      return;
    }
    for (int f = 0; f < folios; ++f) {
      ticks_.tick();
      in_batch_[random_mm()] = 1;
    }
    if (p_.policy == Policy::Deferred) {
      const double keep = std::pow(1.0 - p_.writable_fraction, folios);
      if (!(keep < 1.0 && rng_.uniform() > keep)) {  // every folio read-only: defer
        std::fill(in_batch_.begin(), in_batch_.end(), 0);
        defer(folios);
        return;
      }
    }
    batch_flush(s, p_.sender_in_mm, folios);
  }

  void defer(int folios) {
    r_.deferred_calls += add(counting_);
    // The first reuse of any of the call's folios decides: the deadline is their minimum.
    double first = p_.reuse.sample(rng_);
    for (int f = 1; f < folios; ++f) {
      ticks_.tick();
      first = std::min(first, p_.reuse.sample(rng_));
    }
    std::int32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      migrated_at_[static_cast<std::size_t>(slot)] = q_.now();
    } else {
      if (migrated_at_.size() + 1 >= static_cast<std::size_t>(sim::EventQueue::kMaxTargets))
        throw InvalidArgument("reuse: more than 2^20 deferred calls outstanding; reuse times are too long for call_rate");
      slot = static_cast<std::int32_t>(migrated_at_.size());
      migrated_at_.push_back(q_.now());
    }
    q_.schedule(first, slot, kReuse);
  }

  // do_numa_page -> migrate_misplaced_folio: one folio, by a task of its mm
  void promotion() {
    q_.schedule(rng_.exponential(1.0 / p_.promotion_call_rate), 0, kPromotion);
    r_.calls += add(counting_);
    r_.folios += add(counting_);
    const std::size_t mm = random_mm();
    const int s = cpu_of(mm);
    if (p_.policy == Policy::Immediate) {
      page_flushes(mm, s, true);
      return;
    }
    in_batch_[mm] = 1;
    batch_flush(s, true, 1);
  }

  // shrink_folio_list: unmap each folio into the batch; a dirty one flushes the batch before pageout
  // (try_to_unmap_flush_dirty); the closing try_to_unmap_flush takes what is left. Never deferred.
  void reclaim() {
    q_.schedule(rng_.exponential(1.0 / p_.reclaim_call_rate), 0, kReclaim);
    r_.calls += add(counting_);
    r_.folios += add(counting_) * p_.batch_folios;
    const int s = sender(random_mm(), p_.sender_in_mm);
    const bool batched = p_.reclaim_batched && p_.policy != Policy::Immediate;
    int pending = 0;
    for (int f = 0; f < p_.batch_folios; ++f) {
      ticks_.tick();
      const std::size_t mm = random_mm();
      if (!batched) {
        page_flushes(mm, s, p_.sender_in_mm);
        continue;
      }
      in_batch_[mm] = 1;
      ++pending;
      if (p_.flush_dirty && rng_.uniform() < p_.dirty_fraction) {
        batch_flush(s, p_.sender_in_mm, pending);
        pending = 0;
      }
    }
    if (pending > 0) batch_flush(s, p_.sender_in_mm, pending);
  }

  void reuse(std::int32_t slot) {
    const double migrated = migrated_at_[static_cast<std::size_t>(slot)];
    free_slots_.push_back(slot);
    const bool counted = counting_ && migrated >= p_.warmup;  // the call itself was counted
    const int reuser = cpu_of(random_mm());
    bool pending = false;
    for (std::size_t c = 0; c < busy_ && !pending; ++c) pending = last_flush_[c] < migrated;
    if (!pending) return;
    r_.reuse_rounds += add(counted);
    r_.flushes += add(counting_);
    if (p_.arch == Arch::X86 && p_.broadcast) {
      std::fill(in_batch_.begin(), in_batch_.end(), 1);
      broadcast_flush(false);
      return;
    }
    if (p_.arch == Arch::Arm64) {
      std::fill(in_batch_.begin(), in_batch_.end(), 1);
      flush_mms(reuser, true);
      return;
    }
    bool remote = false;
    for (std::size_t c = 0; c < busy_; ++c) {
      if (last_flush_[c] >= migrated) continue;  // a full flush since the migration covered it
      full_flush(c);
      if (static_cast<int>(c) != reuser) {
        remote = true;
        r_.shootdowns[c] += add(counting_);
        r_.ipis += add(counting_);
      } else {
        r_.local_full += add(counting_);
      }
    }
    r_.rounds += add(counting_ && remote);
  }

  void natural(std::int32_t cpu) {
    q_.schedule(rng_.exponential(1.0 / p_.natural_flush_rate), cpu, kNatural);
    if (p_.arch == Arch::X86) {
      full_flush(static_cast<std::size_t>(cpu));
    } else {
      for (std::size_t c = 0; c < n_; ++c) full_flush(c);
    }
  }

  void other_page() {  // a COW fault or one-page mprotect: a task of the mm flushes one entry
    q_.schedule(rng_.exponential(1.0 / p_.other_page_rate), 0, kOtherPage);
    const std::size_t mm = random_mm();
    one_page_flush(mm, cpu_of(mm));
  }

  void other() {  // task_numa_work: a task of one mm flushes the whole mm
    q_.schedule(rng_.exponential(1.0 / p_.other_round_rate), 0, kOther);
    const std::size_t mm = random_mm();
    in_batch_[mm] = 1;
    if (global_asid()) {
      broadcast_flush(false);
      return;
    }
    flush_mms(cpu_of(mm), true);
  }

  const TlbSimParams& p_;
  const std::size_t n_;
  sim::Rng rng_;
  sim::StopCheck ticks_;  // Ctrl-C inside one event (a batch of 2^31 folios)
  sim::EventQueue q_;
  std::vector<double> last_flush_;
  std::vector<double> migrated_at_;  // per outstanding deferred call
  std::vector<std::int32_t> free_slots_;
  std::size_t k_ = 1, mms_ = 1, busy_ = 1;  // CPUs per mm, mms, CPUs running them
  std::vector<char> in_batch_;              // mms marked in the pending batch's cpumask
  bool counting_ = false;
  TlbSimResult r_;
};

}  // namespace

TlbSimResult simulate_tlb(const TlbSimParams& p, std::uint64_t seed, std::uint64_t replication,
                          const std::atomic<bool>& stop) {
  p.validate();
  return TlbSim(p, seed, replication).run(stop);
}

}  // namespace mmcost::tlb
