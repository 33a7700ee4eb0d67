// Finite birth-death chain with state-dependent rates, solved exactly.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace mmcost::queueing {

struct BirthDeathResult {
  Eigen::VectorXd probabilities;  // pi_k, k = 0..N
  double throughput;              // X = sum_k pi_k mu_k (= sum_k pi_k lambda_k)
  double mean_number;             // L = sum_k k pi_k
  double response_time;           // W = L / X (Little's law); time in the station
  double utilization;             // 1 - pi_0: probability the station is not empty
};

// States k = 0..N customers in the station. arrival_rates[k] is the rate of
// k -> k+1 (k = 0..N-1); service_rates[k] is the rate of k+1 -> k, i.e. the
// service rate when k+1 customers are present. For a finite-source station
// (N CPUs each spinning for a lock after an exponential think time Z),
// arrival_rates[k] = (N - k) / Z and service_rates may encode a handoff cost
// that grows with the number of waiters (Boyd-Wickizer et al., "Non-scalable
// locks are dangerous", Linux Symposium 2012, section 3).
//
// The chain is reversible, so pi_k ∝ prod_{i<k} lambda_i / mu_i (detailed
// balance; Kleinrock, Queueing Systems vol. 1, 1975, eq. 3.11). It is formed
// in log space and normalised by log-sum-exp: O(N) time and memory, and every
// probability is accurate to a few ulps relative to itself, for rates
// spanning any range a double holds. (An LU of the generator with a dense
// normalisation row is only normwise accurate and fails once the rates span
// ~16 orders of magnitude.) Tests compare against mpmath at 50 digits.
BirthDeathResult birth_death(const std::vector<double>& arrival_rates,
                             const std::vector<double>& service_rates);

}  // namespace mmcost::queueing
