"""Property-based checks of the API above the solvers (issue 18): datasets,
parsers' typed API, fit / predict / loo / bootstrap, sweep, report, plot and
the CLI. On any input every outcome is a correct answer checked against a
reference (the parameters that generated the data, the frame a table was
printed from, direct evaluation), or a ValueError/TypeError/KeyError that
names the argument or column; never a silent NaN, never another exception.

CI runs MMCOST_HYPOTHESIS_EXAMPLES (default 200) examples per property, a
quarter of that for the slower ones (a fit, a figure, a CLI call);
``MMCOST_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/test_properties_api.py``
runs ten thousand."""

import functools
import io
import math
import os
import re
import warnings
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import mmcost
from mmcost import datasets, parse, plot, report
from mmcost.cli import main as cli_main
from mmcost.fit import NotIdentifiableWarning, PoorFitWarning
from mmcost.sweep import sweep
from mmcost.usl import UslModel

matplotlib.use("Agg")

EXAMPLES = int(os.environ.get("MMCOST_HYPOTHESIS_EXAMPLES", "200"))
settings.register_profile("api", max_examples=EXAMPLES, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile("api")
#: for a property whose example costs a fit, a figure or a CLI call
SLOW = settings(max_examples=max(10, EXAMPLES // 4))

ANY = st.floats(allow_nan=True, allow_infinity=True)
TEXT = st.text(max_size=40)
#: anything a caller might pass where a str or a frame belongs
JUNK = st.one_of(st.none(), st.integers(), ANY, st.binary(max_size=8), st.lists(st.integers(), max_size=3))


def names_one_of(exc: Exception, *names: str) -> bool:
    return any(re.search(rf"\b{re.escape(n)}", str(exc)) for n in names)


# --- datasets ---------------------------------------------------------------------------------------------------


@given(st.one_of(TEXT, JUNK))
def test_datasets_load_and_source_answer_or_name_the_id(dataset_id):
    known = isinstance(dataset_id, str) and dataset_id in datasets.names()
    for fn in (datasets.load, datasets.source):
        try:
            out = fn(dataset_id)
        except (KeyError, TypeError) as exc:
            assert not known
            assert "dataset" in str(exc), exc
            continue
        assert known and len(out) > 0


@given(st.sampled_from(datasets.names()))
def test_every_bundled_row_is_finite_or_says_why(dataset_id):
    df = datasets.load(dataset_id)
    bad = df[~np.isfinite(df["value"].astype(float))]
    assert bad.empty or bad.get("note", pd.Series(dtype=str)).notna().all(), bad


_EVERY_METRIC = datasets.metrics()


@given(st.one_of(st.none(), TEXT, JUNK))
@example("[[")  # a nested set warns (FutureWarning) before it fails: found by CI's run
@example("[[a]")  # ... or compiles
def test_metrics_pattern_filters_or_names_the_pattern(pattern):
    try:
        df = datasets.metrics(pattern)
    except (ValueError, TypeError) as exc:
        assert names_one_of(exc, "pattern"), exc
        return
    everything = _EVERY_METRIC
    assert set(df["metric"]) <= set(everything["metric"])
    if pattern is None:
        assert len(df) == len(everything)
    else:  # the reference: the same regex, applied row by row
        with warnings.catch_warnings():  # ('[[a]' compiles, warning of future semantics)
            warnings.simplefilter("ignore", FutureWarning)
            rx = re.compile(pattern)
        want = {r.metric for r in everything.itertuples()
                if rx.search(r.metric) or re.search(pattern, r.meaning, flags=re.IGNORECASE)}
        assert set(df["metric"]) == want


# --- parsers' typed API -----------------------------------------------------------------------------------------

PARSERS = ["lkp_compare", "perf_lock_contention", "perf_stat", "interrupts_tlb", "time_output", "sysbench",
           "xsbench", "usemem", "markdown_table", "mthp_stats", "vmstat"]


@given(st.sampled_from(PARSERS), JUNK)
def test_a_parser_given_no_text_raises_type_error(fmt, junk):
    with pytest.raises(TypeError, match="text"):
        getattr(parse, fmt)(junk)


@given(st.sampled_from(["variant", "folio_kb", "cpus", "processes"]), JUNK)
def test_a_parser_checks_the_columns_it_is_asked_to_fill(column, value):
    text = "1073741824 bytes / 1234567 usecs = 849347 KB/s\n"
    try:
        df = parse.usemem(text, **{column: value})
    except (ValueError, TypeError) as exc:
        assert names_one_of(exc, column), exc
        return
    assert (df[column].isna() if value is None else df[column].notna()).all()


# --- fit / predict / loo / bootstrap ----------------------------------------------------------------------------

def usl(n, sigma, kappa, lam):
    n = np.asarray(n, float)
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


@SLOW
@example(0.5, 0.0078125, 1.0, [143, 144, 141, 138, 139, 20])
@given(st.floats(0.0, 0.5), st.floats(0.0, 0.01), st.floats(1.0, 1e4),
       st.lists(st.integers(1, 256), min_size=5, max_size=10, unique=True))
def test_a_fit_to_exact_data_recovers_the_parameters_and_predicts_within_its_band(sigma, kappa, lam, ns):
    ns = sorted(ns)
    assume(ns[-1] >= 4 * ns[0])  # three coefficients need a range of N to tell them apart
    df = pd.DataFrame({"metric": "throughput", "cpus": ns, "value": usl(ns, sigma, kappa, lam),
                       "stddev_pct": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        fit = UslModel().fit(df)
    # the reference: the curve that generated the data
    assert fit.residuals["predicted"].to_numpy() == pytest.approx(df["value"].to_numpy(), rel=1e-5)
    ask = pd.DataFrame({"metric": "throughput", "cpus": [max(ns) * 2, 512]})
    pred = fit.predict(ask, level=0.9, n_samples=50, seed=0)
    assert np.all(np.isfinite(pred[["best", "lo", "hi"]].to_numpy())) and np.all(pred["lo"] <= pred["hi"])
    p = fit.model.params
    clear = all(min(v - p[k].lower, p[k].upper - v) > 3 * fit.stderr[k] for k, v in fit.params.items())
    if clear:  # near or on a bound the band lies on the feasible side and need not hold the best fit
        assert np.all(pred["lo"] <= pred["best"] * (1 + 1e-9)) and np.all(pred["best"] <= pred["hi"] * (1 + 1e-9))
    # at the residuals' precision, extrapolated over at most 512 / 5 times the span
    assert pred["best"].to_numpy() == pytest.approx(usl(ask["cpus"], sigma, kappa, lam), rel=0.05)
    loo = fit.loo()
    assert len(loo) == len(df) and np.all(np.isfinite(loo["predicted"]))


@functools.cache
def _usl_fit():
    """One USL fit to exact data, shared by the properties that probe its predict and bootstrap."""
    df = pd.DataFrame({"metric": "throughput", "cpus": [1, 2, 4, 8, 16],
                       "value": usl([1, 2, 4, 8, 16], 0.05, 0.001, 100.0), "stddev_pct": 2.0})
    return UslModel().fit(df)


@st.composite
def frames(draw):
    """A throughput frame with anything in it: NaN, inf, negatives, zero,
    missing or mistyped columns, no rows."""
    n = draw(st.integers(0, 6))
    cols = {}
    if draw(st.booleans()) or n == 0:
        cols["metric"] = draw(st.one_of(st.just("throughput"), TEXT, st.just(None)))
    cols["cpus"] = draw(st.lists(st.one_of(st.integers(-4, 300), ANY, TEXT), min_size=n, max_size=n))
    if draw(st.integers(0, 4)):
        cols["value"] = draw(st.lists(st.one_of(ANY, st.floats(0.1, 1e6), TEXT), min_size=n, max_size=n))
    if draw(st.booleans()):
        cols["stddev"] = draw(st.lists(ANY, min_size=n, max_size=n))
    return pd.DataFrame({k: (v if isinstance(v, list) else [v] * n) for k, v in cols.items()})


@SLOW
@given(frames())
def test_a_fit_to_any_frame_answers_or_names_the_column(df):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            warnings.simplefilter("ignore", PoorFitWarning)  # a frame of arbitrary values may well be a poor fit
            fit = UslModel().fit(df)
    except (ValueError, TypeError, KeyError) as exc:
        assert names_one_of(exc, "metric", "cpus", "value", "stddev", "data", "rows", "frame", "df"), exc
        return
    assert all(math.isfinite(v) for v in fit.params.values())
    assert math.isfinite(fit.chi2)


@SLOW
@given(st.one_of(JUNK, TEXT, st.floats(-1, 2)), st.one_of(st.integers(-5, 5), JUNK))
def test_predict_checks_level_and_samples(level, n_samples):
    fit = _usl_fit()
    ask = pd.DataFrame({"metric": "throughput", "cpus": [32]})
    try:
        pred = fit.predict(ask, level=level, n_samples=n_samples, seed=0)
    except (ValueError, TypeError) as exc:
        assert names_one_of(exc, "level", "n_samples"), exc
        return
    level = 0.9 if level is None else level  # None: the default level
    assert isinstance(level, (float, int)) and 0 < level < 1 and isinstance(n_samples, int) and n_samples >= 2
    assert np.isfinite(pred[["best", "lo", "hi"]].to_numpy()).all() and pred["lo"].iloc[0] <= pred["hi"].iloc[0]


@SLOW
@given(st.one_of(st.integers(-3, 6), st.none(), ANY, TEXT, st.booleans()), st.one_of(st.integers(-3, 3), JUNK))
def test_bootstrap_checks_its_count(n, seed):
    fit = _usl_fit()
    try:
        boot = fit.bootstrap(n=n, seed=seed)
    except (ValueError, TypeError) as exc:
        assert names_one_of(exc, "n", "seed"), exc
        return
    assert isinstance(n, int) and n >= 2
    samples = boot.bootstrap_samples
    assert len(samples) <= n and np.all(np.isfinite(samples.to_numpy(float)))


# --- sweep ------------------------------------------------------------------------------------------------------

@SLOW
@given(st.lists(st.one_of(st.integers(1, 512), st.floats(0.5, 1e3)), min_size=1, max_size=6),
       st.lists(st.floats(0.5, 64), min_size=1, max_size=3))
def test_sweep_equals_the_closed_form_at_each_configuration(cpus, threads):
    model = UslModel().with_parameters(sigma=0.05, kappa=0.001, lam=100.0)
    out = sweep(model, {"metric": "throughput", "cpus": cpus, "threads": threads}, executor="serial")
    assert len(out) == len(cpus) * len(threads)
    assert list(out["cpus"]) == [c for c in cpus for _ in threads]  # grid order
    assert out["value"].to_numpy() == pytest.approx(usl(out["cpus"], 0.05, 0.001, 100.0), rel=1e-12)


@given(st.one_of(JUNK, TEXT, st.dictionaries(TEXT, st.lists(st.integers(), max_size=2), max_size=3)))
def test_sweep_on_a_bad_grid_names_the_grid(grid):
    model = UslModel().with_parameters(sigma=0.05, kappa=0.001, lam=100.0)
    try:
        out = sweep(model, grid, executor="serial")
    except (ValueError, TypeError, KeyError) as exc:
        assert names_one_of(exc, "grid", "metric", "cpus"), exc
        return
    assert isinstance(grid, dict) and "metric" in grid and len(out) > 0


# --- report -----------------------------------------------------------------------------------------------------

@given(st.lists(st.tuples(st.sampled_from(["a", "bb", "metric_name_kib_s"]), ANY, st.integers(-10**9, 10**9)),
                min_size=0, max_size=8))
def test_fixed_width_fits_80_columns_or_says_so(rows):
    df = pd.DataFrame(rows, columns=["name", "x", "count"])
    try:
        text = report.fixed_width(df)
    except ValueError as exc:
        assert "80" in str(exc) or "empty" in str(exc), exc
        return
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "nan" not in text.lower() and "<NA>" not in text
    for r in rows:  # every whole number prints as itself, not 1e+09 or 12.0
        assert re.search(rf"(?<![\d.]){r[2]}(?![\d.])", text)


@given(st.lists(st.tuples(st.floats(1e-3, 1e9), st.floats(1e-3, 1e9), st.floats(0, 50), st.floats(0, 50)),
                min_size=1, max_size=5))
def test_an_lkp_block_parses_back_to_its_numbers(values):
    rows = []
    for i, (base, patched, sd_b, sd_p) in enumerate(values):
        metric = f"metric_{i}_kib_s"
        rows += [dict(metric=metric, unit="KiB/s", variant="base", value=base, stddev_pct=sd_b),
                 dict(metric=metric, unit="KiB/s", variant="patched", value=patched, stddev_pct=sd_p)]
    text = report.lkp_block(report.compare(pd.DataFrame(rows), "base", "patched"))
    back = parse.lkp_compare(text)
    for i, (base, patched, _, _) in enumerate(values):
        got = back[back["metric"] == f"metric_{i}_kib_s"].set_index("variant")["value"]
        # the reference: the numbers the block was printed from, to the digits LKP prints
        assert got.iloc[0] == pytest.approx(base, rel=5e-3, abs=0.01)
        assert got.iloc[-1] == pytest.approx(patched, rel=5e-3, abs=0.01)


# --- plot -------------------------------------------------------------------------------------------------------

@SLOW
@given(st.lists(st.tuples(st.sampled_from(["base", "patched", "other"]), st.sampled_from([4, 64, 2048]),
                          st.one_of(ANY, st.floats(0, 1e6))), min_size=0, max_size=8),
       st.lists(st.sampled_from(["base", "patched", "missing"]), min_size=1, max_size=3, unique=True))
def test_before_after_draws_or_names_what_is_missing(rows, variants):
    df = pd.DataFrame(rows, columns=["variant", "folio_kb", "value"]).assign(metric="swapout_kib_s")
    try:
        fig = plot.before_after(df, "swapout_kib_s", variants, by="folio_kb")
    except (ValueError, KeyError) as exc:
        assert names_one_of(exc, "variant", "value", "folio_kb", "swapout_kib_s", "rows", "metric"), exc
        return
    try:
        assert fig.axes and fig.axes[0].get_ylabel() and "_" not in fig.axes[0].get_ylabel()
    finally:
        plt.close(fig)


# --- CLI --------------------------------------------------------------------------------------------------------

WORDS = ["reproduce", "measure", "swapout", "verify", "--out", "--only", "--jobs", "-j", "--dpi", "--cache",
         "--no-cache", "--force", "--runs", "--fit", "--figure", "--folio", "--bytes", "--reps", "--dry-run",
         "--processes", "--memcg", "--device", "--seed", "zram:nope", "4K,64K", "1,x", "256M", "12Q",
         "nope", "0", "-1", "3", "x", "", "--version", "--help", "small_thp_swapout", "/nonexistent/dir"]


class _WouldRender(Exception):
    """reproduce got past its checks: rendering a study is test_install's and the studies' tests' job."""


def _would_render(*args, **kwargs):
    raise _WouldRender


COMMANDS = [[], ["reproduce"], ["measure"], ["measure", "swapout", "--dry-run"], ["measure", "verify"]]


@SLOW
@given(argv=st.tuples(st.sampled_from(COMMANDS), st.lists(st.sampled_from(WORDS), max_size=4)).map(
    lambda t: t[0] + t[1]))
@example(argv=["measure", "verify"])  # no runs.csv here
@example(argv=["measure", "verify", "--runs", "/nonexistent/dir"])
@example(argv=["measure", "swapout", "--dry-run", "--processes", "1,x"])
@example(argv=["measure", "swapout", "--dry-run", "--memcg", "12Q"])
@example(argv=["reproduce", "--only", "nope"])
@example(argv=["reproduce", "--dpi", "-1"])
def test_the_cli_exits_with_a_code_never_a_traceback(argv, tmp_path_factory):
    assume("swapout" not in argv or "--dry-run" in argv or os.geteuid() != 0)  # never touch the kernel here
    cwd = tmp_path_factory.mktemp("cli")
    old = os.getcwd()
    os.chdir(cwd)
    err, out = io.StringIO(), io.StringIO()
    try:
        with mock.patch("mmcost.reproduce._one", _would_render), redirect_stderr(err), redirect_stdout(out):
            code = cli_main(argv)
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        code = exc.code
    except _WouldRender:
        code = 0
    finally:
        os.chdir(old)
    assert code in (0, 2, None), code
    err = err.getvalue()
    assert "Traceback" not in err
    if code == 2:
        assert err.strip(), "exit 2 without saying why"


def test_mmcost_is_importable_lazily():
    assert "swap" in dir(mmcost)
    with pytest.raises(AttributeError, match="nothing"):
        mmcost.nothing  # noqa: B018
