"""The simulation kernel's distributions against SciPy (mean, variance, KS)
and the independence of its random streams."""

import numpy as np
import pytest
from scipy import stats

from mmcost import _core

N = 200_000


def draw(kind, mean, cv=0.0, samples=(), seed=1, stream=0, n=N):
    d = _core.sim.Distribution(kind=_core.sim.DistKind(kind), mean=mean, cv=cv, samples=list(samples))
    return _core.sim.sample(d, n, seed, stream)


def test_exponential_ziggurat_is_exponential():
    x = draw(1, 2.5)
    assert x.mean() == pytest.approx(2.5, rel=0.01) and x.var() == pytest.approx(6.25, rel=0.03)
    assert stats.kstest(x, stats.expon(scale=2.5).cdf).pvalue > 1e-3
    assert x.min() >= 0 and np.isfinite(x).all()
    tail = draw(1, 1.0, n=2_000_000)  # the ziggurat's base strip (x > 7.7) is drawn too
    assert (tail > 7.7).mean() == pytest.approx(np.exp(-7.7), rel=0.3)


def test_lognormal_mean_and_cv():
    x = draw(2, 0.4, cv=1.5)
    s2 = np.log1p(1.5**2)
    assert stats.kstest(x, stats.lognorm(s=np.sqrt(s2), scale=0.4 * np.exp(-s2 / 2)).cdf).pvalue > 1e-3
    assert x.mean() == pytest.approx(0.4, rel=0.03)


def test_deterministic_and_empirical():
    assert (draw(0, 3.0, n=10) == 3.0).all()
    x = draw(3, 0.0, samples=[1.0, 2.0, 4.0])
    assert set(np.unique(x)) == {1.0, 2.0, 4.0}
    counts = np.bincount(np.searchsorted([1.0, 2.0, 4.0], x), minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_streams_are_reproducible_and_distinct():
    a, b = draw(1, 1.0, stream=3, n=1000), draw(1, 1.0, stream=3, n=1000)
    c = draw(1, 1.0, stream=4, n=1000)
    np.testing.assert_array_equal(a, b)
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.1 and not np.array_equal(a, c)


@pytest.mark.parametrize("args,field", [((1, float("nan"), 0.0, []), "distribution.mean"),
                                        ((2, 1.0, 0.0, []), "distribution.cv"),
                                        ((3, 0.0, 0.0, []), "distribution.samples"),
                                        ((1, -1.0, 0.0, []), "distribution.mean")])
def test_bad_distributions(args, field):
    with pytest.raises(ValueError, match=field):
        kind, mean, cv, samples = args
        _core.sim.sample(_core.sim.Distribution(kind=_core.sim.DistKind(kind), mean=mean, cv=cv, samples=samples), 10, 0)


@pytest.mark.parametrize("split", [0, 1, 500, 1000])
def test_running_stats_match_numpy_and_merge_exactly(split):
    rng = np.random.default_rng(9)
    x = 1e9 + rng.exponential(3.0, 1000)  # a large offset: the naive sum of squares would cancel
    r = _core.sim.running_stats(x.tolist(), split)
    assert r["count"] == 1000
    assert r["mean"] == pytest.approx(x.mean(), rel=1e-15)
    assert r["variance"] == pytest.approx(x.var(ddof=1), rel=1e-9)
    assert (r["min"], r["max"]) == (x.min(), x.max())


def test_running_stats_edge_cases():
    assert np.isnan(_core.sim.running_stats([], 0)["mean"])
    one = _core.sim.running_stats([2.5], 1)
    assert one["mean"] == 2.5 and np.isnan(one["variance"])
