"""Evaluate a model or a fit over the product of configuration values.

Three ways to run the same chunks, all giving the same rows in grid order:

- in this process (``executor="serial"``) or on any
  ``concurrent.futures.Executor`` (default: a local process pool), returning
  a pandas DataFrame;
- on a Dask cluster: pass a ``distributed.Client`` as ``executor`` (or a
  ``dask.dataframe`` of configurations as ``grid``) and get a lazy Dask
  DataFrame back, one partition per chunk. The model is scattered to the
  workers once (``Client.scatter(..., broadcast=True)``) rather than pickled
  into every task, and the partitions are sized from the cluster's threads
  (``Client.nthreads()``), not from this machine's CPU count.

A fit's band uses the same parameter draws in every chunk (the draws are
seeded, not the chunk), so how a sweep is cut does not change its numbers.
"""

from __future__ import annotations

import functools
import math
import os
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .fit import MAX_BAND_CELLS, FitResult
from .model import Model

#: chunks per thread of the pool or cluster: enough that one slow chunk does not leave the others idle
CHUNKS_PER_THREAD = 4


def _grid_columns(grid: dict) -> dict[str, pd.Series]:
    """Each key's values as a Series (a scalar is one value)."""
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid must be a non-empty dict of column -> values")
    cols = {}
    for k, v in grid.items():
        vals = [v] if isinstance(v, (str, int, float, np.number)) else list(v)
        if not vals:
            raise ValueError(f"grid[{k!r}] is empty")
        cols[k] = pd.Series(vals)
    return cols


def _product_rows(cols: dict[str, pd.Series], start: int, stop: int) -> pd.DataFrame:
    """Rows ``start:stop`` of the product of ``cols``' values, in
    ``itertools.product`` order (the last key varies fastest), built from
    their indices alone so that a worker makes its own slice of a large grid."""
    index = np.unravel_index(np.arange(start, stop), [len(v) for v in cols.values()])
    return pd.DataFrame({k: v.iloc[i].to_numpy() for (k, v), i in zip(cols.items(), index)})


def _product_slice(cols: dict[str, pd.Series], bounds: tuple[int, int]) -> pd.DataFrame:
    """:func:`_product_rows` for one partition's (start, stop), indexed by row number."""
    rows = _product_rows(cols, *bounds)
    rows.index = pd.RangeIndex(*bounds)
    return rows


def _n_rows(cols: dict[str, pd.Series]) -> int:
    return math.prod(len(v) for v in cols.values())


def grid_frame(grid: dict) -> pd.DataFrame:
    """The product of ``grid``'s values as a DataFrame, one column per key."""
    cols = _grid_columns(grid)
    return _product_rows(cols, 0, _n_rows(cols))


def _run_chunk(target, chunk: pd.DataFrame, predict_kwargs: dict) -> pd.DataFrame:
    if isinstance(target, FitResult):
        return target.predict(chunk, **predict_kwargs)
    out = chunk.copy()
    out["value"] = target.evaluate(chunk)
    return out


def _run_partition(chunk: pd.DataFrame, target, predict_kwargs: dict) -> pd.DataFrame:
    """:func:`_run_chunk` in ``map_partitions``' argument order (the partition
    first), keeping the partition's row labels (a fit's predict renumbers them)."""
    out = _run_chunk(target, chunk, predict_kwargs)
    out.index = chunk.index
    return out


def _dask_client(executor):
    """``executor`` if it is a ``distributed.Client``, else None (without importing Dask)."""
    if type(executor).__module__.split(".")[0] != "distributed":
        return None
    import distributed

    return executor if isinstance(executor, distributed.Client) else None


def _is_dask_frame(grid) -> bool:
    if type(grid).__module__.split(".")[0] != "dask":
        return False
    import dask.dataframe as dd

    return isinstance(grid, dd.DataFrame)


def _threads(executor) -> int:
    """How many chunks can run at once: a Dask cluster's threads (also behind
    ``Client.get_executor()``), a pool's workers, else this machine's CPUs."""
    client = _dask_client(executor) or _dask_client(getattr(executor, "_client", None))
    if client is not None:
        return max(1, sum(client.nthreads().values()))
    return getattr(executor, "_max_workers", None) or os.cpu_count() or 1


def _chunk_rows(n_rows: int, threads: int, chunk_size: int | None, predict_kwargs: dict) -> int:
    """Rows per chunk: ``chunk_size``, else CHUNKS_PER_THREAD chunks per thread,
    never more rows than one band may hold (n_samples x rows <= MAX_BAND_CELLS)."""
    if chunk_size is not None:
        if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        return chunk_size
    size = max(1, math.ceil(n_rows / (CHUNKS_PER_THREAD * threads)))
    n_samples = predict_kwargs.get("n_samples", 500)
    if isinstance(n_samples, int) and n_samples > 0:
        size = min(size, max(1, MAX_BAND_CELLS // n_samples))
    return size


def sweep(target: Model | FitResult, grid, executor=None, *, chunk_size: int | None = None,
          progress: bool | None = None, **predict_kwargs):
    """Evaluate a :class:`~mmcost.model.Model` (column ``value``) or predict
    with a :class:`~mmcost.fit.FitResult` (``best, mean, lo, hi``) on every
    combination of ``grid`` (a dict of column -> values, which must include
    ``metric``), or on every row of a DataFrame of configurations.

    executor: any ``concurrent.futures.Executor``; default a local process
    pool (one worker per CPU); ``"serial"`` runs in this process; a
    ``distributed.Client`` returns a lazy ``dask.dataframe.DataFrame`` (so
    does a Dask DataFrame as ``grid``, on the client in use or Dask's local
    scheduler). ``predict_kwargs`` go to :meth:`FitResult.predict`
    (``level``, ``n_samples``, ``seed``).

    progress: on the pandas path a tqdm bar (shown by default above 4
    chunks); on the Dask path ``True`` starts the computation at once
    (``persist``) and shows Dask's own bar (``distributed.progress``), the
    default leaves it lazy.
    """
    if not isinstance(target, (Model, FitResult)):
        raise TypeError(f"sweep needs a Model or a FitResult, got {type(target).__name__}")
    if predict_kwargs and not isinstance(target, FitResult):
        raise TypeError(f"{sorted(predict_kwargs)} only apply to a FitResult")
    client = _dask_client(executor)
    if client is not None or _is_dask_frame(grid):
        return _dask_sweep(target, grid, client, chunk_size, progress, predict_kwargs)
    configs = grid.reset_index(drop=True) if isinstance(grid, pd.DataFrame) else grid_frame(grid)
    if "metric" not in configs:
        raise ValueError("grid needs a 'metric' entry naming what to predict")
    if executor is not None and executor != "serial" and not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, a distributed.Client or 'serial', "
                        f"got {type(executor).__name__}")
    size = _chunk_rows(len(configs), _threads(executor), chunk_size, predict_kwargs)
    chunks = [configs.iloc[i : i + size] for i in range(0, len(configs), size)]
    show = len(chunks) > 4 if progress is None else progress
    if executor == "serial":
        parts = [_run_chunk(target, c, predict_kwargs) for c in tqdm(chunks, disable=not show, desc="sweep")]
    else:
        own = executor is None
        ex = ProcessPoolExecutor(max_workers=os.cpu_count() or 1) if own else executor
        try:
            futures = [ex.submit(_run_chunk, target, c, predict_kwargs) for c in chunks]
            parts = [f.result() for f in tqdm(futures, disable=not show, desc="sweep")]
        finally:
            if own:
                ex.shutdown(cancel_futures=True)
    return pd.concat(parts, ignore_index=True)


def _dask_sweep(target, grid, client, chunk_size, progress, predict_kwargs):
    """The lazy Dask form of :func:`sweep`: ``map_partitions`` over the
    configurations, with the target scattered once and the output's schema
    taken from one row evaluated here (so a bad grid fails now, not at compute)."""
    import dask
    import dask.dataframe as dd

    if client is None:
        try:
            import distributed

            client = distributed.default_client()
        except (ImportError, ValueError):  # no distributed, or no client: Dask's local scheduler
            client = None
    if _is_dask_frame(grid):
        configs = grid
        if "metric" not in configs.columns:
            raise ValueError("grid needs a 'metric' column naming what to predict")
        if chunk_size is not None:
            raise ValueError("chunk_size does not apply to a Dask DataFrame grid: its partitions are the chunks "
                             "(repartition it first)")
        first = configs.head(1, npartitions=1, compute=True)  # the first partition only, not the whole frame
        if len(first) == 0:
            first = configs.head(1, npartitions=-1)
    else:
        threads = _threads(client) if client is not None else (os.cpu_count() or 1)
        if isinstance(grid, pd.DataFrame):
            frame = grid.reset_index(drop=True)
            size = _chunk_rows(len(frame), threads, chunk_size, predict_kwargs)
            configs = dd.from_pandas(frame, npartitions=max(1, math.ceil(len(frame) / size)), sort=False)
            first = frame.iloc[:1]
        else:  # each partition makes its own rows of the product: the grid is never shipped whole
            cols = _grid_columns(grid)
            n = _n_rows(cols)
            size = _chunk_rows(n, threads, chunk_size, predict_kwargs)
            bounds = [(a, min(a + size, n)) for a in range(0, n, size)]
            configs = dd.from_map(functools.partial(_product_slice, cols), bounds, meta=_product_rows(cols, 0, 0),
                                  divisions=[a for a, _ in bounds] + [n - 1], enforce_metadata=False)
            first = _product_rows(cols, 0, 1)
        if "metric" not in first:
            raise ValueError("grid needs a 'metric' entry naming what to predict")
    if len(first) == 0:
        raise ValueError("grid has no rows")
    meta = _run_chunk(target, first, predict_kwargs).iloc[:0]
    # (hash=False: a key of this sweep's own; a content-hashed key is shared with an identical model an
    # earlier sweep scattered, and its release raced this scatter: "failed to acquire keys")
    shared = dask.delayed(client.scatter(target, broadcast=True, hash=False) if client is not None else target)
    out = configs.map_partitions(_run_partition, shared, predict_kwargs, meta=meta, align_dataframes=False)
    if progress:
        import distributed

        out = out.persist()
        distributed.progress(out)
    return out
