"""The lock DES core against its hand-written floor, both in CPU seconds.

The floor (des_floor.cpp: bench_lock_des.py's model, one FIFO lock, 8 CPUs,
exponential work 2 us and hold 0.5 us, written out on mmcost's own event
queue and random stream) is built here as a shared library with the flags
of the extension's Release build (-O3 -DNDEBUG -fPIC) and called through
ctypes; the core is ``_core.locks.simulate`` on the same model (one
replication, one thread). Both are timed by ``time.process_time`` (the
process's CPU time, every thread) in the same process, alternately: each
round times the floor, then the core, on the same number of acquisitions,
and the ratio is taken round by round. Prints min / median / max.

    python benchmarks/bench_des_floor.py [--acquisitions 2000000] [--rounds 15]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no idle BLAS threads on the timed cores

import argparse
import ctypes
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmcost import _core

HERE = Path(__file__).resolve().parent
CPUS, WORK_US, HOLD_US = 8, 2.0, 0.5


def build_floor(out: Path) -> ctypes.CDLL:
    cxx = os.environ.get("CXX", "g++")
    cmd = [cxx, "-O3", "-DNDEBUG", "-std=c++17", "-fPIC", "-shared", f"-I{HERE.parent / 'core' / 'include'}",
           str(HERE / "des_floor.cpp"), "-o", str(out)]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(str(out))
    lib.des_floor.restype = ctypes.c_double
    lib.des_floor.argtypes = [ctypes.c_long, ctypes.c_uint64]
    return lib


def core_params(acquisitions: int):
    exp = _core.sim.DistKind.exponential
    stages = [_core.locks.Stage(lock=-1, site="work", time=_core.sim.Distribution(kind=exp, mean=WORK_US)),
              _core.locks.Stage(lock=0, site="cs", time=_core.sim.Distribution(kind=exp, mean=HOLD_US))]
    return _core.locks.LockSimParams(cpus=CPUS, locks=[_core.locks.LockSpec(name="lock")], stages=stages,
                                     warmup_ops=0, ops=acquisitions)


def timed(f):
    t = time.process_time()
    x = f()
    return time.process_time() - t, x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acquisitions", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    n = args.acquisitions
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_floor(Path(tmp) / "des_floor.so")
        params = core_params(n)

        def core(seed):
            d = _core.locks.simulate(params, 1, 1, seed)
            return float(d["ops"][0] / d["time"][0])

        lib.des_floor(n // 10, 99), core(99)  # warm up both
        rounds = []
        for r in range(args.rounds):
            tf, xf = timed(lambda: lib.des_floor(n, r))
            tc, xc = timed(lambda: core(r))
            rounds.append((tf, tc, xf, xc))
    ns_f = sorted(r[0] / n * 1e9 for r in rounds)
    ns_c = sorted(r[1] / n * 1e9 for r in rounds)
    ratio = sorted(r[1] / r[0] for r in rounds)
    print(f"lock DES, {CPUS} CPUs, one FIFO lock, exponential work {WORK_US} us / hold {HOLD_US} us, "
          f"{n} acquisitions per run, {args.rounds} alternated rounds, CPU time (time.process_time)")
    print(f"  throughput /us: floor {statistics.median(r[2] for r in rounds):.4f}, "
          f"core {statistics.median(r[3] for r in rounds):.4f}")
    for name, v in (("floor (des_floor.cpp)", ns_f), ("core (_core.locks.simulate)", ns_c)):
        print(f"  {name:28s} ns per acquisition: min {v[0]:.1f}  median {statistics.median(v):.1f}  max {v[-1]:.1f}")
    print(f"  core / floor (per round):    min {ratio[0]:.3f}  median {statistics.median(ratio):.3f}  "
          f"max {ratio[-1]:.3f}  (target <= 1.3)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
