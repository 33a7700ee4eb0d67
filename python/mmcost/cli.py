"""The ``mmcost`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__


def _reproduce(args: argparse.Namespace) -> int:
    from . import reproduce  # matplotlib is only imported for this command

    out = Path(args.out)
    reproduce.run(out, only=args.only)
    print(f"wrote {out / 'report.md'} and its figures")
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
    rep.add_argument("--only", action="append", metavar="ID", help="run only this study (repeatable)")
    rep.set_defaults(func=_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
