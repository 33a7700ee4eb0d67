"""Exact MVA: the C++ core against the same recursion in NumPy, same process.

Prints wall time per solve (best of several repeats) for N up to 10,000 and K
up to 64, and the ratio NumPy / mmcost. Then, for N=10,000 x K=64 and the two
large tables N=100,000 x K=64 and N=10,000 x K=512 (51 and 41 MB), the ratio
over several repeats (min / median / max), every case of a size timed in each
repeat: with a fresh output table on both sides (each solve maps and
page-faults its table in), with output arrays reused from the previous solve on
both sides (``out=`` for the core), with no table on either side (X(N) and
Q(N) only, ``mva_top`` for the core), and the public API's DataFrame against
NumPy's fresh table. Both sides compute and output the same thing: X(n) and
the N x K table of Q_k(n).

In the same run, three floors: the time merely to write the output once (X and
the table, a non-zero byte with memset) into a fresh mapping like the core's
own (2 MiB-aligned, huge pages advised; the faults and the kernel's zeroing
included), the same with the table's pages faulted in by a second thread while
the first writes (what a solver could reach with a second CPU to spare; the
core uses one), and into the pages of a table kept from before. NumPy's time
over a floor is the most any solver writing that table that way could reach:
where it is under 50x, so is every such solver of this table on this machine.

    python benchmarks/bench_mva.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import ctypes
import mmap
import statistics
import threading
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
    # The large tables, with the ratio's physical ceiling measured in the same
    # run: a solve cannot take less than writing its table once, so NumPy's
    # time over that (the floor ratio) bounds NumPy/core from above. Each
    # repeat times every case afresh (best of a few), all cases of a size
    # interleaved, so that a slow spell of this (virtual) machine falls on
    # both sides of each ratio rather than on one.
    for n, k in ((10_000, 64), (100_000, 64), (10_000, 512)):
        large_tables(n, k, rng.uniform(0.1, 1.0, k), args.repeat)


def fresh_mapping(nbytes: int):
    """A mapping as the core's fresh table's (bind_queueing.cpp, fresh_array): 2 MiB-aligned, huge pages advised.

    Returns (the mmap, the address of its aligned start); nothing in it is touched yet.
    """
    huge = 2 << 20
    length = -(-nbytes // huge) * huge
    mm = mmap.mmap(-1, length + huge, flags=mmap.MAP_PRIVATE)  # anonymous; the default, shared, is shmem
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    offset = -base % huge
    if hasattr(mmap, "MADV_HUGEPAGE"):
        mm.madvise(mmap.MADV_HUGEPAGE, offset, length)
    return mm, base + offset


# The floors write a non-zero byte: this EPYC guest streams zeros at about 3x
# the rate of other data (80 against 26 GB/s), and the table is not zeros.
FILL = 0x3F


LIBC = ctypes.CDLL(None, use_errno=True)
MADV_POPULATE_WRITE = 23  # Linux 5.14


def write_fresh(x_bytes: int, q_bytes: int, second_thread: bool = False) -> None:
    """The floor of a fresh solve: map a fresh X and table, write every byte once, unmap.

    second_thread: the table's pages are faulted in 2 MiB at a time by a
    second thread while this one writes (ctypes releases the GIL in memset and
    madvise). The core does not do this: it paid only with the other CPU idle,
    and cost 1.5-2.5x in wall time with it busy.
    """
    xs, (mm, at) = np.empty(x_bytes // 8), fresh_mapping(q_bytes)
    helper = None
    if second_thread:
        step, length = 2 << 20, -(-q_bytes // (2 << 20)) * (2 << 20)
        helper = threading.Thread(target=lambda: [LIBC.madvise(ctypes.c_void_p(at + o), ctypes.c_size_t(step),
                                                               MADV_POPULATE_WRITE) for o in range(0, length, step)])
        helper.start()
    ctypes.memset(xs.ctypes.data, FILL, x_bytes)
    ctypes.memset(at, FILL, q_bytes)
    if helper is not None:
        helper.join()
    mm.close()


def large_tables(n: int, k: int, d: np.ndarray, repeat: int) -> None:
    ones, dl = [1.0] * k, d.tolist()
    x_bytes, q_bytes = 8 * n, 8 * n * k
    mine, theirs = (np.empty(n), np.empty((n, k))), (np.empty(n), np.empty((n, k)))
    kept_x, (kept, kept_at) = np.empty(n), fresh_mapping(q_bytes)  # the reused floor's: the same pages every time
    numpy = {
        "fresh": lambda: mva_numpy(d, 5.0, n),
        "reused": lambda: mva_numpy(d, 5.0, n, out=theirs),
        "top": lambda: mva_numpy_top(d, 5.0, n),
    }
    # each case of the core, and the peer it is divided into
    core = {
        "fresh output": ("fresh", lambda: _core.queueing.mva(dl, ones, 5.0, n)),
        # into the arrays the previous solve wrote: no page faults
        "reused output": ("reused", lambda: _core.queueing.mva(dl, ones, 5.0, n, out=mine)),
        # X(N), Q(N) only: the recursion alone, nothing written
        "no table": ("top", lambda: _core.queueing.mva_top(dl, ones, 5.0, n)),
        # the DataFrame of 4 K + 2 columns, against NumPy's fresh table
        "public API": ("fresh", lambda: queueing.mva(d, 5.0, n)),
        "floor, fresh": ("fresh", lambda: write_fresh(x_bytes, q_bytes)),
        "floor, fresh 2": ("fresh", lambda: write_fresh(x_bytes, q_bytes, second_thread=True)),
        "floor, reused": ("reused", lambda: (ctypes.memset(kept_x.ctypes.data, FILL, x_bytes),
                                             ctypes.memset(kept_at, FILL, q_bytes))),
    }
    # Same answer first: a benchmark of a wrong result is meaningless.
    numpy["reused"](), core["reused output"][1]()
    assert np.allclose(mine[1], theirs[1], rtol=1e-10)
    assert np.array_equal(core["fresh output"][1]()[1], mine[1])
    assert np.allclose(core["no table"][1]().queue_length, numpy["top"]()[1], rtol=1e-10)
    times = {name: [] for name in (*numpy, *core)}
    for _ in range(repeat):
        for name, fn in numpy.items():
            times[name].append(min(timeit.repeat(fn, number=1, repeat=3)))
        for name, (_, fn) in core.items():
            number = max(1, round(0.03 / timeit.timeit(fn, number=1)))  # about 30 ms a timing
            times[name].append(min(timeit.repeat(fn, number=number, repeat=5)) / number)
    kept.close()
    ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    print(f"N={n} K={k}, a table of {q_bytes / 1e6:.1f} MB: NumPy {ms['fresh']:.2f} ms (reused output "
          f"{ms['reused']:.2f}, no table {ms['top']:.2f}); NumPy/this over {repeat} repeats, min / median / max")
    for name, (peer, _) in core.items():
        r = [a / b for a, b in zip(times[peer], times[name])]
        note = "" if name == "public API" else "  target >= 50x"
        if name.startswith("floor"):
            how = {"floor, fresh": "fresh output, one thread", "floor, fresh 2": "fresh output, faults on a spare 2nd CPU",
                   "floor, reused": "reused output"}[name]
            note = f"  ceiling ({how}): 50x {'possible' if max(r) >= 50 else 'impossible'}"
        print(f"  {name:>14} {ms[name]:8.3f} ms {min(r):7.1f}x /{statistics.median(r):6.1f}x /{max(r):6.1f}x{note}")


if __name__ == "__main__":
    main()
