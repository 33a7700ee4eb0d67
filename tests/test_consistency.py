"""Numbers the emails state twice agree within the rounding of the printed
digits; where they do not, source.toml lists the disagreement (and the test
checks that the listed disagreement is real)."""

from decimal import Decimal
from itertools import product

import numpy as np
import pytest

import mmcost


def half_unit(printed: str) -> float:
    """Half a unit of the last printed digit: '864.05' -> 0.005, '1564' -> 0.5."""
    exp = Decimal(printed.replace(",", "").lstrip("+")).as_tuple().exponent
    return 0.5 * 10.0**exp


def change_range_pct(before: str, after: str) -> tuple[float, float]:
    """Every value of 100 (after/before - 1) the printed digits allow."""
    b, a = float(before.replace(",", "")), float(after.replace(",", ""))
    db, da = half_unit(before), half_unit(after)
    vals = [100 * ((a + sa * da) / (b + sb * db) - 1) for sa, sb in product((-1, 1), repeat=2)]
    return min(vals), max(vals)


def agrees(printed_change: str, before: str, after: str) -> bool:
    lo, hi = change_range_pct(before, after)
    c, dc = float(printed_change.rstrip("%")), half_unit(printed_change.rstrip("%"))
    return c + dc >= lo and c - dc <= hi


def rows(name, **where):
    df = mmcost.datasets.load(name)
    for k, v in where.items():
        df = df[df[k] == v]
    return df


def one(df, **where):
    for k, v in where.items():
        df = df[df[k] == v]
    assert len(df) == 1, where
    return df.iloc[0]


def test_helpers_can_fail():
    assert agrees("-54.7", "73578.30", "33314.76")
    assert not agrees("-50.0", "73578.30", "33314.76")
    assert half_unit("1564") == 0.5 and half_unit("2.74") == 0.005


def test_lkp_changes_match_their_values():
    df = rows("swapcache_wb_tags", experiment="vm_scalability_swap_w_seq")
    for item, g in df.groupby("item"):
        metric = g["metric"].str.removesuffix("_change_pct").iloc[0]
        base = one(g, variant="base", metric=metric)["printed"].split()[0]
        patched = one(g, variant="base+patch", metric=metric)["printed"].split()[0]
        change = one(g, metric=metric + "_change_pct")["printed"]
        assert agrees(change, base, patched), (item, change, base, patched)


def test_swapout_prose_matches_vmstat_as_listed():
    df = rows("swapcache_wb_tags")
    so = df[df["metric"] == "swapout_kib_s"].set_index("variant")["value"]
    gb = df[df["metric"] == "swapout_gb_s"].set_index("variant")["value"]
    # '22.3%' in the prose is the LKP %change of vmstat.swap.so.
    prose = one(df, metric="swapout_gb_s_change_pct")["value"]
    assert prose == one(df, metric="swapout_kib_s_change_pct")["value"]
    # ~1.2 and ~1.48 GB/s are KiB/s / 1e6, as source.toml [inconsistencies] says:
    # 1476578 KiB/s is 1.48 that way, but 1.51 GB/s (SI) and 1.41 GiB/s.
    for v in ("base", "base+patch"):
        assert abs(so[v] / 1e6 - gb[v]) <= half_unit(str(gb[v]))
    assert abs(so["base+patch"] * 1024 / 1e9 - gb["base+patch"]) > 0.02
    assert abs(so["base+patch"] * 1024 / 2**30 - gb["base+patch"]) > 0.02
    assert "swapout_gb_s" in mmcost.datasets.source("swapcache_wb_tags")["inconsistencies"]


def test_build_time_changes():
    df = rows("swap_alloc_locks", experiment="make_j96")
    for kb, g in df.groupby("folio_kb"):
        for metric in ("sys_time_s", "real_time_s"):
            before = one(g, variant="before", metric=metric)["printed"]
            after = one(g, variant="after", metric=metric)["printed"]
            change = one(g, metric=metric + "_change_pct")["printed"].split("%")[0]
            assert agrees(change, before, after), (kb, metric)


def test_perf_lock_average_is_total_over_contended():
    df = rows("swap_alloc_locks", experiment="perf_lock_after_series")
    for item, g in df.groupby("item"):
        n = one(g, metric="lock_contended_count")["value"]
        total = one(g, metric="lock_wait_total_us")["printed"].split()[0]
        avg = one(g, metric="lock_wait_avg_us")["printed"].split()[0]
        # perf computes avg in integer ns (truncation, up to 0.001 us), then prints 2 decimals.
        tol = half_unit(avg) + half_unit(total) / n + 0.001
        assert abs(float(total) / n - float(avg)) <= tol, (item, total, n, avg)


def test_sysbench_rates_and_the_30_percent_claim():
    df = rows("swap_alloc_locks", experiment="sysbench_mysql")
    v = {(r.variant, r.metric): r.value for r in df.itertuples()}
    for var in ("before", "after"):
        # 16 queries per OLTP transaction, the same ratio in counts and rates
        assert v[(var, "queries_count")] / v[(var, "transactions_count")] == pytest.approx(16, abs=1e-9)
        assert v[(var, "queries_per_s")] / v[(var, "transactions_per_s")] == pytest.approx(16, rel=1e-5)
    speedup = v[("after", "transactions_per_s")] / v[("before", "transactions_per_s")] - 1
    time_saved = 1 - v[("before", "transactions_per_s")] / v[("after", "transactions_per_s")]
    claim = v[("after", "transactions_per_s_change_pct")] / 100
    assert abs(speedup - claim) > 0.1  # the throughput rose 42.6%, not ~30% ...
    assert abs(time_saved - claim) < 0.005  # ... the time per transaction fell 29.9%
    assert "transactions_per_s_change_pct" in mmcost.datasets.source("swap_alloc_locks")["inconsistencies"]


def test_migrc_claims_and_xsbench_numbers():
    df = rows("migrc_tlb")
    v = {(r.variant, r.metric): r.value for r in df.itertuples() if r.metric != "tlb_shootdowns"}
    shoot = df[df["metric"] == "tlb_shootdowns"].groupby("variant")["value"].sum()
    changes = {
        "itlb_flush_count_change_pct": 100 * (v[("after", "itlb_flush_count")] / v[("before", "itlb_flush_count")] - 1),
        "itlb_load_miss_count_change_pct": 100 * (v[("after", "itlb_load_miss_count")] / v[("before", "itlb_load_miss_count")] - 1),
        "tlb_shootdowns_change_pct": 100 * (shoot["after"] / shoot["before"] - 1),
        "runtime_s_change_pct": 100 * (v[("after", "runtime_s")] / v[("before", "runtime_s")] - 1),
    }
    claims = df[df["bound"] == "at_most"]
    assert set(claims["metric"]) == set(changes)
    for c in claims.itertuples():
        assert changes[c.metric] <= c.value, (c.metric, changes[c.metric], c.value)
    for var in ("before", "after"):
        # XSBench: Lookups/s = Lookups / Runtime, rounded
        rate = v[(var, "lookups_count")] / v[(var, "runtime_s")]
        assert abs(rate - v[(var, "lookups_per_s")]) <= 0.5 + rate * half_unit("968.783") / v[(var, "runtime_s")]
        # zsh time: cpu% = (user + sys) / total, printed truncated to an integer
        cpu = 100 * (v[(var, "user_time_s")] + v[(var, "sys_time_s")]) / v[(var, "real_time_s")]
        assert np.floor(cpu) == v[(var, "cpu_pct")]


def test_seed000_reference_cell_is_zero():
    ref = one(rows("small_thp_swapout"), variant="baseline", folio_kb=4)
    assert ref["value"] == 0.0 and ref["baseline"] == "baseline" and ref["baseline_folio_kb"] == 4


@pytest.mark.parametrize("name", mmcost.datasets.names())
def test_listed_inconsistencies_name_real_metrics(name):
    listed = mmcost.datasets.source(name).get("inconsistencies", {})
    present = set(mmcost.datasets.load(name)["metric"])
    assert set(listed) <= present


@pytest.mark.parametrize("name", mmcost.datasets.names())
def test_every_metric_is_in_the_vocabulary(name):
    for metric in set(mmcost.datasets.load(name)["metric"]):
        assert mmcost.metrics.unit_of(metric)  # KeyError if unknown
