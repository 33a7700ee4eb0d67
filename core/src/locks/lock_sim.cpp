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

enum EventKind : std::int32_t { kStageDone = 0, kTicketDone = 1, kResume = 2 };

// FIFO of waiting CPUs in a ring buffer sized for all CPUs (no allocation).
class WaitQueue {
 public:
  explicit WaitQueue(int capacity = 1) : buf_(static_cast<std::size_t>(capacity)) {}
  bool empty() const { return size_ == 0; }
  int size() const { return size_; }
  // wrap by compare-and-subtract, not %: an integer division per call shows in the profile
  void push_back(int cpu) {
    std::size_t i = head_ + static_cast<std::size_t>(size_);
    if (i >= buf_.size()) i -= buf_.size();
    buf_[i] = cpu;
    ++size_;
  }
  int pop_front() {
    const int cpu = buf_[head_];
    if (++head_ == buf_.size()) head_ = 0;
    --size_;
    return cpu;
  }

 private:
  std::vector<int> buf_;
  std::size_t head_ = 0;
  int size_ = 0;
};

struct LockState {
  int holder = -1;
  WaitQueue waiting;
  double last_change = 0.0;
  double busy = 0.0;  // time with a holder or waiters, since the warm-up
  const LockSpec* spec = nullptr;
  int logical = 0;  // the lock this partition belongs to
  int slot = -1;    // a ticket lock's queue slot
  int present() const { return (holder >= 0 ? 1 : 0) + waiting.size(); }
};

// What the hot path reads of a stage, in one place: no lookups through the
// lock table or the strings of Stage per event.
struct StageInfo {
  const sim::Distribution* time;
  Counters* counters;  // this stage's entry in the result
  int first = -1;      // first partition of its lock (-1: work)
  int parts = 0;       // partitions of its lock
  bool irq_disabled = false;
};

// Each CPU's state, kept together (one cache line) rather than in parallel arrays.
struct CpuState {
  const StageInfo* cur = nullptr;  // current stage (stage is its index)
  int stage = 0;
  int held = -1;          // the partition requested or held
  double request = 0.0;   // when the current lock was requested
  double deferred = 0.0;  // interrupt time owed after an irq-disabled unlock
};

class LockSim {
 public:
  LockSim(const LockSimParams& p, std::uint64_t seed, std::uint64_t rep)
      : p_(p), rng_(seed, rep), q_(slots(p)), cpu_(static_cast<std::size_t>(p.cpus)), irq_(p.irq_rate > 0.0 && p.irq_service > 0.0),
        n_stages_(static_cast<int>(p.stages.size())) {
    // one LockState per partition; first[l] is lock l's first partition
    std::vector<int> first;
    for (std::size_t l = 0; l < p.locks.size(); ++l) {
      first.push_back(static_cast<int>(locks_.size()));
      for (int k = 0; k < p.locks[l].partitions; ++k)
        locks_.push_back(LockState{-1, WaitQueue(p.cpus), 0.0, 0.0, &p.locks[l], static_cast<int>(l)});
      if (p.locks[l].kind == LockKind::Ticket) {  // (never partitioned)
        locks_.back().slot = p.cpus + static_cast<int>(ticket_locks_.size());
        ticket_locks_.push_back(first.back());
      }
    }
    r_.per_lock.resize(p.locks.size());
    r_.lock_busy.assign(p.locks.size(), 0.0);
    r_.per_stage.resize(p.stages.size());
    for (std::size_t k = 0; k < p.stages.size(); ++k) {
      const auto& st = p.stages[k];
      stages_.push_back(StageInfo{&st.time, &r_.per_stage[k], st.lock >= 0 ? first[static_cast<std::size_t>(st.lock)] : -1,
                                  st.lock >= 0 ? p.locks[static_cast<std::size_t>(st.lock)].partitions : 0,
                                  st.irq_disabled});
    }
  }

  LockSimResult run(const std::atomic<bool>& stop) {
    ticks_.watch(stop);
    try {
      // Start each CPU at a random stage so the warm-up starts spread out.
      for (int c = 0; c < p_.cpus; ++c) {
        auto& cpu = cpu_[static_cast<std::size_t>(c)];
        cpu.stage = static_cast<int>(rng_.next() % p_.stages.size());
        cpu.cur = &stages_[static_cast<std::size_t>(cpu.stage)];
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
  void events(const std::atomic<bool>& stop) {
    const long total = p_.warmup_ops + p_.ops;
    while (completed_ < total) {
      if ((q_.processed() & 4095) == 0 && stop.load(std::memory_order_relaxed)) {
        r_.stopped = true;
        break;
      }
      const sim::Event e = q_.pop();
      if (e.kind() == kStageDone) {
        finish_stage(e.target());
      } else if (e.kind() == kResume) {
        begin_stage(e.target());
      } else if (e.kind() == kTicketDone) {
        ticket_done(ticket_locks_[static_cast<std::size_t>(e.target() - p_.cpus)]);
      } else {  // every CPU waiting and no holder: a bug, never a silent end
        throw std::logic_error("lock simulation: no event pending");
      }
    }
  }

  void finish() {
    for (auto& L : locks_) {
      account_busy(L);
      r_.lock_busy[static_cast<std::size_t>(L.logical)] += L.busy / L.spec->partitions;
    }
    for (std::size_t s = 0; s < p_.stages.size(); ++s) {
      const int l = p_.stages[s].lock;
      if (l < 0) continue;
      auto& c = r_.per_lock[static_cast<std::size_t>(l)];
      c.contended += r_.per_stage[s].contended;
      c.wait.merge(r_.per_stage[s].wait);
    }
    r_.time = q_.now() - t0_;
    r_.events = static_cast<double>(q_.processed());
  }

  CpuState& cpu(int c) { return cpu_[static_cast<std::size_t>(c)]; }
  LockState& lock(int l) { return locks_[static_cast<std::size_t>(l)]; }

  void begin_stage(int c) {
    const StageInfo& s = *cpu(c).cur;
    if (s.first < 0) {
      q_.schedule(s.time->sample(rng_), c, kStageDone);
      return;
    }
    const int l = s.first + (s.parts > 1 ? static_cast<int>(rng_.next() % static_cast<std::uint64_t>(s.parts)) : 0);
    cpu(c).held = l;
    request(c, l);
  }

  void account_busy(LockState& L) {
    if (L.present() > 0) L.busy += q_.now() - L.last_change;
    L.last_change = q_.now();
  }

  // Lock indices below are partitions (LockState).
  void request(int c, int l) {
    auto& L = lock(l);
    account_busy(L);
    cpu(c).request = q_.now();
    if (L.present() > 0) {
      cpu(c).cur->counters->contended += 1;
      L.waiting.push_back(c);
    } else {
      L.holder = c;
      acquired(c);
      if (L.spec->kind == LockKind::Queued) q_.schedule(L.spec->handoff + hold(c), c, kStageDone);
    }
    if (L.spec->kind == LockKind::Ticket) reschedule_ticket(l);
  }

  // A hold of the CPU's current critical section, with the interrupts that
  // arrive during it either inside (stretching it) or deferred past the unlock.
  double hold(int c) {
    const double h = cpu(c).cur->time->sample(rng_);
    return irq_ ? with_interrupts(c, h) : h;
  }

  // Kept out of line so that hold() inlines into the hot path without them.
  double with_interrupts(int c, double h) {
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

  // Waits are accumulated per call site only; each lock's statistics are the
  // exact merge of its sites' at the end of the run.
  void acquired(int c) { cpu(c).cur->counters->wait.add(q_.now() - cpu(c).request); }

  // The holder leaves; the next waiter (FIFO) takes the lock.
  void release(int l) {
    auto& L = lock(l);
    account_busy(L);
    L.holder = -1;
    if (!L.waiting.empty()) {
      const int next = L.waiting.pop_front();
      L.holder = next;
      acquired(next);
      if (L.spec->kind == LockKind::Queued) q_.schedule(L.spec->handoff + hold(next), next, kStageDone);
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
    const double mean = cpu(L.holder).cur->time->mean + L.spec->handoff + L.spec->handoff_per_waiter * (k - 1);
    q_.schedule(rng_.exponential(mean), L.slot, kTicketDone);
  }

  void ticket_done(int l) {
    const int c = lock(l).holder;
    release(l);
    reschedule_ticket(l);
    next_stage(c);
  }

  void finish_stage(int c) {
    if (cpu(c).cur->first >= 0) release(cpu(c).held);  // queued locks end their hold here
    next_stage(c);
  }

  void next_stage(int c) {
    auto& C = cpu(c);
    if (++C.stage == n_stages_) {
      C.stage = 0;
      ++completed_;
      if (completed_ > p_.warmup_ops) r_.ops += 1;
      if (completed_ == p_.warmup_ops) reset();
    }
    C.cur = &stages_[static_cast<std::size_t>(C.stage)];
    if (C.deferred > 0.0) {  // interrupts held back by an irq-disabled section run now
      q_.schedule(C.deferred, c, kResume);
      C.deferred = 0.0;
      return;
    }
    begin_stage(c);
  }

  void reset() {  // end of warm-up: forget what was counted so far
    t0_ = q_.now();
    for (auto& L : locks_) {
      account_busy(L);
      L.busy = 0.0;
    }
    for (auto& c : r_.per_lock) c = Counters{};
    for (auto& c : r_.per_stage) c = Counters{};
  }

  const LockSimParams& p_;
  sim::Rng rng_;
  sim::StopCheck ticks_;  // Ctrl-C inside one event (10^10 interrupts in one hold)
  sim::SlotQueue q_;
  std::vector<LockState> locks_;  // one per partition
  std::vector<int> ticket_locks_;  // by slot - cpus: the partition (LockState) of each ticket lock
  std::vector<StageInfo> stages_;
  std::vector<CpuState> cpu_;
  bool irq_;
  int n_stages_;
  LockSimResult r_;
  long completed_ = 0;
  double t0_ = 0.0;
};

}  // namespace

LockSimResult simulate_locks(const LockSimParams& p, std::uint64_t seed, std::uint64_t replication,
                             const std::atomic<bool>& stop) {
  p.validate();
  LockSim sim(p, seed, replication);
  return sim.run(stop);
}

}  // namespace mmcost::locks
