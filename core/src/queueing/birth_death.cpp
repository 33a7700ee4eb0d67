#include "mmcost/queueing/birth_death.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

  const std::size_t N = arrival_rates.size();
  const double neg_inf = -std::numeric_limits<double>::infinity();

  // log w_k = sum_{i<k} log(lambda_i / mu_i): the product form in log space, so
  // rates spanning hundreds of orders of magnitude neither overflow nor cancel.
  // A zero arrival rate makes every state above it unreachable (log w = -inf).
  Eigen::VectorXd lw(static_cast<Eigen::Index>(N + 1));
  lw[0] = 0.0;
  double top = 0.0;
  for (std::size_t k = 0; k < N; ++k) {
    const double prev = lw[static_cast<Eigen::Index>(k)];
    const double next = (prev == neg_inf || arrival_rates[k] == 0.0)
                            ? neg_inf
                            : prev + (std::log(arrival_rates[k]) - std::log(service_rates[k]));
    lw[static_cast<Eigen::Index>(k + 1)] = next;
    if (next > top) top = next;
  }
  // log-sum-exp normalisation: every term is <= 1 after the shift, the sum >= 1
  double total = 0.0, comp = 0.0;  // Neumaier-compensated sum
  for (Eigen::Index k = 0; k <= static_cast<Eigen::Index>(N); ++k) {
    const double term = lw[k] == neg_inf ? 0.0 : std::exp(lw[k] - top);
    const double t = total + term;
    comp += std::fabs(total) >= term ? (total - t) + term : (term - t) + total;
    total = t;
  }
  const double log_norm = top + std::log(total + comp);

  BirthDeathResult r;
  r.probabilities.resize(static_cast<Eigen::Index>(N + 1));
  r.throughput = 0.0;
  r.mean_number = 0.0;
  r.utilization = 0.0;
  for (Eigen::Index k = 0; k <= static_cast<Eigen::Index>(N); ++k) {
    const double lp = lw[k] == neg_inf ? neg_inf : lw[k] - log_norm;
    const double p = std::exp(lp);
    r.probabilities[k] = p;
    if (k == 0) continue;
    // pi_k mu_{k-1} formed in log space: a tiny probability times a huge rate
    r.throughput += std::exp(lp + std::log(service_rates[static_cast<std::size_t>(k - 1)]));
    r.mean_number += static_cast<double>(k) * p;
    r.utilization += p;  // 1 - pi_0 summed, not subtracted: no cancellation when pi_0 ~ 1
  }
  if (!std::isfinite(r.throughput)) {
    std::ostringstream s;
    s << "birth_death: the throughput overflows a double (service_rates up to " << service_rates.back() << ")";
    throw NumericalError(s.str());
  }
  if (r.utilization > 1.0) r.utilization = 1.0;
  // W = L / X = sum_k k w_k / sum_k w_k mu_{k-1}: the normalisation cancels,
  // so both sums are formed in log space (log-sum-exp over the unnormalised
  // log w_k). L and X themselves may be below the smallest double (L = 1e-424
  // with rates of 1e-242 and 1e182) while their ratio is not (W = 1e-182);
  // L / X of the rounded values gave 0 there.
  double lmax = neg_inf, xmax = neg_inf;
  for (Eigen::Index k = 1; k <= static_cast<Eigen::Index>(N); ++k) {
    if (lw[k] == neg_inf) continue;
    lmax = std::fmax(lmax, lw[k] + std::log(static_cast<double>(k)));
    xmax = std::fmax(xmax, lw[k] + std::log(service_rates[static_cast<std::size_t>(k - 1)]));
  }
  if (xmax == neg_inf) {
    // An empty station (all arrival rates zero) has no visits: W is undefined,
    // reported as 0 rather than 0/0.
    r.response_time = 0.0;
    return r;
  }
  double lsum = 0.0, xsum = 0.0;  // every term <= 1 after the shift; each sum >= 1
  for (Eigen::Index k = 1; k <= static_cast<Eigen::Index>(N); ++k) {
    if (lw[k] == neg_inf) continue;
    lsum += std::exp(lw[k] + std::log(static_cast<double>(k)) - lmax);
    xsum += std::exp(lw[k] + std::log(service_rates[static_cast<std::size_t>(k - 1)]) - xmax);
  }
  r.response_time = std::exp((lmax - xmax) + std::log(lsum / xsum));
  if (!std::isfinite(r.response_time)) {
    std::ostringstream s;
    s << "birth_death: the response time overflows a double (service_rates as low as "
      << *std::min_element(service_rates.begin(), service_rates.end()) << ")";
    throw NumericalError(s.str());
  }
  return r;
}

}  // namespace mmcost::queueing
