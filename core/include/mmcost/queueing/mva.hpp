// Exact Mean Value Analysis of a single-class closed queueing network.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace mmcost::queueing {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Every quantity for every population n = 1..N (row n-1).
struct MvaResult {
  Eigen::VectorXd throughput;     // X(n): cycles per time unit
  Eigen::VectorXd response_time;  // R(n) = sum_k R_k(n): time per cycle outside think
  RowMatrix utilization;          // U_k(n) = X(n) V_k S_k
  RowMatrix queue_length;         // Q_k(n): mean customers at station k
  RowMatrix residence_time;       // R_k(n) = V_k S_k (1 + Q_k(n-1)), per cycle
};

// K single-server FCFS stations with exponential service (product form),
// plus one delay station of mean think time Z, and `population` customers.
// service_times[k] is the mean time per visit, visits[k] the visits per cycle;
// the service demand is D_k = V_k S_k.
//
// Algorithm: Reiser & Lavenberg, "Mean-Value Analysis of Closed Multichain
// Queuing Networks", JACM 27(2), 1980; the arrival theorem gives
// R_k(n) = D_k (1 + Q_k(n-1)), X(n) = n / (Z + sum_k R_k(n)), Q_k(n) = X(n) R_k(n).
// O(N K) time; throws InvalidArgument on bad input.
MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits,
              double think_time, long population);

}  // namespace mmcost::queueing
