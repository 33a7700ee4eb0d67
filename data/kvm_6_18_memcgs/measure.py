"""Measure two writers sharing one memcg against two in memcgs of their own: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_memcgs/measure.py``.
Each run starts two single-process ``mmcost-writer`` instances at once
(usemem's loop, 768 MiB each, 4K folios: every ``hugepages-<size>kB/enabled``
never), either both in one memcg (cgroup v1) of 512 MiB or each in a memcg
of its own of 256 MiB, so the memory per writer is the same. Swap is a zram
device of its own (lzo-rle, 4 GiB). /proc/interrupts (the TLB row, summed
over CPUs) and /proc/vmstat (pswpout) are read before and after. 2 layouts x
5 repetitions, shuffled within each repetition (seed 0). Every setting
touched is recorded and restored (mTHP files, swap, the zram device, the
memcgs), on error and on Ctrl-C too. Output: raw/*.txt and measurements.csv
in mmcost's tidy schema.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from mmcost import schema  # noqa: E402
from mmcost.measure.controls import Machine, kernel_release, shuffled_runs  # noqa: E402
from mmcost.measure.swapout_runs import writer_path  # noqa: E402

REPS = 5
BYTES = 768 * 2**20
LAYOUTS = {"shared": (1, 512), "separate": (2, 256)}  # memcgs, limit of each (MiB)


def tlb_total() -> int:
    line = next(x for x in Path("/proc/interrupts").read_text().splitlines() if x.strip().startswith("TLB:"))
    return sum(int(f) for f in line.split()[1:] if f.isdigit())


def pswpout() -> int:
    return int(next(x for x in Path("/proc/vmstat").read_text().splitlines() if x.startswith("pswpout ")).split()[1])


def main() -> int:
    order = shuffled_runs(REPS, sorted(LAYOUTS))
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    kernel = kernel_release()
    rows = []
    m = Machine()
    try:
        m.set_mthp(4)
        zid = m.make_zram("lzo-rle", 4 * 2**30)
        for rep, layout in order:
            memcgs, limit = LAYOUTS[layout]
            run = f"{layout}-r{rep}"
            cgs = [m.make_memcg(f"mmcost-{run}-{i}", limit) for i in range(memcgs)]
            t0, s0 = tlb_total(), pswpout()
            procs = [subprocess.Popen(["sh", "-c", f'echo $$ > "{cgs[i % memcgs]}/cgroup.procs" && exec "$0" "$@"',
                                       str(writer_path()), "1", str(BYTES)], stdout=subprocess.PIPE, text=True)
                     for i in range(2)]
            outs = [p.communicate()[0] for p in procs]
            if any(p.returncode for p in procs):
                raise RuntimeError(f"{run}: a writer failed")
            shootdowns, swapped = tlb_total() - t0, pswpout() - s0
            (raw / f"{run}.txt").write_text("".join(outs))
            rates = [float(line.split("=")[1].split()[0]) for out in outs for line in out.splitlines() if "KB/s" in line]
            print(f"{run}: {shootdowns} shootdowns, {swapped} pages swapped, {rates} KB/s", flush=True)
            common = dict(experiment="two_writers_memcgs", variant=layout, processes=2, cpus=2, memcg_mb=limit,
                          memcgs=memcgs, bytes_per_process=BYTES, folio_kb=4, swap_device="zram", compressor="lzo-rle",
                          virtualized=True, arch="x86", kernel=kernel, run=run, n_runs=1)
            rows.append(dict(common, metric="tlb_shootdowns_per_swapped_page", unit="1/page",
                             value=shootdowns / swapped, note=f"{shootdowns} TLB interrupts / {swapped} pswpout"))
            rows += [dict(common, metric="usemem_throughput_kib_s", unit="KiB/s", value=r) for r in rates]
            for cg in cgs:
                m.drop("memcg", cg)
            while pswpout() and int(Path(f"/sys/block/zram{zid}/mm_stat").read_text().split()[0]) > 64 * 2**20:
                time.sleep(0.2)
    finally:
        m.restore()
    schema.write_csv(rows, HERE / "measurements.csv", ("memcgs", "compressor", "kernel", "run", "note"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
