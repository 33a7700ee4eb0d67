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
#include <cstring>
#include <vector>

namespace mmcost::sim {

struct Event {
  double time;
  std::uint64_t key;  // seq << 24 | target << 4 | kind

  std::int32_t target() const { return static_cast<std::int32_t>((key >> 4) & 0xFFFFF); }
  std::int32_t kind() const { return static_cast<std::int32_t>(key & 0xF); }
  std::uint64_t seq() const { return key >> 24; }
};

// Times are finite and >= 0, and the IEEE-754 bit patterns of non-negative
// doubles order like unsigned integers: comparing bits avoids the NaN branches
// of floating-point compares in the heap's hot loop.
inline std::uint64_t time_bits(double t) {
  std::uint64_t u;
  std::memcpy(&u, &t, sizeof u);
  return u;
}

// (time bits, key) as one 128-bit number: events order like these numbers,
// and comparing them compiles to cmp/sbb, which the heap turns into
// conditional moves instead of branches the predictor cannot learn.
__extension__ typedef unsigned __int128 Order;
inline Order order(double t, std::uint64_t key) { return (static_cast<Order>(time_bits(t)) << 64) | key; }
inline Order order(const Event& e) { return order(e.time, e.key); }

// A 4-ary min-heap with a lazy pop: pop() only marks the top as consumed,
// and the handler's first schedule() overwrites it and sifts down once,
// instead of a sift-down for the pop plus a sift-up for the push (most
// handlers schedule exactly one follow-up event).
class EventQueue {
 public:
  static constexpr std::int32_t kMaxTargets = 1 << 20;
  static constexpr std::int32_t kMaxKinds = 16;

  double now() const { return now_; }
  bool empty() const { return heap_.size() == (consumed_ ? 1u : 0u); }
  std::uint64_t processed() const { return processed_; }

  // target < 2^20, kind < 16 (checked by the models' validation).
  std::uint64_t schedule(double delay, std::int32_t target, std::int32_t kind) {
    const std::uint64_t seq = seq_++;
    const double t = now_ + delay;
    const std::uint64_t key =
        (seq << 24) | (static_cast<std::uint64_t>(target) << 4) | static_cast<std::uint64_t>(kind);
    if (consumed_) {
      consumed_ = false;
      sift_down(0, t, key);
    } else {
      heap_.emplace_back();
      sift_up(heap_.size() - 1, t, key);
    }
    return seq;
  }

  Event pop() {
    if (consumed_) remove_top();
    consumed_ = true;
    const Event e = heap_[0];
    now_ = e.time;
    ++processed_;
    return e;
  }

 private:
  void remove_top() {
    consumed_ = false;
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last.time, last.key);
  }
  // The new event travels as two scalars and is stored field by field: built
  // as an Event on the stack and copied in one 16-byte load, it stalled on
  // store-to-load forwarding (12% of the lock DES's time, perf annotate).
  void put(std::size_t i, double t, std::uint64_t key) {
    heap_[i].time = t;
    heap_[i].key = key;
  }
  // 4-ary heap: half the depth of a binary one, and the four children of a
  // node share a cache line (4 x 16 bytes).
  void sift_up(std::size_t i, double t, std::uint64_t key) {
    const Order o = order(t, key);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (order(heap_[parent]) < o) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    put(i, t, key);
  }
  void sift_down(std::size_t i, double t, std::uint64_t key) {
    const std::size_t n = heap_.size();
    const Order o = order(t, key);
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      Order best = order(heap_[first]);
      const std::size_t last = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        const Order oc = order(heap_[c]);
        const bool less = oc < best;
        child = less ? c : child;
        best = less ? oc : best;
      }
      if (o < best) break;
      heap_[i] = heap_[child];
      i = child;
    }
    put(i, t, key);
  }

  std::vector<Event> heap_;
  bool consumed_ = false;
  double now_ = 0.0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace mmcost::sim
