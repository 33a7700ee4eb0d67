"""Close the loop: fit the swap model to some runs, predict the others, compare.

:func:`model_rows` turns ``mmcost measure swapout`` rows into the swap
model's frame: each process's usemem throughput, with the run's measured
large-folio share (its mTHP counters), and each run's TLB shootdowns per
swapped page (``/proc/interrupts`` over ``pswpout``). :func:`verify` fits
:class:`mmcost.swap.SwapModel` to the rows a query selects, predicts the
rest with 90% bands and returns the comparison, the LKP-style text block and
a figure of throughput against folio size.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..fit import NotIdentifiableWarning
from ..metrics import folio_label
from ..swap import SwapModel, mthp_inputs

CONFIG = ["folio_kb", "processes", "memcg_mb", "compressor"]
_KEEP = ["run", "folio_kb", "processes", "cpus", "memcg_mb", "bytes_per_process", "swap_device", "compressor",
         "virtualized", "arch", "kernel", "madvise"]


def model_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """Per-process throughput rows and per-run shootdowns-per-page rows, with ``large_share``."""
    if not isinstance(runs, pd.DataFrame) or runs.empty:
        raise ValueError("runs: need the rows of mmcost measure swapout (a non-empty DataFrame)")
    for col in ("run", "metric", "value", "folio_kb", "processes"):
        if col not in runs.columns:
            raise ValueError(f"runs: missing column {col!r} (rows of mmcost measure swapout?)")
    keep = [c for c in _KEEP if c in runs.columns]
    out = []
    for run, part in runs.groupby("run", sort=False):
        first = part.iloc[0]
        cfg = {c: first[c] for c in keep}
        kb = int(first["folio_kb"])
        stats = part[part["metric"].isin(["fault_alloc_count", "fault_fallback_count"])]
        share = 1.0
        if kb != 4 and len(stats) == 2 and stats["value"].sum() > 0:
            share = mthp_inputs(stats, kb)["large_share"]
        for v in part.loc[part["metric"] == "usemem_throughput_kib_s", "value"]:
            out.append({**cfg, "metric": "usemem_throughput_kib_s", "value": float(v), "large_share": share})
        tlb = part.loc[part["metric"] == "tlb_shootdowns", "value"].sum()
        swapped = part.loc[part.get("source_name", pd.Series(index=part.index, dtype=object)) == "pswpout", "value"].sum()
        if swapped > 0:
            out.append({**cfg, "metric": "tlb_shootdowns_per_swapped_page", "value": tlb / swapped,
                        "large_share": share})
    return pd.DataFrame(out)


def verify(runs: pd.DataFrame, fit_query: str = "processes == 1", *, free=("reclaim_us_per_folio", "core_write_gb_s"),
           model: SwapModel | None = None, interval: float = 0.9, n_samples: int = 100, seed: int = 0) -> dict:
    """Fit on ``runs.query(fit_query)``'s configurations, predict the others.

    Returns ``fit``, ``table`` (per held-out configuration and metric: runs,
    measured mean and sd, predicted best/lo/hi, error_pct, in_band), ``text``
    (an LKP-style block, 80 columns) and ``figure``."""
    rows = model_rows(runs)
    try:
        chosen = rows.query(fit_query)
    except Exception as exc:  # pandas raises many kinds for a bad query
        raise ValueError(f"fit_query: cannot select runs with {fit_query!r}: {exc}") from None
    fit_rows = chosen[chosen["metric"] == "usemem_throughput_kib_s"]
    if fit_rows.empty:
        raise ValueError(f"fit_query: {fit_query!r} selects no throughput rows to fit")
    held = rows.drop(index=chosen.index)
    if held.empty:
        raise ValueError(f"fit_query: {fit_query!r} selects every run; nothing is left to predict")
    m = model or SwapModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        fit = m.fit(fit_rows, free=list(free))
    by = [c for c in CONFIG if c in held.columns] + ["metric"]
    agg = held.groupby(by, sort=True, dropna=False).agg(
        runs=("value", "size"), measured=("value", "mean"), sd=("value", "std"),
        **{c: (c, "first") for c in held.columns if c not in (*by, "value", "run")}).reset_index()
    pred = fit.predict(agg.drop(columns=["runs", "measured", "sd"]), level=interval, n_samples=n_samples,
                       seed=seed, fixed_priors=True)
    table = agg[[*by, "runs", "measured", "sd"]].copy()
    table[["best", "lo", "hi"]] = pred[["best", "lo", "hi"]].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        table["error_pct"] = 100 * (table["best"] / table["measured"] - 1)
    table["in_band"] = (table["lo"] <= table["measured"]) & (table["measured"] <= table["hi"])
    return dict(fit=fit, table=table, text=_text(table, fit_query, interval), figure=_figure(fit, rows, table, interval))


def _text(table: pd.DataFrame, fit_query: str, interval: float) -> str:
    import textwrap

    lines = textwrap.wrap(f"fitted to: {fit_query}; every other configuration predicted, with a {interval:.0%} band "
                          "over the fit and the priors", 80)
    lines += [
             f"{'folio':>5} {'P':>2} {'memcg':>6} {'comp':>7} {'metric':<10} {'measured':>10} {'model':>9} "
             f"{'error':>7} {'in':>3}"]
    for r in table.itertuples():
        name = "KiB/s/proc" if r.metric.startswith("usemem") else "IPIs/page"
        fmt = "{:>10.4g}"
        tiny = abs(r.measured) < 0.01 and abs(r.best) < 0.01  # ~0 IPIs per page: a ratio says nothing
        err = "    ~0 " if tiny else f"{r.error_pct:>+6.1f}%"
        lines.append(f"{folio_label(r.folio_kb):>5} {int(r.processes):>2} {int(r.memcg_mb):>5}M "
                     f"{str(r.compressor)[:7]:>7} {name:<10} {fmt.format(r.measured)} {r.best:>9.4g} "
                     f"{err} {'yes' if r.in_band else 'no':>3}")
    tp = table[table["metric"] == "usemem_throughput_kib_s"]
    if len(tp):
        lines.append(f"throughput: median |error| {tp['error_pct'].abs().median():.1f}%, "
                     f"{int(tp['in_band'].sum())}/{len(tp)} measured means inside the band")
    ipi = table[(table["metric"] == "tlb_shootdowns_per_swapped_page") & (table["measured"].abs() >= 0.01)]
    if len(ipi):
        lines.append(f"IPIs/page (never fitted): median |error| {ipi['error_pct'].abs().median():.1f}%")
        lines.append("  (no fitted cost moves them, so their band has no width)")
    return "\n".join(lines)


def _figure(fit, rows: pd.DataFrame, table: pd.DataFrame, interval: float):
    """Throughput against folio size, one panel per memcg limit (the first compressor), a line per process count."""
    from ..plot import CoverFigure

    tp = rows[rows["metric"] == "usemem_throughput_kib_s"]
    if "compressor" in tp.columns:
        comp = tp["compressor"].iloc[0]
        tp = tp[tp["compressor"] == comp]
    else:
        comp = ""
    limits = sorted(tp["memcg_mb"].unique()) if "memcg_mb" in tp.columns else [None]
    fig = CoverFigure(figsize=(3.6 * len(limits) + 0.8, 4))
    axes = fig.subplots(1, len(limits), sharey=True, squeeze=False)[0]
    sizes = sorted(tp["folio_kb"].unique())
    for ax, limit in zip(axes, limits):
        part_l = tp if limit is None else tp[tp["memcg_mb"] == limit]
        for i, (p, part) in enumerate(part_l.groupby("processes")):
            color = f"C{i}"
            base = part.iloc[0]
            ask = pd.DataFrame([{**{c: base[c] for c in part.columns if c not in ("value", "run", "large_share")},
                                 "folio_kb": kb, "large_share": part.loc[part["folio_kb"] == kb, "large_share"].mean()}
                                for kb in sizes])
            band = fit.predict(ask, level=interval, n_samples=60, fixed_priors=True)
            ax.fill_between(sizes, band["lo"] / 1024, band["hi"] / 1024, color=color, alpha=0.2)
            label = f"{p} process{'es' if p > 1 else ''}"
            ax.plot(sizes, band["best"] / 1024, color=color, label=f"model, {label}")
            means = part.groupby("folio_kb")["value"].agg(["mean", "std"])
            ax.errorbar(means.index, means["mean"] / 1024, yerr=means["std"].fillna(0) / 1024, fmt="o", color=color,
                        capsize=3, label=f"measured, {label}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [folio_label(k) for k in sizes])
        ax.minorticks_off()
        ax.set_xlabel("folio size")
        ax.set_title(f"memcg {int(limit)} MiB" if limit is not None else "", fontsize=10)
    axes[0].set_ylabel("usemem throughput per process [MiB/s]")
    axes[0].legend(fontsize=8)
    kernels = sorted(set(rows["kernel"].dropna().astype(str))) if "kernel" in rows else []
    where = f"Linux {', '.join(kernels)}" if kernels else "this machine"
    fig.suptitle(f"usemem swap-out on {where}, {comp or 'zram'}: model with {interval:.0%} band, "
                 "measured mean ± sd", fontsize=10)
    fig.tight_layout()
    return fig
