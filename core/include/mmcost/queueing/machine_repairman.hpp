// Closed form of the machine-repairman model M/M/1//N.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace mmcost::queueing {

struct MachineRepairmanResult {  // one entry per requested population
  Eigen::VectorXd throughput;     // X = U / S
  Eigen::VectorXd response_time;  // R = N / X - Z (interactive response time law)
  Eigen::VectorXd utilization;    // U = 1 - p0
  Eigen::VectorXd queue_length;   // Q = X R (Little)
};

// N sources each thinking for an exponential time of mean Z, then queueing
// for one exponential server of mean S. The probability the server is idle is
//   p0 = [sum_{k=0}^{N} N!/(N-k)! (S/Z)^k]^{-1}
// (Kleinrock, Queueing Systems vol. 1, 1975, sec. 3.8), which equals the
// Erlang-B blocking probability B(N, Z/S); B is computed with the stable
// recursion B(0) = 1, B(n) = a B(n-1) / (n + a B(n-1)), a = Z/S, so large N
// neither overflows nor loses precision; U(n) = n / (n + a B(n-1)) and
// R(n) = n S - Z U(n-1) avoid the cancellations of 1 - B and n/X - Z.
// Independent of the MVA recursion.
MachineRepairmanResult machine_repairman(const std::vector<long>& populations, double think_time,
                                         double service_time);

}  // namespace mmcost::queueing
