"""Figures for a cover letter, from data and fit results (matplotlib).

Every function returns the matplotlib Figure; save it with
``fig.savefig("x.png")`` or ``.svg``. Import this module only where figures
are wanted: it needs matplotlib (not a dependency of the models).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import metrics as vocabulary
from . import schema
from .fit import FitResult

STYLE = dict(figsize=(6.4, 3.6), dpi=120)
MEASURED = dict(fmt="o", color="black", ms=4, capsize=3, label="measured")
MODEL_COLOR = "tab:blue"


def _figure(**kw) -> tuple[Figure, object]:
    fig = Figure(**{**STYLE, **kw})  # not pyplot: no global state, works headless
    return fig, fig.add_subplot()


def _error(df: pd.DataFrame) -> np.ndarray:
    """Error bars: the published uncertainty, none where nothing was published."""
    return np.nan_to_num(schema.published_sigma(df))


def scaling(fit: FitResult, x: str, metric: str | None = None, *, xs=None, interval: float = 0.9,
            configs: dict | None = None, n_samples: int = 300, logx: bool = False, fixed_priors: bool = False,
            measured: pd.DataFrame | None = None) -> Figure:
    """The model curve and its band over the configuration column ``x``
    (cpus, processes, folio_kb ...), with the measured points: the fit's own
    rows of ``metric`` that match ``configs`` (with error bars), or ``measured`` (columns ``x`` and
    ``value``) for a quantity the fit did not use. ``configs`` fixes the other
    columns of the predicted rows; ``fixed_priors`` widens the band by the
    priors of fixed parameters (:meth:`FitResult.sample_params`)."""
    res = fit.residuals
    metric = metric or res["metric"].iloc[0]
    pts = res[res["metric"] == metric]
    for col, val in (configs or {}).items():  # only the measured rows of the configuration drawn
        if col in pts.columns and not isinstance(val, (list, tuple, np.ndarray)):
            pts = pts[pts[col] == val]
    if not pts.empty and x not in pts:
        raise ValueError(f"data has no column {x!r}")
    if xs is None:
        if pts.empty:
            raise ValueError(f"the fit has no {metric!r} rows to take the x range from: pass xs")
        lo, hi = float(pts[x].min()), float(pts[x].max())
        xs = np.linspace(lo, hi * 1.5, 60)
    xs = np.asarray(xs, float)
    grid = pd.DataFrame({x: xs, "metric": metric, **(configs or {})})
    pred = fit.predict(grid, interval=interval, n_samples=n_samples, fixed_priors=fixed_priors)
    fig, ax = _figure()
    ax.fill_between(xs, pred["lo"], pred["hi"], color=MODEL_COLOR, alpha=0.25, label=f"{interval:.0%} band")
    ax.plot(xs, pred["best"], color=MODEL_COLOR, label=f"{fit.model.name} fit")
    if not pts.empty:
        ax.errorbar(pts[x], pts["measured"], yerr=pts["sigma"], **MEASURED)
    if measured is not None:
        ax.errorbar(measured[x], measured["value"], yerr=_error(measured), **MEASURED)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(x)
    known = metric.removesuffix(vocabulary.CHANGE_SUFFIX) in vocabulary.METRICS
    ax.set_ylabel(f"{metric} [{vocabulary.unit_of(metric) if known else ''}]")
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def before_after(df: pd.DataFrame, metric: str, variants: list[str], *, by: str | None = None) -> Figure:
    """Bars of ``metric`` for each of ``variants`` (grouped by ``by``), error
    bars from stddev/stddev_pct; with two variants the % change of the second
    against the first is printed above each pair."""
    rows = df[df["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no rows of metric {metric!r}")
    if len(variants) < 1:
        raise ValueError("variants must name at least one variant")
    groups = list(dict.fromkeys(rows[by])) if by else [None]
    fig, ax = _figure()
    width = 0.8 / len(variants)
    colors = ["0.6", MODEL_COLOR, "tab:orange", "tab:green", "tab:red"]
    annotate = len(variants) == 2 and not metric.endswith(vocabulary.CHANGE_SUFFIX)
    for i, g in enumerate(groups):
        part = rows if g is None else rows[rows[by] == g]
        vals = []
        for j, v in enumerate(variants):
            r = part[part["variant"] == v]
            if len(r) != 1:
                raise ValueError(f"need one {metric!r} row of variant {v!r}" + (f" for {by}={g}" if by else ""))
            ax.bar(i + (j - (len(variants) - 1) / 2) * width, r["value"].iloc[0], width, yerr=_error(r)[0], capsize=3,
                   color=colors[j % len(colors)], label=v if i == 0 else None)
            vals.append(float(r["value"].iloc[0]))
        if annotate and vals[0]:
            ax.annotate(f"{100 * (vals[1] / vals[0] - 1):+.1f}%", (i, max(vals)), ha="center", va="bottom",
                        xytext=(0, 6), textcoords="offset points")
    ax.set_xticks(range(len(groups)), [str(g) if g is not None else "" for g in groups])
    if by:
        ax.set_xlabel(by)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_ylabel(f"{metric} [{vocabulary.unit_of(metric)}]")
    ax.margins(y=0.15)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def pulls(fit: FitResult) -> Figure:
    """(measured - predicted) / sigma per data point, with the ±1 and ±2 bands."""
    res = fit.residuals
    fig, ax = _figure()
    ax.axhspan(-2, 2, color="0.92")
    ax.axhspan(-1, 1, color="0.82")
    ax.axhline(0, color="black", lw=0.8)
    ax.plot(np.arange(len(res)), res["pull"], "o", color=MODEL_COLOR)
    ax.set_xticks(np.arange(len(res)), [f"{m}" for m in res["metric"]], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("pull = (measured - model) / sigma")
    ax.set_title(f"{fit.model.name}: chi2/dof = {fit.chi2_dof:.2f}", fontsize=9)
    fig.tight_layout()
    return fig


def call_site_shares(df: pd.DataFrame, metric: str = "cycles_share_pct", *, short: bool = True) -> Figure:
    """Stacked bars of a per-call-site share (perf-profile cycles-pp) per variant."""
    rows = df[(df["metric"] == metric) & df["call_site"].notna()]
    if rows.empty:
        raise ValueError(f"no {metric!r} rows with a call_site")
    table = rows.pivot_table(index="variant", columns="call_site", values="value", aggfunc="first", sort=False)
    fig, ax = _figure()
    bottom = np.zeros(len(table))
    for site in table.columns:
        # the caller of the lock (2nd frame); matplotlib hides labels starting with '_'
        label = f"in {site.split('.')[1]}" if short and "." in site else f"at {site}"
        vals = table[site].fillna(0).to_numpy(float)
        ax.bar(range(len(table)), vals, bottom=bottom, label=label)
        bottom += vals
    ax.set_xticks(range(len(table)), list(table.index))
    ax.set_ylabel(f"{metric} [%]")
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig
