"""Exact MVA: the C++ core against the same recursion in NumPy, same process.

Prints wall time per solve (best of several repeats) for N up to 10,000 and K
up to 64, and the ratio NumPy / mmcost, then that ratio for N=10,000 x K=64
over several independent repeats, each timing both sides interleaved. Also times the public API
(mmcost.queueing.mva, which adds argument checks and builds a DataFrame) so
the cost of the Python layer is visible.

    python benchmarks/bench_mva.py
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from mmcost import _core, queueing


def mva_numpy(demands: np.ndarray, think_time: float, population: int):
    """Reiser & Lavenberg's recursion, vectorised over stations with NumPy."""
    k = demands.size
    q = np.zeros(k)
    x = np.empty(population)
    qlen = np.empty((population, k))
    for n in range(1, population + 1):
        r = demands * (1.0 + q)
        x[n - 1] = n / (think_time + r.sum())
        q = x[n - 1] * r
        qlen[n - 1] = q
    return x, qlen


def best_time(fn, repeat: int) -> float:
    number = 1
    while timeit.timeit(fn, number=number) < 0.05:
        number *= 2
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng([7, 2026])
    print(f"{'N':>6} {'K':>3} {'mmcost core':>12} {'public API':>12} {'NumPy':>12} {'NumPy/core':>11}")
    for n in (100, 1_000, 10_000):
        for k in (1, 8, 64):
            d = rng.uniform(0.1, 1.0, k)
            z = 5.0
            core = lambda: _core.queueing.mva(d.tolist(), [1.0] * k, z, n)  # noqa: E731
            api = lambda: queueing.mva(d, z, n)  # noqa: E731
            ref = lambda: mva_numpy(d, z, n)  # noqa: E731
            # Same answer first: a benchmark of a wrong result is meaningless.
            x_ref, q_ref = ref()
            res = core()
            assert np.allclose(res.throughput, x_ref, rtol=1e-12) and np.allclose(res.queue_length, q_ref, rtol=1e-10)
            t_core, t_api, t_ref = (best_time(f, args.repeat) for f in (core, api, ref))
            print(f"{n:>6} {k:>3} {t_core * 1e3:>10.3f}ms {t_api * 1e3:>10.3f}ms {t_ref * 1e3:>10.3f}ms {t_ref / t_core:>10.1f}x")
    # stability of the largest case (target: >= 50x every time): each repeat
    # is a fresh best-of timing of both, interleaved (NumPy once, then the
    # core for about as long) so that a slow spell of this (virtual) machine
    # falls on both sides of the ratio, not on one of them
    d = rng.uniform(0.1, 1.0, 64)
    numpy_fn = lambda: mva_numpy(d, 5.0, 10_000)  # noqa: E731
    core_fn = lambda: _core.queueing.mva(d.tolist(), [1.0] * 64, 5.0, 10_000)  # noqa: E731
    ratios = []
    for _ in range(args.repeat):
        t_numpy = t_core = float("inf")
        for _ in range(5):
            t_numpy = min(t_numpy, timeit.timeit(numpy_fn, number=1))
            t_core = min(t_core, timeit.timeit(core_fn, number=32) / 32)
        ratios.append(t_numpy / t_core)
    print(f"N=10000 K=64 over {args.repeat} repeats: NumPy/core {min(ratios):.1f}x .. {max(ratios):.1f}x (target >= 50x)")


if __name__ == "__main__":
    main()
