"""The tidy measurement schema shared by data files, parsers and models.

One row is one published number. Column dtypes are declared here once so a
loaded frame has numbers as numbers and empty configuration cells as missing
values (pandas NA), never as strings.
"""

from __future__ import annotations

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
]


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
    for col, dtype in COLUMNS.items():
        try:
            if dtype == "boolean":
                out[col] = out[col].map(_parse_bool, na_action="ignore")
            elif dtype != "string":
                out[col] = pd.to_numeric(out[col], errors="raise")
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
