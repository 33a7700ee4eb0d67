#include "mmcost/locks/lock_sim.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "mmcost/errors.hpp"
#include "mmcost/sim/slot_queue.hpp"
#include "mmcost/sim/stop_check.hpp"

namespace mmcost::locks {

namespace {
// One queue slot per CPU (its stage end, or its resume after deferred
// interrupts), then one per ticket lock (its next handoff). Queued locks
// schedule nothing of their own: no slot, and a shallower tree.
int slots(const LockSimParams& p) {
  int n = p.cpus;
  for (const auto& l : p.locks) n += l.kind == LockKind::Ticket ? 1 : 0;
  return n;
}
}  // namespace

void LockSimParams::validate() const {
  if (cpus < 1) throw InvalidArgument("cpus must be >= 1");
  long physical = 0;
  for (const auto& l : locks) physical += l.partitions > 0 ? l.partitions : 1;
  if (cpus >= sim::SlotQueue::kMaxSlots || physical >= sim::SlotQueue::kMaxSlots)
    throw InvalidArgument("cpus and the number of locks (partitions included) must be below 2^20");
  if (stages.empty()) throw InvalidArgument("stages must not be empty");
  if (ops < 1) throw InvalidArgument("ops must be >= 1");
  if (warmup_ops < 0) throw InvalidArgument("warmup_ops must be >= 0");
  for (std::size_t l = 0; l < locks.size(); ++l) {
    const auto f = check::indexed("locks", l);
    check::finite_nonnegative(f + ".handoff", locks[l].handoff);
    check::finite_nonnegative(f + ".handoff_per_waiter", locks[l].handoff_per_waiter);
    if (locks[l].kind != LockKind::Queued && locks[l].kind != LockKind::Ticket)
      throw InvalidArgument(f + ".kind is unknown");
    if (locks[l].partitions < 1) throw InvalidArgument(f + ".partitions must be >= 1");
    if (locks[l].kind == LockKind::Ticket && locks[l].partitions > 1)
      throw InvalidArgument(f + ".partitions: a ticket lock cannot be partitioned in this model");
  }
  if (slots(*this) >= sim::SlotQueue::kMaxSlots)
    throw InvalidArgument("cpus plus the number of ticket locks must be below 2^20");
  check::finite_nonnegative("irq_rate", irq_rate);
  check::finite_nonnegative("irq_service", irq_service);
  bool any_time = false;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto f = check::indexed("stages", s);
    const auto& st = stages[s];
    st.time.validate(f + ".time");
    if (st.lock >= static_cast<int>(locks.size()))
      throw InvalidArgument(f + ".lock refers to lock " + std::to_string(st.lock) + ", but there are only " +
                            std::to_string(locks.size()) + " locks");
    if (st.lock >= 0 && locks[static_cast<std::size_t>(st.lock)].kind == LockKind::Ticket &&
        st.time.kind != sim::DistKind::Exponential)
      throw InvalidArgument(f + ".time: a ticket lock's hold must be exponential (the Boyd-Wickizer Markov model)");
    if (st.lock >= 0 && locks[static_cast<std::size_t>(st.lock)].kind == LockKind::Ticket && irq_rate > 0 &&
        irq_service > 0)
      throw InvalidArgument(f + ": interrupts (irq_rate) are not modelled for ticket locks");
    any_time = any_time || st.time.expected() > 0 ||
               (st.lock >= 0 && locks[static_cast<std::size_t>(st.lock)].handoff > 0);
  }
  if (!any_time) throw InvalidArgument("stages: every stage takes zero time; the simulation would not advance");
}

namespace {

// The end of a work stage and the end of a queued lock's hold are told
// apart by the event itself: which way a CPU's event goes is known as it is
// popped, not after loading the CPU's stage (a chain of loads that the
// mispredicted branch on it waited for). Kinds do not order events (the
// sequence number does), so the trajectory is the same.
enum EventKind : std::int32_t { kWorkDone = 0, kTicketDone = 1, kResume = 2, kHoldDone = 3 };

struct StageInfo;

// A CPU waiting for a lock, with what its acquisition needs (its stage,
// when it queued, and its hold, drawn as it queued), so that the handover
// reads them here rather than through the CPU's state and its stage.
struct Waiter {
  int cpu;
  StageInfo* stage;
  double since;
  double hold;  // handoff included
};

// FIFO of waiting CPUs in a ring buffer sized for all CPUs (no allocation).
class WaitQueue {
 public:
  explicit WaitQueue(int capacity = 1) : buf_(static_cast<std::size_t>(capacity)) {}
  bool empty() const { return size_ == 0; }
  int size() const { return size_; }
  // wrap by compare-and-subtract, not %: an integer division per call shows in the profile
  void push_back(const Waiter& w) {
    std::size_t i = head_ + static_cast<std::size_t>(size_);
    if (i >= buf_.size()) i -= buf_.size();
    buf_[i] = w;
    ++size_;
  }
  Waiter pop_front() {
    const Waiter w = buf_[head_];
    if (++head_ == buf_.size()) head_ = 0;
    --size_;
    return w;
  }

 private:
  std::vector<Waiter> buf_;
  std::size_t head_ = 0;
  int size_ = 0;
};

// A lock hands over to its next waiter at the release itself, so it has
// waiters only while it has a holder: holder >= 0 says whether it is taken.
//
// Busy time (held or handed off): a queued lock's hold is known when it
// starts, so each acquisition adds its whole hold (handoff included) and the
// holds cut by the warm-up's end or the run's end are trimmed there, from the
// holder's pending event; nothing is accounted per release. A ticket lock's
// hold is resampled as CPUs arrive, so it accounts each interval as it closes.
struct LockState {
  int holder = -1;
  bool ticket = false;
  double handoff = 0.0;
  WaitQueue waiting;
  double busy = 0.0;         // since the warm-up
  double last_change = 0.0;  // ticket: when its number of CPUs last changed
  int partitions = 1;        // of its logical lock
  int logical = 0;           // the lock this partition belongs to
  int slot = -1;             // a ticket lock's queue slot
  const LockSpec* spec = nullptr;
  int present() const { return (holder >= 0 ? 1 : 0) + waiting.size(); }
};

// What the hot path reads and counts of a stage, in one place: no lookups
// through the lock table or the strings of Stage per event, and the counts
// next to what is read. They go into the result at the end of the run.
struct StageInfo {
  const sim::Distribution* time = nullptr;
  double mean = 0.0;          // of time, read here when it is exponential (the common case)
  bool exponential = false;
  int first = -1;             // first partition of its lock (-1: work)
  int parts = 0;              // partitions of its lock
  bool irq_disabled = false;
  [[gnu::always_inline]] double sample(sim::Rng& rng) const {
    return exponential ? rng.exponential(mean) : time->sample(rng);
  }
  long long contended = 0;    // requests that found the lock taken
  long long free = 0;         // acquisitions that found it free: waits of 0, added to `waits` at the end
  sim::RunningStats waits;    // waits of the acquisitions that queued
};

// Each CPU's state, kept together (one cache line) rather than in parallel arrays.
struct CpuState {
  StageInfo* cur = nullptr;  // current stage
  LockState* held = nullptr;  // the partition requested or held
  double deferred = 0.0;     // interrupt time owed after an irq-disabled unlock
};

// kTicket: some lock is a ticket lock; kIrq: interrupts arrive. A model
// without them runs a loop that never tests for them (one instance each).
template <bool kTicket, bool kIrq>
class LockSim {
 public:
  LockSim(const LockSimParams& p, std::uint64_t seed, std::uint64_t rep)
      : p_(p), rng_(seed, rep), q_(slots(p)), cpu_(static_cast<std::size_t>(p.cpus)) {
    // one LockState per partition; first[l] is lock l's first partition
    std::vector<int> first;
    for (std::size_t l = 0; l < p.locks.size(); ++l) {
      first.push_back(static_cast<int>(locks_.size()));
      for (int k = 0; k < p.locks[l].partitions; ++k) {
        LockState L;
        L.ticket = p.locks[l].kind == LockKind::Ticket;
        L.handoff = p.locks[l].handoff;
        L.waiting = WaitQueue(p.cpus);
        L.partitions = p.locks[l].partitions;
        L.logical = static_cast<int>(l);
        L.spec = &p.locks[l];
        locks_.push_back(std::move(L));
      }
      if (p.locks[l].kind == LockKind::Ticket) {  // (never partitioned)
        locks_.back().slot = p.cpus + static_cast<int>(ticket_locks_.size());
        ticket_locks_.push_back(first.back());
      }
    }
    r_.per_lock.resize(p.locks.size());
    r_.lock_busy.assign(p.locks.size(), 0.0);
    stages_.resize(p.stages.size());
    for (std::size_t k = 0; k < p.stages.size(); ++k) {
      const auto& st = p.stages[k];
      auto& s = stages_[k];
      s.time = &st.time;
      s.mean = st.time.mean;
      s.exponential = st.time.kind == sim::DistKind::Exponential;
      s.first = st.lock >= 0 ? first[static_cast<std::size_t>(st.lock)] : -1;
      s.parts = st.lock >= 0 ? p.locks[static_cast<std::size_t>(st.lock)].partitions : 0;
      s.irq_disabled = st.irq_disabled;
    }
    stages_end_ = stages_.data() + stages_.size();
  }

  LockSimResult run(const std::atomic<bool>& stop) {
    ticks_.watch(stop);
    try {
      // Start each CPU at a random stage so the warm-up starts spread out.
      for (int c = 0; c < p_.cpus; ++c) {
        cpu(c).cur = &stages_[static_cast<std::size_t>(rng_.next() % p_.stages.size())];
        begin_stage(c);
      }
      events(stop);
    } catch (const sim::Interrupted&) {
      r_.stopped = true;
    }
    finish();
    return r_;
  }

 private:
  // Until `mark_` operations are complete: first the warm-up's (then the
  // statistics restart), then the run's. next_stage() says when it is met.
  void events(const std::atomic<bool>& stop) {
    mark_ = p_.warmup_ops > 0 ? p_.warmup_ops : p_.ops;
    for (;;) {
      if ((q_.processed() & 4095) == 0 && stop.load(std::memory_order_relaxed)) {
        r_.stopped = true;
        return;
      }
      const sim::Event e = q_.pop();
      bool end;
      if (e.kind() == kWorkDone) {
        end = next_stage(e.target());
      } else if (e.kind() == kHoldDone) {  // a queued lock's hold
        release(*cpu(e.target()).held);
        end = next_stage(e.target());
      } else if (kIrq && e.kind() == kResume) {
        begin_stage(e.target());
        end = false;
      } else if (kTicket && e.kind() == kTicketDone) {
        end = ticket_done(ticket_locks_[static_cast<std::size_t>(e.target() - p_.cpus)]);
      } else {  // every CPU waiting and no holder: a bug, never a silent end
        throw std::logic_error("lock simulation: no event pending");
      }
      if (end) return;
    }
  }

  void finish() {
    const double now = q_.now();
    for (auto& L : locks_) {
      if (L.ticket) account_busy(L);
      else if (L.holder >= 0) L.busy -= q_.due(L.holder) - now;  // the part of the current hold after the end
      r_.lock_busy[static_cast<std::size_t>(L.logical)] += L.busy / L.partitions;
    }
    r_.per_stage.resize(p_.stages.size());
    for (std::size_t s = 0; s < p_.stages.size(); ++s) {
      auto& out = r_.per_stage[s];
      out.contended = static_cast<double>(stages_[s].contended);
      out.wait = stages_[s].waits;
      out.wait.add_repeated(0.0, stages_[s].free);
      const int l = p_.stages[s].lock;
      if (l < 0) continue;
      auto& c = r_.per_lock[static_cast<std::size_t>(l)];
      c.contended += out.contended;
      c.wait.merge(out.wait);
    }
    r_.time = now - t0_;
    r_.ops = static_cast<double>(completed_ > p_.warmup_ops ? completed_ - p_.warmup_ops : 0);
    r_.events = static_cast<double>(q_.processed());
  }

  CpuState& cpu(int c) { return cpu_[static_cast<std::size_t>(c)]; }
  LockState& lock(int l) { return locks_[static_cast<std::size_t>(l)]; }

  // Inlined into each caller: a call per stage shows in the profile (its
  // register saves cost a tenth of an acquisition).
  [[gnu::always_inline]] inline void begin_stage(int c) {
    CpuState& C = cpu(c);
    StageInfo& s = *C.cur;
    if (s.first < 0) {
      q_.schedule(s.sample(rng_), c, kWorkDone);
      return;
    }
    const int l = s.first + (s.parts > 1 ? static_cast<int>(rng_.next() % static_cast<std::uint64_t>(s.parts)) : 0);
    C.held = &lock(l);
    request(c, l);
  }

  void account_busy(LockState& L) {  // ticket locks only
    if (L.present() > 0) L.busy += q_.now() - L.last_change;
    L.last_change = q_.now();
  }

  // Lock indices below are partitions (LockState).
  void request(int c, int l) {
    auto& L = lock(l);
    CpuState& C = cpu(c);
    const bool ticket = kTicket && L.ticket;
    if (ticket) account_busy(L);
    // A queued lock's hold (handoff included) is drawn at the request, so
    // that a handover has it at hand: the hold is independent of the wait
    // before it, so when it is drawn changes the stream, not the model.
    const double d = ticket ? 0.0 : L.handoff + hold(c, *C.cur);
    if (L.holder >= 0) {
      C.cur->contended += 1;
      L.waiting.push_back(Waiter{c, C.cur, q_.now(), d});
    } else {
      L.holder = c;
      C.cur->free += 1;
      if (!ticket) start_hold(L, c, d);
    }
    if (ticket) reschedule_ticket(l);
  }

  // A queued lock's holder c: its hold d (handoff included) starts now.
  void start_hold(LockState& L, int c, double d) {
    L.busy += d;
    q_.schedule(d, c, kHoldDone);
  }

  // A hold of the CPU's current critical section, with the interrupts that
  // arrive during it either inside (stretching it) or deferred past the unlock.
  double hold(int c, const StageInfo& s) {
    const double h = s.sample(rng_);
    if constexpr (kIrq) return with_interrupts(c, h);
    return h;
  }

  // Kept out of line so that hold() inlines into the hot path without them.
  [[gnu::noinline]] double with_interrupts(int c, double h) {
    double k = 0;  // a count, but one that may pass 2^31: Poisson(irq_rate * h) arrivals during the hold's own progress
    for (double t = rng_.exponential(1.0 / p_.irq_rate); t < h; t += rng_.exponential(1.0 / p_.irq_rate)) {
      ticks_.tick();
      ++k;
    }
    if (cpu(c).cur->irq_disabled) {
      cpu(c).deferred += k * p_.irq_service;
      return h;
    }
    return h + k * p_.irq_service;
  }

  // The holder leaves; the next waiter (FIFO) takes the lock. Waits are
  // accumulated per call site only; each lock's statistics are the exact
  // merge of its sites' at the end of the run.
  void release(LockState& L) {
    const bool ticket = kTicket && L.ticket;
    if (ticket) account_busy(L);
    L.holder = -1;
    if (!L.waiting.empty()) {
      const Waiter next = L.waiting.pop_front();
      L.holder = next.cpu;
      next.stage->waits.add(q_.now() - next.since);
      if (!ticket) start_hold(L, next.cpu, next.hold);
    }
  }

  // The lock's next handoff, resampled whenever k changes (memoryless): it
  // replaces the one scheduled before.
  void reschedule_ticket(int l) {
    auto& L = lock(l);
    const int k = L.present();
    if (k == 0) {
      q_.cancel(L.slot);
      return;
    }
    const double mean = cpu(L.holder).cur->time->mean + L.handoff + L.spec->handoff_per_waiter * (k - 1);
    q_.schedule(rng_.exponential(mean), L.slot, kTicketDone);
  }

  bool ticket_done(int l) {
    const int c = lock(l).holder;
    release(lock(l));
    reschedule_ticket(l);
    return next_stage(c);
  }

  // The stages are stages_'s entries in order: the next one is found by
  // arithmetic on the pointer, not by a load from the current one.
  // True when the run's last operation is complete.
  bool next_stage(int c) {
    CpuState& C = cpu(c);
    StageInfo* next = C.cur + 1;
    bool end = false;
    if (next == stages_end_) {
      next = stages_.data();
      if (++completed_ == mark_) end = at_mark();
    }
    C.cur = next;
    if (kIrq && C.deferred > 0.0) {  // interrupts held back by an irq-disabled section run now
      q_.schedule(C.deferred, c, kResume);
      C.deferred = 0.0;
      return end;
    }
    begin_stage(c);
    return end;
  }

  bool at_mark() {
    if (completed_ == p_.warmup_ops + p_.ops) return true;
    reset();  // the warm-up's end
    mark_ = p_.warmup_ops + p_.ops;
    return false;
  }

  void reset() {  // end of warm-up: forget what was counted so far
    t0_ = q_.now();
    for (auto& L : locks_) {
      if (L.ticket) {
        account_busy(L);
        L.busy = 0.0;
      } else {
        L.busy = L.holder >= 0 ? q_.due(L.holder) - t0_ : 0.0;  // the part of the current hold after t0
      }
    }
    for (auto& s : stages_) {
      s.contended = s.free = 0;
      s.waits = sim::RunningStats{};
    }
  }

  const LockSimParams& p_;
  sim::Rng rng_;
  sim::StopCheck ticks_;  // Ctrl-C inside one event (10^10 interrupts in one hold)
  sim::SlotQueue q_;
  std::vector<LockState> locks_;  // one per partition
  std::vector<int> ticket_locks_;  // by slot - cpus: the partition (LockState) of each ticket lock
  std::vector<StageInfo> stages_;
  StageInfo* stages_end_ = nullptr;
  std::vector<CpuState> cpu_;
  LockSimResult r_;
  long completed_ = 0;
  long mark_ = 0;
  double t0_ = 0.0;
};

template <bool kTicket, bool kIrq>
LockSimResult run(const LockSimParams& p, std::uint64_t seed, std::uint64_t replication,
                  const std::atomic<bool>& stop) {
  LockSim<kTicket, kIrq> sim(p, seed, replication);
  return sim.run(stop);
}

}  // namespace

LockSimResult simulate_locks(const LockSimParams& p, std::uint64_t seed, std::uint64_t replication,
                             const std::atomic<bool>& stop) {
  p.validate();
  const bool ticket = slots(p) > p.cpus, irq = p.irq_rate > 0.0 && p.irq_service > 0.0;
  if (ticket) return irq ? run<true, true>(p, seed, replication, stop) : run<true, false>(p, seed, replication, stop);
  return irq ? run<false, true>(p, seed, replication, stop) : run<false, false>(p, seed, replication, stop);
}

}  // namespace mmcost::locks
