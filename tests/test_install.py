"""The installed package works from any directory: import, data, console script."""

import subprocess
import sys
from pathlib import Path

import mmcost


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_import_and_data_from_another_directory(tmp_path):
    code = "import mmcost, mmcost.queueing; print(mmcost.__file__); print(','.join(mmcost.datasets.names()))"
    r = run([sys.executable, "-c", code], tmp_path)
    assert r.returncode == 0, r.stderr
    where, names = r.stdout.split()
    assert set(names.split(",")) >= {"small_thp_swapout", "migrc_tlb", "swap_alloc_locks", "swapcache_wb_tags"}
    assert not Path(where).is_relative_to(tmp_path)


def test_data_files_ship_inside_a_regular_install():
    pkg = Path(mmcost.__file__).parent
    if "site-packages" not in pkg.parts:  # editable/dev install: data stays in the checkout
        return
    for name in mmcost.datasets.names():
        assert (pkg / "data" / name / "measurements.csv").is_file()
        assert (pkg / "data" / name / "source.toml").is_file()


def test_console_script_help_and_reproduce(tmp_path):
    exe = Path(sys.executable).parent / "mmcost"
    r = run([str(exe), "--help"], tmp_path)
    assert r.returncode == 0 and "reproduce" in r.stdout
    r = run([str(exe), "reproduce", "--out", str(tmp_path / "out")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "small_thp_swapout" in (tmp_path / "out" / "report.md").read_text()
