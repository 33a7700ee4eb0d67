// A hand-written floor for bench_lock_des.py's model: one FIFO lock, 8 CPUs,
// exponential work 2 us and hold 0.5 us, on mmcost's own event queue and
// random stream, with nothing a general model needs (stages, statistics,
// partitions, interrupts, ticket locks). The distance between this loop and
// the DES core is what the core's generality costs; the rest of the gap to
// SimPy is the interpreter's.
//
// bench_des_floor.py builds it as a shared library and times des_floor()
// and the core in CPU seconds, in the same process. Alone:
//
//   g++ -O3 -DNDEBUG -std=c++17 -DDES_FLOOR_MAIN -Icore/include benchmarks/des_floor.cpp -o /tmp/des_floor && /tmp/des_floor
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "mmcost/sim/random.hpp"
#include "mmcost/sim/slot_queue.hpp"

// `acquisitions` acquisitions on stream (1, stream); returns the throughput (acquisitions per us).
extern "C" double des_floor(long acquisitions, std::uint64_t stream) {
  constexpr int kCpus = 8;
  mmcost::sim::Rng rng(1, stream);
  mmcost::sim::SlotQueue q(kCpus);
  bool at_lock[kCpus] = {};  // holding or waiting: its next event (if any) ends the hold
  int holder = -1, waiting[kCpus], head = 0, size = 0;
  for (int c = 0; c < kCpus; ++c) q.schedule(rng.exponential(2.0), c, 0);
  long done = 0;
  while (done < acquisitions) {
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
  return static_cast<double>(done) / q.now();
}

#ifdef DES_FLOOR_MAIN
int main() {
  constexpr long kAcquisitions = 2'000'000;
  for (int round = 0; round < 5; ++round) {
    const std::clock_t t0 = std::clock();  // CPU time, as the core is timed
    const double x = des_floor(kAcquisitions, static_cast<std::uint64_t>(round));
    const double s = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
    std::printf("floor: %.1f ns per acquisition (CPU time; throughput %.4f /us)\n", s / kAcquisitions * 1e9, x);
  }
}
#endif
