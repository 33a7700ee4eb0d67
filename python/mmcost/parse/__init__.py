"""Parsers for the raw formats MM patch emails paste: text in, tidy rows out.

Every function takes the text as printed (or as a mail archive shows it:
quoted with ``> ``, whitespace folded) plus optional schema columns to fill in
every row (``variant="patched"``, ``folio_kb=64`` ...), and returns a DataFrame
in the schema of :mod:`mmcost.schema` with ``printed`` (the text of the
number), ``line`` (where it was read) and ``block`` (which repeated output).
Unreadable, truncated or empty input raises :class:`ParseError` (a
ValueError) naming the format and the line, never a partly filled frame; so
does a line shaped like a record of the format with a word garbled or a
number cut (``N byts / N usecs``, ``hugepages64kB/stats/...``), which is
never skipped as prose.

=====================  =====================================================
function               format
=====================  =====================================================
lkp_compare            LKP ``%stddev %change %stddev`` comparison block
perf_lock_contention   ``perf lock contention`` table
perf_stat              ``perf stat`` counters (as printed, ``-x,`` CSV, ``-j`` JSON)
interrupts_tlb         ``TLB shootdowns`` row of ``/proc/interrupts``
time_output            shell ``time`` (zsh, bash, GNU) and ``Sys time:`` lines
sysbench               sysbench summary
xsbench                XSBench results summary
usemem                 usemem / vm-scalability per-process lines
markdown_table         markdown pipe tables
mthp_stats             per-size mTHP counters (``hugepages-<size>kB/stats/*``)
vmstat                 /proc/vmstat, one snapshot or the delta of two
=====================  =====================================================
"""

from ._common import ParseError
from .kernel_counters import mthp_stats, vmstat
from .keyed import sysbench, time_output, usemem, xsbench
from .lkp import lkp_compare
from .perf import perf_lock_contention, perf_stat
from .tables import interrupts_tlb, markdown_table

__all__ = [
    "ParseError",
    "lkp_compare",
    "perf_lock_contention",
    "perf_stat",
    "interrupts_tlb",
    "time_output",
    "sysbench",
    "xsbench",
    "usemem",
    "markdown_table",
    "mthp_stats",
    "vmstat",
]
