"""Huang Ying's "THP swap: Delay splitting THP during swapping out" v8 (-mm, 2017-04-06).

As :mod:`.huang_thp_swap_delay_split_2016` (seed 004's fit, nothing fitted
here, the base kernel predicted, the series not expressible), with 8
processes on the -mm the series is based on ("04/04 head of mmotm/master",
v4.11-rc era). That -mm already carried the v4.11 swap series (merged for
v4.11-rc1): the same series' v6 (``[PATCH -mm -v6 5/9] mm, THP, swap:
Support to clear SWAP_HAS_CACHE for huge page``, 2017-03-08) patches a
``swapcache_free`` that calls ``_swap_info_get`` and ``free_swap_slot``,
i.e. the cluster lock (235b62176712) and the slot cache (67afa38e012e) are
in its base. So the kernel is ``"4.11"``: writeback tags gone (v4.9), the
swap cache split into 64 MiB trunks, the slot cache, the swap_map counts
under the cluster lock. Rows checked against the v8 cover letter
(<20170406053515.4842-1-ying.huang@intel.com>).

=======================================  ====  ========================================
rows                                      n    how
=======================================  ====  ========================================
base swap-out rate (vmstat.swap.so)        1   fitted: the swapped share's input
base throughput                            1   predicted from seed 004's fit
base+patchset throughput, swap-out         4   predicted (values and changes): the
                                               delay-split path (``4.11+thp_swap_delay_split``)
elapsed-time change                        1   predicted: write loop and exit (the
                                               bytes cancel)
elapsed time (2)                           2   not expressible: the bytes written
                                               (RAM and swap size) are not stated
cache-miss rate, IPC (6)                   6   not expressible: no such output
add_to_swap children share (3)             3   not expressible: a call chain's whole
                                               share, not a spinlock's
=======================================  ====  ========================================

The swap-out rate is LKP's over the whole job (``rate_window = "lkp_job"``),
the swapped share from the base ratio over those windows (0.586 for the
ratio 0.562: the exit, with the slot cache returning entries 64 at a time,
is 0.04 of the loop). The base throughput is predicted at 6.4 GB/s [3.9,
9.3] for 7.0 (-9.1%; 6.5 GB/s with the ratio as the share, 5.7 GB/s before
the reclaim engine, whose re-scoped reclaim_us_per_folio prior, 2.5 -> 1.5
us, seed 004's fit keeps): this run's machine writes
three times faster than seed 004's and the 2016 RFC's (2.5 GB/s) with half
the processes; the thread's machine details are not known.

Known miss: the patch's gain is +4.4% [-5, +14] for +21.2% (swap-out +4.2% for +14.9%, the
job's time -4.0% for -16.2%; at the published throughput gain the windows give +20.1% and
-16.8%): on v4.11
(slot cache, 64 MiB swap cache trunks) no lock the delay split relieves
is contended in the model, so it saves only add_to_swap's work, ~0.45 us
a page. That saving agrees with the letter's own profile (the add_to_swap
call chain, 9.33% -> 3.67% of cycles, is 0.75 -> 0.26 us a swapped page at
its rates); the rest of the published gain comes with IPC 1.04 -> 1.27 and
the cache-miss rate 31% -> 19%, which the model has no mechanism for.
"""

from __future__ import annotations

from .huang_thp_swap_delay_split_2016 import HuangThpSwapDelaySplit2016


class HuangThpSwapDelaySplitV8(HuangThpSwapDelaySplit2016):
    id = "huang_thp_swap_delay_split_v8_2017"
    miss = ("the delay split's gain +4.4% for +21.2%, swap-out +4.2% for +14.9%, the job's time -4.0% for -16.2% "
            "(IPC +22%: no mechanism here)")
    kernel = "4.11"


study = HuangThpSwapDelaySplitV8()
