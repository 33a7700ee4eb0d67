"""CPU presets: clock, cores, memory bandwidth and per-primitive costs in cycles, each with its source.

A ``cpu_model`` configuration column (or field) selects one; the mechanisms
read :meth:`CpuModel.costs`, which turns cycles into microseconds at the
preset's clock. Costs are priors, not measurements of that machine: where no
per-CPU measurement is published, the cycle count is the generic one of
:data:`GENERIC_CYCLES` (its source named there) and only the clock, the core
count and the memory system differ between presets. A cost fitted on one CPU
moves to another in proportion to the two presets (see
:mod:`mmcost.mechanism`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .model import Prior

def _dsb_cycles() -> tuple[float, str]:
    """One DSB ISH after a broadcast TLBI on a one-PE domain, in cycles, from
    Barry Song's two measurements (cover letter v2 of "arm64: support
    batched/deferred tlb shootdown during page reclamation", July 2022; rows
    of the barry_yicong_arm64_batched_tlb_v9 study): a single process pages
    out 1 MiB 10000 times (2,560,000 pages) and ``ptep_clear_flush`` (one
    TLBI and one DSB ISH a page, nothing queued ahead: one flushing CPU) is
    5.36% of 14.55 CPU s on an 8-core Snapdragon 888 at 2.84 GHz and 16.99%
    of 12.29 CPU s on a 96-core Kunpeng 920 at 2.6 GHz: 866 and 2120 cycles a
    page. Divided by the DSB's growth with the PEs of the domain, 1 + g (n - 1)
    (g from the same two shares, :data:`mmcost.swap.DSB_GROWTH`), the two
    give 686 and 465 cycles on one PE: their mean."""
    pages, runs = 10000 * 256, ((0.0536, 14.55, 8, 2.84), (0.1699, 12.287, 96, 2.6))
    (s1, _, n1, _), (s2, _, n2, _) = runs
    r = (s2 / (1 - s2)) / (s1 / (1 - s1))
    g = (r - 1) / ((n2 - 1) - r * (n1 - 1))
    one = [share * cpu_s / pages * 1e6 * ghz * 1e3 / (1 + g * (n - 1)) for share, cpu_s, n, ghz in runs]
    mean = sum(one) / len(one)
    return round(mean), (f"one DSB ISH after a broadcast TLBI, one PE in the domain: {one[0]:.0f} and {one[1]:.0f} "
                         "cycles from ptep_clear_flush's 5.36% (8-core Snapdragon 888) and 16.99% (96-core "
                         "Kunpeng 920) of a single-process paging-out run (Barry Song's arm64 batched-flush cover "
                         "letter, v2, July 2022), each divided by the DSB's growth with the domain's PEs")


_DSB_CYCLES, _DSB_SOURCE = _dsb_cycles()

#: Generic per-primitive costs in cycles, and where each comes from.
GENERIC_CYCLES: dict[str, tuple[float, str]] = {
    "invlpg": (250.0, "INVLPG of one entry: ~200-300 cycles (Amit, Tai, Wei, 'Don't shoot down TLB "
                      "shootdowns!', EuroSys 2020, sec. 2)"),
    "full_flush": (250.0, "CR3 write / INVPCID single-context flush: the order of one INVLPG (same source)"),
    "ipi_send": (1250.0, "x2APIC ICR write per target plus the sender's share of the wait for "
                         "acknowledgements (same source: remote acknowledgement >= ~1000 cycles)"),
    "ipi_receive": (2500.0, "interrupt entry/exit + flush_tlb_func on the target (same source; more with PTI)"),
    "walk": (75.0, "a native 4-level page walk hitting the paging-structure caches and L2 (Bhargava et al., "
                   "'Accelerating two-dimensional page walks for virtualized systems', ASPLOS 2008: 4 references)"),
    "tlbi": (300.0, "one broadcast TLBI VAE1IS issue (Arm Neoverse N1 Software Optimization Guide: system "
                    "instructions, tens to hundreds of cycles)"),
    "dsb": (float(_DSB_CYCLES), _DSB_SOURCE),
    "invlpgb": (300.0, "one AMD INVLPGB issue: no AMD cycle count is published; the order of arm64's broadcast "
                       "TLBI, the same kind of operation (a broadcast invalidation sent to the fabric)"),
    "tlbsync": (3000.0, "TLBSYNC waits for every core's completion of this CPU's INVLPGBs: the order of arm64's "
                        "DSB ISH after broadcast TLBIs, the same kind of wait (no AMD figure is published)"),
}

#: paging-structure caches (Intel SDM vol. 3A, sec. 4.10.3): entries that skip the upper levels of a walk.
#: Intel does not document their sizes; 32 PDE and 4 PDPTE entries are an assumption, the order of the
#: MMU caches studied by Barr, Cox and Rixner, "Translation caching: skip, don't walk (the page table)",
#: ISCA 2010. What they buy is small next to a TLB refill, so the assumption matters little.
PDE_CACHE_ENTRIES = 32
PDPTE_CACHE_ENTRIES = 4

#: one VM exit and re-entry, shared by every mechanism that pays one (an ICR write, a hypercall)
VM_EXIT_PRIOR = Prior(1.0, 0.5, "a VM exit and re-entry for an ICR write or a hypercall: ~1,000-2,000 cycles of "
                                "hardware round trip plus KVM's handler (Agesen et al., USENIX ATC 2012)")
#: one PTE cleared or set, with its rmap and counter work
PTE_PRIOR = Prior(0.05, 0.03, "one PTE update with its rmap and counter work: tens of ns")
#: one anonymous fault besides zeroing and PTEs
FAULT_PRIOR = Prior(1.5, 0.75, "will-it-scale page_fault1: one anonymous fault (entry, allocation, memcg charge, "
                               "rmap) costs 1-2 us on a server core")
#: costs in microseconds that no preset measures: every preset has these, a machine profile its own
GENERIC_US: dict[str, Prior] = {"vm_exit_us": VM_EXIT_PRIOR, "pte_us": PTE_PRIOR, "fault_us_per_folio": FAULT_PRIOR}
#: a measured cost's prior: its rounds' spread and this share of its value added in quadrature, for the
#: microbenchmark not being the very kernel path a model charges it to (a zap's IPI for reclaim's, say)
MEASURED_ALLOWANCE = 0.1
#: a machine's kernel paths besides the fault are not timed by a profile, so their speed is carried from
#: the fault path's (:func:`kernel_speed`) with this relative sd: on the project's two profiled VMs the
#: rest of reclaim per swapped 4K page at one process differed by 1.66-2.09x between them where their
#: fault paths differed by 1.73x (profile_b's; mmcost.studies.kvm_6_18_machine_epyc, reclaim_residual).
#: An assumption sized by one pair; at two processes, where the VMs' IPIs differ too, the residuals
#: do not separate the kernel paths from the flushes, and one VM's three profiles give 0.89-1.14
KERNEL_SPEED_TRANSFER = 0.2


def kernel_speed(fault_4k_us: float) -> float:
    """A machine's time for the kernel's own paths relative to the generic machine of the kernel-path
    priors (``SwapModel.kernel_speed``): its measured anonymous 4K fault besides zeroing (``mmcost
    measure machine``'s first touch of a 4K page, the fault's work and its PTE's) over the generic one
    (:data:`FAULT_PRIOR` + :data:`PTE_PRIOR`, will-it-scale page_fault1's 1-2 us). The fault and reclaim run the same kinds of
    code (page and memcg accounting, LRU and rmap updates, struct page lines), so a VM that is slow at one
    (its memory latency, its nested paging, its host) is slow at the other."""
    return fault_4k_us / (FAULT_PRIOR.value + PTE_PRIOR.value)

#: the share of the peak DRAM bandwidth that streaming kernels sustain: the DRAM station's capacity
SUSTAINED_BW_SHARE = 0.7
_SUSTAINED_SOURCE = ("STREAM (McCalpin, IEEE TCCA Newsletter, 1995) sustains 60-80% of the channels' peak on "
                     "multi-channel servers: refresh, bus turnarounds and row misses take the rest")

_CORE_BW = ("a core's streaming store bandwidth is bounded by its outstanding L1D misses: 10-12 line-fill "
            "buffers x 64 B / ~80-100 ns DRAM latency = 6-10 GB/s (Little's law; Intel 64 and IA-32 "
            "Architectures Optimization Reference Manual, Skylake-SP fill buffers)")


@dataclass(frozen=True)
class CpuModel:
    """One CPU. ``mem_bw_gb_s``: peak DRAM bandwidth of all its sockets
    (channels x MT/s x 8 bytes; the models' DRAM station gets
    :data:`SUSTAINED_BW_SHARE` of it); ``core_write_gb_s``: one core's streaming
    write bandwidth; ``cycles`` overrides :data:`GENERIC_CYCLES` entries."""

    name: str
    arch: str
    clock_ghz: float
    cores: int
    threads_per_core: int
    sockets: int
    mem_bw_gb_s: float
    source: str
    core_write_gb_s: float = 8.0
    #: 4K entries of the instruction L1 TLB and of the second-level (unified/data) TLB
    itlb_entries: int = 128
    stlb_entries: int = 1536
    cycles: dict = field(default_factory=dict)
    #: affected by Meltdown, so the kernel runs with page-table isolation (PTI) by default
    #: (/sys/devices/system/cpu/vulnerabilities/meltdown; Intel before Cascade Lake / Ice Lake)
    meltdown: bool = False
    #: AMD INVLPGB/TLBSYNC broadcast invalidation (Zen 3 on; AMD APM vol. 3, INVLPGB)
    invlpgb: bool = False
    #: Arm FEAT_TLBIRANGE range TLBIs (Armv8.4, ID_AA64ISAR0_EL1.TLB = 0b0010): every arm64 preset here is an
    #: Armv8.2 core (Neoverse N1, TaiShan v110, Cortex-X1) and has none (Arm Neoverse N1 TRM, sec. A1.2)
    tlbi_range: bool = False
    #: costs measured on this machine (a profile of ``mmcost measure machine``): cost name -> Prior (the
    #: measured value; its rounds' spread with MEASURED_ALLOWANCE; the method); they replace the preset's
    measured: dict = field(default_factory=dict)
    #: a profile's: the preset whose values stand where nothing was measured
    based_on: str = ""

    def cycles_of(self, primitive: str) -> float:
        return float(self.cycles.get(primitive, GENERIC_CYCLES[primitive][0]))

    def costs(self) -> dict[str, float]:
        """The mechanisms' cost fields at this clock (microseconds, ``walk_ns`` in ns)."""
        us = 1e-3 / self.clock_ghz  # one cycle in microseconds
        return {
            "invlpg_us": self.cycles_of("invlpg") * us, "full_flush_us": self.cycles_of("full_flush") * us,
            "ipi_send_us": self.cycles_of("ipi_send") * us, "irq_us": self.cycles_of("ipi_receive") * us,
            "walk_ns": self.cycles_of("walk") * us * 1e3, "tlbi_us": self.cycles_of("tlbi") * us,
            "dsb_us": self.cycles_of("dsb") * us,
            "invlpgb_us": self.cycles_of("invlpgb") * us, "tlbsync_us": self.cycles_of("tlbsync") * us,
            "mem_bw_gb_s": self.mem_bw_gb_s * SUSTAINED_BW_SHARE, "core_write_gb_s": self.core_write_gb_s,
            "itlb_entries": float(self.itlb_entries), "stlb_entries": float(self.stlb_entries),
            **{k: p.value for k, p in GENERIC_US.items()}, "kernel_speed": 1.0,  # (the generic machine's)
            "host_touch_us_per_page": 0.0,  # a preset is a CPU: no host behind it (a guest's profile measures it)
            **{k: p.value for k, p in self.measured.items()},
        }

    def measured_priors(self) -> dict[str, Prior]:
        """The measured costs' priors (see :data:`MEASURED_ALLOWANCE`)."""
        return dict(self.measured)

    @property
    def cpus(self) -> int:
        return self.cores * self.threads_per_core * self.sockets


def _ddr(channels: int, mts: int, sockets: int = 1) -> float:
    return channels * mts * 8 / 1000 * sockets


PRESETS: dict[str, CpuModel] = {p.name: p for p in (
    CpuModel("generic-x86", "x86", 2.5, 32, 2, 1, _ddr(8, 3200), "a 2.5 GHz x86 server core; the generic cycle costs; "
             "Skylake-class TLB sizes (128-entry ITLB, 1536-entry STLB: Intel optimization manual, sec. 2.2)"),
    CpuModel("generic-arm64", "arm64", 3.0, 64, 1, 1, _ddr(8, 3200), "a 3.0 GHz arm64 server core; the generic cycle "
             "costs; Neoverse N1 TLB sizes", itlb_entries=48, stlb_entries=1280),
    CpuModel("ampere-altra", "arm64", 3.0, 80, 1, 1, _ddr(8, 3200),
             "Ampere Altra Q80-30 product brief: 80 Neoverse N1 cores at 3.0 GHz, 8 channels DDR4-3200; "
             "48-entry L1 ITLB, 1280-entry L2 TLB (Arm Neoverse N1 TRM, sec. 5.1)", itlb_entries=48, stlb_entries=1280),
    CpuModel("xeon-8255c", "x86", 2.5, 24, 2, 2, _ddr(6, 2933, 2),
             "Intel Xeon Platinum 8255C (Cascade Lake, cloud SKU): 24 cores / 48 threads at 2.5 GHz per socket, "
             "6 channels DDR4-2933; seed 003 ran two sockets (Cascade Lake: Meltdown fixed in hardware)"),
    CpuModel("skylake-sp", "x86", 2.5, 28, 2, 2, _ddr(6, 2666, 2),
             "Intel Xeon Platinum 8180 (Skylake-SP, ark.intel.com): 28 cores at 2.5 GHz, 6 channels DDR4-2666; "
             "affected by Meltdown (PTI on)", meltdown=True),
    CpuModel("haswell-ep", "x86", 2.3, 18, 2, 2, _ddr(4, 2133, 2),
             "Intel Xeon E5-2699 v3 (Haswell-EP, ark.intel.com): 18 cores at 2.3 GHz, 4 channels DDR4-2133 "
             "(seed 004's 'Xeon E5 v3' at its top bin); 1024-entry STLB (Intel optimization manual, Haswell)",
             stlb_entries=1024, meltdown=True),
    CpuModel("zen3-epyc", "x86", 2.45, 64, 2, 1, _ddr(8, 3200),
             "AMD EPYC 7763 (Zen 3, product page): 64 cores at 2.45 GHz, 8 channels DDR4-3200; 64-entry L1 ITLB, "
             "2048-entry L2 DTLB (AMD Software Optimization Guide for Family 19h); INVLPGB from Zen 3",
             itlb_entries=64, stlb_entries=2048, invlpgb=True),
    CpuModel("kunpeng-920", "arm64", 2.6, 64, 1, 1, _ddr(8, 2933),
             "HiSilicon Kunpeng 920-6426 (Huawei product page): 64 TaiShan v110 cores at 2.6 GHz, 8 channels "
             "DDR4-2933; TLB sizes not published: Neoverse N1's used", itlb_entries=48, stlb_entries=1280),
    CpuModel("snapdragon-888", "arm64", 2.84, 8, 1, 1, 51.2,
             "Qualcomm Snapdragon 888 product brief: Cortex-X1 at 2.84 GHz (the costs use the prime core's "
             "clock), LPDDR5-3200 4 x 16-bit = 51.2 GB/s; TLB sizes: Neoverse N1's (not published for X1)",
             itlb_entries=48, stlb_entries=1280),
)}


def get(name: str) -> CpuModel:
    """The preset ``name`` (see :data:`PRESETS`), or the machine profile at
    the path ``name`` (a ``.toml`` file of ``mmcost measure machine``)."""
    if not isinstance(name, str):
        raise TypeError(f"cpu_model must be a preset name or a profile's path, got {type(name).__name__}")
    if name.strip().lower().endswith(".toml"):
        from pathlib import Path

        path = Path(name.strip()).expanduser().resolve()
        if not path.is_file():
            raise ValueError(f"cpu_model: no machine profile at {name!r} (write one with mmcost measure machine)")
        return _profile(str(path), path.stat().st_mtime_ns)
    key = name.strip().lower()
    if key not in PRESETS:
        raise ValueError(f"cpu_model: unknown preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[key]


def default_for(arch: str) -> CpuModel:
    return PRESETS["generic-arm64" if arch == "arm64" else "generic-x86"]


def origin(cpu_model: str | None, arch, name: str, compressor: str | None = None) -> str:
    """Where a mechanism's table value ``name`` comes from: ``profile <file>``
    where a machine profile measured it, else ``preset <name>`` (a
    compressor's speed and ratio: ``compressor <name>``)."""
    arch = getattr(arch, "value", arch) or "x86"
    cpu = get(cpu_model) if cpu_model else default_for(arch)
    if name in cpu.measured or (compressor and f"{name}@{compressor}" in cpu.measured):
        return cpu.name.replace("profile:", "profile ")
    if compressor and name in ("compress_us_per_page", "decompress_us_per_page", "compression_ratio"):
        return f"compressor {compressor}"
    return f"preset {cpu.based_on} (not measured)" if cpu.based_on else f"preset {cpu.name}"


def check_arch(arch: str, cpu_model: str) -> None:
    """Raise a ValueError naming both fields when preset ``cpu_model`` is not
    of architecture ``arch``. A mismatch is refused, not resolved by switching
    to ``arch``'s generic preset: the preset's clock, TLB sizes and cycle costs
    are what a fit's values are ratios to, and the generic one would describe
    a machine nobody asked about."""
    cpu = get(cpu_model)
    if arch != cpu.arch:
        other = "generic-arm64" if arch == "arm64" else "generic-x86"
        raise ValueError(f"arch={arch!r} does not match cpu_model={cpu.name!r}, an {cpu.arch} preset: set arch="
                         f"{cpu.arch!r}, or a cpu_model of {arch} (e.g. {other!r}; presets: "
                         f"{sorted(n for n, p in PRESETS.items() if p.arch == arch)})")


CORE_WRITE_SOURCE = _CORE_BW


def _cycles_source(name: str) -> str:
    return f"{GENERIC_CYCLES[name][1]}; {GENERIC_CYCLES[name][0]:g} cycles at the preset's clock (mmcost.cpu_models)"


#: cost field -> (source, relative width) of its prior; the value is the preset's
RELATIVE_PRIORS: dict[str, tuple[str, float]] = {
    "invlpg_us": (_cycles_source("invlpg"), 0.5), "full_flush_us": (_cycles_source("full_flush"), 0.5),
    "ipi_send_us": (_cycles_source("ipi_send"), 0.5), "irq_us": (_cycles_source("ipi_receive"), 0.5),
    "walk_ns": (_cycles_source("walk"), 0.5), "tlbi_us": (_cycles_source("tlbi"), 0.5),
    "dsb_us": (_cycles_source("dsb"), 0.5),
    "invlpgb_us": (_cycles_source("invlpgb"), 0.7), "tlbsync_us": (_cycles_source("tlbsync"), 0.7),
    "core_write_gb_s": (_CORE_BW, 0.4),
    "mem_bw_gb_s": ("the preset's sustained DRAM bandwidth: its peak (channels x MT/s x 8 B) x "
                    f"{SUSTAINED_BW_SHARE:g}; {_SUSTAINED_SOURCE}", 0.25),
    **{k: (p.source, p.width / p.value) for k, p in GENERIC_US.items()},
}


def relative_priors(values: dict, table: dict | None = None, measured: dict | None = None) -> dict[str, Prior]:
    """Priors centred on a preset's ``values`` (a :meth:`CpuModel.costs` dict,
    plus any extra ``table`` of field -> (source, relative width)); a
    ``measured`` prior (:meth:`CpuModel.measured_priors`) replaces its field's."""
    table = {**RELATIVE_PRIORS, **(table or {})}
    out = {k: Prior(values[k], w * values[k], src) for k, (src, w) in table.items() if values.get(k)}
    return {**out, **{k: p for k, p in (measured or {}).items() if k in values}}


@functools.lru_cache(maxsize=32)
def _profile(path: str, mtime_ns: int) -> CpuModel:  # (mtime in the key: a profile rewritten is read again)
    from .measure.profile import as_cpu_model, load

    return as_cpu_model(load(path), path)
