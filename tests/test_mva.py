"""Exact MVA against published numbers, an independent algorithm and bounds."""

import math

import numpy as np
import pandas as pd
import pytest

from mmcost import _core, queueing


def test_lazowska_qsp_chapter6_example():
    # Lazowska, Zahorjan, Graham, Sevcik, "Quantitative System Performance"
    # (Prentice-Hall 1984), ch. 6, p. 117: CPU 121 visits x 0.005 s, disk1
    # 70 x 0.03 s, disk2 50 x 0.027 s, think time 15 s, 3 terminals. Queue
    # lengths at N = 3 as tabulated (4 decimals) in the LQNS libmva regression
    # test "test0" (Carleton University, lqn/trunk/libmva/regression/test0.cc).
    df = queueing.mva([0.005, 0.03, 0.027], 15.0, 3, visits=[121, 70, 50], stations=["cpu", "disk1", "disk2"])
    got = df.loc[3, ["queue_length_cpu", "queue_length_disk1", "queue_length_disk2"]].to_numpy()
    np.testing.assert_allclose(got, [0.0976, 0.3947, 0.2350], atol=5e-5)


def test_harchol_balter_exercise_hand_values():
    # Harchol-Balter, "Performance Modeling and Design of Computer Systems"
    # (CUP 2013), exercise 16.1: N = 3 users, Z = 1, S = 0.5. By hand:
    # X(1) = 1/1.5 = 2/3, R(2) = 0.5 (1 + 1/3) = 2/3, X(2) = 2/(5/3) = 6/5,
    # R(3) = 0.5 (1 + 0.8) = 0.9, X(3) = 3/1.9 = 30/19.
    df = queueing.mva([0.5], 1.0, 3)
    np.testing.assert_allclose(df["throughput"], [2 / 3, 6 / 5, 30 / 19], rtol=1e-15)
    np.testing.assert_allclose(df["response_time"], [0.5, 2 / 3, 0.9], rtol=1e-15)


def convolution_throughput(demands, think, n_max):
    """Buzen's convolution algorithm (CACM 16(9), 1973) with a delay station.

    An independent exact solution of the same product-form network:
    G(n) = sum over states of prod D_k^{n_k} * Z^{n_0} / n_0!, X(n) = G(n-1)/G(n).
    Uses the scaled recursion g_k(n) = g_{k-1}(n) + D_k g_k(n-1).
    """
    g = np.array([think**n / math.factorial(n) for n in range(n_max + 1)], dtype=float)
    for d in demands:
        for n in range(1, n_max + 1):
            g[n] = g[n] + d * g[n - 1]
    return g[:-1] / g[1:]


@pytest.mark.parametrize(
    "demands,think,n",
    [([0.3, 0.2, 0.1], 2.0, 40), ([1.0, 1.0], 0.0, 30), ([0.05, 0.4, 0.4, 0.1, 0.2], 5.0, 60), ([2.0], 0.5, 25)],
)
def test_mva_matches_convolution_algorithm(demands, think, n):
    df = queueing.mva(demands, think, n)
    np.testing.assert_allclose(df["throughput"].to_numpy(), convolution_throughput(demands, think, n), rtol=1e-9)


@pytest.mark.parametrize("think,service,n", [(1.0, 0.5, 3), (10.0, 1.0, 200), (0.0, 2.0, 7), (100.0, 0.01, 10000)])
def test_mva_matches_machine_repairman(think, service, n):
    df = queueing.mva([service], think, n)
    mr = queueing.machine_repairman(np.arange(1, n + 1), think, service)
    for col, mcol in [("throughput", "throughput"), ("response_time", "response_time"), ("queue_length_0", "queue_length")]:
        np.testing.assert_allclose(df[col].to_numpy(), mr[mcol].to_numpy(), rtol=1e-9)


def test_operational_bounds_and_saturation():
    # Denning & Buzen, "The Operational Analysis of Queueing Network Models",
    # Computing Surveys 10(3) 1978: X(n) <= min(n / (D + Z), 1 / Dmax).
    d = np.array([0.2, 0.5, 0.1])
    z = 3.0
    df = queueing.mva(d, z, 500)
    n = df.index.to_numpy()
    bound = np.minimum(n / (d.sum() + z), 1 / d.max())
    assert np.all(df["throughput"].to_numpy() <= bound * (1 + 1e-12))
    assert df["throughput"].iloc[-1] == pytest.approx(1 / d.max(), rel=1e-9)
    # Little's law over the whole network: N = X (R + Z).
    np.testing.assert_allclose(n, df["throughput"] * (df["response_time"] + z), rtol=1e-12)


def test_visits_scale_demand_and_station_throughput():
    a = queueing.mva([0.01, 0.02], 1.0, 20, visits=[10, 3])
    b = queueing.mva([0.1, 0.06], 1.0, 20)
    pd.testing.assert_series_equal(a["throughput"], b["throughput"], rtol=1e-14)
    np.testing.assert_allclose(a["throughput_0"], 10 * a["throughput"], rtol=1e-14)
    np.testing.assert_allclose(a["utilization_1"], a["throughput_1"] * 0.02, rtol=1e-14)


def test_result_shape_and_index():
    df = queueing.mva([1.0, 2.0], 0.0, 5)
    assert list(df.index) == [1, 2, 3, 4, 5] and df.index.name == "population"
    assert {"throughput", "response_time", "utilization_0", "queue_length_1", "residence_time_1"} <= set(df.columns)


@pytest.mark.parametrize(
    "kwargs,exc,field",
    [
        (dict(demands=[1.0], think_time=1.0, population=0), ValueError, "population"),
        (dict(demands=[1.0], think_time=1.0, population=2.5), TypeError, "population"),
        (dict(demands=[1.0], think_time=1.0, population="3"), TypeError, "population"),
        (dict(demands=[1.0], think_time=1.0, population=True), TypeError, "population"),
        (dict(demands=[1.0, float("nan")], think_time=1.0, population=3), ValueError, "demands[1]"),
        (dict(demands=[-1.0], think_time=1.0, population=3), ValueError, "demands[0]"),
        (dict(demands=[], think_time=1.0, population=3), ValueError, "demands"),
        (dict(demands="abc", think_time=1.0, population=3), TypeError, "demands"),
        (dict(demands=[[1.0, 2.0]], think_time=1.0, population=3), ValueError, "demands"),
        (dict(demands=[1.0], think_time=-1.0, population=3), ValueError, "think_time"),
        (dict(demands=[1.0], think_time=float("inf"), population=3), ValueError, "think_time"),
        (dict(demands=[1.0], think_time="1", population=3), TypeError, "think_time"),
        (dict(demands=[1.0, 2.0], think_time=1.0, population=3, visits=[1.0]), ValueError, "visits"),
        (dict(demands=[0.0], think_time=0.0, population=3), ValueError, "demands"),
        (dict(demands=[1.0], think_time=0.0, population=3, stations=["a", "b"]), ValueError, "stations"),
    ],
)
def test_bad_input_names_the_argument(kwargs, exc, field):
    with pytest.raises(exc, match=field.replace("[", r"\[").replace("]", r"\]")):
        queueing.mva(**kwargs)


def test_core_rejects_bad_input_without_crashing():
    # The compiled core checks its own arguments too (callers may bypass the
    # Python layer); pybind11 turns the C++ exception into ValueError.
    with pytest.raises(ValueError, match="demands"):
        _core.queueing.mva([float("nan")], [1.0], 1.0, 3)
    with pytest.raises(ValueError, match="population"):
        _core.queueing.mva([1.0], [1.0], 1.0, -5)
    with pytest.raises(ValueError, match="visits"):
        _core.queueing.mva([1.0, 1.0], [1.0], 1.0, 3)


def convolution_queue_lengths(demands, think, n_max):
    """Q_k(n) = sum_{j=1..n} D_k^j G(n-j) / G(n) (Buzen, CACM 16(9), 1973), n = 1..n_max."""
    g = np.array([think**n / math.factorial(n) for n in range(n_max + 1)], dtype=float)
    for d in demands:
        for n in range(1, n_max + 1):
            g[n] = g[n] + d * g[n - 1]
    q = np.zeros((n_max, len(demands)))
    for n in range(1, n_max + 1):
        for k, d in enumerate(demands):
            q[n - 1, k] = sum(d**j * g[n - j] for j in range(1, n + 1)) / g[n]
    return g[:-1] / g[1:], q


# 3, 13, 37 and 130 stations take the core's scalar, SSE2, AVX2 and AVX-512
# paths (where the CPU has them), none a multiple of the 8 lanes
@pytest.mark.parametrize("k", [3, 13, 37, 130])
def test_core_writes_into_the_callers_arrays(k):
    # A table reused from an earlier solve has its pages in place: the core
    # writes X(n) and Q_k(n) into `out`, in place, overwriting what was there.
    rng = np.random.default_rng([37, k])
    d, z, n = rng.uniform(0.05, 0.5, k), 4.0, 40
    x_ref, q_ref = convolution_queue_lengths(d, z, n)
    out = (np.full(n, np.nan), np.full((n, k), -1.0))
    for _ in range(2):  # the second solve writes over the first one's table
        x, qlen = _core.queueing.mva(d.tolist(), [1.0] * k, z, n, out=out)
        assert np.shares_memory(x, out[0]) and np.shares_memory(qlen, out[1])
        np.testing.assert_allclose(out[0], x_ref, rtol=1e-9)
        np.testing.assert_allclose(out[1], q_ref, rtol=1e-9)
    fresh_x, fresh_q = _core.queueing.mva(d.tolist(), [1.0] * k, z, n)
    assert fresh_x.shape == (n,) and fresh_q.shape == (n, k)
    np.testing.assert_allclose(fresh_q, q_ref, rtol=1e-9)


def test_core_fresh_table_of_its_own_mapping_by_hand():
    # From 4 MiB on the core's fresh table is its own 2 MiB-aligned mapping
    # (bind_queueing.cpp, fresh_array), unmapped when the array goes. A
    # balanced network (K stations of demand D, Z = 0) by hand: by symmetry
    # Q_k(n) = n / K, so R_k(n) = D (1 + (n - 1) / K) and X(n) = n / (D (K + n - 1)).
    k, d, n = 8, 0.25, 70_000  # 4.5 MB
    x, qlen = _core.queueing.mva([d] * k, [1.0] * k, 0.0, n)
    assert qlen.nbytes >= 4 << 20 and qlen.ctypes.data % (2 << 20) == 0
    pop = np.arange(1, n + 1)
    np.testing.assert_allclose(x, pop / (d * (k + pop - 1)), rtol=1e-12)
    np.testing.assert_allclose(qlen, np.repeat(pop[:, None] / k, k, axis=1), rtol=1e-12)
    last = qlen[-1]  # a view keeps the mapping alive after the table is dropped
    del x, qlen
    np.testing.assert_allclose(last, n / k, rtol=1e-12)


def test_public_table_matches_convolution_across_the_cores_ring():
    # The core builds the frame 655 populations at a time at K = 200 (a ring of
    # 1 MB): N = 700 crosses it. Every column against Buzen's convolution
    # algorithm: Q_k(n) = sum_j D_k^j G(n - j) / G(n), X(n) = G(n - 1) / G(n).
    rng = np.random.default_rng(655)
    k, n, z = 200, 700, 1.0
    service, visits = rng.uniform(0.2, 0.45, k), rng.uniform(1.0, 2.0, k)  # G(n) within a double
    d = service * visits
    g = np.cumprod(np.r_[1.0, np.full(n, z) / np.arange(1, n + 1)])  # Z^m / m!
    for dk in d:
        for m in range(1, n + 1):
            g[m] += dk * g[m - 1]
    powers = d[:, None] ** np.arange(1, n + 1)  # D_k^j, j = 1..n
    q = np.array([powers[:, :m] @ g[m - 1 :: -1] / g[m] for m in range(1, n + 1)])
    x = g[:-1] / g[1:]
    df = queueing.mva(service, z, n, visits=visits)
    np.testing.assert_allclose(df["throughput"], x, rtol=1e-9)
    cols = lambda c: df[[f"{c}_{i}" for i in range(k)]].to_numpy()  # noqa: E731
    np.testing.assert_allclose(cols("queue_length"), q, rtol=1e-9)
    np.testing.assert_allclose(cols("residence_time"), q / x[:, None], rtol=1e-9)
    np.testing.assert_allclose(cols("utilization"), x[:, None] * d, rtol=1e-9)
    np.testing.assert_allclose(cols("throughput"), x[:, None] * visits, rtol=1e-9)
    np.testing.assert_allclose(df["response_time"], (q / x[:, None]).sum(axis=1), rtol=1e-9)


@pytest.mark.parametrize(
    "out,why",
    [
        ((np.empty(5), np.empty((5, 3))), "throughput has another shape"),
        ((np.empty(4), np.empty((4, 2))), "queue_length has another shape"),
        ((np.empty(4), np.empty((4, 3), dtype=np.float32)), "queue_length is not a C-contiguous float64"),
        ((np.empty(4), np.empty((3, 4)).T), "queue_length is not a C-contiguous float64"),
        ((np.empty(4), np.empty((4, 3))), "queue_length is read-only"),
        ((np.empty(4),), "got 1 items"),
        (np.empty((4, 3)), "got <class 'numpy.ndarray'>"),
    ],
)
def test_core_out_must_fit(out, why):
    if why.endswith("read-only"):
        out[1].flags.writeable = False
    with pytest.raises(ValueError, match=f"^out must be a pair .*: {why}"):
        _core.queueing.mva([0.1, 0.2, 0.3], [1.0] * 3, 1.0, 4, out=out)


def test_core_out_arrays_must_not_overlap():
    buf = np.empty(4 + 4 * 3)
    with pytest.raises(ValueError, match="out .* share memory"):
        _core.queueing.mva([0.1, 0.2, 0.3], [1.0] * 3, 1.0, 4, out=(buf[:4], buf[:12].reshape(4, 3)))


def test_residual_life_single_deterministic_station_by_hand():
    # One station of deterministic service D = 1, no think time: the server
    # never idles, so X = 1/D and all n customers are at the station. The
    # residual-life recursion alone gives R(2) = 1.5 and X = 4/3 > 1/D; with
    # the clamp, Little's law over the network puts both customers there.
    df = queueing.mva([1.0], 0.0, 4, scv=[0.0])
    np.testing.assert_allclose(df["throughput"], 1.0, rtol=1e-15)
    np.testing.assert_allclose(df["queue_length_0"], [1.0, 2.0, 3.0, 4.0], rtol=1e-15)
    np.testing.assert_allclose(df["response_time"], [1.0, 2.0, 3.0, 4.0], rtol=1e-15)


def test_residual_life_mva_keeps_littles_law_and_the_bounds():
    # Random networks with non-exponential service: whatever the approximation
    # gives, it must be a consistent state of the network (Denning & Buzen,
    # Computing Surveys 10(3), 1978): N = X (Z + R) over the network,
    # Q_k = X R_k per station, U_k = X D_k <= 1, X <= n / (D + Z), R_k >= D_k.
    rng = np.random.default_rng(20260131)
    for _ in range(300):
        k = int(rng.integers(1, 5))
        d = rng.uniform(0.0, 2.0, k) * (rng.random(k) < 0.9)
        if d.sum() == 0:
            d[0] = 1.0
        z = float(rng.choice([0.0, rng.uniform(0, 5)]))
        scv = rng.choice([0.0, 0.25, 0.5, 1.0, 2.0, 4.0], k)
        n = int(rng.integers(1, 30))
        df = queueing.mva(d, z, n, scv=scv)
        pop = df.index.to_numpy(float)
        x = df["throughput"].to_numpy()
        q = df[[f"queue_length_{i}" for i in range(k)]].to_numpy()
        r = df[[f"residence_time_{i}" for i in range(k)]].to_numpy()
        np.testing.assert_allclose(q.sum(axis=1) + x * z, pop, rtol=1e-12)
        np.testing.assert_allclose(x * (z + df["response_time"].to_numpy()), pop, rtol=1e-12)
        np.testing.assert_allclose(x[:, None] * r, q, rtol=1e-12, atol=1e-300)
        assert np.all(x[:, None] * d <= 1 + 1e-12)
        assert np.all(x <= pop / (d.sum() + z) * (1 + 1e-12))
        assert np.all(r >= d * (1 - 1e-12))


def test_scv_one_is_exact_mva_unchanged():
    # scv = 1 everywhere is exponential service: the exact recursion, bit for
    # bit, and Buzen's convolution algorithm agrees.
    d, z, n = [0.3, 0.2, 0.1], 2.0, 40
    exact = queueing.mva(d, z, n)
    pd.testing.assert_frame_equal(queueing.mva(d, z, n, scv=[1.0, 1.0, 1.0]), exact, rtol=0, atol=0)
    np.testing.assert_allclose(exact["throughput"].to_numpy(), convolution_throughput(d, z, n), rtol=1e-9)


def test_station_count_has_a_size_limit():
    # Each station is four columns of the table: 10^6 stations took 70 s to
    # tabulate; above 10^4 the call is refused before anything is solved.
    with pytest.raises(ValueError, match=r"len\(demands\) = 2e\+04 is above the limit of 1e\+04"):
        queueing.mva(np.ones(20_000), 1.0, 1)
