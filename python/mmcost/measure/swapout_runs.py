"""``mmcost measure swapout``: the swap-out benchmark on your own kernel, with its counters.

For each run of the matrix (folio size x processes x memcg limit x device,
``reps`` repetitions, repetition-major and shuffled within a repetition):

1. a fresh memcg of the limit (cgroup v2, or v1 where only v1 has the memory
   controller) and a fresh zram device of the compressor (its own, hot-added);
2. only the requested anonymous mTHP size ``always`` (4K: every size never);
3. the writer (``mmcost-writer``, built with the package: usemem's loop, the
   processes started together; or ``usemem`` itself) inside the memcg;
4. ``/proc/vmstat``, every ``hugepages-*kB/stats/*``, the ``/proc/interrupts``
   TLB row and the memcg's ``memory.stat`` before and after, and zram's
   ``mm_stat`` polled during the run for its peaks;
5. tidy rows in the project's schema, with the run's configuration and the
   machine's metadata, appended to the CSV as each run finishes.

Every setting is recorded before the first change and restored at the end,
on error and on Ctrl-C (:class:`mmcost.measure.machine.Machine`).
"""

from __future__ import annotations

import itertools
import os
import platform
import random
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import parse
from .machine import Machine, MeasureError

#: vmstat counters kept per run (mmcost.parse.vmstat names them <name>_count)
VMSTAT = ("pswpout", "pswpin", "pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "thp_swpout",
          "thp_swpout_fallback", "nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
          "nr_tlb_local_flush_one")
#: mTHP counters kept (mmcost.parse.mthp_stats metric names)
MTHP = ("fault_alloc_count", "fault_fallback_count", "fault_fallback_charge_count", "swpout_count",
        "swpout_fallback_count", "split_count")


def size_kb(text) -> int:
    """'64K' / '2M' / '4k' / 64 -> KiB."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return int(text)
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)(?:i?[bB])?\s*", str(text))
    if not m:
        raise ValueError(f"not a size: {text!r} (expected e.g. 4K, 64K, 2M)")
    return int(m.group(1)) * {"": 1, "k": 1, "m": 1024, "g": 1024**2}[m.group(2).lower()]


def size_bytes(text) -> int:
    """'1536M' / '1G' / 805306368 -> bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return int(text)
    return size_kb(text) * 1024 if re.search(r"[kKmMgG]", str(text)) else int(text)


@dataclass(frozen=True)
class Config:
    folio_kb: int
    processes: int
    memcg_mb: int
    device: str  # "zram:lzo-rle"
    rep: int

    @property
    def compressor(self) -> str:
        return self.device.split(":", 1)[1] if ":" in self.device else "lzo-rle"

    @property
    def stem(self) -> str:
        return f"{self.folio_kb}k-p{self.processes}-m{self.memcg_mb}-{self.compressor}-r{self.rep}"


def matrix(folio_kb, processes, memcg_mb, devices, reps: int, seed: int = 0) -> list[Config]:
    """Runs in repetition-major order, shuffled within each repetition (seeded)."""
    for d in devices:
        if not str(d).startswith("zram"):
            raise ValueError(f"device {d!r}: only zram[:compressor] devices are created by mmcost measure")
    combos = list(itertools.product(folio_kb, processes, memcg_mb, devices))
    out = []
    for rep in range(reps):
        order = random.Random(f"{seed}-{rep}").sample(combos, len(combos))
        out += [Config(int(kb), int(p), int(m), str(d), rep) for kb, p, m, d in order]
    return out


def metadata(m: Machine) -> dict:
    cpuinfo = m.path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.is_file() else ""
    model = re.search(r"model name\s*:\s*(.+)", text)
    return dict(kernel=platform.release(), cpu_model_name=model.group(1).strip() if model else "",
                cpus=os.cpu_count() or 1, virtualized=" hypervisor" in text)


def writer_path() -> Path:
    """The packaged writer (built with mmcost's C++ core)."""
    p = Path(__file__).resolve().parents[1] / "mmcost-writer"
    if not p.is_file():
        raise MeasureError(f"the writer is not built ({p}); reinstall mmcost (pip install .) or pass --usemem PATH")
    return p


def _snapshot(m: Machine, cg: Path) -> dict:
    out = {"vmstat": m.path("/proc/vmstat").read_text() if m.path("/proc/vmstat").is_file() else ""}
    stats = []
    for d in sorted(m.thp.glob("hugepages-*kB")):
        sd = d / "stats"
        if sd.is_dir():
            stats += [f"{sd / f.name}:{f.read_text().strip()}" for f in sorted(sd.iterdir())]
    out["mthp"] = "\n".join(stats)
    intr = m.path("/proc/interrupts")
    out["tlb"] = next((line for line in (intr.read_text().splitlines() if intr.is_file() else [])
                       if line.strip().startswith("TLB:")), "")
    stat = cg / "memory.stat"
    out["memcg"] = stat.read_text() if stat.is_file() else ""
    return out


def _delta_rows(before: dict, after: dict, ctx: dict) -> list[pd.DataFrame]:
    rows = []
    if before["vmstat"] and after["vmstat"]:
        vm = parse.vmstat(before["vmstat"], after["vmstat"], **ctx)
        rows.append(vm[vm["source_name"].isin(VMSTAT)])
    if before["tlb"] and after["tlb"]:
        b, a = parse.interrupts_tlb(before["tlb"], **ctx), parse.interrupts_tlb(after["tlb"], **ctx)
        a = a.copy()
        a["value"] = a["value"].to_numpy() - b["value"].to_numpy()
        rows.append(a)
    if before["mthp"] and after["mthp"]:
        ctx_no_kb = {k: v for k, v in ctx.items() if k != "folio_kb"}
        b, a = parse.mthp_stats(before["mthp"], **ctx_no_kb), parse.mthp_stats(after["mthp"], **ctx_no_kb)
        a = a.copy()
        a["value"] = a["value"].to_numpy() - b["value"].to_numpy()
        rows.append(a[(a["folio_kb"] == ctx["folio_kb"]) & a["metric"].isin(MTHP)])
    return rows


def _poll_zram(m: Machine, zid: int, stop: threading.Event, peaks: dict) -> None:
    p = m.path(f"/sys/block/zram{zid}/mm_stat")
    while not stop.is_set():
        try:
            f = p.read_text().split()
            peaks["orig_data_size"] = max(peaks.get("orig_data_size", 0), int(f[0]))
            peaks["compr_data_size"] = max(peaks.get("compr_data_size", 0), int(f[1]))
            peaks["mem_used_total"] = max(peaks.get("mem_used_total", 0), int(f[2]))
        except (OSError, IndexError, ValueError):
            pass
        stop.wait(0.05)


def one_run(m: Machine, cfg: Config, bytes_per_process: int, *, madvise: bool = False, usemem: str | None = None,
            zram_bytes: int = 4 * 2**30, meta: dict | None = None) -> pd.DataFrame:
    """One configuration: set up, run, snapshot, tear down its memcg and zram device."""
    meta = meta or {}
    m.set_mthp(cfg.folio_kb)
    zid = m.make_zram(cfg.compressor, zram_bytes)
    cg = m.make_memcg(f"mmcost-measure-{os.getpid()}-{cfg.stem}", cfg.memcg_mb)
    try:
        if m.dry_run:
            m.log(f"would run {usemem or 'mmcost-writer'} {cfg.processes} {bytes_per_process} inside {cg}")
            return pd.DataFrame()
        cmd = ([usemem, "-n", str(cfg.processes), str(bytes_per_process)] if usemem
               else [str(writer_path()), str(cfg.processes), str(bytes_per_process)] + (["--madvise"] if madvise else []))
        before = _snapshot(m, cg)
        peaks: dict = {}
        stop = threading.Event()
        poll = threading.Thread(target=_poll_zram, args=(m, zid, stop, peaks), daemon=True)
        poll.start()
        try:
            out = m.run(["sh", "-c", f'echo $$ > "{cg}/cgroup.procs" && exec "$0" "$@"', *cmd], check=True,
                        capture_output=True, text=True).stdout
        finally:
            stop.set()
            poll.join()
        after = _snapshot(m, cg)
        ctx = dict(experiment="usemem_swapout", variant=meta.get("kernel", ""), arch=_arch(), cpus=meta.get("cpus"),
                   processes=cfg.processes, folio_kb=cfg.folio_kb, memcg_mb=cfg.memcg_mb,
                   bytes_per_process=bytes_per_process, swap_device="zram", virtualized=meta.get("virtualized"),
                   n_runs=1)
        ctx = {k: v for k, v in ctx.items() if v is not None}
        parts = [parse.usemem(out, **ctx), parse.time_output(out, **ctx), *_delta_rows(before, after, ctx)]
        rows = pd.concat(parts, ignore_index=True)
        zram = pd.DataFrame([dict(metric=f"zram_{k}_peak_bytes", unit="bytes", value=float(v), source_name=f"mm_stat {k}")
                             for k, v in peaks.items()])
        rows = pd.concat([rows, zram.assign(**ctx)], ignore_index=True)
        return rows.assign(run=cfg.stem, compressor=cfg.compressor, madvise=madvise, kernel=meta.get("kernel", ""))
    finally:  # this run's memcg and zram device go now; restore() catches anything left on an error
        for kind, what in (("memcg", cg), ("swapon", f"/dev/zram{zid}"), ("zram", zid)):
            if (kind, what) in m.created:
                m.drop(kind, what)


def _arch() -> str:
    mach = platform.machine()
    return "arm64" if mach in ("aarch64", "arm64") else "x86" if mach in ("x86_64", "amd64") else mach


def _wait_swap_empty(m: Machine, timeout_s: float = 60.0) -> None:
    """Until no swap device holds more than 1 MiB (the previous run's pages are freed at exit)."""
    swaps = m.path("/proc/swaps")
    end = time.monotonic() + timeout_s
    while swaps.is_file() and time.monotonic() < end:
        used = [int(line.split()[3]) for line in swaps.read_text().splitlines()[1:] if line.split()]
        if not used or max(used) < 1024:
            return
        time.sleep(0.2)


def swapout(*, folio_kb=(4, 16, 64, 2048), processes=(1, 2), memcg_mb=(256,), devices=("zram:lzo-rle",),
            bytes_per_process="768M", reps: int = 3, out: str | Path | None = None, madvise: bool = False,
            usemem: str | None = None, dry_run: bool = False, root: str | Path = "/", progress: bool = True,
            seed: int = 0, machine: Machine | None = None) -> pd.DataFrame:
    """Run the matrix; returns (and appends to ``out``) the tidy rows. See the module docstring."""
    kbs = [size_kb(k) for k in folio_kb]
    nbytes = size_bytes(bytes_per_process)
    m = machine or Machine(root=root, dry_run=dry_run)
    runs = matrix(kbs, processes, [int(size_bytes(x) / 2**20) if isinstance(x, str) else int(x) for x in memcg_mb],
                  devices, reps, seed)
    zram_bytes = int(max(4 * 2**30, 1.25 * max(processes) * nbytes))
    m.check(kbs, max(processes) * nbytes + zram_bytes / 2)
    meta = metadata(m)
    frames = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(runs), desc="swap-out runs", unit="run")
    try:
        for cfg in runs:
            rows = one_run(m, cfg, nbytes, madvise=madvise, usemem=usemem, zram_bytes=zram_bytes, meta=meta)
            if not rows.empty:
                frames.append(rows)
                if out is not None:
                    rows.to_csv(out, mode="a", header=not Path(out).exists(), index=False)
            if bar is not None:
                bar.update(1)
            if not m.dry_run:
                _wait_swap_empty(m)
    finally:
        if bar is not None:
            bar.close()
        m.restore()
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
