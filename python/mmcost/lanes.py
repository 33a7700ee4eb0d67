"""Lanes: one mechanism's arithmetic over many parameter sets at once.

A band's draws (and a sweep's rows) configure the same mechanism many times
over, differing only in the values of float fields. A *lane model* holds those
fields as NumPy arrays, one element per configuration, and everything else as
the configurations share it; a mechanism whose solve is written with the
helpers below (:func:`minimum`, :func:`maximum`, :func:`any_of`) runs its
Python once for all of them, and the C++ core solves the networks as one batch
(``mva_top_batch``). Each lane equals the configuration's own solve to
rounding: the arithmetic is the same elementwise IEEE operations, in the
same order; a station whose hold is zero in some lanes is kept in all (a
zero-service station adds nothing to a cycle, but the core's vectorised sums
over stations may round differently with it).

A TlbModel's draws also move float leaves inside nested fields (the costs,
the TLB streams, the perf counters): its lane models hold arrays there too
(``groups``/``stack`` with ``nested=True``), and a band builds them straight
from the draws' columns (:func:`from_columns`, ``Mechanism.solve_draws``),
checked lane by lane, without a copy of the mechanism per draw. A branch the
lanes would take different ways, where computing both sides in every lane is
not worth it, raises :class:`Diverge` (:func:`same`) and the group is solved
configuration by configuration.

A fixed point a solve searches (kswapd's share of the reclaim, say) is found
for all lanes together by :func:`find_root` (Chandrupatla's method, SciPy's
elementwise ``find_root``), and for one configuration by Brent's: a lane's
root and its configuration's own agree within the search's tolerance.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from . import _validate as v
from .mechanism import Mechanism, _new_values, _switch_inputs

#: a group smaller than this is solved configuration by configuration: a lane
#: model costs what about 2-3 solves of one SwapModel do (benchmarks/bench_speed.py)
MIN_LANES = 4


def minimum(a, b):
    """``min(a, b)``, elementwise where either is an array."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.minimum(a, b)
    return min(a, b)


def maximum(a, b):
    """``max(a, b)``, elementwise where either is an array."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.maximum(a, b)
    return max(a, b)


def any_of(condition) -> bool:
    """Whether ``condition`` holds in any lane (a scalar condition as it is)."""
    if isinstance(condition, np.ndarray):
        return bool(condition.any())
    return bool(condition)


def all_of(condition) -> bool:
    """Whether ``condition`` holds in every lane (a scalar condition as it is)."""
    if isinstance(condition, np.ndarray):
        return bool(condition.all())
    return bool(condition)


def divide(num, den, fill):
    """``num / den`` where ``den > 0``, else ``fill``; elementwise (without
    warnings for the lanes filled) where either is an array."""
    if isinstance(num, np.ndarray) or isinstance(den, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / den, fill)
    return num / den if den > 0 else fill


def where(condition, a, b):
    """``a if condition else b``, elementwise where ``condition`` is an array
    (both sides are then computed in every lane: a side that is invalid in
    the lanes it is not taken in must not warn, see ``np.errstate``)."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, a, b)
    return a if condition else b


class Diverge(Exception):
    """A branch of a solve that the lanes of one lane model do not all take
    the same way (see :func:`same`): the group is solved configuration by
    configuration instead."""


def same(value):
    """``value`` where it is one for every lane: a scalar as it is, an array
    whose lanes are all equal as its first; otherwise :class:`Diverge`. For
    branches whose two sides are not worth computing in every lane."""
    if not isinstance(value, np.ndarray):
        return value
    first = value.flat[0]
    if not (value == first).all():
        raise Diverge
    return first.item()


def real(value) -> float | np.ndarray:
    """``float(value)``, or the array as it is."""
    return value if isinstance(value, np.ndarray) else float(value)


def total(values) -> float | np.ndarray:
    """The sum of ``values`` added left to right, scalars and arrays alike
    (``sum()`` of floats compensates its rounding from Python 3.12 on, which
    an array's additions would not): a lane's sum is its configuration's."""
    return functools.reduce(operator.add, values)


def take(value, lane: int):
    """Lane ``lane`` of ``value`` (an array), or ``value`` (shared by every lane)."""
    return value[lane].item() if isinstance(value, np.ndarray) else value


def width(value, lanes: int) -> np.ndarray:
    """``value`` as an array of ``lanes`` lanes."""
    return np.broadcast_to(np.asarray(value, dtype=float), (lanes,))


def groups(models: list[Mechanism], nested: bool = False) -> list[list[int]]:
    """Indices of ``models`` that can share one lane model: the same class,
    the same value of every field but the float ones, and the same float
    fields left empty. ``nested``: float leaves inside nested fields (a
    TlbModel's ``costs.irq_us``, a stream's entries) may differ too; the
    mechanism's solve takes arrays there (see :func:`stack`)."""
    out: dict = {}
    if nested:
        for i, m in enumerate(models):
            leaves = m.leaves
            get = leaves.getters
            floats, others = leaves.lane_leaves
            key = (type(m), tuple(get[n](m) for n in others), tuple(get[n](m) is None for n in floats))
            out.setdefault(key, []).append(i)
        return list(out.values())
    for i, m in enumerate(models):
        d = m.__dict__
        floats, others = m.leaves.lane_fields
        key = (type(m), others, tuple(d[f] for f in others), tuple(d[f] is None for f in floats))
        out.setdefault(key, []).append(i)
    return list(out.values())


def stack(models: list[Mechanism], nested: bool = False) -> Mechanism:
    """The lane model of ``models`` (one of :func:`groups`): the first one,
    with each float field that differs between them as an array (with
    ``nested``, each float leaf: the nested objects on its way are copies
    holding arrays). It is for solving only: never validated, never
    returned to a user."""
    first = models[0]
    leaves = first.leaves
    columns = {}
    for name in leaves.lane_leaves[0] if nested else leaves.lane_fields[0]:
        get = leaves.getters[name]
        ref = get(first)
        if ref is None:
            continue
        arr = np.fromiter(map(get, models), dtype=float, count=len(models))
        if not (arr == ref).all():
            columns[name] = arr
    return from_columns(first, columns, len(models))


def from_columns(base: Mechanism, columns: dict, n: int) -> Mechanism:
    """``base`` as a lane model of ``n`` lanes: each leaf named in ``columns``
    (flat name -> array of ``n`` values) holds its array, every other field
    is ``base``'s. Nested objects on the way to a leaf are copies holding the
    arrays. For solving (and checking, see ``_validate.checking_lanes``) only."""
    leaves = base.leaves
    lane = object.__new__(type(base))
    lane.__dict__.update(base.__dict__)
    for k in ("_cache", "_configured_cache"):  # solutions of base's own values
        lane.__dict__.pop(k, None)
    below = []
    for name, arr in columns.items():
        arr = np.asarray(arr, dtype=float)
        arr.flags.writeable = False  # `x += y` on a field would change every later read of it
        path = leaves[name].path
        if len(path) == 1:
            lane.__dict__[path[0][1]] = arr
        else:
            below.append((path, arr))
    for (_, top), value in _new_values(base, below).items():
        lane.__dict__[top] = value
    lane.__dict__["_lanes"] = n
    if not _switch_inputs().isdisjoint(leaves[name].path[0][1] for name in columns):
        lane.__dict__["_switches"] = {}  # a float switch differs: the shared switch cache is not theirs
    return lane


def from_draws(base: Mechanism, draws: list[dict], nested: bool = False) -> Mechanism | None:
    """The lane model of ``[base.set(**d) for d in draws]`` without the
    copies (a band's draws of one row, ``Mechanism.solve_draws``): each
    drawn leaf's column checked against its parameter's bounds as a copy's
    would be, and the lane model by the mechanism's own ``check()`` lane by
    lane (``_validate.checking_lanes``). None where the copies must be made:
    fewer than :data:`MIN_LANES` draws, a leaf that is not a float parameter
    (or, without ``nested``, a nested one), or a check that fails (the
    copies then raise the first failing draw's own error)."""
    n = len(draws)
    if n < MIN_LANES:
        return None
    leaves, params = base.leaves, base.params
    columns = {}
    for name in set().union(*draws):
        lf, p = leaves.get(name), params.get(name)
        if lf is None or p is None or lf.kind != "float" or (len(lf.path) > 1 and not nested):
            return None
        ref = leaves.getters[name](base)
        if ref is None:
            return None
        col = np.array([d.get(name, ref) for d in draws], dtype=float)
        if not (np.isfinite(col).all() and (col >= p.lower).all() and (col <= p.upper).all()):
            return None
        if not (col == ref).all():
            columns[name] = col
    lane = from_columns(base, columns, n)
    try:
        with v.checking_lanes():
            lane.check()
    except (ValueError, TypeError, ArithmeticError):  # (a message formatting an array fails as TypeError)
        return None
    return lane


def views(lane: Mechanism) -> list[Mechanism]:
    """One configuration per lane of a lane model whose arrays are all in
    top-level fields (``nested=False``): the lane model's fields with each
    array's lane as a float, as a copy with those values would hold them
    (the parameters are not synced: a view is for reading fields only)."""
    n = count(lane)
    arrays = {k: x.tolist() for k, x in lane.__dict__.items() if isinstance(x, np.ndarray)}
    state = {k: x for k, x in lane.__dict__.items() if k not in arrays and k != "_lanes"}
    out = []
    for i in range(n):
        view = object.__new__(type(lane))
        view.__dict__.update(state)
        for k, x in arrays.items():
            view.__dict__[k] = x[i]
        out.append(view)
    return out


def count(model) -> int | None:
    """The lanes of a lane model (:func:`stack`), or None for one configuration."""
    return model.__dict__.get("_lanes")


def find_root(f, lo: float, hi: float, lanes: int | None, xatol: float, xrtol: float = 4 * np.finfo(float).eps,
              where=True, fill=0.0):
    """The root of ``f`` between ``lo`` and ``hi``, within ``xatol`` plus
    ``xrtol`` times the root, in the lanes ``where`` holds; ``fill`` in the
    others. ``f`` is monotone over the bracket (the callers' is the excess
    ``g(x) - x`` of a fixed point of a non-increasing ``g``).

    Where ``f`` changes sign across the bracket its root is searched. Where
    it does not, the root lies beyond an end and, clipped to the bracket,
    is that end: the one where ``|f|`` is smaller (for a fixed point, ``g``
    reaching past the bracket: a throttling sleep at its full length,
    kswapd taking all the reclaim; a fixed point that sits at an end, as
    ``g(1) = 1`` does, gives an excess of a rounding error there, +7e-15,
    of either sign). An end where ``f`` is 0 is the root.

    ``f`` takes and returns one value per lane: a float for one
    configuration (``lanes`` None), an array of ``lanes`` values for a lane
    model. One configuration's root is Brent's (``scipy.optimize.brentq``,
    the quickest for one); lanes are searched together by Chandrupatla's
    method (``scipy.optimize.elementwise.find_root``), which iterates only
    the lanes not yet converged; ``f`` still sees every lane (the others at
    their last iterate or ``fill``: a lane model's arithmetic is elementwise,
    so a lane's value is its own). The two methods stop at different points
    within the tolerance; an end that is the answer is the same in both."""
    from scipy.optimize import brentq  # here, not at import: keeps import mmcost quick
    from scipy.optimize.elementwise import find_root as chandrupatla

    if lanes is None:
        if not where:
            return fill
        ends = {lo: f(lo), hi: f(hi)}
        if not np.sign(ends[lo]) * np.sign(ends[hi]) < 0:  # no sign change (NaN: Brent's says so below)
            if ends[lo] == 0 or abs(ends[lo]) < abs(ends[hi]):
                return lo
            if ends[hi] == 0 or abs(ends[hi]) < abs(ends[lo]):
                return hi
        # (Brent's evaluates the ends again: they are known)
        return brentq(lambda x: ends[x] if x in ends else f(x), lo, hi, xtol=xatol, rtol=xrtol)
    current = np.array(np.broadcast_to(np.asarray(fill, dtype=float), (lanes,)))
    idx = np.flatnonzero(np.broadcast_to(where, (lanes,)))
    if idx.size == 0:
        return current

    def at_end(x: float) -> np.ndarray:  # f with every searched lane at x
        trial = current.copy()
        trial[idx] = x
        return np.asarray(f(trial), dtype=float)

    f_lo, f_hi = at_end(lo), at_end(hi)
    a, b = f_lo[idx], f_hi[idx]
    current[idx] = np.where((a == 0) | (np.abs(a) < np.abs(b)), lo, hi)  # the end that is the root where f
    settled = (np.sign(a) * np.sign(b) >= 0) & ((a == 0) | (b == 0) | (np.abs(a) != np.abs(b)))  # keeps its sign
    idx = idx[~settled]
    if idx.size == 0:
        return current

    def g(x, at):
        for end, known in ((lo, f_lo), (hi, f_hi)):  # (Chandrupatla's evaluates the ends again: they are known)
            if np.all(x == end):
                return known[at]
        current[at] = x
        return np.asarray(f(current.copy()))[at]

    res = chandrupatla(g, (lo, hi), args=(idx,), tolerances=dict(xatol=xatol, xrtol=xrtol))
    if not np.all(res.success):
        bad = idx[~res.success].tolist()
        raise ArithmeticError(f"no fixed point found (status {res.status[~res.success][0]}) in lane(s) {bad}")
    current[idx] = res.x
    return current
