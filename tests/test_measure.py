"""mmcost measure: setup and restore against a fake sysfs/cgroup tree (every machine),
the writer's output, verify on measured runs, and a tiny real run where root,
zram and a memory controller exist."""

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import mmcost
from mmcost.measure import Machine, MeasureError, matrix, swapout, verify
from mmcost.measure.swapout_runs import size_bytes, size_kb, writer_path
from mmcost.measure.verify import model_rows

WRITER_OUT = ("67108864 bytes / 150000 usecs = 436906 KB/s\n"
              "real\t0m0.160s\nuser\t0m0.010s\nsys\t0m0.140s\n")


def fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    thp = root / "sys/kernel/mm/transparent_hugepage"
    for kb, state in ((16, "always inherit madvise [never]"), (64, "always inherit [madvise] never"),
                      (2048, "always [inherit] madvise never")):
        d = thp / f"hugepages-{kb}kB"
        (d / "stats").mkdir(parents=True)
        (d / "enabled").write_text(state + "\n")
        for name in ("anon_fault_alloc", "anon_fault_fallback", "swpout", "swpout_fallback"):
            (d / "stats" / name).write_text("0\n")
    (thp / "hugepages-8kB").mkdir()  # a size without an anonymous control (file-only)
    zc = root / "sys/class/zram-control"
    zc.mkdir(parents=True)
    (zc / "hot_add").write_text("7\n")
    (zc / "hot_remove").write_text("")
    z = root / "sys/block/zram7"
    z.mkdir(parents=True)
    for name, text in (("comp_algorithm", "lzo [lzo-rle] lz4 zstd"), ("disksize", "0"), ("reset", ""),
                       ("mm_stat", "0 0 0 0 0 0 0 0 0")):
        (z / name).write_text(text + "\n")
    mem = root / "sys/fs/cgroup/memory"
    mem.mkdir(parents=True)
    (mem / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    proc = root / "proc"
    proc.mkdir()
    (proc / "meminfo").write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    (proc / "vmstat").write_text("pswpout 100\npgfault 1000\n")
    (proc / "interrupts").write_text("           CPU0       CPU1\nTLB:         10         20   TLB shootdowns\n")
    (proc / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
    (proc / "cpuinfo").write_text("model name\t: Test CPU\nflags\t\t: fpu hypervisor\n")
    return root


def state(root: Path) -> dict:
    """What a run may change, as sysfs would show it: each mTHP size's selected mode (a plain file
    holds the written word; sysfs would bracket it), and the memcgs and zram devices present."""
    def mode(p):
        text = p.read_text().strip()
        return text.split("[")[1].split("]")[0] if "[" in text else text
    thp = root / "sys/kernel/mm/transparent_hugepage"
    return dict(mthp={p.parent.name: mode(p) for p in sorted(thp.glob("hugepages-*kB/enabled"))},
                memcgs=sorted(p.name for p in (root / "sys/fs/cgroup/memory").iterdir() if p.is_dir()))


class FakeRunner:
    """mkswap/swapon/swapoff succeed; the writer prints usemem's line and `time`; `fail` raises instead."""

    def __init__(self, fail=None):
        self.commands, self.fail = [], fail

    def __call__(self, args, check=True, capture_output=True, text=False):
        self.commands.append(list(args))
        if args[0] == "sh":
            if self.fail is not None:
                raise self.fail
            return subprocess.CompletedProcess(args, 0, stdout=WRITER_OUT, stderr="")
        return subprocess.CompletedProcess(args, 0, stdout="", stderr="")


def machine(root, runner, **kw):
    m = Machine(root=root, run=runner, log=lambda *a: None, **kw)
    m._rmdir = shutil.rmtree  # a plain folder stands in for cgroupfs
    return m


@pytest.fixture
def no_root_check(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)


def run(root, runner, **kw):
    return swapout(folio_kb=["4K", "64K"], processes=[1], memcg_mb=[32], bytes_per_process="64M", reps=1,
                   progress=False, machine=machine(root, runner, **{k: kw.pop(k) for k in ("dry_run",) if k in kw}),
                   **kw)


def test_every_setting_reads_the_same_afterwards(tmp_path, no_root_check, monkeypatch):
    monkeypatch.setattr("mmcost.measure.swapout_runs.writer_path", lambda: Path("/bin/true"))
    root = fake_root(tmp_path)
    before = state(root)
    runner = FakeRunner()
    rows = run(root, runner)
    assert state(root) == before  # every mTHP size back to its mode, no memcg left behind
    assert (root / "sys/class/zram-control/hot_remove").read_text() == "7"  # its own zram device removed
    assert set(rows["run"]) == {"4k-p1-m32-lzo-rle-r0", "64k-p1-m32-lzo-rle-r0"}
    assert rows.loc[rows["metric"] == "usemem_throughput_kib_s", "value"].tolist() == [436906.0, 436906.0]
    swapons = [c for c in runner.commands if c[0] == "swapon"]
    swapoffs = [c for c in runner.commands if c[0] == "swapoff"]
    assert len(swapons) == len(swapoffs) == 2 and all(c[-1] == "/dev/zram7" for c in swapons + swapoffs)


@pytest.mark.parametrize("fail", [subprocess.CalledProcessError(1, "writer"), KeyboardInterrupt()],
                         ids=["error", "ctrl-c"])
def test_settings_are_restored_on_error_and_ctrl_c(tmp_path, no_root_check, monkeypatch, fail):
    monkeypatch.setattr("mmcost.measure.swapout_runs.writer_path", lambda: Path("/bin/true"))
    root = fake_root(tmp_path)
    before = state(root)
    runner = FakeRunner(fail=fail)
    with pytest.raises(type(fail)):
        run(root, runner)
    assert state(root) == before
    assert (root / "sys/class/zram-control/hot_remove").read_text() == "7"
    assert [c[0] for c in runner.commands].count("swapoff") == 1


def test_dry_run_prints_every_change_and_makes_none(tmp_path):
    root = fake_root(tmp_path)
    before = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
    lines = []
    m = Machine(root=root, dry_run=True, log=lines.append, run=FakeRunner())
    swapout(folio_kb=["64K"], processes=[1], memcg_mb=[32], bytes_per_process="64M", reps=1, progress=False, machine=m)
    assert {p: p.read_text() for p in root.rglob("*") if p.is_file()} == before  # not one byte written
    assert not [p for p in (root / "sys/fs/cgroup/memory").iterdir() if p.is_dir()]
    text = "\n".join(lines)
    assert "would write 'always'" in text and "hugepages-64kB/enabled" in text
    assert "would hot-add zram" in text and "would create memcg" in text and "would run" in text


def test_refusals_name_the_reason(tmp_path, monkeypatch):
    root = fake_root(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(MeasureError, match="root"):
        machine(root, FakeRunner()).check([4], 1)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(MeasureError, match=r"\[32\] KiB"):
        machine(root, FakeRunner()).check([4, 32], 1)
    with pytest.raises(MeasureError, match="available"):
        machine(root, FakeRunner()).check([4], 30 * 2**30)
    shutil.rmtree(root / "sys/class/zram-control")
    with pytest.raises(MeasureError, match="zram"):
        machine(root, FakeRunner()).check([4], 1)


def test_the_matrix_is_repetition_major_and_shuffled():
    runs = matrix([4, 64], [1, 2], [256, 512], ["zram:lzo-rle", "zram:lz4"], reps=3, seed=1)
    assert len(runs) == 48 and [r.rep for r in runs] == sorted(r.rep for r in runs)
    first = [(r.folio_kb, r.processes, r.memcg_mb, r.device) for r in runs[:16]]
    second = [(r.folio_kb, r.processes, r.memcg_mb, r.device) for r in runs[16:32]]
    assert set(first) == set(second) and first != second
    with pytest.raises(ValueError, match="zram"):
        matrix([4], [1], [256], ["nvme0n1"], reps=1)
    assert size_kb("2M") == 2048 and size_kb("64K") == 64 and size_bytes("1536M") == 1536 * 2**20


def test_the_writer_prints_what_usemem_prints():
    out = subprocess.run([str(writer_path()), "2", "4194304"], check=True, capture_output=True, text=True).stdout
    rows = mmcost.parse.usemem(out)  # checks usemem.c's own formula
    assert len(rows[rows["metric"] == "usemem_throughput_kib_s"]) == 2
    assert set(mmcost.parse.time_output(out)["metric"]) == {"real_time_s", "user_time_s", "sys_time_s"}
    bad = subprocess.run([str(writer_path()), "0", "10"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_verify_predicts_the_runs_it_did_not_fit():
    import warnings

    from mmcost.fit import PoorFitWarning

    runs = mmcost.datasets.load("kvm_6_18_usemem")
    rows = model_rows(runs)
    assert set(rows["metric"]) == {"usemem_throughput_kib_s", "tlb_shootdowns_per_swapped_page"}
    with warnings.catch_warnings():  # 5% default sigma: the 1-process fit misses its runs (chi2/dof ~ 9)
        warnings.simplefilter("ignore", PoorFitWarning)
        out = verify(runs, "processes == 1", n_samples=40)
    t = out["table"]
    assert (t["processes"] == 2).all() and {"measured", "best", "lo", "hi", "error_pct", "in_band"} <= set(t.columns)
    ipis = t[t["metric"] == "tlb_shootdowns_per_swapped_page"]
    assert (ipis["error_pct"].abs() < 5).all()  # the real kernel's IPIs per page, never fitted
    assert max(len(line) for line in out["text"].splitlines()) <= 80
    with pytest.raises(ValueError, match="fit_query"):
        verify(runs, "processes > 5")


def _can_measure() -> str:
    if os.geteuid() != 0:
        return "not root"
    if not Path("/sys/class/zram-control/hot_add").exists():
        return "no zram-control"
    try:
        Machine().memcg_root()
    except MeasureError as exc:
        return str(exc)
    return ""


@pytest.mark.skipif(bool(_can_measure()), reason=_can_measure() or "can measure")
def test_a_tiny_real_run_restores_the_machine(tmp_path):
    thp = Path("/sys/kernel/mm/transparent_hugepage")
    def state():
        enabled = {p.parent.name: p.read_text() for p in thp.glob("hugepages-*kB/enabled")}
        cgroups = sorted(p.name for p in Machine().memcg_root()[0].iterdir() if p.is_dir())
        return enabled, Path("/proc/swaps").read_text(), cgroups, sorted(os.listdir("/sys/block"))
    before = state()
    sizes = [kb for kb in (4, 64) if kb == 4 or (thp / f"hugepages-{kb}kB/enabled").exists()]
    rows = swapout(folio_kb=sizes, processes=[1], memcg_mb=[32], bytes_per_process="64M", reps=1, progress=False,
                   out=tmp_path / "runs.csv")
    assert state() == before
    tp = rows[rows["metric"] == "usemem_throughput_kib_s"]
    assert len(tp) == len(sizes) and (tp["value"] > 0).all()
    assert rows.loc[rows["source_name"] == "pswpout", "value"].gt(0).all()  # it did swap
    assert len(pd.read_csv(tmp_path / "runs.csv")) == len(rows)
