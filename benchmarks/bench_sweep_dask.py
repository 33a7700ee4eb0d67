"""A sweep on two Dask workers against the same sweep in one process, in one run.

The workload is what a user sends to a cluster: a 300-draw 90% band of
seed 000's fitted SwapModel (small_thp_swapout) over a grid of folio sizes
and process counts, sized to at least 60 CPU seconds in one process. It is
run

- serially (``sweep(fit, grid, executor="serial")``), in CPU and wall seconds;
- on a ``distributed.LocalCluster`` of 2 worker processes of 1 thread
  (``sweep(fit, grid, client).compute()``), in wall seconds, cluster start-up
  excluded;
- Dask's own cost per task, on the same cluster: as many tasks as the sweep
  has partitions, each doing nothing (``client.map`` + ``gather``).

It prints the speed-up (serial wall / Dask wall) and mmcost's overhead per
task beyond Dask's own:
``(workers x Dask wall - serial wall) / tasks - Dask's no-op wall x workers / tasks``,
i.e. the worker-seconds a task costs above its share of the serial work
and above what Dask spends on an empty task. Targets (issue 37): speed-up
>= 1.7x, overhead <= 5 ms per task. Run it on an otherwise idle machine:

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
        client.gather(client.map(noop, range(4)))  # workers warm
        w0 = time.perf_counter()
        lazy = sweep(fit, g, client, **kw)
        got = lazy.compute()
        dask_wall = time.perf_counter() - w0
        tasks = lazy.npartitions
        w0 = time.perf_counter()
        client.gather(client.map(noop, range(tasks), pure=False))
        noop_wall = time.perf_counter() - w0

    cols = ["best", "mean", "lo", "hi"]
    same = np.array_equal(serial[cols].to_numpy(), got.sort_index()[cols].to_numpy())
    speedup = serial_wall / dask_wall
    ours = (WORKERS * dask_wall - serial_wall) / tasks
    theirs = WORKERS * noop_wall / tasks
    print(f"sweep: {len(serial):,} configurations x 300 draws; {tasks} tasks on {WORKERS} workers")
    print(f"  serial     {serial_cpu:7.1f} CPU s  {serial_wall:7.1f} wall s" + ("" if serial_cpu >= 60 else
          "   (below the 60 CPU s the target asks for: raise --processes)"))
    print(f"  dask x{WORKERS}            {dask_wall:7.1f} wall s   same rows: {'yes' if same else 'NO'}")
    print(f"  speed-up {speedup:.2f}x (target >= 1.7x)")
    print(f"  overhead per task beyond Dask's own: {1e3 * (ours - theirs):.1f} ms "
          f"(Dask's own: {1e3 * theirs:.2f} ms; target <= 5 ms)")


if __name__ == "__main__":
    main()
