"""The ``mmcost`` command."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from . import __version__


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error as one line (``mmcost reproduce: error:
    argument --jobs/-j: ...``) and exit status 2, the usage left to ``--help``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _bad(message: str):
    return argparse.ArgumentTypeError(message)


def _int_in(lo: int, hi: int):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise _bad(f"{text!r} is not an integer") from None
        if not lo <= value <= hi:
            raise _bad(f"{value} is outside [{lo}, {hi}]")
        return value

    return parse


def _nonempty_path(text: str) -> str:
    if not text.strip():
        raise _bad("an empty path")
    return text


def _fail(command: str, option: str, message: str) -> int:
    print(f"mmcost {command}: error: argument {option}: {message}", file=sys.stderr)
    return 2


def _check_reproduce(args: argparse.Namespace) -> tuple[str, str] | None:
    """The first bad argument of ``reproduce`` as (option, message), checked
    before any study runs."""
    from . import studies

    known = studies.names()
    for name in args.only or []:
        if name not in known:
            return "--only", f"no study {name!r}; known: {', '.join(known)}"
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return "--out", f"{out} is a file, not a folder"
    if out.is_dir() and any(out.iterdir()) and not args.force:
        return "--out", f"{out} is not empty (a previous report?); pass --force to overwrite it, or choose another folder"
    if args.cache is not None:
        if args.no_cache:
            return "--cache", "given with --no-cache; choose one"
        cache = Path(args.cache)
        if cache.exists() and not cache.is_dir():
            return "--cache", f"{cache} is a file, not a folder"
    return None


def _reproduce(args: argparse.Namespace) -> int:
    bad = _check_reproduce(args)
    if bad:
        return _fail("reproduce", *bad)
    from . import reproduce  # matplotlib is only imported for this command

    out = Path(args.out)
    cache = None if args.no_cache else (Path(args.cache) if args.cache else reproduce.default_cache_dir())
    if cache is not None:
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _fail("reproduce", "--cache", f"cannot create {cache} ({exc.strerror or exc})")
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
        value = size_bytes(text)
    except ValueError:
        value = -1
    if value <= 0:
        raise ValueError(f"{option}: {text!r} is not a size (like 256M or 1G)")
    return value


def _check_swapout(args: argparse.Namespace):
    """Every argument of ``measure swapout`` read and checked before the
    machine is touched: (folio_kb, processes, memcg_mb, devices, bytes), or
    raises ValueError naming the option."""
    from .measure.swapout_runs import size_kb

    def listed(option, text):
        items = _list(text)
        if not items:
            raise ValueError(f"{option}: empty list")
        return items

    folio_kb = []
    for x in listed("--folio", args.folio):
        try:
            kb = size_kb(x)
        except ValueError:
            raise ValueError(f"--folio: {x!r} is not a size (like 4K, 64K, 2M)") from None
        # a folio is a power-of-two number of 4 KiB pages (mTHP orders up to the PMD size)
        if kb < 4 or kb & (kb - 1) or kb > 2**20:
            raise ValueError(f"--folio: {x!r} is not a power of two from 4K to 1G")
        folio_kb.append(kb)
    processes = [_integer("--processes", x) for x in listed("--processes", args.processes)]
    if any(not 1 <= p <= 4096 for p in processes):
        raise ValueError(f"--processes: {args.processes!r}: each count must be in [1, 4096]")
    memcg_mb = []
    for x in listed("--memcg", args.memcg):
        nbytes = _size("--memcg", x)
        if nbytes < 2**20 or nbytes % 2**20:
            raise ValueError(f"--memcg: {x!r} is not a whole number of MiB >= 1M")
        memcg_mb.append(nbytes // 2**20)
    devices = listed("--device", args.device)
    for d in devices:
        if not re.fullmatch(r"zram(?::[a-z0-9][a-z0-9_-]*)?", d):
            raise ValueError(f"--device: {d!r} is not zram or zram:<compressor> (like zram:lzo-rle, zram:zstd)")
    nbytes = _size("--bytes", args.bytes)
    if nbytes < 4096:
        raise ValueError(f"--bytes: {args.bytes!r} is less than one 4K page")
    if args.usemem is not None:
        if not Path(args.usemem).is_file() or not os.access(args.usemem, os.X_OK):
            raise ValueError(f"--usemem: {args.usemem!r} is not an executable file")
    out = Path(args.out)
    if out.is_dir():
        raise ValueError(f"--out: {args.out!r} is a folder; name a CSV file")
    if not out.parent.is_dir():
        raise ValueError(f"--out: the folder of {args.out!r} does not exist")
    if args.machine is not None:
        from .measure.profile import profile_id

        if not Path(args.machine).is_file():
            raise ValueError(f"--machine: {args.machine!r} is not a file (mmcost measure machine --out writes one)")
        try:
            profile_id(args.machine)
        except ValueError as exc:
            raise ValueError(f"--machine: {exc}") from None
    return folio_kb, processes, memcg_mb, devices, nbytes


def _measure_swapout(args: argparse.Namespace) -> int:
    """``measure swapout`` and ``measure swapin``: one checked matrix, run by args.run."""
    from .measure import MeasureError, swapin, swapout
    from .measure.swapout_runs import Stopped

    try:
        folio_kb, processes, memcg_mb, devices, nbytes = _check_swapout(args)
        extra = {}
        if args.what == "swapin":
            extra["patterns"] = _list(args.pattern)
            if not extra["patterns"] or any(p not in ("seq", "rand") for p in extra["patterns"]):
                raise ValueError(f"--pattern: {args.pattern!r}: give seq, rand or seq,rand")
        else:
            extra = dict(madvise=args.madvise, usemem=args.usemem, warm=not args.no_warm)
    except ValueError as exc:
        option, _, message = str(exc).partition(": ")
        return _fail(f"measure {args.what}", option, message)
    try:
        rows = (swapin if args.what == "swapin" else swapout)(
            folio_kb=folio_kb, processes=processes, memcg_mb=memcg_mb, devices=devices, bytes_per_process=nbytes,
            reps=args.reps, out=args.out, dry_run=args.dry_run, seed=args.seed, allow_busy=args.allow_busy,
            profile=args.machine, **extra)
    except (MeasureError, ValueError) as exc:
        print(f"mmcost measure: {exc}", file=sys.stderr)
        return 2
    except Stopped as exc:  # SIGTERM / SIGHUP: the settings were restored on the way out
        print(f"mmcost measure: {exc}; every setting restored (runs so far are in {args.out})", file=sys.stderr)
        return 128 + exc.signum
    if not args.dry_run:
        print(f"{rows['run'].nunique() if len(rows) else 0} runs, {len(rows)} rows appended to {args.out}")
    return 0


_DEFAULT_FIT = "processes == 1"


def _measure_verify(args: argparse.Namespace) -> int:
    from .measure import verify

    import pandas as pd

    from .measure.verify import read_runs

    figure = Path(args.figure) if args.figure else None
    if figure is not None:
        if figure.suffix.lower() not in (".png", ".svg", ".pdf"):
            return _fail("measure verify", "--figure", f"{args.figure!r}: name a .png, .svg or .pdf file")
        if not figure.parent.is_dir():
            return _fail("measure verify", "--figure", f"the folder of {args.figure!r} does not exist")
    try:
        runs = read_runs(args.runs)
    except OSError as exc:
        return _fail("measure verify", "--runs", f"{args.runs}: {exc.strerror or exc}")
    except (ValueError, pd.errors.ParserError) as exc:  # empty, cut short, not a CSV of runs
        return _fail("measure verify", "--runs", f"{args.runs}: {exc}")
    try:
        runs.query(args.fit)
    except Exception as exc:  # pandas raises SyntaxError, NameError, KeyError, TypeError ... for a bad query
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if args.fit == _DEFAULT_FIT:  # the user gave no --fit: the file is what does not fit
            return _fail("measure verify", "--runs", f"{args.runs}: not runs of mmcost measure swapout "
                         f"(the default --fit {args.fit!r} fails: {message})")
        return _fail("measure verify", "--fit", f"{args.fit!r} is not a query of the runs' columns ({message})")
    model = None
    if args.machine is not None:
        from .swap import SwapModel

        if not Path(args.machine).is_file():
            return _fail("measure verify", "--machine", f"{args.machine!r} is not a file (mmcost measure machine "
                         "--out writes one)")
        try:
            model = SwapModel(cpu_model=args.machine)
        except ValueError as exc:
            return _fail("measure verify", "--machine", f"{args.machine}: {exc}")
    try:
        out = verify(runs, None if args.no_fit else args.fit, free=_list(args.free), model=model)
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


def _measure_machine(args: argparse.Namespace) -> int:
    from .measure import MeasureError
    from .measure.profile import ProbeError, machine

    out = Path(args.out)
    if out.is_dir() or not out.parent.is_dir():
        return _fail("measure machine", "--out", f"{args.out!r}: name a file in a folder that exists")
    try:
        cpus = None if args.cpus is None else [_integer("--cpus", x) for x in _list(args.cpus)]
        prof = machine(None if args.dry_run else out, rounds=args.rounds, cpus=cpus, faults=not args.no_faults,
                       compression=not args.no_compression, allow_busy=args.allow_busy, dry_run=args.dry_run)
    except (MeasureError, ProbeError, ValueError) as exc:
        print(f"mmcost measure machine: {exc}", file=sys.stderr)
        return 2
    if not args.dry_run:
        from .measure.profile import summary

        print(summary(prof))
        print(f"wrote {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mmcost",
        description="Mechanism-level cost models of Linux MM (TLB flush batching, lock contention, swap throughput).",
    )
    parser.add_argument("--version", action="version", version=f"mmcost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="fit every model to the bundled data; write tables and figures")
    rep.add_argument("--out", default="mmcost-out", type=_nonempty_path, help="output folder (default: ./mmcost-out)")
    rep.add_argument("--only", action="append", metavar="ID", help="run only this study (repeatable)")
    rep.add_argument("--jobs", "-j", type=_int_in(1, 1024), default=1, metavar="N", help="studies run in N processes (default: 1)")
    rep.add_argument("--dpi", type=_int_in(10, 1200), default=100, help="resolution of the PNG figures (default: 100)")
    rep.add_argument("--cache", metavar="DIR", type=_nonempty_path, help="keep rendered studies here between runs "
                     "(default: $XDG_CACHE_HOME/mmcost); a study reruns when its data, mmcost's code, "
                     "matplotlib's rcParams or a dependency's version changes")
    rep.add_argument("--no-cache", action="store_true", help="render every study afresh and keep nothing")
    rep.add_argument("--force", action="store_true", help="write into --out even if it is not empty")
    rep.set_defaults(func=_reproduce)
    mea = sub.add_parser("measure", help="run a benchmark on this machine's own kernel, or check the model against it")
    msub = mea.add_subparsers(dest="what", required=True)
    sw = msub.add_parser("swapout", help="the swap-out matrix with its counters (root; every setting restored)")
    si = msub.add_parser("swapin", help="write past a memcg's limit, time the read-back from swap, with its "
                         "counters (root; every setting restored)")
    for sw in (sw, si):
        sw.add_argument("--folio", default="4K,16K,64K,2M", help="folio sizes (default: 4K,16K,64K,2M)")
        sw.add_argument("--processes", default="1,2", help="writer processes (default: 1,2)")
        sw.add_argument("--memcg", default="256M", help="memcg limits (default: 256M)")
        sw.add_argument("--device", default="zram:lzo-rle", help="zram:<compressor>, comma-separated")
        sw.add_argument("--bytes", default="768M", help="bytes each process writes (default: 768M)")
        sw.add_argument("--reps", type=_int_in(1, 1000), default=3, help="repetitions (default: 3)")
        sw.add_argument("--out", default="runs.csv", type=_nonempty_path, help="CSV the rows are appended to (default: runs.csv)")
        sw.add_argument("--dry-run", action="store_true", help="print every change that would be made; change nothing")
        sw.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=0, help="shuffles the run order (default: 0)")
        sw.add_argument("--allow-busy", action="store_true", help="run even on a busy machine (other runnable tasks, "
                        "steal time); each run records its load, and verify flags the busy ones")
        sw.add_argument("--machine", metavar="PROFILE", help="the profile of mmcost measure machine whose costs "
                        "predict these runs: its id goes in each row's machine_profile")
        sw.set_defaults(func=_measure_swapout)
    si.add_argument("--pattern", default="seq", help="read-back orders: seq (every word in order), rand (page by "
                    "page, shuffled) or seq,rand (default: seq)")
    si.set_defaults(usemem=None)
    sw = msub.choices["swapout"]
    sw.add_argument("--madvise", action="store_true", help="madvise(MADV_HUGEPAGE) the writers' memory")
    sw.add_argument("--usemem", metavar="PATH", help="run this usemem binary instead of mmcost-writer")
    sw.add_argument("--no-warm", action="store_true", help="skip the warm-up before each large-folio run (the memory "
                    "it faults fresh touched and freed first, so that a guest's host backs it)")
    ve = msub.add_parser("verify", help="fit the swap model to some runs, predict the others, show the error")
    ve.add_argument("--runs", default="runs.csv", type=_nonempty_path, help="rows of mmcost measure swapout (default: runs.csv)")
    ve.add_argument("--fit", default=_DEFAULT_FIT, help="pandas query of the runs to fit (default: processes == 1)")
    ve.add_argument("--figure", metavar="PNG", help="also write throughput vs folio size with the band")
    ve.add_argument("--free", default="reclaim_us_per_folio,core_write_gb_s", metavar="NAMES",
                    help="the swap model's fields to fit, comma-separated "
                    "(default: reclaim_us_per_folio,core_write_gb_s)")
    ve.add_argument("--machine", metavar="PROFILE", help="a profile of mmcost measure machine: its measured costs "
                    "(and their spreads as priors) in place of the generic CPU's")
    ve.add_argument("--no-fit", action="store_true", help="fit nothing: predict every run from the model (and "
                    "--machine) alone, with the band of the priors")
    ve.set_defaults(func=_measure_verify)
    mm = msub.add_parser("machine", help="measure this machine's per-primitive costs into a profile (cpu_model=PATH)")
    mm.add_argument("--out", default="machine.toml", type=_nonempty_path, help="the profile (default: machine.toml)")
    mm.add_argument("--rounds", type=_int_in(3, 1000), default=7, help="rounds per cost, for its spread (default: 7)")
    mm.add_argument("--cpus", metavar="LIST", help="CPUs to use, the first sends (default: all this process may use)")
    mm.add_argument("--no-faults", action="store_true", help="skip first-touch and swap-in faults per mTHP size (root)")
    mm.add_argument("--no-compression", action="store_true", help="skip compression through a private zram (root)")
    mm.add_argument("--allow-busy", action="store_true", help="measure even on a busy machine (the profile says so)")
    mm.add_argument("--dry-run", action="store_true", help="print what would be measured and changed; change nothing")
    mm.set_defaults(func=_measure_machine)
    rs = msub.add_parser("restore", help="undo what a killed swapout run left changed, as its journal names it (root)")
    rs.add_argument("--dry-run", action="store_true", help="print what would be restored; change nothing")
    rs.set_defaults(func=_measure_restore)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
