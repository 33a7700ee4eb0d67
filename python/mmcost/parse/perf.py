"""perf output: ``perf stat`` counter listings and ``perf lock contention`` tables."""

from __future__ import annotations

import math
import re

from .. import metrics
from ._common import ParseError, Tok, frame, is_number, number, tokens

_EVENT = re.compile(r"^[A-Za-z_][\w.\-:/=,@]*$")
_INTEGER = re.compile(r"^\d[\d,]*$")
_UNITS = {"msec": "ms"}  # perf prints task-clock and cpu-clock in msec
_SECONDS = {"elapsed": "real_time_s", "user": "user_time_s", "sys": "sys_time_s"}


def _skip_comment(toks: list[Tok], i: int, folded: bool) -> int:
    """Skip a '# ...' annotation: to the end of its line, or in folded text up
    to the next integer counter followed by an event name."""
    line = toks[i].line
    i += 1
    while i < len(toks):
        if not folded and toks[i].line != line:
            break
        if toks[i].text == "(" and i + 1 < len(toks) and toks[i + 1].text == "+-":
            break  # perf stat -r prints the run-to-run variation after the note
        if folded and _INTEGER.match(toks[i].text) and i + 1 < len(toks) and _EVENT.match(toks[i + 1].text):
            break
        i += 1
    return i


def perf_stat(text, **context):
    """``perf stat`` counters: ``<count> <event>`` lines (``40417078
    itlb.itlb_flush``, ``1,234.56 msec task-clock``), with ``# ...`` notes,
    ``( +- 0.12% )`` run-to-run variation (into ``stddev_pct``), ``<not
    counted>``/``<not supported>`` (value missing, ``note`` says why) and the
    ``seconds time elapsed/user/sys`` lines. Metric names come from
    :data:`mmcost.metrics.PERF_EVENTS` (others: snake_case + ``_count``); the
    event as printed is in ``source_name``.

    Text around the listing (a header, a mail's prose) is ignored, but
    anything unreadable between the first and the last counter, or a number
    left dangling after the last one, is a :class:`ParseError`.
    """
    fmt = "perf_stat"
    toks = tokens(fmt, text)
    folded = len({t.line for t in toks}) == 1 and len(toks) > 2
    rows: list[dict] = []
    end = 0  # token index just after the last counter read
    stray: list[int] = []  # indices of unreadable tokens after the first counter

    def add(i, j, **row):
        nonlocal end
        rows.append(dict(row, line=toks[i].line))
        end = j
        return j

    i = 0
    while i < len(toks):
        t = toks[i].text
        ahead = [x.text for x in toks[i + 1 : i + 4]] + ["", "", ""]
        if is_number(t) and ahead[0] == "seconds" and ahead[1] == "time" and ahead[2] == "elapsed":
            i = add(i, i + 4, metric="real_time_s", unit="s", value=number(t), printed=t, source_name="seconds time elapsed")
        elif is_number(t) and ahead[0] == "+-" and is_number(ahead[1]) and ahead[2] == "seconds":
            # perf stat -r: '4.5612 +- 0.0123 seconds time elapsed'
            rows.append(dict(metric="real_time_s", unit="s", value=number(t), stddev=number(ahead[1]),
                             printed=f"{t} +- {ahead[1]}", source_name="seconds time elapsed", line=toks[i].line))
            i = end = i + 6 if [x.text for x in toks[i + 4 : i + 6]] == ["time", "elapsed"] else i + 3
        elif is_number(t) and ahead[0] == "seconds" and ahead[1] in ("user", "sys"):
            i = add(i, i + 3, metric=_SECONDS[ahead[1]], unit="s", value=number(t), printed=t,
                    source_name=f"seconds {ahead[1]}")
        elif is_number(t) and ahead[0] in _UNITS and _EVENT.match(ahead[1]):
            unit = _UNITS[ahead[0]]
            i = add(i, i + 3, metric=f"{metrics.snake(ahead[1])}_{unit}", unit=unit, value=number(t), printed=t,
                    source_name=ahead[1])
        elif is_number(t) and _EVENT.match(ahead[0]) and ahead[0] != "seconds":
            i = add(i, i + 2, metric=metrics.for_perf_event(ahead[0]), unit="count", value=number(t), printed=t,
                    source_name=ahead[0])
        elif t == "<not" and ahead[0] in ("counted>", "supported>") and _EVENT.match(ahead[1]):
            i = add(i, i + 3, metric=metrics.for_perf_event(ahead[1]), unit="count", value=math.nan,
                    printed=f"<not {ahead[0]}", note=f"perf: not {ahead[0][:-1]}", source_name=ahead[1])
        elif rows and t == "#":
            i = end = _skip_comment(toks, i, folded)
        elif rows and t == "(" and ahead[0] == "+-" and ahead[2] == ")":
            if not re.fullmatch(r"\d+(?:\.\d+)?%", ahead[1]):
                raise ParseError(fmt, toks[i].line, f"bad run-to-run variation {ahead[1]!r}")
            rows[-1]["stddev_pct"] = float(ahead[1][:-1])
            i = end = i + 4
        elif rows and re.fullmatch(r"\(\d+(?:\.\d+)?%\)", t):  # counter multiplexing share
            i = end = i + 1
        else:
            if rows:
                stray.append(i)
            i += 1
    if not rows:
        raise ParseError(fmt, None, "no '<count> <event>' counter found")
    for k in stray:
        if k < end:
            raise ParseError(fmt, toks[k].line, f"unreadable token {toks[k].text!r} inside the counter listing")
        if k == end and is_number(toks[k].text):
            raise ParseError(fmt, toks[k].line, f"value {toks[k].text!r} without an event name (truncated?)")
    return frame(fmt, rows, context)


_LOCK_HEADER = ["contended", "total", "wait", "max", "wait", "avg", "wait", "type"]
_WAIT_UNITS = ("ns", "us", "ms", "s")
_LOCK_TYPE = re.compile(r"^[a-z][\w:-]*$")


def perf_lock_contention(text, **context):
    """``perf lock contention`` tables: ``contended  total wait  max wait  avg
    wait  type  caller`` (or ``name``/``symbol``/``pid``), one row per lock or
    call site, waits with their printed unit (ns, us, ms, s). ``... snip ...``
    lines are skipped. Each table row becomes the metrics lock_contended_count
    and lock_wait_{total,max,avg}_<unit> with ``call_site`` (the last column),
    ``lock_type`` and ``item`` (row number, since a caller can repeat).
    """
    fmt = "perf_lock_contention"
    toks = tokens(fmt, text)
    words = [t.text for t in toks]
    starts = [k for k in range(len(words)) if words[k : k + len(_LOCK_HEADER)] == _LOCK_HEADER]
    if not starts:
        raise ParseError(fmt, None, "no 'contended total wait max wait avg wait type' header found")
    rows: list[dict] = []
    item = 0
    for block, h in enumerate(starts):
        i = h + len(_LOCK_HEADER) + 1  # the header's last column: caller / name / symbol / pid ...
        stop = starts[block + 1] if block + 1 < len(starts) else len(toks)
        n_before = len(rows)
        while i < stop:
            w = words[i : i + 9]
            if w[:3] == ["...", "snip", "..."]:
                i += 3
                continue
            if len(w) == 9 and _INTEGER.match(w[0]) and all(
                is_number(w[k]) and w[k + 1] in _WAIT_UNITS for k in (1, 3, 5)
            ) and _LOCK_TYPE.match(w[7]):
                line = toks[i].line
                base = dict(call_site=w[8], lock_type=w[7], item=item, block=block, line=line)
                rows.append(dict(base, metric="lock_contended_count", unit="count", value=number(w[0]), printed=w[0]))
                for k, what in ((1, "total"), (3, "max"), (5, "avg")):
                    rows.append(dict(base, metric=f"lock_wait_{what}_{w[k + 1]}", unit=w[k + 1], value=number(w[k]),
                                     printed=f"{w[k]} {w[k + 1]}"))
                item += 1
                i += 9
                continue
            if len(rows) == n_before or _INTEGER.match(words[i]):
                # before the first row nothing else may stand; a number that
                # does not start a full row is a garbled or truncated row
                raise ParseError(fmt, toks[i].line, f"unreadable table row starting at {words[i]!r}")
            break  # prose after the table ends it
        if len(rows) == n_before:
            raise ParseError(fmt, toks[h].line, "table header without rows")
    return frame(fmt, rows, context)
