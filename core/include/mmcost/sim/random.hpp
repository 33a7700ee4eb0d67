// Reproducible random streams and the time distributions the models sample.
//
// One stream per replication: its state is derived from (root seed,
// replication index) by SplitMix64, never from a shared generator, so results
// do not depend on the number of threads or the order replications run in
// (numpy's SeedSequence advice: seed with [worker_id, root_seed]).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mmcost/errors.hpp"

namespace mmcost::sim {

inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Exp(1) by the ziggurat method: Marsaglia & Tsang, "The Ziggurat Method for
// Generating Random Variables", J. Stat. Software 5(8), 2000 (256 layers).
// Exact in distribution; ~99% of draws cost one integer compare and multiply
// instead of a log(), which dominated the DES's time per event.
struct ExpZiggurat {
  std::uint32_t k[256];
  double w[256], f[256];
  ExpZiggurat() {
    const double m2 = 4294967296.0;
    double de = 7.697117470131487, te = de;
    const double ve = 3.949659822581572e-3;
    const double q = ve / std::exp(-de);
    k[0] = static_cast<std::uint32_t>((de / q) * m2);
    k[1] = 0;
    w[0] = q / m2;
    w[255] = de / m2;
    f[0] = 1.0;
    f[255] = std::exp(-de);
    for (int i = 254; i >= 1; --i) {
      de = -std::log(ve / de + std::exp(-de));
      k[i + 1] = static_cast<std::uint32_t>((de / te) * m2);
      te = de;
      f[i] = std::exp(-de);
      w[i] = de / m2;
    }
  }
  static const ExpZiggurat& table() {
    static const ExpZiggurat t;  // thread-safe initialisation (C++11)
    return t;
  }
};

// xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number
// generators", ACM TOMS 47(4), 2021): fast, 256-bit state.
class Rng {
 public:
  Rng(std::uint64_t root_seed, std::uint64_t stream) : zig_(&ExpZiggurat::table()) {
    std::uint64_t x = root_seed ^ splitmix64(stream);
    for (auto& w : s_) w = splitmix64(x);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1]: never 0, so log() is finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }
  double exponential(double mean) { return mean * standard_exponential(); }
  double standard_exponential();  // ziggurat, below
  double normal() {  // Box-Muller; one of the pair is enough here
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  const ExpZiggurat* zig_;  // looked up once: no static-init guard per draw
  std::uint64_t s_[4];
};

inline double Rng::standard_exponential() {
  const ExpZiggurat& z = *zig_;
  for (;;) {
    const std::uint64_t r = next();
    const auto jz = static_cast<std::uint32_t>(r >> 32);
    const auto iz = static_cast<std::uint32_t>(r & 255);
    if (jz < z.k[iz]) return jz * z.w[iz];
    if (iz == 0) return 7.697117470131487 - std::log(uniform());  // the tail
    const double x = jz * z.w[iz];
    if (z.f[iz] + uniform() * (z.f[iz - 1] - z.f[iz]) < std::exp(-x)) return x;
  }
}

enum class DistKind { Deterministic = 0, Exponential = 1, Lognormal = 2, Empirical = 3 };

// A non-negative time distribution given by its mean (and coefficient of
// variation for the lognormal), or by measured samples (resampled uniformly).
struct Distribution {
  DistKind kind = DistKind::Deterministic;
  double mean = 0.0;
  double cv = 0.0;                // lognormal only
  std::vector<double> samples;    // empirical only

  void validate(const std::string& field) const {
    switch (kind) {
      case DistKind::Deterministic:
      case DistKind::Exponential:
        check::finite_nonnegative(field + ".mean", mean);
        break;
      case DistKind::Lognormal:
        check::finite_positive(field + ".mean", mean);
        check::finite_positive(field + ".cv", cv);
        break;
      case DistKind::Empirical:
        check::not_empty((field + ".samples").c_str(), samples.size());
        for (std::size_t i = 0; i < samples.size(); ++i)
          check::finite_nonnegative(check::indexed((field + ".samples").c_str(), i), samples[i]);
        break;
      default:
        throw InvalidArgument(field + ": unknown distribution kind");
    }
  }

  double expected() const {
    if (kind != DistKind::Empirical) return mean;
    double s = 0.0;
    for (double v : samples) s += v;
    return s / static_cast<double>(samples.size());
  }

  double sample(Rng& rng) const {
    if (kind == DistKind::Exponential) return rng.exponential(mean);  // the common case first
    switch (kind) {
      case DistKind::Deterministic: return mean;
      case DistKind::Exponential: return rng.exponential(mean);
      case DistKind::Lognormal: {
        const double s2 = std::log1p(cv * cv);
        return std::exp(std::log(mean) - 0.5 * s2 + std::sqrt(s2) * rng.normal());
      }
      case DistKind::Empirical:
        return samples[static_cast<std::size_t>(rng.next() % samples.size())];
    }
    return mean;
  }
};

}  // namespace mmcost::sim
