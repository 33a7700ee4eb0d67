"""LKP (0-day / lkp-tests) ``%stddev %change`` comparison blocks."""

from __future__ import annotations

import re

from .. import metrics
from ._common import ParseError, frame, is_number, number, tokens

_CHANGE = re.compile(r"^[-+]\d+(?:\.\d+)?%$")
_PCT = re.compile(r"^-?\d+(?:\.\d+)?%$")
_PM = ("±", "+-")


def _value_with_stddev(words, i):
    """``2506952 ± 2%`` / ``2506952 ±2%`` / ``2506952`` -> (value, printed, stddev_pct, next i)."""
    if i >= len(words) or not is_number(words[i]):
        return None
    value, printed, j = words[i], words[i], i + 1
    if j < len(words) and words[j] in _PM and j + 1 < len(words) and _PCT.match(words[j + 1]):
        return value, f"{printed} {words[j]} {words[j + 1]}", float(words[j + 1][:-1]), j + 2
    for pm in _PM:
        if j < len(words) and words[j].startswith(pm) and _PCT.match(words[j][len(pm):]):
            return value, f"{printed} {words[j]}", float(words[j][len(pm):-1]), j + 1
    return value, printed, None, j


def _looks_like_row(words, i) -> bool:
    """A number followed by '±' or a signed change: the start of a row, even if garbled."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return is_number(words[i]) and (nxt.startswith(_PM) or bool(_CHANGE.match(nxt)))


def lkp_compare(text, **context):
    """An LKP comparison block::

                 base            base+patch
         ---------------- --------------------------
                 %stddev     %change         %stddev
           2506952 ±  2%     +28.1%    3212076 ±  7%  vm-scalability.throughput

    Each row gives three tidy rows: the base and patched values (variants
    named from the header, else ``base``/``patched``) with ``stddev_pct``, and
    ``<metric>_change_pct`` with ``baseline`` = the base variant. LKP's
    ``± -1%`` (undefined stddev of a zero mean) is kept as missing with a
    ``note``. Metric names come from :func:`mmcost.metrics.for_lkp`
    (perf-profile.cycles-pp.<chain> -> cycles_share_pct with call_site).
    """
    fmt = "lkp_compare"
    toks = tokens(fmt, text)
    words = [t.text for t in toks]
    dashes = [k for k, w in enumerate(words) if re.fullmatch(r"-{4,}", w)]
    names = ["base", "patched"]
    if dashes and dashes[0] >= 2 and len(dashes) >= 2 and dashes[1] == dashes[0] + 1:
        names = words[dashes[0] - 2 : dashes[0]]
    folded = len({t.line for t in toks}) == 1
    rows: list[dict] = []
    # rows are expected from the '%stddev %change %stddev' header on (or from
    # the first row read): a row-like start there that does not read is an error
    block_end = next((k for k in range(len(words) - 2) if words[k : k + 3] == ["%stddev", "%change", "%stddev"]), None)
    i = 0
    while i < len(words):
        a = _value_with_stddev(words, i)
        if a and a[3] < len(words) and _CHANGE.match(words[a[3]]):
            change_at = a[3]
            b = _value_with_stddev(words, change_at + 1)
            if b is None or b[3] >= len(words) or is_number(words[b[3]]) or words[b[3]] in _PM:
                raise ParseError(fmt, toks[i].line, f"row truncated after {words[change_at]!r}")
            name = words[b[3]]
            after = b[3] + 1
            if after < len(words) and (words[after].startswith(_PM) or (not folded and toks[after].line == toks[b[3]].line)):
                # LKP ends a row with the metric's name: a '± N%' or a word after
                # it on the same line means a word was inserted into the row
                raise ParseError(fmt, toks[i].line, f"unreadable comparison row: {' '.join(words[i : after + 1])!r} "
                                 f"has {words[after]!r} after the metric name")
            metric, call_site = metrics.for_lkp(name)
            line = toks[i].line
            common = dict(source_name=name, call_site=call_site, line=line, item=len(rows) // 3)
            unit = metrics.unit_of(metric) if metric in metrics.METRICS else None
            for variant, (value, printed, sd, _) in zip(names, (a, b)):
                note = None
                if sd is not None and sd < 0:  # LKP's marker for an undefined %stddev
                    sd, note = None, "LKP printed a negative %stddev (undefined: zero mean)"
                rows.append(dict(common, variant=variant, metric=metric, unit=unit, value=number(value),
                                 printed=printed, stddev_pct=sd, note=note))
            rows.append(dict(common, variant=names[1], metric=metric + metrics.CHANGE_SUFFIX, unit="%",
                             value=float(words[change_at][:-1]), printed=words[change_at], baseline=names[0]))
            i = block_end = b[3] + 1
            continue
        if block_end is not None and _looks_like_row(words, i):
            raise ParseError(fmt, toks[i].line, f"unreadable comparison row at {words[i]!r}")
        i += 1
    if not rows:
        raise ParseError(fmt, None, "no '<base> [± N%] <change>% <patched> [± N%] <metric>' row found")
    return frame(fmt, rows, context)
