"""Execute every notebook here in place and store its outputs.

    python notebooks/execute.py            # all of them
    python notebooks/execute.py NAME ...   # some (file stems)

Outputs are stored so that a reader on a forge sees the numbers and the
figures; tests/test_notebooks.py re-executes each one and fails on an error
or on a stored number that moved (its tolerance is stated there). Runs are
deterministic: every Monte Carlo draw in the notebooks has a fixed seed.
Execution-time metadata is dropped so that a re-run changes only what
changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path) -> nbformat.NotebookNode:
    """``path`` executed from its own folder, without timing metadata."""
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def main(names: list[str]) -> int:
    paths = [HERE / f"{n}.ipynb" for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        nbformat.write(execute(path), path)
        print(f"executed {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
