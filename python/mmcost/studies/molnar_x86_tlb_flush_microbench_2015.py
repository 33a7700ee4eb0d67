"""Ingo Molnar's x86 TLB-flush cycle costs (2015): the CPU presets' primitives against a measurement.

Mechanism: the per-primitive costs of :mod:`mmcost.cpu_models` that
:class:`mmcost.tlb.TlbModel` and :class:`mmcost.swap.SwapModel` read
(``invlpg_us``, ``full_flush_us``, ``walk_ns``), in cycles. Nothing is
fitted: each operation is predicted from a preset, its band the preset's
prior (relative width 0.5, :data:`mmcost.cpu_models.RELATIVE_PRIORS`).
The newer Intel CPU (gbpages, 2015) is read as the ``haswell-ep`` preset;
the old AMD CPU has no preset of its own, so ``generic-x86`` (the generic
cycle costs every preset starts from) stands for it. The presets are not
changed here; the rows are checked against the reply's x86/bench logs
(<20150625114819.GA20478@gmail.com>).

How an operation is composed of primitives: ``__flush_tlb()`` (a CR3
write) is one full flush; ``invlpg X page``, ``access+invlpg X page`` and
``flush 4K page`` (read as INVLPG, see source.toml) one INVLPG;
``invlpg+access Nx`` N INVLPGs and N walks; ``flush+access Nx`` one full
flush and N walks.

=================================================  ====  ===============================
rows                                                n    how
=================================================  ====  ===============================
__flush_tlb, invlpg, flush 4K, access+invlpg,       60   predicted from the presets
  invlpg+access, flush+access (both CPUs, hot/cold)
__flush_tlb_global()                                 4   not expressible: no global
                                                         (PGE) flush cost in the models
__flush_tlb_range()                                  4   not expressible: range length
                                                         not stated
access only (no TLB operation)                      20   not expressible: data-cache
                                                         and walk costs without a flush
=================================================  ====  ===============================

What it says about the presets (cache-cold is the closer reading of a
shootdown's cost): INVLPG of one 4K page, 250 cycles in the presets, is
measured 280-350 on the Intel CPU and 95-290 on the AMD; a CR3 flush, 250
in the presets, 150-170 on the Intel CPU and 130-270 on the AMD; a refill
walk, 75 cycles, is near 0 cache-hot and 100-300 cache-cold.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy.stats import norm

from .. import cpu_models
from ._study import Section, Study

#: experiment -> the preset that stands for its CPU
PRESET = {"x86_bench_intel_newer": "haswell-ep", "x86_bench_amd_old": "generic-x86"}
#: relative width of the presets' cost priors
_WIDTH = 0.5


def primitives(operation: str) -> dict[str, int] | None:
    """How many INVLPGs, full flushes and walks one benchmarked operation is (None: not expressible)."""
    n = re.search(r"(\d)x", operation)
    n = int(n.group(1)) if n else 1
    if operation == "__flush_tlb()":
        return {"full_flush": 1}
    if operation.startswith(("invlpg+access",)):
        return {"invlpg": n, "walk": n}
    if operation.startswith(("invlpg ", "access+invlpg")) or operation == "flush 4K page":
        return {"invlpg": 1}
    if operation.startswith("flush+access"):
        return {"full_flush": 1, "walk": n}
    return None


def preset_cycles(preset: str) -> dict[str, float]:
    cpu = cpu_models.get(preset)
    return {k: cpu.cycles_of(k) for k in ("invlpg", "full_flush", "walk")}


class MolnarX86TlbFlushMicrobench(Study):
    id = "molnar_x86_tlb_flush_microbench_2015"
    miss = ("the presets' generic cycle counts (250 per INVLPG or CR3 flush) against the thread's measured "
            'per-primitive costs (a CR3 flush at 152 cycles on Intel)')
    mechanism = type(None)
    free = ()
    NOT_EXPRESSIBLE = (
        ({"variant": "__flush_tlb_global()"}, "no global (PGE/CR4) flush cost in the models"),
        ({"variant": "__flush_tlb_range()"}, "the range's length is not stated"),
        ({"variant": "~^access [0-9GB2]"}, "an access without a TLB operation: data-cache and walk costs only"),
    )

    def __repr__(self) -> str:
        return f"<study {self.id}: cpu_models presets, nothing fitted>"

    def predicted_rows(self) -> pd.DataFrame:
        df = self.data()
        return df[[primitives(v) is not None for v in df["variant"]]].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        rows = self.predicted_rows()
        best, lo, hi = [], [], []
        z = norm.ppf(0.5 + self.level / 2)
        for r in rows.itertuples():
            c = preset_cycles(PRESET[r.experiment])
            terms = [n * c[k] for k, n in primitives(r.variant).items()]
            best.append(sum(terms))
            half = z * _WIDTH * float(np.sqrt(sum(t * t for t in terms)))
            lo.append(max(0.0, best[-1] - half))
            hi.append(best[-1] + half)
        pred = pd.DataFrame({"best": best, "lo": lo, "hi": hi})
        config = [f"{PRESET[r.experiment]}: {r.variant}, {r.run.removeprefix('cache-')}" for r in rows.itertuples()]
        return self._held_out_frame(rows, config, pred)

    def sections(self) -> list[Section]:
        held = self.held_out()
        lines = [f"{'preset: operation, cache':<46} {'measured':>8} {'preset':>7} {'90% band':>13}"]
        for r in held.itertuples():
            lines.append(f"{r.configuration[:46]:<46} {r.published:>8.0f} {r.predicted:>7.0f} "
                         f"[{r.lo:.0f}, {r.hi:.0f}]")
        lines.append("cycles; Intel 'newer' read as haswell-ep, the old AMD as generic-x86")
        return [Section("x86 TLB primitives: measured cycles vs the CPU presets", "\n".join(lines))]


study = MolnarX86TlbFlushMicrobench()
