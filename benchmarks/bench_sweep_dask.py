"""A sweep on two Dask workers against the same sweep in one process, in one run.

The workload is what a user sends to a cluster: a 300-draw 90% band of
seed 000's fitted SwapModel (small_thp_swapout) over a grid of folio sizes
and process counts, sized to at least 60 CPU seconds in one process. It is
run

- serially (``sweep(fit, grid, executor="serial")``), in CPU and wall seconds;
- on a ``distributed.LocalCluster`` of 2 worker processes of 1 thread
  (``sweep(fit, grid, client).compute()``), in wall seconds, cluster start-up
  excluded;
- mmcost's cost per task beyond Dask's own, on the same cluster: a sweep
  over a Dask DataFrame of 400 one-row partitions with a model that costs
  nothing to evaluate (the USL), against Dask's own ``map_partitions`` over
  the same frame adding a column of zeros (and, for scale, 400 empty
  ``client.map`` tasks); the difference per task is what sweep adds to
  each (the model's evaluation path on its rows, the scattered model).

The workers import mmcost before anything is timed (a worker's first task
would otherwise pay for it). It prints the speed-up (serial wall / Dask
wall) and the overhead per task. Targets (issue 37): speed-up >= 1.7x,
overhead <= 5 ms per task. Run it on an otherwise idle machine:

    python benchmarks/bench_sweep_dask.py [--processes 1-N]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mmcost import studies
from mmcost.fit import NotIdentifiableWarning
from mmcost.sweep import sweep

WORKERS = 2


def grid(max_processes: int) -> dict:
    return {"metric": ["usemem_throughput_kib_s"], "folio_kb": [4, 16, 32, 64, 128, 256, 512, 1024, 2048, 8],
            "processes": list(range(1, max_processes + 1))}


def noop(i):
    return i


def warm():
    import mmcost.swap  # noqa: F401 - the import a worker's first task would pay for
    import mmcost.usl  # noqa: F401


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=400, help="process counts 1..N in the grid (default 400: about 60 CPU s)")
    args = ap.parse_args()
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        fit = studies.get("small_thp_swapout").fit()
    g = grid(args.processes)
    kw = dict(n_samples=300, seed=1)

    c0, w0 = time.process_time(), time.perf_counter()
    serial = sweep(fit, g, executor="serial", progress=False, **kw)
    serial_cpu, serial_wall = time.process_time() - c0, time.perf_counter() - w0

    with distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        client.run(warm)
        client.gather(client.map(noop, range(4)))
        w0 = time.perf_counter()
        lazy = sweep(fit, g, client, **kw)
        got = lazy.compute()
        dask_wall = time.perf_counter() - w0
        tasks = lazy.npartitions
        # the cost per task: 400 one-row partitions through sweep, through Dask's own map_partitions, and as
        # 400 empty tasks
        import dask.dataframe as dd

        from mmcost.sweep import grid_frame
        from mmcost.usl import UslModel

        usl = UslModel(metric="transactions_per_s", n_column="threads")
        rows = dd.from_pandas(grid_frame({"metric": ["transactions_per_s"], "threads": list(range(1, 401))}),
                              npartitions=400, sort=False)
        sweep(usl, rows).compute()  # the model scattered, the path warm
        small = []
        for _ in range(3):
            t0 = time.perf_counter()
            sweep(usl, rows).compute()
            t1 = time.perf_counter()
            rows.map_partitions(lambda p: p.assign(value=0.0)).compute()
            t2 = time.perf_counter()
            client.gather(client.map(noop, range(400), pure=False))
            small.append((t1 - t0, t2 - t1, time.perf_counter() - t2))
        sweep_small, dask_small, empty_small = (min(x) for x in zip(*small))

    cols = ["best", "mean", "lo", "hi"]
    same = np.array_equal(serial[cols].to_numpy(), got.sort_index()[cols].to_numpy())
    speedup = serial_wall / dask_wall
    ours, theirs, empty = (WORKERS * t / 400 for t in (sweep_small, dask_small, empty_small))
    print(f"sweep: {len(serial):,} configurations x 300 draws; {tasks} tasks on {WORKERS} workers")
    print(f"  serial     {serial_cpu:7.1f} CPU s  {serial_wall:7.1f} wall s" + ("" if serial_cpu >= 60 else
          "   (below the 60 CPU s the target asks for: raise --processes)"))
    print(f"  dask x{WORKERS}            {dask_wall:7.1f} wall s   same rows: {'yes' if same else 'NO'}")
    print(f"  speed-up {speedup:.2f}x (target >= 1.7x)")
    print(f"  per task (worker-ms, 400 one-row partitions): sweep {1e3 * ours:.2f}, Dask's own map_partitions "
          f"{1e3 * theirs:.2f} (an empty client.map task {1e3 * empty:.2f});")
    print(f"  beyond Dask's own: {1e3 * (ours - theirs):.2f} ms per task (target <= 5 ms)")


if __name__ == "__main__":
    main()
