#include "mmcost/queueing/usl.hpp"

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

Eigen::VectorXd usl(const Eigen::VectorXd& n, double sigma, double kappa, double lambda) {
  check::finite_nonnegative("sigma", sigma);
  check::finite_nonnegative("kappa", kappa);
  check::finite_positive("lam", lambda);
  Eigen::VectorXd x(n.size());
  for (Eigen::Index i = 0; i < n.size(); ++i) {
    const double ni = n[i];
    check::finite_positive(check::indexed("n", static_cast<std::size_t>(i)), ni);
    const double denom = 1.0 + sigma * (ni - 1.0) + kappa * ni * (ni - 1.0);
    // Only possible for n < 1 with sigma > 1: outside the law's domain.
    if (!(denom > 0.0))
      throw InvalidArgument(check::indexed("n", static_cast<std::size_t>(i)) +
                            " gives a non-positive USL denominator (n < 1 with sigma > 1)");
    x[i] = lambda * ni / denom;
  }
  return x;
}

}  // namespace mmcost::queueing
