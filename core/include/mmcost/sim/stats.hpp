// Streaming statistics: one pass, O(1) memory, mergeable across threads.
//
// Observations are accumulated as sums of deviations from a shift K (the first
// observation): S1 = sum(x - K), S2 = sum((x - K)^2). With K near the mean this
// "shifted data" algorithm is as accurate as Welford's and costs no division
// per observation (Chan, Golub & LeVeque, "Algorithms for computing the sample
// variance: analysis and recommendations", Am. Stat. 37(3), 1983, sec. 3).
// Two accumulators merge exactly with their pairwise formula (same paper).
// Confidence intervals come from independent replications (replications.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmcost::sim {

class RunningStats {
 public:
  void add(double x) {
    if (n_ == 0) shift_ = x;
    const double d = x - shift_;
    ++n_;
    s1_ += d;
    s2_ += d * d;
    if (x < min_) min_ = x;
    if (x > max_) max_ = x;
  }
  // n observations equal to x at once (the merge of their accumulator).
  void add_repeated(double x, long long n) {
    if (n <= 0) return;
    RunningStats o;
    o.n_ = n;
    o.shift_ = o.min_ = o.max_ = x;
    merge(o);
  }
  void merge(const RunningStats& o) {
    if (o.n_ == 0) return;
    if (n_ == 0) {
      *this = o;
      return;
    }
    const double na = static_cast<double>(n_), nb = static_cast<double>(o.n_), n = na + nb;
    const double d = o.mean() - mean();
    const double m2 = m2_() + o.m2_() + d * d * na * nb / n;
    const double mean = this->mean() + d * nb / n;
    n_ += o.n_;
    shift_ = mean;  // re-centre: S1 = 0, S2 = M2
    s1_ = 0.0;
    s2_ = m2;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  long long count() const { return n_; }
  double mean() const { return n_ ? shift_ + s1_ / static_cast<double>(n_) : std::numeric_limits<double>::quiet_NaN(); }
  double sum() const { return shift_ * static_cast<double>(n_) + s1_; }
  double variance() const {  // sample variance (n - 1)
    return n_ > 1 ? m2_() / static_cast<double>(n_ - 1) : std::numeric_limits<double>::quiet_NaN();
  }
  double min() const { return n_ ? min_ : std::numeric_limits<double>::quiet_NaN(); }
  double max() const { return n_ ? max_ : std::numeric_limits<double>::quiet_NaN(); }

 private:
  double m2_() const { return n_ ? std::max(0.0, s2_ - s1_ * s1_ / static_cast<double>(n_)) : 0.0; }
  long long n_ = 0;
  double shift_ = 0.0, s1_ = 0.0, s2_ = 0.0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

}  // namespace mmcost::sim
