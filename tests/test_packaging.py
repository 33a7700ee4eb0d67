"""The sdist carries everything needed to build (issue 19: it used to lack
core/, python/bindings/ and CMakeLists.txt, so a PyPI release would not
install), with its licence and metadata."""

import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_sdist_carries_the_core_bindings_build_files_and_licence(tmp_path):
    r = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(REPO)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    (sdist,) = tmp_path.glob("mmcost-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith("/PKG-INFO"))).read().decode()
    needed = {"CMakeLists.txt", "setup.py", "pyproject.toml", "LICENSE", "README.md"}
    needed |= {str(p.relative_to(REPO)) for d in ("core", "python/bindings") for p in (REPO / d).rglob("*")
               if p.suffix in (".cpp", ".hpp")}
    needed |= {str(p.relative_to(REPO)) for p in (REPO / "data").glob("*/measurements.csv")}
    assert not needed - names, sorted(needed - names)
    assert not any(n.endswith((".so", ".pyc")) or n.endswith(("mmcost-writer", "mmcost-probe")) for n in names)  # nothing built
    assert "License-Expression: MIT" in pkg_info and "Classifier: Operating System :: POSIX :: Linux" in pkg_info
