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
5. before a large-folio run, a warm-up (:func:`warm_up`): the memory the run
   will fault fresh touched in its folio size and freed first, so that in a
   guest its folios reuse memory the host backs (``--no-warm`` to skip it);
6. the machine's load just before the writers start and just after they end
   (load average, other runnable tasks, the share of CPU time stolen between
   the two: :mod:`mmcost.measure.load`), so that verify can flag a run a
   neighbour disturbed;
7. tidy rows in the project's schema, with the run's configuration and the
   machine's metadata (its ``boot_id`` and CPU model, and with ``profile`` the
   id of the machine profile whose costs predict it,
   :func:`mmcost.measure.profile.profile_id`), appended to the CSV as each run
   finishes.

Every setting is recorded before the first change and restored at the end,
on error, on Ctrl-C, SIGTERM and SIGHUP (:class:`mmcost.measure.controls.Machine`).
Every change is also written to a journal on disk before it is made
(:mod:`mmcost.measure.journal`): a run killed by SIGKILL is restored by the
next run before it starts, or by ``mmcost measure restore``; while one run
holds the journal, a second is refused.

Arguments are checked before the machine is touched. Each invocation gets
its own id (start time and a random suffix), the prefix of its run ids, so
runs appended to one CSV by several invocations stay apart. The CSV has the
columns of :data:`RUN_COLUMNS`, in that order (documented in
``docs/reproduce.md``, "The runs schema"); appending to a CSV with other
columns or a last line cut short is refused.
"""

from __future__ import annotations

import itertools
import math
import os
import platform
import random
import re
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import parse, schema
from . import load as machine_load
from .controls import Machine, MeasureError
from .session import Stopped, holding  # noqa: F401 (Stopped: what the CLI catches)

#: The columns of a runs CSV, in order (see docs/reproduce.md, "The runs schema").
RUN_COLUMNS = [*schema.COLUMNS, "printed", "line", "block", "source_name", "note", "cpu", "run", "compressor",
               "madvise", "kernel", "cpu_model_name", "hypervisor", "boot_id", "machine_profile",
               *machine_load.COLUMNS, "started"]

#: vmstat counters kept per run (mmcost.parse.vmstat names them <name>_count)
VMSTAT = ("pswpout", "pswpin", "pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "thp_swpout",
          "thp_swpout_fallback", "nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
          "nr_tlb_local_flush_one")
#: memcg v1 charge-failure counters kept (page_counter_try_charge's failcnt; memsw with swap accounting)
FAILCNT = ("failcnt", "memsw.failcnt")
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
    if re.search(r"[kKmMgG]", str(text)):
        return size_kb(text) * 1024
    if not re.fullmatch(r"\s*\d+\s*", str(text)):
        raise ValueError(f"not a size: {text!r} (expected bytes, or e.g. 256M, 1G)")
    return int(text)


@dataclass(frozen=True)
class Config:
    folio_kb: int
    processes: int
    memcg_mb: int
    device: str  # "zram:lzo-rle"
    rep: int
    pattern: str = ""  # swap-in's read-back order ("seq", "rand"); "" for swap-out


    @property
    def compressor(self) -> str:
        return self.device.split(":", 1)[1] if ":" in self.device else "lzo-rle"

    @property
    def stem(self) -> str:
        pattern = f"-{self.pattern}" if self.pattern else ""
        return f"{self.folio_kb}k-p{self.processes}-m{self.memcg_mb}-{self.compressor}{pattern}-r{self.rep}"


def matrix(folio_kb, processes, memcg_mb, devices, reps: int, seed: int = 0, patterns=("",)) -> list[Config]:
    """Runs in repetition-major order, shuffled within each repetition (seeded);
    ``patterns``: swap-in's read-back orders (swap-out has none)."""
    for d in devices:
        if not str(d).startswith("zram"):
            raise ValueError(f"device {d!r}: only zram[:compressor] devices are created by mmcost measure")
    combos = list(itertools.product(folio_kb, processes, memcg_mb, devices, patterns))
    out = []
    for rep in range(reps):
        order = random.Random(f"{seed}-{rep}").sample(combos, len(combos))
        out += [Config(int(kb), int(p), int(m), str(d), rep, str(pat)) for kb, p, m, d, pat in order]
    return out


def metadata(m: Machine) -> dict:
    """The machine a matrix runs on: kernel release, CPU model name, CPUs, whether
    virtualized (the CPUID ``hypervisor`` flag in /proc/cpuinfo), which hypervisor,
    and this boot's id (/proc/sys/kernel/random/boot_id, a random UUID drawn at each
    boot: runs of two VMs of one kind, or of one VM rebooted, are told apart)."""
    cpuinfo = m.path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.is_file() else ""
    model = re.search(r"model name\s*:\s*(.+)", text)
    virtualized = " hypervisor" in text
    boot = m.path("/proc/sys/kernel/random/boot_id")
    return dict(kernel=platform.release(), cpu_model_name=model.group(1).strip() if model else "",
                cpus=os.cpu_count() or 1, virtualized=virtualized, hypervisor=hypervisor(m, virtualized),
                boot_id=boot.read_text().strip() if boot.is_file() else "")


def hypervisor(m: Machine, virtualized: bool) -> str:
    """'xen' (/sys/hypervisor/type), 'kvm' or 'hyperv' (their paravirtual clocksource
    is offered: kvm-clock, hyperv_clocksource_*), 'unknown' (virtualized, none of
    these), 'none' (bare metal)."""
    xen = m.path("/sys/hypervisor/type")
    if xen.is_file() and xen.read_text().strip():
        return xen.read_text().strip()
    cs = m.path("/sys/devices/system/clocksource/clocksource0/available_clocksource")
    offered = cs.read_text() if cs.is_file() else ""
    for name, hv in (("kvm-clock", "kvm"), ("hyperv", "hyperv")):
        if name in offered:
            return hv
    return "unknown" if virtualized else "none"


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
    out["failcnt"] = {name: int((cg / f"memory.{name}").read_text()) for name in FAILCNT
                      if (cg / f"memory.{name}").is_file()}
    return out


def _delta_rows(before: dict, after: dict, ctx: dict, vmstat_names=VMSTAT, mthp_names=MTHP) -> list[pd.DataFrame]:
    """The changes between two :func:`_snapshot` s: the vmstat counters ``vmstat_names``, the
    /proc/interrupts TLB row, the run's folio size's mTHP counters ``mthp_names``."""
    rows = []
    if before["vmstat"] and after["vmstat"]:
        vm = parse.vmstat(before["vmstat"], after["vmstat"], **ctx)
        rows.append(vm[vm["source_name"].isin(vmstat_names)])
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
        rows.append(a[(a["folio_kb"] == ctx["folio_kb"]) & a["metric"].isin(mthp_names)])
    fail_b, fail_a = before.get("failcnt", {}), after.get("failcnt", {})
    fails = [dict(metric=f"memcg_{name.replace('.', '_')}_count", unit="count", value=float(fail_a[name] - fail_b[name]),
                  source_name=f"memory.{name}") for name in FAILCNT if name in fail_a and name in fail_b]
    if fails:
        rows.append(pd.DataFrame(fails).assign(**ctx))
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


def invocation_id() -> str:
    """This invocation's id: its start time and 8 random hex digits (unique across
    invocations, so appended runs never share a run id)."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


@contextmanager
def prepared(m: Machine, cfg: Config, run_id: str, zram_bytes: int):
    """One run's machine: only ``cfg``'s mTHP size ``always``, a fresh zram device of its
    compressor swapped on, a fresh memcg of its limit; yields (zram id, memcg folder) and
    removes the memcg and the device on the way out (restore() catches anything left on an error)."""
    m.set_mthp(cfg.folio_kb)
    zid = m.make_zram(cfg.compressor, zram_bytes)
    cg = m.make_memcg(f"mmcost-measure-{run_id}", cfg.memcg_mb)
    try:
        yield zid, cg
    finally:
        for kind, what in (("memcg", cg), ("swapon", f"/dev/zram{zid}"), ("zram", zid)):
            if (kind, what) in m.created:
                m.drop(kind, what)


@contextmanager
def zram_peaks(m: Machine, zid: int):
    """zram's mm_stat polled every 50 ms while the block runs; yields the dict of peaks it fills."""
    peaks: dict = {}
    stop = threading.Event()
    poll = threading.Thread(target=_poll_zram, args=(m, zid, stop, peaks), daemon=True)
    poll.start()
    try:
        yield peaks
    finally:
        stop.set()
        poll.join()


def in_memcg(cg: Path, cmd: list[str]) -> list[str]:
    """``cmd`` started inside the memcg ``cg`` (the shell joins it, then execs the command)."""
    return ["sh", "-c", f'echo $$ > "{cg}/cgroup.procs" && exec "$0" "$@"', *cmd]


def context(experiment: str, cfg: Config, bytes_per_process: int, meta: dict) -> dict:
    """The configuration columns every row of one run carries."""
    ctx = dict(experiment=experiment, variant=meta.get("kernel", ""), arch=_arch(), cpus=meta.get("cpus"),
               processes=cfg.processes, folio_kb=cfg.folio_kb, memcg_mb=cfg.memcg_mb,
               bytes_per_process=bytes_per_process, swap_device="zram", virtualized=meta.get("virtualized"),
               n_runs=1)
    return {k: v for k, v in ctx.items() if v is not None}


def finish(parts: list[pd.DataFrame], peaks: dict, ctx: dict, cfg: Config, run_id: str, meta: dict, load: dict,
           started: str, madvise: bool = False) -> pd.DataFrame:
    """One run's rows in the runs schema: its parts, zram's peaks, the machine's metadata and load."""
    rows = pd.concat(parts, ignore_index=True)
    zram = pd.DataFrame([dict(metric=f"zram_{k}_peak_bytes", unit="bytes", value=float(v), source_name=f"mm_stat {k}")
                         for k, v in peaks.items()])
    rows = pd.concat([rows, zram.assign(**ctx)], ignore_index=True)
    rows = rows.assign(run=run_id, compressor=cfg.compressor, madvise=madvise, kernel=meta.get("kernel", ""),
                       cpu_model_name=meta.get("cpu_model_name", ""), hypervisor=meta.get("hypervisor", ""),
                       boot_id=meta.get("boot_id", ""), machine_profile=meta.get("machine_profile", ""),
                       **load, started=started)
    return rows.reindex(columns=RUN_COLUMNS)


#: a run's fresh PMD THPs (up to its memcg's limit) are touched this much beyond the limit by the warm-up
WARMUP_MARGIN = 64 << 20


def warm_up(m: Machine, cfg: Config, bytes_per_process: int, ctx: dict) -> pd.DataFrame:
    """Before a large-folio run: touch and free as much memory as the run will fault fresh (its memcg's
    limit and :data:`WARMUP_MARGIN`, at most what it writes), in folios of the run's size (the only
    size enabled; MADV_HUGEPAGE), twice, outside the memcg, so that the run's folios reuse memory the
    host backs. In a guest with free page reporting a THP on memory the host took back costs ~25x a
    warm one (:func:`mmcost.swap.paths.unbacked_touch_us`); which a run gets depends on what ran
    seconds before it. Rows: the warm-up's bytes and the share of its first pass's 2 MiB chunks that
    were host-unbacked (:func:`mmcost.measure.profile.host_touch`)."""
    from .profile import host_touch, run_probe

    nbytes = min(int(cfg.memcg_mb) * 2**20 + WARMUP_MARGIN, cfg.processes * bytes_per_process)
    nbytes -= nbytes % (2 << 20)
    rows = run_probe("firsttouch", nbytes, "--rounds", 2, keys=("touch_us",), runner=m.run)
    _, _, share = host_touch(rows)
    return pd.DataFrame([dict(metric="warmup_bytes", unit="bytes", value=float(nbytes), source_name="mmcost-probe firsttouch"),
                         dict(metric="warmup_unbacked_share", unit="1", value=share,
                              source_name="mmcost-probe firsttouch: first pass's THPs over 4x the warm one")]
                        ).assign(**ctx)


def one_run(m: Machine, cfg: Config, bytes_per_process: int, *, madvise: bool = False, usemem: str | None = None,
            zram_bytes: int = 4 * 2**30, meta: dict | None = None, invocation: str = "",
            warm: bool = True) -> pd.DataFrame:
    """One configuration: set up, run, snapshot, tear down its memcg and zram device. ``warm``:
    a large-folio run is preceded by :func:`warm_up`."""
    meta = meta or {}
    run_id = f"{invocation}-{cfg.stem}" if invocation else cfg.stem
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with prepared(m, cfg, run_id, zram_bytes) as (zid, cg):
        if m.dry_run:
            m.log(f"would run {usemem or 'mmcost-writer'} {cfg.processes} {bytes_per_process} inside {cg}")
            return pd.DataFrame()
        cmd = ([usemem, "-n", str(cfg.processes), str(bytes_per_process)] if usemem
               else [str(writer_path()), str(cfg.processes), str(bytes_per_process)] + (["--madvise"] if madvise else []))
        ctx = context("usemem_swapout", cfg, bytes_per_process, meta)
        warmed = [warm_up(m, cfg, bytes_per_process, ctx)] if warm and cfg.folio_kb > 4 else []
        load = machine_load.before(m.root)
        before = _snapshot(m, cg)
        with zram_peaks(m, zid) as peaks:
            out = m.run(in_memcg(cg, cmd), check=True, capture_output=True, text=True).stdout
        after = _snapshot(m, cg)
        load = machine_load.after(m.root, load)
        parts = [parse.usemem(out, **ctx), parse.time_output(out, **ctx), *_delta_rows(before, after, ctx), *warmed]
        return finish(parts, peaks, ctx, cfg, run_id, meta, load, started, madvise)


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


def _positive_ints(name: str, values, minimum: int = 1, maximum: int | None = None) -> list[int]:
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if not values:
        raise ValueError(f"{name}: give at least one value")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v) \
                or v < minimum or (maximum is not None and v > maximum):
            bound = f">= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
            raise ValueError(f"{name}: {v!r} is not a whole number {bound}")
        out.append(int(v))
    return out


def _check_out(out) -> bool:
    """Refuse a CSV this run cannot append to; True when it exists with rows (no header then)."""
    if out is None:
        return False
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"out: {path} is a folder, not a CSV file")
    if not path.exists() or path.stat().st_size == 0:
        if not path.parent.is_dir():
            raise ValueError(f"out: the folder {path.parent} does not exist")
        return False
    with open(path, "rb") as f:
        header = f.readline().decode(errors="replace").rstrip("\r\n")
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
    if header != ",".join(RUN_COLUMNS):
        theirs = header.split(",")
        diff = next((i for i, (a, b) in enumerate(zip(theirs, RUN_COLUMNS)) if a != b),
                    min(len(theirs), len(RUN_COLUMNS)))
        raise ValueError(f"out: {path} has other columns than this version writes (from column {diff + 1}: "
                         f"{theirs[diff:diff + 3]} where it writes {RUN_COLUMNS[diff:diff + 3]}); appending would "
                         "shift them. Write to a new file")
    if last != b"\n":
        n = path.read_bytes().count(b"\n") + 1
        raise ValueError(f"out: {path} ends in an incomplete line {n} (a run killed while writing it?): "
                         "remove that line or write to a new file")
    return True


def _append(out, rows: pd.DataFrame, header: bool) -> None:
    """Append one run's rows in one write, made durable before the next run starts."""
    text = rows.to_csv(index=False, header=header)
    with open(out, "a") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _many(x) -> list:
    """One value or several: "64K" is one size, not three characters."""
    return [x] if isinstance(x, (str, int, float)) else list(x)


def _sized(name, convert, x):
    try:
        return convert(x)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def checked(folio_kb, processes, memcg_mb, devices, bytes_per_process, reps):
    """The matrix's arguments read and checked before the machine is touched:
    (folio KiB, processes, memcg MiB, devices, bytes per process, reps); a
    ValueError names the field."""
    folio_kb, processes, memcg_mb, devices = _many(folio_kb), _many(processes), _many(memcg_mb), _many(devices)
    kbs = _positive_ints("folio_kb", [_sized("folio_kb", size_kb, k) for k in folio_kb], minimum=4)
    processes = _positive_ints("processes", processes, maximum=4096)
    reps = _positive_ints("reps", reps)[0]
    nbytes = _sized("bytes_per_process", size_bytes, bytes_per_process)
    if not nbytes >= 4096:
        raise ValueError(f"bytes_per_process: {bytes_per_process!r} is less than one page (4096 bytes)")
    limits = _positive_ints("memcg_mb", [_sized("memcg_mb", size_bytes, x) / 2**20 if isinstance(x, str) else x
                                         for x in memcg_mb])
    if not devices:
        raise ValueError("devices: give at least one device")
    return kbs, processes, limits, [str(d) for d in devices], nbytes, reps


def _profile_of(m: Machine, profile) -> str:
    if profile is None:
        return ""
    from .profile import load as load_profile, profile_id

    profile_of = profile_id(profile)  # (ValueError "profile: ..." for a file that is not one)
    boot = m.path("/proc/sys/kernel/random/boot_id")
    theirs = load_profile(profile).description.get("boot_id")
    ours = boot.read_text().strip() if boot.is_file() else ""
    if theirs and ours and theirs != ours:
        m.log(f"note: profile {profile} was measured in another boot ({theirs}, this is {ours}): on a VM its "
              "costs may be another host's; the runs say which (boot_id, machine_profile)")
    return profile_of


def run_matrix(m: Machine, runs: list[Config], body, *, kbs: list[int], bytes_needed: float, out=None,
               progress: bool = True, journal=None, allow_busy: bool = False, profile=None,
               desc: str = "runs", check=None) -> pd.DataFrame:
    """The matrix ``runs`` on the machine ``m``, each by ``body(cfg, meta, invocation)``
    (its rows): a busy machine refused first, the machine held
    (:func:`mmcost.measure.session.holding`: journal, restore on every way out), checked
    (``check(m)`` too, when given), each run's rows appended to ``out`` as it ends, the
    next run started when no swap is used."""
    profile_of = _profile_of(m, profile)
    header = not _check_out(out)
    frames = []
    if not m.dry_run:
        from .profile import busy

        why = busy(m.root)
        if why and not allow_busy:
            raise MeasureError(f"the machine is busy ({why}): the runs would measure its neighbours; stop what "
                               "runs or pass allow_busy=True (--allow-busy)")
    with holding(m, journal):
        m.check(kbs, bytes_needed, compressors=sorted({r.compressor for r in runs}))
        if check is not None:
            check(m)
        meta = {**metadata(m), "machine_profile": profile_of}
        invocation = invocation_id()
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(runs), desc=desc, unit="run")
        try:
            for cfg in runs:
                rows = body(cfg, meta, invocation)
                if not rows.empty:
                    frames.append(rows)
                    if out is not None:
                        _append(out, rows, header)
                        header = False
                if bar is not None:
                    bar.update(1)
                if not m.dry_run:
                    _wait_swap_empty(m)
        finally:
            if bar is not None:
                bar.close()
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=RUN_COLUMNS)


def swapout(*, folio_kb=(4, 16, 64, 2048), processes=(1, 2), memcg_mb=(256,), devices=("zram:lzo-rle",),
            bytes_per_process="768M", reps: int = 3, out: str | Path | None = None, madvise: bool = False,
            usemem: str | None = None, dry_run: bool = False, root: str | Path = "/", progress: bool = True,
            seed: int = 0, machine: Machine | None = None, journal: str | Path | None = None,
            allow_busy: bool = False, profile: str | Path | None = None, warm: bool = True) -> pd.DataFrame:
    """Run the matrix; returns (and appends to ``out``) the tidy rows. See the module docstring.

    ``warm``: each large-folio run first touches and frees the memory it will fault fresh
    (:func:`warm_up`), so that it measures the kernel rather than its host's backing of fresh memory.

    A busy machine (other runnable tasks, steal time: :func:`mmcost.measure.profile.busy`) is
    refused unless ``allow_busy``: a run on a loaded box measured its neighbours (a trial gave
    a 79% verify error). Each run records the load before and after it
    (:mod:`mmcost.measure.load`); verify flags the runs it shows busy.

    ``profile``: the machine profile (``mmcost measure machine --out``) whose
    costs predict these runs; its id (:func:`mmcost.measure.profile.profile_id`)
    goes in every row's ``machine_profile`` (empty without one).

    ``journal``: the journal file (default ``/run/mmcost/swapout.journal`` under
    ``root``); every run on one machine must use the same one to be kept apart."""
    kbs, processes, limits, devices, nbytes, reps = checked(folio_kb, processes, memcg_mb, devices,
                                                            bytes_per_process, reps)
    m = machine or Machine(root=root, dry_run=dry_run)
    runs = matrix(kbs, processes, limits, devices, reps, seed)
    zram_bytes = int(max(4 * 2**30, 1.25 * max(processes) * nbytes))

    def body(cfg, meta, invocation):
        return one_run(m, cfg, nbytes, madvise=madvise, usemem=usemem, zram_bytes=zram_bytes, meta=meta,
                       invocation=invocation, warm=warm)

    return run_matrix(m, runs, body, kbs=kbs, bytes_needed=max(processes) * nbytes + zram_bytes / 2, out=out,
                      progress=progress, journal=journal, allow_busy=allow_busy, profile=profile,
                      desc="swap-out runs")
