"""Close the loop: fit the swap model to some runs, predict the others, compare.

:func:`model_rows` turns ``mmcost measure swapout`` rows (or runs measured
another way, in the same schema: see ``docs/reproduce.md``, "The runs
schema") into the swap model's frame: each process's usemem throughput, with
the run's measured large-folio share (its mTHP counters, or a ``large_share``
column), and each run's TLB shootdowns per swapped page (``/proc/interrupts``
over ``pswpout``). :func:`verify` fits :class:`mmcost.swap.SwapModel` to the
rows a query selects, predicts the rest with 90% bands and returns the
comparison, the LKP-style text block and a figure of throughput against
folio size. :func:`read_runs` reads a runs CSV, refusing one cut short.

Runs are grouped by every configuration column they carry (any column that
is not a per-row column, :data:`ROW_COLUMNS`): runs that differ in bytes per
process, madvise, a pinning column of your own or anything else are never
merged. Each group is predicted at its runs' mean measured ``large_share``.

Runs whose recorded load shows a busy machine (steal time, other runnable
tasks: :func:`mmcost.measure.load.busy_runs`) are kept, counted per
configuration in the table's ``busy_runs`` and named in the text.
"""

from __future__ import annotations

import csv
import io
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..corpus import discrepancy
from ..fit import FitResult, NotIdentifiableWarning, PoorFitWarning
from ..metrics import folio_label
from ..swap import SwapModel, mthp_inputs
from .load import BUSY_RUNNABLE, BUSY_STEAL, busy_runs

#: Columns that describe one row of a run (or are measured per run), not its
#: configuration; every other column is configuration, and runs that differ in
#: one are never merged.
ROW_COLUMNS = ("metric", "unit", "value", "stddev", "stddev_pct", "n_runs", "baseline", "baseline_folio_kb",
               "printed", "line", "block", "source_name", "note", "cpu", "run", "call_site", "lock_type", "item",
               "row", "variant_detail", "bound", "load_1m", "load_1m_after", "runnable_before", "runnable_after",
               "steal_share", "started", "large_share")
#: The columns a run must have.
REQUIRED = ("run", "metric", "value", "folio_kb", "processes")
#: The configuration shown in the text table's own columns; the others vary by section.
SHOWN = ("folio_kb", "processes", "memcg_mb", "compressor")
THROUGHPUT, IPIS = "usemem_throughput_kib_s", "tlb_shootdowns_per_swapped_page"
#: Below this many IPIs per page, measured and predicted alike, a ratio says nothing (printed ~0)
TINY = 0.01


def read_runs(path) -> pd.DataFrame:
    """A runs CSV, refused (ValueError naming the line) when it is cut short: a last
    line without its end, a line with fewer or more fields than the header. A file
    cut at a line's end is caught by :func:`model_rows` (a run missing its rows)."""
    path = Path(path)
    text = path.read_text()
    if not text.strip():
        raise ValueError(f"{path}: empty (no header, no runs)")
    if not text.endswith("\n"):
        n = text.count("\n") + 1
        raise ValueError(f"{path}: line {n} is incomplete (the file ends in the middle of it: cut short, or a run "
                         f"killed while writing it): {text.rsplit(chr(10), 1)[-1][:60]!r}")
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    for fields in reader:
        if fields and len(fields) != len(header):
            raise ValueError(f"{path}: line {reader.line_num} has {len(fields)} fields where the header has "
                             f"{len(header)} (cut short, or appended by a version with other columns)")
    return pd.read_csv(io.StringIO(text), low_memory=False)


def _config_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in ROW_COLUMNS]


def _run_share(run, part: pd.DataFrame, kb: int) -> float:
    """The run's large-folio share: its ``large_share`` column, else its mTHP fault counters."""
    if "large_share" in part.columns and part["large_share"].notna().any():
        vals = part["large_share"].dropna().astype(float).unique()
        if len(vals) > 1 or not 0 <= vals[0] <= 1:
            raise ValueError(f"runs: run {run!r}: large_share must be one value in [0, 1], got {sorted(vals)}")
        return float(vals[0])
    if kb == 4:
        return 1.0  # no large folios asked for; the model does not read it
    stats = part[part["metric"].isin(["fault_alloc_count", "fault_fallback_count"])]
    if "folio_kb" in stats.columns:
        stats = stats[stats["folio_kb"] == kb]
    counts = stats["metric"].value_counts()
    if counts.get("fault_alloc_count", 0) > 1 or counts.get("fault_fallback_count", 0) > 1:
        raise ValueError(f"runs: run {run!r} has {counts.max()} fault_alloc_count/fault_fallback_count rows: "
                         "rows of more than one run share its id")
    if len(counts) < 2:
        raise ValueError(f"runs: run {run!r} ({kb} KiB folios) has no fault_alloc_count and fault_fallback_count "
                         f"rows (hugepages-{kb}kB/stats) and no large_share column: its share of large folios is "
                         "unknown (add a large_share column, 0..1)")
    try:
        return float(mthp_inputs(stats, kb)["large_share"])
    except ValueError as exc:
        raise ValueError(f"runs: run {run!r}: {exc}") from None


def model_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """Per-process throughput rows and per-run shootdowns-per-page rows, with ``large_share``.

    Raises ValueError naming the run when rows of several runs share one id
    (more throughput rows than processes, two values of a configuration
    column, two ``pswpout`` counts), when a run lacks rows the other runs have
    (a file cut short), or when a run's large-folio share is unknown."""
    if not isinstance(runs, pd.DataFrame) or runs.empty:
        raise ValueError("runs: need the rows of mmcost measure swapout (a non-empty DataFrame)")
    for col in REQUIRED:
        if col not in runs.columns:
            raise ValueError(f"runs: missing column {col!r} (rows of mmcost measure swapout?)")
    used = runs[runs["metric"].isin([THROUGHPUT, "tlb_shootdowns", "pswpout_count", "fault_alloc_count",
                                     "fault_fallback_count"])]
    for col in REQUIRED:
        bad = used.index[used[col].isna()]
        if len(bad):
            raise ValueError(f"runs: row {bad[0]} (line {bad[0] + 2} of a CSV) has no {col} (cut short?)")
    keep = _config_columns(runs)
    out = []
    by_run = runs.groupby("run", sort=False)
    has_ipis = by_run["metric"].agg(lambda m: {"tlb_shootdowns", "pswpout_count"} <= set(m))
    has_faults = by_run["metric"].agg(lambda m: {"fault_alloc_count", "fault_fallback_count"} <= set(m))
    run_kb = by_run["folio_kb"].first()
    for run, part in runs.groupby("run", sort=False):
        cfg = {}
        for c in keep:
            vals = part[c].dropna().unique()
            if len(vals) > 1:
                raise ValueError(f"runs: run {run!r} has {len(vals)} values of {c} ({list(vals)[:3]}): rows of more "
                                 "than one run share its id")
            cfg[c] = vals[0] if len(vals) else np.nan
        kb, procs = int(cfg["folio_kb"]), int(cfg["processes"])
        tp = part.loc[part["metric"] == THROUGHPUT, "value"]
        if len(tp) != procs:
            raise ValueError(f"runs: run {run!r} has {len(tp)} {THROUGHPUT} rows for {procs} process(es): "
                             + ("rows of more than one run share its id (a runs.csv appended to by an older mmcost, "
                                "whose run ids repeat?)" if len(tp) > procs else "the file is cut short, or the "
                                "run lost a writer's line"))
        others = int((has_faults & (run_kb == kb)).sum())
        if kb != 4 and not has_faults[run] and others and not (
                "large_share" in part.columns and part["large_share"].notna().any()):
            raise ValueError(f"runs: run {run!r} has no fault_alloc_count and fault_fallback_count rows where "
                             f"{others} other {kb} KiB runs have them: the file is cut short, or its runs were "
                             "measured differently")
        share = _run_share(run, part, kb)
        for v in tp:
            out.append({**cfg, "run": run, "metric": THROUGHPUT, "value": float(v), "large_share": share})
        swapped = part.loc[part["metric"] == "pswpout_count", "value"]
        if len(swapped) > 1:
            raise ValueError(f"runs: run {run!r} has {len(swapped)} pswpout_count rows: rows of more than one run "
                             "share its id")
        if not has_ipis[run]:
            if has_ipis.any():
                raise ValueError(f"runs: run {run!r} has no tlb_shootdowns or pswpout_count rows where "
                                 f"{int(has_ipis.sum())} other runs have them: the file is cut short, or its runs "
                                 "were measured differently")
            continue
        if swapped.iloc[0] > 0:
            tlb = part.loc[part["metric"] == "tlb_shootdowns", "value"].sum()
            out.append({**cfg, "run": run, "metric": IPIS, "value": tlb / float(swapped.iloc[0]),
                        "large_share": share})
    return pd.DataFrame(out)


def _model_columns(model, df: pd.DataFrame) -> list[str]:
    """The columns the model reads (its fields), in the frame's order."""
    return [c for c in df.columns if c in model.leaves]


def _with_repetition_sigma(rows: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """The fit rows with ``stddev``: the spread of their configuration's
    per-process values over its runs (the repetitions), not a default
    percentage. A configuration with one value takes the median relative
    spread of the others (5% if none has two)."""
    keys = [c for c in cols if rows[c].notna().any()] or ["metric"]
    out = rows.copy()
    g = out.groupby(keys, dropna=False)["value"]
    sd = g.transform("std").to_numpy(float)
    rel = sd / out["value"].abs().to_numpy(float)
    typical = float(np.nanmedian(rel)) if np.isfinite(rel).any() else 0.05
    out["stddev"] = np.where(np.isfinite(sd) & (sd > 0), sd, typical * out["value"].abs())
    return out


def _own_structural_error(fit: FitResult, frame: pd.DataFrame, cols: list[str]) -> float:
    """The model's error on this machine's configurations it was not fitted
    to, in log: each fitted configuration left out in turn and predicted by a
    refit of the others (:meth:`FitResult.loo`), tau by empirical Bayes over
    the configurations' mean residuals (:func:`mmcost.corpus.discrepancy.estimate_tau`),
    each with its runs' own spread of the mean. 0 with fewer than three configurations."""
    keys = [c for c in cols if frame[c].notna().any()]
    groups = frame.groupby(keys, dropna=False).ngroups if keys else 1
    if groups < 3:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        warnings.simplefilter("ignore", PoorFitWarning)
        loo = fit.loo(by=keys)
    per = loo.groupby(keys, dropna=False).agg(measured=("measured", "mean"), predicted=("predicted", "mean"),
                                              sd=("measured", "std"), n=("measured", "size"))
    r = np.log(per["measured"] / per["predicted"]).to_numpy(float)
    s = np.nan_to_num((per["sd"] / np.sqrt(per["n"]) / per["measured"]).to_numpy(float))
    tau = discrepancy.estimate_tau(r, s)
    return 0.0 if not np.isfinite(tau) else tau


def verify(runs: pd.DataFrame, fit_query: str = "processes == 1", *, free=("reclaim_us_per_folio", "core_write_gb_s"),
           model: SwapModel | None = None, level: float = 0.9, n_samples: int = 100, seed: int = 0,
           tolerance: float = 0.01, fit: FitResult | None = None) -> dict:
    """Fit on ``runs.query(fit_query)``'s configurations, predict the others
    (``fit_query=None``: fit nothing, predict every run from ``model``'s
    values and priors: a machine profile's measured costs, say; ``fit``, with
    ``fit_query=None``: predict with that fit instead, its covariance and the
    fixed costs' priors, e.g. a joint fit's shared costs transplanted onto
    ``model``, :meth:`mmcost.corpus.JointFit.transplant`).

    Returns ``fit``, ``table`` (per held-out configuration and metric: runs,
    ``busy_runs``, how many of them ran on a busy machine, kept:
    :func:`mmcost.measure.load.busy_runs`; the runs' mean ``large_share``
    the group is predicted at, measured mean and sd, predicted best/lo/hi, error_pct, ``tol`` and in_band), ``text``
    (an LKP-style block, 80 columns) and ``figure``.

    ``in_band``: the measured mean lies in [lo, hi]. Where no fitted
    parameter moves a metric (TLB shootdowns per page are counts the fit does
    not see), the band has no width; there the measured mean is compared with
    the prediction within ``tol`` = the larger of ``tolerance`` x the
    prediction and the half-width of the runs' own ``level`` interval of
    their mean (Student t over the runs), as the text says."""
    from scipy import stats

    if isinstance(free, str):
        free = [free]
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance: a relative tolerance in [0, 1), got {tolerance!r}")
    rows = model_rows(runs)
    # (a configuration column of verify's own: large-folio runs after mmcost measure swapout's warm-up, unwarmed_large_runs)
    rows["warmed"] = rows["run"].isin(runs.loc[runs["metric"] == "warmup_unbacked_share", "run"])
    busy = busy_runs(runs)
    busy = busy[busy != ""]
    m = model or SwapModel()
    cols = _model_columns(m, rows)
    tau = 0.0
    if fit is not None and fit_query is not None:
        raise ValueError("verify: fit= is a fit to predict with, for fit_query=None only")
    if fit is not None:
        m = fit.model
        cols = _model_columns(m, rows)
    if fit_query is None:  # nothing fitted here: every run predicted from the model's (or fit's) values and priors
        held, fit = rows, (fit if fit is not None else FitResult.of_priors(m))
    else:
        try:
            chosen = rows.query(fit_query)
        except Exception as exc:  # pandas raises many kinds for a bad query
            raise ValueError(f"fit_query: cannot select runs with {fit_query!r}: {exc}") from None
        fit_rows = chosen[chosen["metric"] == THROUGHPUT]
        if fit_rows.empty:
            raise ValueError(f"fit_query: {fit_query!r} selects no throughput rows to fit")
        held = rows.drop(index=chosen.index)
        if held.empty:
            raise ValueError(f"fit_query: {fit_query!r} selects every run; nothing is left to predict")
        frame = _with_repetition_sigma(fit_rows, [c for c in cols if c in fit_rows.columns])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            fit = m.fit(frame[["metric", "value", "stddev", *cols]], free=list(free), absolute_sigma=True)
        tau = _own_structural_error(fit, frame, [c for c in cols if c in frame.columns])
    by = [c for c in _config_columns(held) if c not in ("metric",)] + ["metric"]
    per_run = held.groupby(["run", "metric"], sort=False).agg(large_share=("large_share", "first"))
    agg = held.groupby(by, sort=True, dropna=False).agg(
        runs=("run", "nunique"), measured=("value", "mean"), sd=("value", "std"),
        run_ids=("run", lambda r: list(dict.fromkeys(r)))).reset_index()
    agg["large_share"] = [float(np.mean([per_run.loc[(r, met), "large_share"] for r in ids]))
                          for ids, met in zip(agg["run_ids"], agg["metric"])]
    ask = agg[["metric", *[c for c in cols if c in agg.columns]]].copy()
    # (this machine's own runs: the structural error measured across other sources' machines is not added)
    # fitted: the fit's covariance, and the error of the fixed values measured by tau (below), not their priors'
    # spread too (that counted twice made bands of 0.1x-2x); nothing fitted: the priors are all there is
    pred = fit.predict(ask, level=level, n_samples=n_samples, seed=seed, fixed_priors=fit_query is None,
                       structural=False)
    table = agg[[*by, "runs", "large_share", "measured", "sd"]].copy()
    table.insert(table.columns.get_loc("runs") + 1, "busy_runs",
                 [sum(r in busy.index for r in ids) for ids in agg["run_ids"]])
    table[["best", "lo", "hi"]] = pred[["best", "lo", "hi"]].to_numpy()
    # a throughput band also carries the model's error on this machine's configurations it did not see
    # (tau, from leaving each fitted configuration out) and the spread of the held-out runs' own mean
    tp = (table["metric"] == THROUGHPUT).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        noise = np.nan_to_num(table["sd"].to_numpy(float) / np.sqrt(table["runs"].to_numpy(float))
                              / table["measured"].abs().to_numpy(float))
    lo, hi = discrepancy.widen("throughput", table["best"][tp], table["lo"][tp], table["hi"][tp], level,
                               np.hypot(tau, noise[tp]))
    table.loc[tp, "lo"], table.loc[tp, "hi"] = lo, hi
    cold = unwarmed_large_runs(table, fit.model)
    if cold.any():  # their fresh folios on host-unbacked memory or not: the band's lower edge at all of them unbacked
        worst = fit.predict(ask[cold].assign(unbacked_share=1.0), level=level, n_samples=n_samples, seed=seed,
                            fixed_priors=fit_query is None, structural=False)
        table.loc[cold, "lo"] = np.minimum(table.loc[cold, "lo"].to_numpy(float), worst["lo"].to_numpy(float))
    table.attrs["structural_error"] = tau
    table.attrs["unwarmed_large_configurations"] = int(cold.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        table["error_pct"] = 100 * (table["best"] / table["measured"] - 1)
        n = agg["runs"].to_numpy(float)
        t = np.where(n > 1, stats.t.ppf((1 + level) / 2, np.maximum(n - 1, 1)), 0.0)
        spread = np.nan_to_num(t * agg["sd"].to_numpy(float) / np.sqrt(n))
    flat = (table["hi"] - table["lo"]).abs() <= 1e-9 * table["best"].abs()
    table["tol"] = np.where(flat, np.maximum(tolerance * table["best"].abs(), spread), np.nan)
    banded = (table["lo"] <= table["measured"]) & (table["measured"] <= table["hi"])
    tiny = (table["measured"].abs() < TINY) & (table["best"].abs() < TINY)  # printed ~0: both next to nothing
    table["in_band"] = np.where(flat, tiny | ((table["measured"] - table["best"]).abs() <= table["tol"]), banded)
    table["in_band"] = table["in_band"].astype(bool)
    fitted = set() if fit_query is None else set(fit_rows["run"])
    machine = machine_match(runs, m)
    text = _text(table, fit_query, level, tolerance, busy, fitted)
    if machine["text"]:
        text += "\n" + "\n".join(textwrap.wrap(machine["text"], 80))
    return dict(fit=fit, table=table, text=text, figure=_figure(fit, rows, table, level, cols), machine=machine)


def unwarmed_large_runs(table: pd.DataFrame, model) -> np.ndarray:
    """Throughput rows of large-folio runs without :func:`mmcost.measure.swapout_runs.warm_up` on
    a machine whose host takes back free memory (``host_touch_us_per_page`` > 0, a guest's
    profile): which of their fresh folios were host-unbacked depends on what ran before them
    (:func:`mmcost.swap.paths.unbacked_touch_us`), so none of it is assumed."""
    if not float(np.max(np.atleast_1d(model.host_touch_us_per_page))) > 0 or "folio_kb" not in table:
        return np.zeros(len(table), bool)
    warmed = table["warmed"].fillna(False).astype(bool) if "warmed" in table else False
    return ((table["metric"] == THROUGHPUT) & (table["folio_kb"] > 4) & ~warmed).to_numpy(bool)


# what a run records of its machine, from the most to the least specific
_RUN_IDS = (("machine_profile", "profile"), ("boot_id", "boot_id"), ("kernel", "kernel"))


def machine_match(runs: pd.DataFrame, model) -> dict:
    """Whether ``model``'s machine profile (``cpu_model=<profile.toml>``; or
    ``model`` a profile's path) was measured on the machine the runs ran on.

    Per-primitive costs differ between VMs of one kind (one flush IPI cost
    1.3, 11.4 and 28.6 us on three of this project's 6.18 guests), so a
    profile predicts only its own machine's runs. Compared, from the most to
    the least specific record both sides have: the runs' ``machine_profile``
    with the profile's id (:func:`mmcost.measure.profile.profile_id`), their
    ``boot_id`` with the one the profile recorded, their ``kernel`` release
    with its kernel (a build string such as ``6.18.44-fc-v1147``: the same
    build may run on other hosts, so a match there is weaker).

    Returns ``status`` (``same``, ``other``, ``mixed``: the runs disagree among
    themselves, ``unknown``: nothing to compare, or ``""`` when the model uses
    no profile), ``by`` (the record compared) and ``text`` (one sentence, or
    empty)."""
    name = model if isinstance(model, str) else getattr(model, "cpu_model", None)
    if not (isinstance(name, str) and name.strip().lower().endswith(".toml")):
        return dict(status="", by="", text="")
    from .profile import load, profile_id

    desc = load(name).description
    ours = {"profile": profile_id(name), "boot_id": str(desc.get("boot_id", "")),
            "kernel": str(desc.get("kernel", ""))}
    label = Path(name).name
    for column, key in _RUN_IDS:
        if column not in runs.columns or not ours[key]:
            continue
        seen = sorted({str(v) for v in runs[column].dropna() if str(v).strip()})
        if not seen:
            continue
        if seen == [ours[key]]:
            weak = " (a kernel build may run on other hosts too)" if key == "kernel" else ""
            return dict(status="same", by=column, text=f"machine: the runs' {column} is the profile's ({label}): "
                        f"its measured costs are the runs' machine's{weak}.")
        status = "other" if ours[key] not in seen else "mixed"
        shown = ", ".join(seen[:3]) + (", ..." if len(seen) > 3 else "")
        return dict(status=status, by=column,
                    text=f"machine: WARNING the runs' {column} ({shown}) is {'not' if status == 'other' else 'not only'}"
                         f" the profile's ({ours[key]}, {label}): its costs were measured on another machine, and "
                         "per-primitive costs differ between VMs of one kind (a flush IPI 1.3-28.6 us on three 6.18 "
                         "guests); run mmcost measure machine where the runs ran.")
    return dict(status="unknown", by="", text=f"machine: the runs record no machine_profile, boot_id or kernel to "
                f"compare with the profile's ({label}).")


def _fmt_config(col: str, value) -> str:
    if col == "bytes_per_process" and pd.notna(value):
        b = int(value)
        for unit, size in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
            if b % size == 0:
                return f"{col}={b // size}{unit}"
    return f"{col}={value}"


def _text(table: pd.DataFrame, fit_query: str, level: float, tolerance: float = 0.01, busy: pd.Series | None = None,
          fitted: set = frozenset()) -> str:
    import textwrap

    said = (f"fitted to: {fit_query}; every other configuration predicted, with a {level:.0%} band over the fit "
            "and the priors" if fit_query is not None else
            f"nothing fitted: every configuration predicted from the model's values, with a {level:.0%} band over "
            "its priors")
    lines = textwrap.wrap(said + ", at its runs' mean measured large-folio share", 80)
    busy = busy if busy is not None else pd.Series(dtype=object)
    head = (f"{'folio':>5} {'P':>2} {'memcg':>6} {'comp':>7} {'metric':<10} {'measured':>10} {'model':>9} "
            f"{'error':>7} {'in':>3}" + (f" {'busy':>5}" if len(busy) else ""))
    extra = [c for c in table.columns[:list(table.columns).index("metric")]
             if c not in SHOWN and table[c].astype(str).nunique() > 1]
    sections = table.groupby(extra, sort=True, dropna=False) if extra else [((), table)]
    for key, part in sections:
        if extra:
            key = key if isinstance(key, tuple) else (key,)
            lines += textwrap.wrap(", ".join(_fmt_config(c, v) for c, v in zip(extra, key)) + ":", 80)
        lines.append(head)
        for r in part.itertuples():
            name = "KiB/s/proc" if r.metric.startswith("usemem") else "IPIs/page"
            fmt = "{:>10.4g}"
            tiny = abs(r.measured) < TINY and abs(r.best) < TINY  # ~0 IPIs per page: a ratio says nothing
            err = "    ~0 " if tiny else f"{r.error_pct:>+6.1f}%"
            memcg = f"{int(r.memcg_mb):>5}M" if "memcg_mb" in table.columns and pd.notna(r.memcg_mb) else f"{'-':>6}"
            comp = str(r.compressor)[:7] if "compressor" in table.columns else "-"
            lines.append(f"{folio_label(r.folio_kb):>5} {int(r.processes):>2} {memcg} "
                         f"{comp:>7} {name:<10} {fmt.format(r.measured)} {r.best:>9.4g} "
                         f"{err} {'yes' if r.in_band else 'no':>3}"
                         + (f" {f'{r.busy_runs}/{r.runs}':>5}" if r.busy_runs else ""))
    tp = table[table["metric"] == THROUGHPUT]
    if len(tp):
        lines.append(f"throughput: median |error| {tp['error_pct'].abs().median():.1f}%, "
                     f"{int(tp['in_band'].sum())}/{len(tp)} measured means inside the band")
    ipi = table[(table["metric"] == IPIS) & (table["measured"].abs() >= TINY)]
    if len(ipi):
        lines.append(f"IPIs/page (never fitted): median |error| {ipi['error_pct'].abs().median():.1f}%")
    if len(busy):
        n_fit = sum(r in fitted for r in busy.index)
        named = "; ".join(f"{r}: {why}" for r, why in list(busy.items())[:3]) + ("; ..." if len(busy) > 3 else "")
        lines += textwrap.wrap(f"busy machine: {len(busy)} run(s) ({n_fit} fitted, {len(busy) - n_fit} held out) "
                               f"had more than {BUSY_STEAL:.0%} of CPU time stolen or >= {BUSY_RUNNABLE} other "
                               "runnable task(s) at their start or end; kept, counted in 'busy' (busy_runs): "
                               f"their numbers are partly their neighbours' ({named}); rerun them on a quiet "
                               "machine", 80)
    if table.attrs.get("unwarmed_large_configurations"):
        lines += textwrap.wrap(f"large-folio runs without the warm-up ({table.attrs['unwarmed_large_configurations']} "
                               "configuration(s)): on this machine the host takes back free memory, and which of "
                               "their fresh folios it had taken is not known: the band reaches down to all of them "
                               "(host_touch_us_per_page); rerun with mmcost measure swapout's warm-up.", 80)
    if table["tol"].notna().any():
        lines += textwrap.wrap(f"IPIs/page: no fitted cost moves them, so their band has no width; their 'in' "
                               f"says the measured mean is within {tolerance:.0%} of the model, or the model within "
                               f"the runs' own {level:.0%} level of their mean (Student t), whichever is "
                               f"wider, or both are below {TINY:g} (~0).", 80)
    return "\n".join(lines)


def _figure(fit, rows: pd.DataFrame, table: pd.DataFrame, level: float, cols=None):
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
            keep = [c for c in (cols if cols is not None else part.columns)
                    if c in part.columns and c not in ("value", "run", "large_share")]
            ask = pd.DataFrame([{"metric": base["metric"], **{c: base[c] for c in keep}, "folio_kb": kb,
                                 "large_share": part.loc[part["folio_kb"] == kb, "large_share"].mean()}
                                for kb in sizes])
            band = fit.predict(ask, level=level, n_samples=60, fixed_priors=True, structural=False)
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
    fig.suptitle(f"usemem swap-out on {where}, {comp or 'zram'}: model with {level:.0%} band, "
                 "measured mean ± sd", fontsize=10)
    fig.tight_layout()
    return fig
