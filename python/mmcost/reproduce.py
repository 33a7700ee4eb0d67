"""``mmcost reproduce``: every study's cover-letter tables and figures.

A loop over :mod:`mmcost.studies`: each study returns its sections (a title,
the plain-text table as it would be pasted into an email, optionally a
figure), and its held-out numbers are collected into one table. Everything
goes to ``<out>/report.md`` and the figures beside it (PNG and SVG).

Each study is rendered on its own (:func:`study_output`: its report lines,
its figure files as bytes, its held-out frame), so studies run in parallel
processes (``jobs``) and their outputs are cached across runs
(``joblib.Memory``), keyed on everything a study's output depends on
(:func:`render_fingerprint`): the package's code and its data files (where
an editable install keeps them, outside the package folder too, read afresh
at every call, so a changed CSV is seen within one process), matplotlib's
effective rcParams (a matplotlibrc or ``rcParams`` change redraws the
figures), the versions of Python and of mmcost's dependencies, and the
figure resolution: change a measurement, a model, a style or a library and
that study runs again, change nothing and the report is rebuilt from the cache.
"""

from __future__ import annotations

import hashlib
import io
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from . import __version__, datasets, report, studies
from .studies import Section

__all__ = ["OutputExists", "Section", "StudyOutput", "accounting_table", "held_out_table", "run", "study_output", "default_cache_dir"]


@dataclass
class StudyOutput:
    """One study rendered: its report lines, its figures (file name -> bytes)
    and its held-out numbers."""

    name: str
    lines: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    held_out: pd.DataFrame | None = None
    #: rows fitted / predicted / not expressible / unaccounted, and the held-out hits (Study.counts)
    counts: dict | None = None


def held_out_table(frames: dict[str, pd.DataFrame]) -> str:
    """Every study's held-out numbers, one line each, 80 columns."""
    lines = [f"{'source':<22} {'metric':<26} {'published':>9} {'predicted':>9} {'error':>9}"]
    for name, h in frames.items():
        for r in h.itertuples():
            lines.append(f"{name[:22]:<22} {r.metric[:26]:<26} {r.published:>9.4g} {r.predicted:>9.4g} "
                         f"{r.error:>+9.3g}")
    return "\n".join(lines)


def accounting_table(counts: dict[str, dict]) -> str:
    """Per source: its rows fitted, predicted (held out) and not expressible
    (and any not yet placed), and the held-out hit rate: within 2 sigma where
    a stddev is published, else within 10 points of a relative change or 10%
    of an absolute value (:func:`mmcost.studies.hit`)."""
    lines = [f"{'source':<40} {'fit':>4} {'pred':>4} {'n/e':>4} {'other':>5} {'hits':>10}"]
    tot = dict.fromkeys(("fitted", "predicted", "not expressible", "unaccounted", "hits", "held_out"), 0)
    for name, c in counts.items():
        if c is None:
            continue
        for k in tot:
            tot[k] += c.get(k, 0)
        rate = f"{c['hits']}/{c['held_out']}" if c["held_out"] else "-"
        lines.append(f"{name[:40]:<40} {c['fitted']:>4} {c['predicted']:>4} {c['not expressible']:>4} "
                     f"{c['unaccounted']:>5} {rate:>10}")
    pct = f" {100 * tot['hits'] / tot['held_out']:.0f}%" if tot["held_out"] else ""
    lines.append(f"{'all':<40} {tot['fitted']:>4} {tot['predicted']:>4} {tot['not expressible']:>4} "
                 f"{tot['unaccounted']:>5} {tot['hits']:>4}/{tot['held_out']}{pct}")
    lines.append("fit: rows fitted (or the reference a change is taken against); pred: rows")
    lines.append("held out; n/e: not expressible (each study lists the missing mechanism);")
    lines.append("other: rows no study places yet. hits: held-out numbers within 2 sigma")
    lines.append("(a published stddev), else 10 points of a change or 10% of a value.")
    return "\n".join(lines)


def heading(title: str, width: int = report.WIDTH) -> list[str]:
    """A ``###`` heading of at most ``width`` columns: a longer title keeps
    its part before the last `` (`` or ``: `` that fits (outside
    parentheses), and the rest follows as a wrapped paragraph."""
    if len(title) + 4 <= width:
        return [f"### {title}"]
    depth, cuts = 0, []
    for i, ch in enumerate(title):
        if ch == "(" and depth == 0 and title[i - 1 : i] == " ":
            cuts.append(i - 1)
        if ch == ":" and depth == 0 and title[i + 1 : i + 2] == " ":
            cuts.append(i)
        depth += (ch == "(") - (ch == ")")
    cut = max([c for c in cuts if 0 < c <= width - 4], default=0)
    if not cut:
        return [f"### {title[: width - 4]}", "", report.wrap(title)]
    rest = title[cut:].strip(" :")
    return [f"### {title[:cut]}", "", report.wrap(rest[:1].upper() + rest[1:])]


def study_output(name: str, dpi: int = 100) -> StudyOutput:
    """Render study ``name``: its sections as markdown lines and its figures
    as PNG (at ``dpi``) and SVG bytes."""
    import matplotlib.pyplot as plt

    study = studies.get(name)
    src = datasets.source(name)
    lines = [f"## {name}", "", report.wrap(src["title"]), "",
             report.wrap(f"{src['author']}, {src['date']}; {src.get('hardware', '')}"), ""]
    out = StudyOutput(name, lines)
    for s in study.sections():
        lines += [*heading(s.title), "", "```", s.text.rstrip("\n"), "```", ""]
        if s.notes:
            lines += [report.wrap(f"[{i}] {note}", indent="    ") for i, note in enumerate(s.notes, 1)] + [""]
        if s.figure is not None:
            for suffix, kwargs in ((".png", {"dpi": dpi}), (".svg", {})):
                buf = io.BytesIO()
                s.figure.savefig(buf, format=suffix[1:], **kwargs)
                out.files[str(Path(s.figure_name).with_suffix(suffix))] = buf.getvalue()
            plt.close(s.figure)
            lines += [f"![{Path(s.figure_name).stem}]({s.figure_name})", ""]
    if study.mechanism is not type(None):  # which of its costs are one quantity with other sources'
        from .corpus import sharing

        lines += [report.wrap(sharing.roles_text(study)), ""]
    out.held_out = study.held_out() if study.has_held_out() else pd.DataFrame(columns=studies.HELD_OUT_COLUMNS)
    out.counts = study.counts()
    return out


def _digest_tree(root, h) -> None:
    for p in sorted(root.iterdir(), key=lambda p: p.name):
        if p.name == "__pycache__" or p.name.startswith("."):
            continue
        if p.is_dir():
            _digest_tree(p, h)
        elif p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())


def _roots() -> list:
    """The folders the package's files live in: ``mmcost`` and the data the
    studies read (:func:`mmcost.datasets` ``_root``), which an editable
    install maps outside the package folder (``<repo>/data``)."""
    roots = []
    for r in (files("mmcost"), datasets._root()):
        try:  # a folder inside another one is hashed with it
            inside = any(Path(str(r)).resolve().is_relative_to(Path(str(o)).resolve()) for o in roots)
        except (OSError, ValueError):
            inside = False
        if not inside:
            roots.append(r)
    return roots


def code_fingerprint() -> str:
    """A hash of the package as installed: every file of it (the Python
    modules, the compiled core) and of the bundled data wherever the install
    keeps it, and its version. Read afresh at every call (about 20 ms): a
    file changed since the last call changes it within the same process."""
    h = hashlib.sha256(__version__.encode())
    for root in _roots():
        h.update(str(root).encode())
        _digest_tree(root, h)
    return h.hexdigest()


#: rcParams that choose where figures are shown, not how they are drawn to a file
_RC_IGNORED = ("backend", "interactive", "toolbar", "timezone", "webagg.", "tk.", "macosx.", "figure.raise_window")


def _rc_fingerprint() -> str:
    """A hash of matplotlib's effective rcParams (from the matplotlibrc, the
    style and any ``rcParams`` change made in this process)."""
    import matplotlib

    h = hashlib.sha256()
    for key in sorted(matplotlib.rcParams):
        if not key.startswith(_RC_IGNORED):
            h.update(f"{key}={matplotlib.rcParams[key]!r}\n".encode())
    return h.hexdigest()


def _dependency_versions() -> str:
    """Python's version and the installed versions of mmcost's dependencies."""
    import importlib.metadata as md
    import re
    import sys

    parts = [sys.version]
    try:
        requires = md.requires("mmcost") or []
    except md.PackageNotFoundError:  # run from a source tree without an install
        requires = []
    names = sorted({re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in requires if "extra ==" not in r})
    for name in names or ["numpy", "scipy", "pandas", "matplotlib", "joblib"]:
        try:
            parts.append(f"{name}=={md.version(name)}")
        except md.PackageNotFoundError:
            parts.append(f"{name} missing")
    return "\n".join(parts)


def render_fingerprint() -> str:
    """What a rendered study depends on besides its name and dpi: the code
    and data (:func:`code_fingerprint`), matplotlib's rcParams and the
    dependency versions. The cache key of :func:`run`'s studies."""
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(_rc_fingerprint().encode())
    h.update(_dependency_versions().encode())
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mmcost`` (``~/.cache/mmcost``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mmcost"


def _cached_study(cache_dir: Path | None):
    if cache_dir is None:
        return study_output
    from joblib import Memory

    memory = Memory(Path(cache_dir) / "reproduce", verbose=0)

    @memory.cache
    def cached(name: str, dpi: int, fingerprint: str) -> StudyOutput:  # the fingerprint is part of the key
        return study_output(name, dpi)

    return lambda name, dpi: cached(name, dpi, render_fingerprint())


def _one(name: str, dpi: int, cache_dir: Path | None) -> StudyOutput:
    return _cached_study(cache_dir)(name, dpi)


class OutputExists(ValueError):
    """``out`` is a file, or a folder with something in it (and no ``force``)."""


def check_out(out: Path, force: bool) -> None:
    """Refuse to write into a file or a non-empty folder unless ``force``."""
    if out.exists() and not out.is_dir():
        raise OutputExists(f"--out {out}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise OutputExists(f"--out {out}: the folder is not empty (a previous report?); "
                           "pass --force to overwrite it, or choose another folder")


def run(out: Path, only: list[str] | None = None, progress: bool = True, *, jobs: int = 1, dpi: int = 100,
        cache_dir: Path | None = None, force: bool = True) -> str:
    """Write ``out/report.md`` and the figures; returns the report's text.

    ``jobs``: studies rendered in that many processes at once; ``cache_dir``:
    where rendered studies are kept between runs (None: no cache);
    ``force=False``: refuse a non-empty ``out`` (what the command does
    without ``--force``)."""
    out = Path(out)
    check_out(out, force)
    known = studies.names()
    names = known if not only else list(only)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"only: no study {unknown}; known: {known}")
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if not isinstance(dpi, int) or isinstance(dpi, bool) or not 10 <= dpi <= 1200:
        raise ValueError(f"dpi must be an integer in [10, 1200], got {dpi!r}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".mmcost-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise OutputExists(f"--out {out}: cannot write there ({exc.strerror or exc})") from exc
    results: dict[str, StudyOutput] = {}
    bar = tqdm(total=len(names), desc="studies", unit="study", disable=not progress)
    try:
        if jobs == 1:
            for name in names:
                bar.set_postfix_str(name)
                results[name] = _one(name, dpi, cache_dir)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(names))) as pool:
                futures = {pool.submit(_one, name, dpi, cache_dir): name for name in names}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.set_postfix_str(futures[fut])
                    bar.update()
    finally:
        bar.close()
    lines = [f"# mmcost reproduce (mmcost {__version__})", ""]
    for name in names:
        r = results[name]
        lines += r.lines
        for fname, data in r.files.items():
            (out / fname).write_bytes(data)
    held = {name: results[name].held_out for name in names}
    lines += ["## held out: what each study predicts without fitting it", "", "```", held_out_table(held), "```", ""]
    lines += ["## rows per source: fitted, predicted, not expressible; held-out hit rate", "", "```",
              accounting_table({name: results[name].counts for name in names}), "```", ""]
    if not only:  # the leave-one-source-out needs every source
        lines += _loso_section(out, dpi, cache_dir, progress)
    text = "\n".join(lines)
    (out / "report.md").write_text(text, encoding="utf-8")
    return text


def _loso(fingerprint: str) -> pd.DataFrame:  # (the fingerprint keys the cache)
    from .corpus import loso

    return loso.evaluate(loso.run(progress=False))


def _loso_section(out: Path, dpi: int, cache_dir: Path | None, progress: bool) -> list[str]:
    """The leave-one-source-out table, the calibration figure and the
    structural error table (``structural_error.toml``, what the package ships
    in ``data/``; the report says when the shipped one is stale)."""
    import matplotlib.pyplot as plt

    from .corpus import discrepancy, loso

    if progress:
        print("leave one source out (about half a minute)...", flush=True)
    if cache_dir is None:
        ev = _loso("")
    else:
        from joblib import Memory

        ev = Memory(Path(cache_dir) / "reproduce", verbose=0).cache(_loso)(render_fingerprint())
    lines, taus = loso.report(ev, discrepancy.shipped())
    fig = loso.figure(ev)
    fig.savefig(out / "calibration.png", dpi=dpi)
    fig.savefig(out / "calibration.svg")
    plt.close(fig)
    counts = ev.groupby("family").size().to_dict()
    discrepancy.write_table(out / discrepancy.TABLE, taus, counts,
                            f"mmcost {__version__}: the structural error per metric family, estimated by "
                            "mmcost reproduce\nfrom the leave-one-source-out residuals of the bundled sources "
                            "(mmcost.corpus.loso).\nThe package ships this file as data/structural_error.toml.")
    ev.to_csv(out / "leave_one_source_out.csv", index=False)
    return lines
