// The discrete-event kernel: a simulated clock and a time-ordered event heap.
//
// Events with equal times run in the order they were scheduled (a sequence
// number breaks ties, as SimPy's (time, priority, counter) does), so a run is
// deterministic for a given stream. An event is 16 bytes: its time, and the
// sequence number, target and kind packed in one word (the sequence in the
// high bits orders ties). schedule() returns the sequence number so a model
// can cancel an event by remembering which one it still expects.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace mmcost::sim {

struct Event {
  double time;
  std::uint64_t key;  // seq << 24 | target << 4 | kind

  std::int32_t target() const { return static_cast<std::int32_t>((key >> 4) & 0xFFFFF); }
  std::int32_t kind() const { return static_cast<std::int32_t>(key & 0xF); }
  std::uint64_t seq() const { return key >> 24; }
};

struct EventLater {
  bool operator()(const Event& a, const Event& b) const {
    return a.time > b.time || (a.time == b.time && a.key > b.key);
  }
};

class EventQueue {
 public:
  static constexpr std::int32_t kMaxTargets = 1 << 20;
  static constexpr std::int32_t kMaxKinds = 16;

  double now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::uint64_t processed() const { return processed_; }

  // target < 2^20, kind < 16 (checked by the models' validation).
  std::uint64_t schedule(double delay, std::int32_t target, std::int32_t kind) {
    const std::uint64_t seq = seq_++;
    heap_.push(Event{now_ + delay, (seq << 24) | (static_cast<std::uint64_t>(target) << 4) |
                                       static_cast<std::uint64_t>(kind)});
    return seq;
  }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    now_ = e.time;
    ++processed_;
    return e;
  }

 private:
  std::priority_queue<Event, std::vector<Event>, EventLater> heap_;
  double now_ = 0.0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace mmcost::sim
