"""Which parameters of which study are the same physical quantity.

Every study fits its own copy of the costs its rows exercise; in the joint fit
(:func:`mmcost.corpus.fit_all`) a cost is one global parameter for every
source that exercises it. What makes two sources' copies one quantity is where
the value comes from, read from the study's model (``Mechanism.describe()``'s
``origin``) before anything is fitted:

==========================================  ==========================================
the field's value comes from                 one global parameter per
==========================================  ==========================================
a CPU preset or a machine profile            field and CPU model (``tlbi_us@cpu:
(a per-primitive cost: a TLBI, an IPI)       ampere-altra``): a primitive's price is
                                             the CPU's, whatever the kernel
the class default, with a prior              field and kernel era (``reclaim_us_per_
(a kernel path's cost per page or folio)     folio@era:6``), times the machine's
                                             speed factor ``log_machine@cpu:<model>``
a study's own, without a prior               field and source: a workload's
(a benchmark's miss rate, a working set)     description, never shared
==========================================  ==========================================

Era = the kernel's major version (4.x, 5.x, 6.x): the paths the costs charge
are rewritten between majors (folios, the swap table), and within one the
mechanisms' kernel switches already model the changes that matter.

The machine factor is the nuisance term the issue asks for: a kernel path's
microseconds on one CPU are not another's (clock, IPC, memory latency, a
guest's exits), and the sources do not say enough to derive the ratio. Its
prior is log-normal with sigma 0.5, a factor 1.65 either way at one sigma and
2.7 at two: an assumption, not a measurement, sized so that the machines of
these threads (a 2.3 GHz Haswell-EP of 2014 to a 2.6 GHz Xeon guest of 2023,
Neoverse N1, Kunpeng 920) fall well inside two sigma of each other on clock
times IPC. Relative changes do not see it (it cancels in a ratio); absolute
times and throughputs do. The leave-one-source-out table
(:mod:`mmcost.corpus.loso`) is what says whether it is wide enough.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import kernel as kernel_versions
from ..mechanism import SCOPE, Mechanism
from ..model import Parameter, Prior
from .joint import FACTOR_PREFIX, Link

#: the machine factor's prior (module docstring)
MACHINE_PRIOR = Prior(0.0, 0.5, "assumed: the kernel-path speed of these threads' machines (Haswell-EP 2014 to a "
                                "2023 Xeon guest, Neoverse N1, Kunpeng 920) within a factor 2.7 of each other at 2 "
                                "sigma (clock x IPC); log-normal, sigma 0.5 (mmcost.corpus.sharing)")
#: a machine factor's bounds (a factor of e^3 = 20 either way)
MACHINE_BOUND = 3.0


def era(model) -> str | None:
    """A mechanism's kernel era (its ``kernel``'s major version), or None without one."""
    k = getattr(model, "kernel", None)
    if not k:
        return None
    return str(kernel_versions.parse_version(str(k).split("+")[0])[0])


def machine(model) -> str:
    """The CPU model a mechanism describes (its ``cpu_model`` field, or its arch's generic preset)."""
    cpu = getattr(model, "cpu_model", None)
    if cpu:
        return str(cpu).rsplit("/", 1)[-1]  # a profile's path: its file name
    return f"generic-{getattr(model, 'arch', None) or 'x86'}"


def keys(study) -> dict[str, tuple[str, str | None]]:
    """For each parameter of ``study``'s model that is shared or its own:
    local name -> (global name, machine factor name or None). Parameters not
    listed (configuration, costs without a prior that the study does not
    fit) keep the study's own value."""
    if study.mechanism is type(None):  # a source no mechanism expresses: nothing to share
        return {}
    model = study.model()
    if not isinstance(model, Mechanism):  # an empirical model (swap_alloc_locks): all its own
        return {n: (f"{n}@source:{study.id}", None) for n in study.free}
    origin = dict(zip(*(model.describe()[c] for c in ("field", "origin"))))
    cpu, ep = machine(model), era(model)
    out = {}
    for p in model.parameters:
        src = origin.get(p.name, "default")
        if SCOPE in p.name:  # a per-variant parameter (a build's offset): the source's own nuisance
            if p.name in study.free:
                out[p.name] = (f"{p.name}@source:{study.id}", None)
            continue
        if p.prior is None:
            if p.name in study.free:
                out[p.name] = (f"{p.name}@source:{study.id}", None)
            continue
        if src.startswith(("preset", "profile", "compressor")):
            which = f"|{src.replace(' ', ':')}" if src.startswith("compressor") else ""  # a compressor on this CPU
            out[p.name] = (f"{p.name}@cpu:{cpu}{which}", None)
        elif src == "default" and ep is not None:
            factor = f"{FACTOR_PREFIX}machine@cpu:{cpu}" if p.unit == "us" else None
            out[p.name] = (f"{p.name}@era:{ep}", factor)
        elif p.name in study.free:  # set by the source itself, fitted: its own
            out[p.name] = (f"{p.name}@source:{study.id}", None)
    return out


def links(study, shared: set[str]) -> tuple[Link, ...]:
    """The links of ``study``'s parameters to the global parameters in ``shared``."""
    return tuple(Link(local, g, f) for local, (g, f) in keys(study).items() if g in shared)


def global_parameter(name: str, model, local: str) -> Parameter:
    """The global parameter ``name``, seeded from ``model``'s ``local``: its value, bounds and prior."""
    if name.startswith(FACTOR_PREFIX):
        return Parameter(name, 0.0, "log", -MACHINE_BOUND, MACHINE_BOUND, prior=MACHINE_PRIOR,
                         doc="the machine's speed on kernel paths relative to the era's shared costs")
    p = model.params[local]
    value = p.prior.value if p.prior is not None else p.value
    return replace(p, name=name, value=min(max(value, p.lower), p.upper), free=True)


def frame_rows(study) -> pd.DataFrame | None:
    """The rows ``study`` fits, or None when it fits nothing of its own."""
    try:
        return study.fit_rows()
    except NotImplementedError:
        return None
