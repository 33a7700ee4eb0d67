"""``reproduce``'s cache of rendered studies is keyed on what a study's
output depends on: a changed data file (within one process, and where an
editable install keeps the data), changed matplotlib rcParams and changed
dependency versions each render the study again; nothing changed reads it
from the cache."""

import shutil

import matplotlib
import pytest

import mmcost.datasets
import mmcost.reproduce as rep

STUDY = "swap_alloc_locks"


@pytest.fixture
def renders(monkeypatch):
    """Count the renders; a render is a cheap stand-in (the study's own
    rendering is test_report_plot's job)."""
    calls = []

    def fake(name, dpi=100):
        calls.append(name)
        return rep.StudyOutput(name, [f"## {name}", f"render {len(calls)}"])

    monkeypatch.setattr(rep, "study_output", fake)
    return calls


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """The bundled data copied to a folder of the test's own, which the
    studies then read (as an editable install reads <repo>/data)."""
    src = mmcost.datasets._root()
    dst = tmp_path / "data"
    shutil.copytree(str(src), dst, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(mmcost.datasets, "_root", lambda: dst)
    return dst


def test_a_changed_csv_renders_again_within_one_process(tmp_path, renders, data_copy):
    cache = tmp_path / "cache"
    first = rep._one(STUDY, 100, cache)
    assert rep._one(STUDY, 100, cache).lines == first.lines and renders == [STUDY]  # from the cache
    csv = data_copy / STUDY / "measurements.csv"
    csv.write_text(csv.read_text() + "\n")  # the same rows, another file
    second = rep._one(STUDY, 100, cache)
    assert renders == [STUDY, STUDY] and second.lines != first.lines


def test_changed_rcparams_render_the_figures_again(tmp_path, renders, data_copy):
    cache = tmp_path / "cache"
    rep._one(STUDY, 100, cache)
    rep._one(STUDY, 100, cache)
    assert renders == [STUDY]
    with matplotlib.rc_context({"lines.linewidth": matplotlib.rcParams["lines.linewidth"] + 1.5}):
        rep._one(STUDY, 100, cache)
    assert renders == [STUDY, STUDY]
    rep._one(STUDY, 100, cache)  # back to the old style: its entry is still there
    assert renders == [STUDY, STUDY]


def test_a_matplotlibrc_file_is_part_of_the_key(tmp_path, renders, data_copy):
    rc = tmp_path / "matplotlibrc"
    rc.write_text("font.size: 17\naxes.grid: True\n")
    cache = tmp_path / "cache"
    rep._one(STUDY, 100, cache)
    with matplotlib.rc_context(fname=str(rc)):
        rep._one(STUDY, 100, cache)
    assert renders == [STUDY, STUDY]


def test_other_dependency_versions_render_again(tmp_path, renders, data_copy, monkeypatch):
    cache = tmp_path / "cache"
    rep._one(STUDY, 100, cache)
    versions = rep._dependency_versions()
    assert "matplotlib==" + matplotlib.__version__ in versions
    monkeypatch.setattr(rep, "_dependency_versions", lambda: versions.replace("matplotlib==", "matplotlib==0.0+"))
    rep._one(STUDY, 100, cache)
    assert renders == [STUDY, STUDY]


def test_the_data_folder_of_an_editable_install_is_hashed(data_copy):
    """The data may live outside the package folder (an editable install maps
    mmcost.data to <repo>/data): it is among the hashed roots all the same."""
    assert any(str(r) == str(data_copy) for r in rep._roots())
    before = rep.code_fingerprint()
    (data_copy / STUDY / "source.toml").write_text((data_copy / STUDY / "source.toml").read_text() + "\n")
    assert rep.code_fingerprint() != before
