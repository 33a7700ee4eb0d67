// Universal Scalability Law.
#pragma once

#include <Eigen/Core>

namespace mmcost::queueing {

// X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))
// Gunther, "Guerrilla Capacity Planning", Springer 2007, eq. 4.31 (with the
// lambda scale of Schwartz, "Practical Scalability Analysis with the Universal
// Scalability Law", VividCortex 2015). sigma: contention (serial fraction),
// kappa: coherency (pairwise crosstalk), lambda: throughput of one unit.
// Requires n > 0, sigma >= 0, kappa >= 0, lambda > 0, all finite.
Eigen::VectorXd usl(const Eigen::VectorXd& n, double sigma, double kappa, double lambda);

}  // namespace mmcost::queueing
