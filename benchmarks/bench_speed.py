"""Where users wait: each figure next to its reference, measured in this run.

CPU seconds (``time.process_time``; every path timed here is single-threaded)
of
- a fit plus leave-one-out of seed 000 (small_thp_swapout's SwapModel),
- a 300-draw 90% band over 20 SwapModel configurations,
each against the same computation on the per-call path (the frame grouped
by metric and configuration with pandas on every evaluation: what
``Model.evaluate`` did before ``Model.plan``, kept here as the reference);
- a 300-draw band over migrc's 60 TlbModel scenario rows (every cost prior
  drawn), against the same band with a copy and a solve per draw and row
  (``Mechanism.solve_many``'s loop: TlbModel's path before lane models);
- ``import mmcost`` and ``import mmcost.swap`` in a fresh interpreter, next
  to ``import numpy`` and ``import pandas`` there;
- a 10^6-state birth-death chain, against the same product form in NumPy;
- ``mmcost reproduce`` from a cold cache, in this process (``--reproduce``;
  about 40 s), against its target.
The lock DES and MVA have their own benchmarks (bench_lock_des.py,
bench_mva.py). Targets are issue 17's, on this project's 2-core machine.

    python benchmarks/bench_speed.py [--reproduce]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd

from mmcost import metrics as vocabulary
from mmcost import reproduce, studies
from mmcost.fit import NotIdentifiableWarning
from mmcost.model import Model


class PerCallPlan:
    """The reference: every evaluation groups the frame again."""

    def __init__(self, model: Model, configs: pd.DataFrame):
        self.model, self.configs = model, configs

    def __call__(self, params=None) -> np.ndarray:
        m = self.model
        p = m.values() if params is None else {**m.values(), **params}
        rows = self.configs.reset_index(drop=True)
        out = np.full(len(rows), np.nan)
        ctx = m.context(p)
        for metric, idx in rows.groupby("metric", sort=False).groups.items():
            idx = np.asarray(idx)
            part = rows.loc[idx]
            if metric.endswith(vocabulary.CHANGE_SUFFIX):
                base = metric.removesuffix(vocabulary.CHANGE_SUFFIX)
                now = m.predict_prepared(base, m.prepare(base, part), p, ctx)
                then = m.predict_prepared(base, m.prepare(base, m._reference_rows(base, part)), p, ctx)
                out[idx] = 100.0 * (np.asarray(now) / np.asarray(then) - 1.0)
            else:
                out[idx] = m.predict_prepared(metric, m.prepare(metric, part), p, ctx)
        return out

    def many(self, param_sets) -> np.ndarray:
        return np.array([self(p) for p in param_sets]).reshape(-1, len(self.configs))


@contextmanager
def per_call_path():
    saved = Model.plan
    Model.plan = lambda self, configs: PerCallPlan(self, configs)
    try:
        yield
    finally:
        Model.plan = saved


def cpu_s(fn) -> float:
    """CPU seconds of ``fn()`` from cold solver caches (each timing pays its own solves)."""
    from mmcost import locks

    locks._ANALYTIC.clear()  # noqa: SLF001
    t = time.process_time()
    fn()
    return time.process_time() - t


def fit_and_loo():
    study = studies.get("small_thp_swapout")
    study._fit = None  # noqa: SLF001 - a cold fit every time
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        study.fit().loo()


def band_rows() -> pd.DataFrame:
    kb = [4, 16, 32, 64, 128, 256, 512, 1024, 2048, 8]
    return pd.DataFrame([{"metric": "usemem_throughput_kib_s", "folio_kb": k, "processes": p}
                         for k in kb for p in (16, 64)])


def band(fit, rows):
    fit.predict(rows, level=0.9, n_samples=300, seed=1)


@contextmanager
def tlb_copy_per_draw():
    """The reference: each draw's configuration copied and solved alone."""
    from mmcost.mechanism import Mechanism
    from mmcost.tlb import TlbModel

    saved = TlbModel.solve_draws, TlbModel.solve_many
    TlbModel.solve_draws = classmethod(lambda cls, base, draws: None)
    TlbModel.solve_many = classmethod(Mechanism.solve_many.__func__)
    try:
        yield
    finally:
        TlbModel.solve_draws, TlbModel.solve_many = saved


def import_cpu_s(module: str) -> float:
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(5)]
    return min(runs)


def birth_death_numpy(lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The reference: the same log-space product form in NumPy (cumsum and
    SciPy's logsumexp). SciPy's sparse LU of the generator, the method used
    before, runs out of memory at this size (the normalisation row fills in)."""
    from scipy.special import logsumexp

    logs = np.concatenate([[0.0], np.cumsum(np.log(lam) - np.log(mu))])
    return np.exp(logs - logsumexp(logs))


def line(what: str, ours: float, ref: float | None, ref_name: str, target: str) -> str:
    ratio = f"{ref / ours:6.1f}x" if ref else "      "
    ref_text = f"{ref:8.3f} s" if ref is not None else " " * 10
    return f"{what:<34} {ours:8.3f} s  {ref_text} {ratio}  {ref_name:<12} {target}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reproduce", action="store_true", help="also time a cold `mmcost reproduce` (~40 s)")
    args = ap.parse_args()
    print(f"{'CPU seconds':<34} {'mmcost':>10}  {'reference':>10} {'ratio':>7}  {'reference is':<12} target")
    fit_and_loo()  # warm: imports, data parsing
    ours = min(cpu_s(fit_and_loo) for _ in range(3))
    with per_call_path():
        ref = cpu_s(fit_and_loo)
    print(line("seed 000 fit + leave-one-out", ours, ref, "per-call", "< 3 s"))
    fit = studies.get("small_thp_swapout").fit()
    rows = band_rows()
    ours = min(cpu_s(lambda: band(fit, rows)) for _ in range(3))
    with per_call_path():
        ref = cpu_s(lambda: band(fit, rows))
    print(line("300-draw band, 20 SwapModel rows", ours, ref, "per-call", "< 2 s"))
    migrc = studies.get("migrc_tlb")
    fit, rows = migrc.fit(), migrc.scenario_rows()
    tlb_band = lambda: fit.predict(rows, n_samples=300, seed=1, fixed_priors=True)  # noqa: E731
    ours = min(cpu_s(tlb_band) for _ in range(3))
    with tlb_copy_per_draw():
        ref = cpu_s(tlb_band)
    print(line("300-draw band, 60 TlbModel rows", ours, ref, "copy/draw", "(none)"))
    print(line("import mmcost", import_cpu_s("mmcost"), import_cpu_s("numpy"), "numpy", "< 0.3 s"))
    print(line("import mmcost.swap", import_cpu_s("mmcost.swap"), import_cpu_s("pandas"), "pandas", "< 0.8 s"))
    from mmcost import queueing

    lam, mu = np.full(10**6, 0.999), np.ones(10**6)
    ours = min(cpu_s(lambda: queueing.birth_death(lam, mu)) for _ in range(3))
    ref = min(cpu_s(lambda: birth_death_numpy(lam, mu)) for _ in range(3))
    print(line("birth-death chain, 10^6 states", ours, ref, "NumPy", "< 1 s"))
    if args.reproduce:
        with tempfile.TemporaryDirectory() as out:
            ours = cpu_s(lambda: reproduce.run(out, progress=False, cache_dir=None))
        print(line("mmcost reproduce, cold cache", ours, None, "", "< 45 s"))


if __name__ == "__main__":
    main()
