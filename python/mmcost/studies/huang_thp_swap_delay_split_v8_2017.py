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
the swapped share from the base ratio over those windows (0.604 for the
ratio 0.562: the exit, with the slot cache returning entries 64 at a time,
is 0.08 of the loop).

Known miss, the base: predicted at 11.7 GB/s [4.7, 15.0] for 7.0 (+66%;
+49% at 10.5 GB/s while the split's per-page work was a guess, 0.5 us under
the lruvec lock plus a reference check's rmap walk per subpage, before it
was measured on 6.18: ``kvm_6_18_thp_split``, 0.57 and 3.1 generic us a
page and a folio, :func:`mmcost.swap.paths.split_work`).
It was 6.4 GB/s (-9%) while the model split a PMD THP with 512 synchronous
flushes and flushed each subpage again before its pageout, 1024 flush rounds
a THP; the kernel takes 2 (:func:`mmcost.swap.paths.split_pmd_thp`: the PMD
frozen to migration entries under one ``pmdp_invalidate`` flush, the pages
mapped back clean by ``remove_migration_pte``, so their unmaps leave one
batched ``try_to_unmap_flush`` for the list), and pays the measured split
instead; 10.9 before ``swap_cache_info``'s global line was
charged outside the tree lock too (:func:`mmcost.swap.paths.stats_line_us`:
every CPU writes it at each page's insert and delete, moved from another
CPU's cache 7 times in 8 with 8 writers). With seed 004's costs (fitted on 4K pages, whose every
pageout does flush first) the v4.11 split path is then 3.3 us of reclaim
CPU a swapped page and the base needs ~2.4 us a page more than it has.
The THP setting is not in the letter; the author's LKP job, revised six
days after it to the letter's 8 tasks, has ``defrag=always`` (``thp_setting``
in source.toml, an inference): an unadvised VMA's THP fault gets
``GFP_TRANSHUGE | __GFP_NORETRY`` and compacts and reclaims before it falls
back, so the prediction takes every fault for a THP
(``pressure_large_share`` 1) and the bands draw fewer
(:data:`.huang_thp_swap_delay_split_2016.PRESSURE_PRIORS`: N(1, 0.5)
clipped, half the draws all THPs); at half the pages in THPs the base is
8.1 GB/s, and the gain +3.9%. Not modelled, and the first candidate for
the base's miss: that direct compaction, paid by THP faults that find no
free 2M block because the split THPs come back as 4K pages (its page
migrations flush one page at a time before v6.3's 7e12beb8ca2a: the next
step of the series, bd4c82c22c36, reports 78.9% fewer IPIs once the THP is
no longer split); then the machine itself: this run writes three
times faster than seed 004's and the 2016 RFC's (2.5 GB/s) with half the
processes, and the thread does not say on what. (The THP's 511 cold tail
``struct page`` lines are in it already: each split page pays
``reclaim_us_per_folio``, fitted on 4K pages as cold; the delay split moves
their first touch into the insert, :func:`mmcost.swap.paths.delay_split`,
the same CPU time here, where the trunk's lock is no station.)

The gain: +12.0% [-0.3, +20.1] for +21.2% (swap-out +11.0% for +14.9% and the
job's time -9.9% for -16.2%), all three within 10 points since the split's
costs are measured (+9.6% before: less of the split under the lruvec lock,
so the same saving is a larger share of a faster base); at the published
throughput gain the windows give +19.4% and -16.2%; +9.3% while
the lines of ``swap_avail_lock`` and ``si->lock`` were charged at every
acquisition, +7.2% before the statistics line, +4.4% with the 1024 flush
rounds): on v4.11 (slot
cache, 64 MiB swap cache trunks) no lock the delay split relieves is
contended in the model, so it saves ``add_to_swap``'s work, ~0.45 us a
page, and one of the two writes a page of ``swap_cache_info``'s line
(``ADD_CACHE_INFO(add_total, nr)`` once a THP, the deletes still one a
page), ~0.15 us. The letter's profile does not
measure that saving: its ``add_to_swap`` call chain (9.33% -> 3.67% of
cycles) holds the base's ``split_huge_page_to_list``, which the patched
kernel calls from ``shrink_page_list`` instead. The published instructions
per written page barely change (IPC 1.04 -> 1.27, +22%, against 17.5%
fewer cycles a page if the busy cycles scale with the throughput: +0.8%),
so the gain is stall cycles (the cache-miss rate 31% -> 19%), for which
the model has no mechanism.

Checked beyond the corpus, the series' next step (bd4c82c22c36, v4.14: the
THP written and removed whole; its commit reports swap-out 5.81 -> 8.25
GB/s, +42%, with 16 processes, and 78.9% fewer IPIs): with seed 004's
costs the model gives v4.13 -> v4.14 +93% (9.4 -> 18.1 GB/s at 16
processes), each rate 1.6-2.2x the published one. In the model the split
path's 512 subpages each pass the lruvec lock (0.50 us a page; the lock at
0.40 utilisation with 8 processes, 0.67 with 16), the whole THP once; its
flushes per THP do not change (the PMD's and the batch's) where the
published IPIs fall by 78.9%. Both point where the base's miss does: the
split path of v4.11-v4.13 costs more per page than the model has, in work
the whole-THP path does not do.
"""

from __future__ import annotations

from .huang_thp_swap_delay_split_2016 import HuangThpSwapDelaySplit2016


class HuangThpSwapDelaySplitV8(HuangThpSwapDelaySplit2016):
    id = "huang_thp_swap_delay_split_v8_2017"
    miss = ("the base 66% fast (11.7 GB/s for 7.0: the split path, now measured on 6.18, lacks ~2.5 us a page "
            "on v4.11); the delay split's gain +12.0% for +21.2% (within 10 points), swap-out +11.0% for +14.9%, "
            "the job's time -9.9% for -16.2% (IPC +22%, the same instructions a page: no mechanism here)")
    kernel = "4.11"


study = HuangThpSwapDelaySplitV8()
