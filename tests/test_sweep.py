"""Sweeps give identical frames in-process, on a process pool and on Dask."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from mmcost.sweep import _threads, grid_frame, sweep
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


@pytest.fixture(scope="module")
def client():
    """Two worker processes of one thread each (``Client.nthreads()``: 2).
    A worker counts once the scheduler has it running: a cluster's start
    does not wait for that, and a slow machine's second worker can miss a
    broadcast scatter made before it registers."""
    import distributed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        c.wait_for_workers(2)
        yield c


def same_rows(pandas_frame, dask_frame, client=None):
    """A Dask result, computed (on ``client``, else Dask's local scheduler),
    equals the pandas one row for row (Dask keeps strings as Arrow strings, so
    dtypes are not compared)."""
    got = dask_frame.compute(scheduler=client) if client is not None else dask_frame.compute()
    assert list(got.index) == list(range(len(pandas_frame)))
    pd.testing.assert_frame_equal(pandas_frame, got, check_dtype=False)


def test_fit_sweep_on_a_dask_executor(usl_fit, client):
    serial = sweep(usl_fit, GRID, executor="serial", n_samples=50, seed=4)
    dask = sweep(usl_fit, GRID, executor=client.get_executor(), n_samples=50, seed=4)
    pd.testing.assert_frame_equal(serial, dask)
    assert {"best", "mean", "lo", "hi"} <= set(dask.columns)
    assert (dask["lo"] <= dask["best"]).all() and (dask["best"] <= dask["hi"]).all()


def test_a_client_gives_a_lazy_dask_frame_cut_for_its_threads(usl_fit, client):
    import dask.dataframe as dd
    lazy = sweep(usl_fit, GRID, client, n_samples=50, seed=4)
    assert isinstance(lazy, dd.DataFrame)
    # 256 rows over 2 threads: 4 partitions per thread, whatever this machine's CPU count
    assert lazy.npartitions == 4 * sum(client.nthreads().values()) == 8
    same_rows(sweep(usl_fit, GRID, executor="serial", n_samples=50, seed=4), lazy, client)
    # the executor form is cut the same way: by the cluster's threads, not os.cpu_count()
    assert _threads(client.get_executor()) == 2


def test_the_model_is_scattered_once_not_shipped_per_task(usl_fit, client):
    import cloudpickle
    client.wait_for_workers(2)  # both running (a restarted worker is not until it registers)
    lazy = sweep(usl_fit, GRID, client, chunk_size=4, n_samples=50, seed=4)  # 64 partitions
    # the fit is on the workers before anything is computed, under one key. Broadcasting it to every
    # worker is Dask's best effort (Scheduler.replicate drops a copy that fails to arrive, e.g. on a slow
    # machine), so only one holder is a promise; a worker without it fetches it once, not per task.
    held = [{k for k in keys if str(k).startswith("FitResult-")} for keys in client.has_what().values()]
    assert len(held) == 2 and len(set().union(*held)) == 1
    # and the graph refers to it: 64 tasks weigh less than two copies of the fit
    assert len(cloudpickle.dumps(dict(lazy.__dask_graph__()))) < 2 * len(cloudpickle.dumps(usl_fit)) + 64 * 2_000


def test_a_dask_frame_of_configurations_runs_without_a_client(usl_fit):
    import dask.dataframe as dd
    configs = grid_frame(GRID)
    lazy = sweep(usl_fit.model, dd.from_pandas(configs, npartitions=5, sort=False))
    assert lazy.npartitions == 5
    same_rows(sweep(usl_fit.model, GRID, executor="serial"), lazy)


def test_a_large_grid_is_made_on_the_workers(usl_fit, client):
    grid = {"metric": ["transactions_per_s"], "threads": np.arange(1, 200_001)}
    lazy = sweep(usl_fit.model, grid, client)
    # the graph holds the grid's values (1.6 MB), never the 200,000-row product
    assert len(__import__("cloudpickle").dumps(dict(lazy.__dask_graph__()))) < 3_000_000
    got = lazy.compute(scheduler=client)
    np.testing.assert_array_equal(got["threads"], grid["threads"])
    np.testing.assert_allclose(got["value"], usl_fit.model.throughput(grid["threads"].astype(float)), rtol=1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda m, c: sweep(m, {"threads": [1, 2]}, c), "metric"),
        (lambda m, c: sweep(m, {"metric": ["tlb_shootdowns"], "threads": [1]}, c), "does not predict"),
        (lambda m, c: sweep(m, __import__("dask.dataframe").dataframe.from_pandas(grid_frame(GRID)), chunk_size=3),
         "repartition"),
        (lambda m, c: sweep(m, GRID, c, chunk_size=0), "chunk_size"),
    ],
)
def test_bad_dask_sweeps_fail_when_called_not_when_computed(usl_fit, client, call, match):
    with pytest.raises(ValueError, match=match):
        call(usl_fit.model, client)


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
