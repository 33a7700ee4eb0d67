"""Text tables (exact layout, and they parse back) and headless figures."""

import matplotlib

matplotlib.use("Agg")

import re

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


LKP_ROW = re.compile(r"^\s+[\d.]+\s+(± +\d+%)?\s+[+-][\d.]+%\s+[\d.]+\s+(± +\d+%)?\s+(\S.*)$")


def email_problems(text: str) -> list[str]:
    """Lines of a report that would not paste into an 80-column email: any
    line over 80 columns (a published LKP metric name may run on past them,
    as LKP prints it, if its numbers end within 80), a pandas missing value,
    or a whole counter printed with a fraction."""
    problems, code = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            code = not code
            continue
        lkp = LKP_ROW.match(line) if code else None
        if len(line) > 80 and not (lkp and lkp.start(3) <= 80):
            problems.append(f"line {i}: {len(line)} columns: {line[:60]}...")
        if re.search(r"<NA>|\bNaN\b|\bnan\b|NaT", line):
            problems.append(f"line {i}: a missing value printed: {line[:60]}")
        if re.search(r"\b\d{6,}\.0\b", line):  # a counter, not a rounded prediction
            problems.append(f"line {i}: a whole number printed with a fraction: {line[:60]}")
    return problems


def test_email_problems_finds_each_kind():
    assert len(email_problems("x" * 81)) == 1
    assert len(email_problems("```\n  0    1  <NA>\n```")) == 1
    assert len(email_problems("swpout 1735216.0")) == 1
    lkp = "     10.86 ± 12%     -23.4%       8.31 ± 16%  perf-profile.cycles-pp." + "x" * 60
    assert email_problems(f"```\n{lkp}\n```") == []


def test_fixed_width_layout():
    df = pd.DataFrame({"metric": ["swpout_count", "sd"], "before": [1735216.0, 2.5], "n": [9, np.nan],
                       "note": ["a", None]})
    text = report.fixed_width(df, headers={"n": "runs"})
    lines = text.splitlines()
    assert lines[0].split() == ["metric", "before", "runs", "note"]
    assert lines[2].split() == ["swpout_count", "1735216", "9", "a"]  # whole numbers as integers
    assert lines[3].split() == ["sd", "2.5"]  # missing values blank
    assert len({len(x) for x in lines[:2]}) == 1  # the rule as wide as the header
    with pytest.raises(ValueError, match="90 columns wide"):
        report.fixed_width(pd.DataFrame({"x" * 90: [1]}))
    with pytest.raises(ValueError, match="non-empty"):
        report.fixed_width(pd.DataFrame())


def test_fit_summary_footnotes_its_priors():
    fit = mmcost.studies.get("kvm_6_18_munmap").fit()
    sources = fit.prior_sources()
    text = fit.summary(footnotes=True)
    assert sources and all(f"[{i}]" in text for i in range(1, len(sources) + 1))
    assert not any(src[:30] in text for src in sources)
    assert all(src[:30] in str(fit).replace("\n      ", " ") for src in sources)  # inline by default


def test_every_plot_draws_into_a_given_axes_and_returns_its_figure(linear_fit):
    import matplotlib.pyplot as plt

    d004 = mmcost.datasets.load("swapcache_wb_tags")
    d001 = mmcost.datasets.load("migrc_tlb")
    shoot = d001[d001["experiment"] == "xsbench_interrupts"]
    fig, axes = plt.subplots(2, 3)
    try:
        drawn = [plot.scaling(linear_fit, "cpus", ax=axes[0, 0]),
                 plot.before_after(SMALL, "swapout_kib_s", ["base", "patched"], ax=axes[0, 1]),
                 plot.pulls(linear_fit, ax=axes[0, 2]),
                 plot.call_site_shares(d004, ax=axes[1, 0]),
                 plot.spread(shoot, "tlb_shootdowns", ["before", "after"], ax=axes[1, 1], title="a title")]
        assert all(f is fig for f in drawn)
        assert axes[1, 1].get_title(loc="left") == "a title"
        assert all(len(a.get_children()) > 10 for a in axes.flat[:5])
        with pytest.raises(TypeError, match="ax must be"):
            plot.pulls(linear_fit, ax="left")
    finally:
        plt.close(fig)


def test_a_new_figure_shows_inline_without_pyplot(linear_fit):
    fig = plot.pulls(linear_fit)
    assert isinstance(fig, plot.CoverFigure) and fig._repr_png_().startswith(b"\x89PNG")


def test_labels_are_words_with_units_and_folio_sizes_read_4k_to_2m():
    m = mmcost.metrics
    assert m.label("usemem_throughput_kib_s") == "usemem throughput per process [KiB/s]"
    assert m.label("usemem_throughput_kib_s_change_pct", "4K baseline") == \
        "usemem throughput per process change vs 4K baseline [%]"
    assert m.label("munmap_time_ms") == "munmap time [ms]"
    assert m.label("itlb_load_miss_count") == "iTLB load miss"
    assert [m.folio_label(k) for k in (4, 16, 64, 512, 2048)] == ["4K", "16K", "64K", "512K", "2M"]
    d000 = mmcost.datasets.load("small_thp_swapout")
    fig = plot.before_after(d000, "usemem_throughput_kib_s_change_pct", ["baseline", "remove-huge-flag"],
                            by="folio_kb")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4K", "64K", "2M"]
    assert ax.get_xlabel() == "folio size" and "_" not in ax.get_ylabel()


def test_no_study_figure_has_a_snake_case_label():
    """Every figure reproduce draws: axis labels and tick labels in words."""
    import matplotlib.pyplot as plt

    for name in mmcost.studies.names():
        for s in mmcost.studies.get(name).sections():
            if s.figure is None:
                continue
            assert s.figure.axes[0].get_ylabel(), name  # panels sharing y may leave theirs blank
            for ax in s.figure.axes:
                assert ax.get_xlabel(), name
                for text in (ax.get_xlabel(), ax.get_ylabel()):
                    assert not re.search(r"[a-z]+_[a-z]+", text), (name, text)
                assert not re.search(r"\$2\^", " ".join(t.get_text() for t in ax.get_xticklabels())), name
            assert s.figure.axes[0].get_title(loc="left") or s.figure._suptitle, (name, "no title")
            plt.close(s.figure)
