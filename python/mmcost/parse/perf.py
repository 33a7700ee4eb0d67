"""perf output: ``perf stat`` counter listings and ``perf lock contention`` tables."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

from .. import metrics
from ._common import _LEADING_QUOTE, ParseError, Tok, _check_text, frame, is_number, number, tokens

_EVENT = re.compile(r"^[A-Za-z_][\w.\-:/=,@]*$")
_INTEGER = re.compile(r"^\d[\d,]*$")
_UNITS = {"msec": "ms", "ns": "ns"}  # task-clock, cpu-clock in msec; duration_time & co in ns
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
    """``perf stat`` counters, as printed for people, with ``-x<sep>`` (CSV)
    or with ``-j`` (JSON); the format is recognised from the text.

    Human format: ``<count> <event>`` lines (``40417078 itlb.itlb_flush``,
    ``1,234.56 msec task-clock``), with ``# ...`` notes, ``( +- 0.12% )``
    run-to-run variation (into ``stddev_pct``), ``<not counted>``/``<not
    supported>`` (value missing, ``note`` says why) and the ``seconds time
    elapsed/user/sys`` lines. Text around the listing (a header, a mail's
    prose) is ignored, but anything unreadable between the first and the last
    counter, or a number left dangling after the last one, is a
    :class:`ParseError`.

    CSV (``perf stat -x,``; ``;`` and tab separators too) and JSON (``perf
    stat -j``, one object per line) give the same rows as the human format;
    the fields are those of perf's ``tools/perf/util/stat-display.c``
    (``print_counter_value_csv``/``_json``, ``print_noise_pct_*``,
    ``print_aggr_id_*``): ``value,unit,event[,cgroup][,variance%],run,
    pcnt,metric,metric-unit`` and ``"counter-value"``, ``"unit"``,
    ``"event"``, ``"variance"``. Per-CPU output (``-A``: ``CPU3,`` /
    ``"cpu" : "3"``) fills ``cpu``; per-socket/die/core/node/thread
    aggregates (``S0-D0``, ``N1``, ``comm-pid``) go to ``row``; interval
    output (``-I``) gives one ``block`` per interval. The derived metric at
    the end of a line (``insn per cycle``) is not read, as in the human
    format. The tool events ``duration_time``/``user_time``/``system_time``
    (in ns) become real_time_s/user_time_s/sys_time_s in seconds, as the
    human format's ``seconds time elapsed`` lines do. A line shaped like a
    record that does not read, or a JSON line that does not load, is a
    :class:`ParseError` naming it.

    Metric names come from :data:`mmcost.metrics.PERF_EVENTS` (others:
    snake_case + ``_count``; ``msec`` events ``<event>_ms``); the event as
    printed is in ``source_name``.
    """
    fmt = "perf_stat"
    lines = [(n, _LEADING_QUOTE.sub("", line).strip()) for n, line in
             enumerate(_check_text(fmt, text).splitlines(), start=1)]
    if any(line.startswith("{") and ('"counter-value"' in line or '"event"' in line) for _, line in lines):
        return frame(fmt, _perf_stat_json(fmt, lines), context)
    for sep in (",", ";", "\t"):
        if any(_csv_record(line.split(sep)) for _, line in lines if sep in line):
            return frame(fmt, _perf_stat_csv(fmt, lines, sep), context)
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


#: perf's tool events, in ns in CSV/JSON: the rows of the human format's footer
_TOOL_SECONDS = {"duration_time": "real_time_s", "user_time": "user_time_s", "system_time": "sys_time_s"}
_NOT = ("<not counted>", "<not supported>")
_CSV_UNIT = re.compile(r"^[A-Za-z%/][\w%/ .-]*$|^$")
# what print_aggr_id_csv prints before the value (after an interval's timestamp
# or 'summary'): CPU<n> (-A), S<s>[-D<d>[-C<c>|-L<l>-ID<i>|-CLS<c>]] or N<n> and
# the number of counters aggregated, or comm-pid (--per-thread)
_CSV_PREFIX = re.compile(
    r"^(?:(?P<ts>\d+\.\d+)\x00|summary\x00)?"
    r"(?:CPU(?P<cpu>\d+)\x00|(?P<aggr>S\d+(?:-D\d+(?:-(?:C\d+|L\d+-ID\d+|CLS\d+))?)?|N\d+)\x00(?:\d+\x00)?"
    r"|(?P<thread>[^\x00]+-\d+)\x00)?$"
)
_CSV_EVENT = re.compile(r"^[A-Za-z_][\w.\-:/=,@]*(?: \[[\w.-]+\])?$")


def _csv_record(f: list[str]):
    """(index of the value, prefix match, event, fields between the event and
    the run time) of one CSV line, or None. perf has printed the run time and
    the share of it counted on every line since 3.x: a line without them is cut."""
    for k in range(min(len(f) - 2, 5)):
        v = f[k]
        if not (v in _NOT or (is_number(v) and "," not in v)) or not _CSV_UNIT.match(f[k + 1]):
            continue
        pre = _CSV_PREFIX.match("".join(x + "\x00" for x in f[:k]))
        if pre is None:
            continue
        j = k + 2
        event = f[j]
        while event.count("/") % 2 and j + 1 < len(f):  # 'cpu/event=0x3c,umask=0x0/' split by ','
            j += 1
            event += "," + f[j]
        tail = f[j + 1 :]
        # after the event: [cgroup] [variance%] run pcnt [metric value, metric unit]
        # (print_cgroup, print_noise_pct_csv, print_running_csv, print_metric_csv)
        runs = [i for i in range(min(len(tail) - 1, 3)) if re.fullmatch(r"\d+", tail[i])
                and re.fullmatch(r"\d+(?:\.\d+)?", tail[i + 1])]
        if _CSV_EVENT.match(event) and runs and len(tail) - runs[0] - 2 <= 2:
            return k, pre, event, tail[: runs[0]]
    return None


def _counter_row(printed: str, unit: str, event: str, line: int, **extra) -> dict:
    """One counter as the human format's rows name it."""
    if printed in _NOT:
        what = printed[1:-1]
        return dict(metric=metrics.for_perf_event(event), unit="count", value=math.nan, printed=printed,
                    note=f"perf: {what}", source_name=event, line=line, **extra)
    value = number(printed)
    if unit == "":
        metric, unit = metrics.for_perf_event(event), "count"
    elif unit == "ns" and event in _TOOL_SECONDS:
        metric, unit, value = _TOOL_SECONDS[event], "s", value / 1e9
    else:
        unit = _UNITS.get(unit, unit)
        metric = f"{metrics.snake(event)}_{metrics.snake(unit)}"
    return dict(metric=metric, unit=unit, value=value, printed=printed, source_name=event, line=line, **extra)


def _perf_stat_csv(fmt, lines, sep) -> list[dict]:
    rows, blocks = [], {}
    for lineno, line in lines:
        if sep not in line:
            continue
        f = line.split(sep)
        rec = _csv_record(f)
        if rec is None:
            # a continuation line (the derived metrics of the counter above:
            # empty value, unit and event) or prose; a line with a counter's
            # shape (a value among its first fields) that does not read is an error
            head = [x for x in f[:4] if x]
            if len(f) >= 3 and any(x in _NOT or is_number(x) for x in head) and not _csv_continuation(f):
                raise ParseError(fmt, lineno, f"unreadable perf stat -x{sep!r} line: {line!r}")
            continue
        k, pre, event, tail = rec
        extra = {}
        if pre["cpu"] is not None:
            extra["cpu"] = int(pre["cpu"])
        if pre["aggr"] or pre["thread"]:
            extra["row"] = pre["aggr"] or pre["thread"]
        if pre["ts"] is not None:
            extra["block"] = blocks.setdefault(pre["ts"], len(blocks))
        if tail and re.fullmatch(r"\d+(?:\.\d+)?%", tail[-1]):  # the variance of perf stat -r
            extra["stddev_pct"] = float(tail[-1][:-1])
        rows.append(_counter_row(f[k], f[k + 1], event, lineno, **extra))
    if not rows:
        raise ParseError(fmt, None, "no perf stat -x counter line found")
    return rows


def _csv_continuation(f) -> bool:
    for k in range(min(len(f) - 2, 5)):
        if _CSV_PREFIX.match("".join(x + "\x00" for x in f[:k])) and f[k] == f[k + 1] == f[k + 2] == "":
            return True
    return False


_JSON_NAN = re.compile(r":\s*-?nan\b")
_JSON_AGGR = ("core", "cache", "cluster", "die", "socket", "node", "thread")


def _perf_stat_json(fmt, lines) -> list[dict]:
    rows, blocks = [], {}
    for lineno, line in lines:
        if not line.startswith("{"):
            if '"counter-value"' in line:
                raise ParseError(fmt, lineno, f"perf stat -j record does not start a line: {line!r}")
            continue
        try:  # perf prints a nan metric as a bare 'nan' (print_metric_json '%f')
            obj = json.loads(_JSON_NAN.sub(": NaN", line))
        except json.JSONDecodeError as exc:
            raise ParseError(fmt, lineno, f"perf stat -j line is not JSON ({exc.msg}): {line!r}") from None
        if not isinstance(obj, dict):
            raise ParseError(fmt, lineno, f"perf stat -j line is not an object: {line!r}")
        if "event" not in obj:
            if "counter-value" in obj:
                raise ParseError(fmt, lineno, f"counter without an event name: {line!r}")
            continue  # a metric-only line, a metric group's header, {"unit" : "sec"}
        value, unit, event = obj.get("counter-value"), obj.get("unit", ""), obj["event"]
        if not (isinstance(value, str) and (value in _NOT or re.fullmatch(r"\d+(?:\.\d+)?", value))) \
                or not isinstance(unit, str) or not isinstance(event, str) or not event:
            raise ParseError(fmt, lineno, f"unreadable counter {value!r} {unit!r} {event!r}")
        extra = {}
        if "cpu" in obj:
            if not re.fullmatch(r"\d+", str(obj["cpu"])):
                raise ParseError(fmt, lineno, f"cpu {obj['cpu']!r} is not a CPU number")
            extra["cpu"] = int(obj["cpu"])
        aggr = next((obj[a] for a in _JSON_AGGR if a in obj), None)
        if aggr is not None:
            extra["row"] = str(aggr)
        if "interval" in obj:
            extra["block"] = blocks.setdefault(obj["interval"], len(blocks))
        if "variance" in obj:
            if not isinstance(obj["variance"], (int, float)) or isinstance(obj["variance"], bool):
                raise ParseError(fmt, lineno, f"variance {obj['variance']!r} is not a number")
            extra["stddev_pct"] = float(obj["variance"])
        rows.append(_counter_row(value, unit, event, lineno, **extra))
    if not rows:
        raise ParseError(fmt, None, "no perf stat -j counter found")
    return rows


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
