"""Nadav Amit's "x86: Concurrent TLB flushes" v3 (July 2019): sysbench fileio on DAX, 1-48 threads.

Mechanism: none yet. The series flushes the local TLB while the remote
CPUs handle the shootdown IPI (``flush_tlb_multi``) instead of after it,
and trims the shootdown path (``cpu_tlbstate`` privatised, the lazy-mode
check moved). :class:`mmcost.tlb.TlbModel` orders the local flush and the
IPI round trip by the ``concurrent_flush`` switch (the series as merged,
4ce94eabac16, v5.13: :func:`mmcost.tlb.flush_cost`), but the workload (sysbench rndwr over mmap'd DAX files with fdatasync:
``page_mkclean`` write-protects each dirty PTE and flushes it to every CPU
running the mm) has no flush rate or per-operation cost in any mechanism
here. At one thread (no remote CPU to overlap with) the series still gains
2.4%, so part of its gain is the trimmed path, which no mechanism models.

====================================  ====  ======================================
rows                                   n    how
====================================  ====  ======================================
sysbench results and changes, 1-48    48    not expressible: overlapped local and
  threads, mitigations on and off            remote flush, and the msync/fdatasync
                                             write-protect flush workload
====================================  ====  ======================================

The overlap alone would still need the workload's flush rate per sysbench
operation, which the thread does not give.
"""

from __future__ import annotations

from .. import report
from ..tlb import TlbModel
from ._study import Section, Study

_MISSING = ("the sysbench fileio mmap/fdatasync write-protect flush workload (its flush rate per operation) and "
            "the series' trimmed shootdown path; the overlapped local and remote flush (flush_tlb_multi) is "
            "TlbModel's concurrent_flush")


class AmitConcurrentTlbFlushes(Study):
    id = "amit_concurrent_tlb_flushes_v3"
    mechanism = TlbModel
    free = ()
    NOT_EXPRESSIBLE = (({}, _MISSING),)

    def sections(self) -> list[Section]:
        df = self.data()
        ch = df[df["metric"] == "sysbench_fileio_result_change_pct"]
        vals = df[df["metric"] == "sysbench_fileio_result"]
        lines = [f"{'mitigations':<12} {'tip-jun28':>10} {'concurrent':>10} {'change':>7}"]
        for run, part in vals.groupby("run", sort=False):
            base = part[part["variant"] == "tip-jun28"]["value"].to_numpy()
            new = part[part["variant"] == "concurrent-v3"]["value"].to_numpy()
            c = ch[ch["run"] == run]["value"].to_numpy()
            for b, n, x in zip(base, new, c):
                lines.append(f"{run.removeprefix('mitigations-'):<12} {b:>10.0f} {n:>10.0f} {x:>+6.1f}%")
        lines.append("thread counts per row as in the cover letter (1 to 48; see data/)")
        lines.append(report.wrap("not expressible: " + _MISSING))
        return [Section("sysbench fileio rndwr on DAX, 2-socket Haswell-X, 48 CPUs", "\n".join(lines))]


study = AmitConcurrentTlbFlushes()
