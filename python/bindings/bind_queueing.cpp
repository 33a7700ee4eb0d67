// Bindings of core/queueing: plain vectors in, Eigen/NumPy arrays out. Inputs
// are copied into std::vector before the GIL is released, so the solvers never
// touch Python objects.
#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <string>

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "mmcost/errors.hpp"
#include "mmcost/queueing/birth_death.hpp"
#include "mmcost/queueing/machine_repairman.hpp"
#include "mmcost/queueing/mva.hpp"
#include "mmcost/queueing/usl.hpp"

namespace py = pybind11;
namespace q = mmcost::queueing;
using namespace pybind11::literals;

namespace {

// A fresh float64 array of `shape`. From 4 MiB on, its own mapping, 2 MiB-aligned
// and advised for transparent huge pages over its whole length: NumPy's malloc'd
// block starts 16 bytes into a page, so the huge pages cover only its aligned
// middle (a 51 MB table took 748 faults, about 700 of them 4 KiB ones at ~3 us
// each on a KVM guest, and every 64-byte store straddled two cache lines); this
// one takes 25 (N = 10^4 x K = 512 fresh: 5.3-5.9 ms, was 5.9-6.7). Freed
// (munmap) with the array. Below 4 MiB, NumPy's allocator. (mva_frame keeps
// NumPy's: no gain above the noise of its 50 ms.)
py::array_t<double> fresh_array(const std::vector<py::ssize_t>& shape) {
  std::size_t count = 1;
  for (const py::ssize_t s : shape) count *= static_cast<std::size_t>(s);
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (count * sizeof(double) < 2 * kHuge) return py::array_t<double>(shape);
  const std::size_t len = (count * sizeof(double) + kHuge - 1) / kHuge * kHuge;
  void* const base = mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  char* const b = static_cast<char*>(base);
  char* const p = b + (kHuge - reinterpret_cast<std::uintptr_t>(b) % kHuge) % kHuge;
  // keep [p, p + len) only: the head and tail are unmapped, not just left unused
  if (p != b) munmap(b, static_cast<std::size_t>(p - b));
  if (p + len != b + len + kHuge) munmap(p + len, static_cast<std::size_t>(b + len + kHuge - (p + len)));
  madvise(p, len, MADV_HUGEPAGE);  // advice only: without THP, 4 KiB pages as before
  struct Mapping {
    void* at;
    std::size_t len;
  };
  auto* const owner = new Mapping{p, len};
  const py::capsule free_it(owner, [](void* m) {
    const auto* const mm = static_cast<Mapping*>(m);
    munmap(mm->at, mm->len);
    delete mm;
  });
  return py::array_t<double>(shape, reinterpret_cast<double*>(p), free_it);
}

}  // namespace

void bind_queueing(py::module_& m) {
  // X(n) and Q_k(n) written straight into NumPy arrays: fresh ones (the
  // table from fresh_array: 25 page faults for 51 MB, 12,500 in 4 KiB pages)
  // or the caller's `out`, reused without any fault at all.
  m.def(
      "mva",
      [](const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
         long population, const std::vector<double>& scv, const py::object& out) {
        using Table = py::array_t<double, py::array::c_style>;
        const auto k = static_cast<py::ssize_t>(service_times.size());
        if (population < 1) throw mmcost::InvalidArgument("population must be >= 1");
        const auto n = static_cast<py::ssize_t>(population);
        Table x, qlen;
        if (out.is_none()) {
          x = Table(n);
          qlen = fresh_array({n, k});
        } else {
          const auto fail = [&](const std::string& why) {
            throw mmcost::InvalidArgument("out must be a pair (throughput, queue_length) of writeable C-contiguous "
                                          "float64 arrays of shapes (" + std::to_string(n) + ",) and (" +
                                          std::to_string(n) + ", " + std::to_string(k) + "): " + why);
          };
          if (!py::isinstance<py::tuple>(out) && !py::isinstance<py::list>(out))
            fail("got " + std::string(py::str(out.get_type())));
          const py::sequence pair = out;
          if (pair.size() != 2) fail("got " + std::to_string(pair.size()) + " items");
          for (int i = 0; i < 2; ++i) {
            const py::object a = pair[i];
            const char* name = i == 0 ? "throughput" : "queue_length";
            if (!py::isinstance<Table>(a)) fail(std::string(name) + " is not a C-contiguous float64 array");
            const Table t = a.cast<Table>();
            if (!t.writeable()) fail(std::string(name) + " is read-only");
            const bool shaped = i == 0 ? (t.ndim() == 1 && t.shape(0) == n)
                                       : (t.ndim() == 2 && t.shape(0) == n && t.shape(1) == k);
            if (!shaped) fail(std::string(name) + " has another shape");
            (i == 0 ? x : qlen) = t;
          }
          const auto* xb = reinterpret_cast<const char*>(x.data());
          const auto* qb = reinterpret_cast<const char*>(qlen.data());
          if (xb < qb + qlen.nbytes() && qb < xb + x.nbytes()) fail("the two share memory");
        }
        double* xp = x.mutable_data();
        double* qp = qlen.mutable_data();
        {
          py::gil_scoped_release release;
          q::mva_into(service_times, visits, think_time, population, scv, xp, qp);
        }
        return py::make_tuple(x, qlen);
      },
      "service_times"_a, "visits"_a, "think_time"_a, "population"_a, "scv"_a = std::vector<double>{},
      "out"_a = py::none(),
      "Exact single-class MVA (Reiser & Lavenberg 1980): (throughput X(n), queue_length Q_k(n)) as NumPy arrays, "
      "rows are populations 1..N. out: a (throughput, queue_length) pair of C-contiguous float64 arrays of shapes "
      "(N,) and (N, K) to write into instead (a table reused from an earlier call has no page faults to take).");
  m.def(
      "mva_frame",
      [](const std::vector<double>& service_times, const std::vector<double>& visits, double think_time,
         long population, const std::vector<double>& scv) {
        if (population < 1) throw mmcost::InvalidArgument("population must be >= 1");
        const auto k = static_cast<py::ssize_t>(service_times.size());
        py::array_t<double> frame({2 + 4 * k, static_cast<py::ssize_t>(population)});
        double* f = frame.mutable_data();
        {
          py::gil_scoped_release release;
          q::mva_frame(service_times, visits, think_time, population, scv, f);
        }
        return frame;
      },
      "service_times"_a, "visits"_a, "think_time"_a, "population"_a, "scv"_a = std::vector<double>{},
      "The table of mmcost.queueing.mva as one (2 + 4 K) x N array, a row per column: X(n), R(n), then per "
      "station U_k, Q_k, R_k, X_k (pandas' block layout: the frame is built on it without a copy).");
  py::class_<q::MvaTop>(m, "MvaTop")
      .def_readonly("throughput", &q::MvaTop::throughput)
      .def_readonly("throughput_before", &q::MvaTop::throughput_before)
      // a list: the caller reads a few floats, and an Eigen -> NumPy view of a member cost 40 us here
      .def_property_readonly("queue_length", [](const q::MvaTop& t) {
        return std::vector<double>(t.queue_length.data(), t.queue_length.data() + t.queue_length.size());
      }, "Q_k(N) per station, a list");
  m.def("mva_top", &q::mva_top, "service_times"_a, "visits"_a, "think_time"_a, "population"_a,
        "scv"_a = std::vector<double>{},
        py::call_guard<py::gil_scoped_release>(),
        "The MVA recursion keeping X(N), X(N-1) and Q_k(N) only (O(K) memory).");

  m.def(
      "mva_top_batch",
      [](const py::array_t<double, py::array::c_style | py::array::forcecast>& service_times,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& visits,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& think_time,
         const py::array_t<long, py::array::c_style | py::array::forcecast>& population,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& scv, int threads) {
        // copied while the GIL is held; solved without it
        auto matrix = [](const char* name, const py::array_t<double, py::array::c_style | py::array::forcecast>& a) {
          if (a.ndim() != 2) throw mmcost::InvalidArgument(std::string(name) + " must be two-dimensional (networks x stations)");
          return q::RowMatrix(Eigen::Map<const q::RowMatrix>(a.data(), a.shape(0), a.shape(1)));
        };
        if (think_time.ndim() != 1 || population.ndim() != 1)
          throw mmcost::InvalidArgument("think_time and population must be one-dimensional (one per network)");
        const q::RowMatrix s = matrix("service_times", service_times), v = matrix("visits", visits);
        const q::RowMatrix c = scv.size() == 0 ? q::RowMatrix() : matrix("scv", scv);
        const Eigen::VectorXd z = Eigen::Map<const Eigen::VectorXd>(think_time.data(), think_time.size());
        const std::vector<long> n(population.data(), population.data() + population.size());
        q::MvaBatch out;
        {
          py::gil_scoped_release release;
          out = q::mva_top_batch(s, v, z, n, c, threads);
        }
        py::dict d;
        d["throughput"] = py::array_t<double>(out.throughput.size(), out.throughput.data());
        d["throughput_before"] = py::array_t<double>(out.throughput_before.size(), out.throughput_before.data());
        d["queue_length"] = py::array_t<double>({out.queue_length.rows(), out.queue_length.cols()}, out.queue_length.data());
        return d;
      },
      "service_times"_a, "visits"_a, "think_time"_a, "population"_a, "scv"_a = py::array_t<double>(),
      "threads"_a = 1,
      "mva_top over B networks at once (rows of the B x K arrays; pad with zero-service stations), on `threads` "
      "threads with the GIL released. Returns a dict of arrays: throughput, throughput_before (B), queue_length (B x K).");

  py::class_<q::BirthDeathResult>(m, "BirthDeathResult")
      .def_readonly("probabilities", &q::BirthDeathResult::probabilities)
      .def_readonly("throughput", &q::BirthDeathResult::throughput)
      .def_readonly("mean_number", &q::BirthDeathResult::mean_number)
      .def_readonly("response_time", &q::BirthDeathResult::response_time)
      .def_readonly("utilization", &q::BirthDeathResult::utilization);
  // NumPy arrays in: a million-state chain would spend most of its time converting Python lists
  using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
  m.def(
      "birth_death",
      [](const Doubles& arrival_rates, const Doubles& service_rates) {
        if (arrival_rates.ndim() != 1 || service_rates.ndim() != 1)
          throw mmcost::InvalidArgument("arrival_rates and service_rates must be one-dimensional");
        std::vector<double> lam(arrival_rates.data(), arrival_rates.data() + arrival_rates.size());
        std::vector<double> mu(service_rates.data(), service_rates.data() + service_rates.size());
        py::gil_scoped_release release;
        return q::birth_death(lam, mu);
      },
      "arrival_rates"_a, "service_rates"_a,
      "Stationary solution of a finite birth-death chain (product form in log space, O(N)).");

  py::class_<q::MachineRepairmanResult>(m, "MachineRepairmanResult")
      .def_readonly("throughput", &q::MachineRepairmanResult::throughput)
      .def_readonly("response_time", &q::MachineRepairmanResult::response_time)
      .def_readonly("utilization", &q::MachineRepairmanResult::utilization)
      .def_readonly("queue_length", &q::MachineRepairmanResult::queue_length);
  m.def("machine_repairman", &q::machine_repairman, "populations"_a, "think_time"_a,
        "service_time"_a, py::call_guard<py::gil_scoped_release>(),
        "M/M/1//N closed form via the Erlang-B recursion.");

  m.def("usl", &q::usl, "n"_a, "sigma"_a, "kappa"_a, "lam"_a,
        "Universal Scalability Law X(N) = lam N / (1 + sigma (N-1) + kappa N (N-1)).");
}
