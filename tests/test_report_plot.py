"""Text tables (exact layout, and they parse back) and headless figures."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import mmcost
import mmcost.studies
from mmcost import parse, plot, report
from mmcost.reproduce import run
from models_for_tests import LinearModel

SMALL = pd.DataFrame({
    "variant": ["base", "patched", "patched", "base", "patched"],
    "metric": ["swapout_kib_s", "swapout_kib_s", "swapout_kib_s_change_pct", "sys_time_s", "sys_time_s"],
    "value": [1000.0, 1250.0, 25.0, 12.5, 10.0],
    "stddev_pct": [2.0, 3.0, np.nan, np.nan, 1.0],
    "baseline": [None, None, "base", None, None],
})

EXPECTED_LKP = """\
             base                      patched
----------------- ----------------------------
          %stddev     %change          %stddev
            \\          |            \\
      1000 ±  2%     +25.0%       1250 ±  3%  swapout_kib_s
     12.50            -20.0%         10 ±  1%  sys_time_s
"""

EXPECTED_MD = """\
| size | base | patched |
|:-----|-----:|--------:|
| 4K   | 1.0% |   -2.5% |
| 64K  | 3.0% |         |
"""


def test_lkp_block_layout():
    rows = report.compare(SMALL, "base", "patched")
    assert report.lkp_block(rows, "base", "patched") == EXPECTED_LKP


def test_lkp_block_with_model_column():
    rows = report.compare(SMALL, "base", "patched")
    model = pd.DataFrame({"model_change_pct": [21.0, -18.5], "model_lo": [15.0, -25.0], "model_hi": [27.5, -12.0]})
    text = report.lkp_block(rows, "base", "patched", model=model)
    assert "model %change [90% band]" in text
    assert "+21.0% [+15.0, +27.5]  swapout_kib_s" in text
    assert "\x1b" not in text  # no ANSI colour


def test_markdown_layout():
    df = pd.DataFrame({"size": ["4K", "4K", "64K"], "variant": ["base", "patched", "base"], "value": [1.0, -2.5, 3.0]})
    assert report.markdown_table(df, row="size", column="variant", fmt="{:.1f}%") == EXPECTED_MD


def test_lkp_block_of_seed004_parses_back():
    df = mmcost.datasets.load("swapcache_wb_tags")
    part = df[df["experiment"] == "vm_scalability_swap_w_seq"]
    back = parse.lkp_compare(report.lkp_block(report.compare(part, "base", "base+patch"), "base", "base+patch"))
    want = part.set_index(["variant", "metric", "item"]).sort_index()
    got = back.set_index(["variant", "metric", "item"]).sort_index()
    np.testing.assert_array_equal(got["value"].to_numpy(), want["value"].to_numpy())
    pd.testing.assert_series_equal(got["stddev_pct"], want["stddev_pct"], check_names=False, check_index=False)


def test_markdown_of_seed000_parses_back():
    df = mmcost.datasets.load("small_thp_swapout")
    text = report.markdown_table(df, row="folio_kb", column="variant", fmt="{:.1f}%")
    back = parse.markdown_table(text)
    np.testing.assert_array_equal(back["value"].to_numpy(), df["value"].to_numpy())


def test_compare_errors():
    with pytest.raises(ValueError, match="variant 'x'"):
        report.compare(SMALL, "base", "x")
    with pytest.raises(ValueError, match="non-empty"):
        report.compare(SMALL.iloc[:0], "base", "patched")


@pytest.fixture(scope="module")
def linear_fit():
    x = np.arange(1, 9, dtype=float)
    df = pd.DataFrame({"metric": "runtime_s", "cpus": x, "value": 1 + 0.5 * x + 0.1 * np.cos(x), "stddev": 0.1})
    return LinearModel().fit(df)


def figures(linear_fit):
    d004 = mmcost.datasets.load("swapcache_wb_tags")
    d003 = mmcost.datasets.load("swap_alloc_locks")
    return {
        "scaling": plot.scaling(linear_fit, "cpus"),
        "pulls": plot.pulls(linear_fit),
        "before_after": plot.before_after(d003[d003["experiment"] == "make_j96"], "sys_time_s", ["before", "after"], by="folio_kb"),
        "call_sites": plot.call_site_shares(d004),
    }


def test_figures_render_headless(linear_fit, tmp_path):
    for name, fig in figures(linear_fit).items():
        assert isinstance(fig, Figure)
        for ext in ("png", "svg"):
            path = tmp_path / f"{name}.{ext}"
            fig.savefig(path)
            assert path.stat().st_size > 1000, path


def test_before_after_prints_the_change():
    d003 = mmcost.datasets.load("swap_alloc_locks")
    fig = plot.before_after(d003[d003["experiment"] == "make_j96"], "sys_time_s", ["before", "after"], by="folio_kb")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["-54.7%", "-51.4%"]  # computed from the bars: 33314.76/73578.30, 35958.87/74044.85


def test_plot_errors(linear_fit):
    with pytest.raises(ValueError, match="no rows"):
        plot.before_after(SMALL, "nope", ["base", "patched"])
    with pytest.raises(ValueError, match="column"):
        plot.scaling(linear_fit, "threads")


def test_reproduce_writes_tables_and_figures(tmp_path):
    """One study end to end (tests/test_install.py runs the whole command)."""
    text = run(tmp_path, only=["swap_alloc_locks"], progress=False)
    assert (tmp_path / "report.md").read_text() == text
    assert "## swap_alloc_locks" in text and "## held out" in text
    assert len(list(tmp_path.glob("*.png"))) >= 1 and len(list(tmp_path.glob("*.svg"))) >= 1
    assert "global si->lock model" in text and "left out" in text
    assert set(mmcost.studies.names()) == set(mmcost.datasets.names())  # every source has its study


def test_reproduce_cache_is_keyed_on_the_code_and_parallel_runs_agree(tmp_path, monkeypatch):
    import mmcost.reproduce as rep

    calls = []
    real = rep.study_output
    monkeypatch.setattr(rep, "study_output", lambda name, dpi=100: calls.append(name) or real(name, dpi))
    one = run(tmp_path / "a", only=["swap_alloc_locks"], progress=False, cache_dir=tmp_path / "cache")
    two = run(tmp_path / "b", only=["swap_alloc_locks"], progress=False, cache_dir=tmp_path / "cache")
    assert one == two and calls == ["swap_alloc_locks"]  # the second run read the cache
    monkeypatch.setattr(rep, "code_fingerprint", lambda: "another build")
    run(tmp_path / "c", only=["swap_alloc_locks"], progress=False, cache_dir=tmp_path / "cache")
    assert calls == ["swap_alloc_locks"] * 2  # new code: rendered again
    monkeypatch.undo()
    both = ["swap_alloc_locks", "kvm_6_18_munmap"]
    assert run(tmp_path / "d", only=both, progress=False, jobs=2) == run(tmp_path / "e", only=both, progress=False)
    with pytest.raises(ValueError, match="no study"):
        run(tmp_path / "f", only=["nope"], progress=False)
    with pytest.raises(ValueError, match="jobs"):
        run(tmp_path / "f", only=both, progress=False, jobs=0)
