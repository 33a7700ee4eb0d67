"""The model's structural error: a discrepancy per metric family, added to every band.

A fit's band says how far its parameters may be from the truth *if the model
is right*. On sources a fit never saw, the model is also wrong or incomplete by
an amount no covariance knows about. That amount is measured here the only
honest way, from leave-one-source-out residuals (:mod:`.loso`), per family of
metrics that err alike:

=============  ===============================  =============================
family         metrics                          residual space
=============  ===============================  =============================
change         ``*_change_pct``                 points (published - predicted)
throughput     units ending ``/s``, lpm, index  log(published / predicted)
time           s, ms, us, ns, cycles            log
count          count, per page, per folio       log of (value + background)
other          shares (%), bytes, ratios        log
=============  ===============================  =============================

Estimator: empirical Bayes (type-II maximum likelihood) of one variance
``tau^2`` per family, with each residual ``r_i ~ N(0, s_i^2 + tau^2)``, where
``s_i`` is the row's own band (its parameters' spread) as a standard deviation.
Why this and not a hierarchical model with a posterior over ``tau``: a family
has 10-200 rows from 3-20 sources, one scalar per family is all the data can
pin down, and the marginal likelihood of one scalar needs no sampler; the
price is that ``tau``'s own uncertainty is not in the band, which the nested
evaluation in :mod:`.loso` (each source's ``tau`` estimated without it)
charges to the measured coverage, where it shows. A log-space family seen in
fewer than three sources (``mmcost.corpus.loso.MIN_SOURCES``) takes the tau
of every log-space family pooled.

A count's background: a count of 0 (no flush IPI seen) cannot be compared in
log space, so a family's count residuals add to value and prediction the
background of the metric, 1% of its median nonzero published value in that
source (the counters' own noise floor is not published per source).

The library's bands use the table this module ships (:data:`TABLE`), written
by ``mmcost reproduce`` from the bundled sources' leave-one-source-out
residuals and checked against them by the test suite.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from functools import lru_cache
from importlib.resources import files

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import ndtri

from .. import metrics as vocabulary

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

FAMILIES = ("change", "throughput", "time", "count", "other")
#: the families whose residuals are additive (points); the rest are log ratios
ADDITIVE = frozenset({"change"})
_TIME_UNITS = {"s", "ms", "us", "ns", "cycles"}
_COUNT_UNITS = {"count", "1/page", "1/folio", "1/flush"}
#: the shipped table, in the bundled data (``data/`` of the source tree)
TABLE = "structural_error.toml"
#: False inside :func:`parameters_only` (the leave-one-source-out reads the fit's own bands)
_ENABLED: contextvars.ContextVar = contextvars.ContextVar("structural_error", default=True)


@contextlib.contextmanager
def parameters_only():
    """Within this block, ``FitResult.predict`` gives the parameters' band only
    (what the structural error is estimated against)."""
    token = _ENABLED.set(False)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def enabled() -> bool:
    return _ENABLED.get()


def family(metric: str) -> str:
    """The family of ``metric`` (module docstring)."""
    if metric.endswith(vocabulary.CHANGE_SUFFIX):
        return "change"
    unit = vocabulary.METRICS.get(metric, ("",))[0]
    if unit.endswith("/s") or unit in ("lpm", "index") or metric.endswith("_per_s"):
        return "throughput"
    if unit in _TIME_UNITS:
        return "time"
    if unit in _COUNT_UNITS or unit.startswith("1/") or metric.endswith("_count"):
        return "count"
    return "other"


def residual_space(fam: str, published, predicted, lo, hi, level: float, background=0.0):
    """Residuals and the rows' own band as standard deviations, in ``fam``'s space:
    ``(r, s)``; NaN where a log ratio is undefined (a nonpositive value)."""
    published, predicted, lo, hi = (np.asarray(x, float) for x in (published, predicted, lo, hi))
    z = float(ndtri(0.5 + level / 2))
    if fam in ADDITIVE:
        return published - predicted, (hi - lo) / (2 * z)
    b = np.asarray(background, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log((published + b) / (predicted + b))
        s = np.where(lo + b > 0, np.log((hi + b) / (lo + b)), (hi - lo) / np.abs(predicted + b)) / (2 * z)
    ok = (published + b > 0) & (predicted + b > 0)
    return np.where(ok, r, np.nan), np.where(ok, np.maximum(s, 0.0), np.nan)


def estimate_tau(r, s) -> float:
    """Type-II ML of ``tau`` in ``r_i ~ N(0, s_i^2 + tau^2)`` (0 when the rows'
    own bands already explain their spread); NaN without finite rows."""
    r, s = np.asarray(r, float), np.asarray(s, float)
    ok = np.isfinite(r) & np.isfinite(s)
    r, s = r[ok], s[ok]
    if len(r) == 0:
        return math.nan
    top = float(np.max(np.abs(r))) * 10 + 1e-12

    def nll(t):
        v = s**2 + t**2 + 1e-300
        return float(np.sum(np.log(v) + r**2 / v))

    res = minimize_scalar(nll, bounds=(0.0, top), method="bounded", options={"xatol": 1e-6 * top})
    return 0.0 if nll(0.0) <= res.fun else float(res.x)


def widen(fam: str, predicted, lo, hi, level: float, tau: float, background=0.0):
    """The band ``[lo, hi]`` at ``level`` with the structural error ``tau``
    (a scalar or one per row; NaN: none) added in quadrature to each side's
    half-width in ``fam``'s space: ``(lo, hi)`` of the wider band."""
    predicted, lo, hi = (np.asarray(x, float) for x in (predicted, lo, hi))
    tau = np.nan_to_num(np.asarray(tau, float), nan=0.0)  # (a scalar, or one per row)
    z = float(ndtri(0.5 + level / 2))
    if fam in ADDITIVE:
        down, up = (predicted - lo) / z, (hi - predicted) / z  # a band may be lopsided: each side its own
        # every metric is a nonnegative quantity (a rate, a time, a count): it cannot fall by more than 100%
        floor = np.minimum(lo, -100.0)
        return np.maximum(predicted - z * np.hypot(down, tau), floor), predicted + z * np.hypot(up, tau)
    b = np.asarray(background, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = np.log(predicted + b)
        down = np.where(lo + b > 0, base - np.log(lo + b), (predicted - lo) / np.abs(predicted + b)) / z
        up = np.log((hi + b) / (predicted + b)) / z
        new_lo = np.exp(base - z * np.hypot(down, tau)) - b
        new_hi = np.exp(base + z * np.hypot(up, tau)) - b
    ok = predicted + b > 0
    return np.where(ok, new_lo, lo), np.where(ok, new_hi, hi)


def coverage(r, s, tau: float, level: float) -> float:
    """Share of rows whose residual lies inside the band ``N(0, s^2 + tau^2)`` at ``level``."""
    r, s = np.asarray(r, float), np.asarray(s, float)
    ok = np.isfinite(r) & np.isfinite(s)
    if not ok.any():
        return math.nan
    z = float(ndtri(0.5 + level / 2))
    return float(np.mean(np.abs(r[ok]) <= z * np.sqrt(s[ok] ** 2 + (tau if np.isfinite(tau) else 0.0) ** 2)))


@lru_cache(maxsize=1)
def shipped() -> dict[str, float]:
    """The shipped table: family -> tau (from ``mmcost reproduce``'s
    leave-one-source-out of the bundled sources), empty if none is shipped."""
    path = files("mmcost.data").joinpath(TABLE)
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        data = tomllib.load(f)
    return {k: float(v) for k, v in data.get("tau", {}).items()}


def background(fam: str, values) -> float:
    """A count family's background (module docstring): 1% of the median nonzero magnitude; 0 otherwise."""
    if fam != "count":
        return 0.0
    v = np.abs(np.asarray(values, float))
    v = v[np.isfinite(v) & (v > 0)]
    return 0.01 * float(np.median(v)) if len(v) else 0.0


def widen_frame(frame: pd.DataFrame, level: float, taus: dict[str, float] | None = None) -> pd.DataFrame:
    """A prediction frame (``metric``, ``best``, ``lo``, ``hi``) with every
    band widened by its family's structural error (``taus``, default the
    shipped table); columns ``lo_fit``/``hi_fit`` keep the fit's own band and
    ``attrs["structural_error"]`` the taus used."""
    taus = shipped() if taus is None else taus
    out = frame.copy()
    out["lo_fit"], out["hi_fit"] = frame["lo"], frame["hi"]
    out.attrs["structural_error"] = dict(taus)
    if not taus or frame.empty:
        return out
    for metric, idx in frame.groupby("metric", sort=False).groups.items():
        fam = family(metric)
        rows = frame.loc[idx]
        lo, hi = widen(fam, rows["best"], rows["lo"], rows["hi"], level, taus.get(fam, math.nan),
                       background(fam, rows["best"]))
        cap = vocabulary.ceiling(metric)
        if cap is not None:  # a share's band stops at the whole (a log-space error would pass it)
            hi = np.minimum(hi, np.maximum(cap, rows["best"]))
        out.loc[idx, "lo"], out.loc[idx, "hi"] = lo, hi
    return out


def uninformative(metric, best, lo, hi) -> np.ndarray:
    """A band too wide to inform: wider than the prediction itself (``hi - lo
    > |best|``), or for a relative change wider than 100 points."""
    best, lo, hi = (np.asarray(x, float) for x in (best, lo, hi))
    chg = np.array([family(m) == "change" for m in metric], dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.where(chg, hi - lo > 100.0, hi - lo > np.abs(best))


def write_table(path, taus: dict[str, float], counts: dict[str, int], note: str) -> None:
    """Write the shipped table (TOML): ``[tau]`` per family, the rows each was estimated from, and how."""
    lines = [f"# {line}" for line in note.splitlines()] + ["", "[tau]"]
    lines += [f"{k} = {v!r}" for k, v in taus.items() if np.isfinite(v)]
    lines += ["", "[rows]"] + [f"{k} = {v}" for k, v in counts.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
