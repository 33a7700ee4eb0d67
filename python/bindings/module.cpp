// mmcost._core: the compiled models. One bind_<area>() per core area; the
// Python layer (python/mmcost/*.py) owns validation messages, units and pandas.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_queueing(py::module_& m);
void bind_locks(py::module_& m);
void bind_sim(py::module_& m);
void bind_tlb(py::module_& m);

PYBIND11_MODULE(_core, m) {
  m.doc() = "mmcost compiled core (C++17, Eigen). Use the mmcost.* Python API instead.";
  auto queueing = m.def_submodule("queueing", "Analytic queueing solvers");
  bind_queueing(queueing);
  auto simulation = m.def_submodule("sim", "Simulation kernel: random streams and distributions");
  bind_sim(simulation);
  auto locks = m.def_submodule("locks", "Lock-contention discrete-event simulation");
  bind_locks(locks);
  auto tlb = m.def_submodule("tlb", "TLB-flush discrete-event simulation");
  bind_tlb(tlb);
}
