"""Leave-one-source-out: every source predicted by a joint fit of all the others.

For each bundled source S:

1. refit every other source jointly (:func:`mmcost.corpus.fit_all` without
   S; when S fits nothing of its own, the full joint fit is already without it);
2. give S's model the shared costs of that fit: the costs S shares with
   others at their joint values and covariance, the machine factor of S's CPU
   at its fitted value if another source ran on that CPU, else at its prior;
   S's own costs (shared with nobody) at their priors;
3. predict every row of S that nothing of S was fitted to: its fitted rows
   (when its own parameters all have priors) and its held-out rows (the
   study's ``held_out()``, run on that fit).

A source whose model needs parameters no prior describes (a benchmark's miss
rates, a working set: ``migrc_tlb``'s workload, ``swap_alloc_locks``'
CPU-second totals) keeps its own fit of them: its fitted rows are then not
predicted (they were fitted), only its held-out rows are, conditionally on
them. The table says which sources these are.

The structural error (:mod:`.discrepancy`) is then estimated per family from
these residuals, and its coverage measured nested: the bands of S's rows use
the discrepancy estimated from the other sources' residuals only. A row's own
band (its parameters' spread) is read from its 90% band as a Gaussian
standard deviation in the family's space (half the width over 1.645), so
coverage at 50% and 80% assumes that shape.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import schema, studies
from ..fit import InfeasibleDrawsWarning, NotIdentifiableWarning, PoorFitWarning
from ..model import UnknownColumnWarning
from ..studies import hit
from . import discrepancy, sharing
from .sources import _candidates, _rows, fallback_parameters, fit_all

#: the level of the bands the residuals' own spread is read from
LEVEL = 0.9
#: the nominal levels whose coverage the table reports
LEVELS = (0.5, 0.8, 0.9)
#: parameter draws per predicted row's band
N_SAMPLES = 100
COLUMNS = ["source", "kind", "metric", "family", "configuration", "published", "predicted", "lo", "hi", "sigma",
           "background", "conditional"]


def predictive_fit(study, joint, fallback):
    """``study``'s fit with the shared costs of ``joint`` (step 2 of the module
    docstring) and whether parameters of its own, without a prior, were kept
    from its own fit."""
    base = study.fit()
    known = set(joint.params)
    lks = tuple(lk for lk in sharing.links(study, known | set(fallback))
                if lk.shared in known or (lk.local in base.names and fallback[lk.shared].prior is not None))
    fit = joint.transplant(base, lks, fallback)
    linked = {lk.local for lk in lks}
    conditional = any(n not in linked for n in fit.names)
    return fit, conditional


def _with_fit(study, fit):
    """A fresh instance of ``study`` whose ``fit()`` is ``fit`` (its held_out() then predicts with it)."""
    fresh = type(study)()
    fresh.fit = lambda: fit
    return fresh


def _background(rows: pd.DataFrame) -> np.ndarray:
    """Per row of a count family: its metric's background (:func:`discrepancy.background` of the
    published values; 1 count where all are 0); 0 for other families."""
    out = np.zeros(len(rows))
    published = rows["published"].to_numpy(float)
    for metric, idx in rows.groupby("metric", sort=False).indices.items():
        if discrepancy.family(metric) == "count":
            out[idx] = discrepancy.background("count", published[idx]) or 1.0
    return out


def source_rows(study, joint, fallback, is_member: bool) -> pd.DataFrame:
    """The rows of ``study`` predicted with ``joint`` (a fit without it). A
    study that fits nothing and predicts from its priors alone (no ``fit()``)
    is taken as it is: nothing of it was fitted."""
    if not is_member and not study.has_held_out():
        return pd.DataFrame(columns=COLUMNS)
    fit, conditional = None, False
    if study.mechanism is not type(None):
        try:
            fit, conditional = predictive_fit(study, joint, fallback)
        except NotImplementedError:  # (no fit() of its own: it predicts from its priors)
            pass
    parts = []
    if is_member and not conditional and study.free:  # (a member that frees nothing: its rows are all held out)
        rows = _rows(study.id).reset_index(drop=True)
        pred = fit.predict(rows, level=LEVEL, n_samples=N_SAMPLES, seed=0, fixed_priors=True)
        parts.append(pd.DataFrame({"kind": "fitted", "metric": rows["metric"], "configuration": "",
                                   "published": rows["value"].to_numpy(float), "predicted": pred["best"],
                                   "lo": pred["lo"], "hi": pred["hi"],
                                   "sigma": schema.published_sigma(rows)}))
    if study.has_held_out() and study.in_leave_one_source_out:
        held = (study if fit is None else _with_fit(study, fit)).held_out()
        parts.append(held.assign(kind="held out", sigma=study.held_out_sigma())[
            ["kind", "metric", "configuration", "published", "predicted", "lo", "hi", "sigma"]])
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "source", study.id)
    out["family"] = [discrepancy.family(m) for m in out["metric"]]
    out["background"] = _background(out)
    out["conditional"] = conditional
    return out[COLUMNS]


def run(names=None, progress: bool = True) -> pd.DataFrame:
    """Every source's rows predicted without it (module docstring): one row
    per predicted number, ``COLUMNS``. Shows a progress bar; Ctrl-C stops
    between sources."""
    names = list(names or studies.names())
    with warnings.catch_warnings(), discrepancy.parameters_only():
        for w in (NotIdentifiableWarning, PoorFitWarning, UnknownColumnWarning, InfeasibleDrawsWarning):
            warnings.simplefilter("ignore", w)
        full = fit_all(names=names)
        members = {s.id for s in _candidates(names)}
        fallback = fallback_parameters(names)
        parts = []
        for name in tqdm(names, desc="leave one source out", disable=not progress, unit="source"):
            study = studies.get(name)
            joint = fit_all(exclude=[name], names=names, x0=full.params) if name in members and len(members) > 1 \
                else full
            parts.append(source_rows(study, joint, fallback, name in members))
    out = pd.concat([p for p in parts if len(p)], ignore_index=True)
    r, s = _space(out)
    out["residual"], out["own_sd"] = r, s
    return out


def _space(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    r = np.full(len(rows), np.nan)
    s = np.full(len(rows), np.nan)
    for fam, idx in rows.groupby("family", sort=False).indices.items():
        sub = rows.iloc[idx]
        r[idx], s[idx] = discrepancy.residual_space(fam, sub["published"], sub["predicted"], sub["lo"], sub["hi"],
                                                    LEVEL, sub["background"])
    return r, s


#: a family's own tau needs residuals from at least this many sources; with fewer (one thread's perf
#: shares) its rows share the tau of every log-space family pooled: a variance from one or two groups
#: of correlated rows says little about the next source
MIN_SOURCES = 3


def _tau(rows: pd.DataFrame, fam: str) -> float:
    own = rows[rows["family"] == fam]
    if own["source"].nunique() < MIN_SOURCES and fam not in discrepancy.ADDITIVE:
        own = rows[~rows["family"].isin(discrepancy.ADDITIVE)]
    return discrepancy.estimate_tau(own["residual"], own["own_sd"])


def taus(rows: pd.DataFrame) -> dict[str, float]:
    """The structural error per family from LOSO rows (:func:`discrepancy.estimate_tau`;
    a family with rows from fewer than :data:`MIN_SOURCES` sources takes the pooled log-space tau)."""
    return {fam: _tau(rows, fam) for fam in sorted(rows["family"].unique())}


def nested_tau(rows: pd.DataFrame) -> np.ndarray:
    """Per row, its family's tau estimated from the other sources' rows only (as :func:`taus`)."""
    out = np.full(len(rows), np.nan)
    for (src, fam), idx in rows.groupby(["source", "family"], sort=False).indices.items():
        out[idx] = _tau(rows[rows["source"] != src], fam)
    return out


def evaluate(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (from :func:`run`) with the nested tau, the widened 90% band,
    coverage flags at each of :data:`LEVELS` (with and without the
    structural error), hits, and the nulls' hits."""
    out = rows.copy()
    out["tau"] = nested_tau(out)
    from scipy.special import ndtri

    for level in LEVELS:
        z = float(ndtri(0.5 + level / 2))
        tot = np.sqrt(out["own_sd"] ** 2 + out["tau"].fillna(0) ** 2)
        out[f"in{int(level * 100)}"] = np.abs(out["residual"]) <= z * tot
        out[f"in{int(level * 100)}_fit"] = np.abs(out["residual"]) <= z * out["own_sd"]
    lo, hi = np.array(out["lo"], float), np.array(out["hi"], float)
    for fam, idx in out.groupby("family", sort=False).indices.items():
        sub = out.iloc[idx]
        lo[idx], hi[idx] = discrepancy.widen(fam, sub["predicted"], sub["lo"], sub["hi"], LEVEL, sub["tau"],
                                             sub["background"])
    out["lo90"], out["hi90"] = lo, hi
    out["hit"] = [hit(m, p, q, s) for m, p, q, s in zip(out["metric"], out["published"], out["predicted"],
                                                          out["sigma"])]
    out["null"] = _nulls(out)
    out["null_hit"] = [np.isfinite(n) and hit(m, p, n, s) for m, p, n, s in
                       zip(out["metric"], out["published"], out["null"], out["sigma"])]
    return out


def _nulls(rows: pd.DataFrame) -> np.ndarray:
    """No change (0) for a relative change; for an absolute value, the median
    of the same metric's published values in the other sources (NaN when no
    other source publishes it)."""
    out = np.full(len(rows), np.nan)
    for i, r in enumerate(rows.itertuples()):
        if r.family == "change":
            out[i] = 0.0
        else:
            other = rows[(rows["metric"] == r.metric) & (rows["source"] != r.source)]["published"]
            out[i] = float(other.median()) if len(other) else math.nan
    return out


def _width(r) -> float:
    """A 90% band's width: points for a change, else relative to the prediction."""
    w = r.hi90 - r.lo90
    return w if r.family == "change" else w / abs(r.predicted) if r.predicted else math.nan


def summary(ev: pd.DataFrame, by: str = "source") -> pd.DataFrame:
    """Per ``by`` (source or family) and overall: rows, median absolute error (points
    for changes, % of the published value otherwise), hits, coverage of the
    nominal 50/80/90% bands, median 90% band width, and the null's hits."""
    def one(g):
        chg = g["family"] == "change"
        miss = np.abs(g["published"] - g["predicted"])
        err = np.where(chg, miss, 100 * miss / np.abs(g["published"]).where(g["published"] != 0))
        widths = [_width(r) for r in g.itertuples()]
        nulls = g["null"].notna()
        return pd.Series({
            "rows": len(g), "conditional": bool(g["conditional"].any()),
            "median_err": float(np.nanmedian(err)) if len(err) else math.nan,
            "hits": int(g["hit"].sum()),
            "cov50": float(g["in50"].mean()), "cov80": float(g["in80"].mean()), "cov90": float(g["in90"].mean()),
            "cov90_fit": float(g["in90_fit"].mean()),
            "width90": float(np.nanmedian(widths)) if len(widths) else math.nan,
            "null_rows": int(nulls.sum()), "null_hits": int(g["null_hit"][nulls].sum()),
        })

    parts = [one(g).rename(k) for k, g in ev.groupby(by, sort=False)]
    parts.append(one(ev).rename("all"))
    return pd.DataFrame(parts)


def table(ev: pd.DataFrame) -> str:
    """The leave-one-source-out table, 80 columns."""
    lines = [f"{'source':<30} {'rows':>4} {'err':>6} {'hits':>7} {'c50':>4} {'c80':>4} {'c90':>4} {'width':>6} "
             f"{'null':>7}"]
    for by in ("source", "family"):
        s = summary(ev, by)
        if by == "family":
            lines.append("")
        for name, r in s.iterrows():
            if by == "family" and name == "all":
                continue
            label = (name + (" *" if r["conditional"] else ""))[:30]
            lines.append(f"{label:<30} {r['rows']:>4.0f} {r['median_err']:>6.3g} {r['hits']:>3.0f}/{r['rows']:<3.0f} "
                         f"{100 * r['cov50']:>3.0f}% {100 * r['cov80']:>3.0f}% {100 * r['cov90']:>3.0f}% "
                         f"{r['width90']:>6.3g} {r['null_hits']:>3.0f}/{r['null_rows']:<3.0f}")
    return "\n".join(lines)


def figure(ev: pd.DataFrame):
    """Calibration: the share of left-out rows inside their band against the
    band's nominal level, per metric family and overall, with the structural
    error (solid) and with the fit's parameters alone (dotted, overall)."""
    from matplotlib.figure import Figure
    from scipy.special import ndtri

    levels = np.linspace(0.05, 0.99, 48)
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 100], [0, 100], color="0.6", lw=1, label="calibrated (observed = nominal)")

    def cov(g, with_tau=True):
        tot = np.sqrt(g["own_sd"] ** 2 + (g["tau"].fillna(0) ** 2 if with_tau else 0))
        return [100 * float(np.mean(np.abs(g["residual"]) <= float(ndtri(0.5 + lv / 2)) * tot)) for lv in levels]

    ok = ev[np.isfinite(ev["residual"]) & np.isfinite(ev["own_sd"])]
    for fam, g in ok.groupby("family"):
        ax.plot(100 * levels, cov(g), lw=1.2, label=f"{fam} ({len(g)} rows)")
    ax.plot(100 * levels, cov(ok), color="black", lw=2.2, label=f"all ({len(ok)} rows)")
    ax.plot(100 * levels, cov(ok, with_tau=False), color="black", lw=1.5, ls=":",
            label="all, the fit's own band only")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("nominal band level [%]")
    ax.set_ylabel("left-out numbers inside the band [%]")
    ax.set_title("Bands on sources the fit did not see (leave one source out)", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def report(ev: pd.DataFrame, shipped: dict[str, float]) -> tuple[list[str], dict[str, float]]:
    """The report's section (markdown lines) and the taus estimated from every source."""
    t = taus(ev)
    s = summary(ev, "source").loc["all"]
    chg = ev["family"] == "change"
    lines = [
        "## leave one source out: every source predicted by a joint fit of the others", "",
        report_wrap("Per source: rows predicted; err, the median |error| (points for a relative change, % of "
                    "the published value otherwise); hits, within 2 sigma where a stddev is published, else "
                    "within 10 points of a change or 10% of a value; c50/c80/c90, the share inside the nominal "
                    "band with the structural error estimated from the other sources; width, the median 90% "
                    "band (points, or relative to the prediction); null, the hits of 'no change' (changes) or "
                    "of the other sources' median (values). * keeps parameters without a prior from its own "
                    "fit (only its held-out rows are counted)."), "",
        "```", table(ev), "```", "",
        report_wrap(f"Overall: {s['hits']:.0f} of {s['rows']:.0f} rows within 10 points or 2 sigma "
                    f"({100 * s['hits'] / s['rows']:.0f}%; target 70%), the null on the rows it applies to "
                    f"{s['null_hits']:.0f} of {s['null_rows']:.0f}; nominal 90% bands cover "
                    f"{100 * s['cov90']:.0f}% (target 85-95%; {100 * s['cov90_fit']:.0f}% without the structural "
                    f"error); relative changes: {int(ev[chg]['hit'].sum())} of {int(chg.sum())} hits."), "",
        "Structural error per family (empirical Bayes on these residuals):", "", "```",
    ]
    for fam, v in t.items():
        unit = "points" if fam in discrepancy.ADDITIVE else f"in log, x{math.exp(v):.2f} at 1 sigma"
        was = shipped.get(fam)
        lines.append(f"{fam:<11} tau = {v:.4g} ({unit})" + ("" if was is None or np.isclose(was, v, rtol=0.02)
                                                             else f"  [shipped: {was:.4g}, stale]"))
    lines += ["```", ""]
    below = [name for name, r in summary(ev, "source").iterrows() if name != "all" and r["hits"] < r["rows"] / 2]
    if below:
        lines += ["Sources with fewer than half their rows hit, and where each miss points:", ""]
        for name in below:
            said = getattr(studies.get(name), "miss", "") or "not yet known"
            lines += [report_wrap(f"- {name}: {said}.")]
        lines.append("")
    lines += ["![calibration](calibration.png)", ""]
    return lines, t


def report_wrap(text: str) -> str:
    from .. import report as rep

    return rep.wrap(text)
