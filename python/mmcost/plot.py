"""Figures for a cover letter, from data and fit results (matplotlib).

Every function draws into ``ax`` when given one (a panel of the caller's
figure) and otherwise into a new figure, and returns that Figure; save it
with ``fig.savefig("x.png")`` or ``.svg``. A new figure is not registered with
pyplot (no global state; safe headless and in loops) and still shows inline
in Jupyter. Labels are words with units (:func:`mmcost.metrics.label`),
folio sizes are ticked 4K/64K/2M, and ``title`` names the kernel and the
configuration. Import this module only where figures are wanted: it needs
matplotlib (not a dependency of the models).
"""

from __future__ import annotations

import io
import textwrap

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from . import metrics as vocabulary
from . import schema
from .fit import FitResult, band_level

__all__ = ["CoverFigure", "before_after", "call_site_shares", "folio_axis", "pulls", "scaling", "spread"]

STYLE = dict(figsize=(6.4, 3.6), dpi=120)
MEASURED = dict(fmt="o", color="black", ms=4, capsize=3, label="measured")
MODEL_COLOR = "tab:blue"
VARIANT_COLORS = ["0.6", MODEL_COLOR, "tab:orange", "tab:green", "tab:red"]
TITLE = dict(fontsize=9, loc="left")
#: more groups than this and the per-group % change labels would overlap
MAX_ANNOTATED_GROUPS = 8


class CoverFigure(Figure):
    """A matplotlib Figure that Jupyter shows inline without pyplot."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


def _axes(ax: Axes | None, **kw) -> tuple[Figure, Axes]:
    if ax is None:
        fig = CoverFigure(**{**STYLE, **kw})
        return fig, fig.add_subplot()
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    return ax.figure, ax


def _finish(fig: Figure, ax: Axes, title: str | None, own: bool) -> Figure:
    if title:  # wrapped to the axes' width at the title's font size (about 0.55 em per character)
        width_pt = ax.get_position().width * fig.get_figwidth() * 72
        ax.set_title(textwrap.fill(title, max(30, int(width_pt / (0.55 * TITLE["fontsize"])))), **TITLE)
    if own:
        fig.tight_layout()
    return fig


def _error(df: pd.DataFrame) -> np.ndarray:
    """Error bars: the published uncertainty, none where nothing was published."""
    return np.nan_to_num(schema.published_sigma(df))


#: the largest magnitude a figure draws: matplotlib's layout overflows near 1e308
MAX_DRAWN = 1e200


def _metric_rows(df: pd.DataFrame, metric: str, **extra) -> pd.DataFrame:
    """The rows of ``metric``, each value a finite number a figure can draw,
    or a ValueError naming the row. ``extra`` filters on columns: a value to
    match, or ``...`` for any non-empty one (``call_site=...``)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(df).__name__}")
    for col in ("metric", "value", *extra):
        if col not in df:
            raise ValueError(f"data has no {col!r} column")
    rows = df[df["metric"] == metric]
    for col, want in extra.items():
        rows = rows[rows[col].notna()] if want is ... else rows[rows[col] == want]
    if rows.empty:
        raise ValueError(f"no rows of metric {metric!r}" + (f" with {', '.join(extra)}" if extra else ""))
    value = pd.to_numeric(rows["value"], errors="coerce").to_numpy(float)
    bad = ~(np.abs(value) < MAX_DRAWN)
    if bad.any():
        raise ValueError(f"{metric!r}: 'value' {rows['value'].iloc[int(np.flatnonzero(bad)[0])]!r} cannot be drawn "
                         f"(not a finite number below {MAX_DRAWN:g})")
    return rows.assign(value=value)


def _count_axis(ax: Axes) -> None:
    """Large counts as 1,340,000, not an offset '1e6' that collides with the title;
    beyond 15 digits the usual scientific notation reads better."""
    lo, hi = ax.get_ylim()
    if 1e4 <= max(abs(lo), abs(hi)) < 1e15:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def folio_axis(ax: Axes, sizes_kb, axis: str = "x") -> None:
    """A log2 axis of folio sizes ticked at ``sizes_kb`` as 4K, 64K, 2M."""
    sizes = sorted({float(s) for s in sizes_kb})
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target.set_major_locator(FixedLocator(sizes))
    target.set_minor_locator(NullLocator())
    (ax.set_xticklabels if axis == "x" else ax.set_yticklabels)([vocabulary.folio_label(s) for s in sizes])


def scaling(fit: FitResult, x: str, metric: str | None = None, *, xs=None, level: float | None = None,
            configs: dict | None = None, n_samples: int = 300, logx: bool = False, fixed_priors: bool = False,
            measured: pd.DataFrame | None = None, title: str | None = None, ylabel: str | None = None,
            xlabel: str | None = None, ax: Axes | None = None, interval: float | None = None) -> Figure:
    """The model curve and its band over the configuration column ``x``
    (cpus, processes, folio_kb ...), with the measured points: the fit's own
    rows of ``metric`` that match ``configs`` (with error bars), or ``measured`` (columns ``x`` and
    ``value``, optionally ``stddev``) for a quantity the fit did not use. ``configs`` fixes the other
    columns of the predicted rows; the band is the central ``level`` (0.9;
    ``interval`` is its deprecated name); ``fixed_priors`` widens the band by the
    priors of fixed parameters (:meth:`FitResult.sample_params`). ``folio_kb``
    is drawn on a log2 axis ticked 4K ... 2M."""
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
    level = band_level(level, interval, "scaling")
    pred = fit.predict(grid, level, n_samples=n_samples, fixed_priors=fixed_priors)
    fig, axes = _axes(ax)
    axes.fill_between(xs, pred["lo"], pred["hi"], color=MODEL_COLOR, alpha=0.25, label=f"{level:.0%} band")
    axes.plot(xs, pred["best"], color=MODEL_COLOR, label=f"{fit.model.name} model")
    if not pts.empty:
        axes.errorbar(pts[x], pts["measured"], yerr=pts["sigma"], **MEASURED)
    if measured is not None:
        axes.errorbar(measured[x], measured["value"], yerr=_error(measured), **MEASURED)
    if x == "folio_kb":
        folio_axis(axes, xs)
    elif logx:
        axes.set_xscale("log", base=2)
    axes.set_xlabel(xlabel or vocabulary.column_label(x))
    axes.set_ylabel(ylabel or vocabulary.label(metric, (configs or {}).get("baseline")))
    axes.legend(frameon=False)
    return _finish(fig, axes, title, ax is None)


def _group_labels(by: str | None, groups: list) -> list[str]:
    if by == "folio_kb":
        return [vocabulary.folio_label(g) for g in groups]
    return [str(g) if g is not None else "" for g in groups]


def before_after(df: pd.DataFrame, metric: str, variants: list[str], *, by: str | None = None,
                 title: str | None = None, ylabel: str | None = None, ax: Axes | None = None) -> Figure:
    """Bars of ``metric`` for each of ``variants`` (grouped by ``by``), error
    bars from the published stddev/stddev_pct; with two variants and at most
    8 groups the % change of the second against the first is printed above
    each pair (more groups: use :func:`spread`)."""
    rows = _metric_rows(df, metric, **({"variant": ...} if "variant" in df else {}))
    if by is not None and by not in rows:
        raise ValueError(f"data has no column {by!r}")
    if len(variants) < 1:
        raise ValueError("variants must name at least one variant")
    groups = list(dict.fromkeys(rows[by])) if by else [None]
    fig, axes = _axes(ax)
    width = 0.8 / len(variants)
    annotate = (len(variants) == 2 and not metric.endswith(vocabulary.CHANGE_SUFFIX)
                and len(groups) <= MAX_ANNOTATED_GROUPS)
    for i, g in enumerate(groups):
        part = rows if g is None else rows[rows[by] == g]
        vals = []
        for j, v in enumerate(variants):
            r = part[part["variant"] == v]
            if len(r) != 1:
                raise ValueError(f"need one {metric!r} row of variant {v!r}" + (f" for {by}={g}" if by else ""))
            axes.bar(i + (j - (len(variants) - 1) / 2) * width, r["value"].iloc[0], width, yerr=_error(r)[0],
                     capsize=3, color=VARIANT_COLORS[j % len(VARIANT_COLORS)], label=v if i == 0 else None)
            vals.append(float(r["value"].iloc[0]))
        if annotate and vals[0]:
            axes.annotate(f"{100 * (vals[1] / vals[0] - 1):+.1f}%", (i, max(vals)), ha="center", va="bottom",
                          xytext=(0, 6), textcoords="offset points")
    axes.set_xticks(range(len(groups)), _group_labels(by, groups))
    if by:
        axes.set_xlabel(vocabulary.column_label(by))
    axes.axhline(0, color="black", lw=0.6)
    baseline = rows["baseline"].dropna().iloc[0] if "baseline" in rows and rows["baseline"].notna().any() else None
    axes.set_ylabel(ylabel or vocabulary.label(metric, baseline))
    axes.margins(y=0.15)
    _count_axis(axes)
    axes.legend(frameon=False)
    return _finish(fig, axes, title, ax is None)


def spread(df: pd.DataFrame, metric: str, variants: list[str], *, over: str = "cpu", title: str | None = None,
           ylabel: str | None = None, ax: Axes | None = None) -> Figure:
    """One bar per variant: the mean of ``metric`` over the ``over`` column
    (CPUs), its min-max range as the error bar and each member as a dot;
    with two variants the change of the mean is printed. What replaces a wall
    of per-CPU bars."""
    rows = _metric_rows(df, metric)
    if over not in rows:
        raise ValueError(f"data has no column {over!r}")
    fig, axes = _axes(ax)
    means = []
    rng = np.random.default_rng(0)  # a fixed jitter: the same figure every run
    for j, v in enumerate(variants):
        vals = rows[rows["variant"] == v]["value"].to_numpy(float)
        if vals.size == 0:
            raise ValueError(f"no {metric!r} rows of variant {v!r}")
        mean = float(vals.mean())
        means.append(mean)
        axes.bar(j, mean, 0.6, color=VARIANT_COLORS[j % len(VARIANT_COLORS)],
                 yerr=[[mean - vals.min()], [vals.max() - mean]], capsize=4)
        axes.plot(j + rng.uniform(-0.18, 0.18, vals.size), vals, "o", ms=3, color="black", alpha=0.6,
                  label=f"each {vocabulary.column_label(over)}" if j == 0 else None)
        axes.annotate(f"mean {_number(mean)}\n({vals.size} {vocabulary.column_label(over)}s)", (j, vals.max()),
                      ha="center", va="bottom", xytext=(0, 4), textcoords="offset points", fontsize=8)
    if len(variants) == 2 and means[0]:
        axes.annotate(f"{100 * (means[1] / means[0] - 1):+.1f}%", (0.5, max(means) * 0.5), ha="center",
                      fontsize=11, fontweight="bold")
    axes.set_xticks(range(len(variants)), variants)
    axes.set_xlabel(vocabulary.column_label("variant"))
    axes.set_ylabel(ylabel or vocabulary.label(metric))
    axes.margins(y=0.2)
    _count_axis(axes)
    axes.legend(frameon=False, loc="upper right")
    return _finish(fig, axes, title, ax is None)


def pulls(fit: FitResult, *, title: str | None = None, ax: Axes | None = None) -> Figure:
    """(measured - predicted) / sigma per data point, with the ±1 and ±2 bands."""
    res = fit.residuals
    fig, axes = _axes(ax)
    axes.axhspan(-2, 2, color="0.92")
    axes.axhspan(-1, 1, color="0.82")
    axes.axhline(0, color="black", lw=0.8)
    axes.plot(np.arange(len(res)), res["pull"], "o", color=MODEL_COLOR)
    axes.set_xticks(np.arange(len(res)), [vocabulary.label(m) for m in res["metric"]], rotation=60, ha="right",
                    fontsize=7)
    axes.set_ylabel("pull = (measured - model) / sigma")
    return _finish(fig, axes, title or f"{fit.model.name} model: chi2/dof = {fit.chi2_dof:.2f}", ax is None)


def call_site_shares(df: pd.DataFrame, metric: str = "cycles_share_pct", *, short: bool = True,
                     title: str | None = None, ax: Axes | None = None) -> Figure:
    """Stacked bars of a per-call-site share (perf-profile cycles-pp) per variant."""
    rows = _metric_rows(df, metric, call_site=...)
    table = rows.pivot_table(index="variant", columns="call_site", values="value", aggfunc="first", sort=False)
    fig, axes = _axes(ax)
    bottom = np.zeros(len(table))
    for site in table.columns:
        # the caller of the lock (2nd frame); matplotlib hides labels starting with '_'
        label = f"in {site.split('.')[1]}" if short and "." in site else f"at {site}"
        vals = table[site].fillna(0).to_numpy(float)
        axes.bar(range(len(table)), vals, bottom=bottom, label=label)
        bottom += vals
    axes.set_xticks(range(len(table)), list(table.index))
    axes.set_xlabel(vocabulary.column_label("variant"))
    axes.set_ylabel(vocabulary.label(metric))
    axes.legend(frameon=False, fontsize=7)
    return _finish(fig, axes, title, ax is None)
