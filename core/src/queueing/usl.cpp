#include "mmcost/queueing/usl.hpp"

#include <cmath>

#include "mmcost/errors.hpp"

namespace mmcost::queueing {

Eigen::VectorXd usl(const Eigen::VectorXd& n, double sigma, double kappa, double lambda) {
  check::finite_nonnegative("sigma", sigma);
  check::finite_nonnegative("kappa", kappa);
  check::finite_positive("lam", lambda);
  Eigen::VectorXd x(n.size());
  for (Eigen::Index i = 0; i < n.size(); ++i) {
    const double ni = n[i];
    // the element's name formatted only when it fails (per element: 5.6 s for 10^7 n)
    if (!std::isfinite(ni) || ni <= 0.0) check::finite_positive(check::indexed("n", static_cast<std::size_t>(i)), ni);
    // X = lam / (1/n + sigma (n - 1)/n + kappa (n - 1)): the law divided through by n, so neither
    // lam n nor kappa n^2 is formed (they overflow long before X does)
    // (for n < 1, outside the law's usual domain, n - 1 < 0 and those terms cancel; there the
    // polynomial (1 - sigma) + (sigma - kappa) n + kappa n^2 over n cancels only as the inputs do)
    const double denom = ni >= 1.0 ? 1.0 / ni + sigma * ((ni - 1.0) / ni) + kappa * (ni - 1.0)
                                   : ((1.0 - sigma) + (sigma - kappa) * ni) / ni + kappa * ni;
    // Only possible for n < 1 with sigma > 1: outside the law's domain.
    if (!(denom > 0.0))
      throw InvalidArgument(check::indexed("n", static_cast<std::size_t>(i)) +
                            " gives a non-positive USL denominator (n < 1 with sigma > 1)");
    // kappa (n - 1) beyond a double: divide through by kappa as well (X is still ~lam / (kappa n))
    x[i] = std::isfinite(denom) ? lambda / denom
                                : (lambda / kappa) / ((ni - 1.0) + (1.0 / ni + sigma * ((ni - 1.0) / ni)) / kappa);
    if (!std::isfinite(x[i]))
      throw NumericalError("usl: X(" + check::indexed("n", static_cast<std::size_t>(i)) +
                           ") overflows a double (lam x n too large)");
  }
  return x;
}

}  // namespace mmcost::queueing
