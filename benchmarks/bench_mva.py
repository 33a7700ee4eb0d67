"""Exact MVA: the C++ core against the same recursion in NumPy, same process.

Prints wall time per solve (best of several repeats) for N up to 10,000 and K
up to 64, and the ratio NumPy / mmcost, then that ratio over several
independent repeats, each timing both sides interleaved, for N=10,000 x K=64
and for the two large tables N=100,000 x K=64 and N=10,000 x K=512 (51 and 41
MB): with fresh output arrays on both sides (each solve page-faults its table
in), with output arrays reused from the previous solve on both sides (``out=``
for the core), with no table on either side (X(N) and Q(N) only, ``mva_top``
for the core), and the public API's DataFrame against NumPy's fresh table. Also times the public API (mmcost.queueing.mva,
which adds argument checks and builds a DataFrame) so the cost of the Python
layer is visible.

    python benchmarks/bench_mva.py
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from mmcost import _core, queueing


def mva_numpy(demands: np.ndarray, think_time: float, population: int, out=None):
    """Reiser & Lavenberg's recursion, vectorised over stations with NumPy."""
    k = demands.size
    q = np.zeros(k)
    x, qlen = (np.empty(population), np.empty((population, k))) if out is None else out
    for n in range(1, population + 1):
        r = demands * (1.0 + q)
        x[n - 1] = n / (think_time + r.sum())
        q = x[n - 1] * r
        qlen[n - 1] = q
    return x, qlen


def mva_numpy_top(demands: np.ndarray, think_time: float, population: int):
    """The same recursion keeping X(N) and Q(N) only (no table), as mva_top does."""
    q = np.zeros(demands.size)
    for n in range(1, population + 1):
        r = demands * (1.0 + q)
        x = n / (think_time + r.sum())
        q = x * r
    return x, q


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
            x, qlen = core()
            assert np.allclose(x, x_ref, rtol=1e-12) and np.allclose(qlen, q_ref, rtol=1e-10)
            t_core, t_api, t_ref = (best_time(f, args.repeat) for f in (core, api, ref))
            print(f"{n:>6} {k:>3} {t_core * 1e3:>10.3f}ms {t_api * 1e3:>10.3f}ms {t_ref * 1e3:>10.3f}ms {t_ref / t_core:>10.1f}x")
    # the ratio over repeats (target: >= 50x every time): each repeat is a
    # fresh best-of timing of both, interleaved (NumPy once, then the core for
    # about as long) so that a slow spell of this (virtual) machine falls on
    # both sides of the ratio, not on one of them
    for n, k in ((10_000, 64), (100_000, 64), (10_000, 512)):
        d = rng.uniform(0.1, 1.0, k)
        ones = [1.0] * k
        fresh = (lambda: mva_numpy(d, 5.0, n), lambda: _core.queueing.mva(d.tolist(), ones, 5.0, n))
        # reused: each side writes into the arrays its previous solve wrote (no page faults)
        mine, theirs = (np.empty(n), np.empty((n, k))), (np.empty(n), np.empty((n, k)))
        reused = (lambda: mva_numpy(d, 5.0, n, out=theirs),
                  lambda: _core.queueing.mva(d.tolist(), ones, 5.0, n, out=mine))
        reused[0](), reused[1]()
        assert np.allclose(mine[1], theirs[1], rtol=1e-10)
        # no table at all: X(N) and Q(N) only, on both sides (the floor of the recursion itself)
        top = (lambda: mva_numpy_top(d, 5.0, n), lambda: _core.queueing.mva_top(d.tolist(), ones, 5.0, n))
        assert np.allclose(top[1]().queue_length, top[0]()[1], rtol=1e-10)
        # the public API: the DataFrame of 4 K + 2 columns, against NumPy's fresh table
        api = (fresh[0], lambda: queueing.mva(d, 5.0, n))
        cases = (("fresh output", fresh), ("reused output", reused), ("no table", top), ("public API", api))
        for label, (numpy_fn, core_fn) in cases:
            ratios = interleaved_ratios(numpy_fn, core_fn, args.repeat)
            target = "" if label == "public API" else " (target >= 50x)"
            print(f"N={n} K={k} {label:>13} over {args.repeat} repeats: NumPy/core {min(ratios):.1f}x .. "
                  f"{max(ratios):.1f}x{target}")


def interleaved_ratios(numpy_fn, core_fn, repeat: int) -> list[float]:
    t_numpy = timeit.timeit(numpy_fn, number=1)
    number = max(1, round(t_numpy / timeit.timeit(core_fn, number=1)))  # the core about as long as NumPy
    ratios = []
    for _ in range(repeat):
        t_numpy = t_core = float("inf")
        for _ in range(5):
            t_numpy = min(t_numpy, timeit.timeit(numpy_fn, number=1))
            t_core = min(t_core, timeit.timeit(core_fn, number=number) / number)
        ratios.append(t_numpy / t_core)
    return ratios


if __name__ == "__main__":
    main()
