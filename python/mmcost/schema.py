"""The tidy measurement schema shared by data files, parsers and models.

One row is one published number. Column dtypes are declared here once so a
loaded frame has numbers as numbers and empty configuration cells as missing
values (pandas NA), never as strings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Columns every measurements.csv has, in order, with their pandas dtypes.
COLUMNS: dict[str, str] = {
    "experiment": "string",
    "variant": "string",
    "metric": "string",
    "unit": "string",
    "value": "float64",
    "stddev": "float64",  # absolute, in `unit`
    "stddev_pct": "float64",  # standard deviation as a percentage of the mean
    "n_runs": "Int64",
    "baseline": "string",  # reference variant of a *_change_pct metric
    "baseline_folio_kb": "Int64",  # reference folio size, when it differs from the row's
    # configuration
    "arch": "string",
    "cpus": "Int64",
    "processes": "Int64",
    "threads": "Int64",
    "folio_kb": "Int64",
    "memcg_mb": "Int64",
    "bytes_per_process": "Int64",
    "swap_device": "string",
    "swap_mb": "Int64",
    "virtualized": "boolean",
    "numa_nodes": "Int64",
}

#: Optional columns: present where a source or parser has them, typed when present.
EXTRA_COLUMNS: dict[str, str] = {
    "cpu": "Int64",  # per-CPU counters (/proc/interrupts)
    "call_site": "string",  # lock caller or perf-profile call chain
    "lock_type": "string",  # perf lock contention 'type'
    "item": "Int64",  # row number inside a parsed table (a caller may repeat)
    "block": "Int64",  # which repeated output of the same tool in one text
    "line": "Int64",  # line of the text the number was read from
    "printed": "string",  # the number exactly as printed
    "source_name": "string",  # the tool's own name for the metric (perf event, LKP key)
    "row": "string",  # markdown table row label
    "variant_detail": "string",  # markdown table's further header rows
    "note": "string",
    "bound": "string",  # 'at_most': a claim such as 'reduced over 90%' bounds the value
    "fast_mem_mb": "Int64",  # tiered memory: the CPU-attached (fast) node(s)
    "slow_mem_mb": "Int64",  # tiered memory: the CPU-less (slow) node(s)
    # mechanism fields a user's runs often carry (any field of a mechanism may be a column)
    "compressor": "string",  # zram comp_algorithm / zswap compressor
    "kernel": "string",  # kernel version: selects the mechanism switches (mmcost.kernel)
    "cpu_model": "string",  # CPU preset (mmcost.cpu_models)
    "large_share": "float64",  # share of bytes faulted as the requested large folio size
    "run": "string",  # which run of a matrix a row belongs to
    "memcgs": "Int64",  # memcgs the processes were spread over (one each, or all in one)
    "madvise": "boolean",  # the writer madvised MADV_HUGEPAGE
}

#: The configuration columns (what a model takes as input).
CONFIG_COLUMNS = [
    "arch",
    "cpus",
    "processes",
    "threads",
    "folio_kb",
    "memcg_mb",
    "bytes_per_process",
    "swap_device",
    "swap_mb",
    "virtualized",
    "numa_nodes",
    "compressor",
    "kernel",
    "cpu_model",
    "large_share",
]


def published_sigma(df: pd.DataFrame):
    """The uncertainty a source published for each row, in the row's unit:
    ``stddev`` where > 0, else ``stddev_pct`` of ``|value|``; NaN where none."""
    import numpy as np

    value = df["value"].to_numpy(float)
    sd = df["stddev"].to_numpy(float) if "stddev" in df else np.full(len(df), np.nan)
    pct = df["stddev_pct"].to_numpy(float) if "stddev_pct" in df else np.full(len(df), np.nan)
    sigma = np.where(np.isfinite(sd) & (sd > 0), sd, np.nan)
    from_pct = ~np.isfinite(sigma) & np.isfinite(pct) & (pct > 0) & (value != 0)
    sigma[from_pct] = np.abs(value[from_pct]) * pct[from_pct] / 100
    return sigma


def coerce(df: pd.DataFrame, *, source: str = "data") -> pd.DataFrame:
    """Check that ``df`` has the schema's columns and cast them to its dtypes.

    Extra columns (``cpu``, ``call_site`` ...) are kept as they are. Raises
    ValueError naming the missing column or the first cell that is not of the
    column's type.
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}")
    out = df.copy()
    types = {**COLUMNS, **{c: t for c, t in EXTRA_COLUMNS.items() if c in out.columns}}
    for col, dtype in types.items():
        try:
            if dtype == "boolean":
                out[col] = out[col].map(_parse_bool, na_action="ignore")
            elif dtype != "string":
                out[col] = pd.to_numeric(out[col], errors="raise")
                if dtype == "Int64":  # a whole number a 64-bit integer holds, or the cast wraps silently
                    x = out[col].dropna().to_numpy(float)
                    bad = ~np.isfinite(x) | (x != np.round(x)) | (np.abs(x) >= 2.0**63)
                    if bad.any():
                        raise ValueError(f"{x[bad][0]!r} is not a whole number within 64 bits")
            out[col] = out[col].astype(dtype)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: column {col!r} is not {dtype}: {exc}") from None
    return out


def _parse_bool(cell) -> bool:
    text = str(cell).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{cell!r} is not a boolean")


def write_csv(rows: list[dict], path, extra: tuple[str, ...] = ()) -> None:
    """Write measured rows (dicts) as a measurements.csv: :data:`COLUMNS` in
    order, then ``extra`` optional columns; a key a row lacks stays empty."""
    import csv

    cols = list(COLUMNS) + [c for c in extra if c not in COLUMNS]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})
