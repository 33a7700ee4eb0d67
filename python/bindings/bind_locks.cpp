// Bindings of core/locks: the lock-contention DES, replications on threads.
//
// Arguments are converted to C++ structs while the GIL is held; the
// replications then run without it (interruptible.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "mmcost/locks/lock_sim.hpp"
#include "interruptible.hpp"

namespace py = pybind11;
namespace lk = mmcost::locks;
namespace sim = mmcost::sim;
using namespace pybind11::literals;
using mmcost_bindings::column;
using mmcost_bindings::matrix;

namespace {

// The per-replication ratios LockSystem reports, their mean and their sample standard deviation
// (ddof 1) over the replications: W = 1 + 5 L + 5 S columns, one row per replication,
//   ops / time;
//   per lock (blocks of L columns): acquisitions / time, contended / time,
//     wait_total / max(acquisitions, 1), busy / time, wait_total / contended (0 where none);
//   per stage (blocks of S columns): acquisitions / time, contended / time,
//     wait_total / max(acquisitions, 1), 100 wait_total / (time cpus), wait_total / contended (0 where none).
// Each column is summed in replication order, as NumPy's axis-0 reduction of such a (R, W >= 2)
// C-ordered matrix does (x.mean(axis=0), x.std(axis=0, ddof=1): the same bits; no fused
// multiply-add here, see CMakeLists.txt); one replication gives a NaN deviation. The Python
// layer reads these instead of building the matrix from the counters with some 25 NumPy calls.
std::pair<py::array_t<double>, py::array_t<double>> summary(const std::vector<lk::LockSimResult>& rs, int cpus,
                                                            std::size_t L, std::size_t S) {
  const std::size_t R = rs.size(), W = 1 + 5 * L + 5 * S;
  std::vector<double> x(R * W);
  for (std::size_t r = 0; r < R; ++r) {
    const auto& o = rs[r];
    double* row = &x[r * W];
    const double t = o.time;
    row[0] = o.ops / t;
    auto block = [&](double* out, std::size_t n, const std::vector<lk::Counters>& per, auto&& fourth) {
      for (std::size_t j = 0; j < n; ++j) {
        const double acq = static_cast<double>(per[j].wait.count()), con = per[j].contended, wait = per[j].wait.sum();
        out[j] = acq / t;
        out[n + j] = con / t;
        out[2 * n + j] = wait / std::max(acq, 1.0);
        out[3 * n + j] = fourth(j, wait);
        out[4 * n + j] = con > 0 ? wait / std::max(con, 1.0) : 0.0;
      }
    };
    block(row + 1, L, o.per_lock, [&](std::size_t j, double) { return o.lock_busy[j] / t; });
    block(row + 1 + 5 * L, S, o.per_stage,
          [&](std::size_t, double wait) { return 100.0 * wait / (t * static_cast<double>(cpus)); });
  }
  py::array_t<double> mean(static_cast<py::ssize_t>(W)), sd(static_cast<py::ssize_t>(W));
  auto m = mean.mutable_unchecked<1>();
  auto s = sd.mutable_unchecked<1>();
  std::vector<double> sum(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(W)), square(W);
  for (std::size_t r = 1; r < R; ++r)
    for (std::size_t c = 0; c < W; ++c) sum[c] += x[r * W + c];
  for (std::size_t c = 0; c < W; ++c) sum[c] /= static_cast<double>(R);  // the means
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < W; ++c) {
      const double dev = x[r * W + c] - sum[c];
      const double sq = dev * dev;
      square[c] = r == 0 ? sq : square[c] + sq;
    }
  for (std::size_t c = 0; c < W; ++c) {
    m(static_cast<py::ssize_t>(c)) = sum[c];
    s(static_cast<py::ssize_t>(c)) = std::sqrt(square[c] / static_cast<double>(R - 1));
  }
  return {mean, sd};
}

py::dict simulate(const lk::LockSimParams& p, int replications, int threads, std::uint64_t seed, py::object progress) {
  if (replications < 1) throw mmcost::InvalidArgument("replications must be >= 1");
  p.validate();

  const auto rs = mmcost_bindings::run_interruptible<lk::LockSimResult>(
      replications, threads, progress,
      [&](int r, const std::atomic<bool>& stop) { return lk::simulate_locks(p, seed, static_cast<std::uint64_t>(r), stop); });
  const std::size_t L = p.locks.size(), S = p.stages.size();
  py::dict d;
  d["time"] = column(rs, &lk::LockSimResult::time);
  d["ops"] = column(rs, &lk::LockSimResult::ops);
  d["events"] = column(rs, &lk::LockSimResult::events);
  d["lock_busy"] = matrix(rs, L, [](const lk::LockSimResult& r, std::size_t j) { return r.lock_busy[j]; });
  using Get = double (*)(const lk::Counters&);
  const std::pair<const char*, Get> fields[] = {
      {"acquisitions", [](const lk::Counters& c) { return static_cast<double>(c.wait.count()); }},
      {"contended", [](const lk::Counters& c) { return c.contended; }},
      {"wait_total", [](const lk::Counters& c) { return c.wait.sum(); }},
      {"wait_max", [](const lk::Counters& c) { return c.wait.count() ? c.wait.max() : 0.0; }},
      {"wait_var", [](const lk::Counters& c) { return c.wait.count() > 1 ? c.wait.variance() : 0.0; }}};
  for (const auto& [name, get] : fields) {
    d[py::str(std::string("lock_") + name)] =
        matrix(rs, L, [get = get](const lk::LockSimResult& r, std::size_t j) { return get(r.per_lock[j]); });
    d[py::str(std::string("stage_") + name)] =
        matrix(rs, S, [get = get](const lk::LockSimResult& r, std::size_t j) { return get(r.per_stage[j]); });
  }
  auto [mean, sd] = summary(rs, p.cpus, L, S);
  d["mean"] = mean;
  d["sd"] = sd;
  return d;
}

}  // namespace

void bind_locks(py::module_& m) {
  py::enum_<lk::LockKind>(m, "LockKind", "queued (MCS/qspinlock) or ticket spinlock")
      .value("queued", lk::LockKind::Queued)
      .value("ticket", lk::LockKind::Ticket);
  py::class_<lk::LockSpec>(m, "LockSpec", "One lock (or a lock in `partitions` identical parts)")
      .def(py::init([](std::string name, lk::LockKind kind, double handoff, double handoff_per_waiter, int partitions) {
             return lk::LockSpec{std::move(name), kind, handoff, handoff_per_waiter, partitions};
           }),
           py::kw_only(), "name"_a, "kind"_a = lk::LockKind::Queued, "handoff"_a = 0.0, "handoff_per_waiter"_a = 0.0,
           "partitions"_a = 1)
      .def_readwrite("name", &lk::LockSpec::name)
      .def_readwrite("kind", &lk::LockSpec::kind)
      .def_readwrite("handoff", &lk::LockSpec::handoff)
      .def_readwrite("handoff_per_waiter", &lk::LockSpec::handoff_per_waiter)
      .def_readwrite("partitions", &lk::LockSpec::partitions);
  py::class_<lk::Stage>(m, "Stage", "Work (lock = -1) or a critical section on locks[lock] at call site `site`")
      .def(py::init([](int lock, std::string site, const mmcost::sim::Distribution& time, bool irq_disabled) {
             lk::Stage s;
             s.lock = lock;
             s.site = std::move(site);
             s.time = time;
             s.irq_disabled = irq_disabled;
             return s;
           }),
           py::kw_only(), "lock"_a, "site"_a, "time"_a, "irq_disabled"_a = false)
      .def_readwrite("lock", &lk::Stage::lock)
      .def_readwrite("site", &lk::Stage::site)
      .def_readwrite("time", &lk::Stage::time)
      .def_readwrite("irq_disabled", &lk::Stage::irq_disabled);
  py::class_<lk::LockSimParams>(m, "LockSimParams", "One lock-contention simulation")
      .def(py::init([](int cpus, std::vector<lk::LockSpec> locks, std::vector<lk::Stage> stages, double irq_rate,
                       double irq_service, long warmup_ops, long ops) {
             lk::LockSimParams p;
             p.cpus = cpus;
             p.locks = std::move(locks);
             p.stages = std::move(stages);
             p.irq_rate = irq_rate;
             p.irq_service = irq_service;
             p.warmup_ops = warmup_ops;
             p.ops = ops;
             return p;
           }),
           py::kw_only(), "cpus"_a, "locks"_a, "stages"_a, "irq_rate"_a = 0.0, "irq_service"_a = 0.0,
           "warmup_ops"_a = 1000, "ops"_a = 100000)
      .def_readwrite("cpus", &lk::LockSimParams::cpus)
      .def_readwrite("locks", &lk::LockSimParams::locks)
      .def_readwrite("stages", &lk::LockSimParams::stages)
      .def_readwrite("irq_rate", &lk::LockSimParams::irq_rate)
      .def_readwrite("irq_service", &lk::LockSimParams::irq_service)
      .def_readwrite("warmup_ops", &lk::LockSimParams::warmup_ops)
      .def_readwrite("ops", &lk::LockSimParams::ops)
      .def("validate", &lk::LockSimParams::validate, "raise ValueError naming the first bad field");
  m.def("simulate", &simulate, "params"_a, "replications"_a, "threads"_a, "seed"_a, "progress"_a = py::none(),
        "Lock-contention DES: independent replications of LockSimParams on threads (GIL released, Ctrl-C stops "
        "cleanly). Returns per-replication arrays (rows = replications), and 'mean' and 'sd' (ddof 1) over the "
        "replications of the ratios LockSystem reports (columns: ops/time, then 5 blocks per lock, 5 per stage).");
}
