"""``mmcost measure swapin``: write anonymous memory past a memcg's limit, read it back, time the read-back.

The swap-out matrix's machinery (:mod:`mmcost.measure.swapout_runs`: the
checked arguments, the shuffled matrix, a fresh memcg and zram device per
run, the journal, every setting restored on every way out, the machine's
load and description per run), with the writer in its read-back mode
(``mmcost-writer P BYTES --readback seq|rand``). Per run:

1. the processes write their BYTES (swap-out, as ``measure swapout``), each
   prints usemem's line for the write; the writer says ``written`` and waits;
2. the counters are read (/proc/vmstat, every ``hugepages-*kB/stats/*``,
   the memcg's ``memory.stat``), and the processes are released together to
   read their memory back: every word in order (``seq``) or page by page in
   a random order (``rand``). Each prints the read-back phase's own time
   (``swapin_throughput_kib_s``, KiB/s per process, usemem's formula) and the
   pages ``/proc/self/pagemap`` showed swapped when it began
   (``swapped_at_start_pages``) and, in ``seq``, just before each 2 MiB was
   read (``swapped_at_touch_pages``, that read's time left out);
3. when all have read, the counters again, with the memory still mapped.

The read-back phase's deltas keep their names (``pswpin_count``,
``pswpout_count``: the read-back pushes other pages out again, the memory
still being over the limit, ``workingset_refault_anon_count``,
``pgmajfault_count``, the per-size ``swpin_count`` / ``swpin_fallback_count``
/ ``swpin_fallback_charge_count``, and the memcg's as ``memcg_<name>``); the
write phase's swap-out counts are kept as ``write_pswpout_count``,
``write_swpout_count``, ....

Which folios come back whole (Linux 6.18, mm/memory.c): ``do_swap_page()``
takes the SWP_SYNCHRONOUS_IO path (zram, brd: the read is done in the fault,
no readahead) when the slot's swap count is 1; there ``alloc_swap_folio()``
(v6.12, "mm: support large folios swap-in for sync io devices") tries the
orders ``thp_vma_allowable_orders()`` allows (the per-size ``enabled``
files), below PMD order only (``BIT(PMD_ORDER) - 1``: a 2 MiB folio comes
back as 4 KiB pages), aligned in the swap offset
(``thp_swap_suitable_orders()``), and only where every PTE of the range is
a swap entry of the same device with contiguous offsets, none in the swap
cache and none of the zero map (``can_swapin_thp()``); not at all where
zswap was ever enabled (``zswap_never_enabled()``). An order it could
allocate but not charge to the memcg counts ``swpin_fallback_charge``; one
it could not allocate ``swpin_fallback``; a folio swapped in whole
``swpin``. ``swap_read_folio()`` (mm/page_io.c) counts PSWPIN per page of
the folio read from the device.

So only zram devices are measured (a disk would take the readahead path,
``swapin_readahead()``), and a machine with zswap enabled is refused (its
swap-ins would be zswap loads, counted in zswpin, not pswpin).
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pandas as pd

from .. import parse
from . import load as machine_load
from .controls import Machine, MeasureError
from .swapout_runs import (Config, _delta_rows, _snapshot, checked, context, finish, in_memcg, matrix, prepared,
                           run_matrix, zram_peaks)
from . import swapout_runs

#: The read-back orders: every word in address order, or page by page in a random order.
PATTERNS = ("seq", "rand")
#: The experiment each pattern's rows carry.
EXPERIMENT = {"seq": "usemem_swapin", "rand": "usemem_swapin_random"}
#: vmstat counters kept for the read-back phase (those the kernel has).
VMSTAT = ("pswpin", "pswpout", "pgfault", "pgmajfault", "workingset_refault_anon", "workingset_restore_anon",
          "swpin_zero", "swpout_zero", "zswpin", "swap_ra", "swap_ra_hit", "thp_swpout", "thp_swpout_fallback",
          "thp_split_page")
#: ... and for the write phase (named ``write_<metric>``)
WRITE_VMSTAT = ("pswpout", "pswpin", "thp_swpout", "thp_swpout_fallback")
#: per-size mTHP counters kept (mmcost.parse.mthp_stats metric names); swpin* since v6.12
MTHP = ("swpin_count", "swpin_fallback_count", "swpin_fallback_charge_count", "swpout_count",
        "swpout_fallback_count", "fault_alloc_count", "fault_fallback_count", "split_count")
WRITE_MTHP = ("swpout_count", "swpout_fallback_count", "fault_alloc_count", "fault_fallback_count")
#: memory.stat entries kept (cgroup v1 and v2 names): event counters, and gauges (their change)
MEMCG_EVENTS = ("pgfault", "pgmajfault", "pgpgin", "pgpgout", "workingset_refault_anon")
MEMCG_GAUGES = ("swap", "rss", "anon", "swapcached")

_READBACK = re.compile(r"^readback (\d+ bytes / \d+ usecs = \d+ KB/s) swapped (-?\d+) at start (-?\d+) at touch\s*$")


def readback(text: str, **ctx) -> pd.DataFrame:
    """The writer's read-back lines (``readback B bytes / U usecs = K KB/s swapped S at
    start T at touch``), one block per process: ``swapin_bytes`` (bytes),
    ``swapin_time_us`` (us), ``swapin_throughput_kib_s`` (KiB/s, checked against
    usemem's formula ``(B * 1e6 >> 10) // U``), ``swapped_at_start_pages`` and
    ``swapped_at_touch_pages`` (pages; -1, not known, is left out). A line that
    starts ``readback`` and does not read is a :class:`mmcost.parse.ParseError`."""
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith("readback"):
            continue
        m = _READBACK.match(line)
        if m is None:
            raise parse.ParseError("mmcost-writer readback", lineno, f"not a read-back line: {line!r}")
        try:
            u = parse.usemem(m[1], **ctx)
        except ValueError as exc:
            raise parse.ParseError("mmcost-writer readback", lineno, str(exc)) from None
        block = len({r["block"] for r in rows})
        u = u.assign(metric=u["metric"].str.replace("usemem_", "swapin_", regex=False), line=lineno, block=block)
        rows += u.to_dict("records")
        for name, printed in (("swapped_at_start_pages", m[2]), ("swapped_at_touch_pages", m[3])):
            if int(printed) >= 0:
                rows.append({**u.iloc[0].to_dict(), "metric": name, "unit": "pages", "value": float(printed),
                             "printed": printed, "source_name": "/proc/self/pagemap bit 62"})
    if not rows:
        raise parse.ParseError("mmcost-writer readback", None, "no read-back line (the writer ran without "
                               "--readback, or its processes failed before reading)")
    return pd.DataFrame(rows)


def memcg_delta(before: str, after: str, **ctx) -> pd.DataFrame:
    """The change of the memcg's ``memory.stat`` between two reads: events as
    ``memcg_<name>_count``, gauges (bytes) as ``memcg_<name>_bytes`` (note "gauge change")."""
    def table(text):
        return {k: int(v) for k, v in (line.split() for line in text.splitlines() if len(line.split()) == 2)
                if v.isdigit()}
    b, a = table(before), table(after)
    rows = []
    for name in (*MEMCG_EVENTS, *MEMCG_GAUGES):
        if name in b and name in a:
            gauge = name in MEMCG_GAUGES
            rows.append(dict(metric=f"memcg_{name}_" + ("bytes" if gauge else "count"),
                             unit="bytes" if gauge else "count", value=float(a[name] - b[name]),
                             printed=f"{b[name]} -> {a[name]}", source_name=f"memory.stat {name}",
                             note="gauge change" if gauge else "delta", **ctx))
    return pd.DataFrame(rows)


def _talk(m: Machine, cmd: list[str], steps) -> str:
    """Run the writer, and at each marker it prints (``written``, ``read``) call the
    step and answer with a line; its whole output. A writer that fails raises
    CalledProcessError with its stderr; on any error or Ctrl-C it is killed."""
    proc = m.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, seen = [], []
    try:
        for marker, step in steps:
            for line in proc.stdout:
                lines.append(line)
                if line.strip() == marker:
                    break
            else:
                break  # the writer ended before this phase
            seen.append(marker)
            step()
            try:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            except BrokenPipeError:
                break
        lines.append(proc.stdout.read())
        err = proc.stderr.read()
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:  # stdin's last line to a writer that has gone
                pass
    out = "".join(lines)
    if proc.returncode != 0 or len(seen) < len(steps):
        raise subprocess.CalledProcessError(proc.returncode or 1, cmd, output=out, stderr=err)
    return out


def one_run(m: Machine, cfg: Config, bytes_per_process: int, *, zram_bytes: int, meta: dict | None = None,
            invocation: str = "") -> pd.DataFrame:
    """One configuration: write, snapshot, read back, snapshot; its memcg and zram device removed after."""
    meta = meta or {}
    run_id = f"{invocation}-{cfg.stem}" if invocation else cfg.stem
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with prepared(m, cfg, run_id, zram_bytes) as (zid, cg):
        cmd = [str(swapout_runs.writer_path()), str(cfg.processes), str(bytes_per_process), "--readback", cfg.pattern]
        if m.dry_run:
            m.log(f"would run {' '.join(cmd)} inside {cg}")
            return pd.DataFrame()
        snaps, loads = {"start": _snapshot(m, cg)}, {}

        def written():
            loads["before"] = machine_load.before(m.root)
            snaps["written"] = _snapshot(m, cg)

        def read():
            snaps["read"] = _snapshot(m, cg)
            loads["after"] = machine_load.after(m.root, loads["before"])

        with zram_peaks(m, zid) as peaks:
            try:
                out = _talk(m, in_memcg(cg, cmd), (("written", written), ("read", read)))
            except subprocess.CalledProcessError as exc:
                raise MeasureError(f"run {run_id}: the writer failed: {(exc.stderr or '').strip() or exc}"
                                   f"{_oom_kills(cg)}") from None
        ctx = context(EXPERIMENT[cfg.pattern], cfg, bytes_per_process, meta)
        write_text, _, rest = out.partition("written\n")
        read_text = rest.partition("read\n")[0]
        write_phase = _delta_rows(snaps["start"], snaps["written"], ctx, WRITE_VMSTAT, WRITE_MTHP)
        write_phase = [d.assign(metric="write_" + d["metric"]) for d in write_phase if len(d)]
        parts = [parse.usemem(write_text, **ctx), readback(read_text, **ctx), parse.time_output(out, **ctx),
                 *_delta_rows(snaps["written"], snaps["read"], ctx, VMSTAT, MTHP),
                 memcg_delta(snaps["written"]["memcg"], snaps["read"]["memcg"], **ctx), *write_phase]
        return finish([p for p in parts if len(p)], peaks, ctx, cfg, run_id, meta, loads["after"], started)


def _oom_kills(cg: Path) -> str:
    """How many tasks the memcg's OOM killer killed (v1 memory.oom_control, v2 memory.events), as a clause."""
    for name in ("memory.oom_control", "memory.events"):
        p = cg / name
        if p.is_file():
            m = re.search(r"^oom_kill (\d+)$", p.read_text(), re.M)
            if m and int(m[1]) > 0:
                return (f"; the memcg's OOM killer killed {m[1]} of its tasks ({name}): give the memcg more room "
                        "(memcg_mb) or the processes less (bytes_per_process)")
    return ""


def _no_zswap(m: Machine) -> None:
    p = m.path("/sys/module/zswap/parameters/enabled")
    if p.is_file() and p.read_text().strip() in ("Y", "1"):
        raise MeasureError("zswap is enabled (/sys/module/zswap/parameters/enabled): swap-ins would be zswap "
                           "loads (zswpin), not reads of the zram device, and large folios would not be swapped "
                           "in (alloc_swap_folio() needs zswap never enabled); left as it is, not measured")


def swapin(*, folio_kb=(4, 16, 64, 2048), processes=(1, 2), memcg_mb=(256,), devices=("zram:lzo-rle",),
           bytes_per_process="768M", reps: int = 3, patterns=("seq",), out: str | Path | None = None,
           dry_run: bool = False, root: str | Path = "/", progress: bool = True, seed: int = 0,
           machine: Machine | None = None, journal: str | Path | None = None, allow_busy: bool = False,
           profile: str | Path | None = None) -> pd.DataFrame:
    """Run the swap-in matrix (folio sizes x processes x memcg limits x devices x
    read-back patterns, ``reps`` times); returns (and appends to ``out``) the
    tidy rows. See the module docstring; the other arguments are
    :func:`mmcost.measure.swapout`'s.

    Refused, naming the field, before the machine is touched: a device other
    than zram (``devices``: only a SWP_SYNCHRONOUS_IO device swaps in inside
    the fault, folio by folio), a pattern other than seq/rand (``patterns``),
    and memory that fits in the memcg (``bytes_per_process``: nothing would be
    swapped out, nothing read back from swap)."""
    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    if not patterns or any(p not in PATTERNS for p in patterns):
        raise ValueError(f"patterns: {patterns!r}: each read-back order must be one of {list(PATTERNS)}")
    devices = [devices] if isinstance(devices, str) else list(devices)
    for d in devices:
        if not re.fullmatch(r"zram(?::[a-z0-9][a-z0-9_-]*)?", str(d)):
            raise ValueError(f"devices: {d!r} cannot be measured for swap-in: only a zram device of the run's own "
                             "(zram or zram:<compressor>) swaps in synchronously (SWP_SYNCHRONOUS_IO), where "
                             "large folios can come back whole")
    kbs, processes, limits, devices, nbytes, reps = checked(folio_kb, processes, memcg_mb, devices,
                                                            bytes_per_process, reps)
    if min(processes) * nbytes <= 1.25 * max(limits) * 2**20:
        raise ValueError(f"bytes_per_process: {min(processes)} x {nbytes} bytes fit within 1.25 x the "
                         f"{max(limits)} MiB memcg: too little would be swapped out to read back")
    m = machine or Machine(root=root, dry_run=dry_run)
    runs = matrix(kbs, processes, limits, devices, reps, seed, patterns=patterns)
    zram_bytes = int(max(4 * 2**30, 1.25 * max(processes) * nbytes))

    def body(cfg, meta, invocation):
        return one_run(m, cfg, nbytes, zram_bytes=zram_bytes, meta=meta, invocation=invocation)

    return run_matrix(m, runs, body, kbs=kbs, bytes_needed=max(processes) * nbytes + zram_bytes / 2, out=out,
                      progress=progress, journal=journal, allow_busy=allow_busy, profile=profile,
                      desc="swap-in runs", check=_no_zswap)
