"""Measure swap-out on this machine's own kernel: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_usemem/measure.py``.
For each run (folio size x processes x repetition, in a shuffled,
repetition-major order) it:

- creates its own memcg (cgroup v1 memory controller) with the limit,
- enables only the requested anonymous mTHP size (``hugepages-<size>kB/enabled``
  = always, every other size never; 4K: all never),
- runs ``writer.c`` (usemem's write loop) inside the memcg,
- snapshots the per-size mTHP stats, ``/proc/interrupts`` TLB row and
  ``/proc/vmstat`` before and after, and keeps the raw outputs in ``raw/``.

It uses a zram device of its own (``/sys/class/zram-control/hot_add``), never
one it did not create, and restores every setting it touched (mTHP files,
swap, zram device, memcg) at the end, on error and on Ctrl-C.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THP = Path("/sys/kernel/mm/transparent_hugepage")
MEMCG = Path("/sys/fs/cgroup/memory")
SIZES_KB = (4, 16, 64, 2048)
PROCESSES = (1, 2)
REPS = 3
BYTES = 768 * 2**20
LIMIT_MB = 256
ZRAM_BYTES = 4 * 2**30
COMPRESSOR = "lzo-rle"


def read(p: Path) -> str:
    return p.read_text().strip()


def write(p: Path, value: str) -> None:
    p.write_text(value)


def selected(text: str) -> str:
    return text.split("[")[1].split("]")[0]


def snapshot() -> dict:
    out = {}
    for d in sorted(p for p in THP.glob("hugepages-*kB") if (p / "stats").is_dir()):
        for f in sorted((d / "stats").iterdir()):
            out[f"{d.name}/stats/{f.name}"] = read(f)
    tlb = next(line for line in Path("/proc/interrupts").read_text().splitlines() if line.strip().startswith("TLB:"))
    out["interrupts_tlb"] = tlb
    out["vmstat"] = Path("/proc/vmstat").read_text()
    return out


def main() -> None:
    writer = Path("/tmp/mmcost-writer")
    subprocess.run(["gcc", "-O2", "-o", str(writer), str(HERE / "writer.c")], check=True)
    enabled = {d.name: selected(read(d / "enabled")) for d in THP.glob("hugepages-*kB") if (d / "enabled").exists()}
    print("recorded mTHP enabled:", enabled, flush=True)
    zram_id = None
    cg = MEMCG / f"mmcost-measure-{int(time.time())}"
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    try:
        zram_id = int(read(Path("/sys/class/zram-control/hot_add")))
        dev = Path(f"/sys/block/zram{zram_id}")
        write(dev / "comp_algorithm", COMPRESSOR)
        write(dev / "disksize", str(ZRAM_BYTES))
        subprocess.run(["mkswap", f"/dev/zram{zram_id}"], check=True, capture_output=True)
        subprocess.run(["swapon", "-p", "100", f"/dev/zram{zram_id}"], check=True)
        cg.mkdir()
        write(cg / "memory.limit_in_bytes", str(LIMIT_MB * 2**20))
        runs = [(rep, kb, p) for rep in range(REPS) for kb, p in random.Random(rep).sample(
            [(kb, p) for kb in SIZES_KB for p in PROCESSES], len(SIZES_KB) * len(PROCESSES))]
        for i, (rep, kb, procs) in enumerate(runs):
            for name in enabled:
                write(THP / name / "enabled", "always" if name == f"hugepages-{kb}kB" else "never")
            before = snapshot()
            cmd = f"echo $$ > {cg}/cgroup.procs && exec {writer} {procs} {BYTES}"
            out = subprocess.run(["sh", "-c", cmd], check=True, capture_output=True, text=True).stdout
            after = snapshot()
            stem = f"{kb}k-p{procs}-r{rep}"
            (raw / f"{stem}.usemem.txt").write_text(out)
            stats = [f"/sys/kernel/mm/transparent_hugepage/{k}:{int(after[k]) - int(before[k])}"
                     for k in after if k.startswith(f"hugepages-{kb}kB/")] if kb != 4 else []
            (raw / f"{stem}.mthp_stats.txt").write_text("\n".join(stats) + "\n")
            (raw / f"{stem}.interrupts.txt").write_text(before["interrupts_tlb"] + "\n" + after["interrupts_tlb"] + "\n")
            (raw / f"{stem}.vmstat_before.txt").write_text(before["vmstat"])
            (raw / f"{stem}.vmstat_after.txt").write_text(after["vmstat"])
            print(f"[{i + 1}/{len(runs)}] {stem}: " + " | ".join(out.splitlines()), flush=True)
            while int(read(Path(f"/sys/block/zram{zram_id}/mm_stat")).split()[0]) > 64 * 2**20:
                time.sleep(0.2)  # wait until the swap is (almost) empty
    finally:
        for name, value in enabled.items():
            write(THP / name / "enabled", value)
        if cg.exists():
            for pid in read(cg / "cgroup.procs").split():
                subprocess.run(["kill", "-9", pid])
            time.sleep(0.5)
            cg.rmdir()
        if zram_id is not None:
            subprocess.run(["swapoff", f"/dev/zram{zram_id}"])
            write(Path(f"/sys/block/zram{zram_id}/reset"), "1")
            write(Path("/sys/class/zram-control/hot_remove"), str(zram_id))
        print("restored mTHP enabled:", {n: selected(read(THP / n / "enabled")) for n in enabled})


if __name__ == "__main__":
    sys.exit(main())
