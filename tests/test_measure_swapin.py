"""mmcost measure swapin: the phases and restoration on a fake sysfs/cgroup tree, the writer's read-back
output, bad input, and a tiny real run checking a kernel-counter identity (root, zram, a memory controller)."""

import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from mmcost import parse
from mmcost.cli import main
from mmcost.measure import Machine, MeasureError, swapin
from mmcost.measure.swapin_runs import readback
from mmcost.measure.swapout_runs import writer_path
from test_measure import _can_measure, fake_root, machine, state

READBACK_OUT = "readback 67108864 bytes / 200000 usecs = 327680 KB/s swapped 8000 at start 16384 at touch\n"


def writer_text(processes: int) -> list[str]:
    """What mmcost-writer --readback seq prints, in its three parts."""
    return ["67108864 bytes / 150000 usecs = 436906 KB/s\n" * processes + "written\n",
            READBACK_OUT * processes + "read\n",
            "real\t0m0.400s\nuser\t0m0.010s\nsys\t0m0.300s\n"]


class FakeWriter:
    """Stands in for the writer started by Machine.popen: prints its parts, and between them waits for the
    caller's line. Starting it (the write phase) adds 1000 to pswpout and 10 to hugepages-64kB's swpout; the
    first line (the read-back) adds 3000 to pswpin, 500 to pswpout, 100 swpin and 20 swpin_fallback to 64kB,
    and 2900 major faults to the memcg. `fail` (an exception) is raised at the first line instead."""

    def __init__(self, root: Path, fail=None):
        self.root, self.fail, self.started = root, fail, []

    def bump(self, path: Path, name: str, add: int, sep=" "):
        text = path.read_text()
        old = re.search(rf"^{name}{sep}(\d+)$", text, re.M)
        if old is None:
            path.write_text(text + f"{name}{sep}{add}\n")
        else:
            path.write_text(text.replace(old[0], f"{name}{sep}{int(old[1]) + add}"))

    def __call__(self, args, stdin=None, stdout=None, stderr=None, text=False):
        self.started.append(list(args))
        cg = Path(re.search(r'echo \$\$ > "([^"]+)/cgroup.procs"', args[2])[1])
        (cg / "memory.stat").write_text("pgmajfault 5\nswap 0\n")
        vm = self.root / "proc/vmstat"
        stats = self.root / "sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats"
        self.bump(vm, "pswpout", 1000)
        (stats / "swpout").write_text(f"{int((stats / 'swpout').read_text()) + 10}\n")
        parts = writer_text(int(args[4]))
        writer = self
        lines_in = []

        class Stdin:
            def write(self, line):
                lines_in.append(line)
                if len(lines_in) == 1:
                    if writer.fail is not None:
                        raise writer.fail
                    writer.bump(vm, "pswpin", 3000)
                    writer.bump(vm, "pswpout", 500)
                    for name, add in (("swpin", 100), ("swpin_fallback", 20)):
                        (stats / name).write_text(f"{int((stats / name).read_text()) + add}\n")
                    writer.bump(cg / "memory.stat", "pgmajfault", 2900)

            def flush(self):
                pass

            def close(self):
                pass

        class Proc:
            returncode = 0

            def __init__(self):
                self.stdin = Stdin()
                self.stdout = io.StringIO("".join(parts))
                self.stderr = io.StringIO("")

            def wait(self):
                return 0

            def kill(self):
                pass

        return Proc()


def swapin_root(tmp_path: Path) -> Path:
    root = fake_root(tmp_path)
    for d in (root / "sys/kernel/mm/transparent_hugepage").glob("hugepages-*kB/stats"):
        for name in ("swpin", "swpin_fallback", "swpin_fallback_charge"):
            (d / name).write_text("0\n")
    (root / "proc/vmstat").write_text("pswpin 7\npswpout 100\npgfault 1000\npgmajfault 3\n")
    (root / "sys/module/zswap/parameters").mkdir(parents=True)
    (root / "sys/module/zswap/parameters/enabled").write_text("N\n")
    return root


def swapin_machine(root, writer, **kw):
    m = machine(root, lambda args, **_: subprocess.CompletedProcess(args, 0, stdout="", stderr=""), **kw)
    m.popen = writer
    return m


def run_swapin(root, writer, **kw):
    kw = {**dict(folio_kb=["4K", "64K"], processes=[1, 2], memcg_mb=[32], bytes_per_process="64M", reps=1,
                 progress=False), **kw}
    return swapin(machine=swapin_machine(root, writer), **kw)


@pytest.fixture
def as_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr("mmcost.measure.swapout_runs.writer_path", lambda: Path("/bin/true"))


def test_each_phase_gets_its_own_counters_and_every_setting_is_restored(tmp_path, as_root):
    root = swapin_root(tmp_path)
    before = state(root)
    writer = FakeWriter(root)
    rows = run_swapin(root, writer)
    assert state(root) == before  # every mTHP size back to its mode, no memcg left
    assert (root / "sys/class/zram-control/hot_remove").read_text() == "7"
    assert sorted(c[-1] for c in writer.started) == ["seq"] * 4 and all("--readback" in c for c in writer.started)
    assert set(rows["experiment"]) == {"usemem_swapin"} and rows["run"].nunique() == 4

    def one(run_end, metric):
        r = rows[rows["run"].str.endswith(run_end) & (rows["metric"] == metric)]
        return r["value"].tolist(), r["unit"].tolist()

    # the read-back phase's deltas (FakeWriter's first line), the write phase's apart
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "pswpin_count") == ([3000.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "pswpout_count") == ([500.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "write_pswpout_count") == ([1000.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "swpin_count") == ([100.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "swpin_fallback_count") == ([20.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "write_swpout_count") == ([10.0], ["count"])
    assert one("-64k-p1-m32-lzo-rle-seq-r0", "memcg_pgmajfault_count") == ([2900.0], ["count"])
    assert one("-4k-p1-m32-lzo-rle-seq-r0", "swpin_count") == ([], [])  # 4K: no mTHP counter of its own
    # per process: usemem's formula, 67108864 B in 200000 us = 327680 KiB/s; the write phase's line apart
    assert one("-4k-p2-m32-lzo-rle-seq-r0", "swapin_throughput_kib_s") == ([327680.0] * 2, ["KiB/s"] * 2)
    assert one("-4k-p2-m32-lzo-rle-seq-r0", "swapin_time_us") == ([200000.0] * 2, ["us"] * 2)
    assert one("-4k-p2-m32-lzo-rle-seq-r0", "swapped_at_touch_pages") == ([16384.0] * 2, ["pages"] * 2)
    assert one("-4k-p2-m32-lzo-rle-seq-r0", "usemem_throughput_kib_s") == ([436906.0] * 2, ["KiB/s"] * 2)


@pytest.mark.parametrize("fail, raised", [(subprocess.CalledProcessError(1, "writer"), MeasureError),
                                          (KeyboardInterrupt(), KeyboardInterrupt)], ids=["error", "ctrl-c"])
def test_settings_are_restored_when_the_read_back_fails_or_is_interrupted(tmp_path, as_root, fail, raised):
    root = swapin_root(tmp_path)
    before = state(root)
    with pytest.raises(raised):
        run_swapin(root, FakeWriter(root, fail=fail))
    assert state(root) == before
    assert (root / "sys/class/zram-control/hot_remove").read_text() == "7"


def test_a_writer_that_stops_before_reading_back_is_an_error_and_restored(tmp_path, as_root):
    root = swapin_root(tmp_path)
    before = state(root)
    writer = FakeWriter(root)

    def dies(args, **kw):  # a process was OOM-killed while writing: no "written", exit 1
        proc = writer(args, **kw)
        cg = Path(re.search(r'echo \$\$ > "([^"]+)/cgroup.procs"', args[2])[1])
        (cg / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
        proc.stdout, proc.returncode = io.StringIO(""), 1
        proc.stderr = io.StringIO("mmcost-writer: process 12 was killed by signal 9 while writing\n")
        return proc

    with pytest.raises(MeasureError, match=r"run .*-4k-p1-m32-lzo-rle-seq-r0: the writer failed: .*signal 9.*"
                                           r"OOM killer killed 1 .*memcg_mb"):
        run_swapin(root, dies, folio_kb=["4K"], processes=[1])
    assert state(root) == before


@pytest.mark.parametrize("kw, field", [
    (dict(devices=["nvme0n1"]), "devices"),  # a device that cannot swap in synchronously
    (dict(devices=["zram:lz4", "/dev/vdb"]), "devices"),
    (dict(bytes_per_process=0), "bytes_per_process"),
    (dict(bytes_per_process="16M"), "bytes_per_process"),  # fits in the 32M memcg: nothing to read back
    (dict(reps=-1), "reps"),
    (dict(processes=[0]), "processes"),
    (dict(patterns=["zigzag"]), "patterns"),
])
def test_bad_input_is_refused_naming_the_field_before_the_machine_is_touched(tmp_path, as_root, kw, field):
    root = swapin_root(tmp_path)
    files = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=rf"^{field}: "):
        run_swapin(root, FakeWriter(root), **kw)
    assert {p: p.read_text() for p in root.rglob("*") if p.is_file()} == files


def test_zswap_enabled_is_refused_and_nothing_is_left_changed(tmp_path, as_root):
    root = swapin_root(tmp_path)
    (root / "sys/module/zswap/parameters/enabled").write_text("Y\n")
    before = state(root)
    with pytest.raises(MeasureError, match="zswap is enabled"):
        run_swapin(root, FakeWriter(root))
    assert state(root) == before


def test_the_cli_names_the_option(capsys):
    for argv, option in ((["--device", "nvme0n1"], "--device"), (["--bytes", "0"], "--bytes"),
                         (["--pattern", "zig"], "--pattern"), (["--reps", "-1"], "--reps")):
        try:
            code = main(["measure", "swapin", "--dry-run", *argv])
        except SystemExit as exc:  # argparse's own type check
            code = exc.code
        assert code == 2 and f"argument {option}" in capsys.readouterr().err


def test_dry_run_says_what_it_would_run_and_changes_nothing(tmp_path):
    root = swapin_root(tmp_path)
    files = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
    lines = []
    m = Machine(root=root, dry_run=True, log=lines.append)
    swapin(folio_kb=["64K"], processes=[1], memcg_mb=[32], bytes_per_process="64M", reps=1, patterns=["rand"],
           progress=False, machine=m)
    assert {p: p.read_text() for p in root.rglob("*") if p.is_file()} == files
    assert any("--readback rand" in line and "would run" in line for line in lines)


def test_the_read_back_lines_are_parsed_with_units_and_checked():
    rows = readback(READBACK_OUT * 2)
    got = {(r.metric, r.block): (r.value, r.unit) for r in rows.itertuples()}
    assert got[("swapin_throughput_kib_s", 1)] == (327680.0, "KiB/s")  # (67108864 * 1e6 >> 10) // 200000
    assert got[("swapin_bytes", 0)] == (67108864.0, "bytes") and got[("swapin_time_us", 0)] == (200000.0, "us")
    assert got[("swapped_at_start_pages", 0)] == (8000.0, "pages")
    assert got[("swapped_at_touch_pages", 1)] == (16384.0, "pages")
    rand = readback(READBACK_OUT.replace("16384 at touch", "-1 at touch"))
    assert "swapped_at_touch_pages" not in set(rand["metric"])  # random order: not counted
    with pytest.raises(parse.ParseError, match="line 1.*KB/s"):  # a garbled digit breaks usemem's formula
        readback(READBACK_OUT.replace("327680", "327681"))
    with pytest.raises(parse.ParseError, match="not a read-back line"):
        readback("readback 4096 bytes in 3 usecs\n")
    with pytest.raises(parse.ParseError, match="no read-back line"):
        readback("written\nread\n")


@pytest.mark.parametrize("pattern", ["seq", "rand"])
def test_the_writer_reads_back_what_it_wrote(pattern):
    """The built writer: two processes, 4 MiB each; its read-back lines parse (it checks the sum of the
    words it read against the 0, 1, 2, ... it wrote, and fails otherwise)."""
    out = subprocess.run([str(writer_path()), "2", str(4 * 2**20), "--readback", pattern], input="go\ngo\n",
                         check=True, capture_output=True, text=True).stdout
    write, _, rest = out.partition("written\n")
    assert len(parse.usemem(write)) == 6 and "read\n" in rest
    rows = readback(rest)
    assert rows.loc[rows["metric"] == "swapin_bytes", "value"].tolist() == [4.0 * 2**20] * 2
    touch = rows.loc[rows["metric"] == "swapped_at_touch_pages", "value"].tolist()
    assert touch == ([0.0, 0.0] if pattern == "seq" else [])  # nothing swapped outside a memcg
    bad = subprocess.run([str(writer_path()), "1", "4096", "--readback", "backwards"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


# --- a tiny real run: the kernel's counters against the pages read back -------------------------------------


def _real_state():
    thp = Path("/sys/kernel/mm/transparent_hugepage")
    enabled = {p.parent.name: p.read_text() for p in thp.glob("hugepages-*kB/enabled")}
    cgroups = sorted(p.name for p in Machine().memcg_root()[0].iterdir() if p.is_dir())
    return enabled, Path("/proc/swaps").read_text(), cgroups, sorted(os.listdir("/sys/block"))


@pytest.mark.skipif(bool(_can_measure()), reason=_can_measure() or "can measure")
def test_pswpin_counts_the_pages_read_back_that_were_swapped_out(tmp_path):
    """Identity, read-back phase of one process, 96 MiB in a 32 MiB memcg, in order, on this kernel:

        pswpin  =  swapped_at_touch_pages   (within 1% + 256 pages)

    where swapped_at_touch_pages sums, just before each 2 MiB is read, the pages /proc/self/pagemap
    shows swapped (bit 62). Every such page is read from the run's zram device exactly once:
    swap_read_folio() counts PSWPIN per page of the folio it reads (mm/page_io.c), a 64K folio swapped in
    whole counts 16, and the pages of a folio that fell back to order 0 are each faulted in. The
    tolerance: the writers' other pages (stack, libc data, the parent's) share the memcg and are
    swapped out and back too (pswpin above: 27 pages of 24576 in a trial), and a page found in the swap
    cache is not read again (below). The only swap device on is the run's own, and the journal's lock
    keeps other mmcost measure runs out, so nobody else's swap-ins count.

    And per major fault one folio: pswpin = pgmajfault + (16 - 1) x swpin(64K), within the same tolerance.
    """
    if not Path("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled").exists():
        pytest.skip("no 64 KiB mTHP control")
    before = _real_state()
    try:
        rows = swapin(folio_kb=["4K", "64K"], processes=[1], memcg_mb=[32], bytes_per_process="96M", reps=1,
                      progress=False, allow_busy=True)
    except MeasureError as exc:
        if "holds" in str(exc):
            pytest.skip(f"another mmcost measure run holds the journal: {exc}")
        raise
    assert _real_state() == before  # mTHP modes, swap devices, memcgs, zram devices as they were
    for run, r in rows.groupby("run"):
        v = r.groupby("metric")["value"].sum()
        pages = 96 * 2**20 // 4096
        assert v["swapped_at_start_pages"] > pages / 2  # two thirds did not fit: over the limit at the start
        touch, pswpin = v["swapped_at_touch_pages"], v["pswpin_count"]
        tol = 0.01 * touch + 256
        assert touch > pages / 2 and abs(pswpin - touch) <= tol, (run, pswpin, touch)
        assert v["pswpout_count"] > 0  # the read-back pushed other pages out again
        whole = v.get("swpin_count", 0.0)
        assert abs(pswpin - (v["pgmajfault_count"] + 15 * whole)) <= tol, (run, v["pgmajfault_count"], whole)
        if run.split("-")[2] == "64k":
            assert whole > 0  # some 64K folios came back whole from zram


def test_the_writer_ends_when_a_process_dies_before_the_others():
    """A process that dies (here: its mmap of 2^60 bytes fails; on a real run the memcg's OOM killer)
    must not leave the parent waiting for it while its siblings hold the pipe open: it says which
    died and how, kills the rest, and exits non-zero, without printing "written"."""
    r = subprocess.run([str(writer_path()), "2", str(2**60), "--readback", "seq"], input="go\ngo\n",
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and "written" not in r.stdout
    assert re.search(r"process \d+ exited with status 1 while writing", r.stderr)


def test_a_zram_device_that_keeps_another_compressor_is_refused(tmp_path, as_root, monkeypatch):
    """The rows name the compressor: a device whose comp_algorithm still selects another after the write
    (here: it ignores it) stops the run, and everything is restored."""
    root = swapin_root(tmp_path)
    before = state(root)
    real = Machine.read
    monkeypatch.setattr(Machine, "read", lambda self, p: "lzo [lzo-rle] lz4" if Path(p).name == "comp_algorithm"
                        else real(self, p))
    with pytest.raises(MeasureError, match=r"zram7 reads comp_algorithm 'lzo \[lzo-rle\] lz4' after 'lz4'"):
        run_swapin(root, FakeWriter(root), devices=["zram:lz4"])
    assert state(root) == before
