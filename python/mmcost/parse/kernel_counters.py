"""Kernel counters read straight from sysfs/procfs: per-size mTHP stats and /proc/vmstat."""

from __future__ import annotations

import re

from .. import metrics
from ._common import ParseError, _check_text, _LEADING_QUOTE, frame

# .../hugepages-64kB/stats/anon_fault_alloc:1234   (grep . <files>)
# .../hugepages-64kB/stats/anon_fault_alloc 1234   (echo $f $(cat $f))
_MTHP = re.compile(r"hugepages-(\d+)kB/stats/([a-z_]+)\s*[:=]?\s*(\S+)\s*$")
# a line naming a stats file with a value, its path garbled (a dash or a
# letter missing: 'hugepages64kB/stats/swpout:5', 'hugepages-64k/stat/...'); a
# command line ('grep . hugepages-*/stats/*') has a glob or no value and is prose
_MTHP_LIKE = re.compile(r"(?:hugepage\S*stat|/stats?/)[^\s*?]*[:=\s]\s*\S+\s*$")
_VMSTAT = re.compile(r"^([a-z][a-z0-9_]*)\s+(\S+)\s*$")


def _lines(fmt: str, text):
    text = _check_text(fmt, text)
    for lineno, line in enumerate(text.splitlines(), start=1):
        yield lineno, _LEADING_QUOTE.sub("", line).strip()


def _count(fmt, lineno, printed) -> int:
    if not re.fullmatch(r"\d+", printed):
        raise ParseError(fmt, lineno, f"counter value {printed!r} is not a non-negative integer")
    return int(printed)


def mthp_stats(text, **context):
    """Per-size mTHP counters from ``/sys/kernel/mm/transparent_hugepage/
    hugepages-<size>kB/stats/`` (Documentation/admin-guide/mm/transhuge.rst),
    as printed by ``grep . hugepages-*/stats/*`` (``path:value``) or
    ``echo $f $(cat $f)`` (``path value``). One row per size and counter:
    ``folio_kb`` from the path; anon_fault_alloc -> fault_alloc_count,
    anon_fault_fallback -> fault_fallback_count, anon_fault_fallback_charge ->
    fault_fallback_charge_count, swpout -> swpout_count, swpout_fallback ->
    swpout_fallback_count, split -> split_count (any other counter:
    ``<name>_count``); ``source_name`` keeps the counter's name.

    Lines that do not name a stats file are ignored before the first and after
    the last counter; a stats line whose value is not an integer, one whose
    path is garbled (``hugepages64kB/stats/swpout:5``), a repeated
    size/counter, or another line between counters is a :class:`ParseError`."""
    fmt = "mthp_stats"
    rows, gaps = [], []
    for lineno, line in _lines(fmt, text):
        m = _MTHP.search(line)
        if m is None:
            if _MTHP_LIKE.search(line) and "*" not in line:
                raise ParseError(fmt, lineno, f"garbled stats line: {line!r}")
            if rows and line:
                gaps.append((lineno, line))
            continue
        if gaps:
            raise ParseError(fmt, gaps[0][0], f"unreadable line between counters: {gaps[0][1]!r}")
        kb, name, printed = int(m[1]), m[2], m[3]
        rows.append(dict(metric=metrics.MTHP_COUNTERS.get(name, f"{name}_count"), unit="count",
                         value=float(_count(fmt, lineno, printed)), printed=printed, folio_kb=kb,
                         source_name=name, line=lineno))
    if not rows:
        raise ParseError(fmt, None, "no hugepages-<size>kB/stats/<counter> line found")
    seen = set()
    for r in rows:
        key = (r["folio_kb"], r["source_name"])
        if key in seen:
            raise ParseError(fmt, r["line"], f"counter {r['source_name']} of {r['folio_kb']}kB appears twice")
        seen.add(key)
        if r["folio_kb"] < 4 or r["folio_kb"] & (r["folio_kb"] - 1):
            raise ParseError(fmt, r["line"], f"folio size {r['folio_kb']}kB is not a power of two >= 4")
    return frame(fmt, rows, context)


def _vmstat_table(fmt, text) -> dict[str, tuple[int, int, str]]:
    table = {}
    for lineno, line in _lines(fmt, text):
        if not line:
            continue
        m = _VMSTAT.match(line)
        if m is None:
            raise ParseError(fmt, lineno, f"not a '<name> <value>' line: {line!r}")
        if m[1] in table:
            raise ParseError(fmt, lineno, f"{m[1]} appears twice")
        table[m[1]] = (_count(fmt, lineno, m[2]), lineno, m[2])
    if not table:
        raise ParseError(fmt, None, "no '<name> <value>' line found")
    return table


def vmstat(text, after=None, **context):
    """``/proc/vmstat``: one snapshot, or the change between two (``text``
    before the run, ``after`` after it), one row per counter:
    ``<name>_count`` (``source_name`` = the vmstat name, e.g. pswpout,
    thp_swpout, thp_swpout_fallback). A delta needs the same counters in both
    snapshots; event counters never go backwards (a reboot or swapped
    arguments raise :class:`ParseError`), while ``nr_*`` gauges may fall
    (``note`` says "gauge change"). The delta is computed here from the two printed
    snapshots; ``printed`` keeps ``before -> after``."""
    fmt = "vmstat"
    first = _vmstat_table(fmt, text)
    if after is None:
        rows = [dict(metric=f"{k}_count", unit="count", value=float(v), printed=p, source_name=k, line=ln)
                for k, (v, ln, p) in first.items()]
        return frame(fmt, rows, context)
    second = _vmstat_table(fmt, after)
    missing = sorted(set(first) ^ set(second))
    if missing:
        raise ParseError(fmt, None, f"the two snapshots differ in counters: {missing[:5]}")
    rows = []
    for k, (v0, _, p0) in first.items():
        v1, ln, p1 = second[k]
        # nr_* items are gauges (mm/vmstat.c vmstat_text: zone/node state) and may
        # fall, as may workingset_nodes (WORKINGSET_NODES, shadow-entry xarray nodes:
        # a node_stat_item without the prefix); the rest are event counters, which only grow
        gauge = k.startswith("nr_") or k == "workingset_nodes"
        if v1 < v0 and not gauge:
            raise ParseError(fmt, ln, f"{k} went backwards ({v0} -> {v1}): snapshots swapped, or a reboot between them")
        rows.append(dict(metric=f"{k}_count", unit="count", value=float(v1 - v0), printed=f"{p0} -> {p1}",
                         source_name=k, line=ln, note="gauge change" if gauge else "delta"))
    return frame(fmt, rows, context)
