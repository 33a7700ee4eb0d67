// Lock contention: N CPUs repeating an operation made of stages.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "mmcost/sim/random.hpp"
#include "mmcost/sim/stats.hpp"

namespace mmcost::locks {

// Queued: MCS/qspinlock (kernel/locking/qspinlock.c): waiters queue FIFO and
// each acquisition pays a constant handoff (one cache-line transfer).
// Ticket: the pre-4.2 x86 ticket spinlock; every waiter spins on the same
// line, so the handoff slows with each waiter. Modelled as in Boyd-Wickizer,
// Kaashoek, Morris, Zeldovich, "Non-scalable locks are dangerous", Linux
// Symposium 2012, sec. 3: with k CPUs at the lock, an acquisition (hold plus
// handoff) completes at rate 1 / (hold + handoff + handoff_per_waiter (k-1)),
// exponential, re-evaluated whenever k changes.
enum class LockKind { Queued = 0, Ticket = 1 };

// A lock may be split into `partitions` identical locks, one picked uniformly
// at random per acquisition (a hashed or per-cluster lock: seed 003's swap
// clusters, the swap cache's 64 MiB address spaces). Queued locks only.
struct LockSpec {
  std::string name;
  LockKind kind = LockKind::Queued;
  double handoff = 0.0;             // time units per acquisition
  double handoff_per_waiter = 0.0;  // ticket only
  int partitions = 1;
};

// A stage of the operation: free work (lock < 0), or a critical section that
// holds lock `lock` for `time` at call site `site` (e.g. __add_to_swap_cache).
//
// Interrupts arrive at each CPU as a Poisson stream (irq_rate per time unit,
// irq_service each). In a plain spin_lock section they run inside it and
// stretch the hold; with irq_disabled (spin_lock_irq / _irqsave, as all four
// swap-cache tree-lock sites in seed 004) they wait until the unlock and run
// outside the lock (local_irq_restore -> pending handlers). Interrupts while
// spinning are not modelled.
struct Stage {
  int lock = -1;
  std::string site;
  sim::Distribution time;
  bool irq_disabled = false;
};

struct LockSimParams {
  int cpus = 1;
  std::vector<LockSpec> locks;
  std::vector<Stage> stages;
  double irq_rate = 0.0;     // interrupts per time unit per CPU
  double irq_service = 0.0;  // time units per interrupt
  long warmup_ops = 1000;  // operations completed before statistics start
  long ops = 100000;       // operations measured after the warm-up
  void validate() const;   // throws InvalidArgument naming the field
};

struct Counters {
  double contended = 0;
  sim::RunningStats wait;  // one observation per acquisition (0 when uncontended)
};

struct LockSimResult {
  double time = 0.0;  // simulated time measured (after warm-up)
  double ops = 0.0;
  double events = 0.0;  // all events, warm-up included
  std::vector<Counters> per_lock;
  std::vector<double> lock_busy;  // time with the lock held or being handed off (mean over its partitions)
  std::vector<Counters> per_stage;  // critical stages (call sites); zero for work stages
  bool stopped = false;
};

// One replication on stream (seed, replication). Checks `stop` every 4096 events.
LockSimResult simulate_locks(const LockSimParams& p, std::uint64_t seed, std::uint64_t replication,
                             const std::atomic<bool>& stop);

}  // namespace mmcost::locks
