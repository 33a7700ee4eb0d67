"""The ``mmcost`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__


def _reproduce(args: argparse.Namespace) -> int:
    from . import reproduce  # matplotlib is only imported for this command

    out = Path(args.out)
    cache = None if args.no_cache else (Path(args.cache) if args.cache else reproduce.default_cache_dir())
    try:
        reproduce.run(out, only=args.only, jobs=args.jobs, dpi=args.dpi, cache_dir=cache, force=args.force)
    except ValueError as exc:
        print(f"mmcost reproduce: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out / 'report.md'} and its figures")
    return 0


def _list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _integer(option: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not an integer") from None


def _size(option: str, text: str) -> int:
    from .measure.swapout_runs import size_bytes

    try:
        return size_bytes(text)
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not a size (like 256M or 1G)") from None


def _measure_swapout(args: argparse.Namespace) -> int:
    from .measure import MeasureError, swapout
    from .measure.swapout_runs import Stopped

    try:
        processes = [_integer("--processes", x) for x in _list(args.processes)]
        memcg_mb = [_size("--memcg", x) / 2**20 for x in _list(args.memcg)]
        bad = [x for x, mb in zip(_list(args.memcg), memcg_mb) if mb < 1 or mb != int(mb)]
        if bad:
            raise ValueError(f"--memcg: {bad[0]!r} is not a whole number of MiB >= 1 (like 256M)")
        rows = swapout(folio_kb=_list(args.folio), processes=processes, memcg_mb=[int(mb) for mb in memcg_mb],
                       devices=_list(args.device), bytes_per_process=_size("--bytes", args.bytes), reps=args.reps,
                       out=args.out, madvise=args.madvise, usemem=args.usemem, dry_run=args.dry_run, seed=args.seed)
    except (MeasureError, ValueError) as exc:
        print(f"mmcost measure: {exc}", file=sys.stderr)
        return 2
    except Stopped as exc:  # SIGTERM / SIGHUP: the settings were restored on the way out
        print(f"mmcost measure: {exc}; every setting restored (runs so far are in {args.out})", file=sys.stderr)
        return 128 + exc.signum
    if not args.dry_run:
        print(f"{rows['run'].nunique() if len(rows) else 0} runs, {len(rows)} rows appended to {args.out}")
    return 0


def _measure_verify(args: argparse.Namespace) -> int:
    from .measure import verify

    from .measure.verify import read_runs

    try:
        runs = read_runs(args.runs)
        out = verify(runs, args.fit, free=_list(args.free))
    except OSError as exc:
        print(f"mmcost measure verify: --runs {args.runs}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # an unreadable CSV, a query that selects nothing, rows the model cannot take
        print(f"mmcost measure verify: {exc}", file=sys.stderr)
        return 2
    print(out["text"])
    if args.figure:
        out["figure"].savefig(args.figure)
        print(f"wrote {args.figure}")
    return 0


def _measure_restore(args: argparse.Namespace) -> int:
    from .measure import MeasureError, restore

    try:
        restore(dry_run=args.dry_run)
    except (MeasureError, ValueError, OSError) as exc:
        print(f"mmcost measure restore: {exc}", file=sys.stderr)
        return 2
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
    rep.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="studies run in N processes (default: 1)")
    rep.add_argument("--dpi", type=int, default=100, help="resolution of the PNG figures (default: 100)")
    rep.add_argument("--cache", metavar="DIR", help="keep rendered studies here between runs "
                     "(default: $XDG_CACHE_HOME/mmcost); a study reruns when its data or mmcost's code changes")
    rep.add_argument("--no-cache", action="store_true", help="render every study afresh and keep nothing")
    rep.add_argument("--force", action="store_true", help="write into --out even if it is not empty")
    rep.set_defaults(func=_reproduce)
    mea = sub.add_parser("measure", help="run a benchmark on this machine's own kernel, or check the model against it")
    msub = mea.add_subparsers(dest="what", required=True)
    sw = msub.add_parser("swapout", help="the swap-out matrix with its counters (root; every setting restored)")
    sw.add_argument("--folio", default="4K,16K,64K,2M", help="folio sizes (default: 4K,16K,64K,2M)")
    sw.add_argument("--processes", default="1,2", help="writer processes (default: 1,2)")
    sw.add_argument("--memcg", default="256M", help="memcg limits (default: 256M)")
    sw.add_argument("--device", default="zram:lzo-rle", help="zram:<compressor>, comma-separated")
    sw.add_argument("--bytes", default="768M", help="bytes each process writes (default: 768M)")
    sw.add_argument("--reps", type=int, default=3, help="repetitions (default: 3)")
    sw.add_argument("--out", default="runs.csv", help="CSV the rows are appended to (default: runs.csv)")
    sw.add_argument("--madvise", action="store_true", help="madvise(MADV_HUGEPAGE) the writers' memory")
    sw.add_argument("--usemem", metavar="PATH", help="run this usemem binary instead of mmcost-writer")
    sw.add_argument("--dry-run", action="store_true", help="print every change that would be made; change nothing")
    sw.add_argument("--seed", type=int, default=0, help="shuffles the run order (default: 0)")
    sw.set_defaults(func=_measure_swapout)
    ve = msub.add_parser("verify", help="fit the swap model to some runs, predict the others, show the error")
    ve.add_argument("--runs", default="runs.csv", help="rows of mmcost measure swapout (default: runs.csv)")
    ve.add_argument("--fit", default="processes == 1", help="pandas query of the runs to fit (default: processes == 1)")
    ve.add_argument("--figure", metavar="PNG", help="also write throughput vs folio size with the band")
    ve.add_argument("--free", default="reclaim_us_per_folio,core_write_gb_s", metavar="NAMES",
                    help="the swap model's fields to fit, comma-separated "
                    "(default: reclaim_us_per_folio,core_write_gb_s)")
    ve.set_defaults(func=_measure_verify)
    rs = msub.add_parser("restore", help="undo what a killed swapout run left changed, as its journal names it (root)")
    rs.add_argument("--dry-run", action="store_true", help="print what would be restored; change nothing")
    rs.set_defaults(func=_measure_restore)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
