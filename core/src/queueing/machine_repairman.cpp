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
  // util[n] = 1 - B(n, a) = n / (n + a B(n-1)): written this way, not as
  // 1 - B, because B is close to 1 when Z >> S and the subtraction would
  // cancel most digits.
  std::vector<double> util(static_cast<std::size_t>(nmax) + 1);
  util[0] = 0.0;
  double erlang_b = 1.0;  // B(0)
  for (long n = 1; n <= nmax; ++n) {
    const double ab = a * erlang_b;
    const double dn = static_cast<double>(n);
    util[static_cast<std::size_t>(n)] = dn / (dn + ab);
    erlang_b = ab / (dn + ab);
  }

  const Eigen::Index M = static_cast<Eigen::Index>(populations.size());
  MachineRepairmanResult r;
  r.throughput.resize(M);
  r.response_time.resize(M);
  r.utilization.resize(M);
  r.queue_length.resize(M);
  for (Eigen::Index i = 0; i < M; ++i) {
    const auto n = static_cast<std::size_t>(populations[static_cast<std::size_t>(i)]);
    const double x = util[n] / service_time;
    // R = n/X - Z = n S / U(n) - Z = n S - Z U(n-1), exact at n = 1.
    const double resp = static_cast<double>(n) * service_time - think_time * util[n - 1];
    r.utilization[i] = util[n];
    r.throughput[i] = x;
    r.response_time[i] = resp;
    r.queue_length[i] = x * resp;
  }
  return r;
}

}  // namespace mmcost::queueing
