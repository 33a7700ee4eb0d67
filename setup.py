"""Build mmcost: setuptools drives CMake for the C++ core (mmcost._core).

The pattern is pybind/cmake_example's CMakeExtension + CMakeBuild. pybind11 and
Eigen come from PyPI (build requirements in pyproject.toml): pybind11 tells
where its CMake config is; cmeel-eigen installs Eigen's CMake package under
``<site-packages>/cmeel.prefix``, which we look up on sys.path.

Environment: DEBUG=1 builds without optimisation; MMCOST_SANITIZE=1 builds with
ASan/UBSan; CMAKE_ARGS adds arguments to the CMake configure step.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def eigen_cmake_dir() -> str:
    """The folder holding Eigen3Config.cmake from the cmeel-eigen wheel."""
    for entry in sys.path:
        candidate = Path(entry) / "cmeel.prefix" / "share" / "eigen3" / "cmake"
        if (candidate / "Eigen3Config.cmake").is_file():
            return str(candidate)
    raise RuntimeError(
        "Eigen3Config.cmake not found under any <sys.path>/cmeel.prefix/share/eigen3/cmake; "
        "install the build requirement 'cmeel-eigen' (pip does this for `pip install .`)."
    )


class CMakeExtension(Extension):
    def __init__(self, name: str, sourcedir: Path = HERE):
        super().__init__(name, sources=[])
        self.sourcedir = str(sourcedir)


class CMakeBuild(build_ext):
    def build_extension(self, ext: CMakeExtension) -> None:
        import pybind11

        extdir = Path(self.get_ext_fullpath(ext.name)).parent.resolve()
        debug = int(os.environ.get("DEBUG", "0")) or self.debug
        cmake_args = [
            f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={extdir}{os.sep}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={'Debug' if debug else 'Release'}",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
            f"-DEigen3_DIR={eigen_cmake_dir()}",
        ]
        if os.environ.get("MMCOST_SANITIZE", "0") not in ("", "0"):
            cmake_args.append("-DMMCOST_SANITIZE=ON")
        cmake_args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        if not any(a.startswith("-G") for a in cmake_args):
            try:
                import ninja  # noqa: F401

                cmake_args += ["-G", "Ninja"]
            except ImportError:
                pass

        build_temp = Path(self.build_temp) / ext.name
        # pip builds in-tree from a fresh isolated environment each time, so a
        # CMake cache can point at a pybind11/Eigen/ninja that no longer exists.
        stamp = build_temp / "mmcost-configure-args.txt"
        key = "\n".join(cmake_args)
        if build_temp.exists() and (not stamp.is_file() or stamp.read_text() != key):
            shutil.rmtree(build_temp)
        build_temp.mkdir(parents=True, exist_ok=True)
        stamp.write_text(key)
        subprocess.run(["cmake", ext.sourcedir, *cmake_args], cwd=build_temp, check=True)
        subprocess.run(
            ["cmake", "--build", ".", "--parallel", str(os.cpu_count() or 1)],
            cwd=build_temp,
            check=True,
        )
        # An editable install copies only the extension module back into the tree; the
        # swap-out writer and the machine probe (mmcost measure) must sit next to it too.
        if getattr(self, "editable_mode", False) or self.inplace:
            for tool in ("mmcost-writer", "mmcost-probe"):
                shutil.copy2(extdir / tool, HERE / "python" / "mmcost" / tool)


setup(
    ext_modules=[CMakeExtension("mmcost._core")],
    cmdclass={"build_ext": CMakeBuild},
)
