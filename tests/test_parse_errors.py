"""Garbled, truncated or empty input: ParseError naming the format and line."""

import re

import pytest

from mmcost import parse
from mmcost.parse import ParseError

ALL = {
    "lkp_compare": parse.lkp_compare,
    "perf_lock_contention": parse.perf_lock_contention,
    "perf_stat": parse.perf_stat,
    "interrupts_tlb": parse.interrupts_tlb,
    "time": parse.time_output,
    "sysbench": parse.sysbench,
    "xsbench": parse.xsbench,
    "usemem": parse.usemem,
    "markdown_table": parse.markdown_table,
    "mthp_stats": parse.mthp_stats,
    "vmstat": parse.vmstat,
}


@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("text", ["", "   \n\t", "> >\n>\n", "hello world, nothing to see\n"])
def test_empty_or_unrelated_text(fmt, text):
    with pytest.raises(ParseError, match=rf"^{fmt}: ") as info:
        ALL[fmt](text)
    assert isinstance(info.value, ValueError) and info.value.format == fmt


@pytest.mark.parametrize("fmt", ALL)
@pytest.mark.parametrize("bad", [None, b"40417078 itlb.itlb_flush", 12, ["TLB:"]])
def test_wrong_type(fmt, bad):
    with pytest.raises(TypeError, match="str"):
        ALL[fmt](bad)


@pytest.mark.parametrize(
    "fmt,text,line",
    [
        ("perf_stat", "40417078 itlb.itlb_flush\n234852566\n", 2),
        ("perf_stat", "1 a.b\n??? !!!\n2 c.d\n", 2),
        ("perf_stat", "1 a.b ( +- x% )\n", 1),
        ("interrupts_tlb", "TLB: 1 2 3\n", 1),
        ("interrupts_tlb", "TLB: 1 2\n 3x 4 TLB shootdowns\n", 2),
        ("interrupts_tlb", "TLB: TLB shootdowns\n", 1),
        ("time", "ok\n15208.91s user 141.44s system\n", 2),
        ("time", "real 0m1.5s\nuser 0m1.0s\n", 1),
        ("sysbench", "\ntransactions: 755630 (6292.11 per\n", 2),
        ("xsbench", "Threads: 16\nRuntime: abc seconds\n", 2),
        ("usemem", "1073741824 bytes / 1234567 usecs = 849348 KB/s\n", 1),
        ("usemem", "x\n1073741824 bytes / 12345", 2),
        ("lkp_compare", "  2506952 ± 2%  +28.1%  3212076 ± 7%  a.b\n  1207402 ± 7%  +22.3%\n", 2),
        ("lkp_compare", "  1 ± 2%  +28.1%  2 ± 7%  a.b\n  1207402 ± 7%  +22.3%  14765x78 ± 6%  c.d\n", 2),
        ("perf_lock_contention", "contended total wait max wait avg wait type caller\n  91 204.62 us 4.51\n", 2),
        ("perf_lock_contention", "contended total wait max wait avg wait type caller\n", 1),
        ("markdown_table", "| a | b |\n|---|---|\n| x | 1.0% |\n| y | n/a |\n", 4),
        ("markdown_table", "|---|---|\n| x | 1 |\n", 1),
        ("markdown_table", "| a | b |\n|---|---|\n", 2),
    ],
)
def test_garbled_or_truncated_names_the_line(fmt, text, line):
    with pytest.raises(ParseError, match=rf"^{fmt}: line {line}: ") as info:
        ALL[fmt](text)
    assert info.value.line == line


def test_context_must_be_schema_columns():
    with pytest.raises(TypeError, match="unknown column"):
        parse.usemem("1073741824 bytes / 1234567 usecs = 849347 KB/s", colour="red")
    with pytest.raises(TypeError, match="read from the text"):
        parse.interrupts_tlb("TLB: 1 TLB shootdowns", metric="other")


def test_huge_numbers_are_rejected_not_infinite():
    with pytest.raises(ParseError, match="out of range"):
        parse.interrupts_tlb("TLB: " + "9" * 400 + " TLB shootdowns")


def test_error_message_is_one_clear_line():
    with pytest.raises(ParseError) as info:
        parse.perf_stat("1 a.b\n??? !!!\n2 c.d\n")
    assert re.fullmatch(r"perf_stat: line 2: unreadable token '\?\?\?' inside the counter listing", str(info.value))
