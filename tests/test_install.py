"""The installed package works from any directory: import, data, console script."""

import subprocess
import sys
from pathlib import Path

import mmcost


def run(args, cwd):
    # no timeout: a slow machine is not a failure (the whole `mmcost reproduce` runs in the notebooks' place)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)


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
    assert r.returncode == 0 and "reproduce" in r.stdout and "measure" in r.stdout
    cmd = [str(exe), "reproduce", "--only", "swapcache_wb_tags", "--cache", str(tmp_path / "cache")]
    r = run([*cmd, "--out", str(tmp_path / "out")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1  # one line: where the report went, not the report
    text = (tmp_path / "out" / "report.md").read_text()
    assert "## swapcache_wb_tags" in text and "## held out" in text
    r = run([*cmd, "--out", str(tmp_path / "again")], tmp_path)  # from the cache
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "again" / "report.md").read_text() == text
    r = run([str(exe), "reproduce", "--only", "no_such_study", "--no-cache", "--out", str(tmp_path / "x")], tmp_path)
    assert r.returncode == 2 and "no_such_study" in r.stderr and "Traceback" not in r.stderr
    r = run([*cmd, "--out", str(tmp_path / "again")], tmp_path)  # a report is there already
    assert r.returncode == 2 and "--force" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "again" / "report.md").read_text() == text  # untouched
    r = run([*cmd, "--out", str(tmp_path / "again"), "--force"], tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "a_file").write_text("x")
    r = run([*cmd, "--out", str(tmp_path / "a_file")], tmp_path)
    assert r.returncode == 2 and "is a file" in r.stderr and r.stderr.count("\n") == 1
    r = run([sys.executable, "-m", "mmcost", "--help"], tmp_path)
    assert r.returncode == 0 and "reproduce" in r.stdout


def test_the_swapout_writer_ships_with_the_package():
    from mmcost.measure.swapout_runs import writer_path

    assert writer_path().is_file()
