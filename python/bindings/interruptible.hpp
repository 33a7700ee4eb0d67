// Replications on worker threads with the GIL released, shared by every DES binding.
//
// The calling thread wakes every 100 ms, takes the GIL briefly to update
// progress and call PyErr_CheckSignals(), and on Ctrl-C stops and joins every
// worker before re-raising KeyboardInterrupt (pybind11 docs/faq.rst, "How can
// I properly handle Ctrl-C").
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <vector>

#include "mmcost/sim/replications.hpp"

namespace mmcost_bindings {

namespace py = pybind11;

// run(r, stop) -> Result for replication r; `progress` is None or a callable(done).
template <class Result>
std::vector<Result> run_interruptible(int replications, int threads, py::object progress,
                                      const std::function<Result(int, const std::atomic<bool>&)>& run) {
  std::unique_ptr<py::error_already_set> pending;
  mmcost::sim::ReplicationRun<Result> out;
  {
    py::gil_scoped_release release;
    out = mmcost::sim::run_replications<Result>(replications, threads, run, [&](int done) {
      py::gil_scoped_acquire acquire;
      try {
        if (!progress.is_none()) progress(done);
      } catch (py::error_already_set& e) {
        pending = std::make_unique<py::error_already_set>(std::move(e));
        return true;
      }
      if (PyErr_CheckSignals() != 0) {
        pending = std::make_unique<py::error_already_set>();
        return true;
      }
      return false;
    });
  }
  if (pending) throw *pending;
  return std::move(out.results);
}

// One value per replication.
template <class Result>
py::array_t<double> column(const std::vector<Result>& rs, double Result::*field) {
  py::array_t<double> a(static_cast<py::ssize_t>(rs.size()));
  auto m = a.template mutable_unchecked<1>();
  for (std::size_t i = 0; i < rs.size(); ++i) m(static_cast<py::ssize_t>(i)) = rs[i].*field;
  return a;
}

// rows = replications, cols = get(result, j) for j < cols.
template <class Result, class Get>
py::array_t<double> matrix(const std::vector<Result>& rs, std::size_t cols, const Get& get) {
  py::array_t<double> a({static_cast<py::ssize_t>(rs.size()), static_cast<py::ssize_t>(cols)});
  auto m = a.template mutable_unchecked<2>();
  for (std::size_t i = 0; i < rs.size(); ++i)
    for (std::size_t j = 0; j < cols; ++j) m(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(j)) = get(rs[i], j);
  return a;
}

}  // namespace mmcost_bindings
