"""The kernel controls a measurement touches, each change recorded and undone.

:class:`Machine` reads and writes sysfs, cgroup and procfs files under a root
(``/`` on a real machine, a temporary folder in the tests) and runs the few
commands a run needs (``mkswap``, ``swapon``, ``swapoff``) through a runner
that tests can replace. Every file it writes has its old value recorded
before the first write, every memcg and zram device it creates is listed,
and :meth:`Machine.restore` puts everything back in reverse order. It never
writes to a memcg or a zram device it did not create. With ``dry_run`` it
prints each change instead of making it. With a :class:`~mmcost.measure.journal.Journal`
each change is also written to disk (and fsync'd) before it is made, and each
undo after it is made, so that a run killed by SIGKILL can be restored by the
next one or by ``mmcost measure restore`` (:func:`restore`).

Controls (Documentation/admin-guide/mm/transhuge.rst, blockdev/zram.rst,
cgroup-v1/memory.rst and cgroup-v2.rst):

- ``/sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/enabled``;
- ``/sys/class/zram-control/hot_add`` / ``hot_remove``, ``/sys/block/zramN/
  {comp_algorithm, disksize, reset, mm_stat}``;
- the memory controller: cgroup v2 (``memory.max``) where it is enabled,
  else v1 (``/sys/fs/cgroup/memory``, ``memory.limit_in_bytes``).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


def vmstat(root: str | Path = "/") -> dict[str, int]:
    """/proc/vmstat as name -> value."""
    text = (Path(root) / "proc/vmstat").read_text()
    return {k: int(v) for k, v in (line.split() for line in text.splitlines())}


def kernel_release(root: str | Path = "/") -> str:
    """The running kernel's release string (uname -r)."""
    return (Path(root) / "proc/sys/kernel/osrelease").read_text().strip()


def compile_helper(source: str | Path, *flags: str) -> Path:
    """Build a measurement's C helper (``cc -O2 -Wall``) into /tmp; its path."""
    source = Path(source)
    exe = Path("/tmp") / f"mmcost_{source.stem}"
    subprocess.run(["cc", "-O2", "-Wall", *flags, "-o", str(exe), str(source)], check=True)
    return exe


def shuffled_runs(reps: int, configs, seed: int = 0) -> list[tuple]:
    """(rep, config) in repetition-major order, the configurations of every
    repetition in one fixed shuffled order (``random.Random(seed)``)."""
    import random

    configs = list(configs)
    return [(rep, c) for rep in range(reps) for c in random.Random(seed).sample(configs, len(configs))]


def wait_zram_below(zid: int, limit_bytes: int, root: str | Path = "/", poll_s: float = 0.2) -> None:
    """Wait until zram device ``zid`` stores under ``limit_bytes`` (mm_stat's
    orig_data_size): the previous run's objects are gone before the next starts."""
    stat = Path(root) / f"sys/block/zram{zid}/mm_stat"
    while int((stat.read_text().split() or ["0"])[0]) > limit_bytes:
        time.sleep(poll_s)


class MeasureError(RuntimeError):
    """The machine cannot run the measurement (not root, a control missing, not enough memory)."""


def selected(text: str) -> str:
    """The bracketed choice of a sysfs selector: 'always [madvise] never' -> 'madvise'."""
    m = re.search(r"\[([^\]]+)\]", text)
    if not m:
        raise MeasureError(f"not a sysfs selector: {text!r}")
    return m.group(1)


@dataclass
class Machine:
    root: Path = Path("/")
    dry_run: bool = False
    run: object = subprocess.run
    log: object = print
    #: starts a command that the caller talks to (swap-in's writer waits for a line between phases)
    popen: object = subprocess.Popen
    #: (path, old value) in the order first written
    recorded: list = field(default_factory=list)
    #: ("memcg", path) / ("zram", id) / ("swapon", device), in the order created
    created: list = field(default_factory=list)
    #: the write-ahead record on disk (None: changes are kept in memory only)
    journal: object = None

    def __post_init__(self):
        self.root = Path(self.root)
        self._next_fake_zram = 900  # dry run: the id a hot_add would return
        self._last_written: dict[Path, str] = {}  # path -> the value this run wrote last
        self._zram_disksize: dict[int, int] = {}  # zram id -> the disk size this run gave it

    def _journal(self, **entry) -> None:
        if self.journal is not None and not self.dry_run:
            self.journal.record(**entry)

    # --- paths ------------------------------------------------------------------------------
    def path(self, p: str) -> Path:
        return self.root / p.lstrip("/")

    @property
    def thp(self) -> Path:
        return self.path("/sys/kernel/mm/transparent_hugepage")

    def mthp_sizes(self) -> list[int]:
        """Folio sizes (KiB) with an anonymous ``enabled`` control."""
        out = []
        for d in self.thp.glob("hugepages-*kB"):
            if (d / "enabled").is_file():
                out.append(int(d.name.removeprefix("hugepages-").removesuffix("kB")))
        return sorted(out)

    def memcg_root(self) -> tuple[Path, int]:
        """(folder, cgroup version) of the memory controller."""
        v2 = self.path("/sys/fs/cgroup/cgroup.controllers")
        if v2.is_file() and "memory" in v2.read_text().split():
            return self.path("/sys/fs/cgroup"), 2
        v1 = self.path("/sys/fs/cgroup/memory")
        if (v1 / "memory.limit_in_bytes").is_file():
            return v1, 1
        raise MeasureError("no memory controller: neither cgroup v2 'memory' in cgroup.controllers nor "
                           "/sys/fs/cgroup/memory (v1)")

    # --- checks ------------------------------------------------------------------------------
    def check_root(self) -> None:
        if not self.dry_run and os.geteuid() != 0:
            raise MeasureError("mmcost measure changes sysfs, cgroup and swap settings: run it as root "
                               "(or with --dry-run to see the changes)")

    def check(self, folio_kb: list[int], bytes_needed: float, require_root: bool = True,
              compressors: list[str] = ()) -> None:
        """Refuse, naming why, when the machine cannot run the matrix."""
        if require_root:
            self.check_root()
        have = self.mthp_sizes()
        missing = [kb for kb in folio_kb if kb != 4 and kb not in have]
        if missing:
            raise MeasureError(f"folio sizes {missing} KiB have no hugepages-<size>kB/enabled control on this "
                               f"kernel (it has {have})")
        if not self.path("/sys/class/zram-control/hot_add").exists():
            raise MeasureError("no /sys/class/zram-control: load the zram module (modprobe zram)")
        self.memcg_root()
        offered = self.compressors()
        if offered is not None:
            missing = [c for c in compressors if c not in offered]
            if missing:
                raise MeasureError(f"compressor(s) {missing} are not offered by this kernel's zram "
                                   f"({' '.join(offered)})")
        avail = self.meminfo_kb().get("MemAvailable")
        if avail is not None and bytes_needed > 0.8 * avail * 1024:
            raise MeasureError(f"the run needs {bytes_needed / 2**30:.1f} GiB (writers + zram) but only "
                               f"{avail / 2**20:.1f} GiB is available (MemAvailable, 80% usable)")

    def compressors(self) -> list[str] | None:
        """The algorithms zram offers (any device's comp_algorithm lists them all), or
        None when no zram device exists to ask."""
        for p in sorted(self.path("/sys/block").glob("zram*/comp_algorithm")):
            try:
                return p.read_text().replace("[", " ").replace("]", " ").split()
            except OSError:
                continue
        return None

    def meminfo_kb(self) -> dict[str, int]:
        p = self.path("/proc/meminfo")
        if not p.is_file():
            return {}
        out = {}
        for line in p.read_text().splitlines():
            m = re.match(r"(\w+):\s+(\d+)", line)
            if m:
                out[m.group(1)] = int(m.group(2))
        return out

    # --- changes -----------------------------------------------------------------------------
    def read(self, p: Path) -> str:
        return Path(p).read_text().strip()

    def write(self, p: Path, value: str, record: bool = True) -> None:
        p = Path(p)
        if record:
            old = next((o for q, o in self.recorded if q == p), None)
            if old is None:
                text = self.read(p)
                old = selected(text) if "[" in text else text
                self.recorded.append((p, old))
            self._journal(op="write", path=str(p), old=old, new=str(value))
            self._last_written[p] = str(value)
        if self.dry_run:
            self.log(f"would write {value!r} to {p}")
            return
        p.write_text(str(value))

    def command(self, *args: str) -> None:
        if self.dry_run:
            self.log("would run " + " ".join(args))
            return
        self.run(list(args), check=True, capture_output=True)

    def set_mthp(self, folio_kb: int) -> None:
        """Only ``folio_kb`` is ``always``; every other size ``never`` (4K: all never)."""
        for kb in self.mthp_sizes():
            self.write(self.thp / f"hugepages-{kb}kB" / "enabled", "always" if kb == folio_kb else "never")

    def make_memcg(self, name: str, limit_mb: float) -> Path:
        root, version = self.memcg_root()
        cg = root / name
        if self.dry_run:
            self.log(f"would create memcg {cg} with limit {limit_mb:g} MiB")
            return cg
        self._journal(op="create", kind="memcg", what=str(cg))
        cg.mkdir()
        self.created.append(("memcg", cg))
        (cg / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text(str(int(limit_mb * 2**20)))
        return cg

    def make_zram(self, compressor: str, disksize: int, swap: bool = True) -> int:
        """A zram device of this run's own, with ``compressor``, as swap of priority 100
        (``swap=False``: a block device only, as ``measure machine`` writes to it)."""
        if self.dry_run:
            zid = self._next_fake_zram
            self._next_fake_zram += 1
            self.log(f"would hot-add zram{zid} ({compressor}, {disksize / 2**30:g} GiB)"
                     + (" and swapon it" if swap else ""))
            return zid
        # reading hot_add creates the device (hot_add_show(), zram_drv.c, v4.2): its number is known only
        # after, so the journal says first that one may exist
        self._journal(op="hot_add", compressor=compressor, disksize=int(disksize))
        zid = int(self.read(self.path("/sys/class/zram-control/hot_add")))
        self._journal(op="create", kind="zram", what=zid, compressor=compressor, disksize=int(disksize))
        self.created.append(("zram", zid))
        self._zram_disksize[zid] = int(disksize)
        dev = self.path(f"/sys/block/zram{zid}")
        algos = self.read(dev / "comp_algorithm")
        if compressor not in algos.replace("[", " ").replace("]", " ").split():
            raise MeasureError(f"compressor {compressor!r} is not offered by this kernel's zram ({algos})")
        (dev / "comp_algorithm").write_text(compressor)
        now = self.read(dev / "comp_algorithm")
        if (selected(now) if "[" in now else now) != compressor:  # the device must run what the rows will say
            raise MeasureError(f"zram{zid} reads comp_algorithm {now!r} after {compressor!r} was written")
        (dev / "disksize").write_text(str(int(disksize)))
        if not swap:
            return zid
        self.run(["mkswap", f"/dev/zram{zid}"], check=True, capture_output=True)
        self._journal(op="create", kind="swapon", what=f"/dev/zram{zid}")
        self.created.append(("swapon", f"/dev/zram{zid}"))
        self.run(["swapon", "-p", "100", f"/dev/zram{zid}"], check=True, capture_output=True)
        return zid

    def swapped_on(self, device: str) -> bool:
        swaps = self.path("/proc/swaps")
        lines = swaps.read_text().splitlines()[1:] if swaps.is_file() else []
        return any(line.split()[0] == device for line in lines if line.split())

    def drop(self, kind: str, what) -> str:
        """Undo one created thing (swapoff, zram reset + hot_remove, memcg rmdir); what was done."""
        said = ""
        if kind == "swapon":
            done = self.run(["swapoff", str(what)], check=False, capture_output=True)
            if self.swapped_on(str(what)):
                err = getattr(done, "stderr", b"") or b""
                err = err.decode(errors="replace") if isinstance(err, bytes) else str(err)
                raise MeasureError(f"swapoff {what} failed: {err.strip()}")
            said = f"{what}: swapped off"
        elif kind == "zram":
            dev = self.path(f"/sys/block/zram{what}")
            if not dev.exists():
                said = f"zram{what}: already gone"
            else:
                size = self._zram_disksize.get(int(what))
                now = (dev / "disksize").read_text().strip() if (dev / "disksize").is_file() else "0"
                if size is not None and now not in ("0", str(size)):
                    raise MeasureError(f"zram{what} has disk size {now}, not the {size} this run gave it: it is "
                                       "someone else's now; left alone")
                if (dev / "reset").exists():  # zram_reset_device(); -EBUSY while swapped on
                    (dev / "reset").write_text("1")
                self.path("/sys/class/zram-control/hot_remove").write_text(str(what))  # zram_remove()
                said = f"zram{what}: reset and removed"
        elif kind == "memcg":
            cg = Path(what)
            if not cg.is_dir():
                said = f"memcg {cg}: not there (never made, or already removed)"
                self.created = [c for c in self.created if c != (kind, what)]
                self._journal(op="undone", kind=kind, what=str(what))
                return said
            procs = cg / "cgroup.procs"
            if procs.is_file():
                for pid in procs.read_text().split():
                    try:
                        os.kill(int(pid), 9)
                    except (ProcessLookupError, PermissionError):
                        pass
            for attempt in range(50):  # killed tasks take a moment to leave the cgroup
                try:
                    self._rmdir(cg)
                    break
                except OSError as exc:
                    if attempt == 49:
                        raise MeasureError(f"could not remove the memcg {cg}: {exc}") from None
                    time.sleep(0.1)
            said = f"memcg {cg}: its tasks killed, removed"
        self.created = [c for c in self.created if c != (kind, what)]
        self._journal(op="undone", kind=kind, what=what if kind == "zram" else str(what))
        return said

    def _rmdir(self, path: Path) -> None:
        """Remove a cgroup (on cgroupfs, rmdir of a folder that still lists its control files)."""
        path.rmdir()

    def restore(self, say=None) -> list[str]:
        """Undo everything, newest first; every recorded file gets its old value back.

        Each step is tried even when an earlier one fails; the failures are
        raised together at the end (and stay in the journal, for
        ``mmcost measure restore`` to try again). A file that no longer reads
        what this run wrote last was changed by someone else: it is left, with
        a word. ``say`` gets a line per step. Returns the lines."""
        lines, failed = [], []

        def tell(text):
            lines.append(text)
            if say is not None:
                say(text)

        for kind, what in list(reversed(self.created)):
            try:
                tell(self.drop(kind, what))
            except (OSError, MeasureError, subprocess.SubprocessError) as exc:
                failed.append(f"{kind} {what}: {exc}")
        for p, old in reversed(self.recorded):
            if self.dry_run:
                continue
            try:
                text = self.read(p)
                now = selected(text) if "[" in text else text
                wrote = self._last_written.get(p)
                if wrote is not None and now != wrote:
                    tell(f"{p}: left at {now!r} (this run wrote {wrote!r}; changed by someone else since)")
                elif now == old:
                    tell(f"{p}: {old!r} already")
                else:
                    p.write_text(old)
                    tell(f"{p}: {now!r} -> {old!r}")
                self._journal(op="undone", kind="write", what=str(p))
            except (OSError, MeasureError) as exc:
                failed.append(f"{p}: {exc}")
        self.recorded = [(p, old) for p, old in self.recorded if any(f.startswith(f"{p}:") for f in failed)]
        if failed:
            raise MeasureError("could not restore: " + "; ".join(failed) +
                               (f" (the journal {self.journal.path} keeps them: mmcost measure restore tries again)"
                                if self.journal is not None else ""))
        return lines

    def adopt(self, entries: list[dict]) -> bool:
        """Take over what a journal names as still changed (to :meth:`restore` it);
        True when a zram device was being added and its number was never recorded."""
        from .journal import pending

        created, written, unnumbered = pending(entries)
        for kind, what, entry in created:
            if kind == "zram":
                self.created.append(("zram", int(what)))
                self._zram_disksize[int(what)] = int(entry.get("disksize", 0))
            else:
                self.created.append((kind, Path(what) if kind == "memcg" else str(what)))
        for path, (old, new) in written.items():
            self.recorded.append((Path(path), old))
            self._last_written[Path(path)] = new
        return unnumbered


def recover(m: Machine, journal, entries: list[dict], say=print) -> list[str]:
    """Restore what a dead run's journal names (its lock is held by the caller), saying
    what; then empty the journal. A journal of an earlier boot is dropped: the reboot
    undid its changes."""
    from .journal import Journal, boot_id, pending

    head = Journal.header(entries)
    who = (f"pid {head.get('pid')} (started {head.get('started', '?')}, no longer running)" if head
           else "a run that no longer exists")
    if not any(pending(entries)):
        if entries:
            journal.clear()
        return []
    if head.get("boot_id") and head["boot_id"] != boot_id(m.root):
        say(f"mmcost measure: {journal.path} is from an earlier boot ({who}); a reboot undid its changes: "
            "dropped, nothing restored")
        journal.clear()
        return []
    say(f"mmcost measure: restoring what {who} left changed (journal {journal.path}):")
    m.journal = journal
    unnumbered = m.adopt(entries)
    lines = m.restore(say=lambda line: say(f"  {line}"))
    if unnumbered:
        line = ("  a zram device was being added when it stopped and its number was not recorded: "
                "check zramctl for an unused device (left alone)")
        say(line)
        lines.append(line)
    journal.clear()
    return lines


def restore(*, root: str | Path = "/", journal: str | Path | None = None, dry_run: bool = False,
            say=print, machine: Machine | None = None) -> list[str]:
    """``mmcost measure restore``: undo what a killed ``mmcost measure swapout`` left
    changed, as its journal names it (only that is touched); returns what was
    done. Refuses while a live run holds the journal. ``dry_run`` prints what
    would be restored and changes nothing."""
    from .journal import JOURNAL, Journal, JournalBusy, pending

    m = machine or Machine(root=root, dry_run=dry_run, log=say)
    dry_run = m.dry_run
    j = Journal(journal if journal is not None else m.path(JOURNAL), root=m.root)
    if dry_run:
        entries = j.read()
        if j.held():
            say(f"a live run (pid {Journal.header(entries).get('pid', '?')}) holds {j.path}: restore would refuse "
                "(it restores its own settings when it ends or gets SIGTERM)")
            return []
        created, written, unnumbered = pending(entries)
        if not created and not written and not unnumbered:
            say(f"nothing to restore: {j.path} names no change")
            return []
        lines = [f"would undo {kind} {what}" for kind, what, _ in reversed(created)]
        lines += [f"would write {old!r} back to {p} (if it still reads {new!r})" for p, (old, new) in written.items()]
        for line in lines:
            say(line)
        return lines
    if os.geteuid() != 0:
        raise MeasureError("mmcost measure restore changes sysfs, cgroup and swap settings: run it as root "
                           "(or with --dry-run to see what it would restore)")
    if not j.path.exists():
        say(f"nothing to restore: no journal at {j.path}")
        return []
    try:
        entries = j.acquire()
    except JournalBusy as exc:
        raise MeasureError(str(exc)) from None
    try:
        lines = recover(m, j, entries, say=say)
        if not lines:
            say(f"nothing to restore: {j.path} names no change")
        return lines
    finally:
        j.release()
