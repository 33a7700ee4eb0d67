"""Every ```python block of the README runs verbatim, from the repository root, in order."""

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_code():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    import warnings

    from mmcost.fit import NotIdentifiableWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)  # a block may print the warning it shows
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
