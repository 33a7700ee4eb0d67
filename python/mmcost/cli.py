"""The ``mmcost`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, datasets


def _reproduce(args: argparse.Namespace) -> int:
    """Fit every registered model to every bundled source and write the report.

    No domain model (locks, TLB, swap) is registered yet, so this lists the
    bundled sources and the available solvers, and writes that as report.md.
    """
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# mmcost reproduce", "", f"mmcost {__version__}", "", "## Bundled sources", ""]
    for name in datasets.names():
        src = datasets.source(name)
        df = datasets.load(name)
        lines.append(f"- `{name}`: {src['title']} ({src['author']}, {src['date']}), {len(df)} measurements")
    lines += [
        "",
        "## Models",
        "",
        "- analytic queueing solvers (mmcost.queueing): mva, birth_death, finite_source,",
        "  machine_repairman, usl, usl_fit",
        "- parsers (mmcost.parse): lkp_compare, perf_lock_contention, perf_stat, interrupts_tlb,",
        "  time_output, sysbench, xsbench, usemem, markdown_table",
        "- lock, TLB and swap models: not yet registered; nothing is fitted.",
        "",
    ]
    text = "\n".join(lines)
    (out / "report.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"wrote {out / 'report.md'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmcost",
        description="Mechanism-level cost models of Linux MM (TLB flush batching, lock contention, swap throughput).",
    )
    parser.add_argument("--version", action="version", version=f"mmcost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="fit every model to the bundled data; write tables and figures")
    rep.add_argument("--out", default="mmcost-out", help="output folder (default: ./mmcost-out)")
    rep.set_defaults(func=_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
