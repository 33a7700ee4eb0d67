#include "mmcost/queueing/mva.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
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

// Checks, then runs the recursion, handing each population's X(n) and Q(n)
// to `row` (the full table stores them, mva_top keeps the last).
template <class Row>
void recurse(const Stations& st, double think_time, long population, Row&& row) {
  check::not_empty("demands", st.k);
  check_all("demands", st.service, st.k);
  check_all("visits", st.visits, st.k);
  check::finite_nonnegative("think_time", think_time);
  if (st.scv != nullptr) check_all("scv", st.scv, st.k);
  if (population < 1) throw InvalidArgument("population must be >= 1");

  const Eigen::Index K = static_cast<Eigen::Index>(st.k);
  Eigen::VectorXd demand(K);
  for (Eigen::Index k = 0; k < K; ++k) {
    demand[k] = st.service[k] * st.visits[k];
    if (!std::isfinite(demand[k]))
      throw InvalidArgument(check::indexed("demands", static_cast<std::size_t>(k)) +
                            " x visits overflows a double");
  }
  if (think_time == 0.0 && demand.sum() == 0.0)
    throw InvalidArgument("demands and think_time are all zero: the cycle time is zero");

  bool approximate = false;
  for (std::size_t k = 0; k < st.k && st.scv != nullptr; ++k) approximate = approximate || st.scv[k] != 1.0;
  const double dmax = demand.maxCoeff();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(K);  // Q_k(n-1), then Q_k(n)
  Eigen::VectorXd u = Eigen::VectorXd::Zero(K);  // per-visit busy probability at n-1
  Eigen::VectorXd half_c2 = Eigen::VectorXd::Zero(K);  // (scv - 1) / 2: 0 for exponential service
  for (Eigen::Index k = 0; k < K && approximate; ++k) half_c2[k] = 0.5 * (st.scv[k] - 1.0);
  for (long n = 1; n <= population; ++n) {
    // R_k = D_k (1 + Q_k - U_k + U_k (1 + c2_k) / 2) = D_k (1 + Q_k + U_k (c2_k - 1) / 2)
    // R_k is summed here and recomputed below rather than stored: one pass
    // over K fewer per population (the same products, so the same bits).
    const auto d = demand.array();
    const auto r = d * (1.0 + q.array() + u.array() * half_c2.array());
    const auto r_exp = d * (1.0 + q.array());
    const double cycle = approximate ? r.sum() : r_exp.sum();
    const double total = think_time + cycle;
    // two finite halves may sum past a double while their X is a (subnormal) double: scale first
    const double scale = std::fmax(think_time, cycle);
    double x = std::isfinite(total) ? static_cast<double>(n) / total
                                    : (static_cast<double>(n) / scale) / (think_time / scale + cycle / scale);
    // The residual-life approximation (scv != 1) can overshoot the
    // bottleneck bound near saturation; clamp to X <= 1 / D_max
    // (Denning & Buzen, Computing Surveys 10(3), 1978). Exact runs never hit it.
    const bool clamped = approximate && dmax > 0.0 && x * dmax > 1.0;
    if (clamped) x = 1.0 / dmax;
    if (!std::isfinite(cycle))
      throw NumericalError("mva: the cycle time overflows a double at population " + std::to_string(n) +
                           " (demands x population too large)");
    if (!std::isfinite(x))
      throw NumericalError("mva: the throughput overflows a double at population " + std::to_string(n) +
                           " (think_time + demands too short)");
    if (approximate) {
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
    } else {
      q = (x * r_exp).matrix();
    }
    row(n, x, q);
  }
}

Stations view(const std::vector<double>& service_times, const std::vector<double>& visits,
             const std::vector<double>& scv) {
  check::same_length("demands", service_times.size(), "visits", visits.size());
  if (!scv.empty()) check::same_length("demands", service_times.size(), "scv", scv.size());
  return Stations{service_times.data(), visits.data(), scv.empty() ? nullptr : scv.data(), service_times.size()};
}

}  // namespace

MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
              long population, const std::vector<double>& scv) {
  MvaResult res;
  if (population >= 1) {
    res.throughput.resize(population);
    res.queue_length.resize(population, static_cast<Eigen::Index>(service_times.size()));
  }
  recurse(view(service_times, visits, scv), think_time, population, [&](long n, double x, const Eigen::VectorXd& q) {
    res.throughput[n - 1] = x;
    res.queue_length.row(n - 1) = q.transpose();
  });
  return res;
}

namespace {

MvaTop top_of(const Stations& st, double think_time, long population) {
  MvaTop top;
  recurse(st, think_time, population, [&](long n, double x, const Eigen::VectorXd& q) {
    if (n == population) {
      top.throughput = x;
      top.queue_length = q;
    } else if (n == population - 1) {
      top.throughput_before = x;
    }
  });
  return top;
}

}  // namespace

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
