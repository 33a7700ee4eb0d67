"""The global swap allocator lock across job counts and memory limits (seed 003 and its cover letter).

:class:`mmcost.swap_alloc_lock.SwapAllocLockModel` fits three totals to each
build configuration, so it can only describe the configuration it was fitted
to. Seed 003's cover letter ("[PATCH 00/13] mm, swap: rework of swap allocator
locks", dataset ``swap_alloc_locks_cover``) scales the same build from make
-j6 in a 192M memcg to -j96 in 2G, with 4K pages and 64K mTHP, on a 48-core,
96-thread machine. This model shares two constants across all of them, so a
configuration can be predicted from the others.

Mechanism. The after kernel (per-cluster locks) has the build's work without
the global-lock spinning; its measured sys and real times for a configuration
are where the prediction starts. Before the series that work is unchanged, but
slot allocation and free (``get_swap_pages``, ``swapcache_free_entries``,
``free_swap_and_cache_nr``: the before-series ``perf lock contention`` callers)
serialise on ``si->lock``. Per build:

- lock demand ``H = lock_share * sys_after / sigma(N)``: the work under the
  lock is a fixed share of the swap-heavy system time (both scale with the
  pages swapped), counted at full core speed;
- ``sigma(N) = 1 + (smt_inflation - 1) * min(1, max(0, N - cores) / cores)``:
  the after kernel's system time per unit of work grows with the share of
  cores whose two SMT threads are both busy. The lock holder does not pay it:
  its sibling is spinning in the qspinlock's wait loop
  (``smp_cond_load_relaxed`` -> ``cpu_relax()``, x86 ``rep; nop`` = ``PAUSE``),
  which leaves the core's shared resources to the other thread (Intel SDM
  Vol. 3A, 8.10.2 "PAUSE" and 8.10.6.1 "Use the PAUSE instruction in
  spin-wait loops");
- N job slots contend for one FIFO lock (exact MVA,
  :func:`mmcost.swap_alloc_lock.global_lock`); everything else a slot does,
  idle included, is think time. Spinning is system time, so
  ``sys_before = sys_after + N * real_before - N * real_after``.

The last line is checked on the data independently of the model
(:func:`spin_accounting`): across the ten published configurations the extra
system time equals N times the extra wall time within a few percent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from . import _validate as v
from .model import Model, Parameter
from .swap_alloc_lock import global_lock

#: configuration columns that identify one build
CONFIG = ("processes", "memcg_mb", "folio_kb")
#: "on a 48c96t system" (cover letter); 2 x Xeon 8255C = 2 x 24 cores for seed 003's runs
CORES = 48


def _key(row) -> tuple:
    return tuple(int(row[c]) for c in CONFIG)


@dataclass(frozen=True)
class BuildScalingModel(Model):
    """``after``: per configuration (processes, memcg_mb, folio_kb), the after
    kernel's measured ``(sys_time_s, real_time_s)``; build it with
    :meth:`from_data`. Predicts both kernels' sys and real times; the after
    kernel's are its inputs."""

    name: str = "swap_alloc_lock_scaling"
    after: tuple = ()
    cores: int = CORES

    PARAMETERS: ClassVar = (
        Parameter("lock_share", 0.05, "", 1e-5, 0.5,
                  doc="si->lock hold per second of the after kernel's system work at full core speed"),
        Parameter("smt_inflation", 1.6, "", 1.0, 4.0,
                  doc="system time per unit of work with both SMT threads of every core busy, relative to one"),
    )
    METRICS: ClassVar = ("sys_time_s", "real_time_s")

    def __post_init__(self):
        super().__post_init__()
        v.count("cores", self.cores)
        for entry in self.after:
            key, sys_s, real_s = entry
            if len(key) != len(CONFIG):
                raise ValueError(f"after: configuration keys are {CONFIG}, got {key!r}")
            for c, k in zip(CONFIG, key):
                v.count(f"after {c}", k)
            v.scalar("after sys_time_s", sys_s, positive=True)
            v.scalar("after real_time_s", real_s, positive=True)
            if sys_s > key[0] * real_s:
                raise ValueError(f"after sys_time_s={sys_s:g} exceeds the job-slot time {key[0]} x {real_s:g} s "
                                 f"of configuration {dict(zip(CONFIG, key))}")

    @classmethod
    def from_data(cls, df: pd.DataFrame, **kwargs) -> BuildScalingModel:
        """The after kernel's sys and real times of every configuration in ``df``."""
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"df must be a DataFrame, got {type(df).__name__}")
        missing = [c for c in (*CONFIG, "variant", "metric", "value") if c not in df.columns]
        if missing:
            raise ValueError(f"df: missing column(s) {missing}")
        part = df[(df["variant"] == "after") & df["metric"].isin(cls.METRICS)]
        if part.empty:
            raise ValueError("df: no 'after' sys_time_s / real_time_s rows to start from")
        table = part.pivot_table(index=list(CONFIG), columns="metric", values="value", aggfunc="first")
        incomplete = table[table.isna().any(axis=1)]
        if not incomplete.empty or set(table.columns) != set(cls.METRICS):
            raise ValueError(f"df: configurations without both after sys_time_s and real_time_s: "
                             f"{list(incomplete.index) or list(table.index)}")
        after = tuple((tuple(int(k) for k in key), float(r["sys_time_s"]), float(r["real_time_s"]))
                      for key, r in table.iterrows())
        return cls(after=after, **kwargs)

    def sigma(self, n: int, smt_inflation: float) -> float:
        """System time per unit of work with ``n`` busy job slots, relative to one thread per core."""
        doubled = min(1.0, max(0.0, n - self.cores) / self.cores)
        return 1.0 + (smt_inflation - 1.0) * doubled

    def build(self, key: tuple, p=None, solver: str = "analytic", **simulate_kwargs) -> dict:
        """Both kernels for one configuration ``(processes, memcg_mb, folio_kb)``:
        times, the lock's hold, utilisation and the CPUs spinning on it.
        ``solver="simulated"`` runs the lock on the DES instead of exact MVA
        (keyword arguments go to :meth:`mmcost.locks.LockSystem.simulate`) and
        adds ``real_before_s_ci99``."""
        p = {**self.values(), **(p or {})}
        table = {k: (s, r) for k, s, r in self.after}
        if tuple(key) not in table:
            raise ValueError(f"{self.name}: no after-kernel measurement for configuration "
                             f"{dict(zip(CONFIG, key))}; known: {[dict(zip(CONFIG, k)) for k in table]}")
        n = int(key[0])
        sys_a, real_a = table[tuple(key)]
        slots = n * real_a
        hold = p["lock_share"] * sys_a / self.sigma(n, p["smt_inflation"])
        g = global_lock(n, hold, slots - hold, solver, **simulate_kwargs)
        out = dict(sys_after_s=sys_a, real_after_s=real_a, hold_s=hold, real_before_s=g["real_s"],
                   sys_before_s=sys_a + n * g["real_s"] - slots, utilization=g["utilization"],
                   spinning=g["spinning"], busy_seen=g["busy_seen"])
        if "real_s_ci99" in g:
            out["real_before_s_ci99"] = g["real_s_ci99"]
        return {k: float(x) for k, x in out.items()}

    def with_interpolated(self, key: tuple, p=None) -> BuildScalingModel:
        """A copy that also knows an unmeasured configuration ``(processes,
        memcg_mb, folio_kb)``, interpolated linearly between the two nearest
        measured ones with the same folio size along one axis: the job count
        at the same memory per job (the direction the cover letter's matrix
        scales in), else the memcg limit at the same job count. Interpolated
        are the job-slot time N x real and the system work at full core speed
        sys / sigma(N). Swap work falls convexly as memory grows, so along the
        memcg axis the line is an upper bound between its two ends."""
        p = {**self.values(), **(p or {})}
        n, mem, kb = (int(k) for k in key)
        v.count("processes", n)
        v.count("memcg_mb", mem)
        measured = [(k, s, r) for k, s, r in self.after if k[2] == kb]
        axes = (("processes", n, [e for e in measured if e[0][1] * n == mem * e[0][0]], lambda e: e[0][0]),
                ("memcg_mb", mem, [e for e in measured if e[0][0] == n], lambda e: e[0][1]))
        for _axis, x, line, coord in axes:
            xs = sorted(coord(e) for e in line)
            if len(xs) >= 2 and xs[0] <= x <= xs[-1]:
                break
        else:
            raise ValueError(f"{self.name}: cannot interpolate processes={n}, memcg_mb={mem}, folio_kb={kb}: no two "
                             f"measured {kb}K configurations around it at {mem / n:g} MiB per job "
                             f"(job counts {sorted(e[0][0] for e in axes[0][2])}) or at {n} jobs "
                             f"(memcg limits {sorted(e[0][1] for e in axes[1][2])})")
        lo = max((e for e in line if coord(e) <= x), key=coord)
        hi = min((e for e in line if coord(e) >= x), key=coord)
        w = 0.0 if coord(hi) == coord(lo) else (x - coord(lo)) / (coord(hi) - coord(lo))
        s_inf = p["smt_inflation"]
        work = (1 - w) * lo[1] / self.sigma(lo[0][0], s_inf) + w * hi[1] / self.sigma(hi[0][0], s_inf)
        slots = (1 - w) * lo[0][0] * lo[2] + w * hi[0][0] * hi[2]
        entry = ((n, mem, kb), work * self.sigma(n, s_inf), slots / n)
        return replace(self, after=tuple(e for e in self.after if e[0] != entry[0]) + (entry,))

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        out = np.empty(len(rows))
        for i, (_, r) in enumerate(rows.iterrows()):
            b = self.build(_key(r), p)
            variant = "before" if r["variant"] == "before" else "after"
            out[i] = b[f"{metric.removesuffix('_time_s')}_{variant}_s"]
        return out


def spin_accounting(df: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: the before kernel's extra system time and N times its
    extra wall time. If the before kernel's extra time is all job slots
    spinning on a lock, the two are equal (``ratio`` = 1); no model involved."""
    part = df[df["metric"].isin(BuildScalingModel.METRICS) & df["variant"].isin(["before", "after"])]
    t = part.pivot_table(index=list(CONFIG), columns=["variant", "metric"], values="value")
    n = t.index.get_level_values("processes").to_numpy(float)
    extra_sys = t[("before", "sys_time_s")] - t[("after", "sys_time_s")]
    extra_slots = n * (t[("before", "real_time_s")] - t[("after", "real_time_s")])
    return pd.DataFrame({"extra_sys_s": extra_sys, "n_x_extra_real_s": extra_slots,
                         "ratio": extra_sys / extra_slots}).reset_index()


def predict_configs(fit, keys, level: float | None = None, n_samples: int = 200, seed=0, *,
                    interval: float | None = None) -> pd.DataFrame:
    """Both kernels at each configuration ``(processes, memcg_mb, folio_kb)`` in
    ``keys``, measured or interpolated (:meth:`BuildScalingModel.with_interpolated`),
    with the central ``level`` (0.9; ``interval``: its deprecated name) over
    parameter draws from ``fit``'s covariance.
    Columns: the configuration, then ``best``/``lo``/``hi`` of real_before_s,
    real_after_s, real_change_pct (after vs before) and spinning (CPUs).
    The band is the parameters' uncertainty only; the model's own error, from
    leaving each configuration out (``fit.loo(by=list(CONFIG))``), is larger
    (median 4%, max 10% on the published configurations)."""
    from .fit import band_level

    level = band_level(level, interval, "predict_configs")
    model = fit.model
    measured = {k for k, _, _ in model.after}
    draws = [model.values()] + [{**model.values(), **d} for d in fit.sample_params(n_samples, seed=seed).to_dict("records")]
    out = []
    for key in keys:
        key = tuple(int(k) for k in key)
        vals = []
        for p in draws:
            m = model.with_parameters(**p)
            b = (m if key in measured else m.with_interpolated(key)).build(key)
            vals.append((b["real_before_s"], b["real_after_s"], 100 * (b["real_after_s"] / b["real_before_s"] - 1),
                         b["spinning"]))
        vals = np.array(vals, dtype=float)
        lo, hi = np.quantile(vals[1:], [(1 - level) / 2, (1 + level) / 2], axis=0)
        row = dict(zip(CONFIG, key), measured=key in measured)
        for j, name in enumerate(("real_before_s", "real_after_s", "real_change_pct", "spinning")):
            row.update({f"{name}": vals[0, j], f"{name}_lo": lo[j], f"{name}_hi": hi[j]})
        out.append(row)
    return pd.DataFrame(out)


def figure(sweep: pd.DataFrame, measured: pd.DataFrame | None = None, *, folio_kb: int = 4, title: str | None = None,
           ax=None):
    """Real time against the job count: the before kernel predicted (90% band),
    the after kernel measured or interpolated (``sweep`` from
    :func:`predict_configs`), and the published points of ``measured`` (rows
    with variant, metric, processes, memcg_mb, folio_kb) at the sweep's memory
    per job. ``ax``: draw into that Axes instead of a new figure."""
    from .plot import _axes, _finish

    own = ax is None
    fig, ax = _axes(ax)
    ax.fill_between(sweep["processes"], sweep["real_before_s_lo"], sweep["real_before_s_hi"], color="0.5", alpha=0.3)
    ax.plot(sweep["processes"], sweep["real_before_s"], "-", color="0.4", label="before (model, 90% band)")
    ax.plot(sweep["processes"], sweep["real_after_s"], "-", color="tab:blue", label="after (measured / interpolated)")
    per_job = set((sweep["memcg_mb"] / sweep["processes"]).round(6))
    if measured is not None:
        pts = measured[(measured["folio_kb"] == folio_kb) & (measured["metric"] == "real_time_s")]
        pts = pts[(pts["memcg_mb"] / pts["processes"]).round(6).isin(per_job)]
        for v, mk in (("before", "ks"), ("after", "b^")):
            q = pts[pts["variant"] == v]
            ax.plot(q["processes"], q["value"], mk, label=f"{v} (published)")
    ax.set_xlabel(f"make -j, parallel jobs ({', '.join(f'{m:g}' for m in sorted(per_job))} MiB of memcg per job, "
                  f"{folio_kb}K folios)")
    ax.set_ylabel("wall-clock time of the build [s]")
    ax.legend(frameon=False, fontsize=8)
    return _finish(fig, ax, title, own)
