#include "mmcost/queueing/machine_repairman.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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
  const std::size_t size = static_cast<std::size_t>(nmax) + 1;
  // util[n] = 1 - B(n, a) and thinking[n] = Z X(n) = a util[n], with the
  // Erlang-B recursion on whichever of a = Z/S and b = S/Z is <= 1, so that
  // neither overflows (Z = 1e308, S = 1e-308 has a = inf): for a <= 1,
  // util = n / (n + a B(n-1)); for a > 1, thinking = n / (n b + B(n-1)) and
  // B(n) = B(n-1) / (n b + B(n-1)). No 1 - B is formed (B ~ 1 when Z >> S).
  std::vector<double> util(size), thinking(size), queue(size);
  util[0] = thinking[0] = queue[0] = 0.0;
  const bool a_small = think_time <= service_time;
  const double ratio = a_small ? think_time / service_time : service_time / think_time;  // a or b, in [0, 1]
  double erlang_b = 1.0;  // B(0)
  for (long n = 1; n <= nmax; ++n) {
    const double dn = static_cast<double>(n);
    const auto i = static_cast<std::size_t>(n);
    if (a_small) {
      const double ab = ratio * erlang_b;
      util[i] = dn / (dn + ab);
      thinking[i] = ratio * util[i];
      erlang_b = ab / (dn + ab);
    } else {
      const double den = dn * ratio + erlang_b;
      thinking[i] = dn / den;
      util[i] = dn * ratio / den;
      erlang_b = erlang_b / den;
    }
    // Q(n) = X(n) R(n) = U(n) (1 + Q(n-1)) (MVA for one exponential station
    // plus a delay station, exact here): a sum of positive terms, so Q keeps
    // its digits where n - Z X(n) would cancel.
    queue[i] = util[i] * (1.0 + queue[i - 1]);
  }

  const Eigen::Index M = static_cast<Eigen::Index>(populations.size());
  MachineRepairmanResult r;
  r.throughput.resize(M);
  r.response_time.resize(M);
  r.utilization.resize(M);
  r.queue_length.resize(M);
  for (Eigen::Index i = 0; i < M; ++i) {
    const auto n = static_cast<std::size_t>(populations[static_cast<std::size_t>(i)]);
    // R(n) = S (1 + Q(n-1)): exact at n = 1, and no n/X - Z cancellation
    const double resp = service_time * (1.0 + queue[n - 1]);
    if (!std::isfinite(resp)) {
      std::ostringstream s;
      s << "service_time = " << service_time << " with n = " << n << ": the response time S (1 + Q(n-1)) = "
        << service_time << " x " << 1.0 + queue[n - 1] << " exceeds the largest double (1.8e308); "
        << "use a larger time unit";
      throw InvalidArgument(s.str());
    }
    r.utilization[i] = util[n];
    // X = U / S, or Z X / Z when a > 1 (U = b Z X underflows first when S << Z)
    r.throughput[i] = a_small ? util[n] / service_time : thinking[n] / think_time;
    if (!std::isfinite(r.throughput[i])) {
      std::ostringstream s;
      s << "service_time = " << service_time << " and think_time = " << think_time << " with n = " << n
        << ": the throughput (about n / (think_time + n x service_time)) exceeds the largest double; "
        << "use a smaller time unit";
      throw InvalidArgument(s.str());
    }
    r.response_time[i] = resp;
    r.queue_length[i] = queue[n];
  }
  return r;
}

}  // namespace mmcost::queueing
