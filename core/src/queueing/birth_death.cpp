#include "mmcost/queueing/birth_death.hpp"

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <cmath>
#include <sstream>

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

BirthDeathResult birth_death(const std::vector<double>& arrival_rates,
                             const std::vector<double>& service_rates) {
  check::not_empty("arrival_rates", arrival_rates.size());
  check::same_length("arrival_rates", arrival_rates.size(), "service_rates", service_rates.size());
  check::all_finite_nonnegative("arrival_rates", arrival_rates);
  // A zero service rate would make the states above it absorbing.
  check::all_finite_positive("service_rates", service_rates);

  const Eigen::Index N = static_cast<Eigen::Index>(arrival_rates.size());
  const Eigen::Index S = N + 1;  // states 0..N

  // A = Q^T with the last balance equation replaced by sum_k pi_k = 1.
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(4 * S));
  for (Eigen::Index j = 0; j < N; ++j) {  // row j: balance of state j
    const double out = arrival_rates[j] + (j > 0 ? service_rates[j - 1] : 0.0);
    t.emplace_back(j, j, -out);
    if (j > 0) t.emplace_back(j, j - 1, arrival_rates[j - 1]);  // inflow from j-1
    t.emplace_back(j, j + 1, service_rates[j]);                 // inflow from j+1
  }
  for (Eigen::Index k = 0; k < S; ++k) t.emplace_back(N, k, 1.0);
  Eigen::SparseMatrix<double> A(S, S);
  A.setFromTriplets(t.begin(), t.end());
  Eigen::VectorXd b = Eigen::VectorXd::Zero(S);
  b[N] = 1.0;

  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu;
  lu.analyzePattern(A);
  lu.factorize(A);
  if (lu.info() != Eigen::Success)
    throw NumericalError("birth_death: generator factorisation failed: " + lu.lastErrorMessage());
  Eigen::VectorXd pi = lu.solve(b);
  if (lu.info() != Eigen::Success || !pi.allFinite())
    throw NumericalError("birth_death: stationary solve did not give finite probabilities");

  // Round-off can leave -1e-300-sized entries where the mass is negligible.
  for (Eigen::Index k = 0; k < S; ++k) {
    if (pi[k] < 0.0) {
      if (pi[k] < -1e-9) {
        std::ostringstream s;
        s << "birth_death: negative probability " << pi[k] << " in state " << k
          << "; the rates span too many orders of magnitude";
        throw NumericalError(s.str());
      }
      pi[k] = 0.0;
    }
  }
  pi /= pi.sum();

  BirthDeathResult r;
  r.probabilities = pi;
  r.throughput = 0.0;
  r.mean_number = 0.0;
  for (Eigen::Index k = 1; k < S; ++k) {
    r.throughput += pi[k] * service_rates[k - 1];
    r.mean_number += static_cast<double>(k) * pi[k];
  }
  r.utilization = 1.0 - pi[0];
  // An empty station (all arrival rates zero) has no visits: W is undefined,
  // reported as 0 rather than 0/0.
  r.response_time = r.throughput > 0.0 ? r.mean_number / r.throughput : 0.0;
  return r;
}

}  // namespace mmcost::queueing
