"""The on-disk record of what a swap-out run changed, written before each change.

A run killed where no ``finally`` runs (SIGKILL from the OOM killer or a
user, a crash of the interpreter) would leave the machine changed: mTHP
modes, a zram device still swapped on, a memcg. So before every change
:class:`mmcost.measure.controls.Machine` appends one JSON line to the journal
and ``fsync``s it; after undoing a change it appends an ``undone`` line. A
journal therefore always names every change that may have been made and is
not yet undone.

The journal is also the lock that keeps two runs apart (two runs at once
change each other's mTHP modes and inflate each other's system-wide
counters): a run holds ``flock(LOCK_EX)`` on it from start to end. The
kernel drops a ``flock`` when the last descriptor of the open file goes,
also when its process is killed (``locks_remove_file()`` from ``__fput()``),
so a journal nobody holds was left by a process that no longer exists:

- the next ``mmcost measure swapout`` restores what it names before anything
  else, saying what it restores; ``mmcost measure restore`` does it on demand;
- a journal held by a live run is refused, naming its process.

Only what the journal names is touched: an mTHP mode is written back only if
it still reads what the run wrote (else someone changed it since, and it is
left, with a word); a memcg only by its recorded path; a zram device only if
it still has the run's disk size (or none). A journal from an earlier boot
(``/proc/sys/kernel/random/boot_id`` differs) is dropped: a reboot undid its
changes, and its device numbers may now belong to someone else.

Format: one JSON object a line. ``{"op": "begin", "pid", "boot_id",
"started", "argv"}`` first; then ``{"op": "write", "path", "old", "new"}``,
``{"op": "hot_add"}`` (about to add a zram device, number not yet known),
``{"op": "create", "kind": "zram"|"swapon"|"memcg", "what", ...}``, and
``{"op": "undone", "kind": "write"|"zram"|"swapon"|"memcg", "what"}``. A
last line cut short (killed while writing it) names a change that was never
made: the change follows the line's ``fsync``.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

#: Where a run keeps its journal, under the machine's root. A directory on
#: tmpfs on most systems; where it is not, the boot id tells an old journal.
JOURNAL = "/run/mmcost/swapout.journal"


class JournalBusy(RuntimeError):
    """Another live run holds the journal."""


def boot_id(root: str | Path = "/") -> str:
    p = Path(root) / "proc/sys/kernel/random/boot_id"
    return p.read_text().strip() if p.is_file() else ""


def pid_alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True


class Journal:
    """One journal file: :meth:`acquire` (lock, and read a left-over record),
    :meth:`begin`, :meth:`record` (append + fsync), :meth:`clear`, :meth:`release`."""

    def __init__(self, path: str | Path, root: str | Path = "/"):
        self.path = Path(path)
        self.root = Path(root)
        self.fd: int | None = None

    # --- lock ------------------------------------------------------------------------------
    def acquire(self) -> list[dict]:
        """Take the lock; return the entries a previous (dead) holder left (empty if none).

        Raises :class:`JournalBusy` naming the holder when a live run holds it."""
        self.path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            head = self.header(self.read())
            who = (f"pid {head.get('pid')}, started {head.get('started', '?')}: {' '.join(head.get('argv', []))}"
                   if head else "a process that has not written its record yet")
            raise JournalBusy(f"another mmcost measure run holds {self.path} ({who}); two runs at once change each "
                              f"other's mTHP modes and counters. Wait for it, or stop it (kill -TERM "
                              f"{head.get('pid', '<pid>')} restores its settings)") from None
        self.fd = fd
        return self.read()

    def held(self) -> bool:
        """Whether a live run holds the journal (asked without taking it, changing nothing)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # drops the flock
            self.fd = None

    # --- content ---------------------------------------------------------------------------
    def read(self) -> list[dict]:
        """The entries on disk; a last line cut short is dropped (its change was never made)."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        out = []
        lines = text.splitlines()
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                if i == len(lines) and not text.endswith("\n"):
                    break  # killed while writing it: the change it announces did not happen
                raise ValueError(f"{self.path} line {i}: not a journal entry: {line[:80]!r}") from None
        return out

    @staticmethod
    def header(entries: list[dict]) -> dict:
        return entries[0] if entries and entries[0].get("op") == "begin" else {}

    def _write_all(self, text: str) -> None:
        assert self.fd is not None, "the journal is not acquired"
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        if text:
            os.write(self.fd, text.encode())
        os.fsync(self.fd)

    def begin(self, argv=None) -> None:
        """Start this run's record (the lock is held)."""
        import sys

        head = dict(op="begin", pid=os.getpid(), boot_id=boot_id(self.root),
                    started=time.strftime("%Y-%m-%dT%H:%M:%S%z"), argv=list(argv if argv is not None else sys.argv))
        self._write_all(json.dumps(head) + "\n")

    def record(self, **entry) -> None:
        """Append one entry and make it durable before the change it names is made."""
        assert self.fd is not None, "the journal is not acquired"
        os.lseek(self.fd, 0, os.SEEK_END)
        os.write(self.fd, (json.dumps(entry) + "\n").encode())
        os.fsync(self.fd)

    def clear(self) -> None:
        """Everything undone: an empty journal (the file stays, so the lock keeps one inode)."""
        self._write_all("")


def pending(entries: list[dict]) -> tuple[list[tuple], dict, bool]:
    """What a journal says is still changed: (creations in order as (kind, what, entry),
    {path: (old, last new)} of the files written, whether a zram hot_add has no number)."""
    created: list[tuple] = []
    written: dict[str, tuple[str, str]] = {}
    unnumbered = False
    for e in entries:
        op = e.get("op")
        if op == "write":
            old = written[e["path"]][0] if e["path"] in written else e["old"]
            written[e["path"]] = (old, e["new"])
        elif op == "hot_add":
            unnumbered = True
        elif op == "create":
            created.append((e["kind"], e["what"], e))
            if e["kind"] == "zram":
                unnumbered = False
        elif op == "undone":
            if e["kind"] == "write":
                written.pop(e["what"], None)
            else:
                created = [c for c in created if (c[0], c[1]) != (e["kind"], e["what"])]
    return created, written, unnumbered
