"""Every parser on the real-world variations of its input (issue 18): CRLF
line ends, tabs, a unicode minus and no-break spaces from a mail client,
'> ' quoting, a truncated last line, and a 10 MB input. Each parses to the
same numbers as the clean sample, or raises ParseError naming the line."""

import numpy as np
import pandas as pd
import pytest

from mmcost.parse import ParseError

from test_parse_errors import ALL
from test_parse_fuzz import SAMPLES

VARIATIONS = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "tabs": lambda t: t.replace(" ", "\t"),
    "unicode minus and no-break space": lambda t: t.replace("-", "\u2212").replace(" ", "\u00a0", 3),
    "mail quoting": lambda t: "\n".join("> " + line for line in t.split("\n")),
    "twice quoted": lambda t: "\n".join("> > " + line for line in t.split("\n")),
}


def numbers(df: pd.DataFrame) -> np.ndarray:
    return np.sort(df["value"].to_numpy(float))


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
@pytest.mark.parametrize("variation", sorted(VARIATIONS))
def test_variations_parse_to_the_same_numbers(fmt, variation):
    clean = ALL[fmt](SAMPLES[fmt])
    varied = ALL[fmt](VARIATIONS[variation](SAMPLES[fmt]))
    np.testing.assert_array_equal(numbers(varied), numbers(clean))  # NaN (a note) where the clean one has it


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_a_truncated_last_line_parses_what_is_complete_or_names_the_line(fmt):
    text = SAMPLES[fmt].rstrip("\n")
    last = text.rsplit("\n", 1)[-1]
    cut = text[: len(text) - len(last) // 2 - 1]  # half of the last line gone, as a paste cut off
    try:
        df = ALL[fmt](cut)
    except ParseError as exc:
        assert exc.line is not None or "\n" not in cut, f"{fmt}: {exc} names no line"
        return
    assert len(df) > 0 and set(df.columns) >= {"metric", "value"}


@pytest.mark.parametrize("fmt", ["perf_lock_contention", "interrupts_tlb", "vmstat", "usemem", "markdown_table"])
def test_a_ten_megabyte_input(fmt):
    """Sections repeated to 10 MB: the parser reads them all (no quadratic
    blow-up; bench_speed.py does not time it, the suite's time does)."""
    sample = SAMPLES[fmt]
    if fmt == "markdown_table":  # one header, then data rows
        head, row = sample.rsplit("\n", 2)[0], sample.rsplit("\n", 2)[1]
        text = head + "\n" + "\n".join([row] * (10 * 2**20 // len(row)))
        want = len(ALL[fmt](sample)) * (10 * 2**20 // len(row))
    elif fmt in ("interrupts_tlb", "usemem"):
        return  # one record per input by definition: a repeat is a second record, not a bigger one
    else:
        n = 10 * 2**20 // len(sample)
        text = sample * n
        want = None
    try:
        df = ALL[fmt](text)
    except ParseError as exc:  # repeated counters are a duplicate: refused by name, with the line
        assert exc.line is not None
        return
    if want is not None:
        assert len(df) == want
