"""Measure the TLB flushes of MADV_PAGEOUT on this machine's own kernel: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_pageout_flush/measure.py``.
It compiles ``pageout_flush.c``, hot-adds a zram device of its own (lzo-rle,
1 GiB) as swap, sets every ``hugepages-<size>kB/enabled`` to never (4K
folios only), and for each of dirty/clean PTEs x a helper thread that spins
on CPU 1 / sleeps / is absent, 7 repetitions (shuffled, repetition-major),
runs ``pageout_flush MODE HELPER 64MiB``: the TLB shootdowns each CPU took
during one MADV_PAGEOUT of 16384 pages, how long the call took, and (a
spinning helper) the time the flush IPIs took from the helper and the share
of the call it was on CPU 1.
/proc/vmstat pswpout is read around each run. Every setting touched is
recorded and restored (mTHP files, the zram device, swap), on error and on
Ctrl-C too. Output: raw/*.txt and measurements.csv in mmcost's tidy schema.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from mmcost.measure.controls import Machine, compile_helper, kernel_release, shuffled_runs, vmstat, wait_zram_below  # noqa: E402

MODES = ("dirty", "clean")
HELPERS = ("spin", "sleep", "none")
REPS = 7
BYTES = 64 * 2**20
ZRAM_BYTES = 2**30
COMPRESSOR = "lzo-rle"



def write_rows(rows: list[dict]) -> None:
    """measurements.csv in the tidy schema's column order (mmcost.schema)."""
    from mmcost import schema

    schema.write_csv(rows, HERE / "measurements.csv", ("cpu", "compressor", "kernel", "run", "note"))


def main() -> int:
    exe = compile_helper(HERE / "pageout_flush.c", "-pthread")
    configs = [(mode, helper) for mode in MODES for helper in HELPERS]
    order = shuffled_runs(REPS, configs)
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    kernel = kernel_release()
    rows = []
    m = Machine()
    try:
        m.set_mthp(4)
        zid = m.make_zram(COMPRESSOR, ZRAM_BYTES)
        for rep, (mode, helper) in order:
            run = f"{mode}-{helper}-r{rep}"
            before = vmstat()
            out = subprocess.run([str(exe), mode, helper, str(BYTES)], check=True, capture_output=True,
                                 text=True).stdout
            after = vmstat()
            (raw / f"{run}.txt").write_text(out)
            f = out.split()
            vals = dict(zip(f[0::2], f[1::2]))
            pages = int(vals["pages"])
            swapped = after["pswpout"] - before["pswpout"]
            print(f"{run}: TLB cpu0 {vals['tlb_cpu0']} cpu1 {vals['tlb_cpu1']}, {vals['pageout_us']} us, "
                  f"pswpout {swapped}", flush=True)
            common = dict(experiment="pageout_flush", variant=f"{mode} PTEs, helper {helper}", cpus=2,
                          bytes_per_process=BYTES, swap_device="zram", compressor=COMPRESSOR, virtualized=True,
                          arch="x86", kernel=kernel, run=run, n_runs=1)
            note = {"spin": "helper thread spinning in user space on CPU 1 (the mm loaded, not lazy)",
                    "sleep": "helper thread blocked in read(): CPU 1 idle, lazy TLB",
                    "none": "single-threaded: CPU 1 never ran the mm"}[helper]
            rows.append(dict(common, metric="tlb_shootdowns", unit="count", value=float(vals["tlb_cpu1"]),
                             cpu=1, note=note))
            rows.append(dict(common, metric="tlb_shootdowns", unit="count", value=float(vals["tlb_cpu0"]),
                             cpu=0, note="the caller's CPU"))
            rows.append(dict(common, metric="pageout_time_us", unit="us", value=float(vals["pageout_us"]),
                             note=f"one MADV_PAGEOUT of {pages} pages"))
            rows.append(dict(common, metric="pswpout_count", unit="count", value=float(swapped)))
            if helper == "spin":
                rows.append(dict(common, metric="helper_lost_us", unit="us", value=float(vals["helper_lost_us"]),
                                 cpu=1, note="the spinning helper's time lost during the call (its loop rate "
                                             "100 ms before vs during)"))
                rows.append(dict(common, metric="helper_on_cpu_pct", unit="%",
                                 value=float(vals["helper_on_cpu_pct"]), cpu=1,
                                 note="the helper's CPU time over the call's wall time: CPU 1 ran the mm"))
            wait_zram_below(zid, 8 * 2**20)  # the previous run's objects are gone first
    finally:
        m.restore()
    write_rows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
