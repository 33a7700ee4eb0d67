// Bindings of core/sim: draw from the simulator's distributions, so tests can
// compare them with SciPy's (mean, variance, Kolmogorov-Smirnov).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "mmcost/sim/random.hpp"

namespace py = pybind11;
namespace sim = mmcost::sim;
using namespace pybind11::literals;

void bind_sim(py::module_& m) {
  m.def(
      "sample",
      [](int kind, double mean, double cv, std::vector<double> samples, long n, std::uint64_t seed,
         std::uint64_t stream) {
        sim::Distribution d;
        d.kind = static_cast<sim::DistKind>(kind);
        d.mean = mean;
        d.cv = cv;
        d.samples = std::move(samples);
        d.validate("distribution");
        if (n < 0) throw mmcost::InvalidArgument("n must be >= 0");
        py::array_t<double> out(n);
        auto o = out.mutable_unchecked<1>();
        {
          py::gil_scoped_release release;
          sim::Rng rng(seed, stream);
          for (long i = 0; i < n; ++i) o(i) = d.sample(rng);
        }
        return out;
      },
      "kind"_a, "mean"_a, "cv"_a, "samples"_a, "n"_a, "seed"_a, "stream"_a = 0,
      "n draws of a distribution (kind 0=deterministic 1=exponential 2=lognormal 3=empirical) from stream (seed, stream).");
}
