#include "mmcost/queueing/machine_repairman.hpp"

#include <algorithm>

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

MachineRepairmanResult machine_repairman(const std::vector<long>& populations, double think_time,
                                         double service_time) {
  check::not_empty("n", populations.size());
  for (std::size_t i = 0; i < populations.size(); ++i)
    if (populations[i] < 1) throw InvalidArgument(check::indexed("n", i) + " must be >= 1");
  check::finite_nonnegative("think_time", think_time);
  check::finite_positive("service_time", service_time);

  const long nmax = *std::max_element(populations.begin(), populations.end());
  const double a = think_time / service_time;
  std::vector<double> erlang_b(static_cast<std::size_t>(nmax) + 1);
  erlang_b[0] = 1.0;
  for (long n = 1; n <= nmax; ++n) {
    const double prev = a * erlang_b[static_cast<std::size_t>(n - 1)];
    erlang_b[static_cast<std::size_t>(n)] = prev / (static_cast<double>(n) + prev);
  }

  const Eigen::Index M = static_cast<Eigen::Index>(populations.size());
  MachineRepairmanResult r;
  r.throughput.resize(M);
  r.response_time.resize(M);
  r.utilization.resize(M);
  r.queue_length.resize(M);
  for (Eigen::Index i = 0; i < M; ++i) {
    const long n = populations[static_cast<std::size_t>(i)];
    const double u = 1.0 - erlang_b[static_cast<std::size_t>(n)];
    const double x = u / service_time;
    const double resp = static_cast<double>(n) / x - think_time;
    r.utilization[i] = u;
    r.throughput[i] = x;
    r.response_time[i] = resp;
    r.queue_length[i] = x * resp;
  }
  return r;
}

}  // namespace mmcost::queueing
