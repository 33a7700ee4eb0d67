"""The kernel controls a swap-out run touches, each change recorded and undone.

:class:`Machine` reads and writes sysfs, cgroup and procfs files under a root
(``/`` on a real machine, a temporary folder in the tests) and runs the few
commands a run needs (``mkswap``, ``swapon``, ``swapoff``) through a runner
that tests can replace. Every file it writes has its old value recorded
before the first write, every memcg and zram device it creates is listed,
and :meth:`Machine.restore` puts everything back in reverse order. It never
writes to a memcg or a zram device it did not create. With ``dry_run`` it
prints each change instead of making it.

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
    #: (path, old value) in the order first written
    recorded: list = field(default_factory=list)
    #: ("memcg", path) / ("zram", id) / ("swapon", device), in the order created
    created: list = field(default_factory=list)

    def __post_init__(self):
        self.root = Path(self.root)
        self._next_fake_zram = 900  # dry run: the id a hot_add would return

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
    def check(self, folio_kb: list[int], bytes_needed: float, require_root: bool = True) -> None:
        """Refuse, naming why, when the machine cannot run the matrix."""
        if require_root and not self.dry_run and os.geteuid() != 0:
            raise MeasureError("mmcost measure changes sysfs, cgroup and swap settings: run it as root "
                               "(or with --dry-run to see the changes)")
        have = self.mthp_sizes()
        missing = [kb for kb in folio_kb if kb != 4 and kb not in have]
        if missing:
            raise MeasureError(f"folio sizes {missing} KiB have no hugepages-<size>kB/enabled control on this "
                               f"kernel (it has {have})")
        if not self.path("/sys/class/zram-control/hot_add").exists():
            raise MeasureError("no /sys/class/zram-control: load the zram module (modprobe zram)")
        self.memcg_root()
        avail = self.meminfo_kb().get("MemAvailable")
        if avail is not None and bytes_needed > 0.8 * avail * 1024:
            raise MeasureError(f"the run needs {bytes_needed / 2**30:.1f} GiB (writers + zram) but only "
                               f"{avail / 2**20:.1f} GiB is available (MemAvailable, 80% usable)")

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
        if record and not any(q == p for q, _ in self.recorded):
            old = self.read(p)
            self.recorded.append((p, selected(old) if "[" in old else old))
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
        cg.mkdir()
        self.created.append(("memcg", cg))
        (cg / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text(str(int(limit_mb * 2**20)))
        return cg

    def make_zram(self, compressor: str, disksize: int) -> int:
        """A zram device of this run's own, with ``compressor``, as swap of priority 100."""
        if self.dry_run:
            zid = self._next_fake_zram
            self._next_fake_zram += 1
            self.log(f"would hot-add zram{zid} ({compressor}, {disksize / 2**30:g} GiB) and swapon it")
            return zid
        zid = int(self.read(self.path("/sys/class/zram-control/hot_add")))
        self.created.append(("zram", zid))
        dev = self.path(f"/sys/block/zram{zid}")
        algos = self.read(dev / "comp_algorithm")
        if compressor not in algos.replace("[", " ").replace("]", " ").split():
            raise MeasureError(f"compressor {compressor!r} is not offered by this kernel's zram ({algos})")
        (dev / "comp_algorithm").write_text(compressor)
        (dev / "disksize").write_text(str(int(disksize)))
        self.run(["mkswap", f"/dev/zram{zid}"], check=True, capture_output=True)
        self.run(["swapon", "-p", "100", f"/dev/zram{zid}"], check=True, capture_output=True)
        self.created.append(("swapon", f"/dev/zram{zid}"))
        return zid

    def drop(self, kind: str, what) -> None:
        """Undo one created thing (swapoff, zram reset + hot_remove, memcg rmdir)."""
        if kind == "swapon":
            self.run(["swapoff", str(what)], check=False, capture_output=True)
        elif kind == "zram":
            dev = self.path(f"/sys/block/zram{what}")
            if (dev / "reset").exists():
                (dev / "reset").write_text("1")
            self.path("/sys/class/zram-control/hot_remove").write_text(str(what))
        elif kind == "memcg":
            cg = Path(what)
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
        self.created = [c for c in self.created if c != (kind, what)]

    def _rmdir(self, path: Path) -> None:
        """Remove a cgroup (on cgroupfs, rmdir of a folder that still lists its control files)."""
        path.rmdir()

    def restore(self) -> None:
        """Undo everything, newest first; every recorded file gets its old value back."""
        for kind, what in list(reversed(self.created)):
            self.drop(kind, what)
        for p, old in reversed(self.recorded):
            if not self.dry_run:
                p.write_text(old)
        self.recorded.clear()
