"""Sphinx configuration of mmcost's documentation site.

Built with warnings as errors (``.ci/run``: ``sphinx-build -W``). The API
reference comes from the docstrings (autodoc), the notebooks are the stored,
executed ones under ``notebooks/`` (myst-nb, not re-executed here: a test
re-executes them), and the tutorial runs when the site is built. Tables of
fields, kernel changes and CPU presets are read from the package
(``_ext/mmcost_tables.py``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

import mmcost  # noqa: E402

project = "mmcost"
author = "the mmcost contributors"
copyright = "2026, the mmcost contributors"
release = mmcost.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "myst_nb",
    "mmcost_tables",
]

exclude_patterns = ["_build", "notebooks/execute.py", "notebooks/.ipynb_checkpoints"]
# the notebooks are stored executed; the tutorial (a MyST notebook) asks to run
nb_execution_mode = "off"
nb_execution_raise_on_error = True
nb_execution_timeout = -1  # no time limit: a slow machine is not a failure
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
# names in annotations that are not documented here
nitpicky = False
intersphinx_mapping = {}  # no network at build time

html_theme = "furo"
html_title = f"mmcost {release}"
html_static_path = ["_static"]
html_css_files = ["mmcost.css"]
