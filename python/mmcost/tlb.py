"""TLB flush batching: flushes, shootdown IPIs, refill misses and the CPU time they cost.

One description (:class:`TlbModel`), two solvers that check each other:

- :meth:`TlbModel.analytic`: expected rates in closed form. Migration calls are
  a Poisson stream (each unmaps ``batch_folios`` folios at once, as reclaim's
  ``shrink_folio_list`` -> ``demote_folio_list`` -> ``migrate_pages_batch``
  does), so flush counts follow by counting, except under migrc, where a CPU's
  flush depends on a race: after its last full flush, the first deferred call
  starts a "pending" period that ends either with a full flush that happens
  anyway (natural, another shootdown) or, at the first reuse of a source
  folio, with a migrc flush. That is a renewal process per CPU; its rate is

      r = (1 - kappa I) / (1 / lambda_d + I),   I = int_0^inf S_D(t) exp(-kappa t) dt,
      S_D(t) = S_1(t) exp(-lambda_d int_0^t (1 - S_1)),   S_1 = S_reuse^batch_folios,

  with lambda_d the rate of deferred calls and kappa the rate of full
  flushes that clear the CPU anyway. (Deterministic reuse R, kappa = 0:
  r = 1 / (1/lambda_d + R).)
- :meth:`TlbModel.simulate`: the C++ discrete-event simulation of the same
  description (``core/src/tlb/tlb_sim.cpp``), per-CPU state, replications
  on threads, 99% confidence intervals.

Costs (:class:`TlbCosts`) turn rates into CPU time per cause, and the TLB
streams (:class:`TlbStream`) turn full flushes into refill misses from the
application's working set, not from an assumed constant. Kernel references:
``arch/x86/mm/tlb.c`` (``flush_tlb_mm_range``: INVLPG up to
``tlb_single_page_flush_ceiling`` = 33 entries, else a full flush;
``arch_tlbbatch_flush``: always a full flush; ``flush_tlb_func`` counts
``irq_tlb_count``, the /proc/interrupts "TLB shootdowns" row, on the
receiving CPU only), ``arch/arm64/include/asm/tlbflush.h`` (broadcast
``TLBI ...IS`` + ``DSB ISH``, no IPI; batched unmap since commit
43b3dfdd0455), commit 4d4b6d66db (no flush for PROT_NONE PTEs), and the
migrc series (v9, Byungchul Park, linux-mm, April 2024).

Units: rates per second, costs in microseconds (``*_us``) or nanoseconds
(``*_ns``), reuse times in microseconds (a :class:`~mmcost.locks.Dist`).
"""

from __future__ import annotations

import enum
import math
import os
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from typing import ClassVar

from . import _core, cpu_models
from . import _validate as v
from .locks import Dist
from .mechanism import Mechanism, Quantity, Result, knob
from .model import Prior

US_PER_S = 1e6


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
    c = v.scalar("entries", entries)
    w = v.scalar("working_set_pages", working_set_pages)
    m = min(c, w)
    if m == 0:
        return 0.0
    if w <= c:
        return float(w)
    # sum_{k=0}^{m-1} 1/(W-k) = psi(W+1) - psi(W-m+1)
    from scipy.special import digamma

    return float(m - (w - c) * (digamma(w + 1) - digamma(w - m + 1)))


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
        return refill_misses(self.entries, self.working_set_pages)


@dataclass(frozen=True)
class TlbCosts:
    """CPU time per primitive on bare metal, and the factors a KVM guest adds.

    Defaults and their sources (orders of magnitude; fits and bands treat them
    as priors):

    - ``irq_us`` = 1.0: receiving a flush IPI (interrupt entry/exit plus
      ``flush_tlb_func``); Amit, Tai, Wei, "Don't shoot down TLB shootdowns!",
      EuroSys 2020, sec. 2 (remote acknowledgement >= ~1000 cycles, more with
      PTI).
    - ``ipi_send_us`` = 0.5 per target: one x2APIC ICR write per destination
      plus the share of waiting for acknowledgements (same source).
    - ``full_flush_us`` = 0.1 and ``invlpg_us`` = 0.1: the local CR3 write /
      INVPCID and one INVLPG (~200-300 cycles, same source).
    - ``walk_ns`` = 30: one page walk on a TLB miss that hits the page-walk
      caches and L2 (Bhargava et al., "Accelerating two-dimensional page walks
      for virtualized systems", ASPLOS 2008: 4 references native).
    - ``nested_walk_factor`` = 3: a two-dimensional walk makes up to 24
      references instead of 4 (same paper); a factor 2-5 after page-walk
      caches.
    - ``vm_exit_factor`` = 3: in a KVM guest every ICR write exits to the host
      and the interrupt is injected on entry; a VM exit/entry round trip costs
      about as much as the native IPI path again or more (Agesen et al.,
      "Software techniques for avoiding hardware virtualization exits", USENIX
      ATC 2012), and preempted vCPUs make waits far longer (Ouyang & Lange,
      "Shoot4U", VEE 2016).
    - ``tlbi_us`` = 0.1 per broadcast TLBI and ``dsb_us`` = 1.0 per DSB ISH
      wait on arm64 (no interrupt on the other CPUs).
    """

    irq_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI handling on a target")
    ipi_send_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="flush IPI per target, sender")
    full_flush_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="a local full flush")
    invlpg_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one INVLPG")
    walk_ns: float | None = knob(None, kind="float", unit="ns", upper=1e5, doc="one native page walk")
    nested_walk_factor: float = knob(3.0, unit="1", lower=1.0, upper=20.0,
                                     prior=Prior(3.0, 1.0, "Bhargava et al., ASPLOS 2008: 24 vs 4 references, cut by "
                                                           "page-walk caches"))
    vm_exit_factor: float = knob(3.0, unit="1", lower=1.0, upper=100.0,
                                 prior=Prior(3.0, 1.5, "Agesen et al., USENIX ATC 2012; Ouyang & Lange, VEE 2016"))
    tlbi_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one broadcast TLBI (arm64)")
    dsb_us: float | None = knob(None, kind="float", unit="us", upper=100.0, doc="one DSB ISH wait (arm64)")

    def check(self) -> None:
        for f in ("irq_us", "ipi_send_us", "full_flush_us", "invlpg_us", "walk_ns", "tlbi_us", "dsb_us"):
            v.scalar(f"costs.{f}", getattr(self, f))
        for f in ("nested_walk_factor", "vm_exit_factor"):
            if v.scalar(f"costs.{f}", getattr(self, f)) < 1:
                raise ValueError(f"costs.{f} must be >= 1 (a guest is never cheaper), got {getattr(self, f)}")


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


def _default_counters() -> tuple:
    return (FlushCounter("itlb_flush_count"), FlushCounter("dtlb_thread_flush_count"),
            FlushCounter("stlb_any_flush_count"))


def _default_streams() -> tuple:
    # Skylake-class core: 1536-entry STLB, 128-entry ITLB (Intel SDM vol. 3, sec. 4.10; optimization manual)
    return (TlbStream("itlb_load", 128, 32), TlbStream("dtlb_load", 1536, 1e6), TlbStream("dtlb_store", 1536, 1e6))


@dataclass(frozen=True)
class TlbModel(Mechanism):
    """The TLB flushes of page migration and reclaim on ``cpus`` CPUs that all run the mm.

    Folios per second: ``promotion_rate_per_s`` (NUMA-hinting faults,
    ``do_numa_page`` -> ``migrate_misplaced_folio``: their PTEs are PROT_NONE,
    so they need no flush when ``skip_inaccessible``, commit 4d4b6d66db),
    ``demotion_rate_per_s`` (kswapd's ``demote_folio_list``) and
    ``reclaim_unmap_rate_per_s`` (swap-out: ``shrink_folio_list`` ->
    ``try_to_unmap``; migrc never defers these). Migration and reclaim unmap
    in calls of ``batch_folios`` folios, ``entries_per_folio`` TLB entries each
    (1 for a 4K page or a PMD-mapped THP, 16 for a PTE-mapped 64K mTHP);
    ``writable_fraction`` of migrated folios cannot be deferred by migrc.
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
    ``cpu_model`` (:mod:`mmcost.cpu_models`); ``skip_inaccessible`` left
    ``None`` from the ``kernel``.
    """

    name: str = field(default="tlb", kw_only=True)
    cpus: int = knob(16, unit="count", doc="CPUs running the mm")
    arch: Arch = knob(Arch.X86, kind="str", choices=("x86", "arm64"),
                      aliases=(("x86_64", "x86"), ("amd64", "x86"), ("aarch64", "arm64")))
    policy: Policy = knob(Policy.BATCHED, kind="str", choices=tuple(p.value for p in Policy))
    virtualized: bool = knob(False, doc="a KVM guest: IPIs exit, page walks are 2-D")
    cpu_model: str | None = knob(None, kind="str", choices=tuple(cpu_models.PRESETS))
    kernel: str = knob("6.18", doc="selects skip_inaccessible when it is None")
    promotion_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios promoted per second (NUMA hinting)")
    demotion_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios demoted per second (kswapd)")
    reclaim_unmap_rate_per_s: float = knob(0.0, unit="1/s", upper=1e12, doc="folios unmapped by reclaim per second")
    skip_inaccessible: bool | None = knob(None, kind="bool", kernel=True, doc="no flush for PROT_NONE PTEs (v6.8)")
    batch_folios: int = knob(32, unit="count", doc="folios per migration/reclaim call")
    entries_per_folio: int = knob(1, unit="count", doc="TLB entries per folio")
    flush_ceiling: int = knob(33, unit="count", doc="tlb_single_page_flush_ceiling")
    writable_fraction: float = knob(0.0, unit="1", upper=1.0, doc="migrated folios migrc cannot defer")
    natural_flush_rate_per_s: float = knob(0.0, unit="1/s", upper=1e7, doc="full flushes per CPU with no IPI")
    other_round_rate_per_s: float = knob(0.0, unit="1/s", upper=1e7, doc="other full-flush IPI rounds of the mm")
    reuse: Dist = knob(None, factory=lambda: Dist.exponential(5000.0), prefix=True,
                       doc="time from a folio's migration to its reuse (us)")
    costs: TlbCosts = field(default_factory=TlbCosts)
    streams: tuple = field(default_factory=_default_streams)
    counters: tuple = field(default_factory=_default_counters)
    work_s: float = knob(1.0, unit="s", lower=1e-9, upper=1e9, doc="useful CPU time per CPU in a run")
    working_set_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)
    fast_mem_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)
    reference_fast_mem_mb: float | None = knob(None, kind="float", unit="MiB", lower=1e-6, upper=1e12)

    FREE: ClassVar = ("demotion_rate_per_s",)

    @property
    def PRIORS(self) -> dict:  # noqa: N802 - the Mechanism hook
        return cpu_models.relative_priors(self.table_values())

    def table_values(self) -> dict:
        arch = Arch(self.arch).value if isinstance(self.arch, (Arch, str)) and self.arch in ("x86", "arm64", Arch.X86,
                                                                                             Arch.ARM64) else "x86"
        cpu = cpu_models.get(self.cpu_model) if self.cpu_model else cpu_models.default_for(arch)
        costs = cpu.costs()
        out = {k: val for k, val in costs.items() if k in TlbCosts.__dataclass_fields__}
        for st in self.streams if isinstance(self.streams, tuple) else ():  # TLB sizes move with the CPU
            if isinstance(st, TlbStream) and st.page_kb == 4:
                out[f"{st.name}_entries"] = costs["itlb_entries" if st.name.startswith("itlb") else "stlb_entries"]
        return out

    def check(self) -> None:
        v.count("cpus", self.cpus)
        for name, enum_type in (("arch", Arch), ("policy", Policy)):
            val = getattr(self, name)
            try:
                object.__setattr__(self, name, enum_type(val))
            except ValueError:
                raise ValueError(f"{name} must be one of {[e.value for e in enum_type]}, got {val!r}") from None
        for name in ("virtualized",):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.skip_inaccessible is not None and not isinstance(self.skip_inaccessible, (bool, np.bool_)):
            raise TypeError(f"skip_inaccessible must be a bool, got {type(self.skip_inaccessible).__name__}")
        for name in ("promotion_rate_per_s", "demotion_rate_per_s", "reclaim_unmap_rate_per_s"):
            v.scalar(name, getattr(self, name))
        if v.scalar("writable_fraction", self.writable_fraction) > 1:
            raise ValueError(f"writable_fraction must be in [0, 1], got {self.writable_fraction}")
        v.count("batch_folios", self.batch_folios)
        v.count("entries_per_folio", self.entries_per_folio)
        v.count("flush_ceiling", self.flush_ceiling, minimum=0)
        v.scalar("natural_flush_rate_per_s", self.natural_flush_rate_per_s)
        v.scalar("other_round_rate_per_s", self.other_round_rate_per_s)
        if not isinstance(self.reuse, Dist):
            raise TypeError(f"reuse must be a mmcost.locks.Dist, got {type(self.reuse).__name__}")
        self.reuse.check("reuse")
        if self.policy is Policy.DEFERRED and self.reuse.kind != "empirical" and self.reuse.mean_us <= 0:
            raise ValueError("reuse.mean_us must be > 0 under the deferred policy")
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
        if ref <= 0:
            raise ValueError("reference_fast_mem_mb: the working set fits the reference fast memory; "
                             "no migration to scale from")
        return slow_share(self.fast_mem_mb or self.reference_fast_mem_mb, self.working_set_mb) / ref

    @property
    def call_rate_per_s(self) -> float:
        """Migration calls per second that need a flush (PROT_NONE promotions need none)."""
        promotions = 0.0 if self.switch("skip_inaccessible") else self.promotion_rate_per_s
        return (self.demotion_rate_per_s + promotions) * self.tiering_scale / self.batch_folios

    @property
    def reclaim_call_rate_per_s(self) -> float:
        """Reclaim unmap calls per second (always flushed, whatever the policy)."""
        return self.reclaim_unmap_rate_per_s / self.batch_folios

    @property
    def _writable_call_share(self) -> float:
        """A call is flushed at once under migrc if any of its folios is writable."""
        return 1.0 - (1.0 - self.writable_fraction) ** self.batch_folios

    # --- analytic solver --------------------------------------------------------------------
    def analytic(self) -> TlbResult:
        n = self.cpus
        lam, lam_r = self.call_rate_per_s, self.reclaim_call_rate_per_s
        remote = (n - 1) / n  # the sender's own TLB is flushed locally
        x86 = self.arch is Arch.X86
        r = dict.fromkeys(_RATES, 0.0)
        r["calls"] = lam + lam_r

        def ipi_round(rate, count_rounds=True):  # x86: the sender IPIs every other CPU, `rate` times per second
            r["shootdowns"] += rate * remote
            r["ipis"] += rate * remote
            if count_rounds:
                r["rounds"] += rate if n > 1 else 0.0

        def flush_round(rate):  # a full flush of every CPU, `rate` times per second
            r["full_flushes"] += rate
            if x86:
                ipi_round(rate)
            else:
                r["tlbi_ops"] += rate / n
                r["dsb_syncs"] += rate / n

        def batched(rate):
            if x86:
                flush_round(rate)
            else:
                r["tlbi_ops"] += rate * self.batch_folios * self.entries_per_folio / n
                r["dsb_syncs"] += rate / n

        if self.policy is Policy.IMMEDIATE:
            per_folio = (lam + lam_r) * self.batch_folios
            if not x86:
                r["tlbi_ops"] += per_folio * self.entries_per_folio / n
                r["dsb_syncs"] += per_folio / n
            elif self.entries_per_folio > self.flush_ceiling:
                flush_round(per_folio)
            else:
                r["invlpg"] += per_folio * self.entries_per_folio
                ipi_round(per_folio)
        elif self.policy is Policy.BATCHED:
            batched(lam + lam_r)
        else:
            lam_w = lam * self._writable_call_share + lam_r  # flushed at once
            lam_d = lam * (1.0 - self._writable_call_share)
            batched(lam_w)
            # full flushes that clear a CPU's pending state anyway
            kappa = self.natural_flush_rate_per_s + self.other_round_rate_per_s + (lam_w if x86 else 0.0)
            rate = deferred_flush_rate(lam_d, kappa, self.reuse, self.batch_folios)
            r["deferred_calls"] = lam_d
            r["full_flushes"] += rate
            if x86:
                in_step = self.natural_flush_rate_per_s == 0  # CPUs stay in step: one round flushes all
                ipi_round(rate, count_rounds=in_step)
                if in_step:
                    r["reuse_rounds"] = rate
                else:
                    r["reuse_rounds"] = math.nan  # per-CPU states diverge; simulate() counts rounds
                    r["rounds"] = math.nan
            else:
                r["reuse_rounds"] = rate
                r["tlbi_ops"] += rate / n
                r["dsb_syncs"] += rate / n
        flush_round(self.other_round_rate_per_s)
        r["full_flushes"] += self.natural_flush_rate_per_s  # no IPI, no broadcast
        return TlbResult(self, _rates_frame(r), "analytic")

    # --- as a Mechanism ----------------------------------------------------------------------
    BASE_METRICS: ClassVar = ("tlb_shootdowns", "tlb_shootdowns_per_s", "runtime_s", "tlb_overhead_pct")

    @property
    def METRICS(self) -> tuple:  # noqa: N802 - the Model hook: the counters and streams this instance has
        return (*self.BASE_METRICS, *(c.name for c in self.counters), *(f"{st.name}_miss_count" for st in self.streams))

    def solve(self, solver: str = "analytic", **simulate_kwargs) -> Result:
        """Rates and a run's counters (``work_s`` of work per CPU): ``result["runtime_s"]``;
        ``result.details["rates"]`` is the :class:`TlbResult`."""
        if solver not in ("analytic", "simulated"):
            raise ValueError(f"solver must be 'analytic' or 'simulated', got {solver!r}")
        res = self.analytic() if solver == "analytic" else self.simulate(**simulate_kwargs)
        run = res.run(self.work_s)
        units = {"runtime_s": "s", "tlb_shootdowns": "count per CPU"}
        qs = [Quantity("tlb_shootdowns_per_s", res.rate("shootdowns"), "1/(CPU s)",
                       float(res.rates.loc["shootdowns", "ci_low"]), float(res.rates.loc["shootdowns", "ci_high"])),
              Quantity("tlb_overhead_pct", 100 * res.overhead, "%", 100 * res.overhead, 100 * res.overhead)]
        qs += [Quantity(k, float(x), units.get(k, "count"), float(x), float(x)) for k, x in run.items()]
        title = f"{self.arch.value}, {self.policy.value} flushing, {self.cpus} CPUs" + (", KVM guest" if self.virtualized else "")
        return Result(tuple(qs), res.solver, 0.99 if solver == "simulated" else 1.0, bool(self.fitted_on), title,
                      details={"rates": res})

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
        replications = v.count("replications", replications, minimum=2)
        seed = v.count("seed", seed, minimum=0)
        threads = v.count("threads", threads if threads is not None else min(replications, os.cpu_count() or 1))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=replications, desc="tlb DES", leave=False)
        params = _core.tlb.TlbSimParams(
            cpus=self.cpus, arch=_core.tlb.Arch.__members__[self.arch.value],
            policy=_core.tlb.Policy.__members__[self.policy.value], call_rate=self.call_rate_per_s,
            reclaim_call_rate=self.reclaim_call_rate_per_s, batch_folios=self.batch_folios,
            entries_per_folio=self.entries_per_folio, flush_ceiling=self.flush_ceiling,
            writable_fraction=self.writable_fraction, natural_flush_rate=self.natural_flush_rate_per_s,
            other_round_rate=self.other_round_rate_per_s, reuse=self.reuse._core(1.0 / US_PER_S), warmup=warmup_s,
            horizon=horizon_s)
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
        }
        rows = {}
        t = stdtrit(replications - 1, 0.995)  # Student t quantile, without importing scipy.stats
        for k in _RATES:
            x = np.asarray(per_rep[k], float) / horizon_s
            half = t * x.std(ddof=1) / math.sqrt(replications)
            rows[k] = (x.mean(), x.mean() - half, x.mean() + half)
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=["value", "ci_low", "ci_high"])
        frame.index.name = "quantity"
        frame["unit"] = [_RATES[k] for k in frame.index]
        per_cpu = d["shootdowns"].mean(axis=0) / horizon_s
        return TlbResult(self, frame, "simulated", per_cpu_shootdowns_per_s=per_cpu,
                         events=float(d["events"].sum()))


#: share of the fast node the application can hold (kernel, page cache, watermarks)
FAST_NODE_USABLE = 0.9


def slow_share(fast_mem_mb: float, working_set_mb: float) -> float:
    """Share of a uniformly accessed working set that lives in the slow tier."""
    return max(0.0, 1.0 - FAST_NODE_USABLE * fast_mem_mb / working_set_mb)


def deferred_flush_rate(lam_d: float, kappa: float, reuse: Dist, batch_folios: int) -> float:
    """Per-CPU rate of migrc flushes (the renewal formula in the module docstring).

    ``lam_d``: deferred calls per second; ``kappa``: full flushes per second
    that clear the CPU anyway; ``reuse``: reuse time of one folio (µs); the
    call's deadline is the first reuse of its ``batch_folios`` folios."""
    lam_d = v.scalar("lam_d", lam_d)
    kappa = v.scalar("kappa", kappa)
    if lam_d == 0:
        return 0.0
    b = int(batch_folios)
    if reuse.kind in ("deterministic", "empirical"):
        samples = np.array([reuse.mean_us] if reuse.kind == "deterministic" else reuse.samples_us, float) / US_PER_S
        integral = _pending_integral_steps(np.sort(samples), lam_d, kappa, b)
    else:
        integral = _pending_integral_smooth(reuse, lam_d, kappa, b)
    return (1.0 - kappa * integral) / (1.0 / lam_d + integral)


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
    """I for an exponential reuse time (adaptive quadrature of a closed-form
    integrand) or a lognormal one (tabulated on a dense logarithmic grid:
    nested quadrature is slow and no more accurate)."""
    from scipy import integrate, stats  # here: importing them costs more than mmcost.tlb itself

    mean = reuse.mean_us / US_PER_S
    if reuse.kind == "exponential":
        beta = b / mean  # the minimum of b exponentials

        def integrand(t):  # S_1 exp(-lam_d int_0^t (1 - S_1) - kappa t)
            return math.exp(-beta * t - lam_d * (t + math.expm1(-beta * t) / beta) - kappa * t)

        return integrate.quad(integrand, 0.0, 50.0 / beta, limit=400, epsabs=0.0, epsrel=1e-10)[0]
    s2 = math.log1p(reuse.cv**2)
    dist = stats.lognorm(s=math.sqrt(s2), scale=mean * math.exp(-0.5 * s2))
    t = np.concatenate([[0.0], np.geomspace(float(dist.ppf(1e-15)), float(dist.isf(1e-13)), 40_000)])
    s1 = dist.sf(t) ** b
    g = integrate.cumulative_trapezoid(1.0 - s1, t, initial=0.0)
    return float(integrate.trapezoid(s1 * np.exp(-lam_d * g - kappa * t), t))


#: the rates a result reports (per CPU per second unless the unit says otherwise)
_RATES = {
    "shootdowns": "1/(CPU s)",       # flush IPIs received (/proc/interrupts TLB row)
    "full_flushes": "1/(CPU s)",     # all full flushes, local and remote
    "invlpg": "1/(CPU s)",           # single-entry invalidations
    "ipis": "1/(CPU s)",             # IPIs sent, per CPU
    "tlbi_ops": "1/(CPU s)",         # broadcast TLBIs issued, per CPU (arm64)
    "dsb_syncs": "1/(CPU s)",        # DSB ISH waits, per CPU (arm64)
    "rounds": "1/s",                 # flush operations with remote targets
    "calls": "1/s",                  # migration and reclaim calls needing a flush
    "deferred_calls": "1/s",         # calls whose flush migrc deferred
    "reuse_rounds": "1/s",           # deferred calls flushed at reuse
}


def _rates_frame(r: dict) -> pd.DataFrame:
    f = pd.DataFrame({"value": [r[k] for k in _RATES]}, index=pd.Index(list(_RATES), name="quantity"))
    f["ci_low"] = f["value"]
    f["ci_high"] = f["value"]
    f["unit"] = list(_RATES.values())
    return f


@dataclass(frozen=True)
class TlbResult:
    """Rates from one solver, and what they cost.

    ``rates``: one row per quantity (``value``, 99% ``ci_low``/``ci_high``;
    equal for the analytic solver). The analytic solver leaves ``rounds`` and
    ``reuse_rounds`` NaN (stated, not silent) for x86 migrc with natural
    flushes, where CPUs' pending states diverge and a reuse flush reaches a
    random subset; nothing else depends on them, and :meth:`TlbModel.simulate`
    counts them. :meth:`costs` splits the CPU time lost
    by cause; :meth:`run` gives a run's expected counters and runtime."""

    model: TlbModel
    rates: pd.DataFrame
    solver: str
    per_cpu_shootdowns_per_s: np.ndarray | None = None
    events: float = 0.0

    def rate(self, quantity: str) -> float:
        return float(self.rates.loc[quantity, "value"])

    def costs(self) -> pd.DataFrame:
        """Share of each CPU's time lost per cause (fractions of a CPU-second)."""
        m, c = self.model, self.model.costs
        vm = c.vm_exit_factor if m.virtualized else 1.0
        walk = c.walk_ns * 1e-3 * (c.nested_walk_factor if m.virtualized else 1.0)
        refill = sum(s.refill for s in m.streams)
        us = {
            "ipi_receive": self.rate("shootdowns") * c.irq_us * vm,
            "ipi_send": self.rate("ipis") * c.ipi_send_us * vm,
            "local_flush": self.rate("full_flushes") * c.full_flush_us + self.rate("invlpg") * c.invlpg_us,
            "refill_misses": self.rate("full_flushes") * refill * walk,
            "tlbi_broadcast": self.rate("tlbi_ops") * c.tlbi_us + self.rate("dsb_syncs") * c.dsb_us,
        }
        out = pd.DataFrame({"cpu_share": {k: x / US_PER_S for k, x in us.items()}})
        out.index.name = "cause"
        return out

    @property
    def overhead(self) -> float:
        """Fraction of every CPU's time lost to TLB maintenance."""
        return float(self.costs()["cpu_share"].sum())

    def runtime_s(self, work_s: float) -> float:
        """Wall time of a job needing ``work_s`` seconds on each CPU: work / (1 - overhead)."""
        work_s = v.scalar("work_s", work_s, positive=True)
        u = self.overhead
        if u >= 1:
            raise ValueError(f"TLB maintenance would take {u:.0%} of every CPU; the configuration cannot run")
        return work_s / (1.0 - u)

    def run(self, work_s: float) -> dict:
        """Expected counters of a whole run (all CPUs) needing ``work_s`` of work per CPU:
        the metric names of seed 001 (``tlb_shootdowns`` is per CPU)."""
        m = self.model
        t = self.runtime_s(work_s)
        cpu_s = m.cpus * t
        out = {"runtime_s": t, "tlb_shootdowns": self.rate("shootdowns") * t}
        for c in m.counters:
            out[c.name] = cpu_s * (c.per_full_flush * self.rate("full_flushes") + c.per_invlpg * self.rate("invlpg")
                                   + c.background_per_s)
        for s in m.streams:
            out[f"{s.name}_miss_count"] = m.cpus * work_s * s.misses_per_work_s + cpu_s * self.rate("full_flushes") * s.refill
        return out

    def __repr__(self) -> str:
        m = self.model
        return (f"TlbResult({self.solver}, {m.arch.value}, {m.policy.value}, {m.cpus} CPUs: "
                f"{self.rate('shootdowns'):.4g} shootdowns/CPU/s, {self.rate('full_flushes'):.4g} full flushes/CPU/s, "
                f"overhead {self.overhead:.3%})")

    def _repr_html_(self) -> str:
        return f"<p><code>{self.__repr__()}</code></p>" + self.rates.to_html(float_format=lambda x: f"{x:.5g}")
