"""How busy the machine was around each swap-out run, and when verify calls a run busy.

``mmcost measure swapout`` refuses a busy machine before its first run
(:func:`mmcost.measure.profile.busy`), but a neighbour can start mid-matrix:
a trial on a loaded box gave a 79% verify error. So each run records, from
procfs under a root (a fake one in the tests):

- ``load_1m`` / ``load_1m_after``: the 1-minute load average
  (``/proc/loadavg``, kernel/sched/loadavg.c: runnable plus uninterruptible
  tasks, sampled every 5 s, decaying by EXP_1 = 1884/2048 per sample);
- ``runnable_before`` / ``runnable_after``: other runnable tasks just before
  the writers start and just after they end (``procs_running`` of
  ``/proc/stat``, fs/proc/stat.c's ``nr_running()``, less the reader itself),
  the median of :data:`SAMPLES` reads :data:`SAMPLE_GAP_S` apart so that a
  kworker woken for a moment does not count;
- ``steal_share``: the share of all CPU time the hypervisor stole between
  the two (the ``cpu`` line of ``/proc/stat``: steal, its 8th field, since
  Linux 2.6.11, over the sum of its first eight; guest time is already inside
  user time, kernel/sched/cputime.c ``account_guest_time``).

:func:`busy_runs` applies the thresholds below to a runs frame; verify counts
the busy runs per configuration (``busy_runs``) and says so; it keeps them.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

import pandas as pd

#: Steal above this share of the run's CPU time makes it busy: a CPU-bound run loses about that share of
#: its throughput, half the median run-to-run spread (10.5%) of kvm_6_18_swapout's repetitions.
BUSY_STEAL = 0.05
#: This many other runnable tasks or more at a run's start or end make it busy: on the 2-vCPU guests this
#: project measures on, one CPU-bound neighbour takes up to half of what the writers and reclaim share.
BUSY_RUNNABLE = 1
# The load average is recorded but decides nothing: the matrix's own writers raise it. Runs of ~10 s back
# to back (2 s between) with 1 and 2 writers leave a 1-minute load of ~1.25, 0.6 per CPU on 2 vCPUs, at the
# next run's start (the EXP_1 recurrence), above the 0.5 per CPU a quiet machine would show.

#: Reads of procs_running per sample, and the time between them
SAMPLES, SAMPLE_GAP_S = 3, 0.01
#: The columns one run gets (in :data:`mmcost.measure.RUN_COLUMNS`; per-run, never configuration in verify)
COLUMNS = ("load_1m", "load_1m_after", "runnable_before", "runnable_after", "steal_share")


def loadavg_1m(root: str | Path = "/") -> float:
    """The 1-minute load average of ``<root>/proc/loadavg``; NaN where the file
    does not exist. Raises ValueError naming the file and field when its
    first field is not a load (a nonnegative number)."""
    p = Path(root) / "proc/loadavg"
    if not p.is_file():
        return math.nan
    fields = p.read_text().split()
    try:
        value = float(fields[0]) if fields else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{p}: field 1 (the 1-minute load average) is {fields[0] if fields else ''!r}, "
                         "not a nonnegative number")
    return value


def read_stat(root: str | Path = "/") -> dict | None:
    """The all-CPU ``cpu`` line and ``procs_running`` of ``<root>/proc/stat``:
    ``total`` (the sum of its first eight fields, USER_HZ ticks), ``steal`` (its
    8th) and ``procs_running``; None where the file does not exist. Raises
    ValueError naming the file and field when a line is missing or garbled."""
    p = Path(root) / "proc/stat"
    if not p.is_file():
        return None
    lines = p.read_text().splitlines()
    cpu = next((line for line in lines if line.split()[:1] == ["cpu"]), None)
    if cpu is None:
        raise ValueError(f"{p}: no 'cpu' line (the all-CPU times)")
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    ticks = cpu.split()[1:]
    for i, tok in enumerate(ticks[:8]):
        if not tok.isdigit():
            raise ValueError(f"{p}: field {i + 1} ({names[i]}) of the 'cpu' line is {tok!r}, not a tick count")
    if len(ticks) < 8:
        raise ValueError(f"{p}: the 'cpu' line has {len(ticks)} fields, no steal (the 8th, since Linux 2.6.11)")
    running = next((line.split() for line in lines if line.split()[:1] == ["procs_running"]), None)
    if running is None:
        raise ValueError(f"{p}: no 'procs_running' line")
    if len(running) != 2 or not running[1].isdigit() or int(running[1]) < 1:
        raise ValueError(f"{p}: procs_running is {' '.join(running[1:])!r}, not a count >= 1 (its reader runs)")
    v = [int(t) for t in ticks[:8]]
    return dict(total=sum(v), steal=v[7], procs_running=int(running[1]))


def other_runnable(root: str | Path = "/", samples: int = SAMPLES, gap_s: float = SAMPLE_GAP_S) -> float:
    """Runnable tasks other than the reader: the median over ``samples``
    reads of ``procs_running`` less one; NaN without a /proc/stat."""
    seen = []
    for i in range(samples):
        if i:
            time.sleep(gap_s)
        s = read_stat(root)
        if s is None:
            return math.nan
        seen.append(s["procs_running"] - 1)
    return float(statistics.median(seen))


def before(root: str | Path = "/") -> dict:
    """What a run records just before its writers start (pass to :func:`after`)."""
    return dict(load_1m=loadavg_1m(root), runnable_before=other_runnable(root), stat=read_stat(root))


def after(root: str | Path, start: dict) -> dict:
    """The run's :data:`COLUMNS`: ``start`` (:func:`before`) and the load now."""
    end = read_stat(root)
    steal = math.nan
    if start["stat"] is not None and end is not None and end["total"] > start["stat"]["total"]:
        steal = (end["steal"] - start["stat"]["steal"]) / (end["total"] - start["stat"]["total"])
    return dict(load_1m=start["load_1m"], load_1m_after=loadavg_1m(root), runnable_before=start["runnable_before"],
                runnable_after=other_runnable(root), steal_share=steal)


def busy_reason(steal_share=math.nan, runnable_before=math.nan, runnable_after=math.nan) -> str:
    """Why a run counts as busy (:data:`BUSY_STEAL`, :data:`BUSY_RUNNABLE`), or ``""``.
    A value not recorded (NaN: an older runs file, no procfs) says nothing."""
    why = []
    if steal_share > BUSY_STEAL:
        why.append(f"{steal_share:.0%} steal")
    for when, n in (("start", runnable_before), ("end", runnable_after)):
        if n >= BUSY_RUNNABLE:
            why.append(f"{n:g} other runnable at its {when}")
    return ", ".join(why)


def busy_runs(runs: pd.DataFrame) -> pd.Series:
    """Per run id, why it ran on a busy machine (``""``: it did not, or its
    load was not recorded), from the :data:`COLUMNS` of its rows."""
    cols = [c for c in ("steal_share", "runnable_before", "runnable_after") if c in runs.columns]
    if not cols or runs.empty:
        return pd.Series("", index=pd.Index(runs["run"].unique() if "run" in runs else [], name="run"), dtype=object)
    per = runs.groupby("run", sort=False)[cols].first()  # one value per run (NaN where none)
    for c in cols:
        try:
            per[c] = pd.to_numeric(per[c])
        except (ValueError, TypeError):
            bad = next(r for r, v in per[c].items() if pd.isna(pd.to_numeric(v, errors="coerce")) and pd.notna(v))
            raise ValueError(f"runs: run {bad!r}: {c} is {per.loc[bad, c]!r}, not a number") from None
    return pd.Series([busy_reason(**{c: getattr(r, c) for c in cols}) for r in per.itertuples()], index=per.index,
                     dtype=object)
