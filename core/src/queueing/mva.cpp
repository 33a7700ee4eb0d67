#include "mmcost/queueing/mva.hpp"

#include <cmath>

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

namespace {

// Checks, then runs the recursion, handing each population's X(n) and Q(n)
// to `row` (the full table stores them, mva_top keeps the last).
template <class Row>
void recurse(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
             long population, const std::vector<double>& scv, Row&& row) {
  check::not_empty("demands", service_times.size());
  check::same_length("demands", service_times.size(), "visits", visits.size());
  check::all_finite_nonnegative("demands", service_times);
  check::all_finite_nonnegative("visits", visits);
  check::finite_nonnegative("think_time", think_time);
  if (!scv.empty()) {
    check::same_length("demands", service_times.size(), "scv", scv.size());
    check::all_finite_nonnegative("scv", scv);
  }
  if (population < 1) throw InvalidArgument("population must be >= 1");

  const Eigen::Index K = static_cast<Eigen::Index>(service_times.size());
  Eigen::VectorXd demand(K);
  for (Eigen::Index k = 0; k < K; ++k) {
    demand[k] = service_times[k] * visits[k];
    if (!std::isfinite(demand[k]))
      throw InvalidArgument(check::indexed("demands", static_cast<std::size_t>(k)) +
                            " x visits overflows a double");
  }
  if (think_time == 0.0 && demand.sum() == 0.0)
    throw InvalidArgument("demands and think_time are all zero: the cycle time is zero");

  bool approximate = false;
  for (double c2 : scv) approximate = approximate || c2 != 1.0;
  const double dmax = demand.maxCoeff();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(K);  // Q_k(n-1), then Q_k(n)
  Eigen::VectorXd u = Eigen::VectorXd::Zero(K);  // per-visit busy probability at n-1
  Eigen::VectorXd r(K);
  Eigen::VectorXd half_c2 = Eigen::VectorXd::Zero(K);  // (scv - 1) / 2: 0 for exponential service
  for (Eigen::Index k = 0; k < K && approximate; ++k) half_c2[k] = 0.5 * (scv[static_cast<std::size_t>(k)] - 1.0);
  for (long n = 1; n <= population; ++n) {
    // R_k = D_k (1 + Q_k - U_k + U_k (1 + c2_k) / 2) = D_k (1 + Q_k + U_k (c2_k - 1) / 2)
    if (approximate)
      r = demand.cwiseProduct((1.0 + q.array() + u.array() * half_c2.array()).matrix());
    else
      r = demand.cwiseProduct((1.0 + q.array()).matrix());
    const double cycle = r.sum();
    const double total = think_time + cycle;
    // two finite halves may sum past a double while their X is a (subnormal) double: scale first
    const double scale = std::fmax(think_time, cycle);
    double x = std::isfinite(total) ? static_cast<double>(n) / total
                                    : (static_cast<double>(n) / scale) / (think_time / scale + cycle / scale);
    // The residual-life approximation (scv != 1) can overshoot the
    // bottleneck bound near saturation; clamp to X <= 1 / D_max
    // (Denning & Buzen, Computing Surveys 10(3), 1978). Exact runs never hit it.
    if (approximate && dmax > 0.0 && x * dmax > 1.0) x = 1.0 / dmax;
    if (!std::isfinite(cycle))
      throw NumericalError("mva: the cycle time overflows a double at population " + std::to_string(n) +
                           " (demands x population too large)");
    if (!std::isfinite(x))
      throw NumericalError("mva: the throughput overflows a double at population " + std::to_string(n) +
                           " (think_time + demands too short)");
    q = x * r;
    if (approximate) u = x * demand;  // read by the residual-life term only
    row(n, x, q);
  }
}

}  // namespace

MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
              long population, const std::vector<double>& scv) {
  MvaResult res;
  if (population >= 1) {
    res.throughput.resize(population);
    res.queue_length.resize(population, static_cast<Eigen::Index>(service_times.size()));
  }
  recurse(service_times, visits, think_time, population, scv, [&](long n, double x, const Eigen::VectorXd& q) {
    res.throughput[n - 1] = x;
    res.queue_length.row(n - 1) = q.transpose();
  });
  return res;
}

MvaTop mva_top(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
               long population, const std::vector<double>& scv) {
  MvaTop top;
  recurse(service_times, visits, think_time, population, scv, [&](long n, double x, const Eigen::VectorXd& q) {
    if (n == population) {
      top.throughput = x;
      top.queue_length = q;
    } else if (n == population - 1) {
      top.throughput_before = x;
    }
  });
  return top;
}

}  // namespace mmcost::queueing
