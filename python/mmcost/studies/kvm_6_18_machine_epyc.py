"""A second VM of this project's kind measured, then predicted with nothing fitted.

The same commands and study as :mod:`~mmcost.studies.kvm_6_18_machine`, on
the next VM the project got: an AMD EPYC guest (kernel build fc-v1252)
where the first was an Intel Xeon one (fc-v1147). ``mmcost measure
machine`` measured its per-primitive costs
(``data/kvm_6_18_machine_epyc/profile_b.toml``), then ``mmcost measure
swapout`` ran the default matrix (4K-2M, 1 and 2 processes, 256 and 512 MiB
memcgs, lzo-rle and lz4, 2 repetitions). Mechanism:
:class:`mmcost.swap.SwapModel` with ``cpu_model`` this VM's profile.

Free: nothing. Held out: every run, per-process throughput and TLB
shootdowns per swapped page, as in the first VM's study. In the joint fit
(:mod:`mmcost.corpus`) it is the only source on its boot: left out, its
machine factor is the prior's, so its rows test what the profile and the
other sources' kernel-path costs carry to a VM none of them ran on.

How far one VM's costs carry to the next is the point of this source: the
two VMs' profiles differ by 1.3x in a target's time per IPI (7.7 against
10.1 us), 2x in the sender's (3.9 against 7.7 us) and 2.5x in zeroing
bandwidth (25 against 10 GB/s), and this VM's profiles a and b, a minute
apart, by 3.3x in a cache line's handoff (49 and 164 ns; c, an hour later, 49).

What the profile does not time (:meth:`Kvm618MachineEpyc.reclaim_residual`):
per swapped 4K page at one process, the write loop's time beyond the
profile's fault and zram write, the rest of reclaim (LRU, rmap, swap cache,
slot allocation), is 4.3-6.5 us here against 2.6-3.3 us on the Xeon guest
(1.7-2.1x), the same factor as the two VMs' 4K fault path less zeroing
(profile_b's 1.49 against 0.86 us: 1.73x; profile_a and c give 2.0x and
1.6x). The swap model takes that rest from priors
scaled by one factor per VM, ``SwapModel.kernel_speed``: the profile's 4K
fault path over the generic machine's (:func:`mmcost.cpu_models.kernel_speed`:
0.96 here, 0.55 on the Xeon guest). Before it, the same priors fit this VM's
one-process runs (7.7% median error) and missed the Xeon guest's by 16%; with
it, 7.5% and 11.3%. Swap-in agrees (``swapin_check.csv``): the same six
read-backs run 1.5-1.6x slower per page here than on the Xeon guest, and
the swap-in costs fitted there (:mod:`~mmcost.studies.kvm_6_18_swapin`),
carried here by this VM's profile, predict them at +20% (4K) and +25% (64K),
where at the Xeon guest's kernel speed they give +37% and +40% (with the
compressors' priors lzbench's Silesia figures, the Xeon fit's costs were
higher and gave +8% and +17%)
(:meth:`Kvm618MachineEpyc.swapin_carried`). Measured instead of fitted:
profile_e (23:51 UTC, the same boot) added ``mmcost-probe swapin``,
swap-in faults without reclaim per compressor at 4K, 16K and 64K (lzo-rle:
6.4, 17.4 and 57.4 us a fault): lzo-rle and lzo decompress usemem's data
at 2.8 us a page here and lz4 at 3.8, not lzbench's 9.0 for lzo on Silesia
at this clock, and do_swap_page's per-folio work is SwapInModel's prior.
The six read-backs run again right after it (``swapin_check_e.csv``; the
VM ran 21-24% faster than at 15:58, and its kernel speed measured 0.84
against profile_b's 0.96) are predicted from profile_e with nothing
fitted at -7.6% (4K) and -6.9% (64K); with lzbench's decompression -33%
and -36%
(:meth:`Kvm618MachineEpyc.swapin_measured_here`).

The slow 2M runs: the host, not the kernel's swap path. This guest's host
takes back free memory (free page reporting; ``page_reporting_order=11`` on
the kernel's command line), and a THP faulted on such memory pays an EPT
violation and a host fault per 4 KiB page inside its zeroing: 8.7 us a page
(``profile_d.toml``, ``mmcost-probe firsttouch``: 50% of 256 fresh THPs,
4-6 ms each against 0.18 ms for a THP on memory the guest freed a moment
before), 1.1-1.4 s for the 512 MiB of THPs a one-process 512M run faults
before its limit: what those runs lacked (1.3-2.2 s of system time where 0.6
was predicted). Which fresh THPs are unbacked depends on what ran seconds
before, so for these runs, measured without a warm-up, the band's lower
edge is at all of them unbacked (:func:`mmcost.measure.verify.unwarmed_large_runs`,
with profile_d's ``host_touch_us_per_page``, the same boot). Not only THPs:
a 64K folio is cut from a free block of its order or above too, and the
warm-up before a 64K run that followed a 4K one found 75% of its memory
unbacked. Measured again after ``mmcost measure swapout``'s warm-up (every
large-folio run; ``warmed_matrix.csv``, the 64-run matrix, and
``warmed_2m.csv``, 16 2M runs before it; :meth:`Kvm618MachineEpyc.warmed`),
one process at 2M in 512M ran at 1.20-1.36 GB/s where 3 of the 4 unwarmed
runs had given 0.35-0.41, and the large folios' errors at one process are
the 4K runs' (0 to -11% against -9 to -11%: profile_d, taken 3 hours after
profile_b, puts this VM 5-10% slower than the runs of the same hour were).
"""

from __future__ import annotations

from .. import cpu_models, datasets
from ..measure.profile import load
from ..metrics import folio_label
from ._study import Section
from .kvm_6_18_machine import PROFILE as OTHER_VM
from .kvm_6_18_machine import Kvm618Machine
from .kvm_6_18_swapin import readback_lines

PROFILE = ("kvm_6_18_machine_epyc", "profile_b.toml")
#: the profile that measured the host's price of a fresh THP (the same boot, 3 hours later), and the
#: default matrix measured again after it, each large-folio run after the warm-up
HOST_PROFILE, WARMED_RUNS = "profile_d.toml", "warmed_matrix.csv"
#: the profile with the swap-in probe (the same boot, 23:51 UTC), and the read-backs run right after it
SWAPIN_PROFILE = "profile_e.toml"

#: the two VMs, each by the source folder of its profiles and runs
VMS = (("Xeon", OTHER_VM[0]), ("EPYC", PROFILE[0]))
#: the costs compared between the two VMs (profile keys, as ``mmcost measure machine`` writes them)
COMPARED = ("ipi_target_us", "ipi_sender_us", "handoff_ns", "zero_gb_s", "copy_gb_s")


class Kvm618MachineEpyc(Kvm618Machine):
    id = "kvm_6_18_machine_epyc"
    miss = ("one process at 2M in 512M is 131-208% slower than predicted for the backed guest: its fresh THPs "
            "landed on memory the host had taken back (8.7 us a page, profile_d; after the warm-up the same runs "
            "match, warmed_matrix.csv); left out, 15 of the 16 one-process rows of shootdowns per swapped page miss "
            "a few IPIs a run from outside the writer's mm")
    PROFILE = PROFILE

    def host_profile(self) -> str:
        return str(datasets.path(PROFILE[0]) / HOST_PROFILE)

    def _model_fields(self) -> dict:
        """The study's model with the host's price of a fresh THP's page (:data:`HOST_PROFILE`'s measured
        ``host_touch_us_per_page``: profile_b predates the probe)."""
        fields = super()._model_fields()
        fields["host_touch_us_per_page"] = load(self.host_profile()).costs["host_touch_us_per_page"].value
        return fields

    def warmed(self):
        """The 2M runs measured after the warm-up (:data:`WARMED_RUNS`), predicted from
        :data:`HOST_PROFILE` with nothing fitted: :func:`mmcost.measure.verify.verify`'s table."""
        import warnings

        import pandas as pd

        from ..measure.verify import verify
        from ..swap import SwapModel

        if self.__dict__.get("_warmed") is None:
            runs = pd.read_csv(datasets.path(PROFILE[0]) / WARMED_RUNS)
            fields = {k: v for k, v in self.source().get("model", {}).items()}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self._warmed = verify(runs, None, model=SwapModel(**{**fields, "cpu_model": self.host_profile()}),
                                      n_samples=100, seed=3, level=self.level)["table"]
        return self._warmed

    def other_vm_profile(self) -> str:
        """The first VM's profile (:mod:`~mmcost.studies.kvm_6_18_machine`)."""
        return str(datasets.path(OTHER_VM[0]) / OTHER_VM[1])

    def cpu_models(self) -> list[tuple[str, str | None]]:
        """The first study's three, and the other VM's profile: what measuring this VM buys over
        carrying a profile from the last one."""
        return super().cpu_models() + [("the other VM's profile (Intel Xeon)", self.other_vm_profile())]

    def compared(self) -> list[dict]:
        """Per cost of :data:`COMPARED` and each VM's profiles: value and round-to-round sd."""
        out = []
        for label, folder in VMS:
            for name in ("profile_a.toml", "profile_b.toml"):
                prof = load(datasets.path(folder) / name)
                for key in COMPARED:
                    c = prof.costs[key]
                    out.append({"vm": label, "profile": name.removesuffix(".toml"), "cost": key,
                                "unit": c.unit, "value": c.value, "sd": c.sd})
        return out

    def reclaim_residual(self) -> list[dict]:
        """Per VM and 4K configuration (mean over its runs): the write loop's time per swapped page
        beyond what the VM's profile measured (every page's first-touch fault, the swapped page's
        zram write), in us: the rest of reclaim, which no microbenchmark of the profile times.
        Beside it, the profile's 4K fault less zeroing: another kernel path, timed."""
        out = []
        for label, folder in VMS:
            prof = load(datasets.path(folder) / "profile_b.toml")
            fault = prof.per_size[4]["fault_us_per_folio_total"].value
            runs = datasets.load(folder)
            runs = runs[runs["folio_kb"] == 4]
            wide = runs.pivot_table(index=["run", "processes", "memcg_mb", "compressor"], columns="metric",
                                    values="value", aggfunc="first").reset_index()
            zram = wide["compressor"].map(lambda c: prof.per_compressor[c]["zram_write_us_per_page"].value)
            pages = wide["usemem_bytes"] / 4096
            wide["rest_us"] = (wide["usemem_time_us"] - pages * fault) / wide["pswpout_count"] - zram
            for (procs, mb, comp), part in wide.groupby(["processes", "memcg_mb", "compressor"]):
                out.append({"vm": label, "processes": int(procs), "memcg_mb": float(mb), "compressor": comp,
                            "rest_us_per_swapped_page": float(part["rest_us"].mean()),
                            "fault_less_zeroing_us": prof.per_size[4]["fault_us_per_folio"].value})
        return out

    def _readbacks(self, runs_file: str, models) -> list[dict]:
        """The in-order read-backs of ``runs_file`` (this folder's), each predicted by every
        (label, SwapInModel) of ``models`` (:func:`~mmcost.studies.kvm_6_18_swapin.readback_errors`)."""
        import pandas as pd

        from .kvm_6_18_swapin import readback_errors

        return readback_errors(pd.read_csv(datasets.path(PROFILE[0]) / runs_file), models)

    def swapin_carried(self) -> list[dict]:
        """The six swap-in runs of ``swapin_check.csv`` predicted with the swap-in costs fitted on the
        Xeon guest (:mod:`~mmcost.studies.kvm_6_18_swapin`'s free parameters) on this VM's profile: at
        its measured kernel speed, at the Xeon guest's (the costs carried unscaled), and with the swap-in
        priors instead of the fit. Per folio size: measured mean, predicted, error in %."""
        from ..swap import SwapInModel
        from . import get

        xeon = get("kvm_6_18_swapin")
        fit = xeon.fit()
        fitted = {n: float(fit.params[n]) for n in xeon.free}
        here = SwapInModel(**{**xeon._model_fields(), "cpu_model": self.profile_path()})
        return self._readbacks("swapin_check.csv", (
            ("Xeon fit, this VM's kernel speed", here.set(**fitted)),
            ("Xeon fit, the Xeon's kernel speed", here.set(**fitted, kernel_speed=fit.model.kernel_speed)),
            ("swap-in priors, this VM's speed", here)))

    def swapin_measured_here(self) -> list[dict]:
        """The six read-backs again, right after profile_e (``swapin_check_e.csv``), predicted from
        that profile with nothing fitted: its swap-in probe gives lzo-rle's decompression of usemem's
        data and do_swap_page's per-folio work. Against it, the same profile with
        lzbench's decompression (what a profile without the swap-in probe gives)."""
        from ..swap import SwapInModel
        from ..swap.devices import decompress_us_per_page
        from . import get

        profile = str(datasets.path(PROFILE[0]) / SWAPIN_PROFILE)
        from ..measure import profile as P

        here = SwapInModel(**{**get("kvm_6_18_swapin")._model_fields(), "cpu_model": profile,
                              "swapin_us_per_folio": P.swapin_per_folio(P.load(profile), cpu_models.default_for("x86"))})
        lzbench = decompress_us_per_page("lzo-rle", cpu_models.get(profile).clock_ghz)
        return self._readbacks("swapin_check_e.csv", (
            ("profile_e, nothing fitted", here),
            ("profile_e, lzbench's decompression", here.set(decompress_us_per_page=lzbench))))

    def sections(self) -> list[Section]:
        import pandas as pd

        r = pd.DataFrame(self.reclaim_residual())
        r = r[r["processes"] == 1]
        rest = [f"{'4K, 1 process':<22} {'Xeon':>8} {'EPYC':>8} {'ratio':>6}"]
        for (mb, comp), part in r.groupby(["memcg_mb", "compressor"]):
            x, e = (part.loc[part["vm"] == v, "rest_us_per_swapped_page"].iloc[0] for v in ("Xeon", "EPYC"))
            rest.append(f"{f'{mb:g}M, {comp}':<22} {x:>8.2f} {e:>8.2f} {e / x:>6.2f}")
        fx, fe = (r.loc[r["vm"] == v, "fault_less_zeroing_us"].iloc[0] for v in ("Xeon", "EPYC"))
        rest.append(f"{'4K fault less zeroing':<22} {fx:>8.2f} {fe:>8.2f} {fe / fx:>6.2f}")
        rest.append("us per swapped page beyond the profile's fault and zram write (the rest")
        rest.append("of reclaim); last line: the profile's 4K fault path, us per fault")

        t = pd.DataFrame(self.compared())
        lines = [f"{'cost':<14} {'unit':<4}" + "".join(f" {v + ' ' + p[-1]:>13}" for v in ("Xeon", "EPYC")
                                                      for p in ("profile_a", "profile_b"))]
        for key, part in t.groupby("cost", sort=False):
            cells = "".join(f" {r.value:>7.3g} {100 * r.sd / r.value:>4.0f}%" for r in part.itertuples())
            lines.append(f"{key:<14} {part['unit'].iloc[0]:<4}{cells}")
        lines.append("value and the rounds' relative sd; a, b: two profiles of one boot")
        carried = readback_lines(self.swapin_carried(), "swap-in KiB/s, 1 process, 256M, lzo-rle",
                                 "measured here (3 runs each)")
        carried.append("error of the prediction; the Xeon fit: kvm_6_18_swapin's free costs")
        carried += [""] + readback_lines(self.swapin_measured_here(), "again after profile_e (23:51 UTC)",
                                         "measured (3 runs each)")
        carried.append("profile_e's swap-in probe: lzo-rle's decompression of usemem's")
        carried.append("data and do_swap_page's per-folio work, measured")
        w = self.warmed()
        w = w[w["metric"] == "usemem_throughput_kib_s"]
        warm = [f"{'after the warm-up':<15} {'1 process':>16} {'2 processes':>16}",
                f"{'folio, memcg':<15} {'err':>7} {'in band':>8} {'err':>7} {'in band':>8}"]
        for (kb, mb), part in w.groupby(["folio_kb", "memcg_mb"]):
            cells = ""
            for procs in (1, 2):
                x = part[part["processes"] == procs]
                cells += f" {x['error_pct'].median():>+6.0f}% {int(x['in_band'].sum()):>5}/{len(x)}"
            warm.append(f"{folio_label(kb) + f', {mb:g}M':<15}{cells}")
        warm.append("median error of KiB/s per process over lzo-rle and lz4 (2 runs")
        warm.append("each), runs' means in the 90% band; profile_d, nothing fitted")
        return super().sections() + [Section("The matrix after the warm-up: the host's backing out", "\n".join(warm)),
                                     Section("The two VMs' measured costs side by side", "\n".join(lines)),
                                     Section("Kernel-path speed: what the profile does not time", "\n".join(rest)),
                                     Section("Swap-in fitted on the Xeon guest, predicted here", "\n".join(carried))]


study = Kvm618MachineEpyc()
