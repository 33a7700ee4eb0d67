"""``mmcost reproduce``: every study's cover-letter tables and figures.

A loop over :mod:`mmcost.studies`: each study returns its sections (a title,
the plain-text table as it would be pasted into an email, optionally a
figure), and its held-out numbers are collected into one table. Everything
goes to ``<out>/report.md`` and the figures beside it (PNG and SVG).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from . import __version__, datasets, studies
from .studies import Section

__all__ = ["Section", "held_out_table", "run"]


def held_out_table(frames: dict[str, pd.DataFrame]) -> str:
    """Every study's held-out numbers, one line each, 80 columns."""
    lines = [f"{'source':<22} {'metric':<26} {'published':>9} {'predicted':>9} {'error':>9}"]
    for name, h in frames.items():
        for r in h.itertuples():
            lines.append(f"{name[:22]:<22} {r.metric[:26]:<26} {r.published:>9.4g} {r.predicted:>9.4g} "
                         f"{r.error:>+9.3g}")
    return "\n".join(lines)


def run(out: Path, only: list[str] | None = None, progress: bool = True) -> str:
    """Write ``out/report.md`` and the figures; returns the report's text."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = studies.names() if not only else list(only)
    lines = [f"# mmcost reproduce (mmcost {__version__})", ""]
    held = {}
    for name in tqdm(names, desc="studies", disable=not progress):
        study = studies.get(name)
        src = datasets.source(name)
        lines += [f"## {name}", "", f"{src['title']}  ", f"{src['author']}, {src['date']}; {src.get('hardware', '')}", ""]
        for s in study.sections():
            lines += [f"### {s.title}", "", "```", s.text.rstrip("\n"), "```", ""]
            if s.figure is not None:
                s.figure.savefig(out / s.figure_name)
                s.figure.savefig((out / s.figure_name).with_suffix(".svg"))
                lines += [f"![{s.title}]({s.figure_name})", ""]
        held[name] = study.held_out()
    lines += ["## held out: what each study predicts without fitting it", "", "```", held_out_table(held), "```", ""]
    text = "\n".join(lines)
    (out / "report.md").write_text(text, encoding="utf-8")
    return text
