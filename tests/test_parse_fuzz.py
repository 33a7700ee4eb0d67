"""Property-based: random and mutated text never makes a parser raise anything
but ParseError, never hangs, and never returns a NaN without a note."""

import math

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmcost.parse import ParseError

from test_parse_errors import ALL
from test_parse_samples import LKP_COMMITS, PERF_LOCK_MIXED, PERF_STAT_64CPU, SYSBENCH_FULL, XSBENCH_FULL

SAMPLES = {
    "lkp_compare": LKP_COMMITS,
    "perf_lock_contention": PERF_LOCK_MIXED,
    "perf_stat": PERF_STAT_64CPU,
    "interrupts_tlb": "  CPU0 CPU1\nTLB:  98765  87654  TLB shootdowns\n",
    "time": "1.50s user 0.25s system 175% cpu 1:00.00 total\nreal 0m1.0s\nuser 0m0.5s\nsys 0m0.1s\n",
    "sysbench": SYSBENCH_FULL,
    "xsbench": XSBENCH_FULL,
    "usemem": "1073741824 bytes / 1234567 usecs = 849347 KB/s\n",
    "markdown_table": "| a | b | c |\n| | x | y |\n|:--|--:|--:|\n| 4K | 1.0% | 2 GB/s |\n",
    "mthp_stats": "hugepages-64kB/stats/anon_fault_alloc:6300\nhugepages-64kB/stats/swpout 12\n",
    "vmstat": "pswpout 1000\nthp_swpout 2\n",
}

PIECES = list("0123456789.,:%|->+± \n\tabcdefTLBxKsuμ()#/_=") + ["TLB:", "seconds", " us ", "± ", "|---|", "TLB shootdowns"]
FRAGMENTS = st.lists(st.sampled_from(PIECES), max_size=80).map("".join)
settings.register_profile("parsers", max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("parsers")


def check(fmt, text):
    try:
        df = ALL[fmt](text)
    except ParseError:
        return
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    for _, r in df.iterrows():
        if math.isnan(r["value"]):
            assert isinstance(r.get("note"), str), f"{fmt} returned NaN without a note: {r.to_dict()}"


@st.composite
def mutated(draw, fmt):
    text = SAMPLES[fmt]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        op = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        piece = draw(st.lists(st.sampled_from(PIECES), max_size=4).map("".join))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "replace":
            text = text[:i] + piece + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


def test_samples_parse_cleanly():
    for fmt, text in SAMPLES.items():
        assert len(ALL[fmt](text)) > 0, fmt


@given(fmt=st.sampled_from(sorted(ALL)), text=FRAGMENTS)
def test_random_text(fmt, text):
    check(fmt, text)


@given(data=st.data(), fmt=st.sampled_from(sorted(ALL)))
def test_mutated_samples(data, fmt):
    check(fmt, data.draw(mutated(fmt)))


@given(fmt=st.sampled_from(sorted(ALL)), text=st.text(max_size=200))
def test_arbitrary_unicode(fmt, text):
    check(fmt, text)
