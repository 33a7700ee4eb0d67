"""Every notebook under notebooks/ is stored executed, and re-executes to the
same numbers: each code cell's text outputs (stdout, text/plain) must read the
same with every number within a relative 1e-3 (absolute 1e-9) of the stored
one, and every stored figure must come out again. Re-store them with
``python notebooks/execute.py``."""

import math
import re
import sys
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: the stated tolerance of a stored number
RTOL, ATOL = 1e-3, 1e-9

sys.path.insert(0, str(HERE))
from execute import execute  # noqa: E402


def texts(cell) -> list[str]:
    """A cell's text outputs; consecutive stdout chunks are one text, because
    how the kernel splits a stream into messages depends on timing."""
    out = []
    stream = False
    for o in cell.get("outputs", []):
        if o.output_type == "stream" and o.name == "stdout":
            if stream:
                out[-1] += o.text
            else:
                out.append(o.text)
            stream = True
            continue
        stream = False
        if o.output_type in ("execute_result", "display_data") and "text/plain" in o.data \
                and "image/png" not in o.data:
            out.append(o.data["text/plain"])
    return out


def images(cell) -> int:
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def numbers_agree(stored: str, fresh: str) -> bool:
    if NUMBER.sub("#", stored) != NUMBER.sub("#", fresh):
        return False
    return all(math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=ATOL)
               for a, b in zip(NUMBER.findall(stored), NUMBER.findall(fresh)))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_executed_and_reexecutes_to_its_numbers(path):
    stored = nbformat.read(path, as_version=4)
    code = [c for c in stored.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code), f"{path.name}: stored without outputs (python notebooks/execute.py)"
    assert not any("matplotlib.use(" in c.source for c in code), f"{path.name} forces a backend"
    fresh = [c for c in execute(path).cells if c.cell_type == "code"]
    for i, (old, new) in enumerate(zip(code, fresh)):
        assert images(new) == images(old), f"{path.name} cell {i}: {images(new)} figures, {images(old)} stored"
        for a, b in zip(texts(old), texts(new), strict=True):
            assert numbers_agree(a, b), f"{path.name} cell {i} changed:\n--- stored\n{a}\n--- now\n{b}"


def test_a_stream_split_differently_reads_the_same():
    one = nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", name="stdout", text="a 1\nb 2\n")])
    two = nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", name="stdout", text="a 1\n"),
                                             nbformat.v4.new_output("stream", name="stdout", text="b 2\n")])
    assert texts(one) == texts(two) == ["a 1\nb 2\n"]


def test_numbers_agree_within_the_stated_tolerance_only():
    assert numbers_agree("chi2 = 1.2345, 7 points", "chi2 = 1.2346, 7 points")
    assert not numbers_agree("chi2 = 1.2345", "chi2 = 1.3")
    assert not numbers_agree("sigma 0.5", "kappa 0.5")
