"""A measurement holding the machine: the journal's lock, what a killed run
left restored first, every change recorded before it is made and undone
after, on an error, Ctrl-C, SIGTERM or SIGHUP too.

``mmcost measure swapout`` and ``mmcost measure machine`` both run inside
:func:`holding`; one journal (``/run/mmcost/swapout.journal``) serves both,
so that neither runs while the other holds the machine.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

from .journal import JOURNAL, Journal, JournalBusy, pending
from .controls import Machine, MeasureError, recover


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP stopped a run; its settings were restored on the way out."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


class _Signals:
    """While a run holds the machine: SIGTERM and SIGHUP (a closed terminal, a lost SSH
    session) raise :class:`Stopped` in the main thread, so the ``finally`` blocks
    restore every setting. During the restore itself a signal is held back and raised
    after it (an interrupted restore would leave its rest to the journal)."""

    NAMES = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.old: dict = {}
        self.held: list[int] = []
        self.restoring = False

    def _handle(self, signum, frame):
        if self.restoring:
            self.held.append(signum)
            return
        self.restoring = True  # a second signal must not cut the restore this one starts
        raise Stopped(signum)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.old = {s: signal.signal(s, self._handle) for s in self.NAMES}
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)
        if self.held and exc[0] is None:
            raise Stopped(self.held[0])
        return False


@contextmanager
def holding(m: Machine, journal: str | Path | None = None):
    """Hold the machine for a measurement: take the journal's lock (a second
    run is refused while one holds it), restore what a dead run left, record
    every change ``m`` makes, and on the way out (an error, Ctrl-C, SIGTERM,
    SIGHUP) restore it all. A dry run only says what a real one would find."""
    j = Journal(journal if journal is not None else m.path(JOURNAL), root=m.root)
    if m.dry_run:
        left = j.read()
        pid = Journal.header(left).get("pid", "?")
        if j.held():
            m.log(f"a run (pid {pid}) holds {j.path}: a real run would be refused while it runs")
        elif any(pending(left)):
            m.log(f"{j.path} names changes that pid {pid} left: a real run would restore them first "
                  "(mmcost measure restore --dry-run lists them)")
        try:
            yield m
        finally:
            m.restore()
        return
    m.check_root()
    try:
        left = j.acquire()  # before anything else: the lock, and what a killed run left
    except JournalBusy as exc:
        raise MeasureError(str(exc)) from None
    try:
        recover(m, j, left, say=m.log)
        sig = _Signals()
        with sig:
            try:
                j.begin()
                m.journal = j
                yield m
            finally:
                sig.restoring = True
                m.restore()
                j.clear()  # only reached when every step was undone (restore raises otherwise)
    finally:
        j.release()
