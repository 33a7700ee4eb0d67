"""Who reclaims, and how long they sleep: the fixed points around the swap-out network.

Under a memcg limit the writers reclaim themselves (``try_charge_memcg`` ->
``try_to_free_mem_cgroup_pages``); under global reclaim kswapd takes the
share its CPU can (:func:`network`: a fixed point in kswapd's share), and a
direct reclaimer that finds too many folios isolated sleeps
(``too_many_isolated``: a fixed point in the sleep, :func:`network_at`), as
does a writer over memory.high from v5.4 to v5.7
(``mem_cgroup_handle_over_high``: :func:`mmcost.swap.paths.over_high_sleep_us`,
in the same fixed point).
Every function here works on lanes of draws (:mod:`mmcost.lanes`).
"""

from __future__ import annotations

import numpy as np

from .. import lanes
from ..lanes import any_of, maximum, minimum
from ..locks import LockSystem
from . import stations
from .constants import PAGE_KB, RECLAIM_BATCH
from .paths import (PER_WRITTEN, high_governs, memcg_limit_mb, over_high_sleep_us, swap_in_mix, swap_in_sizes,
                    swap_out_mix, swap_out_sized)


def kswapd_cpus(m) -> tuple[float, bool]:
    """CPUs the node's kswapd threads get, and whether they are spare ones
    (the writers keep theirs). With every CPU busy, kswapd time-shares:
    the fair scheduler gives each runnable thread an equal part."""
    n = m.nodes
    if m.cpus is None:
        return float(n), True
    spare = m.cpus - m.running
    if spare > 0:
        return float(min(n, spare)), True
    return n * m.cpus / (m.writers + n), False


def throughput(m, net: LockSystem):
    """Operations per second of one of this model's networks: one per lane for a lane model."""
    n = lanes.count(m)
    return float(net.analytic().throughput_per_s) if n is None else net.throughput_lanes(n)


def network(m) -> tuple[LockSystem, float, dict]:
    """The network at kswapd's share of the reclaim. Under a memcg limit
    reclaim is direct (``try_charge_memcg`` -> ``try_to_free_mem_cgroup_pages``
    in the charging task; v1 has no background limit reclaim). Under global
    reclaim kswapd (``balance_pgdat`` -> ``shrink_node``, one thread per
    node) takes what it can and the allocators reclaim the rest directly
    (``__alloc_pages_direct_reclaim``): its share k is the fixed point of
    k = min(1, kswapd capacity / folio rate(k)), found by Chandrupatla's
    method (:func:`mmcost.lanes.find_root`: per lane for a lane model)."""
    d_direct, kib = swap_out_mix(m, False)
    if m.kswapd_share is not None:
        k = m.kswapd_share
    elif m.memcg_mb is not None:
        k = 0.0
    else:
        d_k, _ = swap_out_mix(m, True)
        kcpus, _ = kswapd_cpus(m)
        capacity = kcpus * 1e6 / d_k["reclaim"]  # folios per second kswapd can reclaim

        def excess(share):
            net, _, _ = network_at(m, share, d_direct, d_k, kib)
            return minimum(1.0, capacity / throughput(m, net)) - share

        n = lanes.count(m)
        short = excess(1.0 if n is None else np.ones(n)) < 0  # kswapd cannot take all: its share is below 1
        k = lanes.find_root(excess, 0.0, 1.0, n, xatol=1e-12, where=short, fill=1.0)
        return network_at(m, k, d_direct, d_k, kib)
    return network_at(m, k, d_direct, swap_out_mix(m, True)[0] if any_of(k > 0) else d_direct, kib)


def isolation_threshold(m, pages: int) -> float | None:
    """Other reclaimers in their isolation window at which a direct
    reclaimer is throttled, or None where it never is.

    ``shrink_inactive_list`` -> ``too_many_isolated``: a reclaimer sleeps
    (``reclaim_throttle(VMSCAN_THROTTLE_ISOLATED)``, HZ/50 from v5.16;
    ``congestion_wait(HZ/10)`` before) while the node's isolated anon
    pages exceed its inactive anon list, shifted right by 3 for a
    __GFP_IO|__GFP_FS allocation such as a page fault's. kswapd is never
    throttled, nor is cgroup v1 limit reclaim (``writeback_throttling_sane``).
    Each reclaimer isolates SWAP_CLUSTER_MAX pages, or one larger folio."""
    if m.memcg_mb is not None and not m.cgroup_v2:
        return None
    if m.inactive_anon_mb is not None:
        inactive = m.inactive_anon_mb * 256
    elif m.memcg_mb is not None:  # inactive_is_low: inactive * int_sqrt(10 * GiB) ~ active
        limit = memcg_limit_mb(m)  # (the usage memory.high holds it at, where it is the lower)
        gib = limit // 1024
        ratio = maximum(1.0, np.floor(np.sqrt(10.0 * gib)))  # int_sqrt(10 * gib); 1 below a GiB
        inactive = limit * 256 / (1 + ratio)
    else:
        return None
    return (inactive / 8) / max(RECLAIM_BATCH, pages)


def throttled_us(m, k: float, d: dict, x_per_s: float) -> float:
    """Expected sleep per folio swapped: the chance that more than the
    threshold of the other direct reclaimers sit in their isolation
    window (each in it for the reclaim share of its cycle: binomial),
    times the sleep, per shrink call's folios."""
    from scipy.special import bdtrc  # here, not at import: mmcost.swap stays quick to import

    threshold = isolation_threshold(m, m.folio_kb // PAGE_KB)
    if threshold is None:
        return 0.0
    others = m.running - 1
    f = busy_share(m, k, d, x_per_s)
    # more than the threshold of the others isolating: Binomial(others, f)'s survival function
    # (0 where the threshold reaches them all)
    tail = bdtrc(np.minimum(np.floor(threshold), others), others, f)
    per_call = max(1.0, RECLAIM_BATCH / (m.folio_kb // PAGE_KB))
    sleep = tail * m.switch("throttle_isolated_ms") * 1e3 / per_call
    return float(sleep) if lanes.count(m) is None else sleep


def busy_share(m, k: float, d: dict, x_per_s: float):
    """Share of a direct reclaimer's time spent reclaiming, at ``x_per_s``
    folios swapped per second (all writers): its reclaim CPU per folio over
    its cycle per folio."""
    cycle = m.running * 1e6 / x_per_s  # us per folio per writer
    return minimum(1.0, (1 - k) * d["reclaim"] / cycle)


def high_may_sleep(m) -> bool:
    """Whether a writer over memory.high can be throttled
    (:func:`mmcost.swap.paths.over_high_sleep_us`): memory.high holds its
    memcg in some lane and the kernel sleeps after one reclaim pass (v5.4-v5.7)."""
    return (m.memcg_high_mb is not None and m.switch("memcg_high_throttle") == "after_reclaim"
            and any_of(high_governs(m)))


def sleep_us(m, k: float, d: dict, x_per_s: float, kib):
    """A direct reclaimer's sleeps per folio swapped at ``x_per_s``: the
    isolation throttle (:func:`throttled_us`) and, where memory.high holds
    the memcg, the over-high throttle (:func:`mmcost.swap.paths.over_high_sleep_us`)."""
    out = throttled_us(m, k, d, x_per_s)
    if high_may_sleep(m):
        out = out + over_high_sleep_us(m, busy_share(m, k, d, x_per_s), kib)
    return out


def network_at(m, k: float, d_direct: dict, d_kswapd: dict, kib: float,
               throttled: float | None = None) -> tuple[LockSystem, float, dict]:
    """kswapd reclaims a share ``k`` of the folios. Its CPU time leaves the
    writers' cycle when it runs on spare CPUs; its lock holds stay in the
    cycle (the locks see the same acquisitions per folio swapped, from one
    more CPU: an approximation that undercounts kswapd's own waits).
    ``throttled``: the direct reclaimers' sleep per folio swapped; None:
    the fixed point of :func:`throttled_us` where they can be throttled."""
    d = {key: (1 - k) * d_direct[key] + k * d_kswapd[key] for key in d_direct}
    _, spare = kswapd_cpus(m)
    writer_reclaim = (1 - k) * d_direct["reclaim"] + (0.0 if spare else k * d_kswapd["reclaim"])
    s = m._swapped_share()
    work = d["fault"] / s + writer_reclaim + d["targets"]
    net = stations.network(m, stations.WRITERS, d, work, m.running, s, throttled)
    info = dict(kib=kib, swapped_share=s, shootdowns=d["shootdowns"], tlbis=d["tlbis"], device_us=d["device"],
                kswapd_share=k, kswapd_us=k * d_kswapd["reclaim"],
                throttled_us=0.0 if throttled is None else throttled, high_sleep_us=0.0)
    high = high_may_sleep(m)
    if throttled is None and (isolation_threshold(m, m.folio_kb // PAGE_KB) is not None or high):
        # the sleep lengthens the cycle that sets its own chance: the fixed point of a decreasing
        # function, between no sleep and the sleep at the unthrottled rate (a share u of that)
        hi = sleep_us(m, k, d, throughput(m, net), kib)
        n = lanes.count(m)
        scale = hi if n is None else np.where(hi > 0, hi, 1.0)  # (lanes without a sleep are not searched)

        def excess(u):
            trial = network_at(m, k, d_direct, d_kswapd, kib, u * hi)[0]
            return (sleep_us(m, k, d, throughput(m, trial), kib) - u * hi) / scale

        if any_of(hi > 0):
            u = lanes.find_root(excess, 0.0, 1.0, n, xatol=1e-12, where=hi > 0)
            net, _, info = network_at(m, k, d_direct, d_kswapd, kib, u * hi)
            if high:  # the over-high part of the sleep, at the solution's rate
                info["high_sleep_us"] = over_high_sleep_us(m, busy_share(m, k, d, throughput(m, net)), kib)
    return net, kib, info


def readback_network(m) -> tuple[LockSystem, dict]:
    """The read-back's closed network (:class:`mmcost.swap.SwapInModel`):
    each process reads its memory back, one operation swapping in one folio
    (:func:`mmcost.swap.paths.swap_in_mix`) and reading the pages that
    operation stands for (``1 / readback_faults()`` of its pages: the
    others were still resident). Under a memcg limit the memory is still
    over it, so the swap-in's charge (``mem_cgroup_swapin_charge_folio`` ->
    ``try_charge_memcg``) reclaims as much as it brings in: one folio of the
    same size swapped out per folio swapped in (:func:`mmcost.swap.paths.
    swap_out_sized`, without its fault), in the faulting task, on the same
    stations. The folios it reclaims that were only read since they came in
    have clean PTEs, so their flushes wait for the reclaim batch
    (``dirty=False``: no ``try_to_unmap_flush_dirty`` per folio); the pages
    resident when the read-back starts, written and dirty, are reclaimed
    in it too, one folio at a time as at swap-out: a share (1 - s) / f of
    what it reclaims (s the swapped share, f the fault share: every one of
    them in a sequential pass). kswapd and the isolation throttle are left out of the read-back
    (memcg reclaim of a cgroup v1 limit is never throttled; a v2 one is
    approximated unthrottled). Without a memcg limit nothing is reclaimed."""
    d, kib = swap_in_mix(m)
    d = dict(d)
    f = m.readback_faults()
    user = (kib / PAGE_KB) / f * m.user_us_per_page  # the pages this fault stands for, read by the user
    work = d["swapin"] + user
    reclaimed = 0.0 if m.memcg_mb is None else 1.0  # folios swapped out per folio swapped in
    dirty = 0.0
    if reclaimed:
        # the pages resident when the read-back starts (a share 1 - s of the data, written, dirty PTEs, in
        # the write phase's folios) are reclaimed in it too: a share of the reclaimed (1 - s) / f
        dirty = minimum(1.0, (1.0 - m._swapped_share()) / f)
        out: dict = {}
        d_w, kib_w = swap_out_mix(m, resident=True)
        for key, x in d_w.items():
            out[key] = dirty * kib / kib_w * x
        for kb, w in swap_in_sizes(m):
            for key, x in swap_out_sized(m, kb, dirty=False).items():  # read since swapped in: clean PTEs
                out[key] = out.get(key, 0.0) + (1.0 - dirty) * w * x
        for key in PER_WRITTEN & set(out):  # no write faults in a read-back
            out[key] = 0.0
            if "n:" + key in out:
                out["n:" + key] = 0.0
        d = {key: d.get(key, 0.0) + out.get(key, 0.0) for key in set(d) | set(out)}
        work = work + out["reclaim"] + out["targets"]
    d.setdefault("dram_fault", 0.0)
    net = stations.network(m, stations.WRITERS, d, work, m.running, 1.0)
    return net, dict(kib=kib, fault_share=f, reclaimed=reclaimed, user_us=user, dirty_share=dirty,
                     shootdowns=d.get("shootdowns", 0.0))
