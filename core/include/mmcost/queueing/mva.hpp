// Exact Mean Value Analysis of a single-class closed queueing network.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace mmcost::queueing {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The recursion's own state for every population n = 1..N (row n-1). The
// rest follows from it, so it is not stored (one N x K matrix, not three):
// U_k(n) = X(n) D_k, R_k(n) = Q_k(n) / X(n), R(n) = sum_k R_k(n).
struct MvaResult {
  Eigen::VectorXd throughput;  // X(n): cycles per time unit
  RowMatrix queue_length;      // Q_k(n): mean customers at station k
};

// What a caller at one population reads: X(N), X(N-1) (the arrival theorem's
// view of the other N-1 customers; 0 for N = 1) and Q_k(N). O(K) memory.
struct MvaTop {
  double throughput = 0.0;
  double throughput_before = 0.0;
  Eigen::VectorXd queue_length;
};

// K single-server FCFS stations with exponential service (product form),
// plus one delay station of mean think time Z, and `population` customers.
// service_times[k] is the mean time per visit, visits[k] the visits per cycle;
// the service demand is D_k = V_k S_k.
//
// Algorithm: Reiser & Lavenberg, "Mean-Value Analysis of Closed Multichain
// Queuing Networks", JACM 27(2), 1980; the arrival theorem gives
// R_k(n) = D_k (1 + Q_k(n-1)), X(n) = n / (Z + sum_k R_k(n)), Q_k(n) = X(n) R_k(n).
// O(N K) time; throws InvalidArgument on bad input, NumericalError when a
// finite input overflows.
//
// scv[k] (squared coefficient of variation of the service time, default 1)
// extends the recursion to non-exponential FCFS service with the
// residual-life approximation: an arrival waits for the customers queued
// (Q - U, each a full S) and for the residual S (1 + scv) / 2 of the one in
// service (U): R_k(n) = V_k [S_k + S_k (Q_k(n-1) - U_k(n-1)) + U_k(n-1) S_k (1 + scv_k) / 2]
// (Reiser, "A queueing network analysis of computer communication networks
// with window flow control", IEEE Trans. Commun. 27(8), 1979; Lazowska et al.,
// QSP 1984, sec. 8.3). Exact for scv = 1; an approximation otherwise, with
// the throughput clamped to the bottleneck bound 1 / max_k D_k (Denning &
// Buzen 1978). Where the clamp applies, the residence times are scaled by one
// common factor so that Little's law holds over the network
// (X (Z + sum_k R_k) = n): Q_k = X R_k and sum_k Q_k + X Z = n at every n.
MvaResult mva(const std::vector<double>& service_times, const std::vector<double>& visits,
              double think_time, long population, const std::vector<double>& scv = {});

// mva into the caller's memory: X(n) into throughput[n-1] (N doubles) and
// Q_k(n) into queue_length[(n-1) K + k] (N x K, row-major). Writing into a
// buffer the caller keeps and passes again avoids the page faults of a fresh
// table (12,500 of them, 70% of the time, at N = 10^5 x K = 64).
void mva_into(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
              long population, const std::vector<double>& scv, double* throughput, double* queue_length);

// The table of mmcost.queueing.mva in pandas' block layout, (2 + 4 K) x N
// row-major into `frame`, column n - 1 for population n: row 0 X(n), row 1
// R(n) = sum_k R_k(n) (in station order), then per station k rows 2 + 4 k ..
// 5 + 4 k: U_k(n) = X(n) D_k, Q_k(n), R_k(n) = Q_k(n) / X(n), X(n) V_k.
// Written 64 populations at a time from O(64 K) memory.
void mva_frame(const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
               long population, const std::vector<double>& scv, double* frame);

// B networks of K stations each, one per row (pad a smaller network with
// stations of zero service: they add nothing), solved as mva_top on
// `threads` threads (the caller's included). Errors name the item.
struct MvaBatch {
  Eigen::VectorXd throughput;         // X(N_b)
  Eigen::VectorXd throughput_before;  // X(N_b - 1)
  RowMatrix queue_length;             // Q_k(N_b), B x K
};

MvaBatch mva_top_batch(const RowMatrix& service_times, const RowMatrix& visits, const Eigen::VectorXd& think_time,
                       const std::vector<long>& population, const RowMatrix& scv, int threads = 1);

// The same recursion keeping only population N (and X(N-1)).
MvaTop mva_top(const std::vector<double>& service_times, const std::vector<double>& visits,
               double think_time, long population, const std::vector<double>& scv = {});

}  // namespace mmcost::queueing
