"""Every bad invocation of ``mmcost`` ends in one line naming the bad
argument and exit status 2, before any study runs or the machine is touched."""

import os
import subprocess
import sys
from unittest import mock

import pytest

from mmcost.cli import main


def _must_not_run(*args, **kwargs):
    raise AssertionError("a bad invocation got past the checks")


@pytest.fixture
def folders(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "report.md").write_text("old\n")
    runs = tmp_path / "runs.csv"
    runs.write_text("run,folio_kb,processes,metric,value\nr1,64,1,swapout_kib_s,1000\n")
    return dict(tmp=str(tmp_path), full=str(full), file=str(full / "report.md"), runs=str(runs),
                empty=str(tmp_path / "empty.csv"), nodir=str(tmp_path / "no" / "such"))


SW = ["measure", "swapout", "--dry-run"]
BAD = [
    # (argv, the option the line must name); {x} are the fixture's paths
    (["reproduce", "--jobs", "0"], "--jobs"),
    (["reproduce", "--jobs", "-3"], "--jobs"),
    (["reproduce", "--jobs", "nan"], "--jobs"),
    (["reproduce", "--jobs", "two"], "--jobs"),
    (["reproduce", "--dpi", "-1"], "--dpi"),
    (["reproduce", "--dpi", "0"], "--dpi"),
    (["reproduce", "--dpi", "1e9"], "--dpi"),
    (["reproduce", "--dpi", "inf"], "--dpi"),
    (["reproduce", "--only", "no_such_study"], "--only"),
    (["reproduce", "--only", ""], "--only"),
    (["reproduce", "--out", "{full}"], "--out"),
    (["reproduce", "--out", "{file}"], "--out"),
    (["reproduce", "--out", ""], "--out"),
    (["reproduce", "--cache", "{file}"], "--cache"),
    (["reproduce", "--cache", ""], "--cache"),
    (["reproduce", "--no-cache", "--cache", "{tmp}"], "--cache"),
    (["reproduce", "--nosuch"], "--nosuch"),
    ([*SW, "--processes", "0"], "--processes"),
    ([*SW, "--processes", "-1"], "--processes"),
    ([*SW, "--processes", "1,x"], "--processes"),
    ([*SW, "--processes", ""], "--processes"),
    ([*SW, "--processes", "1e9"], "--processes"),
    ([*SW, "--bytes", "0"], "--bytes"),
    ([*SW, "--bytes", "garbage"], "--bytes"),
    ([*SW, "--bytes", "nan"], "--bytes"),
    ([*SW, "--bytes", "100"], "--bytes"),
    ([*SW, "--bytes", "-5M"], "--bytes"),
    ([*SW, "--memcg", "0"], "--memcg"),
    ([*SW, "--memcg", "12Q"], "--memcg"),
    ([*SW, "--memcg", "512K"], "--memcg"),
    ([*SW, "--folio", "3K"], "--folio"),
    ([*SW, "--folio", "0"], "--folio"),
    ([*SW, "--folio", "x"], "--folio"),
    ([*SW, "--folio", ""], "--folio"),
    ([*SW, "--device", "nvme"], "--device"),
    ([*SW, "--device", "zram:"], "--device"),
    ([*SW, "--reps", "0"], "--reps"),
    ([*SW, "--reps", "x"], "--reps"),
    ([*SW, "--seed", "-1"], "--seed"),
    ([*SW, "--seed", "1.5"], "--seed"),
    ([*SW, "--usemem", "{nodir}"], "--usemem"),
    ([*SW, "--out", "{tmp}"], "--out"),
    ([*SW, "--out", "{nodir}/runs.csv"], "--out"),
    ([*SW, "--out", ""], "--out"),
    (["measure", "verify", "--runs", "{nodir}"], "--runs"),
    (["measure", "verify", "--runs", "{tmp}"], "--runs"),
    (["measure", "verify", "--runs", "{file}"], "--runs"),
    (["measure", "verify", "--runs", "{runs}", "--fit", "((("], "--fit"),
    (["measure", "verify", "--runs", "{runs}", "--fit", "no_such_column == 1"], "--fit"),
    (["measure", "verify", "--runs", "{runs}", "--figure", "{nodir}/f.png"], "--figure"),
    (["measure", "verify", "--runs", "{runs}", "--figure", "{tmp}/f.txt"], "--figure"),
    (["measure", "nosuch"], "what"),
    (["nosuch"], "command"),
    ([], "command"),
]


@pytest.mark.parametrize("argv,option", BAD, ids=[" ".join(a) or "(none)" for a, _ in BAD])
def test_bad_invocation_is_one_line_and_exit_2(argv, option, folders, capsys):
    argv = [a.format(**folders) for a in argv]
    with mock.patch("mmcost.measure.swapout", _must_not_run), mock.patch("mmcost.reproduce.run", _must_not_run), \
            mock.patch("mmcost.measure.verify", _must_not_run):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert option in lines[0] and "error" in lines[0]


def test_bad_invocation_from_the_shell(tmp_path):
    """``python -m mmcost``: the same one line and status 2 from a real process."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    res = subprocess.run([sys.executable, "-m", "mmcost", "reproduce", "--jobs", "0", "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and "--jobs" in res.stderr and "Traceback" not in res.stderr
