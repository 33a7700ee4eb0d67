"""Keyword-anchored formats: shell ``time``, XSBench, sysbench, usemem."""

from __future__ import annotations

import re

from ._common import Keyed, duration_s, frame, number, scan_keyed

_F = r"\d+(?:\.\d+)?"
_N = r"\d[\d,]*(?:\.\d+)?"
_DUR = r"(?:\d+:)?(?:\d+:)?\d+(?:\.\d+)?"


def _row(metric, unit, printed, value=None, **extra):
    return dict(metric=metric, unit=unit, value=number(printed) if value is None else value, printed=printed, **extra)


# --- shell time -------------------------------------------------------------

_TIME_SPECS = [
    # zsh: 15208.91s user 141.44s system 1564% cpu 16:20.98 total
    Keyed(
        re.compile(rf"(?<![\w.]){_F}s user\b"),
        re.compile(rf"({_F})s user ({_F})s system ({_F})% cpu ({_DUR}) total"),
        lambda m: [
            _row("user_time_s", "s", m[1]),
            _row("sys_time_s", "s", m[2]),
            _row("cpu_pct", "%", m[3]),
            _row("real_time_s", "s", m[4], duration_s(m[4])),
        ],
        # the line with a word garbled ('usr') or a number cut
        tells=(re.compile(rf"(?<![\w.]){_F}s system {_F}% cpu\b"), re.compile(rf"(?<![\w.]){_F}% cpu {_DUR} total\b")),
    ),
    # bash: real 0m16.500s / user 0m1.200s / sys 0m0.300s
    Keyed(
        re.compile(r"\breal \d"),
        re.compile(r"real ((?:\d+h)?\d+m[\d.]+s) user ((?:\d+h)?\d+m[\d.]+s) sys ((?:\d+h)?\d+m[\d.]+s)"),
        lambda m: [
            _row("real_time_s", "s", m[1], duration_s(m[1])),
            _row("user_time_s", "s", m[2], duration_s(m[2])),
            _row("sys_time_s", "s", m[3], duration_s(m[3])),
        ],
        # 'user 0m0.5s' / 'sys 0m0.1s' without the record around them ('rael 0m1.0s')
        tells=(re.compile(r"\b(?:user|sys) (?:\d+h)?\d+m[\d.]+s(?!\S)"),),
    ),
    # GNU time: 15208.91user 141.44system 16:20.98elapsed 1564%CPU (...)
    Keyed(
        re.compile(rf"(?<![\w.]){_F}user\b"),
        re.compile(rf"({_F})user ({_F})system ({_DUR})elapsed ({_F})%CPU"),
        lambda m: [
            _row("user_time_s", "s", m[1]),
            _row("sys_time_s", "s", m[2]),
            _row("real_time_s", "s", m[3], duration_s(m[3])),
            _row("cpu_pct", "%", m[4]),
        ],
        tells=(re.compile(rf"(?<![\w.]){_F}system {_DUR}elapsed\b"), re.compile(rf"(?<![\w.]){_DUR}elapsed {_F}%CPU\b")),
    ),
    # A build script's summary (seed 003): Sys time: 73578.30, Real time: 864.05
    Keyed(
        re.compile(r"\b(?:Sys|Real|User) time:"),
        re.compile(rf"(Sys|Real|User) time: ({_F})"),
        lambda m: [_row(f"{m[1].lower()}_time_s", "s", m[2])],
    ),
]


def time_output(text, **context):
    """Shell ``time`` lines: zsh (``15208.91s user 141.44s system 1564% cpu
    16:20.98 total``), bash (``real 0m1.5s`` ...), GNU ``/usr/bin/time``
    (``1.0user 0.5system 0:02.00elapsed 75%CPU``) and ``Sys time: X, Real
    time: Y`` summaries. Metrics user_time_s, sys_time_s, real_time_s,
    cpu_pct; durations such as ``16:20.98`` become seconds, ``printed`` keeps
    the text."""
    return frame("time", _blocks(scan_keyed("time", text, _TIME_SPECS)), context)


# --- XSBench ------------------------------------------------------------------

_XSBENCH_SPECS = [
    Keyed(re.compile(r"\bThreads:"), re.compile(r"Threads: (\d+)\b"), lambda m: [_row("threads_count", "count", m[1])]),
    Keyed(
        re.compile(r"\bRuntime:"),
        re.compile(rf"Runtime: ({_F}) seconds\b"),
        lambda m: [_row("runtime_s", "s", m[1])],
    ),
    Keyed(re.compile(r"\bLookups:"), re.compile(rf"Lookups: ({_N})(?![\d,])"), lambda m: [_row("lookups_count", "count", m[1])]),
    Keyed(re.compile(r"\bLookups/s:"), re.compile(rf"Lookups/s: ({_N})(?![\d,])"), lambda m: [_row("lookups_per_s", "1/s", m[1])]),
]


def xsbench(text, **context):
    """XSBench's results summary: ``Threads``, ``Runtime: X seconds``,
    ``Lookups``, ``Lookups/s`` (ANL-CESAR/XSBench ``print_results``)."""
    return frame("xsbench", _blocks(scan_keyed("xsbench", text, _XSBENCH_SPECS)), context)


# --- sysbench -----------------------------------------------------------------


def _per_sec(name):
    key = name.replace(" ", "_")
    return Keyed(
        re.compile(rf"\b{name}:"),
        re.compile(rf"{name}: ({_N}) \(({_F}) per sec\.\)"),
        lambda m: [_row(f"{key}_count", "count", m[1]), _row(f"{key}_per_s", "1/s", m[2])],
    )


def _latency(label, key):
    return Keyed(
        re.compile(rf"(?<=\s){re.escape(label)}:|^{re.escape(label)}:"),
        re.compile(rf"{re.escape(label)}: ({_F})(?![\d.])"),
        lambda m: [_row(f"latency_{key}_ms", "ms", m[1])],
    )


_SYSBENCH_SPECS = [
    _per_sec("transactions"),
    _per_sec("queries"),
    _per_sec("ignored errors"),
    _per_sec("reconnects"),
    Keyed(re.compile(r"\btotal time:"), re.compile(rf"total time: ({_F})s"), lambda m: [_row("real_time_s", "s", m[1])]),
    Keyed(
        re.compile(r"\btotal number of events:"),
        re.compile(rf"total number of events: ({_N})(?![\d,])"),
        lambda m: [_row("events_count", "count", m[1])],
    ),
]
# Latency (ms) section: only read when its header is there, so that 'min:'
# elsewhere in a mail is not taken for a latency.
_SYSBENCH_LATENCY = [
    _latency("min", "min"),
    _latency("avg", "avg"),
    _latency("max", "max"),
    _latency("95th percentile", "p95"),
    _latency("sum", "sum"),
]


def sysbench(text, **context):
    """sysbench's summary: ``transactions: N (X per sec.)``, ``queries``,
    ``ignored errors``, ``reconnects``, ``total time``, ``total number of
    events`` and, under ``Latency (ms):``, min/avg/max/95th percentile/sum."""
    specs = _SYSBENCH_SPECS + (_SYSBENCH_LATENCY if "Latency (ms):" in " ".join(str(text).split()) else [])
    return frame("sysbench", _blocks(scan_keyed("sysbench", text, specs)), context)


# --- usemem -------------------------------------------------------------------


def _usemem(m):
    nbytes, usecs, kbs = int(m[1]), int(m[2]), int(m[3])
    # usemem.c output_statistics: throughput = ((bytes * 1000000) >> 10) / usecs
    if usecs == 0 or ((nbytes * 1_000_000) >> 10) // usecs != kbs:
        raise ValueError(f"inconsistent usemem line: {nbytes} bytes / {usecs} usecs != {kbs} KB/s")
    return [
        _row("usemem_bytes", "bytes", m[1]),
        _row("usemem_time_us", "us", m[2]),
        _row("usemem_throughput_kib_s", "KiB/s", m[3]),
    ]


_USEMEM_SPECS = [
    Keyed(
        re.compile(r"(?<!\d)\d+ bytes /"),
        re.compile(r"(\d+) bytes / (\d+) usecs = (\d+) KB/s"),
        _usemem,
        # the line's shape with a word garbled ('byts', 'usec', 'KB/sec') or
        # a number cut: a record that does not read, not prose to skip
        tells=(
            re.compile(r"(?<![\w.])\d+ ?[A-Za-z]+ ?/ ?\d+ ?[A-Za-z]+ ?="),
            re.compile(r"(?<![\w.])\d+ ?u?secs? ?= ?\d"),
            re.compile(r"(?<![\w.])\d+ ?[A-Za-z]+ ?= ?\d+ ?[KMG]i?B/s"),
        ),
    ),
]


def usemem(text, **context):
    """usemem (vm-scalability) per-process lines ``N bytes / N usecs = N KB/s``.

    One block per line (per process). The three numbers are checked against
    usemem.c's own formula, so a garbled digit is caught.
    """
    return frame("usemem", _blocks(scan_keyed("usemem", text, _USEMEM_SPECS)), context)


def _blocks(rows):
    """Number repeated outputs: a new block starts when a metric repeats."""
    block, seen = 0, set()
    for r in rows:
        if r["metric"] in seen:
            block, seen = block + 1, set()
        seen.add(r["metric"])
        r["block"] = block
    return rows
