// Bindings of core/tlb: the TLB-flush DES, replications on threads
// (GIL released, Ctrl-C stops cleanly: interruptible.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "interruptible.hpp"
#include "mmcost/errors.hpp"
#include "mmcost/tlb/tlb_sim.hpp"

namespace py = pybind11;
namespace tlb = mmcost::tlb;
namespace sim = mmcost::sim;
using namespace pybind11::literals;
using mmcost_bindings::column;
using mmcost_bindings::matrix;

namespace {

py::dict simulate(const tlb::TlbSimParams& p, int replications, int threads, std::uint64_t seed,
                  py::object progress) {
  if (replications < 1) throw mmcost::InvalidArgument("replications must be >= 1");
  p.validate();

  const auto rs = mmcost_bindings::run_interruptible<tlb::TlbSimResult>(
      replications, threads, progress,
      [&](int r, const std::atomic<bool>& stop) { return tlb::simulate_tlb(p, seed, static_cast<std::uint64_t>(r), stop); });

  const auto n = static_cast<std::size_t>(p.cpus);
  py::dict d;
  d["shootdowns"] = matrix(rs, n, [](const tlb::TlbSimResult& r, std::size_t j) { return r.shootdowns[j]; });
  d["full_flushes"] = matrix(rs, n, [](const tlb::TlbSimResult& r, std::size_t j) { return r.full_flushes[j]; });
  d["invlpg"] = matrix(rs, n, [](const tlb::TlbSimResult& r, std::size_t j) { return r.invlpg[j]; });
  d["calls"] = column(rs, &tlb::TlbSimResult::calls);
  d["rounds"] = column(rs, &tlb::TlbSimResult::rounds);
  d["ipis"] = column(rs, &tlb::TlbSimResult::ipis);
  d["tlbi_ops"] = column(rs, &tlb::TlbSimResult::tlbi_ops);
  d["dsb_syncs"] = column(rs, &tlb::TlbSimResult::dsb_syncs);
  d["deferred_calls"] = column(rs, &tlb::TlbSimResult::deferred_calls);
  d["reuse_rounds"] = column(rs, &tlb::TlbSimResult::reuse_rounds);
  d["events"] = column(rs, &tlb::TlbSimResult::events);
  d["flushes"] = column(rs, &tlb::TlbSimResult::flushes);
  d["folios"] = column(rs, &tlb::TlbSimResult::folios);
  d["local_full"] = column(rs, &tlb::TlbSimResult::local_full);
  d["local_one"] = column(rs, &tlb::TlbSimResult::local_one);
  return d;
}

}  // namespace

void bind_tlb(py::module_& m) {
  py::enum_<tlb::Arch>(m, "Arch", "x86 (flush IPIs) or arm64 (broadcast TLBI)")
      .value("x86", tlb::Arch::X86)
      .value("arm64", tlb::Arch::Arm64);
  py::enum_<tlb::Policy>(m, "Policy", "How migration flushes: immediate, batched, deferred (migrc)")
      .value("immediate", tlb::Policy::Immediate)
      .value("batched", tlb::Policy::Batched)
      .value("deferred", tlb::Policy::Deferred);
  py::class_<tlb::TlbSimParams>(m, "TlbSimParams", "One TLB-flush simulation (rates per second, times in seconds)")
      .def(py::init([](int cpus, tlb::Arch arch, tlb::Policy policy, double call_rate, double reclaim_call_rate,
                       int batch_folios, int entries_per_folio, int flush_ceiling, double writable_fraction,
                       double natural_flush_rate, double other_round_rate, const sim::Distribution& reuse,
                       double warmup, double horizon) {
             tlb::TlbSimParams p;
             p.cpus = cpus;
             p.arch = arch;
             p.policy = policy;
             p.call_rate = call_rate;
             p.reclaim_call_rate = reclaim_call_rate;
             p.batch_folios = batch_folios;
             p.entries_per_folio = entries_per_folio;
             p.flush_ceiling = flush_ceiling;
             p.writable_fraction = writable_fraction;
             p.natural_flush_rate = natural_flush_rate;
             p.other_round_rate = other_round_rate;
             p.reuse = reuse;
             p.warmup = warmup;
             p.horizon = horizon;
             return p;
           }),
           py::kw_only(), "cpus"_a, "arch"_a, "policy"_a, "call_rate"_a, "reclaim_call_rate"_a = 0.0,
           "batch_folios"_a = 32, "entries_per_folio"_a = 1, "flush_ceiling"_a = 33, "writable_fraction"_a = 0.0,
           "natural_flush_rate"_a = 0.0, "other_round_rate"_a = 0.0, "reuse"_a, "warmup"_a, "horizon"_a)
      .def_readwrite("cpus", &tlb::TlbSimParams::cpus)
      .def_readwrite("mm_cpus", &tlb::TlbSimParams::mm_cpus)
      .def_readwrite("mms", &tlb::TlbSimParams::mms)
      .def_readwrite("sender_in_mm", &tlb::TlbSimParams::sender_in_mm)
      .def_readwrite("promotion_call_rate", &tlb::TlbSimParams::promotion_call_rate)
      .def_readwrite("migrate_fraction", &tlb::TlbSimParams::migrate_fraction)
      .def_readwrite("dirty_fraction", &tlb::TlbSimParams::dirty_fraction)
      .def_readwrite("reclaim_batched", &tlb::TlbSimParams::reclaim_batched)
      .def_readwrite("flush_dirty", &tlb::TlbSimParams::flush_dirty)
      .def_readwrite("broadcast", &tlb::TlbSimParams::broadcast)
      .def_readwrite("tlbi_range", &tlb::TlbSimParams::tlbi_range)
      .def_readwrite("other_page_rate", &tlb::TlbSimParams::other_page_rate)
      .def_readwrite("arch", &tlb::TlbSimParams::arch)
      .def_readwrite("policy", &tlb::TlbSimParams::policy)
      .def_readwrite("call_rate", &tlb::TlbSimParams::call_rate)
      .def_readwrite("reclaim_call_rate", &tlb::TlbSimParams::reclaim_call_rate)
      .def_readwrite("batch_folios", &tlb::TlbSimParams::batch_folios)
      .def_readwrite("entries_per_folio", &tlb::TlbSimParams::entries_per_folio)
      .def_readwrite("flush_ceiling", &tlb::TlbSimParams::flush_ceiling)
      .def_readwrite("writable_fraction", &tlb::TlbSimParams::writable_fraction)
      .def_readwrite("natural_flush_rate", &tlb::TlbSimParams::natural_flush_rate)
      .def_readwrite("other_round_rate", &tlb::TlbSimParams::other_round_rate)
      .def_readwrite("reuse", &tlb::TlbSimParams::reuse)
      .def_readwrite("warmup", &tlb::TlbSimParams::warmup)
      .def_readwrite("horizon", &tlb::TlbSimParams::horizon)
      .def("validate", &tlb::TlbSimParams::validate, "raise ValueError naming the first bad field");
  m.def("simulate", &simulate, "params"_a, "replications"_a, "threads"_a, "seed"_a, "progress"_a = py::none(),
        "TLB-flush DES: independent replications of TlbSimParams on threads (GIL released, Ctrl-C stops "
        "cleanly). Returns per-replication arrays.");
}
