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


MTHP = "/sys/kernel/mm/transparent_hugepage/hugepages-{kb}kB/stats/{name}:{v}\n"


@pytest.mark.parametrize(
    "fmt,text,line",
    [
        # usemem: 'byts' for 'bytes', 'usec' for 'usecs', a cut number, among good lines
        ("usemem", "1073741824 bytes / 1234567 usecs = 849347 KB/s\n"
                   "1073741824 byts / 1234567 usecs = 849347 KB/s\n", 2),
        ("usemem", "x\n1073741824 bytes / 1234567 usec = 849347 KB/s\n"
                   "1073741824 bytes / 1234567 usecs = 849347 KB/s\n", 2),
        ("usemem", "1073741824 bytes / 1234567 usecs = 849347 KB/s\n"
                   "10737 / 1234567 usecs = 849347 KB/s\n", 2),
        # mthp_stats: a dash missing, 'stat' for 'stats', after the last good line or between
        ("mthp_stats", MTHP.format(kb=64, name="anon_fault_alloc", v=10)
                       + "/sys/kernel/mm/transparent_hugepage/hugepages64kB/stats/swpout:5\n", 2),
        ("mthp_stats", "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/stat/swpout:5\n"
                       + MTHP.format(kb=64, name="swpout", v=3), 1),
        ("mthp_stats", MTHP.format(kb=64, name="swpout", v=3) + "hugepages-32k/stats/swpout 5\n", 2),
        # vmstat: a value cut at the end of the text, in a snapshot or a delta
        ("vmstat", "pswpout 100\nthp_swpout 1\npswpin\n", 3),
        ("vmstat", "pswpout 100\nthp_swpout 1\npswpin 1x\n", 3),
        # LKP: a word inserted into a row, before the stddev, after the name, or in the first row
        ("lkp_compare", "  2506952 ± 2%  +28.1%  3212076 ± 7%  a.b\n"
                        "  1207402 ± 7%  +22.3%  1476578 junk ± 6%  c.d\n", 2),
        ("lkp_compare", "  2506952 ± 2%  +28.1%  3212076 ± 7%  a.b\n"
                        "  1207402 ± 7%  +22.3%  1476578 ± 6%  junk c.d\n", 2),
        ("lkp_compare", "   %stddev     %change         %stddev\n"
                        "  2506952 junk ± 2%  +28.1%  3212076 ± 7%  a.b\n"
                        "  1207402 ± 7%  +22.3%  1476578 ± 6%  c.d\n", 2),
        # time: a word garbled in one record among good ones (zsh, bash, GNU)
        ("time", "1.50s user 0.25s system 175% cpu 1:00.00 total\n1.50s usr 0.25s system 175% cpu 1:00.00 total\n", 2),
        ("time", "real 0m1.0s\nuser 0m0.5s\nsys 0m0.1s\nrael 0m1.0s\nuser 0m0.5s\nsys 0m0.1s\n", 5),
        ("time", "1.0user 0.5system 0:02.00elapsed 75%CPU\n1.0usr 0.5system 0:02.00elapsed 75%CPU\n", 2),
        # /proc/interrupts: the row label garbled
        ("interrupts_tlb", "TLB: 1 2 TLB shootdowns\nTBL: 3 4 TLB shootdowns\n", 2),
        ("interrupts_tlb", "TLB 3 4 TLB shootdowns\nTLB: 1 2 TLB shootdowns\n", 1),
        # perf stat -x, / -j: a garbled or cut line among good ones
        ("perf_stat", "15432,,context-switches,128006310000,100.00,,\n41275x3903,,dTLB-loads,1280,100.00,,\n", 2),
        ("perf_stat", "15432,,context-switches,128006310000,100.00,,\n4127553903,,dTLB-loads,12800x,100.00,,\n", 2),
        ("perf_stat", "15432,,context-switches,128006310000,100.00,,\n4127553903,,dTLB-loads\n", 2),
        ("perf_stat", '{"counter-value" : "15432.000000", "unit" : "", "event" : "cs"}\n{"counter-value" : "41', 2),
        ("perf_stat", '{"counter-value" : "15432.000000", "unit" : "", "event" : "cs"}\n'
                      '{"counter-value" : "12x", "unit" : "", "event" : "cycles"}\n', 2),
        # markdown: a row's leading '|' lost
        ("markdown_table", "| a | b |\n|---|---|\n| x | 1 |\n y | 2 |\n| z | 3 |\n", 4),
    ],
)
def test_garbled_record_among_good_ones_is_an_error(fmt, text, line):
    """A line shaped like a record of the format that does not read is an
    error naming it, not a row silently dropped from the frame."""
    with pytest.raises(ParseError, match=rf"^{fmt}: line {line}: ") as info:
        ALL[fmt](text)
    assert info.value.line == line


@pytest.mark.parametrize(
    "fmt,text,n",
    [
        # the commands that print the counters, prose around them: not records
        ("mthp_stats", "$ grep . /sys/kernel/mm/transparent_hugepage/hugepages-*/stats/swpout\n"
                       + MTHP.format(kb=64, name="swpout", v=3) + "\nhugepages-64kB/enabled:always\n", 1),
        ("usemem", "we ran 8 processes / 2 nodes\n1073741824 bytes / 1234567 usecs = 849347 KB/s\n", 3),
        ("markdown_table", "see | this\n| a | b |\n|---|---|\n| x | 1 |\n", 1),
        ("lkp_compare", "  2506952 ± 2%  +28.1%  3212076 ± 7%  a.b > 1207402 ± 7%  +22.3%  1476578 ± 6%  c.d", 6),
    ],
)
def test_prose_near_records_is_not_an_error(fmt, text, n):
    assert len(ALL[fmt](text)) == n
