"""Each parser on the exact text of the seed emails reproduces every number
of the hand-typed transcription in data/ (two independent readings agree)."""

import re

import numpy as np
import pandas as pd
import pytest

import mmcost
from mmcost import parse


def assert_same(parsed: pd.DataFrame, expected: pd.DataFrame, keys: list[str], printed: bool = True):
    """Every expected row appears in parsed with the same value (and printed text)."""
    cols = keys + ["value"] + (["printed"] if printed else [])
    got = parsed[cols].astype({k: str for k in keys}).reset_index(drop=True)
    want = expected[cols].astype({k: str for k in keys}).reset_index(drop=True)
    assert len(got) == len(want), (len(got), len(want))
    merged = want.merge(got, on=keys, how="left", suffixes=("", "_parsed"), validate="one_to_one")
    assert merged["value_parsed"].notna().all(), merged[merged["value_parsed"].isna()]
    np.testing.assert_array_equal(merged["value"].to_numpy(float), merged["value_parsed"].to_numpy(float))
    if printed:
        assert (merged["printed"] == merged["printed_parsed"]).all(), merged[merged["printed"] != merged["printed_parsed"]]


def data(name, **where):
    df = mmcost.datasets.load(name)
    for k, v in where.items():
        df = df[df[k] == v]
    return df


def test_seed000_markdown_tables(seed_text):
    df = parse.markdown_table(seed_text("000"), metric="usemem_throughput_kib_s_change_pct")
    assert set(df["block"]) == {0, 1}
    assert list(df["variant_detail"].iloc[:3]) == ["v6.6-rc4+anonfolio", "+ patch 1", "+ patch 2"]
    size = {"4K Page": 4, "64K THP": 64, "2M THP": 2048}
    want = data("small_thp_swapout").set_index(["folio_kb", "variant"])
    for block, col in ((0, "value"), (1, "stddev_pct")):
        part = df[df["block"] == block]
        assert len(part) == 9
        for _, r in part.iterrows():
            assert r["unit"] == "%"
            assert want.loc[(size[r["row"]], r["variant"]), col] == r["value"]


def test_seed001_perf_stat_before_and_after(seed_text):
    text = seed_text("001")
    spans = re.findall(r"(BEFORE|AFTER)(.*?)TLB:", text)
    assert [s[0] for s in spans] == ["BEFORE", "AFTER"]
    for (_label, span), variant in zip(spans, ("before", "after")):
        got = parse.perf_stat(span)
        assert_same(got, data("migrc_tlb", experiment="xsbench_perf_stat", variant=variant), ["metric", "source_name"])


def test_seed001_tlb_shootdown_rows(seed_text):
    got = parse.interrupts_tlb(seed_text("001"))
    for block, variant in ((0, "before"), (1, "after")):
        assert_same(got[got["block"] == block], data("migrc_tlb", experiment="xsbench_interrupts", variant=variant),
                    ["metric", "cpu"])


@pytest.mark.parametrize("parser,experiment", [(parse.xsbench, "xsbench_summary"), (parse.time_output, "xsbench_time")])
def test_seed001_xsbench_and_time(seed_text, parser, experiment):
    got = parser(seed_text("001"))
    for block, variant in ((0, "before"), (1, "after")):
        assert_same(got[got["block"] == block], data("migrc_tlb", experiment=experiment, variant=variant), ["metric"])


def test_seed003_perf_lock_contention(seed_text):
    got = parse.perf_lock_contention(seed_text("003"))
    assert_same(got, data("swap_alloc_locks", experiment="perf_lock_after_series"), ["metric", "item", "call_site"])


def test_seed003_build_times(seed_text):
    got = parse.time_output(seed_text("003"))
    order = [(4, "before"), (4, "after"), (64, "before"), (64, "after")]
    for block, (kb, variant) in enumerate(order):
        want = data("swap_alloc_locks", experiment="make_j96", folio_kb=kb, variant=variant)
        want = want[~want["metric"].str.endswith("_change_pct")]
        assert_same(got[got["block"] == block], want, ["metric"])


def test_seed003_sysbench(seed_text):
    got = parse.sysbench(seed_text("003"))
    for block, variant in ((0, "before"), (1, "after")):
        want = data("swap_alloc_locks", experiment="sysbench_mysql", variant=variant)
        assert_same(got[got["block"] == block], want[~want["metric"].str.endswith("_change_pct")], ["metric"])


def test_seed004_lkp_block_both_copies(seed_text):
    got = parse.lkp_compare(seed_text("004"))
    assert set(got["variant"]) == {"base", "base+patch"}
    want = data("swapcache_wb_tags", experiment="vm_scalability_swap_w_seq")
    first, second = got[got["item"] < 6], got[got["item"] >= 6].assign(item=lambda d: d["item"] - 6)
    assert_same(first, want, ["metric", "variant", "item"])  # the '±' copy prints like the transcription
    assert_same(second, want, ["metric", "variant", "item"], printed=False)  # the '+-' copy
    for part in (first, second):
        m = part.merge(want, on=["metric", "variant", "item"], suffixes=("", "_want"))
        pd.testing.assert_series_equal(m["stddev_pct"], m["stddev_pct_want"], check_names=False)
        assert (m["call_site"].fillna("") == m["call_site_want"].fillna("")).all()
