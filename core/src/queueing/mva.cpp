#include "mmcost/queueing/mva.hpp"

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits,
              double think_time, long population, const std::vector<double>& scv) {
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
  const Eigen::Index N = static_cast<Eigen::Index>(population);
  Eigen::VectorXd demand(K);
  for (Eigen::Index k = 0; k < K; ++k) demand[k] = service_times[k] * visits[k];
  if (think_time == 0.0 && demand.sum() == 0.0)
    throw InvalidArgument("demands and think_time are all zero: the cycle time is zero");

  MvaResult r;
  r.throughput.resize(N);
  r.response_time.resize(N);
  r.utilization.resize(N, K);
  r.queue_length.resize(N, K);
  r.residence_time.resize(N, K);

  bool approximate = false;
  for (double c2 : scv) approximate = approximate || c2 != 1.0;
  const double dmax = demand.maxCoeff();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(K);  // Q_k(n-1)
  Eigen::VectorXd u = Eigen::VectorXd::Zero(K);  // per-visit busy probability at n-1
  for (Eigen::Index n = 1; n <= N; ++n) {
    const Eigen::Index row = n - 1;
    double cycle = 0.0;
    for (Eigen::Index k = 0; k < K; ++k) {
      const double c2 = scv.empty() ? 1.0 : scv[static_cast<std::size_t>(k)];
      const double rk = demand[k] * (1.0 + q[k] - u[k] + u[k] * 0.5 * (1.0 + c2));
      r.residence_time(row, k) = rk;
      cycle += rk;
    }
    double x = static_cast<double>(n) / (think_time + cycle);
    // The residual-life approximation (scv != 1) can overshoot the
    // bottleneck bound near saturation; clamp to X <= 1 / D_max
    // (Denning & Buzen, Computing Surveys 10(3), 1978). Exact runs never hit it.
    if (approximate && dmax > 0.0 && x * dmax > 1.0) x = 1.0 / dmax;
    r.throughput[row] = x;
    r.response_time[row] = cycle;
    for (Eigen::Index k = 0; k < K; ++k) {
      q[k] = x * r.residence_time(row, k);
      r.queue_length(row, k) = q[k];
      r.utilization(row, k) = x * demand[k];
      u[k] = x * demand[k];
    }
  }
  return r;
}

}  // namespace mmcost::queueing
