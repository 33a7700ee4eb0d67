// Bindings of core/locks: the lock-contention DES, replications on threads.
//
// Arguments are converted to C++ structs while the GIL is held; the
// replications then run without it (interruptible.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tuple>

#include "mmcost/locks/lock_sim.hpp"
#include "interruptible.hpp"

namespace py = pybind11;
namespace lk = mmcost::locks;
namespace sim = mmcost::sim;
using namespace pybind11::literals;
using mmcost_bindings::column;
using mmcost_bindings::matrix;

namespace {

using LockTuple = std::tuple<std::string, int, double, double, int>;
using StageTuple = std::tuple<int, std::string, int, double, double, std::vector<double>, bool>;

py::dict simulate(int cpus, const std::vector<LockTuple>& locks, const std::vector<StageTuple>& stages, long warmup_ops,
                  long ops, int replications, int threads, std::uint64_t seed, double irq_rate, double irq_service,
                  py::object progress) {
  lk::LockSimParams p;
  p.cpus = cpus;
  p.warmup_ops = warmup_ops;
  p.ops = ops;
  p.irq_rate = irq_rate;
  p.irq_service = irq_service;
  for (const auto& [name, kind, handoff, per_waiter, partitions] : locks)
    p.locks.push_back(lk::LockSpec{name, static_cast<lk::LockKind>(kind), handoff, per_waiter, partitions});
  for (const auto& [lock, site, kind, mean, cv, samples, irq_disabled] : stages) {
    lk::Stage s;
    s.lock = lock;
    s.site = site;
    s.time.kind = static_cast<sim::DistKind>(kind);
    s.time.mean = mean;
    s.time.cv = cv;
    s.time.samples = samples;
    s.irq_disabled = irq_disabled;
    p.stages.push_back(std::move(s));
  }
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
  return d;
}

}  // namespace

void bind_locks(py::module_& m) {
  m.def("simulate", &simulate, "cpus"_a, "locks"_a, "stages"_a, "warmup_ops"_a, "ops"_a, "replications"_a,
        "threads"_a, "seed"_a, "irq_rate"_a = 0.0, "irq_service"_a = 0.0, "progress"_a = py::none(),
        "Lock-contention DES: independent replications on threads (GIL released, Ctrl-C stops cleanly).\n"
        "locks: [(name, kind 0=queued 1=ticket, handoff, handoff_per_waiter, partitions)];\n"
        "stages: [(lock index or -1 for work, site, dist kind 0=det 1=exp 2=lognormal 3=empirical, mean, cv, samples,\n"
        "          irq_disabled)]; irq_rate, irq_service: Poisson interrupts per CPU and their handler time.\n"
        "Returns per-replication arrays (rows = replications).");
}
