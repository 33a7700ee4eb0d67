"""Sweeps give identical frames in-process, on a process pool and on Dask."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from mmcost.sweep import grid_frame, sweep
from mmcost.usl import UslModel


@pytest.fixture(scope="module")
def usl_fit():
    n = np.array([1, 2, 4, 8, 16, 32])
    x = 100 * n / (1 + 0.05 * (n - 1) + 0.001 * n * (n - 1))
    df = pd.DataFrame({"metric": "transactions_per_s", "value": x * (1 + 0.01 * np.sin(n)), "threads": n, "stddev_pct": 2.0})
    return UslModel(metric="transactions_per_s", n_column="threads").fit(df)


GRID = {"metric": ["transactions_per_s"], "threads": list(range(1, 129)), "arch": ["x86_64", "arm64"]}


def test_grid_is_the_product():
    g = grid_frame({"a": [1, 2], "b": ["x", "y", "z"], "c": 5})
    assert len(g) == 6 and list(g.columns) == ["a", "b", "c"] and (g["c"] == 5).all()
    assert g.iloc[1].to_dict() == {"a": 1, "b": "y", "c": 5}


def test_model_sweep_same_everywhere(usl_fit):
    model = usl_fit.model
    serial = sweep(model, GRID, executor="serial")
    pool = sweep(model, GRID)  # default: local process pool
    with ThreadPoolExecutor(2) as ex:
        threads = sweep(model, GRID, executor=ex, chunk_size=7)
    pd.testing.assert_frame_equal(serial, pool)
    pd.testing.assert_frame_equal(serial, threads)
    assert len(serial) == 256
    np.testing.assert_allclose(serial["value"], model.evaluate(grid_frame(GRID)), rtol=0)


def test_fit_sweep_on_a_dask_cluster(usl_fit):
    import distributed
    serial = sweep(usl_fit, GRID, executor="serial", n_samples=50, seed=4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        dask = sweep(usl_fit, GRID, executor=client.get_executor(), n_samples=50, seed=4)
    pd.testing.assert_frame_equal(serial, dask)
    assert {"best", "mean", "lo", "hi"} <= set(dask.columns)
    assert (dask["lo"] <= dask["best"]).all() and (dask["best"] <= dask["hi"]).all()


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda m: sweep(m, {}), ValueError, "non-empty"),
        (lambda m: sweep(m, {"threads": [1, 2]}), ValueError, "metric"),
        (lambda m: sweep(m, {"metric": ["transactions_per_s"], "threads": []}), ValueError, "empty"),
        (lambda m: sweep(m, GRID, executor=3), TypeError, "Executor"),
        (lambda m: sweep("model", GRID), TypeError, "Model or a FitResult"),
        (lambda m: sweep(m, GRID, n_samples=5), TypeError, "FitResult"),
        (lambda m: sweep(m, {"metric": ["tlb_shootdowns"], "threads": [1]}, executor="serial"), ValueError, "does not predict"),
    ],
)
def test_bad_sweeps(usl_fit, call, exc, match):
    with pytest.raises(exc, match=match):
        call(usl_fit.model)
