"""Measure reclaim of lazyfree folios of each size on this machine's own kernel: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_lazyfree_unmap/measure.py``.
It compiles ``lazyfree_pageout.c`` and, for folios of 4K, 16K, 32K, 64K,
128K, 256K and 512K x 7 repetitions (shuffled, repetition-major), sets that size's
``hugepages-<size>kB/enabled`` to always and every other to never, and runs
``lazyfree_pageout 64MiB``: write 64 MiB, MADV_FREE it, time one
MADV_PAGEOUT (which discards the lazyfree folios in the calling task; no swap
is needed). Around each run it reads /proc/vmstat (pglazyfreed: every page
was freed lazily) and the size's ``stats/anon_fault_alloc`` (the folios
really were that size). Every setting touched is recorded and restored, on
error and on Ctrl-C too. Output: raw/*.txt and measurements.csv in mmcost's
tidy schema.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from mmcost.measure.controls import Machine, compile_helper, kernel_release, shuffled_runs, vmstat  # noqa: E402

FOLIO_KB = (4, 16, 32, 64, 128, 256, 512)
REPS = 7
BYTES = 64 * 2**20
THP = Path("/sys/kernel/mm/transparent_hugepage")



def faults(kb: int) -> int:
    return 0 if kb == 4 else int((THP / f"hugepages-{kb}kB/stats/anon_fault_alloc").read_text())


def write_rows(rows: list[dict]) -> None:
    """measurements.csv in the tidy schema's column order (mmcost.schema)."""
    from mmcost import schema

    schema.write_csv(rows, HERE / "measurements.csv", ("kernel", "run", "note"))


def main() -> int:
    exe = compile_helper(HERE / "lazyfree_pageout.c")
    order = shuffled_runs(REPS, FOLIO_KB)
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    kernel = kernel_release()
    rows = []
    m = Machine()
    try:
        for rep, kb in order:
            m.set_mthp(kb)
            run = f"{kb}k-r{rep}"
            before, f0 = vmstat(), faults(kb)
            out = subprocess.run([str(exe), str(BYTES)], check=True, capture_output=True, text=True).stdout
            after, f1 = vmstat(), faults(kb)
            (raw / f"{run}.txt").write_text(out)
            f = out.split()
            vals = dict(zip(f[0::2], f[1::2]))
            pages = int(vals["pages"])
            lazy = after["pglazyfreed"] - before["pglazyfreed"]
            large = (f1 - f0) * kb // 4 if kb > 4 else pages
            print(f"{run}: {vals['pageout_us']} us, pglazyfreed {lazy}, pages in {kb}K folios {large}", flush=True)
            common = dict(experiment="lazyfree_pageout", variant=kernel, folio_kb=kb, cpus=2, processes=1,
                          bytes_per_process=BYTES, virtualized=True, arch="x86", kernel=kernel, run=run, n_runs=1)
            rows.append(dict(common, metric="pageout_time_us", unit="us", value=float(vals["pageout_us"]),
                             note=f"one MADV_PAGEOUT of {pages} lazyfree pages"))
            rows.append(dict(common, metric="pglazyfreed_count", unit="count", value=float(lazy)))
            rows.append(dict(common, metric="fault_alloc_count", unit="count", value=float(f1 - f0),
                             note="folios of this size faulted (mTHP anon_fault_alloc; 4K: not counted)"))
    finally:
        m.restore()
    write_rows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
