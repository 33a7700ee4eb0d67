"""Mechanisms as models: every field a fitted parameter, a fixed parameter with a prior, or a column.

A mechanism (:class:`mmcost.swap.SwapModel`, :class:`mmcost.tlb.TlbModel`,
:class:`mmcost.locks.LockSystem`) is a frozen dataclass that describes one
configuration and solves it. Subclassing :class:`Mechanism` makes it a
:class:`mmcost.model.Model` too:

- every field is a *leaf* with a flat name (nested dataclasses are walked;
  tuples of named items prefix their fields with the item's name);
- every finite float leaf is a :class:`~mmcost.model.Parameter`: fitted when
  free, otherwise fixed, and drawn from its prior in prediction bands when it
  has one (``fit.predict(..., fixed_priors=True)``);
- a column of a data frame named like a leaf overrides it for that row, so a
  user's frame with ``folio_kb, processes, cpus, swap_device, kernel, ...``
  fits and predicts with no wrapper; rows are grouped by their overrides and
  each distinct configuration is solved once. An empty cell leaves the leaf
  as it is; the word ``"none"`` sets a leaf that may be None to None
  (``memcg_mb="none"``, or ``inf``: no memcg limit, global reclaim, with a
  ``swapped_share``; ``cpu_model="none"``: the arch's generic preset; a
  switch ``"none"``: the ``kernel``'s value). A number in a column of
  strings (a CSV column that also holds "none") is read as the number;
- leaves declared with ``knob(kernel=True)`` default to ``None`` and take
  their value from :func:`mmcost.kernel.features` of the ``kernel`` leaf;
  a row's ``kernel`` column sets every switch the row does not set itself
  (the model's or its variant's pins give way), and a row's ``cpu_model``
  sets its ``arch`` unless the row sets both;
- leaves a subclass derives from tables (CPU presets, compressors) default
  to ``None`` and are filled in; when a row changes what they derive from
  (``cpu_model``, ``compressor`` ...), a value moves in proportion to the two
  table values, so a cost fitted on one CPU carries its ratio to the preset
  over to another;
- ``variants`` maps a ``variant`` column's values to overrides (kernel
  variants of a before/after pair); a change row's reference takes its
  ``baseline`` variant and any ``baseline_<leaf>`` column.

A parameter named ``<leaf>@<variant>`` (``free=["build_factor@patched"]``)
is the leaf's value in rows of that variant only: a per-variant parameter
with the leaf's bounds and prior, so a difference between two kernel builds
that no mechanism explains has a parameter of its own.

Precedence, lowest first: class default, table value, ``variants``,
per-variant parameter, row column. Fitted values apply to every row (a column of the same name still
wins for its row).
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import functools
import math
import operator
from dataclasses import MISSING, dataclass, field, replace
from typing import ClassVar, NamedTuple

import numpy as np
import pandas as pd

from .model import INFEASIBLE, Model, Parameter, Prior

#: fields of every mechanism that are not leaves
#: joins a leaf and a variant in a per-variant parameter's name: ``build_factor@base+patch``
SCOPE = "@"
BASE_FIELDS = frozenset({"parameters", "name", "default_rel_error", "fitted_on", "variants"})
#: configurations solved per mechanism instance before the cache is cleared
_CACHE_SIZE = 4096
#: the leaf map a copy inherits when only leaf values change (set, with_parameters): walking
#: the fields again is most of the cost of a copy, and fits and bands make thousands
_INHERITED_LEAVES: contextvars.ContextVar = contextvars.ContextVar("inherited_leaves", default=None)
#: leaf maps by (class, Mechanism._shape()): networks built inside a solve share one
_LEAFMAPS: dict = {}
#: per-instance caches, not part of the description (pickling drops them)
_CACHES = ("_leaves", "_cache", "_features", "_switches", "_configured_cache")


@dataclass(frozen=True)
class Knob:
    """What a mechanism field is: ``unit``, physical bounds, a ``prior`` with
    its source, a ``doc`` line; ``kind`` (float, int, bool, str) where the
    default is ``None``; ``kernel``: ``None`` means the ``kernel``'s switch;
    ``choices``: the allowed values of a str leaf."""

    unit: str = ""
    lower: float = 0.0
    upper: float = math.inf
    prior: Prior | None = None
    doc: str = ""
    kind: str = ""
    kernel: bool = False
    choices: tuple = ()
    #: (spelling, value) pairs a column may use: ("x86_64", "x86")
    aliases: tuple = ()
    #: a nested dataclass's leaves are named "<field>_<leaf>" (reuse_mean_us), not "<leaf>"
    prefix: bool = False
    #: cell values that mean the field's None besides the word "none" (memcg_mb: inf, no limit)
    none_values: tuple = ()
    #: a str leaf also takes the path of a file with this suffix besides its choices (cpu_model: a machine
    #: profile, ".toml"); the mechanism's check reads it
    path_suffix: str = ""


def knob(default, *, factory=None, **kwargs):
    """A mechanism field with its :class:`Knob` (``dataclasses.field`` metadata)."""
    meta = {"knob": Knob(**kwargs)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Leaf:
    name: str
    path: tuple  # ((kind, key), ...): ("attr", field) / ("item", index)
    knob: Knob
    kind: str
    #: the field may be None (its annotation says ``| None``): a cell "none" sets it so
    nullable: bool = False


def _kind_of(value, knob: Knob, annotation="") -> str:
    if knob.kind:
        return knob.kind
    ann = str(annotation).split("|")[0].strip()  # "float | None" -> "float"
    if ann in ("float", "int", "bool", "str"):
        return ann
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, enum.Enum) or isinstance(value, str):
        return "str"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    return "object"


def _walk(obj, path: tuple, prefix: str, out: dict, skip=frozenset()):
    for f in dataclasses.fields(obj):
        if f.name in skip or not f.init:
            continue
        val = getattr(obj, f.name)
        here = (*path, ("attr", f.name))
        k = f.metadata.get("knob", Knob())
        if dataclasses.is_dataclass(val) and not isinstance(val, type):
            _walk(val, here, prefix + (f"{f.name}_" if k.prefix else ""), out)
        elif isinstance(val, tuple) and val and all(dataclasses.is_dataclass(x) and hasattr(x, "name") for x in val):
            for i, item in enumerate(val):
                _walk(item, (*here, ("item", i)), f"{prefix}{item.name}_", out, skip=frozenset({"name"}))
        else:
            name = prefix + f.name
            if name in out:
                raise TypeError(f"{type(obj).__name__}: two fields flatten to the leaf name {name!r}")
            out[name] = Leaf(name, here, k, _kind_of(val, k, f.type), nullable="None" in str(f.type))


class LeafMap(dict):
    """Leaves by flat name, and by the top-level field they live in (what a
    copy re-checks and re-syncs when only some fields changed)."""

    @functools.cached_property
    def by_top(self) -> dict[str, tuple[Leaf, ...]]:
        out: dict[str, list] = {}
        for lf in self.values():
            out.setdefault(lf.path[0][1], []).append(lf)
        return {k: tuple(v) for k, v in out.items()}

    @functools.cached_property
    def getters(self) -> dict:
        """A getter per leaf (``operator.attrgetter`` where the path is
        attributes only): what reading one leaf of thousands of copies costs."""
        out = {}
        for name, lf in self.items():
            if all(kind == "attr" for kind, _ in lf.path):
                out[name] = operator.attrgetter(".".join(key for _, key in lf.path))
            else:
                out[name] = functools.partial(_get, path=lf.path)
        return out

    @functools.cached_property
    def lane_leaves(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(float leaves, every other leaf), at any depth: what may differ
        between the configurations of a nested lane model
        (``mmcost.lanes.groups(nested=True)``), and what may not."""
        floats = tuple(n for n, lf in self.items() if lf.kind == "float")
        return floats, tuple(n for n in self if n not in floats)

    @functools.cached_property
    def lane_fields(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(top-level fields that are one float leaf, every other top-level
        field): what may differ between the configurations of one lane model
        (:mod:`mmcost.lanes`), and what may not."""
        floats = tuple(t for t, lfs in self.by_top.items() if [(lf.kind, len(lf.path)) for lf in lfs] == [("float", 1)])
        return floats, tuple(t for t in self.by_top if t not in floats)


@functools.cache
def _switch_inputs() -> frozenset:
    """What a kernel switch's value depends on: the kernel, the arch, and the
    field of the switch's own name (every switch of the catalogue)."""
    from .kernel import switches

    return frozenset(switches()) | {"kernel", "arch"}


def _with_value(p: Parameter, value: float) -> Parameter:
    """``replace(p, value=value)`` for a value already checked against p's
    bounds: a copy of its fields (replace() re-runs __init__, ~10 us, and a
    band copies thousands)."""
    new = object.__new__(Parameter)
    new.__dict__.update(p.__dict__)
    new.__dict__["value"] = value
    return new


def _rebound(p: Parameter, value: float, k: Knob) -> Parameter:
    """``p`` at ``value``, a value outside its bounds that the field itself
    accepts: the bound it crossed widened to the field's own (Knob) bound.

    A parameter's bounds (a study's ``demotion_rate_per_s >= 0.5``) limit
    what a fit may try; they do not limit the configurations a user asks
    about (a row's column, :meth:`Mechanism.set`). Only
    :meth:`Mechanism.with_parameters` holds a value to the parameter's
    bounds. Outside the field's own bounds, the ValueError names the field."""
    if not (k.lower <= value <= k.upper):
        raise ValueError(f"{p.name}: {value:g} is outside its bounds [{k.lower:g}, {k.upper:g}]")
    lower = k.lower if value < p.lower else p.lower
    upper = k.upper if value > p.upper else p.upper
    if not lower < upper:  # a field with one allowed value
        upper = lower + 1.0
    return replace(p, value=value, lower=lower, upper=upper)


def _get(obj, path):
    for kind, key in path:
        obj = getattr(obj, key) if kind == "attr" else obj[key]
    return obj


def _set(obj, path, value):
    return _set_many(obj, [(path, value)])


_UNSET = object()


def _by_head(changes):
    """Changes ``[(path, value)]`` grouped by their first step, in order:
    head -> (a value for the whole of it or _UNSET, the changes below it).
    A value for the whole drops the changes below it that came before (it
    overwrites them) and is the start of those that come after."""
    out: dict = {}
    for path, value in changes:
        head, rest = path[0], path[1:]
        if not rest:
            out[head] = (value, [])
        else:
            out.setdefault(head, (_UNSET, []))[1].append((rest, value))
    return out


def _new_values(obj, changes) -> dict:
    """(kind, key) -> the new value of each field or item of ``obj`` the
    changes reach, each copied once for all the changes below it."""
    out = {}
    for (kind, key), (start, below) in _by_head(changes).items():
        cur = start if start is not _UNSET else (getattr(obj, key) if kind == "attr" else obj[key])
        out[kind, key] = _set_many(cur, below) if below else cur
    return out


def _set_many(obj, changes):
    """``obj`` with every ``(path, value)`` change made, as ``_set`` one
    after the other would, but each object on the way copied once (a band's
    draw sets a dozen leaves of one nested field: a copy per leaf was a
    third of its cost)."""
    new = _new_values(obj, changes)
    attrs = {key: v for (kind, key), v in new.items() if kind == "attr"}
    if len(attrs) < len(new):  # items of a tuple
        obj = list(obj)
        for (kind, key), v in new.items():
            if kind != "attr":
                obj[key] = v
        obj = tuple(obj)
    return replace(obj, **attrs) if attrs else obj


#: name endings and their units, longest first (a field's name ends in its unit)
_UNIT_SUFFIXES = (("_per_work_s", "1/s"), ("_per_s", "1/s"), ("_kib_s", "KiB/s"), ("_mib_s", "MiB/s"),
                  ("_gb_s", "GB/s"), ("_us", "us"), ("_ns", "ns"), ("_ms", "ms"), ("_s", "s"), ("_mb", "MiB"),
                  ("_kb", "KiB"), ("_pages", "pages"), ("_entries", "entries"), ("_pct", "%"), ("_factor", "1"))


def unit_of_name(name: str) -> str:
    for suffix, unit in _UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return "1"


def missing(value) -> bool:
    """An empty cell: None, NA or NaN."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


#: how a cell says "this field is None" (no memcg limit, no CPU preset, the kernel's switch): an empty
#: cell cannot, it means "not set by this row"
NONE = "none"


def says_none(lf: Leaf, value) -> bool:
    """Whether a cell sets the nullable leaf ``lf`` to None: the word
    ``"none"`` (any case), or one of the leaf's ``none_values`` (memcg_mb:
    inf). A ValueError for "none" in a leaf that has no None."""
    if isinstance(value, str) and value.strip().lower() == NONE:
        if not lf.nullable:
            raise ValueError(f"{lf.name} cannot be {value!r}: the field has no unset value")
        return True
    if lf.knob.none_values and isinstance(value, (int, float, np.integer, np.floating)) \
            and not isinstance(value, (bool, np.bool_)):
        return any(value == x for x in lf.knob.none_values)
    return False


def _cell(lf: Leaf, value):
    """A row's cell for leaf ``lf``: a number written as text (a CSV column
    that also holds "none" is read as strings) as the number."""
    if lf.kind in ("int", "float") and isinstance(value, str) and value.strip().lower() != NONE:
        try:
            return float(value.strip())
        except ValueError:
            return value  # coerce names the field
    return value


def coerce(name: str, kind: str, value, choices: tuple = (), aliases: tuple = (), path_suffix: str = ""):
    """A column's cell as the leaf's type, or a ValueError/TypeError naming the leaf."""
    if kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, (int, np.integer, float, np.floating)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):  # a CSV cell
            return value.strip().lower() in ("true", "1")
        raise TypeError(f"{name} must be a bool (True/False), got {value!r}")
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if not float(value).is_integer():
            raise TypeError(f"{name} must be an integer, got {value!r}")
        return int(value)
    if kind == "float":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if math.isnan(value):
            raise ValueError(f"{name} must be a number, got nan")
        return float(value)
    if kind == "str":
        if isinstance(value, enum.Enum):
            value = value.value
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {value!r}")
        value = dict(aliases).get(value, value)
        if choices and value not in choices and not (path_suffix and value.strip().lower().endswith(path_suffix)):
            also = f" or the path of a {path_suffix} file" if path_suffix else ""
            raise ValueError(f"{name} must be one of {list(choices)}{also}, got {value!r}")
        return value
    return value


def _same(a, b) -> bool:
    """Equal, for describe(): an enum as its value, NaN as NaN, a bad comparison as unequal."""
    a, b = (x.value if isinstance(x, enum.Enum) else x for x in (a, b))
    try:
        return bool(a == b) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    except (TypeError, ValueError):
        return False


def _configures(cfg0, mine: dict) -> bool:
    """Whether ``cfg0.set(**mine)`` passes the fields' checks."""
    try:
        cfg0.set(**mine)
    except INFEASIBLE:
        return False
    return True


class _Draw:
    """One parameter set's evaluation of a mechanism's plan.

    A row's configuration at parameters ``p`` is the mechanism set to ``p``,
    then configured by the row. That equals the row's configuration at the
    mechanism's own values (computed once per plan) with ``p`` set on top: a
    parameter the row sets itself wins, and one the row moves with its
    table (a cost when the row names another CPU) is moved by the same
    factor (:meth:`Mechanism._configure`). One copy per row group and draw
    instead of two, no copy of the whole mechanism per draw, and copies a
    batch solver can take together (:meth:`Mechanism.presolve`)."""

    def __init__(self, model: Mechanism, p: dict):
        self.model = model
        self.changed = {k: x for k, x in p.items() if k in model.leaves and model.get(k) != x}
        self.scoped: dict = {}
        for name, val in p.items():
            if SCOPE in name:
                leaf, _, variant = name.partition(SCOPE)
                self.scoped.setdefault(variant, {})[leaf] = val
        self._base = None
        self._solved: dict = {}
        #: a list where a band collects the errors of row groups this draw cannot solve (else None: raise)
        self.infeasible: list | None = None

    @property
    def base(self) -> Mechanism:
        if self._base is None:
            self._base = self.model.set(**self.changed) if self.changed else self.model
        return self._base

    def _full(self, key, over):
        """The solve's cache key at this draw (the row's key plus the draw's
        variant-scoped values the row leaves empty), and those values."""
        extra = {k: x for k, x in self.scoped.get(over.get("variant"), {}).items() if missing(over.get(k))}
        return key + tuple(sorted(extra.items())), extra

    def _config(self, key, over):
        """The row group's configuration at this draw, or None where the
        draw's base mechanism solves it (from its own cache)."""
        split = self._split(key, over)
        if split is None:
            return None
        cfg0, mine = split
        return cfg0.set(**mine) if mine else cfg0

    def _split(self, key, over):
        """(the row group's configuration at the mechanism's own values, the
        leaves this draw sets on it), or None (see :meth:`_config`)."""
        cfg0, set_by_row, moved = self.model._configured(key, over)
        mine = {k: x for k, x in self.changed.items() if k not in set_by_row}
        for k in moved.keys() & mine.keys():  # a drawn value the row moves with its table, as configure() would
            if moved[k] is None:
                return None
            t_new, t_old = moved[k]
            mine[k] = mine[k] * t_new / t_old
        return cfg0, mine

    def solved(self, key, over):
        full, extra = self._full(key, over)
        hit = self._solved.get(full)
        if hit is not None:
            return hit
        cfg = None if extra or not self.changed else self._config(key, over)
        if cfg is not None:
            hit = (cfg, cfg.solve())
        elif extra or not self.changed:  # (at the model's own values its solves are cached on it)
            hit = self.base._solved(full, {**over, **extra})
        else:
            hit = self.base._solved(full, over)
        self._solved[full] = hit
        return hit

    def pending(self, key, over, asked: set):
        """(cache key, the row group's configuration at the mechanism's own
        values, the leaves this draw sets on it) of a solve this draw still
        needs and a batch may do (:meth:`Mechanism.presolve`), or None;
        ``asked`` holds the cache keys already asked for (rows of other
        metrics share them)."""
        full, extra = self._full(key, over)
        if full in asked or full in self._solved or extra or not self.changed:
            return None
        asked.add(full)
        split = self._split(key, over)
        return None if split is None else (full, *split)


@dataclass(frozen=True)
class Mechanism(Model):
    """Base class of the mechanisms. Subclasses define their fields (with
    :func:`knob`), ``METRICS``, :meth:`solve` and :meth:`metric_value`, and
    optionally :meth:`check` (validation), :meth:`table_values` (derived
    leaves) and ``PRIORS`` (name -> Prior for leaves without one)."""

    # keyword-only, so a mechanism's own fields come first positionally (LockSystem(8, locks, stages))
    parameters: tuple = field(default=(), kw_only=True)
    name: str = field(default="mechanism", kw_only=True)
    default_rel_error: float = field(default=0.05, kw_only=True)
    fitted_on: str = field(default="", kw_only=True)
    variants: dict = field(default_factory=dict, kw_only=True)

    FREE: ClassVar[tuple[str, ...]] = ()
    PRIORS: ClassVar[dict] = {}
    #: columns :meth:`metric_value` reads from a row besides the leaves (LockSystem: lock, call_site)
    ROW_COLUMNS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self):
        inherited = _INHERITED_LEAVES.get()
        if inherited is None:
            leaves, changed = self._leafmap(), None
        else:
            leaves, changed = inherited
            _INHERITED_LEAVES.set(None)  # only this object's: not a nested one built by check()
        object.__setattr__(self, "_leaves", leaves)
        # one place that checks every top-level field's type and choices; a copy's unchanged fields
        # were checked when the original was made
        for lf in leaves.values() if changed is None else (x for t in changed for x in leaves.by_top.get(t, ())):
            if len(lf.path) != 1 or lf.kind == "object":
                continue
            name = lf.name
            val = getattr(self, name)
            if val is None or isinstance(val, enum.Enum):
                continue
            val = None if says_none(lf, val) else coerce(name, lf.kind, val, lf.knob.choices, lf.knob.aliases,
                                                         lf.knob.path_suffix)
            object.__setattr__(self, name, val)
        # A copy that set float fields to numbers (a fit's or a band's draws) has nothing for the
        # tables to fill: their inputs (the CPU, the compressor, the kernel: never a float field) are
        # the original's, which filled every field they name, and no changed field is left empty.
        values_only = changed is not None and all(
            [(lf.kind, len(lf.path)) for lf in leaves.by_top.get(t, ())] == [("float", 1)] and getattr(self, t) is not None
            for t in changed)
        table = {} if values_only else self.table_values()
        for n, val in table.items():
            if n in leaves and _get(self, leaves[n].path) is None:
                path = leaves[n].path
                top = path[0][1]
                object.__setattr__(self, top, val if len(path) == 1 else _set(getattr(self, top), path[1:], val))
        self.check()
        for name, val in self.variants.items() if isinstance(self.variants, dict) else ():
            if not isinstance(val, dict):
                raise TypeError(f"variants[{name!r}] must be a dict of leaf overrides, got {type(val).__name__}")
            unknown = [k for k in val if k not in leaves]
            if unknown:
                raise ValueError(f"variants[{name!r}]: unknown field(s) {unknown}; known: {sorted(leaves)}")
        if not isinstance(self.variants, dict):
            raise TypeError(f"variants must be a dict, got {type(self.variants).__name__}")
        object.__setattr__(self, "parameters", self._sync_parameters(leaves, changed))
        Model.__post_init__(self)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in _CACHES}

    # --- leaves -----------------------------------------------------------------------
    def _leafmap(self) -> LeafMap:
        key = self._shape()
        if key is not None:
            cached = _LEAFMAPS.get((type(self), key))
            if cached is not None:
                return cached
        out = LeafMap(self._build_leafmap())
        if key is not None and len(_LEAFMAPS) < 4096:
            _LEAFMAPS[(type(self), key)] = out
        return out

    def _build_leafmap(self) -> dict[str, Leaf]:
        out: dict[str, Leaf] = {}
        _walk(self, (), "", out, skip=BASE_FIELDS)
        return out

    def _shape(self):
        """What this instance's leaf map depends on beyond its class, hashable,
        or None (not cached). A subclass whose leaves are named by the items
        it holds (lock names, call sites) returns those."""
        return None

    @property
    def leaves(self) -> dict[str, Leaf]:
        """Every field by its flat name (what a column or ``free=[...]`` names)."""
        cached = self.__dict__.get("_leaves")
        if cached is None:
            cached = self._leafmap()
            object.__setattr__(self, "_leaves", cached)
        return cached

    def table_origin(self, name: str) -> str:
        """Where table value ``name`` comes from (subclasses: a CPU preset, a machine profile)."""
        return "table"

    def _field_default(self, lf: Leaf):  # (for describe())
        """A leaf's declared default: its dataclass field's, in the class that
        holds it (a nested one's too); ``...`` where it has none (a list item)."""
        holder = self
        for kind, key in lf.path[:-1]:
            holder = getattr(holder, key) if kind == "attr" else holder[key]
        kind, key = lf.path[-1]
        f = getattr(type(holder), "__dataclass_fields__", {}).get(key) if kind == "attr" else None
        return f.default if f is not None and f.default is not MISSING else ...

    def column_names(self) -> set[str]:
        """The leaves, ``variant`` and :attr:`ROW_COLUMNS`: what a row may set."""
        return set(self.leaves) | {"variant", *self.ROW_COLUMNS}

    def get(self, name: str):
        if name not in self.leaves:
            raise KeyError(f"{type(self).__name__} has no field {name!r}; known: {sorted(self.leaves)}")
        return _get(self, self.leaves[name].path)

    def set(self, **values) -> Mechanism:
        """A copy with leaves changed by flat name (validated again). Where a
        change can move a table (a str leaf: the CPU preset or machine
        profile, the compressor, the arch), every leaf a table fills that
        ``values`` does not set moves with its table as :meth:`configure`
        moves a row's (x t_new / t_old; a value set or fitted before moves
        with it too): ``m.set(cpu_model=...)`` has the other CPU's costs, not
        the first one's under the second's name (as it did before 2026-12-05)."""
        values = self._cpu_arch(values)
        top = self._top_changes(values)
        if not top:
            return self
        new = self._copy(top, values)
        if all(self.leaves[n].kind in ("float", "int", "bool") for n in values):
            return new  # (no table reads a number or a switch: the fits' and the bands' copies)
        return self._follow_tables(new, values)[0]

    def _cpu_arch(self, values: dict) -> dict:
        """``values`` with ``arch`` the preset's where they name a ``cpu_model`` and no arch: a preset names
        its architecture ("none": the row's or model's arch)."""
        cpu = values.get("cpu_model")
        if isinstance(cpu, str) and cpu.strip().lower() != NONE and "arch" not in values and "arch" in self.leaves:
            from .cpu_models import get

            return {**values, "arch": get(cpu).arch}
        return values

    def _follow_tables(self, new: Mechanism, explicit) -> tuple[Mechanism, dict]:
        """``new`` (a copy of this mechanism with ``explicit`` leaves set) with
        every other table-derived leaf moved from this mechanism's table value
        to ``new``'s: a number scaled by t_new / t_old, a choice (arch) that
        followed its table following it on. Returns (it, the scales: name ->
        (t_new, t_old), or None for a choice)."""
        old_t = self.table_values()
        moved, scales = {}, {}
        if not old_t:
            return new, scales
        new_t = new.table_values()
        for k, t_new in new_t.items():
            t_old = old_t.get(k)
            if k in explicit or k not in new.leaves or t_old is None or t_old == t_new:
                continue
            if not isinstance(t_old, (int, float)) or isinstance(t_old, bool):
                if new.get(k) == t_old:  # a choice (arch) that followed its table follows it on
                    moved[k], scales[k] = t_new, None
                continue
            if t_old <= 0 or new.get(k) is None:
                continue
            moved[k], scales[k] = new.get(k) * t_new / t_old, (t_new, t_old)
        if moved:
            top = new._top_changes(moved)
            new = new._copy(top, moved) if top else new
        return new, scales

    def _copy(self, top: dict, values: dict) -> Mechanism:
        """``replace(self, **top)``. When the change only sets leaf values of
        known kinds (the fields' shape is the same), the copy keeps the leaf
        map and is made from the fields as they are."""
        leaves = self.leaves
        if any(leaves[n].kind == "object" for n in values):
            return replace(self, **top)
        # replace() would call __init__ with every field again (a frozen setattr each); the copy
        # takes the fields as they are, sets the changed ones, and validates as __init__ would
        new = object.__new__(type(self))
        state = self.__dict__.copy()
        for k in _CACHES:
            state.pop(k, None)
        if top.keys().isdisjoint(_switch_inputs()):
            # the kernel, the arch and every switch field are the original's: so are the switches,
            # and the original and its copies share one cache of them (a band makes thousands)
            known = self.__dict__.get("_switches")
            if known is None:
                known = {}
                object.__setattr__(self, "_switches", known)
            state["_switches"] = known
            if "_features" in self.__dict__:
                state["_features"] = self.__dict__["_features"]
        state.update(top)
        new.__dict__.update(state)
        token = _INHERITED_LEAVES.set((leaves, frozenset(top)))
        try:
            new.__post_init__()
        finally:
            _INHERITED_LEAVES.reset(token)
        return new

    def _top_changes(self, values: dict) -> dict:
        """Top-level field values after ``values`` (flat names), so one replace
        validates every change together."""
        leaves = self.leaves
        changes = []
        for name, val in values.items():
            if name not in leaves:
                raise ValueError(f"{type(self).__name__} has no field {name!r}; known: {sorted(leaves)}")
            lf = leaves[name]
            val = (None if val is None or val is pd.NA or says_none(lf, val)
                   else coerce(name, lf.kind, val, lf.knob.choices, lf.knob.aliases, lf.knob.path_suffix))
            changes.append((lf.path, val))
        return {key: v for (_, key), v in _new_values(self, changes).items()}  # top-level fields are attrs

    def check(self) -> None:
        """Validate the configuration (subclasses); raise naming the field."""

    def table_values(self) -> dict[str, float]:
        """Leaf values derived from tables for the current configuration
        (subclasses); they fill the fields left empty. They may depend on any
        field but a float one (a copy that changes only float fields does not
        ask again)."""
        return {}

    def switch(self, name: str):
        """A kernel switch: the field's value, or the ``kernel``'s when it is None
        (cached per instance: a solve asks for a dozen, and instances are immutable)."""
        known = self.__dict__.get("_switches")
        if known is None:
            known = {}
            object.__setattr__(self, "_switches", known)
        elif name in known:
            return known[name]
        val = self._switch(name)
        if name in _switch_inputs():  # what copies share depends on these only
            known[name] = val
        return val

    def _switch(self, name: str):
        val = self.get(name)
        if val is not None:
            return val
        feats = self.__dict__.get("_features")
        if feats is None:
            from .kernel import features

            arch = self.get("arch") if "arch" in self.leaves else "x86"
            arch = arch.value if isinstance(arch, enum.Enum) else arch
            feats = features(self.get("kernel"), arch or "x86")
            object.__setattr__(self, "_features", feats)
        if name not in feats:
            raise ValueError(f"{name}: the kernel catalogue has no switch of that name")
        return feats[name]

    # --- parameters -------------------------------------------------------------------
    def _sync_parameters(self, leaves: dict[str, Leaf], changed=None) -> tuple[Parameter, ...]:
        """The parameters of the float leaves at their current values;
        ``changed``: the only top-level fields whose values may differ from
        ``self.parameters`` (a copy's), None for all."""
        if changed is not None:
            fast = self._sync_changed(leaves, changed)
            if fast is not None:
                return fast
        old = {p.name: p for p in self.parameters}
        free = None  # the FREE default, read once (a subclass may compute it from its leaves)
        out = []
        for name, lf in leaves.items():
            if lf.kind != "float":
                continue
            if changed is not None and lf.path[0][1] not in changed and name in old:
                out.append(old[name])
                continue
            val = _get(self, lf.path)
            if val is None or not math.isfinite(float(val)):
                continue
            val = float(val)
            k = lf.knob
            if name in old:
                p = old[name]
                if not (p.lower <= val <= p.upper):
                    p = _rebound(p, val, k)
                out.append(p if p.value == val else replace(p, value=val))
                continue
            lower, upper = k.lower, k.upper
            if not (lower <= val <= upper):
                raise ValueError(f"{name}: {val:g} is outside its bounds [{lower:g}, {upper:g}]")
            if not lower < upper:
                upper = lower + 1.0
            prior = k.prior or self.PRIORS.get(name)
            if free is None:
                free = frozenset(self.FREE)
            out.append(Parameter(name, val, k.unit or unit_of_name(name), lower, upper,
                                 free=name in free, prior=prior, doc=k.doc))
        out += [p for name, p in old.items() if SCOPE in name and name.split(SCOPE, 1)[0] in leaves]
        return tuple(out)

    def _sync_changed(self, leaves: LeafMap, changed) -> tuple[Parameter, ...] | None:
        """:meth:`_sync_parameters` of a copy whose changed fields only change
        the values of parameters it already has (what a fit or a band does):
        those are replaced in place. None where a parameter would appear or
        disappear (the full pass decides)."""
        out = list(self.parameters)
        pos = {p.name: i for i, p in enumerate(out)}
        for top in changed:
            for lf in leaves.by_top.get(top, ()):
                if lf.kind != "float":
                    continue
                i = pos.get(lf.name)
                val = _get(self, lf.path)
                if i is None or val is None or not math.isfinite(float(val)):
                    if i is None and (val is None or not math.isfinite(float(val))):
                        continue  # no parameter before, none now
                    return None
                p, val = out[i], float(val)
                if not (p.lower <= val <= p.upper):
                    out[i] = _rebound(p, val, lf.knob)
                elif p.value != val:
                    out[i] = _with_value(p, val)
        return tuple(out)

    def with_parameters(self, **changes) -> Mechanism:
        """As :meth:`Model.with_parameters`; a value also changes the field."""
        params = self.params
        unknown = [k for k in changes if k not in params]
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {unknown}; known: {list(params)}")
        settings, values = {}, {}
        for k, c in changes.items():
            if isinstance(c, dict):
                c = dict(c)
                if "value" in c:
                    values[k] = c["value"] = float(c["value"])
                settings[k] = c
            else:
                values[k] = float(c)
        for k, val in values.items():  # a parameter's value stays in its bounds (a row's column need not)
            lower = settings.get(k, {}).get("lower", params[k].lower)
            upper = settings.get(k, {}).get("upper", params[k].upper)
            if not (lower <= val <= upper):
                raise ValueError(f"{k}: {val:g} is outside its bounds [{lower:g}, {upper:g}]")
        scoped = {k: values.pop(k) for k in list(values) if SCOPE in k}
        new = tuple(replace(p, **settings[p.name]) if p.name in settings else p for p in self.parameters)
        new = tuple(replace(p, value=scoped[p.name]) if p.name in scoped else p for p in new)
        top = self._top_changes(values)
        if settings or scoped:
            top["parameters"] = new
        return self._copy(top, values) if top else self

    def with_free(self, free) -> Mechanism:
        """Exactly the fields ``free`` are fitted; every other parameter is fixed."""
        if isinstance(free, str) or not hasattr(free, "__iter__"):
            raise TypeError(f"free must be a list of field names, got {free!r}")
        free = list(free)
        model = self.per_variant([n for n in free if SCOPE in n])
        if model is not self:
            return model.with_free(free)
        leaves, params = self.leaves, self.params
        for n in free:
            if SCOPE in n:
                continue
            if n not in leaves:
                raise ValueError(f"free: {type(self).__name__} has no field {n!r}; known: {sorted(leaves)}")
            if n not in params:
                lf = leaves[n]
                what = {"int": "a count", "bool": "a switch", "str": "a choice"}.get(lf.kind, "not a finite number")
                raise ValueError(f"free: {n} is {what}; it can be a configuration column, not a fitted parameter")
        return self.with_parameters(**{p: {"free": p in free} for p in params})

    def per_variant(self, names) -> Mechanism:
        """This mechanism with a parameter for each ``<leaf>@<variant>`` in
        ``names`` it lacks: a copy of the leaf's parameter (bounds, prior,
        value) that sets the leaf in rows of that variant only. A kernel
        build's nuisance offset (``build_factor@base+patch``) is one."""
        params = self.params
        add = []
        for n in names:
            leaf, _, variant = n.partition(SCOPE)
            if not variant:
                raise ValueError(f"free: {n!r} names no variant after {SCOPE!r}")
            if leaf not in params:
                known = sorted(self.params)
                raise ValueError(f"free: {n!r}: {leaf!r} is not a fitted parameter of {type(self).__name__}; "
                                 f"known: {known}")
            if n not in params:
                base = params[leaf]
                add.append(replace(base, name=n, free=True, doc=f"{leaf} in rows of variant {variant!r}"))
        return replace(self, parameters=self.parameters + tuple(add)) if add else self

    def fit(self, df: pd.DataFrame, free=None, **kwargs):
        """Fit to a tidy frame (any rows whose ``metric`` this mechanism predicts).

        ``free``: the fields to fit (default: those marked free, else
        ``FREE``). Other keyword arguments go to :func:`mmcost.fit.fit`."""
        from .fit import fit

        model = self.with_free(free) if free is not None else self
        if not model.free_names:
            model = model.with_free(self.FREE)
        res = fit(model, df, **kwargs)
        return replace(res, model=replace(res.model, fitted_on=f"{len(res.data)} rows, free {res.names}"))

    # --- evaluation -------------------------------------------------------------------
    def solve(self):  # pragma: no cover - subclasses
        raise NotImplementedError

    def metric_value(self, result, metric: str, rows: pd.DataFrame) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def configure(self, **overrides) -> Mechanism:
        """This mechanism with a row's overrides (variant first, then columns),
        moving table-derived leaves with their tables."""
        return self._configure(overrides)[0]

    def _configure(self, overrides: dict) -> tuple[Mechanism, frozenset, dict]:
        """:meth:`configure`, the leaves the row set, and the ones it moved:
        name -> (t_new, t_old), the leaf's table values after and before (its
        value moved from x to x * t_new / t_old), or None for a choice that
        followed its table. The tables depend on no float leaf, so neither do
        the scales: at other parameter values a row moves its leaves alike."""
        over = {k: v for k, v in overrides.items() if not missing(v)}
        variant = over.pop("variant", None)
        row = set(over)
        if variant is not None and self.variants:
            if variant not in self.variants:
                raise ValueError(f"variant: {variant!r} is not one of this model's variants {list(self.variants)}")
            over = {**self.variants[variant], **over}
        over = {k: _cell(self.leaves[k], v) for k, v in over.items() if k in self.leaves}
        if "kernel" in over:  # the switches follow the row's kernel (or its variant's) unless set with it
            over.update(self._kernel_followers(row if "kernel" in row else set(over)))
        over = self._cpu_arch(over)
        if not over:
            return self, frozenset(), {}
        top = self._top_changes(over)
        new, scales = self._follow_tables(self._copy(top, over) if top else self, over)
        return new, frozenset(over), scales

    def _kernel_followers(self, explicit) -> dict:
        """Leaves a ``kernel`` set with ``explicit`` leaves resets to None, so
        they take that kernel's values: every kernel switch not in
        ``explicit`` (a subclass adds a choice that stands for one)."""
        return {lf.name: None for lf in self.leaves.values()
                if lf.knob.kernel and lf.name not in explicit and self.get(lf.name) is not None}

    def _solved(self, key, overrides):
        cache = self.__dict__.get("_cache")
        if cache is None or len(cache) > _CACHE_SIZE:
            cache = {}
            object.__setattr__(self, "_cache", cache)
        if key not in cache:
            cfg = self.configure(**overrides)
            cache[key] = (cfg, cfg.solve())
        return cache[key]

    def prepare(self, metric, rows: pd.DataFrame):
        """Rows grouped by their overrides (the leaf and ``variant`` columns):
        each distinct configuration is configured and solved once per
        parameter set."""
        scoped = any(SCOPE in n for n in self.params)
        cols = [c for c in rows.columns if c in self.leaves or (c == "variant" and (self.variants or scoped))]
        if not cols:
            groups = {(): list(range(len(rows)))}
        else:
            cells = rows[cols].astype(object).to_numpy()
            groups = {}
            for i, row in enumerate(cells):
                key = tuple(None if missing(x) else (x.item() if isinstance(x, np.generic) else x) for x in row)
                groups.setdefault(key, []).append(i)
        out = []
        for key, idx in groups.items():
            idx = np.asarray(idx, dtype=int)
            out.append((key, dict(zip(cols, key)), idx, rows.iloc[idx]))
        return len(rows), out

    def context(self, p):
        """What every part of a plan shares at parameter set ``p``."""
        return _Draw(self, p)

    def presolve(self, parts, contexts) -> None:
        """Solve what a plan's parts need at every draw (``contexts``) in
        batches, one per configuration class (:meth:`solve_many`), and leave
        the answers where :meth:`predict_prepared` looks for them."""
        by_row: dict = {}  # id(cfg0) -> (cfg0, [(context, cache key, the draw's leaves)])
        asked = [set() for _ in contexts]
        for _, _, now, ref in parts:
            for prepared in (now, ref):
                for key, over, _, _ in prepared[1] if prepared is not None else ():
                    for ctx, seen in zip(contexts, asked):
                        todo = ctx.pending(key, over, seen)
                        if todo is not None:
                            full, cfg0, mine = todo
                            by_row.setdefault(id(cfg0), (cfg0, []))[1].append((ctx, full, mine))
        by_class: dict = {}
        for cfg0, items in by_row.values():
            try:
                results = type(cfg0).solve_draws(cfg0, [mine for _, _, mine in items])
            except INFEASIBLE:  # some draws' configurations are refused: batch the others
                items = [it for it in items if _configures(cfg0, it[2])]
                try:
                    results = type(cfg0).solve_draws(cfg0, [mine for _, _, mine in items])
                except INFEASIBLE:
                    continue  # each draw is solved where it is asked, and fails alone
            if results is not None:
                for (ctx, full, _), res in zip(items, results):
                    ctx._solved[full] = (cfg0, res)
                continue
            for ctx, full, mine in items:
                try:
                    by_class.setdefault(type(cfg0), []).append((ctx, full, cfg0.set(**mine) if mine else cfg0))
                except INFEASIBLE:
                    pass  # refused again, with its error, where the draw asks for it
        for cls, group in by_class.items():
            try:
                solved = cls.solve_many([cfg for _, _, cfg in group])
            except INFEASIBLE:
                continue  # each solved (or refused) alone where its draw asks for it
            for (ctx, full, cfg), res in zip(group, solved):
                ctx._solved[full] = (cfg, res)

    @classmethod
    def solve_draws(cls, base, draws: list[dict]) -> list | None:
        """``[base.set(**d).solve() for d in draws]`` without the copies, or
        None where this class cannot (then the copies are made and solved by
        :meth:`solve_many`). A mechanism that solves lane models from columns
        of leaf values (TlbModel) overrides this; its results stand with
        ``base`` for :meth:`metric_value`, which must not read a drawn leaf."""
        return None

    @classmethod
    def solve_many(cls, configurations) -> list:
        """``[c.solve() for c in configurations]``; a mechanism whose solver
        takes a batch overrides this (LockSystem, SwapModel: one batch MVA)."""
        return [c.solve() for c in configurations]

    def predict_prepared(self, metric, prepared, p, context) -> np.ndarray:
        """The rows' ``metric`` at ``p``. Where ``context.infeasible`` is a
        list (a band's draws, :meth:`Plan.many` with ``errors``), a row group
        this draw cannot configure or solve is NaN and its error is kept
        there; otherwise the error propagates."""
        n, groups = prepared
        out = np.empty(n)
        for key, over, idx, sub in groups:
            try:
                cfg, res = context.solved(key, over)
                out[idx] = np.asarray(cfg.metric_value(res, metric, sub), dtype=float)
            except INFEASIBLE as exc:
                if getattr(context, "infeasible", None) is None:
                    raise
                context.infeasible.append(f"{type(exc).__name__}: {exc}")
                out[idx] = np.nan
        return out

    def _configured(self, key, over):
        """A row configuration of this mechanism, once per key: the plan's
        groups at this mechanism's own parameter values."""
        cache = self.__dict__.get("_configured_cache")
        if cache is None or len(cache) > _CACHE_SIZE:
            cache = {}
            object.__setattr__(self, "_configured_cache", cache)
        if key not in cache:
            cache[key] = self._configure(over)
        return cache[key]

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        return self.predict_prepared(metric, self.prepare(metric, rows), p, self.context(p))

    def describe(self) -> pd.DataFrame:
        """Every field: its value, kind, unit, whether it is fitted, its prior
        and doc, and ``origin``: where the value comes from (``set``: given
        or fitted; ``default``: the field's own; a table's, e.g. ``preset
        generic-x86``, ``compressor lz4``, or ``profile vm1.toml`` for a cost
        measured by ``mmcost measure machine``)."""
        params = self.params
        tables = self.table_values()
        rows = []
        for name, lf in self.leaves.items():
            val = _get(self, lf.path)
            p = params.get(name)
            unit = p.unit if p else (lf.knob.unit or (unit_of_name(name) if lf.kind in ("float", "int") else ""))
            default = self._field_default(lf)
            if default is None and name in tables and val == tables[name]:  # a field left to its table
                origin = self.table_origin(name)
            else:
                origin = "default" if _same(val, default) else "set"
            rows.append(dict(field=name, value=val.value if isinstance(val, enum.Enum) else val, kind=lf.kind,
                             unit=unit, origin=origin, free=bool(p and p.free),
                             kernel_switch=lf.knob.kernel,
                             prior="" if not (p and p.prior) else f"{p.prior.value:g} ± {p.prior.width:g} ({p.prior.source})",
                             doc=lf.knob.doc))
        return pd.DataFrame(rows)


class Quantity(NamedTuple):
    """One solver output: ``value`` with ``lo``/``hi`` at ``level`` (equal for
    an exact solver). A named tuple: a solve makes a dozen, a band thousands."""

    name: str
    value: float
    unit: str
    lo: float
    hi: float


@dataclass(frozen=True)
class Result:
    """A mechanism's solution: named quantities (``value, lo, hi`` at
    ``level``), the solver, whether the costs were fitted, and any extra
    objects (``details``). ``result["swapout_kib_s"]`` is the value."""

    quantities: tuple[Quantity, ...]
    solver: str
    level: float
    calibrated: bool
    title: str = ""
    details: dict = field(default_factory=dict, repr=False)

    def __getitem__(self, name: str) -> float:
        for q in self.quantities:
            if q.name == name:
                return q.value
        if name in self.details:
            return self.details[name]
        raise KeyError(f"no quantity {name!r}; have {[q.name for q in self.quantities]}")

    def __contains__(self, name) -> bool:
        return any(q.name == name for q in self.quantities) or name in self.details

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([dict(quantity=q.name, value=q.value, lo=q.lo, hi=q.hi, unit=q.unit)
                             for q in self.quantities]).set_index("quantity")

    @property
    def note(self) -> str:
        return "" if self.calibrated else "costs are unfitted defaults (priors): fit the model before quoting numbers"

    def __str__(self) -> str:
        lines = [f"{self.title} ({self.solver}" + (f", {self.level:.0%} interval" if self.solver != "analytic" else "")
                 + ")"]
        for q in self.quantities:
            band = f"  [{q.lo:.4g}, {q.hi:.4g}]" if q.lo != q.hi else ""
            lines.append(f"  {q.name:<34} {q.value:>12.5g} {q.unit}{band}")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(f"<tr><td>{escape(q.name)}</td><td>{q.value:.5g}</td><td>{q.lo:.5g}</td><td>{q.hi:.5g}</td>"
                       f"<td>{escape(q.unit)}</td></tr>" for q in self.quantities)
        note = f"<p><i>{escape(self.note)}</i></p>" if self.note else ""
        return (f"<p><b>{escape(self.title)}</b> ({escape(self.solver)}, level {self.level:.0%})</p><table><tr><th>quantity</th>"
                f"<th>value</th><th>lo</th><th>hi</th><th>unit</th></tr>{rows}</table>{note}")

