#include "mmcost/queueing/mva.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

namespace {

// One network's stations, as views: the single solvers pass their vectors,
// the batch a row of its matrices (scv null: exponential service).
struct Stations {
  const double* service;
  const double* visits;
  const double* scv;
  std::size_t k;
};

void check_all(const char* name, const double* v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]) || v[i] < 0.0) check::finite_nonnegative(check::indexed(name, i), v[i]);
}

// The checks every solver makes, and D_k = V_k S_k. `approximate`: some scv
// differs from 1 (the residual-life recursion, below); otherwise the exact one.
struct Prepared {
  Eigen::VectorXd demand;
  bool approximate = false;
};

Prepared prepare(const Stations& st, double think_time, long population) {
  check::not_empty("demands", st.k);
  check_all("demands", st.service, st.k);
  check_all("visits", st.visits, st.k);
  check::finite_nonnegative("think_time", think_time);
  if (st.scv != nullptr) check_all("scv", st.scv, st.k);
  if (population < 1) throw InvalidArgument("population must be >= 1");

  const Eigen::Index K = static_cast<Eigen::Index>(st.k);
  Prepared p;
  Eigen::VectorXd& demand = p.demand;
  demand.resize(K);
  for (Eigen::Index k = 0; k < K; ++k) {
    demand[k] = st.service[k] * st.visits[k];
    if (!std::isfinite(demand[k]))
      throw InvalidArgument(check::indexed("demands", static_cast<std::size_t>(k)) +
                            " x visits overflows a double");
  }
  if (think_time == 0.0 && demand.sum() == 0.0)
    throw InvalidArgument("demands and think_time are all zero: the cycle time is zero");
  for (std::size_t k = 0; k < st.k && st.scv != nullptr; ++k) p.approximate = p.approximate || st.scv[k] != 1.0;
  return p;
}

// X(n) from the cycle time sum_k R_k(n); throws where a double overflows.
inline double throughput_at(long n, double think_time, double cycle) {
  const double total = think_time + cycle;
  // two finite halves may sum past a double while their X is a (subnormal) double: scale first
  const double scale = std::fmax(think_time, cycle);
  return std::isfinite(total) ? static_cast<double>(n) / total
                              : (static_cast<double>(n) / scale) / (think_time / scale + cycle / scale);
}

[[noreturn]] void overflow(const char* what, long n, const char* why) {
  throw NumericalError(std::string("mva: the ") + what + " overflows a double at population " + std::to_string(n) +
                       " (" + why + ")");
}

// The residual-life recursion (some scv != 1), handing each population's
// X(n) and Q(n) to `row` (the full table stores them, mva_top keeps the last).
template <class Row>
void recurse(const Stations& st, const Prepared& p, double think_time, long population, Row&& row) {
  const Eigen::Index K = static_cast<Eigen::Index>(st.k);
  const Eigen::VectorXd& demand = p.demand;
  const double dmax = demand.maxCoeff();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(K);  // Q_k(n-1), then Q_k(n)
  Eigen::VectorXd u = Eigen::VectorXd::Zero(K);  // per-visit busy probability at n-1
  Eigen::VectorXd half_c2(K);                    // (scv - 1) / 2: 0 for exponential service
  for (Eigen::Index k = 0; k < K; ++k) half_c2[k] = 0.5 * (st.scv[k] - 1.0);
  for (long n = 1; n <= population; ++n) {
    // R_k = D_k (1 + Q_k - U_k + U_k (1 + c2_k) / 2) = D_k (1 + Q_k + U_k (c2_k - 1) / 2)
    // R_k is summed here and recomputed below rather than stored: one pass
    // over K fewer per population (the same products, so the same bits).
    const auto r = demand.array() * (1.0 + q.array() + u.array() * half_c2.array());
    const double cycle = r.sum();
    double x = throughput_at(n, think_time, cycle);
    // The residual-life approximation can overshoot the bottleneck bound
    // near saturation; clamp to X <= 1 / D_max (Denning & Buzen, Computing
    // Surveys 10(3), 1978).
    const bool clamped = dmax > 0.0 && x * dmax > 1.0;
    if (clamped) x = 1.0 / dmax;
    if (!std::isfinite(cycle)) overflow("cycle time", n, "demands x population too large");
    if (!std::isfinite(x)) overflow("throughput", n, "think_time + demands too short");
    q = (x * r).matrix();
    if (clamped) {
      // The clamped X no longer closes the cycle: X (Z + sum_k R_k) < n, so
      // Q_k = X R_k would lose customers (n = 2, D = 1, Z = 0, scv = 0 gave
      // sum Q = 1.5). Little's law over the network fixes the cycle time at
      // n / X - Z; it is shared among the stations in proportion to their
      // residual-life R_k (all scaled up by the same factor >= 1), so
      // sum_k Q_k + X Z = n and Q_k = X R_k hold at every population.
      const double queued = static_cast<double>(n) - x * think_time;
      q *= queued / q.sum();
    }
    u = x * demand;  // read by the residual-life term only
    row(n, x, q);
  }
}

// Where the rows Q(n) go: population n to row (n - 1) mod `rows` of `table`
// (null: not kept), `full` called each time the ring of rows is full and at
// the end (first population, count); `rows` = N and no `full`: the N x K table.
struct Rows {
  double* table = nullptr;
  std::size_t rows = 1;
  void (*full)(void* ctx, long first, long count) = nullptr;
  void* ctx = nullptr;

  double* at(long n, std::size_t k) const {
    return table == nullptr ? nullptr : table + static_cast<std::size_t>(n - 1) % rows * k;
  }
  void done(long n, long population) const {
    const long count = static_cast<long>(static_cast<std::size_t>(n - 1) % rows) + 1;
    if (full != nullptr && (count == static_cast<long>(rows) || n == population)) full(ctx, n - count + 1, count);
  }
};

// The exact recursion (every scv 1) in one pass over the stations per
// population: the pass that computes Q_k(n) = X(n) R_k(n) also computes
// R_k(n+1) = D_k (1 + Q_k(n)) and sums it, and writes Q_k(n) to its row in
// `out` and X(n) to throughput[n-1] (null: not kept). `demand` and `q` hold kp = k rounded up to 8 entries, the
// padding of zero demand (its R = 0 adds +0.0 to the sums); q is zero on
// entry and, without rows kept, Q(N) on return; x_last gets X(N-1) (0 for
// N = 1) and X(N).
//
// The sum of R_k runs over 8 logical lanes (station k in lane k mod 8) and,
// from 32 stations on, 4 partial sums (8-station block b in sum b mod 4),
// then ((a0 + a1) + (a2 + a3)) lane by lane and ((l0 + l4) + (l2 + l6)) +
// ((l1 + l5) + (l3 + l7)) across. V is the machine's vector (8 lanes in one
// AVX-512 register, 4 in AVX2, 2 in SSE2), each block of 8 lanes taken as 8 / W
// of them: the additions, and so the bits, are the same on every instruction
// set (mva.cpp is built with -ffp-contract=off: no fused multiply-add either).
// 8-lane GCC vectors on AVX2 or SSE2 spilled their registers: 2-3x slower than
// the old Eigen loop there, hence one V per instruction set.
constexpr std::size_t kLanes = 8;

template <class V>
__attribute__((always_inline)) inline void exact_lanes(const double* demand, double* q, std::size_t k, std::size_t kp,
                                                       double think_time, long population, double* throughput,
                                                       const Rows& out, double* x_last) {
  constexpr std::size_t W = sizeof(V) / sizeof(double), S = kLanes / W;
  const V zero = V{} * 0.0;
  V a[4][S];  // partial sums of R_k: [block mod 4][lanes s W .. s W + W - 1]
  for (auto& row : a)
    for (auto& v : row) v = zero;
  for (std::size_t j = 0; j < kp; j += kLanes)  // R_k(1) = D_k (1 + 0)
    for (std::size_t s = 0; s < S; ++s) {
      V d, p;
      std::memcpy(&d, demand + j + s * W, sizeof d);
      std::memcpy(&p, q + j + s * W, sizeof p);
      a[0][s] += d * (1.0 + p);
    }
  const bool four = k >= 4 * kLanes;  // below 32 stations, a[0] alone: two adds fewer on the chain
  double x_before = 0.0, x = 0.0;
  const double* prev = nullptr;  // the row of Q(n-1)
  for (long n = 1; n <= population; ++n) {
    double l[kLanes];
    for (std::size_t s = 0; s < S; ++s) {
      const V t = four ? (a[0][s] + a[1][s]) + (a[2][s] + a[3][s]) : a[0][s];
      std::memcpy(l + s * W, &t, sizeof t);
    }
    const double cycle = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
    x_before = x;
    x = throughput_at(n, think_time, cycle);
    if (!std::isfinite(cycle)) overflow("cycle time", n, "demands x population too large");
    if (!std::isfinite(x)) overflow("throughput", n, "think_time + demands too short");
    if (throughput != nullptr) throughput[n - 1] = x;
    double* const row = out.at(n, k);
    std::size_t j = 0;
    // Q_k(n) = X(n) D_k (1 + Q_k(n-1)): the products of R_k(n), recomputed.
    // Blocks of 32 read Q(n-1) from the table's previous row and write Q(n)
    // to the table alone (one store, not two: K = 512 with a reused table
    // went from 3.6 to 2.0 ms); q keeps the rest, and all of Q(N) without a table.
    double* const into = row != nullptr ? row : q;
    const double* const from = row != nullptr && prev != nullptr ? prev : q;
    for (; j + 4 * kLanes <= k; j += 4 * kLanes)
      for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t s = 0; s < S; ++s) {
          const std::size_t i = j + b * kLanes + s * W;
          V d, v;
          std::memcpy(&d, demand + i, sizeof d);
          std::memcpy(&v, from + i, sizeof v);
          v = x * (d * (1.0 + v));
          std::memcpy(into + i, &v, sizeof v);
          const V r = d * (1.0 + v);
          a[b][s] = j == 0 ? r : a[b][s] + r;  // not 0 + R on the chain (the same bits)
        }
    for (; j < kp; j += kLanes)
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t i = j + s * W;
        V d, v;
        std::memcpy(&d, demand + i, sizeof d);
        std::memcpy(&v, q + i, sizeof v);
        v = x * (d * (1.0 + v));
        std::memcpy(q + i, &v, sizeof v);
        if (row != nullptr && i + W <= k) {
          std::memcpy(row + i, &v, sizeof v);
        } else if (row != nullptr) {  // the last stations, short of W (a loop: a memcpy of k - i was a call)
          for (std::size_t m = i; m < k; ++m) row[m] = v[m - i];
        }
        const V r = d * (1.0 + v);
        a[0][s] = j == 0 ? r : a[0][s] + r;
      }
    prev = row;
    out.done(n, population);
  }
  x_last[0] = x_before;
  x_last[1] = x;
}

typedef double V8 __attribute__((vector_size(64)));
typedef double V4 __attribute__((vector_size(32)));
typedef double V2 __attribute__((vector_size(16)));

__attribute__((target("avx512f"))) void exact_avx512(const double* demand, double* q, std::size_t k, std::size_t kp,
                                                     double think_time, long population, double* throughput,
                                                     const Rows& out, double* x_last) {
  exact_lanes<V8>(demand, q, k, kp, think_time, population, throughput, out, x_last);
}

__attribute__((target("avx2"))) void exact_avx2(const double* demand, double* q, std::size_t k, std::size_t kp,
                                                double think_time, long population, double* throughput,
                                                const Rows& out, double* x_last) {
  exact_lanes<V4>(demand, q, k, kp, think_time, population, throughput, out, x_last);
}

void exact_sse2(const double* demand, double* q, std::size_t k, std::size_t kp, double think_time, long population,
                double* throughput, const Rows& out, double* x_last) {
  exact_lanes<V2>(demand, q, k, kp, think_time, population, throughput, out, x_last);
}

// A few stations: scalar, summed in station order from the first term (a sum
// from 0.0 or over 8 padded lanes added 4 to 10 ns to the 8.5 ns a population
// took at K = 1: the chain X -> Q -> R -> sum -> X is all there is).
void exact_scalar(const double* demand, double* q, std::size_t k, double think_time, long population,
                  double* throughput, const Rows& out, double* x_last) {
  double x_before = 0.0, x = 0.0;
  double cycle = demand[0] * (1.0 + q[0]);
  for (std::size_t i = 1; i < k; ++i) cycle += demand[i] * (1.0 + q[i]);
  for (long n = 1; n <= population; ++n) {
    x_before = x;
    x = throughput_at(n, think_time, cycle);
    if (!std::isfinite(cycle)) overflow("cycle time", n, "demands x population too large");
    if (!std::isfinite(x)) overflow("throughput", n, "think_time + demands too short");
    if (throughput != nullptr) throughput[n - 1] = x;
    double* const row = out.at(n, k);
    for (std::size_t i = 0; i < k; ++i) {
      q[i] = x * (demand[i] * (1.0 + q[i]));
      if (row != nullptr) row[i] = q[i];
      const double r = demand[i] * (1.0 + q[i]);
      cycle = i == 0 ? r : cycle + r;
    }
    out.done(n, population);
  }
  x_last[0] = x_before;
  x_last[1] = x;
}

void exact_recursion(const double* demand, double* q, std::size_t k, std::size_t kp, double think_time,
                     long population, double* throughput, const Rows& out, double* x_last) {
  // Every path gives the same bits; the fastest per K on a Xeon (Sapphire
  // Rapids class, ns per population): below 32 stations SSE2 (AVX-512's lane
  // extracts lengthen the X -> sum -> X chain: 17 ns against 15 at K = 16), up
  // to 128 AVX2 (19.5 at K = 64, against 24 and 27.5), then AVX-512 (81 at
  // K = 512, against 110 and 204; the Eigen loop before took 186).
  static const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
  if (k <= 4) {
    exact_scalar(demand, q, k, think_time, population, throughput, out, x_last);
  } else if (k >= 128 && avx512) {
    exact_avx512(demand, q, k, kp, think_time, population, throughput, out, x_last);
  } else if (k >= 32 && avx2) {
    exact_avx2(demand, q, k, kp, think_time, population, throughput, out, x_last);
  } else {
    exact_sse2(demand, q, k, kp, think_time, population, throughput, out, x_last);
  }
}

// Either recursion for one network: X(n) into throughput[n-1] where that is
// not null, Q_k(n) into `out`; Q(N) and X(N-1) into top where that is not null.
void solve(const Stations& st, double think_time, long population, double* throughput, const Rows& out, MvaTop* top) {
  const Prepared p = prepare(st, think_time, population);
  if (p.approximate) {
    recurse(st, p, think_time, population, [&](long n, double x, const Eigen::VectorXd& q) {
      if (throughput != nullptr) throughput[n - 1] = x;
      if (out.table != nullptr) {
        Eigen::Map<Eigen::VectorXd>(out.at(n, st.k), q.size()) = q;
        out.done(n, population);
      }
      if (top != nullptr && n == population) {
        top->throughput = x;
        top->queue_length = q;
      } else if (top != nullptr && n == population - 1) {
        top->throughput_before = x;
      }
    });
    return;
  }
  const std::size_t kp = (st.k + kLanes - 1) / kLanes * kLanes;
  std::vector<double> demand(kp, 0.0), q(kp, 0.0);
  std::copy(p.demand.data(), p.demand.data() + p.demand.size(), demand.begin());
  double x_last[2];
  exact_recursion(demand.data(), q.data(), st.k, kp, think_time, population, throughput, out, x_last);
  if (top != nullptr) {
    top->throughput_before = x_last[0];
    top->throughput = x_last[1];
    top->queue_length = Eigen::Map<const Eigen::VectorXd>(q.data(), static_cast<Eigen::Index>(st.k));
  }
}

// The rows of mva_frame, from a ring of Q rows: transposed in tiles of 8 x 8
// into station-major scratch, so that every row of the frame is then written
// by a contiguous, vectorised loop (gathers of Q at stride K, and a
// division each, took 82 ms at N = 10^4 x K = 512, 51 ms now; a 256 KB ring 76).
struct FrameWriter {
  double* frame;
  std::size_t n_cols, k;
  const double* demand;
  const double* visits;
  const double* ring;  // populations x K
  double* scratch;     // K x populations

  static void full(void* self, long first, long count) {
    const auto& w = *static_cast<const FrameWriter*>(self);
    const std::size_t n0 = static_cast<std::size_t>(first - 1), c = static_cast<std::size_t>(count), k = w.k;
    for (std::size_t i0 = 0; i0 < c; i0 += 8)
      for (std::size_t s0 = 0; s0 < k; s0 += 8)
        for (std::size_t i = i0; i < std::min(i0 + 8, c); ++i)
          for (std::size_t s = s0; s < std::min(s0 + 8, k); ++s) w.scratch[s * c + i] = w.ring[i * k + s];
    const double* x = w.frame + n0;  // row 0: X(n), written by the recursion
    double* response = w.frame + w.n_cols + n0;
    for (std::size_t s = 0; s < k; ++s) {
      const double* qk = w.scratch + s * c;
      double* u = w.frame + (2 + 4 * s) * w.n_cols + n0;
      double* ql = u + w.n_cols;
      double* res = ql + w.n_cols;
      double* xs = res + w.n_cols;
      const double d = w.demand[s], v = w.visits[s];
      for (std::size_t i = 0; i < c; ++i) {
        u[i] = x[i] * d;
        ql[i] = qk[i];
        res[i] = qk[i] / x[i];
        xs[i] = x[i] * v;
        response[i] = s == 0 ? res[i] : response[i] + res[i];  // R(n) = sum_k R_k(n), in station order
      }
    }
  }
};

Stations view(const std::vector<double>& service_times, const std::vector<double>& visits,
             const std::vector<double>& scv) {
  check::same_length("demands", service_times.size(), "visits", visits.size());
  if (!scv.empty()) check::same_length("demands", service_times.size(), "scv", scv.size());
  return Stations{service_times.data(), visits.data(), scv.empty() ? nullptr : scv.data(), service_times.size()};
}

MvaTop top_of(const Stations& st, double think_time, long population) {
  MvaTop top;
  solve(st, think_time, population, nullptr, Rows{}, &top);
  return top;
}

}  // namespace

void mva_into(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
              long population, const std::vector<double>& scv, double* throughput, double* queue_length) {
  Rows out;
  out.table = queue_length;
  out.rows = static_cast<std::size_t>(std::max(population, 1L));
  solve(view(service_times, visits, scv), think_time, population, throughput, out, nullptr);
}

void mva_frame(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
               long population, const std::vector<double>& scv, double* frame) {
  const Stations st = view(service_times, visits, scv);
  const Prepared p = prepare(st, think_time, population);
  // Q for a ring of populations (1 MB of them, at least 16), then spread
  // over the frame's rows: the N x K table is never made, nor its faults taken.
  // (No more rows than populations, and not zeroed: 2 MB cleared for N = 100
  // added 0.6 ms to a call of 0.1.)
  const std::size_t kRing = std::min(std::max<std::size_t>(16, (std::size_t{1} << 17) / st.k),
                                     static_cast<std::size_t>(population));
  const std::unique_ptr<double[]> ring(new double[kRing * st.k]), scratch(new double[kRing * st.k]);
  FrameWriter writer{frame,      static_cast<std::size_t>(population), st.k, p.demand.data(), st.visits,
                     ring.get(), scratch.get()};
  Rows out;
  out.table = ring.get();
  out.rows = kRing;
  out.full = &FrameWriter::full;
  out.ctx = &writer;
  solve(st, think_time, population, frame, out, nullptr);
}

MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
              long population, const std::vector<double>& scv) {
  MvaResult res;
  const Stations st = view(service_times, visits, scv);
  prepare(st, think_time, population);  // before sizing the table by population
  res.throughput.resize(population);
  res.queue_length.resize(population, static_cast<Eigen::Index>(service_times.size()));
  mva_into(service_times, visits, think_time, population, scv, res.throughput.data(), res.queue_length.data());
  return res;
}

MvaTop mva_top(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
               long population, const std::vector<double>& scv) {
  return top_of(view(service_times, visits, scv), think_time, population);
}

MvaBatch mva_top_batch(const RowMatrix& service_times, const RowMatrix& visits, const Eigen::VectorXd& think_time,
                       const std::vector<long>& population, const RowMatrix& scv, int threads) {
  const Eigen::Index B = service_times.rows(), K = service_times.cols();
  if (visits.rows() != B || visits.cols() != K)
    throw InvalidArgument("visits must have the shape of service_times (" + std::to_string(B) + " x " +
                          std::to_string(K) + ")");
  if (scv.size() != 0 && (scv.rows() != B || scv.cols() != K))
    throw InvalidArgument("scv must be empty or have the shape of service_times (" + std::to_string(B) + " x " +
                          std::to_string(K) + ")");
  check::same_length("service_times rows", static_cast<std::size_t>(B), "think_time",
                     static_cast<std::size_t>(think_time.size()));
  check::same_length("service_times rows", static_cast<std::size_t>(B), "population", population.size());
  if (threads < 1) throw InvalidArgument("threads must be >= 1");
  MvaBatch out;
  out.throughput.resize(B);
  out.throughput_before.resize(B);
  out.queue_length.resize(B, K);
  // Items are independent: each thread takes every T-th one, and the first
  // failure (by item) is rethrown with the item named after all have joined.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  std::vector<Eigen::Index> failed(static_cast<std::size_t>(threads), B);
  auto work = [&](int t) {
    for (Eigen::Index b = t; b < B; b += threads) {
      try {
        const Stations st{service_times.row(b).data(), visits.row(b).data(),
                          scv.size() != 0 ? scv.row(b).data() : nullptr, static_cast<std::size_t>(K)};
        const MvaTop top = top_of(st, think_time[b], population[static_cast<std::size_t>(b)]);
        out.throughput[b] = top.throughput;
        out.throughput_before[b] = top.throughput_before;
        out.queue_length.row(b) = top.queue_length.transpose();
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();
        failed[static_cast<std::size_t>(t)] = b;
        return;
      }
    }
  };
  const int n = static_cast<int>(std::min<Eigen::Index>(threads, std::max<Eigen::Index>(B, 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  std::size_t first = 0;
  for (std::size_t t = 1; t < failed.size(); ++t)
    if (failed[t] < failed[first]) first = t;
  if (failed[first] < B) {
    try {
      std::rethrow_exception(errors[first]);
    } catch (const std::exception& e) {
      const std::string msg = "item " + std::to_string(failed[first]) + ": " + e.what();
      if (dynamic_cast<const NumericalError*>(&e) != nullptr) throw NumericalError(msg);
      throw InvalidArgument(msg);
    }
  }
  return out;
}

}  // namespace mmcost::queueing
