// Bindings of core/locks: the lock-contention DES, replications on threads.
//
// Arguments are converted to C++ structs while the GIL is held; the
// replications then run without it (interruptible.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "mmcost/locks/lock_sim.hpp"
#include "interruptible.hpp"

namespace py = pybind11;
namespace lk = mmcost::locks;
namespace sim = mmcost::sim;
using namespace pybind11::literals;
using mmcost_bindings::column;
using mmcost_bindings::matrix;

namespace {

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
        "cleanly). Returns per-replication arrays (rows = replications).");
}
