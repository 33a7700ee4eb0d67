"""The interface every mmcost model implements (locks, TLB, swap, USL).

A model has named parameters with units, physical bounds and optional priors,
some free and some fixed, and maps a DataFrame of configurations (one row per
measured or wanted number, with a ``metric`` column) to predicted values,
vectorised over rows. Relative changes (``<metric>_change_pct`` rows with a
``baseline`` column) are derived here, once, for every model: the model
predicts the row and its baseline row and the change follows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from . import metrics as vocabulary


#: what a configuration that cannot be solved raises: a field's check (ValueError) or the arithmetic
#: of one draw's values (ZeroDivisionError, OverflowError)
INFEASIBLE = (ValueError, ArithmeticError)


class UnknownColumnWarning(UserWarning):
    """A frame's column is not a field of the model, a metric, or a column of
    :mod:`mmcost.schema`: the model ignores it (a typo such as ``folio_kib``
    would otherwise change nothing without a word)."""


#: columns a fit or a band writes (FitResult.residuals, predict): a frame read back from them is not a typo
OUTPUT_COLUMNS = frozenset({"measured", "predicted", "residual", "sigma", "sigma_source", "pull", "lo_fit", "hi_fit",
                            "uninformative",
                            "best", "mean", "lo", "hi", "dropped_draws"})
#: columns that label a row and are carried through a prediction untouched (a user's "what is this row")
LABEL_COLUMNS = frozenset({"label", "scenario", "quantity", "column", "config", "name", "comment", "host"})


def warn_unknown_columns(model: "Model", frame: pd.DataFrame, stacklevel: int = 3) -> list[str]:
    """Warn (:class:`UnknownColumnWarning`) naming the columns of ``frame``
    that ``model`` ignores (:meth:`Model.unknown_columns`) and the closest
    names it reads (``difflib.get_close_matches``); return them."""
    import difflib
    import warnings

    unknown = model.unknown_columns(frame)
    if unknown:
        names = sorted(model.column_names())
        parts = []
        for col in unknown:
            close = difflib.get_close_matches(col.removeprefix("baseline_"), names, n=3, cutoff=0.6)
            parts.append(f"{col!r}" + (f" (closest: {', '.join(close)})" if close else ""))
        warnings.warn(f"{model.name}: ignoring column(s) {'; '.join(parts)}: not a field of "
                      f"{type(model).__name__}, a metric, a column of mmcost.schema or a label "
                      f"({', '.join(sorted(LABEL_COLUMNS))})",
                      UnknownColumnWarning, stacklevel=stacklevel)
    return unknown


@dataclass(frozen=True)
class Prior:
    """A Gaussian prior: ``value`` ± ``width`` (one standard deviation), from ``source``.

    ``source`` must name where the value comes from (a paper, a datasheet, a
    measurement): a prior without a source is refused.
    """

    value: float
    width: float
    source: str

    def __post_init__(self):
        if not (math.isfinite(self.value) and math.isfinite(self.width) and self.width > 0):
            raise ValueError(f"Prior needs a finite value and a width > 0, got {self.value} ± {self.width}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError("Prior.source must name where the value comes from")


@dataclass(frozen=True)
class Parameter:
    """One model parameter. ``name`` ends in its unit (``ipi_ns``, ``hold_us``)."""

    name: str
    value: float
    unit: str
    lower: float = -math.inf
    upper: float = math.inf
    free: bool = True
    prior: Prior | None = None
    doc: str = ""

    def __post_init__(self):
        if not (self.lower < self.upper):
            raise ValueError(f"parameter {self.name}: lower bound {self.lower} must be below upper {self.upper}")
        if not math.isfinite(self.value) or not (self.lower <= self.value <= self.upper):
            raise ValueError(f"parameter {self.name}: value {self.value} is outside its bounds [{self.lower}, {self.upper}]")


def config_value(row, column: str, default):
    """A configuration row's value of an optional column (``cpus``,
    ``processes``, ``swap_device`` ...): ``default`` where the column is
    absent or the cell is empty, so rows may describe only what differs."""
    val = row.get(column, default) if hasattr(row, "get") else default
    if val is None or val is pd.NA or (isinstance(val, float) and math.isnan(val)):
        return default
    return val


class Plan:
    """A frame's evaluation at any parameter set (see :meth:`Model.plan`)."""

    def __init__(self, model: Model, metrics: np.ndarray, parts: list):
        self.model, self._metrics, self._parts = model, metrics, parts

    def __len__(self) -> int:
        return len(self._metrics)

    def __call__(self, params: dict[str, float] | None = None) -> np.ndarray:
        p = self._values(params)
        return self._at(p, self.model.context(p))

    def many(self, param_sets, errors: list | None = None) -> np.ndarray:
        """``plan(p)`` for every parameter set, as rows of an array. The model
        solves what all of them need first, together where its solvers take
        a batch (:meth:`Model.presolve`): a band's draws cross into the C++
        core once, not once per draw.

        ``errors``: a list to collect infeasible draws in instead of raising.
        A parameter set whose configuration a row refuses (a ValueError or an
        arithmetic error: a zswap pool above the memcg limit at that draw's
        compression ratio) or whose prediction is not finite (a change whose
        baseline is 0) gives NaN in that row, and ``(draw, rows, message)``
        is appended to ``errors``; the other rows of the draw stand."""
        sets = [self._values(p) for p in param_sets]
        contexts = [self.model.context(p) for p in sets]
        self.model.presolve(self._parts, contexts)
        if errors is None:
            return np.array([self._at(p, ctx) for p, ctx in zip(sets, contexts)]).reshape(len(sets), len(self))
        out = np.empty((len(sets), len(self)))
        for k, (p, ctx) in enumerate(zip(sets, contexts)):
            if hasattr(ctx, "infeasible"):  # a mechanism's draw: a row group it cannot solve is NaN
                ctx.infeasible = []
            out[k] = self._at(p, ctx, errors=errors, draw=k)
        return out

    def _values(self, params):
        m = self.model
        return m.values() if params is None else {**m.values(), **params}

    def _at(self, p: dict, ctx, errors: list | None = None, draw: int = 0) -> np.ndarray:
        m = self.model
        out = np.full(len(self._metrics), np.nan)
        failed = np.zeros(len(self._metrics), dtype=bool)
        for idx, metric, now, ref in self._parts:
            try:
                x = np.asarray(m.predict_prepared(metric, now, p, ctx), dtype=float)
                if ref is not None:
                    with np.errstate(divide="ignore", invalid="ignore"):  # a 0 baseline: not finite, below
                        x = 100.0 * (x / np.asarray(m.predict_prepared(metric, ref, p, ctx), dtype=float) - 1.0)
            except INFEASIBLE as exc:
                if errors is None:
                    raise
                errors.append((draw, idx, f"{type(exc).__name__}: {exc}"))
                failed[idx] = True
                continue
            out[idx] = x
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if errors is None:
                raise ValueError(f"{m.name} gave a non-finite prediction for row {i} ({self._metrics[i]}) at {p}")
            bad[failed] = False  # already reported with their error
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                said = getattr(ctx, "infeasible", None)  # a row group's error, kept by the mechanism
                errors.append((draw, np.flatnonzero(bad),
                               said[0] if said else f"a non-finite prediction (row {i}, {self._metrics[i]})"))
        return out


@dataclass(frozen=True)
class Model:
    """Base class. Subclasses define ``name``, the default ``parameters`` (as a
    class attribute ``PARAMETERS``), ``METRICS`` (what they predict) and
    :meth:`predict_metric`; everything else (changes, fitting, prediction,
    sweeps) is shared.

    Instances are immutable and picklable; :meth:`with_parameters` returns a
    changed copy, so a Dask worker or a process pool can receive one.
    """

    parameters: tuple[Parameter, ...] = field(default=())
    name: str = "model"
    #: relative error assumed for a measurement that publishes no stddev
    default_rel_error: float = 0.05

    PARAMETERS: ClassVar[tuple[Parameter, ...]] = ()
    METRICS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self):
        if not self.parameters:
            object.__setattr__(self, "parameters", tuple(self.PARAMETERS))
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: duplicate parameter names {names}")

    # --- parameters ---------------------------------------------------------------
    @property
    def params(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}

    @property
    def free_names(self) -> list[str]:
        return [p.name for p in self.parameters if p.free]

    def values(self) -> dict[str, float]:
        return {p.name: p.value for p in self.parameters}

    def with_parameters(self, **changes) -> "Model":
        """A copy with parameters changed: ``m.with_parameters(hold_us=0.5)``
        sets a value; a dict sets fields, e.g. ``hold_us=dict(free=False)`` or
        ``hold_us=dict(prior=Prior(0.4, 0.1, "..."))``."""
        params = self.params
        unknown = [k for k in changes if k not in params]
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {unknown}; known: {list(params)}")
        new = []
        for p in self.parameters:
            if p.name in changes:
                c = changes[p.name]
                p = replace(p, **c) if isinstance(c, dict) else replace(p, value=float(c))
            new.append(p)
        return replace(self, parameters=tuple(new))

    def fixed(self, *names: str) -> "Model":
        return self.with_parameters(**{n: {"free": False} for n in names})

    def freed(self, *names: str) -> "Model":
        return self.with_parameters(**{n: {"free": True} for n in names})

    # --- evaluation -------------------------------------------------------------------
    def predict_metric(self, metric: str, rows: pd.DataFrame, p: dict[str, float]) -> np.ndarray:
        """Predicted ``metric`` for each configuration row. Subclasses implement."""
        raise NotImplementedError

    def column_names(self) -> set[str]:
        """The columns this model reads besides ``metric`` (subclasses): the
        names :func:`warn_unknown_columns` suggests for a typo."""
        return set()

    def unknown_columns(self, frame: pd.DataFrame) -> list[str]:
        """Columns of ``frame`` this model ignores that are no known column
        either: not one it reads (:meth:`column_names`), not a column of
        :mod:`mmcost.schema`, a metric name, a fit's output column or a
        label (:data:`LABEL_COLUMNS`), and not ``baseline_<one of those>``. Empty for a model that does not say
        what it reads (:meth:`column_names` empty)."""
        from . import schema

        reads = self.column_names()
        if not reads:
            return []
        known = (reads | set(schema.COLUMNS) | set(schema.EXTRA_COLUMNS) | set(vocabulary.METRICS)
                 | set(self.METRICS) | OUTPUT_COLUMNS | LABEL_COLUMNS | {"variant", "baseline"})
        out = []
        for col in frame.columns:
            if not isinstance(col, str):
                out.append(col)
                continue
            name = col.removeprefix("baseline_")
            if name not in known and name.removesuffix(vocabulary.CHANGE_SUFFIX) not in known:
                out.append(col)
        return out

    def supports(self, metric: str) -> bool:
        base = metric.removesuffix(vocabulary.CHANGE_SUFFIX)
        return base in self.METRICS

    def evaluate(self, configs: pd.DataFrame, params: dict[str, float] | None = None) -> np.ndarray:
        """Predicted value of each row's ``metric`` at ``params`` (default: the
        model's current values), as a float array aligned with the rows. A
        column the model ignores and does not know warns
        (:class:`UnknownColumnWarning`)."""
        plan = self.plan(configs)
        warn_unknown_columns(self, configs)
        return plan(params)

    def plan(self, configs: pd.DataFrame) -> Plan:
        """:meth:`evaluate` of ``configs`` split into the work done once per
        frame (grouping rows by metric and configuration, the baseline rows of
        changes) and the work done per parameter set: ``plan(params)``. A fit,
        a band or a bootstrap evaluates one frame at hundreds of parameter
        sets, so the frame is read once."""
        if not isinstance(configs, pd.DataFrame):
            raise TypeError(f"configs must be a pandas DataFrame, got {type(configs).__name__}")
        if "metric" not in configs.columns:
            raise ValueError("configs needs a 'metric' column naming what to predict in each row")
        rows = configs.reset_index(drop=True)
        parts = []
        for metric, idx in rows.groupby("metric", sort=False).groups.items():
            idx = np.asarray(idx)
            part = rows.loc[idx]
            if not self.supports(metric):
                raise ValueError(f"{self.name} does not predict metric {metric!r}; it predicts {list(self.METRICS)}")
            if metric.endswith(vocabulary.CHANGE_SUFFIX):
                base = metric.removesuffix(vocabulary.CHANGE_SUFFIX)
                parts.append((idx, base, self.prepare(base, part), self.prepare(base, self._reference_rows(base, part))))
            else:
                parts.append((idx, metric, self.prepare(metric, part), None))
        return Plan(self, rows["metric"].to_numpy(object), parts)

    def prepare(self, metric: str, rows: pd.DataFrame):
        """What :meth:`predict_prepared` needs of ``rows`` (subclasses group them)."""
        return rows

    def context(self, p: dict[str, float]):
        """Per parameter set, shared by every part of a plan (subclasses)."""
        return None

    def presolve(self, parts, contexts) -> None:
        """Work a plan's parts need at several parameter sets (their
        ``contexts``), done together before they are evaluated (subclasses
        whose solvers take a batch: :class:`~mmcost.mechanism.Mechanism`)."""

    def predict_prepared(self, metric: str, prepared, p: dict[str, float], context) -> np.ndarray:
        return self.predict_metric(metric, prepared, p)

    @staticmethod
    def _reference_rows(metric: str, rows: pd.DataFrame) -> pd.DataFrame:
        """The baseline rows of ``<metric>_change_pct`` rows: the ``baseline``
        variant, and ``baseline_<column>`` overrides (seed 000: baseline_folio_kb)."""
        if "baseline" not in rows.columns or rows["baseline"].isna().any():
            raise ValueError(f"{metric}_change_pct rows need a 'baseline' column naming the reference variant")
        ref = rows.copy()
        ref["variant"] = rows["baseline"]
        for col in [c for c in rows.columns if c.startswith("baseline_")]:
            own = col.removeprefix("baseline_")
            base = rows[col]
            ref[own] = base.where(base.notna(), rows[own]) if own in rows.columns else base
        return ref

    def mc_stderr(self, configs: pd.DataFrame, params: dict[str, float]) -> np.ndarray | None:
        """Monte Carlo standard error of each prediction (simulated solvers); None if exact."""
        return None

    # --- fitting ----------------------------------------------------------------------
    def fit(self, df: pd.DataFrame, **kwargs):
        """Fit the free parameters to measured rows; see :func:`mmcost.fit.fit`."""
        from .fit import fit

        return fit(self, df, **kwargs)
