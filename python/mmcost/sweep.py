"""Evaluate a model or a fit over the product of configuration values.

Any ``concurrent.futures.Executor`` runs the chunks (a Dask cluster through
``distributed.Client(...).get_executor()``, unchanged); results come back in
grid order whatever order the chunks finish in, so every executor gives the
same frame.
"""

from __future__ import annotations

import itertools
import os
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .fit import FitResult
from .model import Model


def grid_frame(grid: dict) -> pd.DataFrame:
    """The product of ``grid``'s values as a DataFrame, one column per key."""
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid must be a non-empty dict of column -> values")
    cols = {}
    for k, v in grid.items():
        vals = [v] if isinstance(v, (str, int, float, np.number)) else list(v)
        if not vals:
            raise ValueError(f"grid[{k!r}] is empty")
        cols[k] = vals
    return pd.DataFrame(list(itertools.product(*cols.values())), columns=list(cols))


def _run_chunk(target, chunk: pd.DataFrame, predict_kwargs: dict) -> pd.DataFrame:
    if isinstance(target, FitResult):
        return target.predict(chunk, **predict_kwargs)
    out = chunk.copy()
    out["value"] = target.evaluate(chunk)
    return out


def sweep(target: Model | FitResult, grid: dict, executor: Executor | None = None, *, chunk_size: int | None = None,
          progress: bool | None = None, **predict_kwargs) -> pd.DataFrame:
    """Evaluate a :class:`~mmcost.model.Model` (column ``value``) or predict
    with a :class:`~mmcost.fit.FitResult` (``best, mean, lo, hi``) on every
    combination of ``grid`` (which must include ``metric``).

    executor: any ``concurrent.futures.Executor``; default a local process pool
    (one worker per CPU); ``"serial"`` runs in this process. ``predict_kwargs``
    go to :meth:`FitResult.predict` (``level``, ``n_samples``, ``seed``).
    A tqdm bar shows progress when there are more than 4 chunks.
    """
    if not isinstance(target, (Model, FitResult)):
        raise TypeError(f"sweep needs a Model or a FitResult, got {type(target).__name__}")
    if predict_kwargs and not isinstance(target, FitResult):
        raise TypeError(f"{sorted(predict_kwargs)} only apply to a FitResult")
    configs = grid_frame(grid)
    if "metric" not in configs:
        raise ValueError("grid needs a 'metric' entry naming what to predict")
    size = chunk_size or max(1, int(np.ceil(len(configs) / (4 * (os.cpu_count() or 1)))))
    chunks = [configs.iloc[i : i + size] for i in range(0, len(configs), size)]
    show = len(chunks) > 4 if progress is None else progress
    if executor == "serial":
        parts = [_run_chunk(target, c, predict_kwargs) for c in tqdm(chunks, disable=not show, desc="sweep")]
    else:
        own = executor is None
        ex = ProcessPoolExecutor(max_workers=os.cpu_count() or 1) if own else executor
        if not isinstance(ex, Executor):
            raise TypeError(f"executor must be a concurrent.futures.Executor or 'serial', got {type(ex).__name__}")
        try:
            futures = [ex.submit(_run_chunk, target, c, predict_kwargs) for c in chunks]
            parts = [f.result() for f in tqdm(futures, disable=not show, desc="sweep")]
        finally:
            if own:
                ex.shutdown(cancel_futures=True)
    return pd.concat(parts, ignore_index=True)
