#include "mmcost/queueing/mva.hpp"

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits,
              double think_time, long population) {
  check::not_empty("demands", service_times.size());
  check::same_length("demands", service_times.size(), "visits", visits.size());
  check::all_finite_nonnegative("demands", service_times);
  check::all_finite_nonnegative("visits", visits);
  check::finite_nonnegative("think_time", think_time);
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

  Eigen::VectorXd q = Eigen::VectorXd::Zero(K);  // Q_k(n-1)
  for (Eigen::Index n = 1; n <= N; ++n) {
    const Eigen::Index row = n - 1;
    double cycle = 0.0;
    for (Eigen::Index k = 0; k < K; ++k) {
      const double rk = demand[k] * (1.0 + q[k]);
      r.residence_time(row, k) = rk;
      cycle += rk;
    }
    const double x = static_cast<double>(n) / (think_time + cycle);
    r.throughput[row] = x;
    r.response_time[row] = cycle;
    for (Eigen::Index k = 0; k < K; ++k) {
      q[k] = x * r.residence_time(row, k);
      r.queue_length(row, k) = q[k];
      r.utilization(row, k) = x * demand[k];
    }
  }
  return r;
}

}  // namespace mmcost::queueing
