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

py::dict simulate(int cpus, int arch, int policy, double call_rate, double reclaim_call_rate, int batch_folios,
                  int entries_per_folio,
                  int flush_ceiling, double writable_fraction, double natural_flush_rate, double other_round_rate,
                  int reuse_kind, double reuse_mean, double reuse_cv, const std::vector<double>& reuse_samples,
                  double warmup, double horizon, int replications, int threads, std::uint64_t seed,
                  py::object progress) {
  tlb::TlbSimParams p;
  p.cpus = cpus;
  p.arch = static_cast<tlb::Arch>(arch);
  p.policy = static_cast<tlb::Policy>(policy);
  p.call_rate = call_rate;
  p.reclaim_call_rate = reclaim_call_rate;
  p.batch_folios = batch_folios;
  p.entries_per_folio = entries_per_folio;
  p.flush_ceiling = flush_ceiling;
  p.writable_fraction = writable_fraction;
  p.natural_flush_rate = natural_flush_rate;
  p.other_round_rate = other_round_rate;
  p.reuse.kind = static_cast<sim::DistKind>(reuse_kind);
  p.reuse.mean = reuse_mean;
  p.reuse.cv = reuse_cv;
  p.reuse.samples = reuse_samples;
  p.warmup = warmup;
  p.horizon = horizon;
  if (replications < 1) throw mmcost::InvalidArgument("replications must be >= 1");
  p.validate();

  const auto rs = mmcost_bindings::run_interruptible<tlb::TlbSimResult>(
      replications, threads, progress,
      [&](int r, const std::atomic<bool>& stop) { return tlb::simulate_tlb(p, seed, static_cast<std::uint64_t>(r), stop); });

  const auto n = static_cast<std::size_t>(cpus);
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
  return d;
}

}  // namespace

void bind_tlb(py::module_& m) {
  m.def("simulate", &simulate, "cpus"_a, "arch"_a, "policy"_a, "call_rate"_a, "reclaim_call_rate"_a, "batch_folios"_a,
        "entries_per_folio"_a, "flush_ceiling"_a, "writable_fraction"_a, "natural_flush_rate"_a,
        "other_round_rate"_a, "reuse_kind"_a, "reuse_mean"_a, "reuse_cv"_a, "reuse_samples"_a, "warmup"_a,
        "horizon"_a, "replications"_a, "threads"_a, "seed"_a, "progress"_a = py::none(),
        "TLB-flush DES (seconds): arch 0=x86 1=arm64; policy 0=immediate 1=batched 2=deferred (migrc);\n"
        "reuse distribution kind 0=det 1=exp 2=lognormal 3=empirical. Returns per-replication arrays.");
}
