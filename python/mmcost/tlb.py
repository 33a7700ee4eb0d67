"""TLB flushes of migration and reclaim: who is flushed, how often, how, and what it costs.

One description (:class:`TlbModel`), two solvers that check each other:

- :meth:`TlbModel.analytic`: expected rates in closed form. Every flush is
  one of the kernel's three operations (``arch/x86/mm/tlb.c``, v6.15-6.18):
  a batch flush (``arch_tlbbatch_flush``: a full flush of the batch's
  cpumask), a page flush (``ptep_clear_flush`` -> ``flush_tlb_mm_range`` of
  one page: INVLPG) or an mm flush above ``tlb_single_page_flush_ceiling``.
  Its targets are the non-lazy CPUs of the mms that own the flushed folios
  (:func:`flush_targets`; ``native_flush_tlb_multi`` -> ``should_flush_tlb``
  skips lazy CPUs), and how often it comes follows from the call structure:
  a migration call takes the demotable share of ``shrink_folio_list``'s 32
  folios (:func:`mean_fill`), reclaim flushes each folio unmapped from a
  dirty PTE alone before ``pageout()`` (:func:`dirty_flushes_per_call`),
  a NUMA-hinting promotion is one folio, and migration before v6.3 flushed
  every PTE. Under migrc a CPU's flush depends on a race: after its last
  full flush, the first deferred call starts a "pending" period that ends
  either with a full flush that happens anyway or, at the first reuse of a
  source folio, with a migrc flush; a renewal process per CPU with rate

      r = (1 - kappa I) / (1 / lambda_d + I),   I = int_0^inf S_D(t) exp(-kappa t) dt,
      S_D(t) = S_1(t) exp(-lambda_d int_0^t (1 - S_1)),   S_1 = S_reuse^batch_folios,

  with lambda_d the rate of deferred calls and kappa the rate of full
  flushes that clear the CPU anyway (deterministic reuse R, kappa = 0:
  r = 1 / (1/lambda_d + R)).
- :meth:`TlbModel.simulate`: the C++ discrete-event simulation of the same
  description (``core/src/tlb/tlb_sim.cpp``), per-CPU state, replications
  on threads, 99% confidence intervals.

Costs (:class:`TlbCosts`) turn rates into CPU time per cause: IPIs (and a
guest's VM exits), the sender's wait for acknowledgements with its own flush
overlapped (from v5.13; one flush's time is :func:`flush_cost`, shared with
``mmcost.swap``), local flushes (twice under PTI), refill misses from each
:class:`TlbStream`'s working set after a full flush (or a user-PCID flush
under PTI without INVPCID), the paging-structure caches every flush drops,
the kernel translations each IPI brings, and broadcast invalidation (arm64
TLBI + DSB, x86 INVLPGB + TLBSYNC from v6.15). Kernel references:
``arch/x86/mm/tlb.c``, ``arch/arm64/include/asm/tlbflush.h`` (batched unmap
since commit 43b3dfdd0455), ``mm/rmap.c`` (``set_tlb_ubc_flush_pending``,
``try_to_unmap_flush_dirty``), commit 4d4b6d66db63 (v6.4: no flush for
PROT_NONE PTEs), and the migrc series (v9, Byungchul Park, linux-mm, April 2024).

Units: rates per second, costs in microseconds (``*_us``) or nanoseconds
(``*_ns``), reuse times in microseconds (a :class:`~mmcost.locks.Dist`).
"""

from __future__ import annotations

import enum
import functools
import math
import os
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from typing import ClassVar

from . import _core, cpu_models, lanes
from . import _validate as v
from .locks import Dist
from .mechanism import Mechanism, Quantity, Result, knob
from .model import Prior

US_PER_S = 1e6
#: folios one migration or reclaim call isolates, at most (a DES call walks each)
MAX_BATCH_FOLIOS = 65536
#: 4K pages (PTEs) of the largest folio: PUD order, 1 GiB
MAX_FOLIO_PAGES = 2**18
#: the reuse times (us) the deferred policy's pending-period integral is computed for
REUSE_MEAN_US_RANGE = (1e-3, 1e15)


class Arch(str, enum.Enum):
    """``x86``: flushes reach other CPUs by IPI. ``arm64``: broadcast TLBI, no IPI."""

    X86 = "x86"
    ARM64 = "arm64"


class Policy(str, enum.Enum):
    """How migration flushes the TLBs (see ``core/include/mmcost/tlb/tlb_sim.hpp``).

    ``immediate``: one flush per folio. ``batched``: one flush per migration
    call (``try_to_unmap_flush``). ``deferred``: migrc, flush at reuse unless a
    full flush got there first."""

    IMMEDIATE = "immediate"
    BATCHED = "batched"
    DEFERRED = "deferred"




def refill_misses(entries: float, working_set_pages: float) -> float:
    """Extra misses after a full flush, over the steady state, for accesses
    drawn uniformly over ``working_set_pages`` pages (the independent
    reference model) by a TLB of ``entries`` entries.

    With k entries cached an access misses with probability 1 - k/W and, on a
    miss, k grows by one until the TLB is full; the steady state misses with
    1 - C/W. Summing the excess over the accesses spent at each k:

        extra = sum_{k=0}^{m-1} (1 - max(W - C, 0) / (W - k)),  m = min(C, W)

    = W when the working set fits (every page missed once), about C^2 / 2W
    when W >> C. Non-integer sizes use the same sum with digamma functions.
    """
    return _refill_misses(v.scalar("entries", entries), v.scalar("working_set_pages", working_set_pages))


#: terms of the 1/x series of the refill sum (:func:`_refill_misses`), used where m/x <= 0.05: the
#: next term is below 0.05^16 = 2e-21 of the first
_REFILL_TERMS = 16


@functools.cache
def _faulhaber() -> tuple:
    """Coefficients of S_n(m) = sum_{j<m} j^n = sum_k a_nk m^(n+1-k), n < _REFILL_TERMS + 1
    (Bernoulli numbers with B_1 = -1/2: (B_{n+1}(m) - B_{n+1}) / (n + 1), which continues the sum to
    non-integer m as the digammas do)."""
    from math import comb

    from scipy.special import bernoulli

    b = bernoulli(_REFILL_TERMS + 2)
    return tuple(tuple(comb(n + 1, k) * b[k] / (n + 1) for k in range(n + 1)) for n in range(_REFILL_TERMS + 1))


def _refill_misses(c, w):
    """:func:`refill_misses` of checked sizes, per lane where they are arrays.

    For W > C the sum is m - (x - 1) H with m = C, x = W - C + 1 and
    H = psi(x + m) - psi(x): two numbers near m whose difference, about
    m (m + 1) / 2x, the digammas cannot give once x >> m (W = 1e12 with
    C = 1 gave -0.6, a miss count of -inf; at x/m = 1e4 they were 3e-7
    off). Where m/x <= 0.05 the same sum is its series in 1/x, each term
    without cancellation: sum_n (-1)^n (S_n + S_{n+1}) / x^(n+1), S_0 = m,
    S_n = sum_{j<m} j^n (Faulhaber); elsewhere the digammas lose at most a
    factor (x/m)^2 <= 400 of their precision."""
    def partial(m):  # W > C, so m = C
        from scipy.special import digamma

        x = w - m + 1
        sums = [m] + [sum(a * m ** (n + 1 - k) for k, a in enumerate(row)) for n, row in enumerate(_faulhaber())][1:]
        series = sum((-1) ** n * (sums[n] + sums[n + 1]) / x ** (n + 1) for n in range(_REFILL_TERMS))
        if isinstance(x, np.ndarray):
            return np.where(m / x <= 0.05, series, m - (w - c) * (digamma(w + 1) - digamma(x)))
        return series if m / x <= 0.05 else m - (w - c) * (digamma(w + 1) - digamma(x))

    if isinstance(c, np.ndarray) or isinstance(w, np.ndarray):
        m = np.minimum(c, w)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return np.where(m == 0, 0.0, np.where(w <= c, w, partial(m)))
    m = min(c, w)
    if m == 0:
        return 0.0
    return float(w) if w <= c else float(partial(m))


@dataclass(frozen=True)
class TlbStream:
    """One translation stream: ``name`` (``itlb_load``, ``dtlb_load``,
    ``dtlb_store``; the perf event is ``<name>_miss_count``), the TLB entries
    serving it (``entries``: STLB for data, ITLB for code; for ``page_kb`` =
    2048 the entries that hold 2M translations), the pages of ``page_kb``
    it cycles through uniformly (``working_set_pages``), and its steady-state
    misses per CPU-second of useful work (``misses_per_work_s``). A workload
    with 4K- and THP-mapped memory is two streams."""

    name: str
    entries: float
    working_set_pages: float
    misses_per_work_s: float = 0.0
    page_kb: int = 4

    @classmethod
    def covering(cls, name: str, entries: float, working_set_mib: float, page_kb: int = 4,
                 misses_per_work_s: float = 0.0) -> TlbStream:
        """A stream over ``working_set_mib`` mapped with ``page_kb`` pages
        (4: PTEs; 2048: PMD-mapped THP, 512x fewer translations to refill)."""
        page_kb = v.count("page_kb", page_kb, minimum=4)
        return cls(name, entries, v.scalar("working_set_mib", working_set_mib) * 1024 / page_kb, misses_per_work_s,
                   page_kb)

    def check(self, where: str) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"{where}.name must be a non-empty string")
        page_kb = v.count(f"{where}.page_kb", self.page_kb, minimum=4)
        if page_kb & (page_kb - 1):
            raise ValueError(f"{where}.page_kb must be a power of two (4, 16, 64 ... 2048), got {page_kb}")
        v.scalar(f"{where}.entries", self.entries)
        v.scalar(f"{where}.working_set_pages", self.working_set_pages)
        v.scalar(f"{where}.misses_per_work_s", self.misses_per_work_s)

    @property
    def refill(self) -> float:
        return _refill_misses(self.entries, self.working_set_pages)  # (checked with the model)

    @property
    def pwc_refill(self) -> float:
        """Upper-level page-table references re-read after a flush drops the
        paging-structure caches. A MOV to CR3 drops them for the PCID, and so
        does INVLPG, whatever its address (Intel SDM vol. 3A, sec. 4.10.4.1).
        The working set's PDE and PDPTE entries, up to what the caches hold,
        plus the PML4E, are each read once more."""
        span = self.working_set_pages * self.page_kb / 4  # in 4K pages
        ceil = np.ceil if isinstance(span, np.ndarray) else math.ceil
        pdpte = lanes.minimum(cpu_models.PDPTE_CACHE_ENTRIES, ceil(span / 2**18))
        if self.page_kb >= 2048:
            return pdpte + 1.0
        return lanes.minimum(cpu_models.PDE_CACHE_ENTRIES, ceil(span / 512)) + pdpte + 1.0


def walk_ns(costs: TlbCosts, virtualized: bool) -> float:
    """One refill walk (ns) as the costs charge it: a measured ``refill_ns``
    (a machine profile's ``tlb_refill_ns``, the guest's 2-D walk inside it),
    else ``walk_ns``, times ``nested_walk_factor`` in a guest."""
    if costs.refill_ns is not None:
        return costs.refill_ns
    return costs.walk_ns * (costs.nested_walk_factor if virtualized else 1.0)


@dataclass(frozen=True)
class TlbCosts:
    """CPU time per primitive, and what a KVM guest adds.

    Left ``None``, a cost comes from the model's ``cpu_model`` preset
    (:mod:`mmcost.cpu_models`: cycles at its clock, each with its source);
    fits and bands treat them as priors centred there:

    - ``irq_us``: receiving a flush IPI (interrupt entry/exit plus
      ``flush_tlb_func``); ``ipi_send_us``: per target, the ICR write and the
      ``smp_call_function_many_cond`` bookkeeping (Amit, Tai, Wei, "Don't
      shoot down TLB shootdowns!", EuroSys 2020, sec. 2).
    - ``full_flush_us`` / ``invlpg_us``: the local CR3 write and one INVLPG
      (same source). Under PTI each is paid twice: the kernel PCID now and
      the user PCID on return to user (``invalidate_user_asid``, or
      ``invpcid_flush_one`` for a single entry).
    - ``walk_ns``: one page walk that hits the paging-structure caches and L2
      (Bhargava et al., ASPLOS 2008: 4 references native);
      ``nested_walk_factor``: a guest's two-dimensional walk (up to 24
      references) over a native one. ``refill_ns``: one refill miss after a
      full flush as measured on a machine (``mmcost-probe refill``: a
      pointer chase over a hot set that fits the STLB, with and without a
      full flush of the mm between rounds of it; a guest's 2-D walk is
      inside, so the nested factor is not applied again); it replaces
      ``walk_ns`` x factor for every walk the costs charge.
    - ``vm_exit_us``: one VM exit and re-entry. A guest's flush IPI exits on
      the sender (one ICR write per target, or one ``KVM_HC_SEND_IPI``
      hypercall per mask with PV IPIs, v4.19); on the target only without
      ``posted_interrupts`` (APICv/AVIC deliver to a running vCPU).
    - ``tlbi_us``/``dsb_us``: one broadcast TLBI and one DSB ISH wait
      (arm64); ``invlpgb_us``/``tlbsync_us``: the same pair on AMD
      (INVLPGB, TLBSYNC).
    """

    irq_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI handling on a target")
    ipi_send_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI per target, sender")
    full_flush_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="a local full flush")
    invlpg_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one INVLPG")
    walk_ns: float | None = knob(None, kind="float", unit="ns", upper=1e5, doc="one native page walk")
    refill_ns: float | None = knob(None, kind="float", unit="ns", upper=1e5,
                                   doc="one refill miss after a full flush as the machine pays it, a guest's 2-D walk "
                                       "included (mmcost-probe refill: a machine profile's tlb_refill_ns); None: "
                                       "walk_ns, times nested_walk_factor in a guest")
    nested_walk_factor: float = knob(3.0, unit="1", lower=1.0, upper=20.0,
                                     prior=Prior(3.0, 1.0, "Bhargava et al., ASPLOS 2008: 24 vs 4 references, cut by "
                                                           "page-walk caches"))
    vm_exit_us: float | None = knob(None, kind="float", unit="us", upper=100.0,
                                    doc="one VM exit and re-entry; None: the cpu_model's (cpu_models.VM_EXIT_PRIOR; "
                                        "0 in a machine profile, whose IPI send includes it)")
    posted_interrupts: bool = knob(True, doc="APICv/AVIC: an IPI reaches a running vCPU without a VM exit")
    tlbi_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one broadcast TLBI (arm64)")
    dsb_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one DSB ISH wait (arm64)")
    invlpgb_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one INVLPGB (AMD)")
    tlbsync_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one TLBSYNC wait (AMD)")

    def check(self) -> None:
        for f in ("irq_us", "ipi_send_us", "full_flush_us", "invlpg_us", "walk_ns", "tlbi_us", "dsb_us",
                  "invlpgb_us", "tlbsync_us", "vm_exit_us"):
            v.scalar(f"costs.{f}", getattr(self, f))
        if self.refill_ns is not None:
            v.scalar("costs.refill_ns", self.refill_ns)
        if lanes.any_of(v.scalar("costs.nested_walk_factor", self.nested_walk_factor) < 1):
            raise ValueError(f"costs.nested_walk_factor must be >= 1 (a guest is never cheaper), "
                             f"got {self.nested_walk_factor}")
        if not isinstance(self.posted_interrupts, (bool, np.bool_)):
            raise TypeError(f"costs.posted_interrupts must be a bool, got {type(self.posted_interrupts).__name__}")


def flush_targets(cpus: float, mm_cpus: float, mms: float, folios: float, sender_in_mm: bool) -> float:
    """Expected remote CPUs of one flush covering ``folios`` folios.

    ``arch_tlbbatch_add_pending`` ORs the ``mm_cpumask`` of every mm it
    unmaps from into the batch's cpumask, and ``native_flush_tlb_multi``
    skips lazy-TLB CPUs (``should_flush_tlb``), so the targets are the
    non-lazy CPUs of the owners of the flushed folios, minus the sender's.
    Each folio belongs to one of ``mms`` mms drawn uniformly (the LRU holds
    their pages in fault order), each running on its own ``mm_cpus`` CPUs.
    A sender outside every mm (kswapd, kcompactd) targets all of them; when
    they fill the machine it runs on a CPU it took from one of them, which is
    lazy: never more than ``cpus - 1`` targets. A sender inside an mm (a
    task migrating or reclaiming its own pages) flushes its own CPU locally."""
    mms = max(1.0, float(mms))
    hit = 1.0 - (1.0 - 1.0 / mms) ** folios  # a given mm owns at least one folio of the flush
    if sender_in_mm:
        return lanes.minimum(cpus - 1.0, (mm_cpus - 1.0) * hit + (mms - 1.0) * mm_cpus * hit)
    return lanes.minimum(cpus - 1.0, mms * mm_cpus * hit)


def local_flush_chance(mms: float, folios: float, sender_in_mm: bool) -> float:
    """The chance the flushing CPU is in the flush's cpumask and flushes
    itself: a task inside one of ``mms`` mms (drawn uniformly per folio, as
    :func:`flush_targets` draws them) does when its own mm owns one of the
    ``folios``; kswapd or kcompactd (no mm) never does: a CPU it took from
    an mm is lazy, and ``should_flush_tlb`` skips it (it flushes at its next
    ``switch_mm`` instead, not on the sender's time)."""
    if not sender_in_mm:
        return 0.0
    mms = max(1.0, float(mms))
    return 1.0 - (1.0 - 1.0 / mms) ** folios


def flush_cost(*, targets: float, full: bool, local: float, full_flush_us: float, invlpg_us: float,
               ipi_send_us: float, irq_us: float, entries: float = 1.0, pti: bool = False,
               virtualized: bool = False, vm_exit_us: float = 0.0, pv_ipi: bool = False,
               posted_interrupts: bool = True, pv_tlb_flush: bool = False, preempted_share: float = 0.0,
               concurrent: bool = True) -> dict:
    """The CPU time of one x86 IPI flush, as ``TlbModel`` and ``SwapModel`` both charge it.

    Inputs: the expected remote ``targets`` (:func:`flush_targets`), a
    ``full`` flush (``arch_tlbbatch_flush``, or a range above
    ``tlb_single_page_flush_ceiling``: a CR3 write, ``full_flush_us``) or
    ``entries`` INVLPGs (``invlpg_us`` each), each paid twice under ``pti``
    (the user PCID too); ``local``: the chance the sender is in the
    cpumask (:func:`local_flush_chance`); the per-target send and receive
    costs, and in a KVM guest (``virtualized``) the VM exits.

    The order is the kernel's. From v5.13 (4ce94eabac16, "x86/mm/tlb: Flush
    remote and local TLBs concurrently": ``concurrent``) ``flush_tlb_multi``
    -> ``native_flush_tlb_multi`` -> ``on_each_cpu_cond_mask`` ->
    ``smp_call_function_many_cond`` (kernel/smp.c) queues a csd per target
    and sends the IPIs, runs the local flush (``run_local``), then spins in
    ``csd_lock_wait`` on each target until its handler has run: the local
    flush hides under the wait. Before it ``arch_tlbbatch_flush`` and
    ``flush_tlb_mm_range`` called ``flush_tlb_func_local`` first, then
    ``flush_tlb_others``, which sends and waits: one after the other. A
    target's handler, from the send to its acknowledgement, is
    ``irq_us`` + its own flush (+ a VM exit on receipt without
    ``posted_interrupts``), and the handlers run in parallel, so with
    ``a = min(1, IPI'd targets)`` the chance of at least one (exact for
    one possible target) and ``remote = irq + exit + own``:

        concurrent: sender = send + a remote + local (1 - a) own
        serial:     sender = send + a remote + local own

    (given the local flush, the wait is max(own, remote) = remote, as
    remote >= own). ``send`` is ``ipi_send_us`` per IPI'd target, and in a
    guest one VM exit per target (an ICR write each), or one per mask with
    PV IPIs (``pv_ipi``: ``kvm_send_ipi_mask``, one ``KVM_HC_SEND_IPI``
    hypercall, v4.19).

    PV TLB flush (``pv_tlb_flush``: 858a43aae235, "KVM: X86: support
    paravirtualized help for TLB shootdowns", v4.16; the guest uses it when
    the host offers KVM_FEATURE_PV_TLB_FLUSH and steal time, without the
    KVM_HINTS_REALTIME hint of dedicated vCPUs): ``kvm_flush_tlb_multi``
    (arch/x86/kernel/kvm.c) drops from the mask every target whose
    ``steal_time.preempted`` says it is preempted, setting
    KVM_VCPU_FLUSH_TLB so the host flushes its TLB at its next VM entry
    (``record_steal_time``): no IPI, no exit, no wait for it. A target is
    preempted ``preempted_share`` of its time (0: a dedicated vCPU; the
    guest's steal share, ``/proc/stat``, is the measured stand-in), so
    ``targets (1 - preempted_share)`` are IPI'd; the others still flush, on
    the host's time at their next entry. Measured on this project's KVM
    VM (boot_id 1901ae91-0d86-411b-93a4-a42f4e41b06b, guest 6.18): CPUID
    0x40000001 EAX = 0x01007efb, KVM_FEATURE_PV_TLB_FLUSH (bit 9),
    STEAL_TIME (bit 5) and PV_SEND_IPI (bit 11) set, EDX (hints) 0: its
    guest kernel flushes through ``kvm_flush_tlb_multi``.

    The TLB refill after a full flush is not here: each flushed CPU pays it
    afterwards, in its own work, not inside the flush (``TlbModel`` counts
    it as ``refill_misses`` per full flush, :meth:`TlbResult.costs`;
    ``SwapModel`` adds it to the sender's and the targets' CPU after this,
    :func:`mmcost.swap.paths.flush`).

    Returns ``sender`` (us: the flushing CPU's time), ``alone`` (us: what
    the sender would pay with no remote target, ``local`` x own),
    ``targets`` (us: the remote CPUs' time, handlers and host-side flushes),
    ``shootdowns`` (IPIs received), ``exits`` (the sender's VM exits), and
    ``tlbis``/``dsbs`` = 0 (no broadcast: arm64's flush is
    :func:`mmcost.swap.paths.dvm_flush`, INVLPGB's :meth:`TlbResult.flush_sender_us`).
    """
    pv = bool(virtualized) and bool(pv_tlb_flush)
    ipi_t = targets * (1.0 - preempted_share) if pv else targets
    any_target = lanes.minimum(1.0, ipi_t)
    own = (full_flush_us if full else entries * invlpg_us) * (2.0 if pti else 1.0)
    exit_recv = vm_exit_us if virtualized and not posted_interrupts else 0.0
    remote = irq_us + exit_recv + own
    exits = (any_target if pv_ipi else ipi_t) if virtualized else 0.0
    send = ipi_t * ipi_send_us + exits * (vm_exit_us if virtualized else 0.0)
    wait = any_target * remote
    own_local = local * own
    sender = send + wait + (own_local * (1.0 - any_target) if concurrent else own_local)
    host = (targets - ipi_t) * own  # the preempted targets, flushed by the host at their next entry
    return dict(sender=sender, alone=own_local, targets=ipi_t * remote + host, shootdowns=ipi_t, exits=exits,
                tlbis=0.0, dsbs=0.0)


def mean_fill(batch: int, share: float) -> float:
    """Mean folios of a non-empty call that takes each of ``batch`` isolated
    folios with probability ``share``: E[Binomial(batch, share) | > 0]."""
    if isinstance(share, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(share >= 1.0, float(batch), batch * share / -np.expm1(batch * np.log1p(-share)))
    if share >= 1.0:
        return float(batch)
    return batch * share / -math.expm1(batch * math.log1p(-share))


def dirty_flushes_per_call(batch: int, dirty: float) -> float:
    """Flushes of one ``shrink_folio_list`` call over ``batch`` unmapped folios,
    ``dirty`` of them with a dirty PTE. Each dirty folio flushes the pending
    batch before ``pageout()`` (``try_to_unmap_flush_dirty``: the PTE was
    dirty, so a writable TLB entry may exist); the clean folios after the
    last dirty one are flushed by the closing ``try_to_unmap_flush``, which
    has work iff the last folio was clean: ``batch * dirty + 1 - dirty``."""
    return batch * dirty + (1.0 - dirty)


@dataclass(frozen=True)
class FlushCounter:
    """How a perf flush event counts: per full flush, per INVLPG'd entry, plus
    a background rate per CPU-second from flushes the model does not describe.
    ``itlb.itlb_flush`` counts up to 2 per full flush with PTI (the kernel
    and user PCIDs are flushed separately: ``invalidate_user_asid``).
    ``name`` is the metric (``itlb_flush_count``)."""

    name: str
    per_full_flush: float = knob(1.0, unit="1", upper=100.0)
    per_invlpg: float = knob(1.0, unit="1", upper=100.0)
    background_per_s: float = knob(0.0, unit="1/s", upper=1e9)


#: the fields of a flush (:func:`flush_cost`) that every model flushing TLBs declares (TlbModel, SwapModel)
FLUSH_KNOBS = {
    "pv_ipi": (None, dict(kind="bool", kernel=True,
                          doc="a KVM guest sends an IPI mask with one hypercall (v4.19), not an exit per target")),
    "pv_tlb_flush": (None, dict(kind="bool", kernel=True,
                                doc="a KVM guest skips preempted vCPUs' flush IPIs, the host flushes them at entry "
                                    "(kvm_flush_tlb_multi, v4.16)")),
    "concurrent_flush": (None, dict(kind="bool", kernel=True,
                                    doc="the sender's own flush runs while the remote handlers do (v5.13, "
                                        "4ce94eabac16), not before its IPIs")),
    "preempted_share": (0.0, dict(unit="1", upper=1.0,
                                  doc="share of a flush target vCPU's time it is preempted (pv_tlb_flush skips its "
                                      "IPI); 0: dedicated vCPUs; the guest's steal share is the measured stand-in")),
}


def flush_knob(name: str):
    """The field ``name`` of :data:`FLUSH_KNOBS` (a fresh dataclass field for each model declaring it)."""
    default, kwargs = FLUSH_KNOBS[name]
    return knob(default, **kwargs)


def _default_counters() -> tuple:
    return (FlushCounter("itlb_flush_count"), FlushCounter("dtlb_thread_flush_count"),
            FlushCounter("stlb_any_flush_count"))


def _default_streams() -> tuple:
    # Skylake-class core: 1536-entry STLB, 128-entry ITLB (Intel SDM vol. 3, sec. 4.10; optimization manual)
    return (TlbStream("itlb_load", 128, 32), TlbStream("dtlb_load", 1536, 1e6), TlbStream("dtlb_store", 1536, 1e6))


@dataclass(frozen=True)
class TlbModel(Mechanism):
    """The TLB flushes of page migration and reclaim on a machine of ``cpus`` CPUs.

    Folios per second: ``promotion_rate_per_s`` (NUMA-hinting faults,
    ``do_numa_page`` -> ``migrate_misplaced_folio``, one folio each: their
    PTEs are PROT_NONE, so they need no flush when ``skip_inaccessible``,
    commit 4d4b6d66db63, v6.4), ``demotion_rate_per_s`` (kswapd's
    ``demote_folio_list``, taking ``migrate_fraction`` of each batch) and
    ``reclaim_unmap_rate_per_s`` (``shrink_folio_list`` -> ``try_to_unmap``,
    a flush per ``dirty_fraction`` folio before ``pageout()``; migrc never
    defers these). Calls isolate ``batch_folios`` folios,
    ``entries_per_folio`` TLB entries each (1 for a 4K page or a PMD-mapped
    THP, 16 for a PTE-mapped 64K mTHP); ``writable_fraction`` of migrated
    folios cannot be deferred by migrc. Whom a flush reaches: ``mms`` mms on
    ``mm_cpus`` non-lazy CPUs each (all ``cpus`` when None), flushed from
    inside one (``sender_in_mm``) or by kswapd.
    ``natural_flush_rate_per_s``: full flushes per CPU with no migration
    cause (x86: PCID recycling in ``switch_mm_irqs_off``; arm64: global ASID
    rollover). ``other_round_rate_per_s``: other full-flush IPI rounds of the
    mm (NUMA-balancing scans). ``reuse``: time from a folio's migration to the
    allocator handing it out again (microseconds).

    ``work_s`` (useful CPU time per CPU) turns rates into a run's counters
    and runtime. Tiering: with ``working_set_mb``, ``fast_mem_mb`` and
    ``reference_fast_mem_mb`` set, the migration rates (given at the
    reference) scale with the share of a uniformly accessed working set that
    lives in slow memory. Costs (:class:`TlbCosts`) left ``None`` come from
    ``cpu_model`` (:mod:`mmcost.cpu_models`); the switches left ``None``
    (``skip_inaccessible``, ``pti``, ``invlpgb``, ``batched_migration_flush``
    ...) from the ``kernel``, and so does ``policy``: a row's ``kernel``
    column sets every one the row leaves empty.

    ``arch`` and ``cpu_model`` must agree: ``arch="arm64"`` with an x86
    preset is a ValueError naming both, not a switch to the other
    architecture's generic preset. The preset carries the clock, the TLB
    sizes and the cycle costs a fit's values are ratios to; a generic
    preset in its place is a machine nobody named, and a warning repeated
    over a band's thousands of draws is easy to miss. A row that names
    only a ``cpu_model`` takes its arch (``cpu_model="ampere-altra"`` is
    arm64); a row that names only an ``arch`` the model's preset is not
    must name a preset too (``cpu_model="generic-x86"``).
    """

    name: str = field(default="tlb", kw_only=True)
    cpus: int = knob(16, unit="count", doc="CPUs of the machine (all run the mm unless mm_cpus says)")
    arch: Arch | None = knob(None, kind="str", choices=("x86", "arm64"),
                             aliases=(("x86_64", "x86"), ("amd64", "x86"), ("aarch64", "arm64")),
                             doc="None: the cpu_model's, else x86 (a cpu_model of the other arch is an error)")
    policy: Policy | None = knob(None, kind="str", choices=tuple(p.value for p in Policy),
                                 doc="migration's flush; None: the kernel's batched_migration_flush (batched from "
                                     "v6.3, else immediate); 'deferred' is migrc, in no kernel")
    virtualized: bool = knob(False, doc="a KVM guest: IPIs exit, page walks are 2-D")
    cpu_model: str | None = knob(None, kind="str", choices=tuple(cpu_models.PRESETS), path_suffix=".toml",
                                 doc="CPU preset (mmcost.cpu_models) or a machine profile's path (mmcost measure "
                                     "machine); None: generic for the arch")
    kernel: str = knob("6.18", doc="selects every switch left None (mmcost.kernel)")
    promotion_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios promoted per second (NUMA hinting)")
    demotion_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios demoted per second (kswapd)")
    reclaim_unmap_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios unmapped by reclaim per second")
    skip_inaccessible: bool | None = knob(None, kind="bool", kernel=True, doc="no flush for PROT_NONE PTEs (v6.4)")
    batch_folios: int = knob(32, unit="count", doc="folios per migration/reclaim call")
    entries_per_folio: int = knob(1, unit="count", doc="TLB entries per folio")
    flush_ceiling: int = knob(33, unit="count", doc="tlb_single_page_flush_ceiling")
    writable_fraction: float = knob(0.0, unit="1", upper=1.0, doc="migrated folios migrc cannot defer")
    natural_flush_rate_per_s: float = knob(0.0, unit="1/s", upper=1e7, doc="full flushes per CPU with no IPI")
    other_round_rate_per_s: float = knob(0.0, unit="1/s", upper=1e7, doc="other full-flush IPI rounds of the mm")
    other_page_flush_rate_per_s: float = knob(0.0, unit="1/s", upper=1e9,
                                              doc="other one-page flushes of the mm (COW faults, mprotect)")
    reuse: Dist = knob(None, factory=lambda: Dist.exponential(5000.0), prefix=True,
                       doc="time from a folio's migration to its reuse (us)")
    costs: TlbCosts = field(default_factory=TlbCosts)
    streams: tuple = field(default_factory=_default_streams)
    counters: tuple = field(default_factory=_default_counters)
    work_s: float = knob(1.0, unit="s", lower=1e-9, upper=1e9, doc="useful CPU time per CPU in a run")
    working_set_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)
    fast_mem_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)
    reference_fast_mem_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)
    # --- who is flushed, and how full a flush is
    mm_cpus: float | None = knob(None, kind="float", unit="CPUs", lower=1.0, upper=1e6,
                                 doc="CPUs running each mm, not lazy, at a flush (a mean); None: all cpus")
    mms: int = knob(1, unit="count", doc="mms whose folios share the migration/reclaim batches")
    sender_in_mm: bool = knob(False, doc="a task of the mm migrates/reclaims (else kswapd, outside every mm)")
    migrate_fraction: float = knob(1.0, unit="1", lower=1e-9, upper=1.0,
                                   doc="share of the batch_folios isolated folios that a migration call takes")
    dirty_fraction: float = knob(1.0, unit="1", upper=1.0, doc="reclaimed folios unmapped from a dirty PTE")
    # --- what one flush invalidates
    pti: bool | None = knob(None, kind="bool", kernel=True,
                            doc="page-table isolation; None: the kernel's (v4.15) on a cpu_model with Meltdown")
    invpcid: bool = knob(True, doc="INVPCID: a user single-entry flush under PTI stays single")
    invlpgb: bool | None = knob(None, kind="bool", kernel=True,
                                doc="x86 INVLPGB flushing; None: kernel >= 6.15 on a cpu_model that has it, not in "
                                    "a KVM guest, not under PTI from v6.16")
    invlpgb_with_pti: bool | None = knob(None, kind="bool", kernel=True,
                                         doc="INVLPGB stays on under PTI (v6.15 only: 94a17f2dc90b, v6.16, turns it off)")
    batched_migration_flush: bool | None = knob(None, kind="bool", kernel=True,
                                                doc="policy None: migration batches its flush (v6.3)")
    batched_unmap_flush: bool | None = knob(None, kind="bool", kernel=True,
                                            doc="reclaim batches its flush (x86 v4.3, arm64 v6.5)")
    flush_dirty_before_pageout: bool | None = knob(None, kind="bool", kernel=True,
                                                   doc="a dirty folio is flushed before pageout (v4.3)")
    pv_ipi: bool | None = flush_knob("pv_ipi")
    pv_tlb_flush: bool | None = flush_knob("pv_tlb_flush")
    concurrent_flush: bool | None = flush_knob("concurrent_flush")
    preempted_share: float = flush_knob("preempted_share")
    # arm64 contpte (v6.9): a 64K folio mapped with the contiguous bit is one TLB entry, so its refill is a
    # TlbStream of page_kb=64; its unmap still issues one TLBI per page unless FEAT_TLBIRANGE batches them
    tlbi_range: bool = knob(False, doc="arm64 FEAT_TLBIRANGE: one range TLBI per folio (v5.11)")
    irq_tlb_entries: float = knob(
        3.0, unit="entries", upper=64.0,
        prior=Prior(3.0, 2.0, "a flush IPI runs on the 4K-mapped IRQ stack (vmap'd, arch/x86/kernel/irq_64.c "
                              "map_irq_stack) and cpu_entry_area entry stack, and touches percpu data and the "
                              "flush_tlb_info/csd lines: a few kernel translations, each evicting a user one "
                              "from a TLB the working set fills (kernel text is on 2M pages)"),
        doc="kernel translations one flush IPI brings into the target's TLB")
    # --- the reclaimer's own work per folio (reclaim_us_per_page)
    lazyfree: bool = knob(False, doc="reclaimed folios are lazyfree (MADV_FREE'd): clean PTEs, discarded, no I/O")
    batched_lazyfree_unmap: bool | None = knob(None, kind="bool", kernel=True,
                                               doc="a lazyfree large folio's PTEs are cleared in one batch (v6.15)")
    reclaim_folio_us: float = knob(
        1.0, unit="us", upper=1e3,
        prior=Prior(1.0, 0.7, "shrink_folio_list per folio besides its PTEs: isolation, folio lock, the "
                              "try_to_unmap call, the discard or __remove_mapping and free_folios; the order of "
                              "a microsecond (mmcost.swap's reclaim_us_per_folio adds swap-out's own per-folio work)"),
        doc="reclaim work per folio, besides its PTEs and pages")
    unmap_iter_us: float = knob(
        0.1, unit="us", upper=100.0,
        prior=Prior(0.1, 0.05, "one iteration of try_to_unmap_one's page_vma_mapped_walk loop: the walk step, "
                               "set_tlb_ubc_flush_pending (inc_mm_tlb_gen, a cpumask_or) and "
                               "folio_remove_rmap_pte: a few uncontended atomics"),
        doc="one unmap loop iteration (one per PTE unless batched)")
    page_us: float = knob(
        0.2, unit="us", upper=100.0,
        prior=Prior(0.2, 0.15, "per 4K page of a reclaimed folio: the PTE cleared, its counters, the madvise or "
                               "LRU walk's step over it"),
        doc="reclaim work per 4K page")
    # --- the migrator's own work (migration throughput)
    folio_pages: int | None = knob(None, kind="int", doc="4K pages per folio; None: entries_per_folio")
    copy_us_per_page: float | None = knob(None, kind="float", unit="us", upper=1e3,
                                          doc="copying one 4K page; None: 2 x 4 KiB at the preset's core bandwidth")
    pte_us: float | None = knob(None, kind="float", unit="us", upper=5.0,
                                doc="per PTE cleared or restored; None: the cpu_model's (cpu_models.PTE_PRIOR)")
    rmap_us_per_folio: float = knob(
        2.0, unit="us", upper=1e3,
        prior=Prior(2.0, 1.0, "migrate_folio_unmap + migrate_folio_move without the copy: folio lock, the rmap "
                              "walk of try_to_migrate, the new folio's allocation, remove_migration_ptes; the "
                              "order of shrink_folio_list's per-folio rmap work (mmcost.swap reclaim_us_per_folio)"),
        doc="per folio migrated, besides its PTEs, copy and flush")
    migration_pages: float | None = knob(None, kind="float", unit="pages", lower=1.0, upper=1e12,
                                         doc="pages a closed-loop migration moves (migration_time_s)")

    FREE: ClassVar = ("demotion_rate_per_s",)

    @property
    def PRIORS(self) -> dict:  # noqa: N802 - the Mechanism hook
        """Priors of the table-derived costs, relative to this preset's value."""
        arch = self.arch.value if isinstance(self.arch, Arch) else (self.arch or "x86")
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(arch)
        return cpu_models.relative_priors(self.table_values(), {"copy_us_per_page": (
            "folio_copy of one 4K page: 4 KiB read and written at the preset's core bandwidth; "
            + cpu_models.CORE_WRITE_SOURCE, 0.5)}, cpu.measured_priors())

    def table_origin(self, name: str) -> str:
        """``profile <file>`` for a cost a machine profile measured, else the preset's name."""
        return cpu_models.origin(self.cpu_model, getattr(self, "arch", None), name, getattr(self, "compressor", None))

    def table_values(self) -> dict:
        arch = Arch(self.arch).value if isinstance(self.arch, (Arch, str)) and self.arch in ("x86", "arm64", Arch.X86,
                                                                                             Arch.ARM64) else "x86"
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(arch)
        costs = cpu.costs()
        out = {k: val for k, val in costs.items() if k in TlbCosts.__dataclass_fields__}
        out["pte_us"] = costs["pte_us"]
        out["copy_us_per_page"] = 2 * 4.096 / costs["core_write_gb_s"]  # folio_copy: read and write 4 KiB
        for st in self.streams if isinstance(self.streams, tuple) else ():  # TLB sizes move with the CPU
            if isinstance(st, TlbStream) and st.page_kb == 4:
                out[f"{st.name}_entries"] = costs["itlb_entries" if st.name.startswith("itlb") else "stlb_entries"]
        return out

    def check(self) -> None:
        # every float field (nested ones too) within its own bounds first: an error names the field set
        v.fields_in_bounds(self)
        # sizes (ValueError naming the field and the limit): the kernel's maxima, and the DES's C ints
        v.at_most("cpus", v.count("cpus", self.cpus), v.MAX_CPUS, "CONFIG_NR_CPUS's largest value")
        v.at_most("mms", v.count("mms", self.mms), v.MAX_TASKS, "PID_MAX_LIMIT: an mm has a task")
        v.at_most("batch_folios", v.count("batch_folios", self.batch_folios), MAX_BATCH_FOLIOS,
                  "folios one call isolates: the kernel's take 32 (SWAP_CLUSTER_MAX) to 512 "
                  "(NR_MAX_BATCHED_MIGRATION); the DES walks each")
        v.at_most("entries_per_folio", v.count("entries_per_folio", self.entries_per_folio), MAX_FOLIO_PAGES,
                  "4K PTEs of a PUD-sized (1 GiB) folio, the largest")
        v.at_most("flush_ceiling", v.count("flush_ceiling", self.flush_ceiling, minimum=0), 2**31 - 1,
                  "the DES holds it in a C int")
        if self.arch is None:
            object.__setattr__(self, "arch", cpu_models.get(self.cpu_model).arch if self.cpu_model else "x86")
        for name, enum_type in (("arch", Arch), ("policy", Policy)):
            val = getattr(self, name)
            if val is None:
                continue
            try:
                object.__setattr__(self, name, enum_type(val))
            except ValueError:
                raise ValueError(f"{name} must be one of {[e.value for e in enum_type]}, got {val!r}") from None
        if self.cpu_model is not None:
            cpu_models.check_arch(self.arch.value, self.cpu_model)
        for name in ("virtualized", "sender_in_mm", "invpcid", "tlbi_range", "lazyfree"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.skip_inaccessible is not None and not isinstance(self.skip_inaccessible, (bool, np.bool_)):
            raise TypeError(f"skip_inaccessible must be a bool, got {type(self.skip_inaccessible).__name__}")
        for name in ("promotion_rate_per_s", "demotion_rate_per_s", "reclaim_unmap_rate_per_s"):
            v.scalar(name, getattr(self, name))
        if lanes.any_of(v.scalar("writable_fraction", self.writable_fraction) > 1):
            raise ValueError(f"writable_fraction must be in [0, 1], got {self.writable_fraction}")
        for name in ("pti", "invlpgb", "invlpgb_with_pti", "batched_migration_flush", "batched_unmap_flush",
                     "flush_dirty_before_pageout", "pv_ipi", "batched_lazyfree_unmap", "pv_tlb_flush",
                     "concurrent_flush"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool or None, got {type(getattr(self, name)).__name__}")
        if self.mm_cpus is not None and lanes.any_of((v.scalar("mm_cpus", self.mm_cpus) < 1)
                                                     | (self.mm_cpus > self.cpus)):
            raise ValueError(f"mm_cpus must be in [1, cpus = {self.cpus}], got {self.mm_cpus}")
        if self.folio_pages is not None:
            v.at_most("folio_pages", v.count("folio_pages", self.folio_pages), MAX_FOLIO_PAGES,
                      "4K pages of a PUD-sized (1 GiB) folio, the largest")
        for name in ("migrate_fraction", "dirty_fraction"):
            x = v.scalar(name, getattr(self, name))
            if lanes.any_of((x > 1) | ((x <= 0) & (name == "migrate_fraction"))):
                raise ValueError(f"{name} must be in {'(0, 1]' if name == 'migrate_fraction' else '[0, 1]'}, got {x}")
        for name in ("copy_us_per_page", "pte_us", "rmap_us_per_folio", "migration_pages"):
            if getattr(self, name) is not None:
                v.scalar(name, getattr(self, name))
        v.scalar("natural_flush_rate_per_s", self.natural_flush_rate_per_s)
        v.scalar("other_round_rate_per_s", self.other_round_rate_per_s)
        v.scalar("other_page_flush_rate_per_s", self.other_page_flush_rate_per_s)
        if not isinstance(self.reuse, Dist):
            raise TypeError(f"reuse must be a mmcost.locks.Dist, got {type(self.reuse).__name__}")
        self.reuse.check("reuse")
        if self.reuse.kind == "empirical":
            v.at_most("reuse.samples_us", len(self.reuse.samples_us), 10**6,
                      "samples of an empirical reuse law (the pending-period integral sums over them in Python)")
        elif self.flush_policy is Policy.DEFERRED:
            # a reuse time far below a nanosecond underflowed the first-reuse rate's 1/mean (ZeroDivisionError
            # at 5e-324 us); one beyond 1e15 us (31 years) is no reuse at all
            lo, hi = REUSE_MEAN_US_RANGE
            if lanes.any_of((self.reuse.mean_us < lo) | (self.reuse.mean_us > hi)):
                raise ValueError(f"reuse.mean_us must be in [{lo:g}, {hi:g}] us under the deferred policy, "
                                 f"got {self.reuse.mean_us}")
        if not isinstance(self.costs, TlbCosts):
            raise TypeError(f"costs must be a TlbCosts, got {type(self.costs).__name__}")
        self.costs.check()
        for i, s in enumerate(self.streams):
            if not isinstance(s, TlbStream):
                raise TypeError(f"streams[{i}] must be a TlbStream, got {type(s).__name__}")
            s.check(f"streams[{i}]")
        if isinstance(self.counters, dict) or not isinstance(self.counters, tuple):
            raise TypeError(f"counters must be a tuple of FlushCounter, got {type(self.counters).__name__}")
        for i, c in enumerate(self.counters):
            if not isinstance(c, FlushCounter):
                raise TypeError(f"counters[{i}] must be a FlushCounter, got {type(c).__name__}")
            for f in ("per_full_flush", "per_invlpg", "background_per_s"):
                v.scalar(f"counters[{i}].{f}", getattr(c, f))
        if self.get("kernel") is not None:
            from .kernel import parse_version

            parse_version(self.kernel)

    def _kernel_followers(self, explicit) -> dict:
        # a batched or immediate policy is what batched_migration_flush gives: it follows the kernel too;
        # deferred (migrc) is in no kernel and stays
        out = super()._kernel_followers(explicit)
        if "policy" not in explicit and self.policy in (Policy.BATCHED, Policy.IMMEDIATE):
            out["policy"] = None
        return out

    def replace(self, **changes) -> TlbModel:
        """A changed copy (validated again)."""
        return replace(self, **changes)

    # --- the event streams ------------------------------------------------------------------
    @property
    def tiering_scale(self) -> float:
        """Migration rate at ``fast_mem_mb`` over the rate at the reference fast
        memory: the ratio of the slow-resident shares (1 without tiering)."""
        if self.working_set_mb is None or self.reference_fast_mem_mb is None:
            return 1.0
        ref = slow_share(self.reference_fast_mem_mb, self.working_set_mb)
        if lanes.any_of(ref <= 0):
            raise ValueError("reference_fast_mem_mb: the working set fits the reference fast memory; "
                             "no migration to scale from")
        fast = self.fast_mem_mb if self.fast_mem_mb is not None else self.reference_fast_mem_mb
        return slow_share(fast, self.working_set_mb) / ref

    @property
    def _cpu(self) -> cpu_models.CpuModel:
        return cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(self.arch.value)

    @property
    def flush_policy(self) -> Policy:
        """Migration's flush: ``policy``, else the kernel's: batched from v6.3
        (``batched_migration_flush``), per PTE before."""
        if self.policy is not None:
            return self.policy
        return Policy.BATCHED if self.switch("batched_migration_flush") else Policy.IMMEDIATE

    @property
    def pti_on(self) -> bool:
        """Page-table isolation (x86 only): the field, else the kernel's
        (``pti``: mainline v4.15; a stable backport is a ``+pti`` patch) with
        ``pti=auto``, which isolates on a CPU with X86_BUG_CPU_MELTDOWN (the
        preset's ``meltdown``; ``pti_check_boottime_disable``)."""
        if self.arch is not Arch.X86:
            return False
        if self.pti is not None:
            return bool(self.pti)
        return bool(self.switch("pti")) and self._cpu.meltdown

    @property
    def broadcast_on(self) -> bool:
        """x86 INVLPGB flushing: the field, else the kernel's (v6.15,
        4afeb0ed1753) where the CPU advertises INVLPGB: a preset that has it,
        not in a KVM guest (KVM does not expose the CPUID bit), and not under
        PTI from v6.16 (94a17f2dc90b: ``pti_check_boottime_disable`` clears
        X86_FEATURE_INVLPGB)."""
        if self.arch is not Arch.X86:
            return False
        if self.invlpgb is not None:
            return bool(self.invlpgb)
        if not (self.switch("invlpgb") and self._cpu.invlpgb) or self.virtualized:
            return False
        return not self.pti_on or bool(self.switch("invlpgb_with_pti"))

    @property
    def flush_cost_kwargs(self) -> dict:
        """The machine and kernel inputs of :func:`flush_cost` (an x86 IPI
        flush): the costs, PTI, and in a KVM guest the VM exits, PV IPIs and
        the PV TLB flush with ``preempted_share``."""
        c, virt = self.costs, bool(self.virtualized)
        return dict(full_flush_us=c.full_flush_us, invlpg_us=c.invlpg_us, ipi_send_us=c.ipi_send_us,
                    irq_us=c.irq_us, pti=self.pti_on, virtualized=virt, vm_exit_us=c.vm_exit_us,
                    pv_ipi=virt and bool(self.switch("pv_ipi")), posted_interrupts=bool(c.posted_interrupts),
                    pv_tlb_flush=virt and bool(self.switch("pv_tlb_flush")), preempted_share=self.preempted_share,
                    concurrent=bool(self.switch("concurrent_flush")))

    @property
    def ipi_share(self) -> float:
        """Share of a flush's remote targets that get an IPI: all but the
        preempted vCPUs ``kvm_flush_tlb_multi`` leaves to the host (a guest
        with ``pv_tlb_flush``), :func:`flush_cost`."""
        if self.virtualized and self.arch is Arch.X86 and self.switch("pv_tlb_flush"):
            return 1.0 - self.preempted_share
        return 1.0

    @property
    def mm_cpus_eff(self) -> float:
        return lanes.real(self.mm_cpus) if self.mm_cpus is not None else float(self.cpus)

    @property
    def busy_cpus(self) -> float:
        """CPUs running the mms (where the workload's time is lost)."""
        return lanes.real(lanes.minimum(self.cpus, self.mms * self.mm_cpus_eff))

    @property
    def migration_fill(self) -> float:
        """Mean folios per migration call (``demote_folio_list`` takes the
        demotable share of ``shrink_folio_list``'s isolated batch)."""
        return mean_fill(self.batch_folios, self.migrate_fraction)

    @property
    def call_rate_per_s(self) -> float:
        """Migration (demotion) calls per second."""
        return self.demotion_rate_per_s * self.tiering_scale / self.migration_fill

    @property
    def promotion_call_rate_per_s(self) -> float:
        """Promotions needing a flush: one folio per NUMA-hinting fault
        (``migrate_misplaced_folio``); none when PROT_NONE PTEs skip it."""
        return 0.0 if self.switch("skip_inaccessible") else self.promotion_rate_per_s * self.tiering_scale

    @property
    def reclaim_call_rate_per_s(self) -> float:
        """Reclaim unmap calls per second (never deferred, whatever the policy)."""
        return self.reclaim_unmap_rate_per_s / self.batch_folios

    @property
    def reclaim_flushes_per_call(self) -> float:
        if self.switch("flush_dirty_before_pageout"):
            # MADV_FREE cleaned a lazyfree folio's PTEs (madvise_free_pte_range)
            return dirty_flushes_per_call(self.batch_folios, 0.0 if self.lazyfree else self.dirty_fraction)
        return 1.0

    @property
    def unmap_iterations_per_folio(self) -> float:
        """try_to_unmap_one's loop iterations for one folio: one per PTE, or one
        for a lazyfree large folio's batch (v6.15)."""
        e = float(self.entries_per_folio)
        if self.lazyfree and e > 1 and self.switch("batched_lazyfree_unmap"):
            return 1.0
        return e

    @property
    def _writable_call_share(self) -> float:
        """A call is flushed at once under migrc if any of its folios is writable."""
        return 1.0 - (1.0 - self.writable_fraction) ** self.migration_fill

    # --- analytic solver --------------------------------------------------------------------
    def analytic(self) -> TlbResult:
        """Expected rates. Each flush is one of three kernel operations:

        - a batch flush (``arch_tlbbatch_flush``): x86 IPIs the non-lazy CPUs
          of the batch's cpumask and every one flushes fully (TLB_FLUSH_ALL;
          with INVLPGB one ``invlpgb_flush_all_nonglobals`` flushes every CPU,
          no IPI); arm64 has issued a TLBI per entry at unmap and waits one DSB.
        - a page flush (``ptep_clear_flush`` -> ``flush_tlb_mm_range`` of one
          page): x86 IPIs the mm's running CPUs, each INVLPGs the entry (and
          under PTI the user PCID's: ``invpcid_flush_one``, or without INVPCID
          the whole user PCID at the next return to user); with INVLPGB and a
          global ASID (the mm on > 3 CPUs) one INVLPGB + TLBSYNC; arm64 one
          TLBI + DSB.
        - an mm flush above the ceiling (NUMA-balancing scans): x86 IPIs and
          full flushes; INVLPGB/arm64 one broadcast ASID flush.

        The sender's own CPU flushes locally when it is in the cpumask."""
        n, k, mms = float(self.cpus), self.mm_cpus_eff, float(self.mms)
        x86 = self.arch is Arch.X86
        bc = self.broadcast_on
        global_asid = bc and lanes.same(k > 3)  # consider_global_asid: active on more than 3 CPUs
        pti, user_full = self.pti_on, self.pti_on and not self.invpcid
        ipi_q = self.ipi_share  # (not q: the migrc branch below has its own)
        r = dict.fromkeys(_RATES, 0.0)

        def local(in_mm: bool, folios: float = 1.0, own: bool = False) -> float:
            """The chance the sender's CPU is in the cpumask: its own mm owns a flushed folio (a task),
            or it took a CPU of the mms (kswapd on a full machine; that CPU is lazy)."""
            if in_mm:
                return 1.0 if own else 1.0 - (1.0 - 1.0 / mms) ** folios
            return lanes.where(mms * k >= n, 1.0, 0.0)

        def ipi_round(rate, t, loc, full, entries=1.0, counted=True):
            # `counted`: the local flush runs in flush_tlb_func (vmstat NR_TLB_LOCAL_*); a kswapd sender's
            # lazy CPU is skipped (should_flush_tlb) and flushes at its next switch_mm instead
            # a guest's PV TLB flush IPIs only the targets not preempted (flush_cost); the others are
            # flushed by the host at their next entry, still full flushes
            r["rounds"] += rate * lanes.minimum(1.0, t * ipi_q)
            r["ipis"] += rate * t * ipi_q / n
            r["shootdowns"] += rate * t * ipi_q / n
            flushed = (t + loc) / n
            if full:
                r["full_flushes"] += rate * flushed
                r["local_full_flushes"] += rate * loc * counted
            else:
                r["invlpg"] += rate * flushed * entries * (2.0 if pti else 1.0)
                r["page_flushes"] += rate * flushed
                r["local_one_flushes"] += rate * loc * entries * counted
                if user_full:
                    r["user_flushes"] += rate * flushed

        def broadcast(rate, ops, cpus_flushed):  # INVLPGB + TLBSYNC, or arm64 TLBIs + DSB
            key_op, key_sync = ("invlpgb_ops", "tlbsyncs") if x86 else ("tlbi_ops", "dsb_syncs")
            r[key_op] += rate * ops / n
            r[key_sync] += rate / n
            r["full_flushes"] += rate * cpus_flushed / n

        def batch_flush(rate, folios, in_mm, own=False):
            r["flushes"] += rate
            if not x86:
                ops = folios * (1.0 if self.tlbi_range else self.entries_per_folio)
                broadcast(rate, ops, 0.0)
            elif bc:
                broadcast(rate, 1.0, n)
            else:
                ipi_round(rate, flush_targets(n, k, 1.0 if own else mms, folios, in_mm),
                          local(in_mm, folios, own), True, counted=in_mm)

        def page_flushes(rate_ptes, in_mm, own=False, of_folios=True):
            r["flushes"] += rate_ptes if of_folios else 0.0
            if not x86:
                broadcast(rate_ptes, 1.0, 0.0)
            elif global_asid:
                broadcast(rate_ptes, 1.0, 0.0)
            else:
                ipi_round(rate_ptes, flush_targets(n, k, 1.0 if own else mms, 1, in_mm), local(in_mm, 1, own),
                          full=self.flush_ceiling < 1, counted=in_mm)

        def mm_flush(rate):  # a thread of the mm flushes all of it (task_numa_work)
            if not x86 or global_asid:
                broadcast(rate, 1.0, lanes.minimum(n, k))
            else:
                ipi_round(rate, k - 1.0, 1.0, True)

        lam, fill = self.call_rate_per_s, self.migration_fill
        lam_p, lam_r = self.promotion_call_rate_per_s, self.reclaim_call_rate_per_s
        b, e = self.batch_folios, float(self.entries_per_folio)
        in_mm = bool(self.sender_in_mm)
        r["calls"] = lam + lam_p + lam_r
        r["folios"] = lam * fill + lam_p + lam_r * b
        # reclaim: batched since v4.3 (x86) / v6.5 (arm64), one flush per dirty folio
        policy = self.flush_policy
        if policy is Policy.IMMEDIATE or not self.switch("batched_unmap_flush"):
            page_flushes(lam_r * b * e, in_mm)
        else:
            per_call = self.reclaim_flushes_per_call
            batch_flush(lam_r * per_call, b / per_call, in_mm)
        if policy is Policy.IMMEDIATE:
            page_flushes(lam * fill * e, in_mm)
            page_flushes(lam_p * e, True, own=True)
        elif policy is Policy.BATCHED:
            batch_flush(lam, fill, in_mm)
            batch_flush(lam_p, 1.0, True, own=True)
        else:
            lam_w = lam * self._writable_call_share  # flushed at once
            lam_d = lam - lam_w
            batch_flush(lam_w, fill, in_mm)
            batch_flush(lam_p, 1.0, True, own=True)
            # full flushes that clear a mm CPU's pending state anyway
            # (a reclaim call's flushes come in one burst: as clearing events they count once per call)
            shared = lam_w + lam_p + (lam_r if self.mms == 1 else 0.0)
            # (x86 batch flushes are full flushes, INVLPGB's of every CPU; arm64's are per-entry TLBIs)
            kappa = self.natural_flush_rate_per_s + self.other_round_rate_per_s + (shared if x86 else 0.0)
            # (a call's deadline is the first reuse of its folios; round() and np.round both round half to even)
            b_call = np.maximum(1.0, np.round(fill)) if isinstance(fill, np.ndarray) else max(1, round(fill))
            rate = _deferred_flush_rate(lam_d, kappa, self.reuse, b_call)
            busy = self.busy_cpus
            r["deferred_calls"] = lam_d
            if x86 and not bc:
                # one round per deadline while the mm's CPUs stay in step; with natural flushes each CPU
                # joins a round independently (its own flush rate over the in-step rate)
                natural = self.natural_flush_rate_per_s
                in_step = natural == 0
                rounds, remote_rounds = rate, lanes.where(busy > 1, rate, 0.0)
                if not lanes.all_of(in_step):
                    kappa0 = kappa - natural
                    r0 = _deferred_flush_rate(lam_d, kappa0, self.reuse, b_call)
                    q = lanes.minimum(1.0, lanes.divide(rate, r0, 0.0))
                    none = (1.0 - q) ** busy
                    # no IPI when the reusing task's CPU is the only one pending
                    alone = q * (1.0 - q) ** (busy - 1.0)
                    rounds = lanes.where(in_step, rounds, r0 * (1.0 - none))
                    remote_rounds = lanes.where(in_step, remote_rounds, r0 * (1.0 - none - alone))
                r["reuse_rounds"] = rounds
                r["flushes"] += rounds
                # the reusing task's CPU is pending with the chance any mm CPU is: it flushes locally
                remote = lanes.maximum(0.0, rate * (busy - 1.0))
                r["rounds"] += remote_rounds
                r["shootdowns"] += remote * ipi_q / n
                r["ipis"] += remote * ipi_q / n
                r["full_flushes"] += rate * busy / n
                r["local_full_flushes"] += rate
            else:  # arm64 / INVLPGB: a broadcast ASID flush of every CPU
                r["reuse_rounds"] = rate
                r["flushes"] += rate
                broadcast(rate, 1.0, busy)
        mm_flush(self.other_round_rate_per_s)
        page_flushes(self.other_page_flush_rate_per_s, True, own=True, of_folios=False)
        r["full_flushes"] += self.natural_flush_rate_per_s  # no IPI, no broadcast
        return TlbResult(self, {k: (r[k], r[k], r[k]) for k in _RATES}, "analytic")

    # --- as a Mechanism ----------------------------------------------------------------------
    BASE_METRICS: ClassVar = ("tlb_shootdowns", "tlb_shootdowns_per_s", "runtime_s", "tlb_overhead_pct",
                              "nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
                              "nr_tlb_local_flush_one", "folios_per_flush", "migrated_pages_per_s",
                              "migration_time_s", "migrator_busy_pct", "tlb_shootdowns_per_folio",
                              "ipi_receive_us_per_folio", "flush_ipi_sender_us_per_folio", "reclaim_us_per_page")

    @property
    def METRICS(self) -> tuple:  # noqa: N802 - the Model hook: the counters and streams this instance has
        return (*self.BASE_METRICS, *(c.name for c in self.counters), *(f"{st.name}_miss_count" for st in self.streams))

    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """Rates and a run's counters (``work_s`` of work per CPU): ``result["runtime_s"]``;
        ``result.details["rates"]`` is the :class:`TlbResult`."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        res = self.analytic() if solver == "analytic" else self.simulate(**simulate_kwargs)
        return self._result(res, res.run(self.work_s))

    @classmethod
    def solve_many(cls, models) -> list[Result]:
        """``[m.solve() for m in models]``, faster: configurations that differ
        only in float leaves, nested ones included (a band's draws of the costs
        and streams), are solved as one lane model (:mod:`mmcost.lanes`), the
        rates and costs computed once with an array per varying leaf. A group
        whose lanes take a branch different ways (``mm_cpus`` across the
        global-ASID threshold, say) is solved configuration by configuration."""
        out: list = [None] * len(models)
        for idx in lanes.groups(models, nested=True):
            group = [models[i] for i in idx]
            solved = None
            if len(idx) >= lanes.MIN_LANES:
                try:
                    solved = cls._solve_lanes(group)
                except lanes.Diverge:
                    pass
            for i, res in zip(idx, solved or [m.solve() for m in group]):
                out[i] = res
        return out

    @classmethod
    def solve_draws(cls, base: TlbModel, draws: list[dict]) -> list[Result] | None:
        """``[base.set(**d).solve() for d in draws]`` (a band's draws of one
        row) as one lane model built from the draws' columns, with no copy per
        draw (:func:`mmcost.lanes.from_draws`); None where the copies must be
        made, or the lanes branch apart. Each result's ``details["rates"]``
        carries the lane's rates and costs, but ``base`` as its model."""
        lane = lanes.from_draws(base, draws, nested=True)
        if lane is None:
            return None
        try:
            return cls._lane_results(lane, [base] * len(draws))
        except lanes.Diverge:
            return None

    @classmethod
    def _solve_lanes(cls, models) -> list[Result]:
        return cls._lane_results(lanes.stack(models, nested=True), models)

    @staticmethod
    def _lane_results(lane: TlbModel, models: list[TlbModel]) -> list[Result]:
        """Each lane's :class:`Result`, with ``models[i]`` as its model."""
        n = lanes.count(lane)
        with np.errstate(invalid="ignore", over="ignore"):  # as floats do: 0 x inf is nan in a saturated lane
            res = lane.analytic()
            run = res.run(lane.work_s)
            shares, prim = res._shares(), res._primitives()

        def per_lane(d: dict) -> list[dict]:  # {name: lanes} -> one dict per lane, each array read once
            cols = {k: x.tolist() if isinstance(x, np.ndarray) else [x] * n for k, x in d.items()}
            return [dict(zip(cols, row)) for row in zip(*cols.values())] if cols else [{} for _ in range(n)]

        rates = per_lane({k: b[0] for k, b in res.bounds.items()})  # (the analytic bounds are the value thrice)
        out = []
        for m, r, sh, pr, ru in zip(models, rates, per_lane(shares), per_lane(prim), per_lane(run)):
            one = TlbResult(m, {k: (x, x, x) for k, x in r.items()}, res.solver)
            # what the lane model computed for this lane: not computed again
            object.__setattr__(one, "_shares_cache", sh)
            object.__setattr__(one, "_primitives_cache", pr)
            out.append(m._result(one, ru))
        return out

    def _result(self, res: TlbResult, run: dict) -> Result:
        """The :class:`Result` of rates ``res`` and a run's counters ``run``."""
        units = {"runtime_s": "s", "tlb_shootdowns": "count per CPU", "folios_per_flush": "folios",
                 "migrated_pages_per_s": "pages/s", "migration_time_s": "s", "migrator_busy_pct": "%",
                 "tlb_shootdowns_per_folio": "1/folio", "ipi_receive_us_per_folio": "us",
                 "flush_ipi_sender_us_per_folio": "us", "reclaim_us_per_page": "us"}
        value, lo, hi = map(float, res.bounds["shootdowns"])
        u = res.overhead
        qs = [Quantity("tlb_shootdowns_per_s", value, "1/(CPU s)", lo, hi),
              Quantity("tlb_overhead_pct", 100 * u, "%", 100 * u, 100 * u)]
        qs += [Quantity(k, float(x), units.get(k, "count"), float(x), float(x)) for k, x in run.items()]
        title = f"{self.arch.value}, {self.flush_policy.value} flushing, {self.cpus} CPUs" + (", KVM guest" if self.virtualized else "")
        if u >= 1.0:  # (TlbResult.saturated)
            title += f" (saturated: TLB maintenance takes {u:.0%} of every CPU)"
        return Result(tuple(qs), res.solver, 0.99 if res.solver == "simulated" else 1.0, bool(self.fitted_on), title,
                      details={"rates": res, "saturated": u >= 1.0})

    def metric_value(self, result: Result, metric: str, rows: pd.DataFrame) -> np.ndarray:
        return np.full(len(rows), result[metric])

    # --- simulated solver -------------------------------------------------------------------
    def simulate(self, *, horizon_s: float = 20.0, warmup_s: float = 1.0, replications: int = 8,
                 seed: int = 1, threads: int | None = None, progress: bool = True) -> TlbResult:
        """The discrete-event simulation of the same description: ``replications``
        independent runs of ``horizon_s`` simulated seconds after ``warmup_s``,
        on ``threads`` threads (GIL released; Ctrl-C stops cleanly and raises
        KeyboardInterrupt). Same seed, same result, whatever ``threads``."""
        horizon_s = v.scalar("horizon_s", horizon_s, positive=True)
        warmup_s = v.scalar("warmup_s", warmup_s)
        if lanes.any_of(self.ipi_share < 1.0):
            raise ValueError(f"simulate(): preempted_share = {self.preempted_share} with the PV TLB flush: the DES "
                             "IPIs every target; use analytic()")
        # the DES's work: each call walks its batch's folios and their PTEs, every other event is one unit
        rate = ((self.call_rate_per_s + self.reclaim_call_rate_per_s) * self.batch_folios * self.entries_per_folio
                + self.promotion_call_rate_per_s + self.other_page_flush_rate_per_s + self.other_round_rate_per_s
                + self.natural_flush_rate_per_s * self.cpus)
        v.at_most("warmup_s + horizon_s", warmup_s + horizon_s, v.MAX_EVENTS / max(rate, 1e-300),
                  f"{v.MAX_EVENTS:.0e} units of work (events, folios, PTEs) per replication at {rate:.4g}/s")
        v.at_most("batch_folios x entries_per_folio", self.batch_folios * self.entries_per_folio, v.MAX_EVENTS / 10,
                  "units of work of one call: a tenth of a replication's")
        replications = v.count("replications", replications, minimum=2)
        seed = v.count("seed", seed, minimum=0)
        threads = v.count("threads", threads if threads is not None else min(replications, os.cpu_count() or 1))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=replications, desc="tlb DES", leave=False)
        params = _core.tlb.TlbSimParams(
            cpus=self.cpus, arch=_core.tlb.Arch.__members__[self.arch.value],
            policy=_core.tlb.Policy.__members__[self.flush_policy.value], call_rate=self.call_rate_per_s,
            reclaim_call_rate=self.reclaim_call_rate_per_s, batch_folios=self.batch_folios,
            entries_per_folio=self.entries_per_folio, flush_ceiling=self.flush_ceiling,
            writable_fraction=self.writable_fraction, natural_flush_rate=self.natural_flush_rate_per_s,
            other_round_rate=self.other_round_rate_per_s, reuse=self.reuse._core(1.0 / US_PER_S), warmup=warmup_s,
            horizon=horizon_s)
        if self.mm_cpus_eff != int(self.mm_cpus_eff):
            raise ValueError(f"simulate(): mm_cpus must be a whole number of CPUs, got {self.mm_cpus}")
        params.mm_cpus, params.mms, params.sender_in_mm = int(self.mm_cpus_eff), self.mms, bool(self.sender_in_mm)
        params.promotion_call_rate = self.promotion_call_rate_per_s
        params.migrate_fraction, params.dirty_fraction = self.migrate_fraction, self.dirty_fraction
        params.reclaim_batched = bool(self.switch("batched_unmap_flush"))
        params.flush_dirty = bool(self.switch("flush_dirty_before_pageout"))
        params.broadcast, params.tlbi_range = self.broadcast_on, bool(self.tlbi_range)
        params.other_page_rate = self.other_page_flush_rate_per_s
        try:
            d = _core.tlb.simulate(params, replications, threads, seed,
                                   (lambda done: bar.update(done - bar.n)) if bar else None)
        finally:
            if bar is not None:
                bar.close()
        n = self.cpus
        per_rep = {
            "shootdowns": d["shootdowns"].mean(axis=1), "full_flushes": d["full_flushes"].mean(axis=1),
            "invlpg": d["invlpg"].mean(axis=1), "ipis": d["ipis"] / n, "rounds": d["rounds"],
            "tlbi_ops": d["tlbi_ops"] / n, "dsb_syncs": d["dsb_syncs"] / n, "calls": d["calls"],
            "deferred_calls": d["deferred_calls"], "reuse_rounds": d["reuse_rounds"],
            "page_flushes": np.zeros(replications), "user_flushes": np.zeros(replications),
            "invlpgb_ops": np.zeros(replications), "tlbsyncs": np.zeros(replications),
            "local_full_flushes": d["local_full"], "local_one_flushes": d["local_one"],
            "flushes": d["flushes"], "folios": d["folios"],
        }
        if self.arch is Arch.X86:  # each CPU's INVLPG operation is one page flush (entries one by one)
            per_rep["page_flushes"] = d["invlpg"].mean(axis=1)
            if self.pti_on and not self.invpcid:  # each one drops the whole user PCID
                per_rep["user_flushes"] = per_rep["page_flushes"]
            if self.broadcast_on:  # the DES counts INVLPGB / TLBSYNC where arm64 counts TLBI / DSB
                per_rep["invlpgb_ops"], per_rep["tlbsyncs"] = per_rep["tlbi_ops"], per_rep["dsb_syncs"]
                per_rep["tlbi_ops"], per_rep["dsb_syncs"] = np.zeros(replications), np.zeros(replications)
        if self.pti_on:
            per_rep["invlpg"] = 2 * per_rep["invlpg"]
        rows = {}
        from scipy.special import stdtrit  # here: scipy.special costs 80 ms to import

        t = stdtrit(replications - 1, 0.995)  # Student t quantile, without importing scipy.stats
        for k in _RATES:
            x = np.asarray(per_rep[k], float) / horizon_s
            half = t * x.std(ddof=1) / math.sqrt(replications)
            rows[k] = (x.mean(), x.mean() - half, x.mean() + half)
        per_cpu = d["shootdowns"].mean(axis=0) / horizon_s
        return TlbResult(self, rows, "simulated", per_cpu_shootdowns_per_s=per_cpu,
                         events=float(d["events"].sum()))


def _count(rate, seconds):
    """A counter over a run: ``rate x seconds``, and 0 where the rate is 0 (a saturated run lasts inf
    seconds: a counter that never ticks stays 0, where the product is NaN). Per lane for arrays."""
    if isinstance(rate, np.ndarray) or isinstance(seconds, np.ndarray):
        with np.errstate(invalid="ignore"):
            return np.where(rate == 0, 0.0, rate * seconds)
    return 0.0 if rate == 0 else rate * seconds


#: share of the fast node the application can hold (kernel, page cache, watermarks)
FAST_NODE_USABLE = 0.9


def slow_share(fast_mem_mb: float, working_set_mb: float) -> float:
    """Share of a uniformly accessed working set that lives in the slow tier."""
    return lanes.maximum(0.0, 1.0 - FAST_NODE_USABLE * fast_mem_mb / working_set_mb)


def deferred_flush_rate(lam_d: float, kappa: float, reuse: Dist, batch_folios: int) -> float:
    """Per-CPU rate of migrc flushes (the renewal formula in the module docstring).

    ``lam_d``: deferred calls per second; ``kappa``: full flushes per second
    that clear the CPU anyway; ``reuse``: reuse time of one folio (µs); the
    call's deadline is the first reuse of its ``batch_folios`` folios."""
    return _deferred_flush_rate(v.scalar("lam_d", lam_d), v.scalar("kappa", kappa), reuse, int(batch_folios))


def _deferred_flush_rate(lam_d, kappa, reuse: Dist, b):
    """:func:`deferred_flush_rate` of checked inputs; per lane where ``lam_d``,
    ``kappa``, the reuse's mean or the folios per call ``b`` are arrays (the
    exponential reuse's closed form takes them whole; the other reuse laws
    are solved lane by lane)."""
    varying = {f: x for f, x in vars(reuse).items() if isinstance(x, np.ndarray)}
    if any(isinstance(x, np.ndarray) for x in (lam_d, kappa, b)) or varying:
        if reuse.kind != "exponential":
            n = len(next(x for x in (lam_d, kappa, b, *varying.values()) if isinstance(x, np.ndarray)))
            return np.array([_deferred_flush_rate(lanes.take(lam_d, i), lanes.take(kappa, i),
                                                  replace(reuse, **{f: x[i].item() for f, x in varying.items()}),
                                                  int(lanes.take(b, i)))
                             for i in range(n)])
        active = lam_d > 0
        lam_safe = np.where(active, lam_d, 1.0)  # (the lanes without deferred calls are 0 below)
        integral = _pending_integral_smooth(reuse, lam_safe, kappa, b)
        # (1 - kappa I: nearly equal numbers where reuse is far slower than the natural flushes; a rounding
        # below 0 is a rate of 0)
        return np.where(active, np.maximum(0.0, 1.0 - kappa * integral) / (1.0 / lam_safe + integral), 0.0)
    if lam_d == 0:
        return 0.0
    if reuse.kind in ("deterministic", "empirical"):
        samples = np.array([reuse.mean_us] if reuse.kind == "deterministic" else reuse.samples_us, float) / US_PER_S
        integral = _pending_integral_steps(np.sort(samples), lam_d, kappa, b)
    else:
        integral = _pending_integral_smooth(reuse, lam_d, kappa, b)
    return max(0.0, 1.0 - kappa * integral) / (1.0 / lam_d + integral)


def _pending_integral_steps(x: np.ndarray, lam_d: float, kappa: float, b: int) -> float:
    """I for a reuse time taking the sample values ``x`` (sorted, seconds) with
    equal probability: S_1 is a step function, so I is a sum of exponentials."""
    n = len(x)
    edges = np.concatenate([[0.0], x])
    total, g = 0.0, 0.0  # g = int_0^a (1 - S_1): later calls whose deadline came first
    for k in range(n):
        a, c = edges[k], edges[k + 1]
        s1 = ((n - k) / n) ** b  # P(all b reuse times > t) on [x_(k), x_(k+1))
        if c > a:
            rate = lam_d * (1.0 - s1) + kappa
            scale = s1 * math.exp(-lam_d * g - kappa * a)
            total += scale * ((-math.expm1(-rate * (c - a))) / rate if rate > 0 else (c - a))
            g += (1.0 - s1) * (c - a)
    return total


def _pending_integral_smooth(reuse: Dist, lam_d: float, kappa: float, b: int) -> float:
    """I for an exponential reuse time (closed form) or a lognormal one
    (tabulated on a dense logarithmic grid: nested quadrature is slow and no
    more accurate).

    Exponential reuse with mean m: S_1(t) = exp(-beta t), beta = b / m (the
    first of b reuses), and u = exp(-beta t) turns I into
    exp(a) / beta int_0^1 u^(s-1) exp(-a u) du with a = lambda_d / beta and
    s = (beta + lambda_d + kappa) / beta, which is Kummer's function:
    I = M(1, s + 1, a) / (s beta) (DLMF 13.4.1 and Kummer's transformation
    13.2.39). Adaptive quadrature of the integrand took 70 us and returned 0
    where its peak (width 1 / (beta + lambda_d + kappa)) was narrow in the
    range it searched."""
    mean = reuse.mean_us / US_PER_S
    if reuse.kind == "exponential":
        from scipy.special import hyp1f1  # here, not at import: keeps import mmcost quick

        beta = b / mean
        s = (beta + lam_d + kappa) / beta
        m = hyp1f1(1.0, s + 1.0, lam_d / beta)  # within 1e-12 of mpmath up to lambda_d / beta = 1e9
        if not np.isfinite(m).all():
            i = int(np.flatnonzero(~np.isfinite(np.atleast_1d(m)))[0])
            at = [float(np.broadcast_to(x, np.shape(m))[i] if np.ndim(m) else x) for x in (lam_d, mean)]
            raise ValueError(f"reuse: deferred calls per reuse time ({at[0]:.3g}/s x {at[1]:.3g} s / {b} folios) "
                             "is beyond what the pending-period integral is computed for (1e9)")
        return m / (s * beta) if np.ndim(m) else float(m) / (s * beta)
    from scipy import integrate, stats  # here: importing them costs more than mmcost.tlb itself

    s2 = math.log1p(reuse.cv**2)
    dist = stats.lognorm(s=math.sqrt(s2), scale=mean * math.exp(-0.5 * s2))
    lo, hi = float(dist.ppf(1e-15)), float(dist.isf(1e-13))
    if kappa > 0:  # the integrand decays as exp(-kappa t) at least: the grid resolves 1 / kappa and stops at 60 / kappa
        lo, hi = min(lo, 1e-6 / kappa), max(min(hi, 60.0 / kappa), 2.0 * min(lo, 1e-6 / kappa))
    t = np.concatenate([[0.0], np.geomspace(lo, hi, 40_000)])
    s1 = dist.sf(t) ** b
    g = integrate.cumulative_trapezoid(1.0 - s1, t, initial=0.0)
    return float(integrate.trapezoid(s1 * np.exp(-lam_d * g - kappa * t), t))


#: the rates a result reports (per CPU per second, averaged over all cpus, unless the unit says otherwise)
_RATES = {
    "shootdowns": "1/(CPU s)",       # flush IPIs received (/proc/interrupts TLB row)
    "full_flushes": "1/(CPU s)",     # all full flushes, local and remote
    "invlpg": "1/(CPU s)",           # single-entry invalidations (two per entry under PTI)
    "page_flushes": "1/(CPU s)",     # single-page flush operations (each drops the paging-structure caches)
    "user_flushes": "1/(CPU s)",     # whole user-PCID flushes a single-page flush causes (PTI without INVPCID)
    "ipis": "1/(CPU s)",             # IPIs sent, per CPU
    "tlbi_ops": "1/(CPU s)",         # broadcast TLBIs issued, per CPU (arm64)
    "dsb_syncs": "1/(CPU s)",        # DSB ISH waits, per CPU (arm64)
    "invlpgb_ops": "1/(CPU s)",      # INVLPGBs issued, per CPU (AMD)
    "tlbsyncs": "1/(CPU s)",         # TLBSYNC waits, per CPU (AMD)
    "rounds": "1/s",                 # flush_tlb_multi calls with a remote target (vmstat nr_tlb_remote_flush)
    "local_full_flushes": "1/s",     # the sender's own full flushes in flush_tlb_func (nr_tlb_local_flush_all)
    "local_one_flushes": "1/s",      # the sender's own INVLPG'd entries (nr_tlb_local_flush_one)
    "flushes": "1/s",                # flush operations (batch, page, reuse)
    "folios": "1/s",                 # folios migrated and reclaimed
    "calls": "1/s",                  # migration and reclaim calls needing a flush
    "deferred_calls": "1/s",         # calls whose flush migrc deferred
    "reuse_rounds": "1/s",           # deferred calls flushed at reuse
}


@dataclass(frozen=True)
class TlbResult:
    """Rates from one solver, and what they cost.

    ``rates``: one row per quantity (``value``, 99% ``lo``/``hi``;
    equal for the analytic solver). For x86 migrc with natural flushes the
    CPUs' pending states diverge and a reuse flush reaches a random subset;
    the analytic ``rounds``/``reuse_rounds`` then treat each CPU as joining a
    round independently (within 10% of :meth:`TlbModel.simulate`, which
    counts them exactly). :meth:`costs` splits the CPU time lost
    by cause; :meth:`run` gives a run's expected counters and runtime."""

    model: TlbModel
    #: quantity -> (value, lo, hi), the quantities of ``_RATES``
    bounds: dict
    solver: str
    per_cpu_shootdowns_per_s: np.ndarray | None = None
    events: float = 0.0

    @property
    def rates(self) -> pd.DataFrame:
        """One row per quantity: ``value``, 99% ``lo``/``hi``, ``unit``."""
        f = pd.DataFrame.from_dict(self.bounds, orient="index", columns=["value", "lo", "hi"])
        f.index.name = "quantity"
        f["unit"] = [_RATES[k] for k in f.index]
        return f

    def rate(self, quantity: str) -> float:
        return self.bounds[quantity][0]

    def _primitives(self) -> dict:
        cached = self.__dict__.get("_primitives_cache")
        if cached is not None:
            return cached
        m, c = self.model, self.model.costs
        virt = m.virtualized
        exit_recv = c.vm_exit_us if virt and not c.posted_interrupts else 0.0
        pti = 2.0 if m.pti_on else 1.0
        out = dict(exit_recv=exit_recv, full_us=c.full_flush_us * pti,
                   walk_us=walk_ns(c, virt) * 1e-3,
                   # kvm_flush_tlb_multi's PV IPIs are x86's (the switch is x86-only); arm64 broadcasts TLBIs
                   pv_ipi=bool(m.switch("pv_ipi")) if virt and m.arch is Arch.X86 else False)
        object.__setattr__(self, "_primitives_cache", out)
        return out

    def costs(self) -> pd.DataFrame:
        """CPU time lost per cause, as a share of one of the mms' CPUs
        (``busy_cpus``; all the flushes land on them).

        ``ack_wait``: ``flush_tlb_multi`` -> ``smp_call_function_many_cond``
        sends the IPIs, runs the local flush, then waits for the remote
        handlers; the local flush overlaps the remote ones, so the sender
        waits one interrupt delivery and handler past its own flush. (This
        is :func:`flush_cost`'s wait for a sender in the mask on v5.13 and
        later; a sender outside it, kswapd, also waits for the target's own
        flush, and before v5.13 every sender does: per round that is one
        more local flush's time, not counted here.)"""
        return pd.DataFrame({"cpu_share": self._shares()}).rename_axis("cause")

    def _shares(self) -> dict[str, float]:
        """:meth:`costs` as a dict, computed once (a result does not change)."""
        cached = self.__dict__.get("_shares_cache")
        if cached is not None:
            return cached
        m, c, p = self.model, self.model.costs, self._primitives()
        n = float(m.cpus)
        refill = lanes.total([0.0, *(s.refill for s in m.streams)])
        pwc = lanes.total([0.0, *(s.pwc_refill for s in m.streams)])
        exits = self.rate("rounds") / n if p["pv_ipi"] else self.rate("ipis")
        us = {
            "ipi_receive": self.rate("shootdowns") * (c.irq_us + p["exit_recv"]),
            "ipi_send": self.rate("ipis") * c.ipi_send_us + (exits * c.vm_exit_us if m.virtualized else 0.0),
            "ack_wait": self.rate("rounds") / n * (c.irq_us + p["exit_recv"]),
            "local_flush": self.rate("full_flushes") * p["full_us"] + self.rate("invlpg") * c.invlpg_us,
            "refill_misses": (self.rate("full_flushes") + self.rate("user_flushes")) * refill * p["walk_us"],
            # one upper-level reference is a quarter of a 4-reference walk
            "pwc_refill": (self.rate("full_flushes") + self.rate("user_flushes") + self.rate("page_flushes"))
                          * pwc * p["walk_us"] / 4,
            # the IPI handler's own translations evict user ones, each missed later (data streams share the STLB)
            "irq_tlb_pollution": self.rate("shootdowns") * m.irq_tlb_entries * self._pollution_share() * p["walk_us"],
            "tlbi_broadcast": (self.rate("tlbi_ops") * c.tlbi_us + self.rate("dsb_syncs") * c.dsb_us
                               + self.rate("invlpgb_ops") * c.invlpgb_us + self.rate("tlbsyncs") * c.tlbsync_us),
        }
        scale = n / m.busy_cpus
        shares = {k: x * scale / US_PER_S for k, x in us.items()}
        object.__setattr__(self, "_shares_cache", shares)
        return shares

    def _pollution_share(self, stream: TlbStream | None = None) -> float:
        """Share of an IPI's evictions that hit ``stream``'s live entries (all
        streams when None): an eviction hits a live entry as often as live
        entries fill the shared STLB, and the data streams split those hits
        by their share of it; the ITLB is not touched by the handler's data."""
        data = [s for s in self.model.streams if not s.name.startswith("itlb")]
        if not data:
            return 0.0
        weights = {id(s): lanes.minimum(s.working_set_pages, s.entries) for s in data}
        total = lanes.total(list(weights.values()))
        largest = functools.reduce(lanes.maximum, (s.entries for s in data))
        fill = lanes.minimum(1.0, lanes.divide(total, largest, 0.0))  # how full the shared STLB is
        if stream is None:
            return fill
        return fill * lanes.divide(weights.get(id(stream), 0.0), total, 0.0)

    @property
    def overhead(self) -> float:
        """Fraction of each of the mms' CPUs lost to TLB maintenance."""
        return lanes.real(lanes.total(list(self._shares().values())))

    @property
    def saturated(self) -> bool:
        """TLB maintenance would take every CPU: the configuration cannot run."""
        return self.overhead >= 1.0

    def runtime_s(self, work_s: float) -> float:
        """Wall time of a job needing ``work_s`` seconds on each CPU:
        work / (1 - overhead); ``inf`` when saturated (see :attr:`saturated`)."""
        return self._runtime_s(v.scalar("work_s", work_s, positive=True))

    def _runtime_s(self, work_s):
        u = self.overhead
        if isinstance(u, np.ndarray) or isinstance(work_s, np.ndarray):
            with np.errstate(divide="ignore"):
                return np.where(u >= 1, math.inf, work_s / np.maximum(1.0 - u, 0.0))
        return math.inf if u >= 1 else work_s / (1.0 - u)

    def flush_sender_us(self, kind: str, folios: float = 1.0, remote_only: bool = False) -> float:
        """The flushing CPU's time for one flush: ``kind`` ``"batch"``
        (``arch_tlbbatch_flush`` over ``folios`` folios) or ``"page"`` (one
        ``flush_tlb_mm_range`` page): its IPIs (and their VM exits), its own
        flush overlapped with the remote handlers, or the broadcast and its
        completion wait."""
        m, c = self.model, self.model.costs
        n, k = float(m.cpus), m.mm_cpus_eff
        if m.arch is Arch.ARM64:
            ops = folios * (1.0 if m.tlbi_range else m.entries_per_folio) if kind == "batch" else 1.0
            return ops * c.tlbi_us + c.dsb_us
        if m.broadcast_on and (kind == "batch" or lanes.same(k > 3)):
            return c.invlpgb_us + c.tlbsync_us
        in_mm = bool(m.sender_in_mm)
        f = folios if kind == "batch" else 1.0
        one = flush_cost(targets=flush_targets(n, k, float(m.mms), f, in_mm), full=kind == "batch",
                         local=local_flush_chance(float(m.mms), f, in_mm), **m.flush_cost_kwargs)
        return one["sender"] - one["alone"] if remote_only else one["sender"]

    def reclaim_flush_us_per_folio(self, remote_only: bool = False) -> float:
        """The reclaimer's flush time per folio: a page flush per PTE, or its
        share of the batch's flushes (one per dirty folio, one at the end)."""
        m = self.model
        if m.flush_policy is Policy.IMMEDIATE or not m.switch("batched_unmap_flush"):
            return m.entries_per_folio * self.flush_sender_us("page", 1.0, remote_only)
        b, per_call = m.batch_folios, m.reclaim_flushes_per_call
        return per_call / b * self.flush_sender_us("batch", b / per_call, remote_only)

    def migration_flush_us_per_folio(self, remote_only: bool = False) -> float:
        """The migrator's flush time per folio: a page flush per PTE, or its
        share of the call's batch flush (under migrc only the writable calls'
        flush; the deferred one is paid later by the reusing task)."""
        m = self.model
        if m.flush_policy is Policy.IMMEDIATE:
            return m.entries_per_folio * self.flush_sender_us("page", 1.0, remote_only)
        fill = m.migration_fill
        share = 1.0 if m.flush_policy is Policy.BATCHED else m._writable_call_share
        return share * self.flush_sender_us("batch", fill, remote_only) / fill

    def flush_sender_us_per_folio(self, remote_only: bool = False) -> float:
        """The flushing threads' flush time per folio migrated or reclaimed
        (``remote_only``: only what the remote CPUs add, the IPIs and the
        wait for them), weighted by each stream's folios."""
        m = self.model
        lam_m, lam_r = m.call_rate_per_s * m.migration_fill, m.reclaim_call_rate_per_s * m.batch_folios
        if not lanes.any_of(lam_m + lam_r > 0):
            return 0.0
        return lanes.divide(lam_m * self.migration_flush_us_per_folio(remote_only)
                            + lam_r * self.reclaim_flush_us_per_folio(remote_only), lam_m + lam_r, 0.0)

    def reclaimer_us_per_page(self) -> float:
        """The reclaiming task's time per 4K page: per folio its bookkeeping
        and unmap loop iterations, per page its PTE and counters, and its
        share of the batch's flushes (lazyfree: no I/O; otherwise the swap-out
        itself is mmcost.swap's)."""
        m = self.model
        pages = float(m.folio_pages or m.entries_per_folio)
        folio = (m.reclaim_folio_us + m.unmap_iterations_per_folio * m.unmap_iter_us + pages * m.page_us
                 + self.reclaim_flush_us_per_folio())
        return folio / pages

    def migrator_us_per_folio(self) -> float:
        """The migrating thread's CPU time per folio (kswapd's for demotion):
        its rmap and PTE work (a migration entry set, then the new PTE),
        the copy, and its share of the flushes."""
        m = self.model
        pages = m.folio_pages or m.entries_per_folio
        work = m.rmap_us_per_folio + 2 * m.entries_per_folio * m.pte_us + pages * m.copy_us_per_page
        return work + self.migration_flush_us_per_folio()

    def run(self, work_s: float) -> dict:
        """Expected counters of a whole run (all CPUs) needing ``work_s`` of
        work per CPU of the mms: the metric names of seed 001
        (``tlb_shootdowns`` is per CPU), the vmstat TLB counters (kernels
        built with CONFIG_DEBUG_TLBFLUSH), the mean folios per flush, and the
        migrator's throughput and load. Where a quantity has nothing to
        stand on it is inf or NaN, never a made-up number: a saturated
        configuration (TLB maintenance takes every CPU) never finishes, so
        ``runtime_s`` and every counter that ticks are inf (one whose rate
        is 0 stays 0); ``folios_per_flush`` is NaN without flushes, the
        ``*_per_folio`` ratios NaN without folios; ``migration_time_s`` is
        NaN without ``migration_pages``; ``migrated_pages_per_s`` is inf
        where the migrator's costs are all 0."""
        m = self.model
        t = self._runtime_s(work_s if lanes.count(m) else v.scalar("work_s", work_s, positive=True))
        cpu_s = m.cpus * t
        # a saturated run never ends (t inf): its counters are inf, and one whose rate is 0 stays 0 (0 x inf
        # gave NaN)
        out = {"runtime_s": t, "tlb_shootdowns": _count(self.rate("shootdowns"), t)}
        for c in m.counters:
            out[c.name] = _count(c.per_full_flush * self.rate("full_flushes") + c.per_invlpg * self.rate("invlpg")
                                 + c.background_per_s, cpu_s)
        for s in m.streams:
            out[f"{s.name}_miss_count"] = (_count(m.busy_cpus * s.misses_per_work_s, work_s)
                                           + _count((self.rate("full_flushes") + self.rate("user_flushes")) * s.refill,
                                                    cpu_s)
                                           + _count(self.rate("shootdowns") * m.irq_tlb_entries
                                                    * self._pollution_share(s), cpu_s))
        out["nr_tlb_remote_flush"] = _count(self.rate("rounds"), t)
        out["nr_tlb_remote_flush_received"] = _count(self.rate("shootdowns"), cpu_s)
        out["nr_tlb_local_flush_all"] = _count(self.rate("local_full_flushes"), t)
        out["nr_tlb_local_flush_one"] = _count(self.rate("local_one_flushes"), t)
        flushes, folios = self.rate("flushes"), self.rate("folios")
        out["folios_per_flush"] = lanes.divide(folios, flushes, math.nan)
        received = self.rate("shootdowns") * m.cpus
        p = self._primitives()
        out["tlb_shootdowns_per_folio"] = lanes.divide(received, folios, math.nan)
        out["ipi_receive_us_per_folio"] = lanes.divide(received * (m.costs.irq_us + p["exit_recv"]), folios, math.nan)
        out["flush_ipi_sender_us_per_folio"] = self.flush_sender_us_per_folio(remote_only=True)
        out["reclaim_us_per_page"] = self.reclaimer_us_per_page()
        per_folio = self.migrator_us_per_folio()
        pages = m.folio_pages or m.entries_per_folio
        out["migrated_pages_per_s"] = lanes.divide(pages * US_PER_S, per_folio, math.inf)  # (inf: costs all 0)
        out["migration_time_s"] = (m.migration_pages / out["migrated_pages_per_s"] if m.migration_pages is not None
                                   else math.nan)
        out["migrator_busy_pct"] = 100.0 * m.demotion_rate_per_s * m.tiering_scale * per_folio / US_PER_S
        return out

    def __repr__(self) -> str:
        m = self.model
        return (f"TlbResult({self.solver}, {m.arch.value}, {m.flush_policy.value}, {m.cpus} CPUs: "
                f"{self.rate('shootdowns'):.4g} shootdowns/CPU/s, {self.rate('full_flushes'):.4g} full flushes/CPU/s, "
                f"overhead {self.overhead:.3%})")

    def _repr_html_(self) -> str:
        return f"<p><code>{self.__repr__()}</code></p>" + self.rates.to_html(float_format=lambda x: f"{x:.5g}")
