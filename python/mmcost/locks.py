"""Lock contention: N CPUs repeating an operation of free work and critical sections.

One description (:class:`LockSystem`), two solvers that check each other:

- :meth:`LockSystem.analytic`: queued (MCS/qspinlock) locks as FCFS stations
  of a closed network solved by exact MVA (Reiser & Lavenberg 1980); exact
  for one exponential critical section per lock, otherwise the residual-life
  approximation for non-exponential holds and several call sites per lock
  (documented in :func:`mmcost.queueing.mva`). A ticket lock is the
  Boyd-Wickizer et al. (Linux Symposium 2012) Markov model: a finite-source
  birth-death chain whose service rate falls with every waiter.
  Measured against the DES (tests/test_locks.py): within 3% for
  deterministic holds, but 15% low for lognormal holds with cv = 2 at 8
  CPUs: simulate heavy-tailed holds.
- :meth:`LockSystem.simulate`: the C++ discrete-event simulation of the same
  description, independent replications on threads, 99% confidence intervals.

Times are in microseconds (``*_us``); rates per second (``*_per_s``). The
outputs are the columns of ``perf lock contention`` (contended, total/max/avg
wait, with perf's meaning: "avg wait" is the total wait over the *contended*
acquisitions, see :class:`LockResult`) per lock and per call site, the mean
wait over all acquisitions, the share of all CPU time spent spinning at
each call site (what perf-profile's ``cycles-pp`` shows for
``_raw_spin_lock*`` under that caller), and each lock's utilisation.
Where the analytic solution is an approximation, :class:`LockResult`'s
``note`` says so.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import os
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np
import pandas as pd

from . import _core, lanes, queueing
from . import _validate as v
from .mechanism import Knob, Leaf, Mechanism, Quantity, Result

US_PER_S = 1e6


class LockKind(str, enum.Enum):
    """``queued``: MCS/qspinlock (kernel/locking/qspinlock.c), FIFO, constant
    handoff. ``ticket``: a ticket spinlock, handoff slower with each waiter."""

    QUEUED = "queued"
    TICKET = "ticket"


_CORE_LOCK_KINDS = {LockKind.QUEUED: _core.locks.LockKind.queued, LockKind.TICKET: _core.locks.LockKind.ticket}


_DIST_KINDS = {"deterministic": 0, "exponential": 1, "lognormal": 2, "empirical": 3}
_CORE_DIST_KINDS = dict(_core.sim.DistKind.__members__)  # (__members__ builds a new dict per read)


@dataclass(frozen=True)
class Dist:
    """A time distribution in microseconds: ``Dist.exponential(0.5)``,
    ``Dist.deterministic(2)``, ``Dist.lognormal(0.5, cv=1.5)``,
    ``Dist.empirical([...])``."""

    kind: str
    mean_us: float
    cv: float = 0.0
    samples_us: tuple = ()

    @classmethod
    def deterministic(cls, mean_us):
        return cls("deterministic", mean_us)

    @classmethod
    def exponential(cls, mean_us):
        return cls("exponential", mean_us)

    @classmethod
    def lognormal(cls, mean_us, cv):
        return cls("lognormal", mean_us, cv)

    @classmethod
    def empirical(cls, samples_us):
        arr = v.float_array("samples_us", samples_us)
        return cls("empirical", float(arr.mean()), samples_us=tuple(arr.tolist()))

    def check(self, where: str) -> None:
        if self.kind not in _DIST_KINDS:
            raise ValueError(f"{where}.kind must be one of {list(_DIST_KINDS)}, got {self.kind!r}")
        if self.kind == "empirical":
            v.float_array(f"{where}.samples_us", self.samples_us)
            return
        v.scalar(f"{where}.mean_us", self.mean_us, positive=self.kind == "lognormal")
        if self.kind == "lognormal":
            v.scalar(f"{where}.cv", self.cv, positive=True)

    @property
    def scv(self) -> float:
        """Squared coefficient of variation."""
        if self.kind == "deterministic":
            return 0.0
        if self.kind == "exponential":
            return 1.0
        if self.kind == "lognormal":
            return self.cv**2
        arr = np.asarray(self.samples_us)
        return float(arr.var() / arr.mean() ** 2) if arr.mean() > 0 else 0.0

    def _core(self, scale: float = 1.0):
        """The C++ ``Distribution`` of this one, times multiplied by ``scale``."""
        return _core.sim.Distribution(kind=_CORE_DIST_KINDS[self.kind], mean=float(self.mean_us) * scale,
                                      cv=float(self.cv), samples=[x * scale for x in self.samples_us])


@dataclass(frozen=True)
class Lock:
    """A spinlock. ``partitions`` > 1: the lock is really that many identical
    locks and each acquisition takes one at random (hashed or per-cluster
    locks: seed 003's swap clusters, the swap cache's 64 MiB address spaces).
    Queued locks only."""

    name: str
    kind: LockKind = LockKind.QUEUED
    handoff_us: float = 0.0
    handoff_per_waiter_us: float = 0.0
    partitions: int = 1


@dataclass(frozen=True)
class Work:
    """Time outside any lock (faulting, copying, compressing ...)."""

    time: Dist


@dataclass(frozen=True)
class Critical:
    """Hold ``lock`` for ``hold`` at call site ``site`` (e.g. ``__add_to_swap_cache``).

    ``irq_disabled``: the section runs under ``spin_lock_irq``/``_irqsave``, so
    interrupts arriving during the hold wait until the unlock and run outside
    the lock; with a plain ``spin_lock`` they run inside and stretch the hold
    (see :class:`LockSystem`'s ``irq_rate_per_us``).

    ``count``: how many times the lock is taken at this site per operation,
    ``hold`` being their total (a 2M THP split to 4K pages enters the swap
    cache 512 times, one page per ``__add_to_swap_cache``; a whole THP once).
    The network holds the lock once for ``hold`` (for exponential holds MVA's
    residence at a station depends on its demand, not on how it is cut into
    visits), and the results count every acquisition and give each the
    lock's mean wait: a queued spinlock's waiter waits for what is ahead of
    it, not for its own hold (:meth:`LockSystem._per_acquisition`). A
    lock's ``handoff_us`` is charged once per visit, not per acquisition:
    fold the other acquisitions' handoffs into ``hold``."""

    lock: str
    site: str
    hold: Dist
    irq_disabled: bool = False
    count: float = 1.0


#: LockResult's columns, in order
_LOCK_COLUMNS = ["acquisitions_per_s", "contended_per_s", "contended_pct", "wait_avg_us", "wait_per_acquisition_us",
                 "wait_total_us_per_s", "wait_max_us", "utilization"]
_SITE_COLUMNS = ["lock", "acquisitions_per_s", "contended_per_s", "wait_avg_us", "wait_per_acquisition_us",
                 "wait_total_us_per_s", "wait_max_us", "wait_sd_us", "spin_share_pct"]

@functools.lru_cache(maxsize=64)
def _t99(replications: int) -> float:
    """Student t quantile for a 99% two-sided interval over `replications`
    (scipy.stats.t.ppf, without importing scipy.stats; scipy.special costs
    80 ms to import, so here and once)."""
    from scipy.special import stdtrit

    return float(stdtrit(replications - 1, 0.995))


# A result's tables are built from blocks, as pandas stores them: one 2-D
# float block and one array per text column, with pandas' own constructor
# for blocks (pandas >= 3.0; before it, the column-by-column frame). The
# frame is the one pd.DataFrame(dict of columns) gives, in half its time:
# at 100,000 acquisitions a .sites read cost 5-14% of the simulation.
try:
    from pandas.api.internals import create_dataframe_from_blocks as _frame_from_blocks
except ImportError:  # pandas < 3.0
    _frame_from_blocks = None
_TEXT_DTYPE = pd.Series(["text"]).dtype  # what pandas infers for a list of str: 'str' (pandas 3) or object
_INDEXES: dict = {}  # (labels, name) -> their pd.Index (immutable: shared by the frames with those rows or columns)
_TEXTS: dict = {}  # a text column's cells -> their pandas array (copied per frame, the Arrow data shared)


def _index(labels: tuple, name=None) -> pd.Index:
    key = (labels, name)
    if key not in _INDEXES:
        if len(_INDEXES) >= 4096:  # a bound, for a process that builds systems without end
            _INDEXES.clear()
        _INDEXES[key] = pd.Index(list(labels), name=name)
    # a new object (its name is settable), the same immutable labels: what .copy() gives, without
    # re-checking the name (view() is copy(deep=False) less that check, a fifth of its time)
    return _INDEXES[key].view()


def _text_array(cells: list):
    """``pd.array(cells, dtype=_TEXT_DTYPE)``, built once per distinct column: a new array object
    each call (a frame's ``__setitem__`` replaces its own Arrow data, never the shared one)."""
    try:
        arr = _TEXTS.get(key := tuple(cells))
    except TypeError:  # an unhashable cell
        return pd.array(cells, dtype=_TEXT_DTYPE)
    if arr is None:
        if len(_TEXTS) >= 4096:
            _TEXTS.clear()
        arr = _TEXTS[key] = pd.array(cells, dtype=_TEXT_DTYPE)
    return arr.copy()
#: |scv - 1| above which a station's hold is not exponential (rounding leaves ~1e-16)
_NOT_EXPONENTIAL = 1e-9
#: a computed scv in (-_SCV_ROUNDING, 0) is rounding of a true 0 (a deterministic hold): clamped to 0
_SCV_ROUNDING = 1e-12


@dataclass(frozen=True)
class LockResult:
    """Solver output. ``system``: throughput; ``locks``: per lock; ``sites``:
    per call site. Simulated results add ``<column>_ci99`` half-widths.

    The wait columns mean what ``perf lock contention`` prints: its "avg
    wait" is the total wait over the contended acquisitions (Linux
    ``tools/perf/builtin-lock.c``: ``report_lock_acquired_event()`` and
    ``combine_lock_stats()`` divide ``wait_time_total`` by ``nr_contended``,
    ``report_lock_contention_end_event()`` by the count of
    ``contention_end`` events; with BPF, ``util/bpf_lock_contention.c``
    ``lock_contention_read()``: ``total_time / count``, both counted only
    for acquisitions that waited):

    - ``contended_per_s``: acquisitions that found the lock held or queued
      (perf's "contended"); ``contended_pct`` of all acquisitions;
    - ``wait_avg_us``: the mean wait of a *contended* acquisition (perf's
      "avg wait"; 0 where none is contended, as perf prints);
    - ``wait_per_acquisition_us``: the mean wait over *all* acquisitions, the
      uncontended ones waiting 0 (``wait_avg_us x contended_pct / 100``;
      what Little's law and the spin share use);
    - ``wait_total_us_per_s``: CPU-microseconds spent waiting per second
      (perf's "total wait" over a run, per second of it); ``wait_max_us``
      the longest single wait (the DES only: NaN from the analytic solver).

    ``note``: empty where the solution is exact (exponential holds, the
    ticket lock's chain, the DES within its half-widths); otherwise the
    known approximation and its bias (the residual-life MVA for
    non-exponential holds, :func:`mmcost.queueing.mva`), e.g. a throughput
    that falls as CPUs are added, which a queued lock does not do.

    The numbers are kept as dicts (``system_values``, ``lock_values[lock]``,
    ``site_values[site]``); the pandas views are built when first read, so a
    fit's thousands of solves never build a frame."""

    system_values: dict
    lock_values: dict
    site_values: dict
    solver: str
    note: str = ""

    @property
    def throughput_per_s(self) -> float:
        return self.system_values["throughput_per_s"]

    def _cached(self, name, build):
        if name not in self.__dict__:
            object.__setattr__(self, name, build())
        return self.__dict__[name]

    @property
    def system(self) -> pd.Series:
        return self._cached("_system", lambda: pd.Series(self.system_values, dtype=float))

    @property
    def locks(self) -> pd.DataFrame:
        return self._cached("_locks", lambda: self._frame(self.lock_values, "lock", _LOCK_COLUMNS))

    @property
    def sites(self) -> pd.DataFrame:
        return self._cached("_sites", lambda: self._frame(self.site_values, "site", _SITE_COLUMNS))

    @staticmethod
    def _frame(values: dict, index: str, columns: list) -> pd.DataFrame:
        """One row per key, built column by column (a frame from a list of row
        dicts costs 3x as much, more than a short simulation's own time).
        Columns: ``columns``, then the rows' other keys in the order they first
        appear; a column is text where any of its cells is a str."""
        rows = list(values.values())
        names, seen, text = list(columns), set(columns), set()
        for row in rows:  # one pass over the cells: the extra columns and the text ones
            for c, x in row.items():
                if c not in seen:
                    seen.add(c)
                    names.append(c)
                if isinstance(x, str):
                    text.add(c)
        rows_index = _index(tuple(values), index)
        nan = np.nan
        if _frame_from_blocks is None or not rows or not isinstance(_TEXT_DTYPE, pd.api.extensions.ExtensionDtype):
            data = {c: [row.get(c, nan) for row in rows] if c in text
                    else np.array([row.get(c, nan) for row in rows], dtype=float) for c in names}
            return pd.DataFrame(data, index=rows_index, copy=False)
        numbers = [j for j, c in enumerate(names) if c not in text]
        # the float block, (columns x rows) as pandas stores it, filled row by row (a row's cells in one pass)
        block = np.array([[row.get(names[j], nan) for j in numbers] for row in rows], dtype=float)
        blocks = [(np.ascontiguousarray(block.reshape(len(rows), len(numbers)).T), np.array(numbers, dtype=np.intp))]
        blocks += [(_text_array([row.get(c, nan) for row in rows]), np.array([names.index(c)], dtype=np.intp))
                   for c in names if c in text]
        return _frame_from_blocks(blocks, index=rows_index, columns=_index(tuple(names)))

    def __repr__(self) -> str:
        note = f"note: {self.note}\n" if self.note else ""
        return (f"LockResult ({self.solver}): {self.throughput_per_s:.6g} ops/s\n{note}"
                f"{self.locks.to_string()}\n{self.sites.to_string()}")

    def _repr_html_(self) -> str:
        import html

        note = f"<p>note: {html.escape(self.note)}</p>" if self.note else ""
        return (f"<p><b>{self.solver}</b>: {self.throughput_per_s:.6g} operations/s on "
                f"{int(self.system_values['cpus'])} CPUs</p>{note}<p>per lock</p>{self.locks._repr_html_()}"
                f"<p>per call site</p>{self.sites._repr_html_()}")


class _LaneLockResult(LockResult):
    """One lane's :class:`LockResult` (:meth:`LockSystem.analytic_lanes`):
    the throughput now, the per-lock and per-site numbers when first read (a
    band reads the throughput of thousands of lanes and the locks of few).
    It pickles, compares and reads as the LockResult it stands for."""

    def __init__(self, system_values: dict, build):
        object.__setattr__(self, "system_values", system_values)
        object.__setattr__(self, "solver", "analytic")
        object.__setattr__(self, "_build", build)

    def _built(self) -> LockResult:
        full = self.__dict__.get("_full")
        if full is None:
            full = self._build()
            object.__setattr__(self, "_full", full)
        return full

    lock_values = property(lambda self: self._built().lock_values)
    site_values = property(lambda self: self._built().site_values)
    note = property(lambda self: self._built().note)

    def _fields(self) -> tuple:
        return self.system_values, self.lock_values, self.site_values, self.solver, self.note

    def __eq__(self, other):
        if not isinstance(other, LockResult):
            return NotImplemented
        return self._fields() == (other.system_values, other.lock_values, other.site_values, other.solver, other.note)

    __hash__ = None  # as LockResult's: its values are dicts

    def __reduce__(self):
        return LockResult, self._fields()


#: analytic solutions by network description (cpus, locks, stages, interrupts)
_ANALYTIC: dict = {}
_ANALYTIC_SIZE = 8192


@functools.lru_cache(maxsize=None)
def _fields_of(cls) -> tuple:
    return dataclasses.fields(cls)


class _Stations(NamedTuple):
    """A lock network as MVA sees it: per station (a lock's partition) the
    service time, visits and scv; the think time; and what turns MVA's answer
    back into per-lock and per-site numbers."""

    service: list
    visits: list
    scv: list
    think: float
    used: list
    lock_visits: list
    lock_service: list
    sites_of: dict

    def lane(self, i: int) -> _Stations:
        """Lane ``i`` of a lane model's network, as far as :meth:`LockSystem._from_mva` reads it."""
        return self._replace(lock_service=[lanes.take(x, i) for x in self.lock_service],
                             service=[lanes.take(x, i) for x in self.service],
                             scv=[lanes.take(x, i) for x in self.scv], think=lanes.take(self.think, i))


def analytic_many(systems, threads: int = 1) -> list[LockResult]:
    """:meth:`LockSystem.analytic` of many networks: the cached ones from the
    cache, the rest solved by the core in one call per station count
    (``mva_top_batch``: the GIL released, on ``threads`` threads), each
    answer the same to the last bit as the network's own solve. A band's
    thousands of networks cross into C++ a few times, not thousands."""
    out: list = [None] * len(systems)
    todo: dict = {}  # cache key -> indices of systems with that description
    for i, sys_ in enumerate(systems):
        try:
            key = (sys_.cpus, sys_.locks, sys_.stages, sys_.irq_rate_per_us, sys_.irq_service_us)
            hit = _ANALYTIC.get(key)
        except TypeError:  # an unhashable field: check() has let it through, so solve it uncached
            out[i] = sys_._analytic()
            continue
        if hit is not None:
            out[i] = hit
        else:
            todo.setdefault(key, []).append(i)
    batch = []  # (key, system, its stations)
    for key, idx in todo.items():
        sys_ = systems[idx[0]]
        net = sys_._stations()
        if isinstance(net, _Stations):
            batch.append((key, sys_, net))
        else:
            _remember(key, net)
            for i in idx:
                out[i] = net
    # one core call per station count: padding would change the order of the core's vectorised
    # sums, and so the last bits of an answer, with the other networks in the batch
    by_width: dict = {}
    for item in batch:
        by_width.setdefault(len(item[2].service), []).append(item)
    batch, answers = [], []
    for group in by_width.values():
        batch += group
        if len(group) == 1:
            (_, sys_, net), = group
            top = _core.queueing.mva_top(net.service, net.visits, net.think, int(sys_.cpus), net.scv)
            answers.append((top.throughput, top.throughput_before, top.queue_length))
            continue
        top = _core.queueing.mva_top_batch(np.array([net.service for _, _, net in group]),
                                           np.array([net.visits for _, _, net in group]),
                                           np.array([net.think for _, _, net in group]),
                                           np.array([int(sys_.cpus) for _, sys_, _ in group], dtype=np.int64),
                                           np.array([net.scv for _, _, net in group]), threads)
        answers += zip(top["throughput"].tolist(), top["throughput_before"].tolist(), top["queue_length"].tolist())
    for (key, sys_, net), (x, x_before, qlen) in zip(batch, answers):
        res = _remember(key, sys_._from_mva(net, x, x_before, qlen))
        for i in todo[key]:
            out[i] = res
    return out


def _remember(key, result: LockResult) -> LockResult:
    if len(_ANALYTIC) >= _ANALYTIC_SIZE:
        _ANALYTIC.clear()
    _ANALYTIC[key] = result
    return result


@dataclass(frozen=True)
class LockSystem(Mechanism):
    """``cpus`` CPUs each repeating ``stages`` (a tuple of :class:`Work` and
    :class:`Critical`) on ``locks``. Several critical stages may name the same
    lock (several call sites of one lock, as the swap-cache tree lock in seed 004).

    As a :class:`~mmcost.mechanism.Mechanism` its fields are ``cpus``, each
    call site's ``<site>_hold_us``, the work between them (``work_us``, or
    ``work<i>_us`` for several work stages), each lock's ``<lock>_handoff_us``,
    ``<lock>_handoff_per_waiter_us`` and ``<lock>_partitions``, and the
    interrupt load: fit hold times to ``perf lock contention`` rows, or
    predict another CPU count with a ``cpus`` column.

    Metrics: ``lock_wait_avg_us`` is perf's "avg wait", the mean wait of a
    contended acquisition (what :func:`mmcost.parse.perf_lock_contention`
    reads); ``lock_wait_per_acquisition_us`` the mean over all acquisitions;
    ``lock_contended_per_s``, ``lock_acquisitions_per_s`` and
    ``lock_utilization`` per lock (a ``lock`` column) or call site (a
    ``call_site`` column); ``operations_per_s``; ``cycles_share_pct``."""

    cpus: int = 4
    locks: tuple = (Lock("lock"),)
    stages: tuple = (Work(Dist.exponential(1.0)), Critical("lock", "critical_section", Dist.exponential(0.1)))
    #: Poisson interrupt rate per CPU (timer ticks, IPIs, device interrupts)
    irq_rate_per_us: float = 0.0
    #: handler time per interrupt
    irq_service_us: float = 0.0
    name: str = field(default="locks", kw_only=True)

    @property
    def FREE(self) -> tuple:  # noqa: N802 - the Mechanism hook: every call site's hold time
        return tuple(n for n in self.leaves if n.endswith("_hold_us"))

    METRICS: ClassVar = ("operations_per_s", "lock_acquisitions_per_s", "lock_contended_per_s", "lock_wait_avg_us",
                         "lock_wait_per_acquisition_us", "lock_utilization", "cycles_share_pct")

    @classmethod
    def network(cls, cpus: int, locks: tuple, stages: tuple, irq_rate_per_us: float = 0.0,
                irq_service_us: float = 0.0, *, validate: bool = True) -> LockSystem:
        """A network to solve, not to fit: validated by :meth:`check`, without
        the parameter table a :class:`~mmcost.mechanism.Mechanism` builds
        (``params`` is empty). The swap model solves thousands per fit.
        ``validate=False`` skips :meth:`check` for a network built by code
        from a validated model (the MVA core still checks every hold)."""
        obj = object.__new__(cls)
        for f in _fields_of(cls):
            if f.default is not dataclasses.MISSING:
                object.__setattr__(obj, f.name, f.default)
            elif f.default_factory is not dataclasses.MISSING:
                object.__setattr__(obj, f.name, f.default_factory())
        for name, val in (("cpus", v.count("cpus", cpus)), ("locks", tuple(locks)), ("stages", tuple(stages)),
                          ("irq_rate_per_us", irq_rate_per_us), ("irq_service_us", irq_service_us)):
            object.__setattr__(obj, name, val)
        if validate:
            obj.check()
        return obj

    def _shape(self):
        if not (isinstance(self.locks, tuple) and isinstance(self.stages, tuple)):
            return None
        try:
            return (tuple((type(lk), lk.name) for lk in self.locks),
                    tuple((type(st), getattr(st, "site", None), type(getattr(st, "time", getattr(st, "hold", None))))
                          for st in self.stages))
        except (AttributeError, TypeError):  # check() names what is wrong
            return None

    def _build_leafmap(self) -> dict:
        """Locks by name, call sites by site, work stages by position."""
        out = super()._build_leafmap()
        out.pop("stages", None)
        works = [i for i, st in enumerate(self.stages) if isinstance(st, Work)] if isinstance(self.stages, tuple) else []
        for i, st in enumerate(self.stages if isinstance(self.stages, tuple) else ()):
            if isinstance(st, Critical):
                name, hold = f"{st.site}_hold_us", ("attr", "hold")
            elif isinstance(st, Work):
                name = "work_us" if len(works) == 1 else f"work{works.index(i)}_us"
                hold = ("attr", "time")
            else:
                continue
            out[name] = Leaf(name, (("attr", "stages"), ("item", i), hold, ("attr", "mean_us")),
                             Knob(unit="us", upper=1e9), "float")
        return out

    def check(self):
        v.count("cpus", self.cpus)
        v.scalar("irq_rate_per_us", self.irq_rate_per_us)
        v.scalar("irq_service_us", self.irq_service_us)
        if lanes.any_of(self.irq_load >= 1):  # (issue 31: a load of 2 solved, at 645k operations/s)
            raise ValueError(f"irq_rate_per_us x irq_service_us = {self.irq_load}: interrupts would take all of "
                             "each CPU's time and more (must be < 1)")
        if not self.stages:
            raise ValueError("stages must not be empty")
        names = [lk.name for lk in self.locks]
        if len(set(names)) != len(names):
            raise ValueError(f"locks: duplicate lock names {names}")
        ticket = set()
        stations = 0
        for i, lk in enumerate(self.locks):
            kind = LockKind(lk.kind)
            v.scalar(f"locks[{i}].handoff_us", lk.handoff_us)
            v.scalar(f"locks[{i}].handoff_per_waiter_us", lk.handoff_per_waiter_us)
            parts = v.count(f"locks[{i}].partitions", lk.partitions)
            v.at_most(f"locks[{i}].partitions", parts, v.MAX_STATIONS, "stations of the lock network")
            stations += parts
            if parts > 1 and kind == LockKind.TICKET:
                raise ValueError(f"locks[{i}].partitions: a ticket lock cannot be partitioned in this model")
            if kind == LockKind.TICKET:
                ticket.add(lk.name)
        v.at_most("locks' partitions in all", stations, v.MAX_STATIONS, "stations of the lock network")
        known = set(names)
        sites = []
        for i, st in enumerate(self.stages):
            if isinstance(st, Work):
                st.time.check(f"stages[{i}].time")
            elif isinstance(st, Critical):
                if st.lock not in known:
                    raise ValueError(f"stages[{i}].lock: unknown lock {st.lock!r}; locks are {names}")
                st.hold.check(f"stages[{i}].hold")
                with v.checking_lanes():
                    v.scalar(f"stages[{i}].count", st.count, positive=True)
                if st.lock in ticket and st.hold.kind != "exponential":
                    raise ValueError(f"stages[{i}].hold: a ticket lock's hold must be exponential (Boyd-Wickizer Markov model)")
                if st.lock in ticket and self.irq_load > 0:
                    raise ValueError(f"stages[{i}]: interrupts (irq_rate_per_us) are not modelled for ticket locks")
                sites.append(st.site)
            else:
                raise TypeError(f"stages[{i}] must be Work or Critical, got {type(st).__name__}")
        if len(set(sites)) != len(sites):
            raise ValueError(f"stages: call site names must be unique, got {sites}")

    def lock(self, name: str) -> Lock:
        return next(lk for lk in self.locks if lk.name == name)

    @property
    def critical(self) -> list[Critical]:
        return [s for s in self.stages if isinstance(s, Critical)]

    @property
    def irq_load(self) -> float:
        """Fraction of a CPU's time interrupts take, rate x service."""
        return self.irq_rate_per_us * self.irq_service_us

    def _hold_moments(self, c: Critical) -> tuple[float, float]:
        """(mean, variance) of a hold with its interrupts: K ~ Poisson(rate h)
        handlers of ``irq_service_us`` each inside it unless irq-disabled."""
        h, var = c.hold.mean_us, c.hold.scv * c.hold.mean_us**2
        if c.irq_disabled or self.irq_load == 0:
            return h, var
        rho = self.irq_load
        return h * (1 + rho), var * (1 + rho) ** 2 + h * self.irq_rate_per_us * self.irq_service_us**2

    @property
    def think_us(self) -> float:
        """Mean time per operation outside every lock: the work stages, plus the
        interrupts deferred past irq-disabled unlocks."""
        work = sum(s.time.mean_us for s in self.stages if isinstance(s, Work))
        deferred = sum(c.hold.mean_us * self.irq_load for c in self.critical if c.irq_disabled)
        return float(work + deferred)

    # --- analytic -----------------------------------------------------------------
    def analytic(self) -> LockResult:
        """Exact MVA / birth-death where the model is product-form; see the
        module docstring. Results are cached on the network's description (a
        band's draws that leave a network alone reuse its solution); treat
        the result as read-only."""
        return analytic_many([self])[0]

    def _analytic(self) -> LockResult:
        """The solution, uncached (one network: :func:`analytic_many` batches)."""
        net = self._stations()
        if not isinstance(net, _Stations):
            return net
        top = _core.queueing.mva_top(net.service, net.visits, net.think, int(self.cpus), net.scv)
        return self._from_mva(net, top.throughput, top.throughput_before, top.queue_length)

    def _stations(self) -> _Stations | LockResult:
        """The product-form network MVA solves, or the result where no MVA is
        needed (a ticket lock's birth-death chain, no lock taken)."""
        if any(lk.kind == LockKind.TICKET for lk in self.locks):
            return self._ticket_analytic()
        # one pass over the stages: the think time (work, plus interrupts deferred past irq-disabled
        # unlocks: think_us) and each lock's call sites with their hold moments (_hold_moments)
        irq = self.irq_load
        think, sites_of = 0.0, {}
        for st in self.stages:
            if isinstance(st, Work):
                think += st.time.mean_us
                continue
            h = st.hold.mean_us
            var = st.hold.scv * h * h
            # (lanes with no interrupts get h * 0 added and factors of 1: their numbers unchanged)
            if st.irq_disabled and lanes.any_of(irq):
                think += h * irq
            elif not st.irq_disabled and lanes.any_of(irq):
                h, var = h * (1 + irq), var * (1 + irq) ** 2 + h * self.irq_rate_per_us * self.irq_service_us**2
            sites_of.setdefault(st.lock, []).append((st.site, h, var))
        used = [lk for lk in self.locks if lk.name in sites_of]
        if not used:
            return self._result(self.cpus / think, {}, {}, "analytic")
        visits, service, scv = [], [], []
        for lk in used:
            sites = sites_of[lk.name]
            s = [lk.handoff_us + h for _, h, _ in sites]
            mean = lanes.total(s) / len(s)
            second = lanes.total(var + x * x for (_, _, var), x in zip(sites, s)) / len(s)
            visits.append(len(s))
            service.append(mean)
            # a hold below 1e-100 us is no hold: its square would underflow to 0/0
            # second / mean^2 - 1 of a deterministic hold (or a mixture that is nearly one) can round to
            # -2e-16: that is a 0, clamped; a real negative (impossible from valid holds) is left to the core
            if isinstance(mean, np.ndarray):  # lanes (mmcost.lanes), some of them maybe without the hold
                held = mean > 1e-100
                c = np.where(held, second / np.where(held, mean, 1.0) ** 2 - 1, 0.0)
                scv.append(np.where((c < 0) & (c > -_SCV_ROUNDING), 0.0, c))
            else:
                c = second / mean**2 - 1 if mean > 1e-100 else 0.0
                scv.append(0.0 if -_SCV_ROUNDING < c < 0 else c)
        if lanes.any_of((think == 0) & (sum(service) == 0)):
            raise ValueError("stages: every stage takes zero time")
        # a lock of K partitions is K stations, each visited 1/K as often (partition 0 first)
        parts = [lk.partitions for lk in used]
        return _Stations([s for s, k in zip(service, parts) for _ in range(k)],
                         [v / k for v, k in zip(visits, parts) for _ in range(k)],
                         [c for c, k in zip(scv, parts) for _ in range(k)],
                         think if isinstance(think, np.ndarray) else float(think), used, visits, service,
                         sites_of)

    def analytic_lanes(self, n: int) -> list[LockResult]:
        """:meth:`analytic` of each of the ``n`` lanes of a network whose
        times are arrays of ``n`` values (a lane model's, :mod:`mmcost.lanes`),
        in one batch MVA; uncached (each lane is one draw)."""
        net, top = self._mva_lanes(n)
        rows = zip(top["throughput"].tolist(), top["throughput_before"].tolist(), top["queue_length"].tolist())
        cpus = float(self.cpus)
        return [_LaneLockResult({"throughput_per_s": x * US_PER_S, "cpus": cpus},
                                functools.partial(self._lane_from_mva, net, i, x, x_before, qlen))
                for i, (x, x_before, qlen) in enumerate(rows)]

    def throughput_lanes(self, n: int) -> np.ndarray:
        """Operations per second of each lane (:meth:`analytic_lanes`' throughputs alone)."""
        return self._mva_lanes(n)[1]["throughput"] * US_PER_S

    def _mva_lanes(self, n: int) -> tuple[_Stations, dict]:
        net = self._stations()
        if not isinstance(net, _Stations):
            raise ValueError("analytic_lanes: a ticket lock, or no lock taken, has no batch solver; solve each network")
        width = lanes.width
        top = _core.queueing.mva_top_batch(np.stack([width(x, n) for x in net.service], axis=1),
                                           np.broadcast_to(np.array(net.visits, dtype=float), (n, len(net.visits))),
                                           width(net.think, n).copy(), np.full(n, int(self.cpus), dtype=np.int64),
                                           np.stack([width(x, n) for x in net.scv], axis=1), 1)
        return net, top

    def _lane_from_mva(self, net: _Stations, i: int, x: float, x_before: float, qlen) -> LockResult:
        return self._from_mva(net.lane(i), x, x_before, qlen, lane=i)

    def _from_mva(self, net: _Stations, x: float, x_before: float, qlen, lane: int | None = None) -> LockResult:
        """The result from MVA's X(N), X(N-1) and Q_k(N) of :meth:`_stations`' network."""
        per_lock, per_site = {}, {}
        first = 0  # the lock's partition 0 among the stations
        approximate = []  # locks whose holds are not exponential: MVA's residual-life approximation
        for lk, vis, s in zip(net.used, net.lock_visits, net.lock_service):
            demand = s * vis / lk.partitions
            wait = max(qlen[first] / x / (vis / lk.partitions) - s, 0.0)  # (N = 1: 0, up to rounding)
            if abs(net.scv[first] - 1.0) > _NOT_EXPONENTIAL:
                approximate.append(lk.name)
            first += lk.partitions
            # arrival theorem: a request sees the lock as the other N-1 CPUs keep it
            busy_seen = x_before * demand
            per_lock[lk.name] = dict(acquisitions=x * vis, contended=x * vis * busy_seen, wait=wait, util=x * demand)
            for site, _, _ in net.sites_of[lk.name]:
                per_site[site] = dict(lock=lk.name, acquisitions=x, contended=x * busy_seen, wait=wait)
        return self._result(x, per_lock, per_site, "analytic", note=self._approximation_note(net, x, x_before, approximate),
                            lane=lane)

    def _approximation_note(self, net: _Stations, x: float, x_before: float, approximate: list) -> str:
        """:class:`LockResult`'s ``note``: where MVA is not exact here and what its known bias did."""
        if not approximate:
            return ""
        note = (f"approximate: the holds of {approximate} are not exponential (scv != 1), so MVA uses the "
                f"residual-life approximation (mmcost.queueing.mva), whose error grows with the holds' "
                f"variability (for cv > 1 its waits are too long and its throughput too low); simulate() runs "
                f"the DES")
        # one CPU never waits: X(1) = 1 / (think + every hold) is exact for any distribution
        x_one = 1.0 / (net.think + sum(sv * vv for sv, vv in zip(net.service, net.visits)))
        fell = []
        if x < x_one * (1 - 1e-9):
            fell.append(f"below one CPU's exact {x_one * US_PER_S:.6g}/s")
        if self.cpus > 1 and x < x_before * (1 - 1e-9):
            fell.append(f"below {x_before * US_PER_S:.6g}/s at {self.cpus - 1} CPUs")
        if fell:
            note += (f"; its throughput {x * US_PER_S:.6g}/s is {' and '.join(fell)}, a bias of the approximation: "
                     f"a queued lock's throughput does not fall as CPUs are added")
        return note

    def _ticket_analytic(self) -> LockResult:
        if len(self.critical) != 1 or len(self.locks) != 1:
            raise ValueError("the analytic ticket-lock model covers one lock taken once per operation; use simulate()")
        c = self.critical[0]
        lk = self.lock(c.lock)
        n = self.cpus
        k = np.arange(1, n + 1)
        mu = 1.0 / (c.hold.mean_us + lk.handoff_us + lk.handoff_per_waiter_us * (k - 1))
        if self.think_us <= 0:
            raise ValueError("the analytic ticket-lock model needs work outside the lock (think time > 0)")
        r = queueing.finite_source(n, self.think_us, mu)
        pi = r.probabilities
        x = r.throughput
        waiting = float(np.sum((np.arange(n + 1) - 1).clip(0) * pi))
        arrive = (n - np.arange(n + 1)) * pi  # finite source: arrivals see state k with weight (N - k) pi_k
        busy_seen = float(arrive[1:].sum() / arrive.sum())
        per_lock = {lk.name: dict(acquisitions=x, contended=x * busy_seen, wait=waiting / x, util=r.utilization)}
        per_site = {c.site: dict(lock=lk.name, acquisitions=x, contended=x * busy_seen, wait=waiting / x)}
        return self._result(x, per_lock, per_site, "analytic")

    def _result(self, x_per_us, per_lock, per_site, solver, note="", lane: int | None = None) -> LockResult:
        """``per_lock``/``per_site``: acquisitions and contended acquisitions per us, ``wait`` the mean
        wait per acquisition and ``wait_contended`` per contended acquisition; where that is absent,
        wait x acquisitions / contended (the same total wait). The analytic solvers' rows; the DES
        builds its own with the same columns and formulas (:meth:`_from_replications`)."""
        system = {"throughput_per_s": x_per_us * US_PER_S, "cpus": float(self.cpus)}
        nan, cpus = math.nan, self.cpus
        locks, sites = {}, {}  # dict literals in loops: a fit's thousands of solves build these
        for k, d in per_lock.items():
            acq, wait, con = d["acquisitions"], d["wait"], d["contended"]
            locks[k] = {"acquisitions_per_s": acq * US_PER_S, "contended_per_s": con * US_PER_S,
                        "contended_pct": 100 * con / acq if acq else 0.0,
                        "wait_avg_us": d.get("wait_contended", wait * acq / con if con > 0 else 0.0),
                        "wait_per_acquisition_us": wait, "wait_total_us_per_s": wait * acq * US_PER_S,
                        "wait_max_us": d.get("wait_max", nan), "utilization": d["util"]}
        for k, d in per_site.items():
            acq, wait, con = d["acquisitions"], d["wait"], d["contended"]
            sites[k] = {"lock": d["lock"], "acquisitions_per_s": acq * US_PER_S, "contended_per_s": con * US_PER_S,
                        "wait_avg_us": d.get("wait_contended", wait * acq / con if con > 0 else 0.0),
                        "wait_per_acquisition_us": wait, "wait_total_us_per_s": wait * acq * US_PER_S,
                        "wait_max_us": d.get("wait_max", nan), "wait_sd_us": d.get("wait_sd", nan),
                        "spin_share_pct": 100 * wait * acq / cpus}
        self._per_acquisition(locks, sites, lane)
        return LockResult(system, locks, sites, solver, note)

    def _per_acquisition(self, locks: dict, sites: dict, lane: int | None) -> None:
        """Re-express, in place, the rows of each lock some site of which takes
        it ``count`` != 1 times per operation (:class:`Critical`): every site's
        acquisitions and contended acquisitions times its count, and one wait
        per acquisition for the whole lock, its total wait over its
        acquisitions (a queued spinlock serves its waiters in turn, so an
        acquisition waits for the holds ahead of it whatever its own hold; a
        site's spinning is its share of the acquisitions). The totals (wait
        per second, utilisation, throughput) do not change. The longest wait
        and the spread of single waits are not known per acquisition: NaN.
        ``lane``: a lane model's lane (its counts may be arrays)."""
        counts: dict = {}
        for c in self.critical:
            n = c.count if lane is None else lanes.take(c.count, lane)
            if isinstance(n, np.ndarray):
                if not (n == n.flat[0]).all():
                    raise ValueError(f"stages: the count of {c.site!r} differs between lanes; solve each lane "
                                     "(analytic_lanes)")
                n = n.flat[0]
            if c.site in sites and n != 1:
                counts.setdefault(c.lock, {})[c.site] = float(n)
        cpus, nan = float(self.cpus), math.nan
        for lock, at in counts.items():
            mine = {k: r for k, r in sites.items() if r["lock"] == lock}
            n = {k: at.get(k, 1.0) for k in mine}
            visits = sum(r["acquisitions_per_s"] for r in mine.values())
            taken = sum(r["acquisitions_per_s"] * n[k] for k, r in mine.items())
            if taken <= 0:
                continue
            total = sum(r["wait_total_us_per_s"] for r in mine.values())
            wait = total / taken
            # (the simulation's half-width of that mean: its sites' half-widths, weighted as their waits)
            half = sum(r.get("wait_per_acquisition_us_ci99", 0.0) * r["acquisitions_per_s"] for r in mine.values()) / taken
            for k, r in mine.items():
                share = r["contended_per_s"] / r["acquisitions_per_s"] if r["acquisitions_per_s"] else 0.0
                r["acquisitions_per_s"] *= n[k]
                r["contended_per_s"] *= n[k]
                r.update(wait_per_acquisition_us=wait, wait_total_us_per_s=wait * r["acquisitions_per_s"],
                         wait_avg_us=wait / share if share > 0 else 0.0, wait_max_us=nan, wait_sd_us=nan,
                         spin_share_pct=100 * wait * r["acquisitions_per_s"] / US_PER_S / cpus)
                for key in ("acquisitions_per_s_ci99", "contended_per_s_ci99"):
                    if key in r:
                        r[key] *= n[k]
                if "wait_per_acquisition_us_ci99" in r:
                    r.update(wait_per_acquisition_us_ci99=half, wait_avg_us_ci99=half / share if share > 0 else 0.0,
                             spin_share_pct_ci99=100 * half * r["acquisitions_per_s"] / US_PER_S / cpus)
            # the lock's row: its sites' sums (the simulation's sites are contended at rates of their own)
            row, scale = locks[lock], taken / visits
            contended = sum(r["contended_per_s"] for r in mine.values())
            share = contended / taken
            row.update(acquisitions_per_s=taken, contended_per_s=contended, contended_pct=100 * share,
                       wait_per_acquisition_us=wait, wait_max_us=nan,
                       wait_avg_us=total / contended if contended > 0 else 0.0)
            for key in ("acquisitions_per_s_ci99", "contended_per_s_ci99"):
                if key in row:
                    row[key] *= scale
            if "wait_per_acquisition_us_ci99" in row:
                row.update(wait_per_acquisition_us_ci99=half, wait_avg_us_ci99=half / share if share > 0 else 0.0)

    def usl_comparison(self, cpus=range(1, 65), fit_cpus=None):
        """Fit the USL to this system's own analytic throughput curve and show
        where the two disagree.

        ``cpus``: the CPU counts to compare at; ``fit_cpus``: the ones the USL
        sees (default: the first half of ``cpus``), as a user would fit the
        USL to measurements at small N and extrapolate. Returns ``(usl_fit,
        frame)`` with columns cpus, mechanism_per_s, usl_per_s,
        usl_error_pct and in_fit."""
        from dataclasses import replace

        import warnings

        from .fit import PoorFitWarning
        from .usl import UslModel

        ns = [v.count("cpus", n) for n in cpus]
        if len(ns) < 4:
            raise ValueError("cpus must hold at least 4 CPU counts")
        fit_ns = set(ns[: len(ns) // 2] if fit_cpus is None else [v.count("fit_cpus", n) for n in fit_cpus])
        x = np.array([replace(self, cpus=n).analytic().throughput_per_s for n in ns])
        frame = pd.DataFrame({"cpus": ns, "metric": "throughput_per_s", "value": x, "stddev_pct": 1.0})
        with warnings.catch_warnings():  # the USL missing the mechanism is what this shows (usl_error_pct)
            warnings.simplefilter("ignore", PoorFitWarning)
            fit = UslModel(metric="throughput_per_s", n_column="cpus").fit(frame[frame["cpus"].isin(fit_ns)])
        frame["usl_per_s"] = fit.model.evaluate(frame)
        out = pd.DataFrame({"cpus": ns, "mechanism_per_s": x, "usl_per_s": frame["usl_per_s"],
                            "usl_error_pct": 100 * (frame["usl_per_s"] / x - 1), "in_fit": frame["cpus"].isin(fit_ns)})
        return fit, out

    # --- as a Mechanism ------------------------------------------------------------------
    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """Throughput and each lock's and call site's numbers as a result
        (``result["operations_per_s"]``); ``result.details["locks"]`` is the
        :class:`LockResult`."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        return self._result_of(self.analytic() if solver == "analytic" else self.simulate(**simulate_kwargs), solver)

    @classmethod
    def solve_draws(cls, base: LockSystem, draws: list[dict]) -> list[Result] | None:
        """``[base.set(**d).solve() for d in draws]`` (a band's draws of one
        row: holds, handoffs, interrupt rates) as one lane model built from the
        draws' columns and solved in one batch MVA (:meth:`analytic_lanes`),
        with no copy per draw; None where the copies must be made
        (:func:`mmcost.lanes.from_draws`) or the network has no batch solver
        (a ticket lock's birth-death chain)."""
        lane = lanes.from_draws(base, draws, nested=True)
        if lane is None:
            return None
        try:
            results = lane.analytic_lanes(len(draws))
        except (ValueError, lanes.Diverge):
            return None
        return [base._result_of(res, "analytic") for res in results]

    @classmethod
    def solve_many(cls, systems) -> list[Result]:
        """``[s.solve() for s in systems]`` with one batch MVA (:func:`analytic_many`)."""
        return [s._result_of(res, "analytic") for s, res in zip(systems, analytic_many(systems))]

    def _result_of(self, res: LockResult, solver: str) -> Result:
        x = float(res.throughput_per_s)
        half = float(res.system_values.get("throughput_per_s_ci99", 0.0))
        qs = [Quantity("operations_per_s", x, "1/s", x - half, x + half)]
        for lock, r in res.lock_values.items():
            qs += [Quantity(f"{lock}.{col}", float(r[col]), unit, float(r[col]), float(r[col]))
                   for col, unit in (("wait_avg_us", "us"), ("wait_per_acquisition_us", "us"), ("contended_pct", "%"),
                                     ("utilization", "1"))]
        title = f"{self.cpus} CPUs, locks {[lk.name for lk in self.locks]}"
        return Result(tuple(qs), res.solver, 0.99 if solver == "simulated" else 1.0, bool(self.fitted_on), title,
                      details={"locks": res})

    ROW_COLUMNS: ClassVar = ("lock", "call_site")  # what metric_value reads from a row

    _LOCK_COLUMNS: ClassVar = {"lock_acquisitions_per_s": "acquisitions_per_s", "lock_contended_per_s": "contended_per_s",
                               "lock_wait_avg_us": "wait_avg_us", "lock_wait_per_acquisition_us": "wait_per_acquisition_us",
                               "lock_utilization": "utilization"}

    def metric_value(self, result: Result, metric: str, rows: pd.DataFrame) -> np.ndarray:
        """Per-lock metrics read the row's ``lock`` (or ``call_site``) column;
        ``cycles_share_pct`` the row's ``call_site``."""
        res = result.details["locks"]
        if metric == "operations_per_s":
            return np.full(len(rows), result["operations_per_s"])
        if metric == "cycles_share_pct":
            if "call_site" not in rows.columns:
                raise ValueError("cycles_share_pct rows need a call_site column")
            return np.array([float(res.site_values[c]["spin_share_pct"]) if c in res.site_values else 0.0
                             for c in rows["call_site"]])
        col = self._LOCK_COLUMNS[metric]
        out = []
        for r in rows.itertuples():
            site, lock = getattr(r, "call_site", None), getattr(r, "lock", None)
            if isinstance(site, str) and site in res.site_values and col in res.site_values[site]:
                out.append(float(res.site_values[site][col]))
            elif isinstance(lock, str) and lock in res.lock_values:
                out.append(float(res.lock_values[lock][col]))
            else:
                raise ValueError(f"{metric} rows need a lock column naming one of {list(res.locks.index)} "
                                 f"(or a call_site of {list(res.sites.index)})")
        return np.array(out)

    # --- simulation -------------------------------------------------------------------
    def simulate(self, *, ops: int = 200_000, warmup_ops: int = 2_000, replications: int = 8, threads: int | None = None,
                 seed: int = 0, progress: bool = True) -> LockResult:
        """Run the C++ DES: ``replications`` independent runs of ``ops``
        operations each (after ``warmup_ops``), on ``threads`` threads (default:
        all CPUs) without the GIL. Results do not depend on ``threads``. Means
        over replications with 99% Student-t half-widths (``*_ci99``).
        Ctrl-C stops the run and raises KeyboardInterrupt."""
        ops = v.count("ops", ops)
        warmup_ops = v.count("warmup_ops", warmup_ops, minimum=0)
        replications = v.count("replications", replications, minimum=2)
        # sizes, before anything runs: a replication's events (each stage one, each critical section a
        # second for its release, the interrupts during holds one each), the replications' counters, and
        # the DES's wait queues (every partition of a lock has a slot for every CPU)
        critical = self.critical
        per_op = len(self.stages) + len(critical) + self.irq_rate_per_us * sum(c.hold.mean_us for c in critical)
        what = f"{v.MAX_EVENTS:.0e} events per replication at about {per_op:.3g} per operation"
        v.at_most("ops", ops, v.MAX_EVENTS / per_op, what)
        v.at_most("warmup_ops + ops", warmup_ops + ops, v.MAX_EVENTS / per_op, what)
        v.at_most("replications", replications, v.MAX_REPLICATIONS)
        v.at_most("cpus x partitions", self.cpus * sum(int(lk.partitions) for lk in self.locks), v.MAX_TABLE_CELLS,
                  "the simulation's wait queues, one slot per CPU in every partition of a lock")
        threads = v.count("threads", threads) if threads is not None else (os.cpu_count() or 1)
        seed = v.count("seed", seed, minimum=0)
        names = [lk.name for lk in self.locks]
        params = _core.locks.LockSimParams(
            cpus=self.cpus, irq_rate=float(self.irq_rate_per_us), irq_service=float(self.irq_service_us),
            warmup_ops=warmup_ops, ops=ops,
            locks=[_core.locks.LockSpec(name=lk.name, kind=_CORE_LOCK_KINDS[LockKind(lk.kind)], handoff=float(lk.handoff_us),
                                        handoff_per_waiter=float(lk.handoff_per_waiter_us), partitions=int(lk.partitions))
                   for lk in self.locks],
            stages=[_core.locks.Stage(lock=-1, site="", time=s.time._core()) if isinstance(s, Work)
                    else _core.locks.Stage(lock=names.index(s.lock), site=s.site, time=s.hold._core(),
                                           irq_disabled=bool(s.irq_disabled)) for s in self.stages])
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=replications, desc="replications", leave=False)

        def report(done):
            if bar is not None:
                bar.update(done - bar.n)

        try:
            d = _core.locks.simulate(params, replications, threads, seed, progress=report if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
        return self._from_replications(d)

    def _from_replications(self, d) -> LockResult:
        reps = d["time"].size
        # The core's summary of the replications (bind_locks.cpp summary(): the same bits as
        # x.mean(axis=0) and x.std(axis=0, ddof=1) of the per-replication matrix x): the throughput;
        # per lock (blocks of columns) acquisitions and contended per us, mean wait per acquisition,
        # utilisation, mean wait per contended acquisition (perf's avg wait: 0 where none was
        # contended); per stage acquisitions per us, contended per us, mean wait, share of CPU time
        # spinning, mean wait per contended acquisition. Half-widths: t(0.995, reps - 1) sd / sqrt(reps).
        m = d["mean"].tolist()
        q, root = _t99(reps), math.sqrt(reps)
        h = [q * sd / root for sd in d["sd"].tolist()]
        acq, sacq = d["lock_acquisitions"], d["stage_acquisitions"]
        add = np.add.reduce
        nl, ns = acq.shape[1], sacq.shape[1]
        # (the ufuncs' own reductions: what ndarray.max/any/sum call, without their Python wrappers)
        most = np.maximum.reduce
        lock_max, stage_max = most(d["lock_wait_max"], axis=0).tolist(), most(d["stage_wait_max"], axis=0).tolist()
        # pooled standard deviation of single waits across replications (equal sizes): sqrt of their mean
        stage_sd = np.sqrt(add(d["stage_wait_var"], axis=0) / reps).tolist()
        # The result's rows (the columns of LockResult, then the half-widths) straight from the means:
        # lock j's five columns are m[1 + j + i * nl], i < 5 (stage j's likewise from `first`); the first
        # two blocks per us -> per s
        system = {"throughput_per_s": m[0] * US_PER_S, "cpus": float(self.cpus),
                  "throughput_per_s_ci99": h[0] * US_PER_S, "events": float(add(d["events"]))}
        locks, sites = {}, {}
        for j, taken in enumerate(np.logical_or.reduce(acq, axis=0).tolist()):  # the locks acquired at all
            if not taken:
                continue
            a, c, w, u, wc = m[1 + j:1 + 5 * nl:nl]
            ha, hc, hw, hu, hwc = h[1 + j:1 + 5 * nl:nl]
            locks[self.locks[j].name] = {
                "acquisitions_per_s": a * US_PER_S, "contended_per_s": c * US_PER_S,
                "contended_pct": 100 * c / a if a else 0.0, "wait_avg_us": wc, "wait_per_acquisition_us": w,
                "wait_total_us_per_s": w * a * US_PER_S, "wait_max_us": lock_max[j], "utilization": u,
                "acquisitions_per_s_ci99": ha * US_PER_S, "contended_per_s_ci99": hc * US_PER_S,
                "wait_per_acquisition_us_ci99": hw, "utilization_ci99": hu, "wait_avg_us_ci99": hwc}
        first, end, cpus = 1 + 5 * nl, 1 + 5 * nl + 5 * ns, self.cpus
        for j, st in enumerate(self.stages):
            if not isinstance(st, Critical):
                continue
            a, c, w, _, wc = m[first + j:end:ns]
            ha, hc, hw, hs, hwc = h[first + j:end:ns]
            sites[st.site] = {
                "lock": st.lock, "acquisitions_per_s": a * US_PER_S, "contended_per_s": c * US_PER_S,
                "wait_avg_us": wc, "wait_per_acquisition_us": w, "wait_total_us_per_s": w * a * US_PER_S,
                "wait_max_us": stage_max[j], "wait_sd_us": stage_sd[j], "spin_share_pct": 100 * w * a / cpus,
                "acquisitions_per_s_ci99": ha * US_PER_S, "contended_per_s_ci99": hc * US_PER_S,
                "wait_per_acquisition_us_ci99": hw, "spin_share_pct_ci99": hs, "wait_avg_us_ci99": hwc}
        self._per_acquisition(locks, sites, None)
        return LockResult(system, locks, sites, "simulate")
