"""Which parameters of which study are the same physical quantity.

Every study fits its own copy of the costs its rows exercise; in the joint fit
(:func:`mmcost.corpus.fit_all`) a cost is one global parameter for every
source that exercises it. What makes two sources' copies one quantity is where
the value comes from in the model the study predicts with (its fit's: a
study predicting with another source's fit is on that source's machine):

- a value from a CPU preset or a machine profile (a per-primitive cost: a
  TLBI, an IPI) is one global parameter per field and CPU model
  (``tlbi_us@cpu:ampere-altra``): a primitive's price is the CPU's,
  whatever the kernel; a profile's is the measured machine's
  (``irq_us@cpu:boot:1901ae91``, :func:`profile_machine`), its prior the
  measurement with its spread: every study whose runs ran there
  (``Study.PROFILE``) shares it, a study of another machine never does;
- the class default, with a prior (a kernel path's cost per page or folio),
  is one per field and kernel era (``reclaim_us_per_folio@era:6``), times
  the machine's speed factor ``log_machine@cpu:<model>``; on a profiled
  machine also times its measured ``kernel_speed`` (a per-primitive cost of
  that machine), the factor then holding what the fault path's speed does
  not carry (without it, the Xeon guest's swap-in runs pulled the era's
  shared costs and leave-one-source-out lost 13 hits in other sources);
- a study's own parameter without a prior (a benchmark's miss rate, a
  working set) is one per field and source: a workload's description, never
  shared.

Era = the kernel's major version (4.x, 5.x, 6.x): the paths the costs charge
are rewritten between majors (folios, the swap table), and within one the
mechanisms' kernel switches already model the changes that matter.

The machine factor is the nuisance term between sources: a kernel path's
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
    """The CPU model a mechanism describes: its ``cpu_model`` preset, or its arch's generic preset; for
    a machine profile (``cpu_model`` a ``.toml`` of ``mmcost measure machine``), the machine it was
    measured on (:func:`profile_machine`), so that every study on that machine shares its costs and
    no study on another machine does, whatever the file is called."""
    cpu = getattr(model, "cpu_model", None)
    if cpu and str(cpu).strip().lower().endswith(".toml"):
        return profile_machine(str(cpu))
    if cpu:
        return str(cpu)
    return f"generic-{getattr(model, 'arch', None) or 'x86'}"


def profile_machine(path: str) -> str:
    """The machine a profile was measured on, as a sharing key: ``boot:<boot_id's
    first 8 hex digits>`` (``boot:1901ae91``) where its ``[machine]`` recorded one (two profiles of one boot, profile_a and
    profile_b, are one machine), else ``profile:<its id>`` (:func:`mmcost.measure.profile.profile_id`,
    the content's hash: two files of one name from two machines are two)."""
    from ..measure.profile import load, profile_id

    boot = str(load(path).description.get("boot_id") or "").strip()
    return f"boot:{boot[:8]}" if boot else f"profile:{profile_id(path)}"


def used_model(study):
    """The model ``study`` predicts with: its fit's (a study that fits nothing
    of its own predicts with another source's fit, on that source's machine),
    else its source's."""
    try:
        return study.fit().model
    except NotImplementedError:
        return study.model()


def keys(study) -> dict[str, tuple[str, str | None]]:
    """For each parameter of ``study``'s model that is shared or its own:
    local name -> (global name, machine factor name or None). Parameters not
    listed (configuration, costs without a prior that the study does not
    fit, values its source sets) keep the study's own value."""
    if study.mechanism is type(None):  # a source no mechanism expresses: nothing to share
        return {}
    model = used_model(study)
    if not isinstance(model, Mechanism):  # an empirical model (swap_alloc_locks): all its own
        return {n: (f"{n}@source:{study.id}", None) for n in study.free}
    stated = set()
    if study.source().get("model"):  # what the source's own [model] sets is its statement, not a shared cost
        own = study.model().describe()
        stated = set(own.loc[own["origin"] == "set", "field"])
    tables = model.table_values()
    cpu, ep = machine(model), era(model)
    fitted = set(study.free) | set(getattr(study.fit(), "names", ()) if study.free else ())
    out = {}
    for p in model.parameters:
        if SCOPE in p.name or p.prior is None or (p.name in stated and p.name not in fitted):
            if p.name in fitted:  # a build's offset, a workload's description: the source's own
                out[p.name] = (f"{p.name}@source:{study.id}", None)
            continue
        if p.name in tables:  # a CPU preset's, a machine profile's or a compressor's value
            src = model.table_origin(p.name)
            which = f"|{src.replace(' ', ':')}" if src.startswith("compressor") else ""  # a compressor on this CPU
            out[p.name] = (f"{p.name}@cpu:{cpu}{which}", None)
        elif ep is not None:  # a kernel path's cost: per era, at the machine's speed
            factor = f"{FACTOR_PREFIX}machine@cpu:{cpu}" if p.unit == "us" else None
            out[p.name] = (f"{p.name}@era:{ep}", factor)
        elif p.name in fitted:
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


def roles(study, names=None) -> list[tuple[str, str, list[str]]]:
    """For each parameter ``study`` fits: (its name, its global parameter in
    the joint fit, the other sources whose models use that same quantity;
    empty: the source's own)."""
    from .. import studies as registry

    mine = keys(study)
    others = {}
    for name in names or registry.names():
        if name != study.id:
            for g, _ in keys(registry.get(name)).values():
                others.setdefault(g, []).append(name)
    asked = study.free or getattr(_fit_or_none(study), "names", ())  # predicting with another's fit: its costs
    return [(local, mine[local][0] + (f" x exp({mine[local][1]})" if mine[local][1] else ""),
             others.get(mine[local][0], [])) for local in asked if local in mine]


def _fit_or_none(study):
    try:
        return study.fit()
    except (NotImplementedError, TypeError):
        return None


def roles_text(study) -> str:
    """:func:`roles` as a paragraph for a study's report."""
    parts = []
    fitted = bool(study.free)
    for local, g, users in roles(study):
        who = f"shared with {len(users)} other source{'s' if len(users) > 1 else ''}" if users else "its own"
        parts.append(f"{local} = {g} ({who})")
    head = "In the joint fit (mmcost.corpus), fitted here: " if fitted else \
        "In the joint fit (mmcost.corpus), nothing fitted here; predicted with: "
    if not parts and getattr(study, "PROFILE", None) is not None and frame_rows(study) is not None:
        cpu = machine(used_model(study))
        return ("In the joint fit (mmcost.corpus): nothing fitted here; a member for its runs on a measured "
                f"machine ({cpu}): they set the costs it shares with the other studies there (its machine "
                f"factor log_machine@cpu:{cpu}, the era's kernel-path costs), and leaving it out it is predicted "
                "with the others' values of them; its profile's measured costs at their priors.")
    if not parts:
        return "In the joint fit (mmcost.corpus): nothing fitted here or shared; predicted from its priors."
    return head + "; ".join(parts) + "."
