// An event queue for models whose entities each have at most one pending
// event (a CPU's next stage end, a ticket lock's next handoff): one slot per
// entity, kept in a winner tree (Knuth, TAOCP vol. 3, sec. 5.4.1: each
// internal node holds the earliest event below it).
//
// Setting a slot replays the matches on its path to the root: log2(slots)
// comparisons, always the same number, each a conditional move. A heap's
// sift stops where the new event belongs, a data-dependent exit the branch
// predictor misses about once per event (cachegrind on the lock DES: 2.7 ->
// 1.3 mispredicted branches per acquisition, the rest being the model's own).
// Rescheduling a slot replaces its event: no stale events to skip, so a
// Markov model that resamples (the ticket lock) cancels nothing by hand.
//
// Events are ordered exactly as EventQueue orders them, by (time, sequence
// number): a model gives the same trajectory on either queue.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "mmcost/sim/event_queue.hpp"

namespace mmcost::sim {

class SlotQueue {
 public:
  static constexpr std::int32_t kMaxSlots = EventQueue::kMaxTargets;
  static constexpr std::int32_t kNoKind = EventQueue::kMaxKinds - 1;  // the kind of "nothing pending"

  // slots < kMaxSlots (checked by the models' validation); event kinds < kNoKind.
  explicit SlotQueue(std::int32_t slots) {
    while (leaves_ < static_cast<std::size_t>(slots)) {
      leaves_ <<= 1;
      ++levels_;
    }
    node_.assign(2 * leaves_, Event{kNever, kNoKey});
  }

  double now() const { return now_; }
  std::uint64_t processed() const { return processed_; }

  // The event of `slot` becomes (now + delay, kind), replacing any it had.
  // The event's target() is its slot. Returns its sequence number.
  std::uint64_t schedule(double delay, std::int32_t slot, std::int32_t kind) {
    const std::uint64_t seq = seq_++;
    const std::uint64_t key =
        (seq << 24) | (static_cast<std::uint64_t>(slot) << 4) | static_cast<std::uint64_t>(kind);
    if (slot == consumed_) consumed_ = -1;
    set(static_cast<std::size_t>(slot), now_ + delay, key);
    return seq;
  }

  // When the event pending in `slot` is due (infinity if none). A slot
  // consumed by the last pop() still reads its popped event's time until
  // it is rescheduled or the next pop().
  double due(std::int32_t slot) const { return node_[leaves_ + static_cast<std::size_t>(slot)].time; }

  // `slot` has no pending event.
  void cancel(std::int32_t slot) {
    if (slot == consumed_) consumed_ = -1;
    set(static_cast<std::size_t>(slot), kNever, kNoKey);
  }

  // The earliest event. Its slot is emptied lazily, at the next pop, unless
  // the handler schedules it again first (most do: one replay, not two).
  // With no event pending it returns one whose kind() is kNoKind.
  Event pop() {
    if (consumed_ >= 0) set(static_cast<std::size_t>(consumed_), kNever, kNoKey);
    // field by field: one 16-byte load of the root just written as two
    // 8-byte stores would wait for them (a store-forwarding stall)
    Event e;
    e.time = node_[1].time;
    e.key = node_[1].key;
    consumed_ = e.target();
    now_ = e.time;
    ++processed_;
    return e;
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  static constexpr std::uint64_t kNoKey = ~0ULL;  // orders after every real event

  void set(std::size_t slot, double t, std::uint64_t key) {
    std::size_t i = leaves_ + slot;
    node_[i].time = t;
    node_[i].key = key;
    Order cur = order(t, key);
    for (int l = 0; l < levels_; ++l) {
      const Order sibling = order(node_[i ^ 1]);
      cur = sibling < cur ? sibling : cur;
      i >>= 1;
      const auto bits = static_cast<std::uint64_t>(cur >> 64);
      double time;  // a typed store: a memcpy into the node may alias anything, node_'s own pointer included
      std::memcpy(&time, &bits, sizeof time);
      node_[i].time = time;
      node_[i].key = static_cast<std::uint64_t>(cur);
    }
  }

  std::vector<Event> node_;  // node_[1] the root; leaves at [leaves_, 2 leaves_)
  std::size_t leaves_ = 1;
  int levels_ = 0;
  std::int32_t consumed_ = -1;  // the slot of the last event popped, until emptied or rescheduled
  double now_ = 0.0;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace mmcost::sim
