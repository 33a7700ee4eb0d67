"""Machinery every parser shares: mail unquoting, tokens with line numbers,
numbers as printed, keyed-record scanning, and the tidy output frame."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import schema


class ParseError(ValueError):
    """Raw tool output that cannot be read completely. Names the format and line."""

    def __init__(self, fmt: str, line: int | None, message: str):
        self.format = fmt
        self.line = line
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{fmt}: {where}{message}")


# A mail quote marker: a token of '>' only ("> >> 2506952" in an archive).
_QUOTE = re.compile(r"^>+$")
_LEADING_QUOTE = re.compile(r"^(?:\s*>)+ ?")


@dataclass(frozen=True)
class Tok:
    text: str
    line: int  # 1-based line of the original text


#: characters mail clients and word processors put where a tool printed ASCII
_TYPOGRAPHY = str.maketrans({"\u2212": "-", "\u2012": "-", "\u00a0": " ", "\u202f": " "})


def _check_text(fmt: str, text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{fmt}: text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ParseError(fmt, None, "empty input")
    # a unicode minus or dash and a no-break space read as the ASCII the tool printed
    return text.translate(_TYPOGRAPHY)


def tokens(fmt: str, text) -> list[Tok]:
    """Whitespace tokens without mail quote markers, each with its line number.

    Works the same on proper lines and on an archive's folded text where the
    newlines became spaces and quote markers stand between the values.
    """
    text = _check_text(fmt, text)
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = _LEADING_QUOTE.sub("", line)
        out.extend(Tok(t, lineno) for t in line.split() if not _QUOTE.match(t))
    if not out:
        raise ParseError(fmt, None, "empty input (only quote markers)")
    return out


class Flat:
    """The text unquoted and joined on single spaces, with offsets -> lines.

    Keyword formats (time, sysbench, XSBench, usemem) are read by regex on this
    flat string, so folded and unfolded text read the same.
    """

    def __init__(self, fmt: str, text):
        toks = tokens(fmt, text)
        self.fmt = fmt
        self.text = " ".join(t.text for t in toks)
        self._starts = np.cumsum([0] + [len(t.text) + 1 for t in toks[:-1]])
        self._lines = [t.line for t in toks]

    def line_at(self, offset: int) -> int:
        return self._lines[int(np.searchsorted(self._starts, offset, side="right")) - 1]

    def error(self, offset: int, message: str) -> ParseError:
        return ParseError(self.fmt, self.line_at(offset), message)


@dataclass(frozen=True)
class Keyed:
    """One keyword record: where it starts (anchor) and its complete form (full).

    ``full`` is matched at the anchor's position; an anchor whose full form
    does not match is garbled or truncated output, an error, never skipped.
    """

    anchor: re.Pattern
    full: re.Pattern
    read: object  # callable(match) -> list of row dicts
    #: the shape of a record with its words garbled (usemem's ``N byts / N
    #: usecs =``): found outside every complete record, it is an error too
    tells: tuple[re.Pattern, ...] = ()


def scan_keyed(fmt: str, text, specs: list[Keyed]) -> list[dict]:
    flat = Flat(fmt, text)
    found = []
    for spec in specs:
        for a in spec.anchor.finditer(flat.text):
            m = spec.full.match(flat.text, a.start())
            if m is None:
                snippet = flat.text[a.start() : a.start() + 60]
                raise flat.error(a.start(), f"garbled or truncated record: {snippet!r}")
            found.append((a.start(), spec, m))
    spans = sorted((m.start(), m.end()) for _, _, m in found)
    for spec in specs:
        for tell in spec.tells:
            for t in tell.finditer(flat.text):
                k = bisect.bisect_right(spans, (t.start(), float("inf"))) - 1
                if k < 0 or spans[k][1] <= t.start():
                    snippet = flat.text[t.start() : t.start() + 60]
                    raise flat.error(t.start(), f"garbled or truncated record: {snippet!r}")
    if not found:
        raise ParseError(fmt, None, "no record of this format found")
    found.sort(key=lambda f: f[0])
    rows = []
    for start, spec, m in found:
        try:
            new = spec.read(m)
        except ValueError as exc:
            raise flat.error(start, str(exc)) from None
        for r in new:
            r.setdefault("line", flat.line_at(start))
        rows.extend(new)
    return rows


_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def is_number(s: str) -> bool:
    return bool(_NUMBER.match(s))


def number(s: str) -> float:
    """A number as printed: thousands separators allowed ('1,700,000,000')."""
    if not is_number(s):
        raise ValueError(f"not a number: {s!r}")
    return float(s.replace(",", ""))


def duration_s(s: str) -> float:
    """'16:20.98' (m:s), '1:02:03.5' (h:m:s), '0m16.500s', '141.44s', '120.0012' -> seconds."""
    m = re.fullmatch(r"(?:(\d+)h)?(\d+)m([\d.]+)s", s)
    if m:
        return int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    parts = s.rstrip("s").split(":")
    if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"\d+(?:\.\d+)?", p) for p in parts):
        raise ValueError(f"not a duration: {s!r}")
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + float(p)
    return seconds


def frame(fmt: str, rows: list[dict], context: dict) -> pd.DataFrame:
    """Rows -> the tidy schema, with the caller's context (experiment, variant,
    configuration) filled in every row."""
    allowed = [*schema.COLUMNS, *(c for c in schema.CONFIG_COLUMNS if c not in schema.COLUMNS), "run"]
    unknown = [k for k in context if k not in allowed]
    if unknown:
        raise TypeError(f"{fmt}: unknown column(s) {unknown}; allowed: {allowed}")
    for k, v in context.items():  # one value for every row: a scalar
        if v is not None and not isinstance(v, (str, int, float, np.integer, np.floating)):
            raise TypeError(f"{fmt}: column {k!r} takes one value for every row (a str or a number), "
                            f"got {type(v).__name__}")
        if isinstance(v, (float, np.floating)) and not np.isfinite(v):
            raise ValueError(f"{fmt}: column {k!r} must be finite, got {v!r} (None leaves it empty)")
    if not rows:
        raise ParseError(fmt, None, "nothing parsed")
    for r in rows:
        if np.isinf(r["value"]):
            raise ParseError(fmt, r.get("line"), f"number {r['printed']!r} is out of range")
    df = pd.DataFrame(rows)
    for col in schema.COLUMNS:
        if col in context:
            if col in df.columns and df[col].notna().any():
                raise TypeError(f"{fmt}: column {col!r} is read from the text and cannot be given")
            df[col] = context[col]
        elif col not in df.columns:
            df[col] = pd.NA
    extra = [c for c in df.columns if c not in schema.COLUMNS]
    df = df[list(schema.COLUMNS) + extra]
    try:
        return schema.coerce(df.astype(object).where(df.notna(), None), source=fmt)
    except ValueError as exc:  # e.g. a CPU number too large for Int64
        raise ParseError(fmt, None, str(exc)) from None
