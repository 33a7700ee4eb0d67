// Ctrl-C inside one event: a simulation's inner loops (the folios of a
// 2^31-folio batch, the interrupts of a 10^4 us hold at 10^6 per us) call
// tick() once per unit of work, and every 2^14 units the run's stop flag is
// read. A set flag throws Interrupted, which the run catches and reports as
// stopped, so no input that passes validation keeps a worker deaf to Ctrl-C
// for longer than ~2^14 units of work.
#pragma once

#include <atomic>
#include <cstdint>

namespace mmcost::sim {

struct Interrupted {};

class StopCheck {
 public:
  void watch(const std::atomic<bool>& stop) { stop_ = &stop; }
  void tick() {
    if ((++work_ & 0x3FFF) == 0 && stop_ != nullptr && stop_->load(std::memory_order_relaxed)) throw Interrupted{};
  }

 private:
  const std::atomic<bool>* stop_ = nullptr;
  std::uint64_t work_ = 0;
};

}  // namespace mmcost::sim
