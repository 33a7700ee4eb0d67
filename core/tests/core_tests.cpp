// The core's invariants without Python (ctest; CI runs it under ASan + UBSan).
//
// Each check compares a solver with an independent answer: a closed form, a
// conservation law, or another solver of the same model.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "mmcost/errors.hpp"
#include "mmcost/locks/lock_sim.hpp"
#include "mmcost/queueing/birth_death.hpp"
#include "mmcost/queueing/machine_repairman.hpp"
#include "mmcost/queueing/mva.hpp"
#include "mmcost/queueing/usl.hpp"
#include "mmcost/sim/event_queue.hpp"
#include "mmcost/sim/random.hpp"
#include "mmcost/sim/slot_queue.hpp"

namespace q = mmcost::queueing;

static int failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

static bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)); }

template <class E>
static bool throws(const std::function<void()>& f) {
  try {
    f();
  } catch (const E&) {
    return true;
  }
  return false;
}

static void mva_against_machine_repairman() {
  // One FCFS station + think time is M/M/1//N: MVA's X(n) equals the closed form for every n
  const double z = 4.0, s = 0.7;
  const auto r = q::mva({s}, {1.0}, z, 50);
  std::vector<long> ns;
  for (long n = 1; n <= 50; ++n) ns.push_back(n);
  const auto mr = q::machine_repairman(ns, z, s);
  for (long n = 1; n <= 50; ++n) {
    CHECK(close(r.throughput[n - 1], mr.throughput[n - 1], 1e-12));
    CHECK(close(r.queue_length(n - 1, 0), mr.queue_length[n - 1], 1e-10));
  }
  CHECK(close(r.throughput[0], 1.0 / (z + s), 1e-15));  // n = 1: no queueing
}

static void mva_little_and_top() {
  // Little's law over the whole cycle: n = X (Z + sum_k Q_k / X), and mva_top is mva's last row
  const std::vector<double> d = {0.3, 1.1, 0.05, 0.8};
  const auto r = q::mva(d, {1.0, 2.0, 1.0, 0.5}, 2.5, 200, {1.0, 0.0, 2.0, 1.0});
  const auto top = q::mva_top(d, {1.0, 2.0, 1.0, 0.5}, 2.5, 200, {1.0, 0.0, 2.0, 1.0});
  CHECK(close(top.throughput, r.throughput[199], 1e-15));
  CHECK(close(top.throughput_before, r.throughput[198], 1e-15));
  for (int k = 0; k < 4; ++k) CHECK(close(top.queue_length[k], r.queue_length(199, k), 1e-15));
  const auto exact = q::mva(d, {1.0, 2.0, 1.0, 0.5}, 2.5, 200);
  for (long n = 1; n <= 200; ++n) {
    const double x = exact.throughput[n - 1];
    CHECK(close(static_cast<double>(n), x * 2.5 + exact.queue_length.row(n - 1).sum(), 1e-12));
  }
  CHECK(throws<mmcost::InvalidArgument>([] { q::mva({1e200}, {1e200}, 1.0, 4); }));
  CHECK(throws<mmcost::NumericalError>([] { q::mva({1.7976931348623157e308, 0.0, 0.01}, {1, 1, 1}, 5.3e16, 19); }));
  CHECK(throws<mmcost::InvalidArgument>([] { q::mva({-1.0}, {1.0}, 1.0, 4); }));
}

static void mva_batch_is_mva_top_per_item() {
  // Each row of a batch equals mva_top of that network alone, a network padded
  // with zero-service stations included, on 1 and 3 threads; an error names its item.
  const int B = 7, K = 4;
  q::RowMatrix s(B, K), v(B, K), c(B, K);
  Eigen::VectorXd z(B);
  std::vector<long> n(B);
  for (int b = 0; b < B; ++b) {
    for (int k = 0; k < K; ++k) {
      s(b, k) = 0.1 + 0.37 * ((b * 5 + k * 3) % 7);
      v(b, k) = 1.0 + 0.5 * k;
      c(b, k) = 0.5 + 0.25 * ((b + k) % 4);
    }
    z[b] = 0.5 + b;
    n[static_cast<std::size_t>(b)] = 1 + 17 * b;
  }
  s(3, 3) = 0.0;  // item 3: a three-station network padded to four
  for (int threads : {1, 3}) {
    const auto batch = q::mva_top_batch(s, v, z, n, c, threads);
    for (int b = 0; b < B; ++b) {
      const int k_used = b == 3 ? 3 : K;
      std::vector<double> sb(s.row(b).data(), s.row(b).data() + k_used), vb(v.row(b).data(), v.row(b).data() + k_used),
          cb(c.row(b).data(), c.row(b).data() + k_used);
      const auto one = q::mva_top(sb, vb, z[b], n[static_cast<std::size_t>(b)], cb);
      CHECK(close(batch.throughput[b], one.throughput, 1e-14));
      CHECK(batch.throughput_before[b] == one.throughput_before);
      for (int k = 0; k < k_used; ++k) CHECK(close(batch.queue_length(b, k), one.queue_length[k], 1e-14));
    }
  }
  s(5, 1) = -1.0;
  std::string msg;
  try {
    q::mva_top_batch(s, v, z, n, c, 2);
  } catch (const mmcost::InvalidArgument& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("item 5: demands[1]", 0) == 0);
}

static void birth_death_balance() {
  // detailed balance pi_k lambda_k = pi_{k+1} mu_k, total probability 1, flow balance X = sum pi_k lambda_k
  std::vector<double> lam, mu;
  for (int k = 0; k < 300; ++k) {
    lam.push_back(std::pow(10.0, (k % 25) - 12.0));
    mu.push_back(std::pow(10.0, 12.0 - (k % 23)));
  }
  const auto r = q::birth_death(lam, mu);
  CHECK(close(r.probabilities.sum(), 1.0, 1e-13));
  double flow = 0.0;
  for (int k = 0; k < 300; ++k) {
    const double a = r.probabilities[k] * lam[k], b = r.probabilities[k + 1] * mu[k];
    if (a > 1e-290) CHECK(close(a, b, 1e-11));
    flow += a;
  }
  CHECK(close(flow, r.throughput, 1e-11));
  // the machine-repairman chain at 10,000 CPUs
  const long n = 10000;
  const double z = 50.0, s = 0.01;
  std::vector<double> arr, srv(static_cast<std::size_t>(n), 1.0 / s);
  for (long k = 0; k < n; ++k) arr.push_back(static_cast<double>(n - k) / z);
  const auto mr = q::machine_repairman({n}, z, s);
  CHECK(close(q::birth_death(arr, srv).throughput, mr.throughput[0], 1e-9));
  CHECK(throws<mmcost::InvalidArgument>([] { q::birth_death({1.0}, {0.0}); }));
}

static void usl_closed_forms() {
  Eigen::VectorXd n(2);
  n << 1.0, 1e308;
  const auto x = q::usl(n, 1e-3, 1e-3, 1e308);
  CHECK(close(x[0], 1e308, 1e-15));
  CHECK(close(x[1], 1e308 / (1e-3 + 1e-3 * (1e308 - 1.0)), 1e-12));  // lam / (kappa n), no overflow
  Eigen::VectorXd two(1);
  two << 2.0;
  CHECK(throws<mmcost::NumericalError>([&] { q::usl(two, 0.0, 0.0, 1.7e308); }));
}

static void event_queue_order() {
  // times come out sorted; equal times in the order they were scheduled
  mmcost::sim::EventQueue eq;
  const double delays[] = {3.0, 1.0, 2.0, 1.0, 0.5, 2.0};
  for (int i = 0; i < 6; ++i) eq.schedule(delays[i], i, 0);
  double last = -1.0;
  std::uint64_t last_seq = 0;
  for (int i = 0; i < 6; ++i) {
    const auto e = eq.pop();
    CHECK(e.time >= last);
    if (e.time == last) CHECK(e.seq() > last_seq);
    last = e.time;
    last_seq = e.seq();
  }
}

static void slot_queue_against_event_queue() {
  // A random run of schedules, reschedules, cancels and pops, with tied times:
  // the winner tree pops exactly what the heap does once a slot's replaced
  // or cancelled events are skipped (its sequence number is not the live one).
  namespace sim = mmcost::sim;
  for (const int slots : {1, 2, 5, 8, 9, 64}) {
    sim::SlotQueue sq(slots);
    sim::EventQueue eq;
    std::vector<std::uint64_t> live(static_cast<std::size_t>(slots), ~0ULL);
    std::vector<bool> pending(static_cast<std::size_t>(slots), false);
    sim::Rng rng(11, static_cast<std::uint64_t>(slots));
    int n_pending = 0;
    const double delays[] = {0.0, 0.5, 1.0, 1.0, 2.5};  // ties on purpose
    for (int step = 0; step < 20000; ++step) {
      const int s = static_cast<int>(rng.next() % static_cast<std::uint64_t>(slots));
      const auto op = rng.next() % 4;
      if (op < 2) {  // (re)schedule
        const double d = delays[rng.next() % 5];
        const int kind = static_cast<int>(rng.next() % 3);
        const auto a = sq.schedule(d, s, kind), b = eq.schedule(d, s, kind);
        CHECK(a == b);
        live[static_cast<std::size_t>(s)] = b;
        if (!pending[static_cast<std::size_t>(s)]) ++n_pending;
        pending[static_cast<std::size_t>(s)] = true;
      } else if (op == 2) {  // cancel
        sq.cancel(s);
        if (pending[static_cast<std::size_t>(s)]) --n_pending;
        pending[static_cast<std::size_t>(s)] = false;
        live[static_cast<std::size_t>(s)] = ~0ULL;
      } else if (n_pending > 0) {  // pop
        sim::Event want;
        do want = eq.pop(); while (want.seq() != live[static_cast<std::size_t>(want.target())]);
        const auto got = sq.pop();
        CHECK(got.time == want.time && got.key == want.key && sq.now() == eq.now());
        pending[static_cast<std::size_t>(got.target())] = false;
        live[static_cast<std::size_t>(got.target())] = ~0ULL;
        --n_pending;
      }
    }
    for (; n_pending > 0; --n_pending) {  // drain both
      sim::Event want;
      do want = eq.pop(); while (want.seq() != live[static_cast<std::size_t>(want.target())]);
      live[static_cast<std::size_t>(want.target())] = ~0ULL;
      CHECK(sq.pop().key == want.key);
    }
    CHECK(sq.pop().kind() == sim::SlotQueue::kNoKind);  // nothing pending, and it says so
  }
}

static void lock_sim_against_mva() {
  // one queued lock, exponential work and hold: the DES throughput within 2% of exact MVA
  namespace lk = mmcost::locks;
  lk::LockSimParams p;
  p.cpus = 6;
  p.locks = {lk::LockSpec{"L"}};
  p.stages = {lk::Stage{-1, "work", {mmcost::sim::DistKind::Exponential, 2.0, 0.0, {}}, false},
              lk::Stage{0, "cs", {mmcost::sim::DistKind::Exponential, 0.5, 0.0, {}}, false}};
  p.ops = 400000;
  std::atomic<bool> stop{false};
  const auto r = lk::simulate_locks(p, 7, 0, stop);
  const auto exact = q::mva({0.5}, {1.0}, 2.0, 6);
  CHECK(close(r.ops / r.time, exact.throughput[5], 0.02));
  CHECK(!r.stopped);
  stop = true;  // a set flag stops the run at once and says so
  CHECK(lk::simulate_locks(p, 7, 0, stop).stopped);
  p.cpus = 0;
  CHECK(throws<mmcost::InvalidArgument>([&] { p.validate(); }));
}

int main() {
  mva_against_machine_repairman();
  mva_little_and_top();
  mva_batch_is_mva_top_per_item();
  birth_death_balance();
  usl_closed_forms();
  event_queue_order();
  slot_queue_against_event_queue();
  lock_sim_against_mva();
  if (failures) std::fprintf(stderr, "%d check(s) failed\n", failures);
  else std::printf("core tests: all checks passed\n");
  return failures ? 1 : 0;
}
