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
  // The same pass sums X' = sum_k w_k mu_{k-1} and L' = sum_k k w_k (the
  // throughput and mean number before normalisation) as running
  // log-sum-exps, shift xmax (lmax) and sum xsum (lsum): each with its own
  // shift, as w_1 = 1e-424 is below a double while w_1 mu_0 is not.
  Eigen::VectorXd lw(static_cast<Eigen::Index>(N + 1));
  lw[0] = 0.0;
  double top = 0.0;
  double xmax = neg_inf, xsum = 0.0, lmax = neg_inf, lsum = 0.0;
  for (std::size_t k = 0; k < N; ++k) {
    const double prev = lw[static_cast<Eigen::Index>(k)];
    double next = neg_inf;
    if (prev != neg_inf && arrival_rates[k] != 0.0) {
      const double log_mu = std::log(service_rates[k]);
      next = prev + (std::log(arrival_rates[k]) - log_mu);
      const double lx = next + log_mu;  // log(w_{k+1} mu_k)
      if (lx > xmax) {
        xsum = xsum * std::exp(xmax - lx) + 1.0;
        xmax = lx;
      } else {
        xsum += std::exp(lx - xmax);
      }
      const double kk = static_cast<double>(k + 1);
      if (next > lmax) {
        lsum = lsum * std::exp(lmax - next) + kk;
        lmax = next;
      } else {
        lsum += kk * std::exp(next - lmax);
      }
    }
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
  r.mean_number = 0.0;
  r.utilization = 0.0;
  for (Eigen::Index k = 0; k <= static_cast<Eigen::Index>(N); ++k) {
    const double p = lw[k] == neg_inf ? 0.0 : std::exp(lw[k] - log_norm);
    r.probabilities[k] = p;
    if (k == 0) continue;
    r.mean_number += static_cast<double>(k) * p;
    r.utilization += p;  // 1 - pi_0 summed, not subtracted: no cancellation when pi_0 ~ 1
  }
  if (r.utilization > 1.0) r.utilization = 1.0;
  if (xmax == neg_inf) {
    // An empty station (all arrival rates zero) has no visits: X = 0 and W is
    // undefined, reported as 0 rather than 0/0.
    r.throughput = 0.0;
    r.response_time = 0.0;
    return r;
  }
  // X = X' / norm, formed in log space: a tiny probability times a huge rate
  r.throughput = std::exp(xmax + std::log(xsum) - log_norm);
  if (!std::isfinite(r.throughput)) {
    std::ostringstream s;
    s << "birth_death: the throughput overflows a double (service_rates up to "
      << *std::max_element(service_rates.begin(), service_rates.end()) << ")";
    throw NumericalError(s.str());
  }
  // W = L / X = L' / X': the normalisation cancels. L and X
  // themselves may lie below the smallest double (L = 1e-424 with rates of
  // 1e-242 and 1e182) while their ratio does not (W = 1e-182); L / X of the
  // rounded values gave 0 there.
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
