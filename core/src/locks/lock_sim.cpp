#include "mmcost/locks/lock_sim.hpp"

#include <algorithm>
#include <sstream>

#include "mmcost/errors.hpp"
#include "mmcost/sim/event_queue.hpp"
#include "mmcost/sim/stop_check.hpp"

namespace mmcost::locks {

void LockSimParams::validate() const {
  if (cpus < 1) throw InvalidArgument("cpus must be >= 1");
  long physical = 0;
  for (const auto& l : locks) physical += l.partitions > 0 ? l.partitions : 1;
  if (cpus >= sim::EventQueue::kMaxTargets || physical >= sim::EventQueue::kMaxTargets)
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
  std::uint64_t expected = ~0ULL;  // sequence number of the live ticket completion
  double last_change = 0.0;
  int present() const { return (holder >= 0 ? 1 : 0) + waiting.size(); }
};

class LockSim {
 public:
  LockSim(const LockSimParams& p, std::uint64_t seed, std::uint64_t rep)
      : p_(p), rng_(seed, rep), stage_(static_cast<std::size_t>(p.cpus), 0),
        request_(static_cast<std::size_t>(p.cpus), 0.0), deferred_(static_cast<std::size_t>(p.cpus), 0.0),
        held_(static_cast<std::size_t>(p.cpus), -1), irq_(p.irq_rate > 0.0 && p.irq_service > 0.0),
        cur_(static_cast<std::size_t>(p.cpus), nullptr) {
    // one LockState per partition; first_[l] is lock l's first partition
    for (std::size_t l = 0; l < p.locks.size(); ++l) {
      first_.push_back(static_cast<int>(locks_.size()));
      for (int k = 0; k < p.locks[l].partitions; ++k) {
        locks_.push_back(LockState{-1, WaitQueue(p.cpus), ~0ULL, 0.0});
        logical_.push_back(static_cast<int>(l));
      }
    }
    busy_.assign(locks_.size(), 0.0);
    for (int l : logical_) spec_.push_back(&p.locks[static_cast<std::size_t>(l)]);
    for (const auto& st : p.stages) {  // hot path: no lookups through the lock table per acquisition
      stage_first_.push_back(st.lock >= 0 ? first_[static_cast<std::size_t>(st.lock)] : -1);
      stage_parts_.push_back(st.lock >= 0 ? p.locks[static_cast<std::size_t>(st.lock)].partitions : 0);
    }
    r_.per_lock.resize(p.locks.size());
    r_.lock_busy.assign(p.locks.size(), 0.0);
    r_.per_stage.resize(p.stages.size());
  }

  LockSimResult run(const std::atomic<bool>& stop) {
    ticks_.watch(stop);
    try {
      // Start each CPU at a random stage so the warm-up starts spread out.
      for (int c = 0; c < p_.cpus; ++c) {
        stage_[static_cast<std::size_t>(c)] = static_cast<int>(rng_.next() % p_.stages.size());
        cur_[static_cast<std::size_t>(c)] = &p_.stages[static_cast<std::size_t>(stage_[static_cast<std::size_t>(c)])];
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
      } else if (e.seq() == locks_[static_cast<std::size_t>(e.target())].expected) {
        ticket_done(e.target());
      }
    }
  }

  void finish() {
    for (std::size_t l = 0; l < locks_.size(); ++l) account_busy(static_cast<int>(l));
    for (std::size_t l = 0; l < locks_.size(); ++l)
      r_.lock_busy[static_cast<std::size_t>(logical_[l])] +=
          busy_[l] / p_.locks[static_cast<std::size_t>(logical_[l])].partitions;
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

  const Stage& st(int cpu) const { return *cur_[static_cast<std::size_t>(cpu)]; }

  void begin_stage(int cpu) {
    const auto& s = st(cpu);
    if (s.lock < 0) {
      q_.schedule(s.time.sample(rng_), cpu, kStageDone);
      return;
    }
    const auto k = static_cast<std::size_t>(stage_[static_cast<std::size_t>(cpu)]);
    const int parts = stage_parts_[k];
    const int l = stage_first_[k] + (parts > 1 ? static_cast<int>(rng_.next() % static_cast<std::uint64_t>(parts)) : 0);
    held_[static_cast<std::size_t>(cpu)] = l;
    request(cpu, l);
  }

  // Lock indices below are partitions (LockState); spec() is their lock's.
  const LockSpec& spec(int l) const { return *spec_[static_cast<std::size_t>(l)]; }

  void account_busy(int l) {
    auto& L = locks_[static_cast<std::size_t>(l)];
    if (L.present() > 0) busy_[static_cast<std::size_t>(l)] += q_.now() - L.last_change;
    L.last_change = q_.now();
  }

  void request(int cpu, int l) {
    auto& L = locks_[static_cast<std::size_t>(l)];
    const auto& spec = this->spec(l);
    account_busy(l);
    request_[static_cast<std::size_t>(cpu)] = q_.now();
    const bool busy = L.present() > 0;
    auto& cs = r_.per_stage[static_cast<std::size_t>(stage_[static_cast<std::size_t>(cpu)])];
    if (busy) {
      cs.contended += 1;
      L.waiting.push_back(cpu);
    } else {
      L.holder = cpu;
      acquired(cpu, l);
      if (spec.kind == LockKind::Queued) q_.schedule(spec.handoff + hold(cpu), cpu, kStageDone);
    }
    if (spec.kind == LockKind::Ticket) reschedule_ticket(l);
  }

  // A hold of the CPU's current critical section, with the interrupts that
  // arrive during it either inside (stretching it) or deferred past the unlock.
  double hold(int cpu) {
    const auto& s = st(cpu);
    double h = s.time.sample(rng_);
    if (irq_) {
      double k = 0;  // a count, but one that may pass 2^31: Poisson(irq_rate * h) arrivals during the hold's own progress
      for (double t = rng_.exponential(1.0 / p_.irq_rate); t < h; t += rng_.exponential(1.0 / p_.irq_rate)) {
        ticks_.tick();
        ++k;
      }
      if (s.irq_disabled)
        deferred_[static_cast<std::size_t>(cpu)] += k * p_.irq_service;
      else
        h += k * p_.irq_service;
    }
    return h;
  }

  // Waits are accumulated per call site only; each lock's statistics are the
  // exact merge of its sites' at the end of the run.
  void acquired(int cpu, int /*lock*/) {
    const double wait = q_.now() - request_[static_cast<std::size_t>(cpu)];
    r_.per_stage[static_cast<std::size_t>(stage_[static_cast<std::size_t>(cpu)])].wait.add(wait);
  }

  // The holder leaves; the next waiter (FIFO) takes the lock.
  void release(int l) {
    auto& L = locks_[static_cast<std::size_t>(l)];
    account_busy(l);
    L.holder = -1;
    if (!L.waiting.empty()) {
      const int next = L.waiting.pop_front();
      L.holder = next;
      acquired(next, l);
      const auto& spec = this->spec(l);
      if (spec.kind == LockKind::Queued) q_.schedule(spec.handoff + hold(next), next, kStageDone);
    }
  }

  void reschedule_ticket(int l) {
    auto& L = locks_[static_cast<std::size_t>(l)];
    L.expected = ~0ULL;  // any scheduled completion is now stale (memoryless: resample)
    const int k = L.present();
    if (k == 0) return;
    const auto& spec = this->spec(l);
    const double mean = st(L.holder).time.mean + spec.handoff + spec.handoff_per_waiter * (k - 1);
    L.expected = q_.schedule(rng_.exponential(mean), l, kTicketDone);
  }

  void ticket_done(int l) {
    const int cpu = locks_[static_cast<std::size_t>(l)].holder;
    release(l);
    reschedule_ticket(l);
    next_stage(cpu);
  }

  void finish_stage(int cpu) {
    const auto& s = st(cpu);
    if (s.lock >= 0) release(held_[static_cast<std::size_t>(cpu)]);  // queued locks end their hold here
    next_stage(cpu);
  }

  void next_stage(int cpu) {
    auto& s = stage_[static_cast<std::size_t>(cpu)];
    if (++s == static_cast<int>(p_.stages.size())) {
      s = 0;
      ++completed_;
      if (completed_ > p_.warmup_ops) r_.ops += 1;
      if (completed_ == p_.warmup_ops) reset();
    }
    cur_[static_cast<std::size_t>(cpu)] = &p_.stages[static_cast<std::size_t>(s)];
    double& d = deferred_[static_cast<std::size_t>(cpu)];
    if (d > 0.0) {  // interrupts held back by an irq-disabled section run now
      q_.schedule(d, cpu, kResume);
      d = 0.0;
      return;
    }
    begin_stage(cpu);
  }

  void reset() {  // end of warm-up: forget what was counted so far
    t0_ = q_.now();
    for (std::size_t l = 0; l < locks_.size(); ++l) {
      account_busy(static_cast<int>(l));
      busy_[l] = 0.0;
    }
    for (auto& c : r_.per_lock) c = Counters{};
    for (auto& c : r_.per_stage) c = Counters{};
  }

  const LockSimParams& p_;
  sim::Rng rng_;
  sim::StopCheck ticks_;  // Ctrl-C inside one event (10^10 interrupts in one hold)
  sim::EventQueue q_;
  std::vector<LockState> locks_;  // one per partition
  std::vector<int> first_;        // lock -> its first partition
  std::vector<int> logical_;      // partition -> its lock
  std::vector<double> busy_;      // per partition
  std::vector<const LockSpec*> spec_;  // partition -> its lock's spec
  std::vector<int> stage_first_;  // stage -> first partition of its lock (-1: work)
  std::vector<int> stage_parts_;  // stage -> partitions of its lock
  std::vector<int> stage_;
  std::vector<double> request_;
  std::vector<double> deferred_;  // interrupt time owed after an irq-disabled unlock
  std::vector<int> held_;         // the partition each CPU requested or holds
  bool irq_;
  std::vector<const Stage*> cur_;  // each CPU's current stage (stage_ is its index)
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
