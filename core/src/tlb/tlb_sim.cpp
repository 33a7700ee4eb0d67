#include "mmcost/tlb/tlb_sim.hpp"

#include <cmath>
#include <string>

#include "mmcost/errors.hpp"
#include "mmcost/sim/event_queue.hpp"

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
  check::finite_nonnegative("warmup", warmup);
  check::finite_positive("horizon", horizon);
  reuse.validate("reuse");
}

namespace {

enum EventKind : std::int32_t { kCall = 0, kNatural = 1, kOther = 2, kReuse = 3, kReclaim = 4 };

class TlbSim {
 public:
  TlbSim(const TlbSimParams& p, std::uint64_t seed, std::uint64_t rep)
      : p_(p), n_(static_cast<std::size_t>(p.cpus)), rng_(seed, rep), last_flush_(n_, 0.0) {
    r_.shootdowns.assign(n_, 0.0);
    r_.full_flushes.assign(n_, 0.0);
    r_.invlpg.assign(n_, 0.0);
    keep_writable_ = std::pow(1.0 - p.writable_fraction, p.batch_folios);
  }

  TlbSimResult run(const std::atomic<bool>& stop) {
    const double end = p_.warmup + p_.horizon;
    if (p_.call_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.call_rate), 0, kCall);
    if (p_.reclaim_call_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.reclaim_call_rate), 0, kReclaim);
    if (p_.other_round_rate > 0) q_.schedule(rng_.exponential(1.0 / p_.other_round_rate), 0, kOther);
    if (p_.natural_flush_rate > 0) {
      // x86: each CPU's own stream; arm64: one global ASID-rollover stream
      const int streams = p_.arch == Arch::X86 ? p_.cpus : 1;
      for (int c = 0; c < streams; ++c) q_.schedule(rng_.exponential(1.0 / p_.natural_flush_rate), c, kNatural);
    }
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
        default: reuse(e.target()); break;
      }
    }
    r_.events = static_cast<double>(q_.processed());
    return r_;
  }

 private:
  int random_cpu() { return static_cast<int>(rng_.next() % n_); }
  double add(bool counted) const { return counted ? 1.0 : 0.0; }

  void full_flush(std::size_t c) {
    last_flush_[c] = q_.now();
    r_.full_flushes[c] += add(counting_);
  }

  // A full flush of every CPU issued by `sender`: x86 IPIs the others.
  void flush_all(int sender) {
    for (std::size_t c = 0; c < n_; ++c) {
      full_flush(c);
      if (p_.arch == Arch::X86 && static_cast<int>(c) != sender) r_.shootdowns[c] += add(counting_);
    }
    if (p_.arch == Arch::X86) {
      r_.rounds += add(counting_ && n_ > 1);
      r_.ipis += add(counting_) * static_cast<double>(n_ - 1);
    } else {
      r_.tlbi_ops += add(counting_);  // TLBI ASIDE1IS
      r_.dsb_syncs += add(counting_);
    }
  }

  void batched(int sender) {
    if (p_.arch == Arch::X86) {
      flush_all(sender);
    } else {
      r_.tlbi_ops += add(counting_) * p_.batch_folios * p_.entries_per_folio;
      r_.dsb_syncs += add(counting_);
    }
  }

  void immediate(int sender) {
    for (int f = 0; f < p_.batch_folios; ++f) {
      if (p_.arch == Arch::Arm64) {
        r_.tlbi_ops += add(counting_) * p_.entries_per_folio;
        r_.dsb_syncs += add(counting_);
      } else if (p_.entries_per_folio > p_.flush_ceiling) {
        flush_all(sender);
      } else {
        for (std::size_t c = 0; c < n_; ++c) {
          r_.invlpg[c] += add(counting_) * p_.entries_per_folio;
          if (static_cast<int>(c) != sender) r_.shootdowns[c] += add(counting_);
        }
        r_.rounds += add(counting_ && n_ > 1);
        r_.ipis += add(counting_) * static_cast<double>(n_ - 1);
      }
    }
  }

  void call() {
    q_.schedule(rng_.exponential(1.0 / p_.call_rate), 0, kCall);
    r_.calls += add(counting_);
    const int sender = random_cpu();
    switch (p_.policy) {
      case Policy::Immediate: immediate(sender); return;
      case Policy::Batched: batched(sender); return;
      case Policy::Deferred: break;
    }
    if (keep_writable_ < 1.0 && rng_.uniform() > keep_writable_) {  // a writable folio: flush now
      batched(sender);
      return;
    }
    r_.deferred_calls += add(counting_);
    // The first reuse of any of the call's folios decides: the deadline is their minimum.
    double first = p_.reuse.sample(rng_);
    for (int f = 1; f < p_.batch_folios; ++f) first = std::min(first, p_.reuse.sample(rng_));
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

  // try_to_unmap_flush at the end of shrink_folio_list: never deferred
  void reclaim() {
    q_.schedule(rng_.exponential(1.0 / p_.reclaim_call_rate), 0, kReclaim);
    r_.calls += add(counting_);
    const int sender = random_cpu();
    if (p_.policy == Policy::Immediate) {
      immediate(sender);
    } else {
      batched(sender);
    }
  }

  void reuse(std::int32_t slot) {
    const double migrated = migrated_at_[static_cast<std::size_t>(slot)];
    free_slots_.push_back(slot);
    const bool counted = counting_ && migrated >= p_.warmup;  // the call itself was counted
    const int reuser = random_cpu();
    if (p_.arch == Arch::Arm64) {
      bool pending = false;
      for (std::size_t c = 0; c < n_ && !pending; ++c) pending = last_flush_[c] < migrated;
      if (!pending) return;
      r_.reuse_rounds += add(counted);
      flush_all(reuser);
      return;
    }
    bool remote = false, any = false;
    for (std::size_t c = 0; c < n_; ++c) {
      if (last_flush_[c] >= migrated) continue;  // a full flush since the migration covered it
      any = true;
      full_flush(c);
      if (static_cast<int>(c) != reuser) {
        remote = true;
        r_.shootdowns[c] += add(counting_);
        r_.ipis += add(counting_);
      }
    }
    r_.reuse_rounds += add(counted && any);
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

  void other() {
    q_.schedule(rng_.exponential(1.0 / p_.other_round_rate), 0, kOther);
    flush_all(random_cpu());
  }

  const TlbSimParams& p_;
  const std::size_t n_;
  sim::Rng rng_;
  sim::EventQueue q_;
  std::vector<double> last_flush_;
  std::vector<double> migrated_at_;  // per outstanding deferred call
  std::vector<std::int32_t> free_slots_;
  double keep_writable_ = 1.0;  // probability that no folio of a call is writable
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
