"""``mmcost measure machine``: this machine's per-primitive costs, measured.

The swap and TLB models need the price of a flush IPI, a fault, a page's
compression, a byte written and a cache line moved. Presets guess them from
a CPU's published numbers; on a virtual machine they are not the CPU's at
all (a flush IPI's price was 1.3, 11.4 and 28.6 us on three KVM guests of
one kind). This module measures them with ``mmcost-probe`` (built with the
package, core/tools/machine_probe.cpp), each in repeated rounds so that its
spread is stated, and writes a profile (TOML) that a model reads as a CPU
preset of its own (``cpu_model="profile.toml"``).

What is measured, and how each maps onto the models' fields:

====================  ===========================================================  =====================
profile cost          measurement (mmcost-probe)                                   model field
====================  ===========================================================  =====================
ipi_target_us         a spinning thread's time lost per flush IPI it takes         ``irq_us`` (a posted
                      (``shootdown``: its loop rate while another thread of        interrupt: no exit
                      its mm zaps pages, against a quiet phase)                    on the target)
ipi_sender_us         the zapping thread's extra time per IPI sent, less the       ``ipi_send_us`` (with
                      target's (the wait for its acknowledgement is modelled       ``vm_exit_us`` = 0:
                      apart): ICR write or hypercall, its VM exit                  the exit is inside)
fault_us_per_folio    first-touch fault of one folio, per mTHP size, less its      ``fault_us_per_folio``
                      zeroing at the measured zero bandwidth; the 4K one over      and ``kernel_speed``
                      the generic machine's 1.55 us: the machine's kernel paths    (the kernel paths'
                      (``cpu_models.kernel_speed``)                                priors scaled)
zero_gb_s, copy_gb_s  memset / memcpy of 256 MiB, one thread                       ``core_write_gb_s``
handoff_ns            one transfer of a contended cache line between two CPUs      lock ``handoff``
tlb_refill_ns         one refill miss after a full flush of the mm: a pointer      ``refill_ns`` (TLB
                      chase over 1,024 4 KiB pages (within any STLB), each         model; a guest's 2-D
                      interval of 4,096 loads after a full flush (mprotect of      walk inside it)
                      64 pages) or a no-op mprotect, alternating (``refill``):
                      the extra time per flush, less the flush's own, per page
swapin_us_per_fault   a swap-in fault without reclaim, per compressor and folio    ``decompress_us_per_page``
@<size>               size (4K, 16K, 64K): usemem's data swapped out to a zram     (the slope per page,
                      of the run's own by MADV_PAGEOUT and read back               less its other work);
                      (``swapin``)                                                 the intercept, less
                                                                                   the fault's, is
                                                                                   :func:`swapin_per_folio`
                                                                                   (SwapInModel's prior)
pageout_us_per_folio  madvise(MADV_PAGEOUT)'s time per folio swapped out, before   checks
@<size>               each swap-in round (``swapin``): shrink_folio_list without   :func:`mmcost.swap.paths.madvise_pageout_us`
                      the LRU scan
compress_us_per_page  zram_write_page's CPU per 4 KiB page of usemem's data, per   ``compress_us_per_page``
compression_ratio     compressor, through a private zram device (O_DIRECT)         ``compression_ratio``
====================  ===========================================================  =====================

A cost's value is the median over its rounds and its spread the robust
standard deviation of the rounds (1.4826 x the median absolute deviation),
relative to the median: the prior a profile gives its field.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: 1.4826 x MAD estimates a normal sample's standard deviation
MAD_TO_SD = 1.4826


class ProbeError(RuntimeError):
    """mmcost-probe failed or printed something that is not its output."""


@dataclass(frozen=True)
class Cost:
    """One measured cost: median over ``rounds`` and the rounds' robust spread."""

    name: str
    value: float
    sd: float
    unit: str
    rounds: tuple[float, ...]
    method: str

    @property
    def rel_spread(self) -> float:
        return self.sd / abs(self.value) if self.value else float("inf")

    @classmethod
    def of(cls, name: str, rounds, unit: str, method: str) -> Cost:
        x = np.asarray(list(rounds), float)
        if x.size == 0 or not np.isfinite(x).all():
            raise ProbeError(f"{name}: no finite rounds ({list(rounds)!r})")
        med = float(np.median(x))
        sd = float(MAD_TO_SD * np.median(np.abs(x - med))) if x.size > 2 else float(np.ptp(x) / 2)
        return cls(name, med, sd, unit, tuple(float(v) for v in x), method)


def probe_path() -> Path:
    """The packaged ``mmcost-probe`` (built with mmcost's C++ core)."""
    p = Path(__file__).resolve().parents[1] / "mmcost-probe"
    if not p.is_file():
        raise ProbeError(f"{p} is missing: reinstall mmcost (pip install .) to build the probe")
    return p


_LINE = re.compile(r"^round=\d+( [a-z_]+=-?[0-9.]+(e[+-]?\d+)?)+$")


def parse_rounds(text: str, keys: tuple[str, ...]) -> list[dict[str, float]]:
    """mmcost-probe's lines as dicts; every line must be a round with ``keys``."""
    rounds = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if not _LINE.match(line.strip()):
            raise ProbeError(f"mmcost-probe output line {i} is not a round: {line!r}")
        fields = dict(kv.split("=") for kv in line.split())
        missing = [k for k in keys if k not in fields]
        if missing:
            raise ProbeError(f"mmcost-probe output line {i} lacks {missing}: {line!r}")
        rounds.append({k: float(v) for k, v in fields.items()})
    if not rounds:
        raise ProbeError("mmcost-probe printed no rounds")
    return rounds


def run_probe(*args: str, keys: tuple[str, ...], runner=subprocess.run) -> list[dict[str, float]]:
    cmd = [str(probe_path()), *map(str, args)]
    done = runner(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ProbeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return parse_rounds(done.stdout, keys)


# --- the machine's description ------------------------------------------------------------------
def describe(root: str | Path = "/") -> dict:
    """CPU, flags, vCPUs, hypervisor, kernel and the config bits the models
    read, from procfs and sysfs under ``root``."""
    root = Path(root)

    def read(p: str) -> str:
        f = root / p.lstrip("/")
        try:
            return f.read_text()
        except OSError:
            return ""

    cpuinfo = read("/proc/cpuinfo")
    model = re.search(r"^(model name|CPU part)\s*:\s*(.+)$", cpuinfo, flags=re.M)
    flags_line = re.search(r"^(flags|Features)\s*:\s*(.+)$", cpuinfo, flags=re.M)
    flags = set(flags_line.group(2).split()) if flags_line else set()
    meltdown = read("/sys/devices/system/cpu/vulnerabilities/meltdown").strip()
    hypervisor = read("/sys/hypervisor/type").strip()
    if not hypervisor and "hypervisor" in flags:  # x86 guests: the kernel logs "Hypervisor detected: KVM"
        said = re.search(r"Hypervisor detected: (\S+)", _dmesg() or "")
        hypervisor = said.group(1).lower() if said else "yes (cpuid)"
    thp = root / "sys/kernel/mm/transparent_hugepage"
    sizes = sorted(int(d.name[len("hugepages-"):-2]) for d in thp.glob("hugepages-*kB")) if thp.is_dir() else []
    load = read("/proc/loadavg").split()
    mhz = re.search(r"^cpu MHz\s*:\s*([0-9.]+)", cpuinfo, flags=re.M)
    return {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "boot_id": read("/proc/sys/kernel/random/boot_id").strip(),
        "cpu": model.group(2).strip() if model else platform.processor(),
        "arch": platform.machine(),
        "vcpus": os.cpu_count() or 1,
        "clock_ghz": float(mhz.group(1)) / 1000 if mhz else float("nan"),
        "virtualized": bool(hypervisor),
        "hypervisor": hypervisor,
        "flags": {f: f in flags for f in ("pcid", "invpcid", "invlpgb", "x2apic", "pti")},
        # FEAT_TLBIRANGE is no hwcap; the kernel logs it (arch/arm64/kernel/cpufeature.c, "TLB range
        # maintenance instructions"): None where the log is not readable or the arch is not arm64
        "tlbi_range": _dmesg_says("TLB range maintenance instructions") if platform.machine() == "aarch64" else None,
        "pti": meltdown.startswith("Mitigation: PTI"),
        "meltdown": meltdown,
        "kernel": read("/proc/sys/kernel/osrelease").strip() or platform.release(),
        "kernel_version": read("/proc/version").strip(),
        "mthp_kb": sizes,
        # CONFIG_LRU_GEN: the control exists (its value says which generations are on)
        "lru_gen": (root / "sys/kernel/mm/lru_gen/enabled").is_file(),
        "zram_compressors": zram_compressors(root),
        "loadavg_1m": float(load[0]) if load else float("nan"),
    }


def _dmesg() -> str | None:
    """The kernel log (root, or kernel.dmesg_restrict = 0), None where it cannot be read."""
    try:
        return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _dmesg_says(text: str) -> bool | None:
    out = _dmesg()
    return None if out is None else text in out


def zram_compressors(root: str | Path = "/") -> list[str]:
    """What zram can compress with: the first zram device's list, else the
    crypto API's compressors named in /proc/crypto."""
    root = Path(root)
    for dev in sorted((root / "sys/block").glob("zram*")):
        text = (dev / "comp_algorithm").read_text() if (dev / "comp_algorithm").is_file() else ""
        if text:
            return text.replace("[", " ").replace("]", " ").split()
    crypto = (root / "proc/crypto").read_text() if (root / "proc/crypto").is_file() else ""
    names = re.findall(r"^name\s*:\s*(\S+)\s*\n(?:.*\n)*?type\s*:\s*(?:s|a)?comp", crypto, flags=re.M)
    return sorted(set(names))


def steal_fraction(seconds: float = 1.0, root: str | Path = "/") -> float:
    """Share of CPU time the hypervisor stole over ``seconds`` (/proc/stat)."""
    def totals():
        fields = (Path(root) / "proc/stat").read_text().splitlines()[0].split()[1:]
        v = [int(x) for x in fields]
        return sum(v[:8]), v[7] if len(v) > 7 else 0

    t0, s0 = totals()
    time.sleep(seconds)
    t1, s1 = totals()
    return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0


# --- the measurements ---------------------------------------------------------------------------
@dataclass
class Profile:
    """A machine's description and its measured costs."""

    description: dict
    costs: dict[str, Cost] = field(default_factory=dict)
    per_size: dict[int, dict[str, Cost]] = field(default_factory=dict)
    per_compressor: dict[str, dict[str, Cost]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def measure_ipi(profile: Profile, cpus: list[int], rounds: int, ops: int, runner=subprocess.run) -> None:
    """Flush IPIs from CPU ``cpus[0]`` to 1..N-1 targets: per target count, the
    sender's extra time per IPI and each target's lost time per IPI."""
    sender, others = cpus[0], cpus[1:]
    if not others:
        profile.notes.append("one CPU: no flush IPI to measure")
        return
    for n in range(1, len(others) + 1):
        rows = run_probe("shootdown", sender, *others[:n], "--ops", ops, "--rounds", rounds,
                         keys=("sender_us", "sender_base_us", "tlb_irqs", "target_lost_us"), runner=runner)
        irqs = np.array([r["tlb_irqs"] for r in rows])
        if np.median(irqs) < 0.5 * n:
            profile.notes.append(f"{n} target(s): only {np.median(irqs):.2f} flush IPIs per zap, not {n}: the "
                                 "targets were not running the mm (a busy machine, or lazy TLB); skipped")
            continue
        extra = np.array([(r["sender_us"] - r["sender_base_us"]) / r["tlb_irqs"] for r in rows])
        lost = np.array([r["target_lost_us"] for r in rows])
        method = f"mmcost-probe shootdown: CPU {sender} zaps a page ({ops} madvise(MADV_DONTNEED) per round) " \
                 f"while {n} thread(s) of its mm spin on CPUs {others[:n]}"
        suffix = "" if n == 1 else f"@{n}"
        profile.costs["ipi_target_us" + suffix] = Cost.of("ipi_target_us", lost, "us", method)
        profile.costs["ipi_sender_extra_us" + suffix] = Cost.of("ipi_sender_extra_us", extra, "us", method)
        profile.costs["ipi_sender_us" + suffix] = Cost.of("ipi_sender_us", np.maximum(extra - lost, 0.0), "us",
                                                          method + "; less the target's time (the ack wait)")
        profile.costs["flush_ipis_per_zap" + suffix] = Cost.of("flush_ipis_per_zap", irqs, "1", method)


def measure_bandwidth(profile: Profile, rounds: int, nbytes: int = 256 << 20, runner=subprocess.run) -> None:
    rows = run_probe("bandwidth", nbytes, "--rounds", rounds, keys=("zero_gb_s", "copy_gb_s"), runner=runner)
    method = f"mmcost-probe bandwidth: memset and memcpy of {nbytes >> 20} MiB, one thread"
    profile.costs["zero_gb_s"] = Cost.of("zero_gb_s", [r["zero_gb_s"] for r in rows], "GB/s", method)
    profile.costs["copy_gb_s"] = Cost.of("copy_gb_s", [r["copy_gb_s"] for r in rows], "GB/s", method)


def measure_handoff(profile: Profile, cpus: list[int], rounds: int, ops: int = 200_000,
                    runner=subprocess.run) -> None:
    if len(cpus) < 2:
        return
    rows = run_probe("handoff", cpus[0], cpus[1], "--ops", ops, "--rounds", rounds, keys=("handoff_ns",),
                     runner=runner)
    profile.costs["handoff_ns"] = Cost.of("handoff_ns", [r["handoff_ns"] for r in rows], "ns",
                                          f"mmcost-probe handoff: one line passed between CPUs {cpus[0]} and "
                                          f"{cpus[1]}, {ops} round trips per round")


#: the refill measurement's hot set: 1,024 4 KiB pages, inside every STLB of the presets (1,024-2,048 entries) and
#: the L1 caches' page-table lines (2 pages of PTEs), so each full flush makes the chase refill exactly these pages
REFILL_BYTES = 4 << 20
REFILL_EVERY = 4096


def measure_refill(profile: Profile, cpu: int, rounds: int, ops: int = 2_000_000, runner=subprocess.run) -> None:
    """``tlb_refill_ns``: the price of one TLB refill miss after a full flush
    (``mmcost-probe refill``, see its header). Every round's refill time per
    flush is divided by the distinct pages the chase touched between flushes
    (``hot_pages_touched``: all of them refill, the set fits the STLB)."""
    if isinstance(ops, bool) or not isinstance(ops, int) or ops < 2 * REFILL_EVERY:
        raise ValueError(f"ops must be an integer >= {2 * REFILL_EVERY} (one flush interval of each kind), got {ops!r}")
    rows = run_probe("refill", REFILL_BYTES, "--flush-every", REFILL_EVERY, "--ops", ops, "--rounds", rounds,
                     "--cpu", cpu, keys=("refill_us_per_flush", "hot_pages_touched", "cold_pages_touched", "huge"),
                     runner=runner)
    per = []
    for i, r in enumerate(rows):
        pages = r["hot_pages_touched"] + r["cold_pages_touched"]
        if r["huge"] or not pages > 0:
            raise ProbeError(f"mmcost-probe refill round {i}: {pages:g} 4 KiB pages touched (huge={r['huge']:g}); "
                             "expected the 4 KiB hot set")
        per.append(r["refill_us_per_flush"] * 1e3 / pages)  # us per flush -> ns per page
    profile.costs["tlb_refill_ns"] = Cost.of(
        "tlb_refill_ns", per, "ns", f"refill {REFILL_BYTES >> 20} MiB of 4 KiB pages, a full flush (mprotect of 64 "
        f"pages) every {REFILL_EVERY} loads against a no-op mprotect; extra time per flush less the flush's own, "
        "per page refilled")


def measure_faults(profile: Profile, m, rounds: int, nbytes: int = 256 << 20, runner=subprocess.run) -> None:
    """First-touch faults per mTHP size: each size alone ``always`` (``m.set_mthp``,
    recorded and restored by the caller's session), the probe touching every
    4 KiB page of a fresh mapping. The per-size anon_fault_alloc counter
    (hugepages-<size>kB/stats, v6.9) says whether folios of that size were
    what the kernel gave; a size that fell back is noted, not kept."""
    zero = profile.costs.get("zero_gb_s")
    for kb in [4, *m.mthp_sizes()]:
        m.set_mthp(kb)
        stats = m.thp / f"hugepages-{kb}kB" / "stats" / "anon_fault_alloc"
        before = int(m.read(stats)) if kb != 4 and stats.is_file() else None
        rows = run_probe("fault", nbytes, "--rounds", rounds, keys=("fault_ns_per_kib", "unmap_ns_per_kib"),
                         runner=runner)
        folios = nbytes / (kb * 1024)
        if before is not None:
            got = int(m.read(stats)) - before
            if got < 0.9 * rounds * folios:
                profile.notes.append(f"{kb}K: {got} folios of that size for {rounds * folios:.0f} faults: the "
                                     "kernel fell back to smaller folios; not kept")
                continue
        method = f"mmcost-probe fault: {nbytes >> 20} MiB touched once per 4 KiB, {kb}K the only mTHP size enabled"
        fault = np.array([r["fault_ns_per_kib"] for r in rows]) * kb * 1e-3  # us per folio
        unmap = np.array([r["unmap_ns_per_kib"] for r in rows]) * kb * 1e-3
        costs = {"fault_us_per_folio_total": Cost.of("fault_us_per_folio_total", fault, "us", method),
                 "unmap_us_per_folio": Cost.of("unmap_us_per_folio", unmap, "us", method)}
        if zero is not None:  # the fault's own work: less zeroing the folio at the measured bandwidth
            zeroing = kb * 1024 / (zero.value * 1e9) * 1e6
            costs["fault_us_per_folio"] = Cost.of("fault_us_per_folio", np.maximum(fault - zeroing, 0.0), "us",
                                                  method + f"; less {zeroing:.3f} us of zeroing at zero_gb_s")
        profile.per_size[kb] = costs


#: a THP's first touch this many times the warm one's (the 25th percentile of the chunks) was host-unbacked
COLD_FACTOR = 4.0


def host_touch(rows: list[dict[str, float]]) -> tuple[np.ndarray, float, float]:
    """``mmcost-probe firsttouch`` chunks (round 0 fresh memory, round 1 the same
    size again at once, reusing it): the host's price per 4 KiB page of each
    host-unbacked THP of round 0 (its time less the warm median, over 512), the
    warm median per THP (us) and the share of round 0's THPs that were unbacked."""
    us = np.array([r["touch_us"] for r in rows], float)
    fresh = np.array([r["round"] == 0 for r in rows])
    if not fresh.any() or fresh.all():
        raise ProbeError("mmcost-probe firsttouch: needs round 0 (fresh memory) and round 1 (reused)")
    warm = float(np.percentile(us, 25))
    cold = fresh & (us > COLD_FACTOR * warm)
    warm_med = float(np.median(us[~cold]))
    return (us[cold] - warm_med) / 512.0, warm_med, float(cold.sum() / fresh.sum())


def measure_host_touch(profile: Profile, m, nbytes: int = 512 << 20, runner=subprocess.run) -> None:
    """A guest's first touch of memory its host does not back: 2M THPs
    (only that size enabled, ``m.set_mthp``) touched one at a time in a fresh
    mapping held whole, then again at once (:func:`host_touch`). The fresh
    round's unbacked THPs give ``host_touch_us_per_page``; where none was
    (bare metal, no free page reporting, or memory freed a moment before)
    it is noted, not kept."""
    m.set_mthp(2048)
    rows = run_probe("firsttouch", nbytes, "--rounds", 2, keys=("touch_us",), runner=runner)
    per_page, warm_us, share = host_touch(rows)
    profile.description["unbacked_fresh_share"] = round(share, 3)
    if per_page.size < 8:
        profile.notes.append(f"first touch of fresh 2M THPs: {share:.0%} host-unbacked (fewer than 8 of "
                             f"{nbytes >> 21}); host_touch_us_per_page not measured")
        return
    method = (f"mmcost-probe firsttouch: {nbytes >> 20} MiB of fresh 2M THPs touched one at a time, held; the "
              f"{per_page.size} that took over {COLD_FACTOR:g}x the warm one ({share:.0%} of them), less the warm "
              f"THP's {warm_us:.0f} us, per 4 KiB")
    profile.costs["host_touch_us_per_page"] = Cost.of("host_touch_us_per_page", per_page, "us", method)


def measure_compression(profile: Profile, m, rounds: int, nbytes: int = 64 << 20, compressors=None,
                        runner=subprocess.run) -> None:
    """Per compressor: a zram device of this run's own (not swap), usemem's
    data written to it with O_DIRECT, its CPU per page and mm_stat's ratio
    (orig_data_size / compr_data_size, Documentation/admin-guide/blockdev/zram.rst)."""
    for comp in compressors or zram_compressors(m.root):
        zid = m.make_zram(comp, max(nbytes * 2, 64 << 20), swap=False)
        dev = f"/dev/zram{zid}"
        rows = run_probe("blockwrite", dev, nbytes, "--rounds", rounds,
                         keys=("write_us_per_page", "cpu_us_per_page"), runner=runner)
        mm_stat = m.read(m.path(f"/sys/block/zram{zid}/mm_stat")).split()
        orig, compr = int(mm_stat[0]), int(mm_stat[1])  # (the device goes when the session restores)
        if compr <= 0:
            raise ProbeError(f"zram{zid} ({comp}): mm_stat says {compr} compressed bytes after writing {orig}")
        method = f"mmcost-probe blockwrite: {nbytes >> 20} MiB of usemem's data to a private zram ({comp}), O_DIRECT"
        profile.per_compressor.setdefault(comp, {}).update({
            "zram_write_us_per_page": Cost.of("zram_write_us_per_page", [r["write_us_per_page"] for r in rows], "us",
                                            method),
            "compression_ratio": Cost.of("compression_ratio", [orig / compr], "1", method + "; mm_stat"),
        })


#: folio sizes whose swap-in is timed: 4K and the mTHP sizes a zram swap-in keeps whole up to 64K
#: (alloc_swap_folio, v6.12; 2M comes back as 4K pages: it tries orders below PMD only)
SWAPIN_SIZES = (4, 16, 64)


def swapin_name(kb: int) -> str:
    """A compressor's cost name for its swap-in faults of ``kb`` KiB folios."""
    return f"swapin_us_per_fault@{kb}K"


def pageout_name(kb: int) -> str:
    """A compressor's cost name for MADV_PAGEOUT's time per ``kb`` KiB folio swapped out."""
    return f"pageout_us_per_folio@{kb}K"


def swapin_sizes(costs: dict[str, Cost], name: str = "swapin_us_per_fault") -> dict[int, dict[str, Cost]]:
    """A compressor's per-size costs ``name`` (its swap-in faults, or its
    pageouts), per folio size: {kb: {name: Cost}}."""
    out = {}
    for key, c in costs.items():
        if key.startswith(name + "@"):
            out[int(key.split("@")[1].removesuffix("K"))] = {name: c}
    return out


def measure_swapin(profile: Profile, m, rounds: int, nbytes: int = 64 << 20, compressors=None,
                   runner=subprocess.run) -> None:
    """Swap-in faults without reclaim, per compressor and folio size
    (``SWAPIN_SIZES`` the kernel offers): per compressor a zram swap device of
    this run's own (priority 100, ``m.make_zram``; swapped off and removed
    before the next, so that it is the only swap), each size alone
    ``always``, and ``mmcost-probe swapin``: usemem's data swapped out by
    MADV_PAGEOUT and read back one word a page. A size is kept when every
    page came back from swap (pswpin) in faults of that size (majflt x pages
    = pswpin, within 1%); else it is noted. The cost
    (:func:`swapin_name`) is the read-back's time per fault."""
    offered = set(m.mthp_sizes())
    for comp in compressors or zram_compressors(m.root):
        zid = m.make_zram(comp, max(nbytes * 2, 64 << 20), swap=True)
        for kb in [k for k in SWAPIN_SIZES if k == 4 or k in offered]:
            m.set_mthp(kb)
            rows = run_probe("swapin", nbytes, "--rounds", rounds,
                             keys=("pswpout_pages", "pswpin_pages", "majflt", "read_us", "pageout_us"), runner=runner)
            pages = nbytes // 4096
            per_fault = kb // 4
            bad = [r for r in rows if r["pswpout_pages"] < 0.99 * pages or r["pswpin_pages"] < 0.99 * pages
                   or abs(r["majflt"] * per_fault - r["pswpin_pages"]) > 0.01 * pages]
            if bad:
                r = bad[0]
                profile.notes.append(f"swap-in {comp} {kb}K: a round swapped out {r['pswpout_pages']:.0f} and in "
                                     f"{r['pswpin_pages']:.0f} of {pages} pages in {r['majflt']:.0f} faults (not "
                                     f"{pages // per_fault} faults of {kb}K); not kept")
                continue
            us = np.array([r["read_us"] / r["majflt"] for r in rows])
            method = (f"mmcost-probe swapin: {nbytes >> 20} MiB of usemem's data, {kb}K folios (the only mTHP size "
                      f"enabled), swapped out by MADV_PAGEOUT to a zram swap of the run's own ({comp}) and read "
                      "back one word a page: the read-back's time per fault")
            profile.per_compressor.setdefault(comp, {})[swapin_name(kb)] = Cost.of(swapin_name(kb), us, "us", method)
            out = np.array([r["pageout_us"] / (r["pswpout_pages"] / per_fault) for r in rows])
            profile.per_compressor[comp][pageout_name(kb)] = Cost.of(
                pageout_name(kb), out, "us", f"mmcost-probe swapin: madvise(MADV_PAGEOUT) of {nbytes >> 20} MiB of "
                f"usemem's data in {kb}K folios to a zram swap of the run's own ({comp}), its time per folio swapped "
                "out (reclaim_pages -> shrink_folio_list, ignoring references; no LRU scan)")
        m.drop("swapon", f"/dev/zram{zid}")
        m.drop("zram", zid)


# --- the profile file ---------------------------------------------------------------------------
def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if v is None:
        return '""'
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cost_table(header: str, c: Cost) -> list[str]:
    return [f"[{header}]", f"value = {c.value!r}", f"sd = {c.sd!r}", f"unit = {_toml_value(c.unit)}",
            f"rounds = {_toml_value(list(c.rounds))}", f"method = {_toml_value(c.method)}", ""]


def to_toml(profile: Profile) -> str:
    """The profile as TOML: [machine] (the description), [costs.<name>],
    [fault.<size>K.<name>], [compressor.<name>.<cost>], notes."""
    d = profile.description
    lines = ["# mmcost machine profile (mmcost measure machine): per-primitive costs of one machine,", "[machine]"]
    for k, v in d.items():
        if isinstance(v, dict):
            continue
        lines.append(f"{k} = {_toml_value(v)}")
    lines.append(f"notes = {_toml_value(profile.notes)}")
    lines.append("")
    for k, v in d.items():
        if isinstance(v, dict):
            lines += [f"[machine.{k}]", *(f"{kk} = {_toml_value(vv)}" for kk, vv in v.items()), ""]
    for name, c in profile.costs.items():
        lines += _cost_table(f'costs."{name}"', c)
    for kb, costs in profile.per_size.items():
        for name, c in costs.items():
            lines += _cost_table(f'fault."{kb}K"."{name}"', c)
    for comp, costs in profile.per_compressor.items():
        for name, c in costs.items():
            lines += _cost_table(f'compressor."{comp}"."{name}"', c)
    return "\n".join(lines)


def _costs(table: dict, where: str) -> dict[str, Cost]:
    out = {}
    for name, t in table.items():
        for key in ("value", "sd", "unit"):
            if key not in t:
                raise ValueError(f"profile: {where}.{name} has no {key!r}")
        value, sd = t["value"], t["sd"]
        if not isinstance(value, (int, float)) or not np.isfinite(value) or not isinstance(sd, (int, float)) \
                or not np.isfinite(sd) or sd < 0:
            raise ValueError(f"profile: {where}.{name} needs a finite value and a finite sd >= 0, got "
                             f"value={value!r}, sd={sd!r}")
        out[name] = Cost(name, float(value), float(sd), str(t["unit"]), tuple(t.get("rounds", ())),
                         str(t.get("method", "")))
    return out


def load(path: str | Path) -> Profile:
    """A profile written by :func:`to_toml` (``mmcost measure machine --out``)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"profile: cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"profile: {path} is not TOML: {exc}") from None
    if "machine" not in data:
        raise ValueError(f"profile: {path} has no [machine] table: not an mmcost machine profile")
    machine = dict(data["machine"])
    notes = machine.pop("notes", [])
    profile = Profile(machine, _costs(data.get("costs", {}), "costs"), notes=list(notes))
    for size, costs in data.get("fault", {}).items():
        if not re.fullmatch(r"\d+K", size):
            raise ValueError(f"profile: fault.{size}: a folio size is written like 64K")
        profile.per_size[int(size[:-1])] = _costs(costs, f"fault.{size}")
    for comp, costs in data.get("compressor", {}).items():
        profile.per_compressor[comp] = _costs(costs, f"compressor.{comp}")
    return profile


def profile_id(path: str | Path) -> str:
    """A profile's id, ``<file name>@<12 hex digits>``: the file's name and the
    start of the SHA-256 of its content as data (every table and value, keys
    sorted, as JSON: comments and layout do not change it, a re-measurement
    does, its ``measured_at`` and costs being new). ``mmcost measure swapout
    --machine`` writes it in each run's ``machine_profile``, so a runs file
    says which profile's costs predict it. Raises ValueError (``profile: ...``)
    for a file :func:`load` refuses."""
    import hashlib
    import json

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    load(path)  # (refuses a file that is not a profile, naming why)
    data = tomllib.loads(Path(path).read_text())
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    return f"{Path(path).name}@{digest[:12]}"


# --- a profile as a CPU preset ------------------------------------------------------------------
#: zram_write_page's work besides compression, in SwapModel's priors (zram_us + zs_malloc's hold): taken off
#: the measured write to leave the compressor's own time (mmcost.swap's zram priors name their sources)
def _zram_besides_compression_us() -> float:
    from ..swap import SwapModel

    fields = SwapModel.__dataclass_fields__
    return sum(fields[name].metadata["knob"].prior.value for name in ("zram_us_per_page", "zs_malloc_hold_us"))


def _swapin_knob_priors(*names: str) -> float:
    """The sum of SwapInModel's priors of ``names`` (generic-machine us)."""
    from ..swap import SwapInModel

    fields = SwapInModel.__dataclass_fields__
    return sum(fields[name].metadata["knob"].prior.value for name in names)


#: a swap-in's kernel work per 4 KiB page besides the PTE, the walk and the decompression, in SwapInModel's priors
#: (mmcost.swap.paths.swap_in, v6.18: swapcache_prepare and swapcache_clear per slot, the swap-in's per-page part,
#: the slot's free, zram_read_page besides decompression)
_SWAPIN_PAGE_KNOBS = ("swapin_us_per_page", "swap_free_us_per_page", "zram_read_us_per_page")
#: and per folio besides the fault's own work and swapin_us_per_folio (the swap table's lookup, folio_add_lru)
_SWAPIN_FOLIO_KNOBS = ("swap_table_lookup_us", "lru_hold_us_per_folio")


def swapin_parts(costs: dict[str, Cost], speed: float, pte_us: float, walk_us: float,
                 fault_us: float) -> tuple[float, float, str] | None:
    """(``swapin_us_per_folio`` in generic-machine us, ``decompress_us_per_page``
    in this machine's us, a note) from one compressor's swap-in faults
    (``costs``, :func:`measure_swapin`), their line over folio sizes
    (:func:`size_line`): the slope per page less the PTE, the 2-D walk and
    the kernel's other per-page work (SwapInModel's priors at ``speed``), the
    intercept less the fault's own ``fault_us`` and the other per-folio work,
    over ``speed`` (what ``kernel_speed`` multiplies). None below two sizes."""
    sizes = swapin_sizes(costs)
    line = size_line(sizes, "swapin_us_per_fault")
    if line is None:
        return None
    a, b = line
    besides_page = pte_us + walk_us + speed * (_swapin_knob_priors(*_SWAPIN_PAGE_KNOBS)
                                               + 2 * _swapin_knob_priors("slot_us_per_slot"))
    besides_folio = fault_us + speed * _swapin_knob_priors(*_SWAPIN_FOLIO_KNOBS)
    note = (f"the line over {', '.join(f'{kb}K' for kb in sorted(sizes))}: {a:.3g} us a folio + {b:.3g} us a page; "
            f"less {besides_page:.3g} us a page (PTE, 2-D walk, {', '.join(_SWAPIN_PAGE_KNOBS)}, two slot updates) "
            f"and {besides_folio:.3g} us a folio (the fault, {', '.join(_SWAPIN_FOLIO_KNOBS)}), at kernel speed "
            f"{speed:.3g}")
    return max(a - besides_folio, 0.0) / speed, max(b - besides_page, 0.0), note


def swapin_per_folio(profile: Profile, base) -> float | None:
    """do_swap_page's per-folio work on the generic machine (:func:`swapin_parts`),
    the median over the compressors measured (it does not depend on the compressor)."""
    prior = swapin_per_folio_prior(profile, base)
    return None if prior is None else prior[0]


def swapin_per_folio_prior(profile: Profile, base) -> tuple[float, float] | None:
    """(:func:`swapin_per_folio`, its sd) in generic-machine us. The sd: the
    measured intercept's and the fault's allowance
    (``cpu_models.MEASURED_ALLOWANCE``), the widths of the other per-folio
    work's priors taken off it, over the kernel speed, and the spread over
    the compressors (each measures the same work)."""
    from .. import cpu_models
    from ..swap import SwapInModel

    inputs = swapin_inputs(profile, base)
    if inputs is None:
        return None
    speed, fault = inputs[0], inputs[3]
    folio = [(p[0], size_line(swapin_sizes(costs), "swapin_us_per_fault")[0])
             for costs in profile.per_compressor.values() if (p := swapin_parts(costs, *inputs)) is not None]
    if not folio:
        return None
    fields = SwapInModel.__dataclass_fields__
    others = float(np.hypot.reduce([fields[n].metadata["knob"].prior.width for n in _SWAPIN_FOLIO_KNOBS]))
    value = float(np.median([v for v, _ in folio]))
    intercept = float(np.median([a for _, a in folio]))
    measured = np.hypot(cpu_models.MEASURED_ALLOWANCE * np.hypot(intercept, fault) / speed, others)
    spread = float(np.std([v for v, _ in folio], ddof=1)) if len(folio) > 1 else 0.0
    return value, float(np.hypot(measured, spread))


def swapin_inputs(profile: Profile, base) -> tuple[float, float, float, float] | None:
    """(kernel speed, PTE us, 2-D walk us, fault us) for :func:`swapin_parts`:
    the profile's measured fault line and kernel speed, the walk of ``base``
    (a CpuModel) times SwapModel's nested walk factor in a guest. None when
    the profile has no swap-in faults or no 4K fault."""
    from .. import cpu_models
    from ..swap import SwapModel

    f4 = profile.per_size.get(4, {}).get("fault_us_per_folio")
    if f4 is None or f4.value <= 0 or not any(swapin_sizes(c) for c in profile.per_compressor.values()):
        return None
    line = fault_line(profile.per_size)
    fault, pte = line if line is not None else (f4.value - cpu_models.PTE_PRIOR.value, cpu_models.PTE_PRIOR.value)
    nested = SwapModel.__dataclass_fields__["nested_walk_factor"].metadata["knob"].prior.value
    clock = float(profile.description.get("clock_ghz") or base.clock_ghz)
    walk_us = base.cycles_of("walk") / clock * 1e-3 * (nested if profile.description.get("virtualized") else 1.0)
    return max(cpu_models.kernel_speed(f4.value), 0.05), max(pte, 0.0), walk_us, max(fault, 0.01)


def size_line(per_size: dict[int, dict[str, Cost]], name: str) -> tuple[float, float] | None:
    """(per folio, per 4 KiB page) of the cost ``name`` per folio, fitted over the
    measured sizes (weighted least squares on the rounds' spread). None below two sizes."""
    pts = [(kb // 4, c[name]) for kb, c in sorted(per_size.items()) if name in c]
    if len(pts) < 2:
        return None
    x = np.array([p for p, _ in pts], float)
    y = np.array([c.value for _, c in pts])
    w = 1 / np.array([max(c.sd, 0.02 * c.value, 1e-3) for _, c in pts])
    slope, intercept = np.polyfit(x, y, 1, w=w)
    return float(intercept), float(slope)


def fault_line(per_size: dict[int, dict[str, Cost]]) -> tuple[float, float] | None:
    """(per folio, per 4 KiB page) of a fault besides zeroing, fitted over the
    measured sizes (weighted least squares on the rounds' spread): what
    ``fault_us_per_folio`` and ``pte_us`` are in the swap model's fault,
    ``fault_us_per_folio + zeroing + pages x pte_us``. None below two sizes."""
    return size_line(per_size, "fault_us_per_folio")


def as_cpu_model(profile: Profile, path: str | Path):
    """The profile as a :class:`~mmcost.cpu_models.CpuModel`: the generic
    preset of its architecture with every measured cost in place of the
    preset's, each with a prior of its measured spread (plus
    ``cpu_models.MEASURED_ALLOWANCE``) naming the machine and the method."""
    from dataclasses import replace

    from .. import cpu_models
    from ..model import Prior

    d = profile.description
    arch = {"x86_64": "x86", "aarch64": "arm64", "arm64": "arm64", "x86": "x86"}.get(str(d.get("arch")))
    if arch is None:
        raise ValueError(f"profile {path}: [machine] arch = {d.get('arch')!r} is not x86_64 or aarch64")
    base = cpu_models.default_for(arch)
    where = f"measured on {d.get('cpu', '?')} ({d.get('vcpus', '?')} vCPUs, {d.get('hypervisor') or 'bare metal'}, " \
            f"Linux {d.get('kernel', '?')}; profile {Path(path).name})"
    measured: dict[str, Prior] = {}

    def put(field: str, value: float, sd: float, method: str) -> None:
        width = float(np.hypot(sd, cpu_models.MEASURED_ALLOWANCE * abs(value))) or 1e-9
        measured[field] = Prior(float(value), width, f"{where}: {method}")

    c = profile.costs
    if "ipi_target_us" in c:
        put("irq_us", c["ipi_target_us"].value, c["ipi_target_us"].sd, c["ipi_target_us"].method)
    if "ipi_sender_us" in c:
        put("ipi_send_us", c["ipi_sender_us"].value, c["ipi_sender_us"].sd, c["ipi_sender_us"].method)
        if d.get("virtualized"):  # the guest's exit per IPI is inside the sender's measured time
            measured["vm_exit_us"] = Prior(0.0, 0.1, f"{where}: inside ipi_send_us (the sender's measured time per "
                                                     "IPI includes the exit that sends it)")
    if "tlb_refill_ns" in c:  # measured where the models run: a guest's 2-D walk is inside it
        put("refill_ns", c["tlb_refill_ns"].value, c["tlb_refill_ns"].sd, c["tlb_refill_ns"].method)
    if "zero_gb_s" in c:
        put("core_write_gb_s", c["zero_gb_s"].value, c["zero_gb_s"].sd, c["zero_gb_s"].method)
    if "host_touch_us_per_page" in c:
        h = c["host_touch_us_per_page"]
        put("host_touch_us_per_page", h.value, h.sd, h.method)
    line = fault_line(profile.per_size)
    if line is not None:
        a, b = line
        sizes = ", ".join(f"{kb}K" for kb, c in sorted(profile.per_size.items()) if "fault_us_per_folio" in c)
        put("fault_us_per_folio", max(a, 0.01), 0.0, f"first-touch faults at {sizes}, less zeroing: the intercept "
            "of time per folio against its pages")
        if b > 0:
            put("pte_us", b, 0.0, f"first-touch faults at {sizes}, less zeroing: the slope per 4 KiB page")
    elif 4 in profile.per_size and "fault_us_per_folio" in profile.per_size[4]:
        f4 = profile.per_size[4]["fault_us_per_folio"]
        put("fault_us_per_folio", max(f4.value - cpu_models.PTE_PRIOR.value, 0.01), f4.sd,
            f4.method + "; less one PTE at its prior")
    f4 = profile.per_size.get(4, {}).get("fault_us_per_folio")
    if f4 is not None and f4.value > 0:  # the kernel's other paths at the 4K fault path's speed (the point
        # itself: the line's intercept moves with the large sizes' spread)
        speed = max(cpu_models.kernel_speed(f4.value), 0.05)  # (SwapModel.kernel_speed's lower bound)
        spread = float(np.hypot(f4.sd / f4.value, np.hypot(cpu_models.MEASURED_ALLOWANCE,
                                                            cpu_models.KERNEL_SPEED_TRANSFER)))
        measured["kernel_speed"] = Prior(speed, speed * spread, f"{where}: its 4K fault besides zeroing "
                                         f"({f4.value:.3g} us) over the generic machine's "
                                         f"{cpu_models.FAULT_PRIOR.value + cpu_models.PTE_PRIOR.value:g} us "
                                         "(cpu_models.kernel_speed)")
    inputs = swapin_inputs(profile, base)
    for comp, costs in profile.per_compressor.items() if inputs is not None else ():
        parts = swapin_parts(costs, *inputs)
        if parts is not None:
            spread = max(c.rel_spread for c in costs.values() if c.name.startswith("swapin_us_per_fault@"))
            put(f"decompress_us_per_page@{comp}", max(parts[1], 0.01), spread * parts[1],
                f"mmcost-probe swapin (usemem's data, MADV_PAGEOUT to zram, read back): {parts[2]}")
    besides = _zram_besides_compression_us()
    for comp, costs in profile.per_compressor.items():
        if "zram_write_us_per_page" in costs:
            w = costs["zram_write_us_per_page"]
            put(f"compress_us_per_page@{comp}", max(w.value - besides, 0.1 * w.value), w.sd,
                w.method + f"; less {besides:.2f} us of zram_write_page's other work (mmcost.swap's priors)")
        if "compression_ratio" in costs:
            r = costs["compression_ratio"]
            put(f"compression_ratio@{comp}", r.value, r.sd, r.method)
    return replace(base, name=f"profile:{Path(path).name}", source=f"machine profile {path} ({where})",
                   clock_ghz=float(d.get("clock_ghz") or base.clock_ghz), cores=int(d.get("vcpus") or base.cores),
                   threads_per_core=1, sockets=1,
                   core_write_gb_s=measured["core_write_gb_s"].value if "core_write_gb_s" in measured
                   else base.core_write_gb_s, measured=measured, based_on=base.name)


# --- the whole measurement ----------------------------------------------------------------------
def busy(root: str | Path = "/", seconds: float = 1.0, samples: int = 10) -> str:
    """Why the machine is too busy to measure on, or ``""``: other runnable
    tasks (``procs_running`` of /proc/stat, this one not counted) on average
    over ``seconds``, or more than 5% of the time stolen by the hypervisor
    (:data:`mmcost.measure.load.BUSY_STEAL`, the threshold verify flags a run by)."""
    from .load import BUSY_STEAL

    stat = Path(root) / "proc/stat"
    if not stat.is_file():  # (no procfs to read: nothing to say)
        return ""

    def running() -> int:
        line = next(x for x in stat.read_text().splitlines() if x.startswith("procs_running"))
        return int(line.split()[1]) - 1

    seen = []
    for _ in range(samples):
        seen.append(running())
        time.sleep(seconds / samples)
    steal = steal_fraction(0.2, root) if (Path(root) / "proc/stat").read_text().startswith("cpu ") else 0.0
    why = []
    if np.mean(seen) >= 0.5:
        why.append(f"{np.mean(seen):.1f} other runnable tasks on average over {seconds:g} s")
    if steal > BUSY_STEAL:
        why.append(f"{steal:.0%} of CPU time stolen by the hypervisor")
    return "; ".join(why)


def machine(out: str | Path | None = None, *, rounds: int = 7, ops: int = 20_000, cpus: list[int] | None = None,
            faults: bool = True, compression: bool = True, compressors: list[str] | None = None,
            allow_busy: bool = False, dry_run: bool = False, root: str | Path = "/", progress: bool = True,
            journal: str | Path | None = None, machine_control=None) -> Profile:
    """Measure this machine's per-primitive costs (see the module docstring)
    and write them to ``out`` (TOML) when given: flush IPIs, bandwidth and a
    contended line's handoff as any user; first-touch and swap-in faults per mTHP size
    and compression per compressor as root, holding the machine as ``measure
    swapout`` does (every setting recorded in the journal and restored). A
    busy machine (other runnable tasks, steal time) is refused unless
    ``allow_busy``: its costs would be its neighbours'."""
    from .controls import Machine, MeasureError
    from .session import holding

    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 3 <= rounds <= 1000:
        raise ValueError(f"rounds must be an integer in [3, 1000] (a spread needs three), got {rounds!r}")
    if not isinstance(ops, int) or isinstance(ops, bool) or not 100 <= ops <= 10**7:
        raise ValueError(f"ops must be an integer in [100, 1e7], got {ops!r}")
    all_cpus = sorted(os.sched_getaffinity(0))
    cpus = all_cpus if cpus is None else list(cpus)
    if not cpus or any(c not in all_cpus for c in cpus):
        raise ValueError(f"cpus: {cpus!r} must be CPUs this process may run on ({all_cpus})")
    if out is not None and not Path(out).parent.is_dir():
        raise ValueError(f"out: the folder of {str(out)!r} does not exist")
    desc = describe(root)
    m = machine_control or Machine(root=root, dry_run=dry_run)
    if not dry_run:
        why = busy(root)
        desc["busy"] = why
        if why and not allow_busy:
            raise MeasureError(f"the machine is busy ({why}): its costs would be its neighbours'; stop what runs "
                               "or pass allow_busy=True (--allow-busy), and the profile says so")
    root_only = (faults or compression) and not dry_run and os.geteuid() != 0
    steps = ["bandwidth", "handoff", "flush IPIs", "TLB refill"] + (["faults", "host touch", "swap-in"] if faults
                                                                     else []) + \
            (["compression"] if compression else [])
    prof = Profile(desc)
    if root_only:
        prof.notes.append("not root: faults (first-touch, swap-in) per mTHP size and compression were not measured")
        steps = steps[:4]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(steps), desc="measure machine", unit="step")

    def step(name, fn):
        if bar is not None:
            bar.set_postfix_str(name)
        if not dry_run:
            fn()
        else:
            m.log(f"would measure {name}")
        if bar is not None:
            bar.update(1)

    try:
        step("bandwidth", lambda: measure_bandwidth(prof, rounds))
        step("handoff", lambda: measure_handoff(prof, cpus, rounds))
        step("flush IPIs", lambda: measure_ipi(prof, cpus, rounds, ops))
        step("TLB refill", lambda: measure_refill(prof, cpus[-1], rounds))
        if len(steps) > 4:
            with holding(m, journal):
                if "faults" in steps:
                    step("faults", lambda: measure_faults(prof, m, rounds))
                    step("host touch", lambda: measure_host_touch(prof, m))
                    step("swap-in", lambda: measure_swapin(prof, m, rounds, compressors=compressors))
                if "compression" in steps:
                    step("compression", lambda: measure_compression(prof, m, rounds, compressors=compressors))
    finally:
        if bar is not None:
            bar.close()
    prof.description["loadavg_1m_after"] = describe(root)["loadavg_1m"]
    if out is not None and not dry_run:
        Path(out).write_text(to_toml(prof))
    return prof


def summary(profile: Profile) -> str:
    """The profile as an 80-column table: each cost, its median and relative spread."""
    d = profile.description
    lines = [f"{d.get('cpu', '?')}, {d.get('vcpus', '?')} vCPUs, {d.get('hypervisor') or 'bare metal'}, "
             f"Linux {d.get('kernel', '?')}"[:80], f"{'cost':<34} {'median':>12} {'unit':<6} {'spread':>7} rounds"]

    def line(name, c):
        lines.append(f"{name:<34} {c.value:>12.4g} {c.unit:<6} {c.rel_spread:>6.1%} {len(c.rounds):>6}")

    for name, c in profile.costs.items():
        line(name, c)
    for kb, costs in sorted(profile.per_size.items()):
        label = f"{kb // 1024}M" if kb >= 1024 else f"{kb}K"
        for name, c in costs.items():
            line(f"{label} {name}", c)
    for comp, costs in profile.per_compressor.items():
        for name, c in costs.items():
            line(f"{comp} {name}", c)
    lines += [f"note: {n}" for n in profile.notes]
    return "\n".join(lines)
