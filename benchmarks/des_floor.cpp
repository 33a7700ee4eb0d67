// A hand-written floor for bench_lock_des.py's model: one FIFO lock, 8 CPUs,
// exponential work 2 us and hold 0.5 us, on mmcost's own event queue and
// random stream, with nothing a general model needs (stages, statistics,
// partitions, interrupts, ticket locks). The distance between this loop and
// the DES core is what the core's generality costs; the rest of the gap to
// SimPy is the interpreter's.
//
//   g++ -O3 -std=c++17 -Icore/include benchmarks/des_floor.cpp -o /tmp/des_floor && /tmp/des_floor
#include <chrono>
#include <cstdio>

#include "mmcost/sim/slot_queue.hpp"
#include "mmcost/sim/random.hpp"

int main() {
  constexpr int kCpus = 8;
  constexpr long kAcquisitions = 2'000'000;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    mmcost::sim::Rng rng(1, static_cast<std::uint64_t>(round));
    mmcost::sim::SlotQueue q(kCpus);
    bool at_lock[kCpus] = {};  // holding or waiting: its next event (if any) ends the hold
    int holder = -1, waiting[kCpus], head = 0, size = 0;
    for (int c = 0; c < kCpus; ++c) q.schedule(rng.exponential(2.0), c, 0);
    long done = 0;
    while (done < kAcquisitions) {
      const int c = q.pop().target();
      if (!at_lock[c]) {  // work done: take the lock or queue for it
        at_lock[c] = true;
        if (holder < 0) {
          holder = c;
          q.schedule(rng.exponential(0.5), c, 0);
        } else {
          waiting[(head + size++) % kCpus] = c;
        }
      } else {  // hold done: hand over to the next waiter, back to work
        at_lock[c] = false;
        ++done;
        holder = -1;
        if (size > 0) {
          holder = waiting[head];
          head = (head + 1) % kCpus;
          --size;
          q.schedule(rng.exponential(0.5), holder, 0);
        }
        q.schedule(rng.exponential(2.0), c, 0);
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("floor: %.1f ns per acquisition (throughput %.4f /us)\n", s / kAcquisitions * 1e9, done / q.now());
  }
}
