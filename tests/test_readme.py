"""Every code block of the README runs verbatim: the ```python blocks here, in
order, from the repository root; the ```sh blocks here in a scratch folder
(with the bundled ``data/`` beside them), or, for the set-up commands, the docs build, the wheel repair and the
C++ unit tests, by ``.ci/run`` itself, which this file checks."""

import os
import re
import shlex
import subprocess
from pathlib import Path

import matplotlib
import pytest

from test_report_plot import email_problems

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
SH_BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def commands(block: str) -> list[str]:
    """A shell block's commands: continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()]


def is_set_up(block: str) -> bool:
    return "python3 -m venv" in block


def is_core_tests(block: str) -> bool:
    return "ctest" in block


def is_ci_stage(block: str) -> bool:
    """The docs build and the wheel repair: stages of .ci/run, too slow to run twice."""
    return "sphinx-build" in block or "auditwheel" in block


RUN_HERE = [b for b in SH_BLOCKS if not is_set_up(b) and not is_core_tests(b) and not is_ci_stage(b)]
CI_STAGES = [b for b in SH_BLOCKS if is_ci_stage(b)]


def test_the_readme_has_code():
    assert len(BLOCKS) >= 5 and len(RUN_HERE) >= 3


def test_the_readme_starts_with_the_set_up_and_ci_runs_it():
    first = SH_BLOCKS[0]
    assert is_set_up(first) and README.index(first) < README.index("mmcost reproduce")
    ci = [line.strip() for line in CI.splitlines()]
    for cmd in commands(first)[1:]:  # CI makes its own venv (in a temporary folder)
        assert cmd in ci, f"README's {cmd!r} is not what .ci/run runs"
    assert ci[-8:].count("python -m pytest") == 1  # the README's test command, last


def test_the_core_tests_block_is_ci_s_sanitizer_stage():
    block = next(b for b in SH_BLOCKS if is_core_tests(b))
    for word in ("-DMMCOST_PYTHON=OFF", "-DMMCOST_TESTS=ON", "-DMMCOST_SANITIZE=ON", "ctest", "--test-dir",
                 "cmeel-eigen"):
        assert word in block and word in CI, word


def test_the_docs_and_wheel_blocks_are_ci_stages():
    assert len(CI_STAGES) == 2
    ci = [line.strip() for line in CI.splitlines()]
    for block in CI_STAGES:
        for cmd in commands(block):
            assert cmd in ci, f"README's {cmd!r} is not what .ci/run runs"


@pytest.mark.parametrize("block", RUN_HERE, ids=[commands(b)[0][:40] for b in RUN_HERE])
def test_readme_shell_block_runs_verbatim(block, tmp_path):
    if "measure swapout" in block and os.geteuid() != 0:
        pytest.skip("mmcost measure swapout checks its controls as root, even for --dry-run")
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # a cold cache, as on a fresh machine
    for cmd in commands(block):
        # no timeout: a slow machine is not a failure
        r = subprocess.run(shlex.split(cmd), cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert r.returncode == 0, f"{cmd}\n{r.stderr[-2000:]}"
        if "--dry-run" in cmd:
            assert "would" in r.stdout and not (tmp_path / "runs.csv").exists()
    if "reproduce" in block:  # the main job's report: ready to paste into an email
        text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
        assert email_problems(text) == []
        assert "[1] " in text and not re.search(r"prior [^\n]*:", text)  # prior sources as notes
        # the structural error the package ships is what this build's leave-one-source-out estimates
        from mmcost.corpus import discrepancy
        from mmcost.corpus.discrepancy import tomllib

        fresh = tomllib.loads((tmp_path / "out" / discrepancy.TABLE).read_text(encoding="utf-8"))["tau"]
        assert fresh == pytest.approx(discrepancy.shipped(), rel=0.02), "data/structural_error.toml is stale"
        assert "leave one source out" in text and (tmp_path / "out" / "calibration.png").stat().st_size > 10_000
        assert "not yet known" not in text  # every source that misses says where its misses point (Study.miss)
    if "--figure" in block:
        assert (tmp_path / "verify.png").stat().st_size > 10_000


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    import warnings

    from mmcost.fit import NotIdentifiableWarning, PoorFitWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)  # a block may print the warning it shows
        warnings.simplefilter("ignore", PoorFitWarning)
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
