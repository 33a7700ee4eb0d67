"""The bundled published measurements.

>>> import mmcost
>>> mmcost.datasets.names()            # ids of the bundled sources
>>> df = mmcost.datasets.load("small_thp_swapout")
>>> mmcost.datasets.source("small_thp_swapout")["author"]

The files live in the installed package ``mmcost.data`` (the repository's
``data/`` folder), so they are found from any working directory after a plain
``pip install``.
"""

from __future__ import annotations

import re
import sys
import warnings
from importlib.resources import files

import pandas as pd

from . import metrics as vocabulary
from . import schema

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["names", "load", "path", "source", "metrics"]


def _root():
    return files("mmcost.data")


def names() -> list[str]:
    """Ids of the bundled sources, sorted."""
    return sorted(p.name for p in _root().iterdir() if p.is_dir() and (p / "source.toml").is_file())


def _folder(dataset_id: str):
    if not isinstance(dataset_id, str):
        raise TypeError(f"dataset id must be a str, got {type(dataset_id).__name__}")
    if dataset_id not in names():
        raise KeyError(f"unknown dataset {dataset_id!r}; bundled: {', '.join(names())}")
    return _root() / dataset_id


def path(dataset_id: str):
    """The source's folder (a ``Traversable``; a path on a regular install): where its
    raw files lie, e.g. a machine profile a study reads."""
    return _folder(dataset_id)


def source(dataset_id: str) -> dict:
    """Provenance of a source (title, author, date, message-id, hardware ...)."""
    return tomllib.loads((_folder(dataset_id) / "source.toml").read_text(encoding="utf-8"))


def load(dataset_id: str) -> pd.DataFrame:
    """The source's measurements as a tidy DataFrame (see :mod:`mmcost.schema`)."""
    path = _folder(dataset_id) / "measurements.csv"
    with path.open(encoding="utf-8") as f:
        raw = pd.read_csv(f, dtype=str, keep_default_na=False, na_values=[""])
    if raw.empty:
        raise ValueError(f"{dataset_id}/measurements.csv has no rows")
    return schema.coerce(raw, source=f"{dataset_id}/measurements.csv")


def metrics(pattern: str | None = None) -> pd.DataFrame:
    """Every metric in the bundled data: metric, unit, meaning, the datasets
    and number of rows that have it. ``pattern`` (a regex) filters on the
    metric name and its meaning, e.g. ``metrics("tlb")``."""
    if pattern is not None:
        if not isinstance(pattern, str):
            raise TypeError(f"pattern must be a str (a regular expression) or None, got {type(pattern).__name__}")
        try:
            with warnings.catch_warnings():  # (a '[[' set warns of future semantics before it fails or compiles)
                warnings.simplefilter("ignore", FutureWarning)
                rx, rx_meaning = re.compile(pattern), re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} is not a regular expression: {exc}") from None
    seen: dict[str, dict] = {}
    for name in names():
        for metric, n in load(name)["metric"].value_counts().items():
            entry = seen.setdefault(metric, {"datasets": [], "rows": 0})
            entry["datasets"].append(name)
            entry["rows"] += int(n)
    out = []
    for metric, entry in sorted(seen.items()):
        base = metric.removesuffix(vocabulary.CHANGE_SUFFIX)
        meaning = vocabulary.METRICS.get(metric, vocabulary.METRICS.get(base, ("", "")))[1]
        if metric != base and metric not in vocabulary.METRICS:
            meaning = f"relative change of {base}" + (f" ({meaning})" if meaning else "")
        out.append((metric, vocabulary.unit_of(metric), meaning, ", ".join(entry["datasets"]), entry["rows"]))
    df = pd.DataFrame(out, columns=["metric", "unit", "meaning", "datasets", "rows"])
    if pattern is not None:
        df = df[[bool(rx.search(m) or rx_meaning.search(s)) for m, s in zip(df["metric"], df["meaning"])]]
    return df.reset_index(drop=True)
