// Closed form of the machine-repairman model M/M/1//N.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace mmcost::queueing {

struct MachineRepairmanResult {  // one entry per requested population
  Eigen::VectorXd throughput;     // X = U / S
  Eigen::VectorXd response_time;  // R = N / X - Z (interactive response time law) = S (1 + Q(N-1))
  Eigen::VectorXd utilization;    // U = 1 - p0
  Eigen::VectorXd queue_length;   // Q = X R (Little)
};

// N sources each thinking for an exponential time of mean Z, then queueing
// for one exponential server of mean S. The probability the server is idle is
//   p0 = [sum_{k=0}^{N} N!/(N-k)! (S/Z)^k]^{-1}
// (Kleinrock, Queueing Systems vol. 1, 1975, sec. 3.8), which equals the
// Erlang-B blocking probability B(N, Z/S); B is computed with the stable
// recursion B(0) = 1, B(n) = a B(n-1) / (n + a B(n-1)), a = Z/S (or its
// mirror in b = S/Z when a > 1, so that a never overflows), so large N
// neither overflows nor loses precision; U(n) = n / (n + a B(n-1)),
// Q(n) = U(n) (1 + Q(n-1)) and R(n) = S (1 + Q(n-1)) avoid the cancellations
// of 1 - B and n/X - Z. A response time beyond a double (S = 1e308, n = 2)
// throws InvalidArgument naming service_time; nothing is returned as inf/NaN.
// U and X come from Erlang B, independently of the MVA code (core/src/queueing/mva.cpp);
// Q and R from the one-station MVA identity above, exact for this model.
MachineRepairmanResult machine_repairman(const std::vector<long>& populations, double think_time,
                                         double service_time);

}  // namespace mmcost::queueing
