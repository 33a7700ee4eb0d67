"""Measure munmap of swapped-out memory on this machine's own kernel: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_munmap/measure.py``.
It compiles ``pageout_munmap.c``, hot-adds a zram device of its own (lzo-rle,
4 GiB) as swap, sets every ``hugepages-<size>kB/enabled`` to never (4K
folios only), and for 1, 2 and 4 processes x 5 repetitions (shuffled,
repetition-major) runs ``pageout_munmap P 256MiB``: each process writes
256 MiB, pages all of it out with MADV_PAGEOUT, and all munmap together.
/proc/vmstat is read before and after each run (pswpout: every page went to
swap). Every setting touched is recorded and restored (mTHP files, the zram
device, swap), on error and on Ctrl-C too. Output: raw/*.txt and
measurements.csv in mmcost's tidy schema.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from mmcost.measure.controls import Machine, compile_helper, kernel_release, shuffled_runs, vmstat, wait_zram_below  # noqa: E402

PROCESSES = (1, 2, 4)
REPS = 5
BYTES = 256 * 2**20
ZRAM_BYTES = 4 * 2**30
COMPRESSOR = "lzo-rle"



def write_rows(rows: list[dict]) -> None:
    """measurements.csv in the tidy schema's column order (mmcost.schema)."""
    from mmcost import schema

    schema.write_csv(rows, HERE / "measurements.csv", ("compressor", "kernel", "run", "note"))


def main() -> int:
    exe = compile_helper(HERE / "pageout_munmap.c")
    order = shuffled_runs(REPS, PROCESSES)
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    kernel = kernel_release()
    rows = []
    m = Machine()
    try:
        m.set_mthp(4)
        zid = m.make_zram(COMPRESSOR, ZRAM_BYTES)
        for rep, p in order:
            run = f"p{p}-r{rep}"
            before = vmstat()
            out = subprocess.run([str(exe), str(p), str(BYTES)], check=True, capture_output=True, text=True).stdout
            after = vmstat()
            (raw / f"{run}.txt").write_text(out)
            lines = [line.split() for line in out.splitlines()]
            munmap_us = [int(x[3]) for x in lines]
            swapped = after["pswpout"] - before["pswpout"]
            print(f"{run}: munmap {max(munmap_us) / 1e3:.1f} ms (each {munmap_us}), pswpout {swapped}", flush=True)
            common = dict(experiment="pageout_munmap", variant=kernel, processes=p, cpus=2, bytes_per_process=BYTES,
                          swap_device="zram", compressor=COMPRESSOR, virtualized=True, arch="x86", kernel=kernel,
                          run=run, n_runs=1)
            rows.append(dict(common, metric="munmap_time_ms", unit="ms", value=max(munmap_us) / 1e3,
                             note="until the last process's munmap returned"))
            rows.append(dict(common, metric="pswpout_count", unit="count", value=swapped))
            wait_zram_below(zid, 64 * 2**20)  # the previous run's objects are gone first
    finally:
        m.restore()
    write_rows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
