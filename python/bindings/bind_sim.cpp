// Bindings of core/sim: draw from the simulator's distributions, so tests can
// compare them with SciPy's (mean, variance, Kolmogorov-Smirnov).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "mmcost/sim/random.hpp"
#include "mmcost/sim/stats.hpp"

namespace py = pybind11;
namespace sim = mmcost::sim;
using namespace pybind11::literals;

void bind_stats(py::module_& m);

void bind_sim(py::module_& m) {
  bind_stats(m);
  py::enum_<sim::DistKind>(m, "DistKind", "A time distribution's family")
      .value("deterministic", sim::DistKind::Deterministic)
      .value("exponential", sim::DistKind::Exponential)
      .value("lognormal", sim::DistKind::Lognormal)
      .value("empirical", sim::DistKind::Empirical);
  py::class_<sim::Distribution>(m, "Distribution", "A time distribution (mean in the caller's time unit)")
      .def(py::init([](sim::DistKind kind, double mean, double cv, std::vector<double> samples) {
             sim::Distribution d;
             d.kind = kind;
             d.mean = mean;
             d.cv = cv;
             d.samples = std::move(samples);
             return d;
           }),
           py::kw_only(), "kind"_a, "mean"_a, "cv"_a = 0.0, "samples"_a = std::vector<double>{})
      .def_readwrite("kind", &sim::Distribution::kind)
      .def_readwrite("mean", &sim::Distribution::mean)
      .def_readwrite("cv", &sim::Distribution::cv)
      .def_readwrite("samples", &sim::Distribution::samples);
  m.def(
      "sample",
      [](const sim::Distribution& d, long n, std::uint64_t seed, std::uint64_t stream) {
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
      "distribution"_a, "n"_a, "seed"_a, "stream"_a = 0, "n draws of a Distribution from stream (seed, stream).");
}

void bind_stats(py::module_& m) {
  m.def(
      "running_stats",
      [](const std::vector<double>& values, long split) {
        // accumulate values[:split] and values[split:] separately, then merge:
        // exercises both the streaming update and the exact merge
        sim::RunningStats a, b;
        const auto k = static_cast<std::size_t>(std::clamp<long>(split, 0, static_cast<long>(values.size())));
        for (std::size_t i = 0; i < values.size(); ++i) (i < k ? a : b).add(values[i]);
        a.merge(b);
        return py::dict("count"_a = a.count(), "mean"_a = a.mean(), "variance"_a = a.variance(), "min"_a = a.min(),
                        "max"_a = a.max(), "sum"_a = a.sum());
      },
      "values"_a, "split"_a, "Streaming mean/variance/min/max of values (two accumulators merged at split).");
}
