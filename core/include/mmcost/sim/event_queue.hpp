// The discrete-event kernel: a simulated clock and a time-ordered event heap.
//
// Events with equal times run in the order they were scheduled (a sequence
// number breaks ties, as SimPy's (time, priority, counter) does), so a run is
// deterministic for a given stream. `generation` lets a model cancel a
// scheduled event cheaply: it bumps its own counter and ignores stale events.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace mmcost::sim {

struct Event {
  double time;
  std::uint64_t seq;
  std::int32_t target;   // whom the event is for (a CPU, a lock ...)
  std::int32_t kind;     // model-defined
  std::uint64_t generation;
};

struct EventLater {
  bool operator()(const Event& a, const Event& b) const {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
};

class EventQueue {
 public:
  double now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::uint64_t processed() const { return processed_; }

  void schedule(double delay, std::int32_t target, std::int32_t kind, std::uint64_t generation = 0) {
    heap_.push(Event{now_ + delay, seq_++, target, kind, generation});
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
