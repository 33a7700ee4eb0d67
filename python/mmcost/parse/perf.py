"""perf output: ``perf stat`` counter listings and ``perf lock contention`` tables."""

from __future__ import annotations

import math
import re
from decimal import Decimal

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
#: perf's adaptive time units (tools/perf/builtin-lock.c, lock_stat_key_print_time(): h, m, s, ms, us,
#: else an integer of ns) in microseconds, exact as decimals
_WAIT_US = {"ns": Decimal("0.001"), "us": Decimal(1), "ms": Decimal(1000), "s": Decimal(10**6),
            "m": Decimal(60 * 10**6), "h": Decimal(3600 * 10**6)}
_LOCK_TYPE = re.compile(r"^[a-z][\w:-]*$")
_STACK_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+$")  # perf lock contention -v: a caller's stack, one address a line


def _wait_us(value: str, unit: str) -> float:
    """A wait as printed ('7.11', 'ms') in microseconds, converted in decimal (1.53 ms is 1530 us exactly)."""
    return float(Decimal(value.replace(",", "")) * _WAIT_US[unit])


def _row_follows(words: list[str], i: int, stop: int) -> bool:
    """A table row's start ('91  204.62 us') stands somewhere in words[i:stop]."""
    return any(_INTEGER.match(words[k]) and is_number(words[k + 1]) and words[k + 2] in _WAIT_US
               for k in range(i, stop - 2))


def perf_lock_contention(text, **context):
    """``perf lock contention`` tables: ``contended  total wait  max wait  avg
    wait  type  caller`` (or ``name``), one row per call site or lock, waits
    in perf's adaptive units (ns, us, ms, s, m, h). ``... snip ...`` lines
    and ``-v`` stack addresses are skipped. Each table row becomes the
    metrics ``lock_contended_count`` and ``lock_wait_total_us``,
    ``lock_wait_max_us`` and ``lock_wait_avg_us``, every wait converted to
    microseconds (``printed`` keeps the value and unit as printed), with
    ``call_site`` (the last column), ``lock_type`` and ``item`` (row number,
    since a caller can repeat).

    perf's "avg wait" is the total wait over the *contended* acquisitions
    (``tools/perf/builtin-lock.c``: ``wait_time_total / nr_contended``, or
    over the ``contention_end`` events; with BPF,
    ``util/bpf_lock_contention.c`` ``lock_contention_read()``: ``total_time
    / count``), which is what :class:`mmcost.locks.LockSystem` predicts as
    ``lock_wait_avg_us``; its per-acquisition mean is
    ``lock_wait_per_acquisition_us``.

    A line in the table that starts with a number but is not a complete row
    (a truncated or garbled row) is a :class:`ParseError` naming its line
    and text; prose after the table ends it.
    """
    fmt = "perf_lock_contention"
    toks = tokens(fmt, text)
    words = [t.text for t in toks]
    # an archive's folded text has one line: rows are then read by their tokens alone
    folded = len({t.line for t in toks}) == 1
    starts = [k for k in range(len(words)) if words[k : k + len(_LOCK_HEADER)] == _LOCK_HEADER]
    if not starts:
        raise ParseError(fmt, None, "no 'contended total wait max wait avg wait type' header found")

    def line_text(line: int) -> str:
        return " ".join(t.text for t in toks if t.line == line)

    def whole_line(i: int, n: int) -> bool:
        """Tokens i .. i+n-1 are one whole line of the text."""
        line = toks[i].line
        return ((i == 0 or toks[i - 1].line != line) and toks[i + n - 1].line == line
                and (i + n == len(toks) or toks[i + n].line != line))

    rows: list[dict] = []
    item = 0
    for block, h in enumerate(starts):
        i = h + len(_LOCK_HEADER) + 1  # the header's last column: caller / name / symbol / pid ...
        stop = starts[block + 1] if block + 1 < len(starts) else len(toks)
        n_before = len(rows)
        while i < stop:
            w = words[i : min(i + 9, stop)]
            line = toks[i].line
            if w[:3] == ["...", "snip", "..."]:
                i += 3
                continue
            if not folded and len(rows) > n_before and _STACK_ADDRESS.match(w[0]):
                while i < stop and toks[i].line == line:  # '0xffffffff81a2b3c4  _raw_spin_lock+0x1f'
                    i += 1
                continue
            if (len(w) == 9 and _INTEGER.match(w[0])
                    and all(is_number(w[k]) and w[k + 1] in _WAIT_US for k in (1, 3, 5))
                    and _LOCK_TYPE.match(w[7]) and not is_number(w[8]) and (folded or whole_line(i, 9))):
                base = dict(call_site=w[8], lock_type=w[7], item=item, block=block, line=line)
                rows.append(dict(base, metric="lock_contended_count", unit="count", value=number(w[0]), printed=w[0]))
                for k, what in ((1, "total"), (3, "max"), (5, "avg")):
                    rows.append(dict(base, metric=f"lock_wait_{what}_us", unit="us", value=_wait_us(w[k], w[k + 1]),
                                     printed=f"{w[k]} {w[k + 1]}"))
                item += 1
                i += 9
                continue
            if len(rows) == n_before or is_number(words[i]) or _row_follows(words, i + 1, stop):
                # before the first row nothing else may stand; a line that starts with a number and is
                # not a whole row, or any line with rows after it, is a truncated or garbled row
                where = f"{words[i]!r}" if folded else f"{line_text(line)!r}"
                raise ParseError(fmt, line, f"truncated or garbled table row: {where}")
            break  # prose after the table ends it
        if len(rows) == n_before:
            raise ParseError(fmt, toks[h].line, "table header without rows")
    return frame(fmt, rows, context)
