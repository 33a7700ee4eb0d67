"""Plain-text tables to paste into an email: fixed width, no colour.

- :func:`compare` turns tidy rows of two variants into one row per metric;
- :func:`lkp_block` prints them like LKP's ``%stddev %change %stddev`` block
  (what mm reviewers read every day), optionally with the model's change;
- :func:`markdown_table` prints a pivot like seed 000's tables, optionally with
  the model's value beside each measured one;
- :func:`fixed_width` prints any frame as a plain fixed-width table (tabulate)
  of at most 80 columns, blanks for missing values and integers as integers;
- :func:`wrap` breaks prose to 80 columns.

The first two parse back with :mod:`mmcost.parse`.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd

from . import metrics as vocabulary


def _label(r) -> str:
    name = r.get("source_name")
    if isinstance(name, str) and name:
        return name
    site = r.get("call_site")
    return r["metric"] + (f".{site}" if isinstance(site, str) and site else "")


def compare(df: pd.DataFrame, base: str, patched: str, *, keys: tuple[str, ...] = ("metric", "call_site", "item")) -> pd.DataFrame:
    """One row per metric (and call site / item) with ``name, base, base_sd_pct,
    change_pct, patched, patched_sd_pct``. The published change is used where
    the data has one, else it is computed from the two values."""
    if not isinstance(df, pd.DataFrame) or df.empty:
        raise ValueError("compare needs a non-empty DataFrame")
    for v in (base, patched):
        if v not in set(df["variant"].dropna()):
            raise ValueError(f"variant {v!r} not in the data; have {sorted(set(df['variant'].dropna()))}")
    keys = [k for k in keys if k in df.columns]
    plain = df[~df["metric"].str.endswith(vocabulary.CHANGE_SUFFIX)]
    changes = df[df["metric"].str.endswith(vocabulary.CHANGE_SUFFIX)].copy()
    changes["metric"] = changes["metric"].str.removesuffix(vocabulary.CHANGE_SUFFIX)
    out = []
    for key, g in plain.groupby(keys, dropna=False, sort=False):
        b, p = g[g["variant"] == base], g[g["variant"] == patched]
        if len(b) != 1 or len(p) != 1:
            continue
        b, p = b.iloc[0], p.iloc[0]
        ch = changes
        for k, v in zip(keys, key if isinstance(key, tuple) else (key,)):
            ch = ch[ch[k].isna()] if pd.isna(v) else ch[ch[k] == v]
        ch = ch[(ch["variant"] == patched) & (ch["baseline"] == base)] if len(ch) else ch
        published = float(ch["value"].iloc[0]) if len(ch) == 1 else math.nan
        computed = 100 * (p["value"] / b["value"] - 1) if b["value"] else math.nan
        out.append(dict(name=_label(b), metric=b["metric"], base=b["value"], base_sd_pct=b.get("stddev_pct", math.nan),
                        change_pct=published if np.isfinite(published) else computed,
                        patched=p["value"], patched_sd_pct=p.get("stddev_pct", math.nan)))
    if not out:
        raise ValueError(f"no metric has exactly one {base!r} and one {patched!r} row")
    return pd.DataFrame(out)


BACKSLASH = "\\"


def _num(v: float) -> str:
    if not np.isfinite(v):
        return "nan"
    return f"{int(v)}" if float(v).is_integer() else f"{v:.2f}"


def _sd(v) -> str:
    if v is None or pd.isna(v):
        return "      "
    return f"± {v:2.0f}%"


def lkp_block(rows: pd.DataFrame, base: str = "base", patched: str = "patched", *, model: pd.DataFrame | None = None) -> str:
    """LKP's comparison layout from :func:`compare` rows. ``model`` (same
    length) may add ``model_change_pct`` with ``model_lo``/``model_hi``: a
    column ``model %change [lo, hi]`` before the metric name."""
    need = ["name", "base", "base_sd_pct", "change_pct", "patched", "patched_sd_pct"]
    if not isinstance(rows, pd.DataFrame) or rows.empty or not set(need) <= set(rows.columns):
        raise ValueError(f"lkp_block needs the rows of compare() (columns {need}); "
                         f"got {list(rows.columns) if isinstance(rows, pd.DataFrame) else type(rows).__name__}")
    if model is not None and len(model) != len(rows):
        raise ValueError("model must have one row per compared metric")
    w = max([10] + [len(_num(v)) for v in (*rows["base"], *rows["patched"])])
    left = w + 7  # value + ' ± NN%'
    right = 11 + w + 7  # '  +NN.N%   ' + value + ' ± NN%'
    head = [f"{base:>{left}} {patched:>{right}}", f"{'-' * left} {'-' * right}",
            f"{'%stddev':>{left}} {'%change':>11} {'%stddev':>{w + 6}}",
            f"{BACKSLASH:>{left - 4}} {'|':>10} {BACKSLASH:>{w + 2}}"]
    if model is not None:
        head[2] += f"  {'model %change [90% band]':>26}"
    lines = list(head)
    for i, r in enumerate(rows.itertuples()):
        line = f"{_num(r.base):>{w}} {_sd(r.base_sd_pct)} {r.change_pct:>+9.1f}% {_num(r.patched):>{w}} {_sd(r.patched_sd_pct)}"
        if model is not None:
            m = model.iloc[i]
            if np.isfinite(m["model_change_pct"]):
                line += f"  {m['model_change_pct']:>+8.1f}% [{m['model_lo']:+.1f}, {m['model_hi']:+.1f}]"
            else:
                line += f"  {'':>26}"
        lines.append(f"{line}  {r.name}")
    return "\n".join(x.rstrip() for x in lines) + "\n"


def markdown_table(df: pd.DataFrame, *, row: str, column: str, value: str = "value", fmt: str = "{:.1f}",
                   row_labels: dict | None = None, corner: str | None = None, model: pd.DataFrame | None = None,
                   model_value: str = "best") -> str:
    """A pipe table: one row per ``row`` value, one column per ``column`` value
    (in order of appearance), cells ``fmt``-formatted (unit included in fmt,
    e.g. ``"{:.1f}%"``). ``model``: a frame with the same ``row``/``column``
    keys whose ``model_value`` follows each measured cell in parentheses,
    ``-44.1% (-44.7%)``, so the table stays as narrow as the measured one."""
    if df.empty:
        raise ValueError("markdown_table needs rows")
    cols = list(dict.fromkeys(df[column]))
    rows = list(dict.fromkeys(df[row]))
    cell = {(r, c): v for r, c, v in zip(df[row], df[column], df[value])}
    mcell = {} if model is None else {(r, c): v for r, c, v in zip(model[row], model[column], model[model_value])}
    header = [corner or row]
    header += [str(c) for c in cols]
    body = []
    for r in rows:
        line = [str((row_labels or {}).get(r, r))]
        for c in cols:
            text = fmt.format(cell[(r, c)]) if (r, c) in cell else ""
            if (r, c) in mcell:
                text += f" ({fmt.format(mcell[(r, c)])})"
            line.append(text.strip())
        body.append(line)
    widths = [max(len(x[i]) for x in [header] + body) for i in range(len(header))]
    def fmt_row(cells):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    sep = "|:" + "-" * (widths[0] + 1) + "|" + "|".join("-" * (w + 1) + ":" for w in widths[1:]) + "|"
    return "\n".join([fmt_row(header), sep] + [fmt_row(b) for b in body]) + "\n"


#: the widest line of a table or paragraph meant for an email
WIDTH = 80


def fixed_width(df: pd.DataFrame, *, headers: dict | None = None, floatfmt: str | dict = "g",
                width: int = WIDTH) -> str:
    """``df`` as a plain fixed-width table (tabulate's ``simple`` format):
    ``headers`` renames columns (a header may hold a newline for two lines),
    ``floatfmt`` is one format or one per column, missing values print as
    blanks and columns of whole numbers as integers. A table wider than
    ``width`` raises ValueError naming its width: shorten the headers or drop
    columns, a wrapped table is unreadable."""
    import tabulate as tab

    if not isinstance(df, pd.DataFrame) or df.empty:
        raise ValueError("fixed_width needs a non-empty DataFrame")
    cols = list(df.columns)
    names = [str((headers or {}).get(c, c)) for c in cols]
    fmts = [floatfmt.get(c, "g") if isinstance(floatfmt, dict) else floatfmt for c in cols]
    body = []
    for row in df.itertuples(index=False):
        cells = []
        for v, f in zip(row, fmts):
            if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
                cells.append("")
            elif isinstance(v, (bool, np.bool_)):
                cells.append(str(bool(v)))
            elif isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer()
                                                       and f == "g" and abs(v) < 1e15):
                cells.append(f"{int(v)}")
            elif isinstance(v, (float, np.floating)):
                cells.append(format(float(v), f))
            else:
                cells.append(str(v))
        body.append(cells)
    numeric = [all(_is_number(r[i]) for r in body if r[i] != "") for i in range(len(cols))]
    padding, tab.MIN_PADDING = tab.MIN_PADDING, 0  # headers as wide as their text: the columns already have a gap
    try:
        text = tab.tabulate(body, headers=names, tablefmt="simple", disable_numparse=True,
                            colalign=["right" if n else "left" for n in numeric])
    finally:
        tab.MIN_PADDING = padding
    widest = max(len(line) for line in text.splitlines())
    if widest > width:
        raise ValueError(f"fixed_width: the table is {widest} columns wide, more than {width}; "
                         f"columns {names}")
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True


def wrap(text: str, width: int = WIDTH, indent: str = "") -> str:
    """``text`` broken at spaces to ``width`` columns, continuation lines
    indented by ``indent`` beyond the first line's own indentation."""
    lead = text[: len(text) - len(text.lstrip())]
    return "\n".join(textwrap.wrap(text.strip(), width, initial_indent=lead, subsequent_indent=lead + indent,
                                    break_long_words=False, break_on_hyphens=False))
