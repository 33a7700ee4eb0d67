"""``/proc/interrupts`` TLB rows and markdown tables."""

from __future__ import annotations

import bisect
import re

from ._common import ParseError, _check_text, _LEADING_QUOTE, frame, number, tokens


_CPU = re.compile(r"CPU\d+")


def interrupts_tlb(text, **context):
    """The ``TLB shootdowns`` row of ``/proc/interrupts``, any number of CPUs::

        TLB:    1364803    1303670 ...   TLB shootdowns

    also wrapped over several lines as in a mail. One row per CPU (metric
    ``tlb_shootdowns``, ``cpu`` column), one block per ``TLB:`` row. CPU
    numbers come from a ``CPU0 CPU1 ...`` header when one with the same count
    precedes the row, else 0..N-1.
    """
    fmt = "interrupts_tlb"
    toks = tokens(fmt, text)
    words = [t.text for t in toks]
    starts = [k for k, w in enumerate(words) if w == "TLB:"]
    if not starts:
        raise ParseError(fmt, None, "no 'TLB:' row found")
    # CPU<n> header tokens in order, with their positions: each row looks up
    # the ones before it by bisection, so the work is linear in the text (a
    # scan of all earlier words per row made it quadratic: 320 KiB took 10 s)
    cpu_at = [k for k, w in enumerate(words) if _CPU.fullmatch(w)]
    cpu_num = [int(words[k][3:]) for k in cpu_at]
    rows, ends = [], set()
    for block, s in enumerate(starts):
        i, values = s + 1, []
        while i < len(words) and re.fullmatch(r"\d+", words[i]):
            values.append(i)
            i += 1
        if words[i : i + 2] != ["TLB", "shootdowns"]:
            got = words[i] if i < len(words) else "end of text"
            raise ParseError(fmt, toks[min(i, len(toks) - 1)].line, f"expected a count or 'TLB shootdowns', got {got!r}")
        if not values:
            raise ParseError(fmt, toks[s].line, "TLB row without per-CPU counts")
        ends.add(i)
        n_header = bisect.bisect_left(cpu_at, s)  # CPU<n> tokens before this row
        cpus = cpu_num[n_header - len(values) : n_header] if n_header >= len(values) else range(len(values))
        for cpu, k in zip(cpus, values):
            rows.append(dict(metric="tlb_shootdowns", unit="count", value=number(words[k]), printed=words[k], cpu=cpu,
                             block=block, line=toks[k].line))
    for k in range(len(words) - 1):
        if words[k] == "TLB" and words[k + 1] == "shootdowns" and k not in ends:
            # a row whose 'TLB:' is garbled ('TBL:', 'TLB') would be dropped
            raise ParseError(fmt, toks[k].line, "'TLB shootdowns' without its 'TLB:' row (garbled row label?)")
    return frame(fmt, rows, context)


_SEPARATOR = re.compile(r"^\s*:?-+:?\s*$")
_CELL_NUMBER = re.compile(r"^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*(%|[A-Za-z/]+)?$")


def markdown_table(text, metric=None, **context):
    """Markdown (pipe) tables, as in seed 000, proper or folded onto one line.

    The column count comes from the ``|:---|---:|`` separator, so a table
    folded into one line by a mail archive is still split into rows. Header
    rows above the separator name the columns: the first header row gives
    ``variant``, further header rows are joined into ``variant_detail``. The
    first column is the row label (``row``). Every other body cell must be a
    number, optionally with a unit (``9.1%``, ``12 GB/s``): the number goes to
    ``value``, the unit to ``unit``, the cell to ``printed``. ``metric`` names
    what the table measures (default ``value``). Several tables give several
    blocks; prose between them ends a table.
    """
    fmt = "markdown_table"
    text = _check_text(fmt, text)
    # Join the unquoted lines on spaces (what a mail archive's folding does
    # anyway) and split on '|': rows are then separated by one blank cell.
    pieces, starts, pos = [], [], 0
    for line in text.splitlines():
        line = re.sub(r"(?:(?<=\s)|^)>+(?=\s|$)", " ", _LEADING_QUOTE.sub("", line))
        pieces.append(line)
        starts.append(pos)
        pos += len(line) + 1
    flat = " ".join(pieces)
    cells: list[tuple[str, int]] = []  # (cell text, line number)
    pos = 0
    for part in flat.split("|"):
        cells.append((part, bisect.bisect_right(starts, pos)))
        pos += len(part) + 1
    seps = [k for k in range(len(cells)) if _SEPARATOR.match(cells[k][0])]
    if not seps:
        raise ParseError(fmt, None, "no '|---|' separator row found")
    runs, k = [], 0
    while k < len(seps):
        j = k
        while j + 1 < len(seps) and seps[j + 1] == seps[j] + 1:
            j += 1
        runs.append((seps[k], seps[j] - seps[k] + 1))
        k = j + 1
    rows, used = [], set()  # used: lines a table was read from
    for block, (start, ncols) in enumerate(runs):
        headers = []
        h = start - 1  # the boundary before the separator row
        while h - ncols >= 0 and not cells[h][0].strip():
            chunk = [c.strip() for c, _ in cells[h - ncols : h]]
            if any(_SEPARATOR.match(c) for c in chunk):
                break
            headers.insert(0, chunk)
            h -= ncols + 1
        if not headers:
            raise ParseError(fmt, cells[start][1], "separator row without a header row above it")
        b = start + ncols  # boundary after the separator
        n_body = 0
        while b + ncols < len(cells) and not cells[b][0].strip():
            chunk = cells[b + 1 : b + 1 + ncols]
            if any(_SEPARATOR.match(c) for c, _ in chunk):
                break
            label = chunk[0][0].strip()
            for col, (cell, lineno) in enumerate(chunk[1:], start=1):
                m = _CELL_NUMBER.match(cell.strip())
                if m is None:
                    raise ParseError(fmt, lineno, f"cell {cell.strip()!r} (row {label!r}) is not a number")
                rows.append(dict(metric=metric or "value", unit=m.group(2) or "", value=number(m.group(1)),
                                 printed=cell.strip(), row=label, variant=headers[0][col],
                                 variant_detail=" / ".join(hr[col] for hr in headers[1:]) or None,
                                 block=block, line=lineno))
            n_body += 1
            b += ncols + 1
        if n_body == 0:
            raise ParseError(fmt, cells[start][1], "table without body rows")
        used.update(line for _, line in cells[max(h, 0) : b + 1])
    for lineno, line in enumerate(pieces, start=1):
        # a pipe-table row no table read (a '|' lost, a cell too many) is not prose
        if lineno not in used and re.fullmatch(r"\s*\|.*\|.*|.*\|.*\|\s*", line):
            raise ParseError(fmt, lineno, f"table row outside a readable table: {line.strip()!r}")
    return frame(fmt, rows, context)
