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
bandwidth (25 against 10 GB/s), and this VM's two profiles, a minute apart,
by 3.3x in a cache line's handoff (49 and 164 ns).
"""

from __future__ import annotations

from .. import datasets
from ..measure.profile import load
from ._study import Section
from .kvm_6_18_machine import PROFILE as OTHER_VM
from .kvm_6_18_machine import Kvm618Machine

PROFILE = ("kvm_6_18_machine_epyc", "profile_b.toml")

#: the costs compared between the two VMs (profile keys, as ``mmcost measure machine`` writes them)
COMPARED = ("ipi_target_us", "ipi_sender_us", "handoff_ns", "zero_gb_s", "copy_gb_s")


class Kvm618MachineEpyc(Kvm618Machine):
    id = "kvm_6_18_machine_epyc"
    miss = ""
    PROFILE = PROFILE

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
        for label, folder in (("Xeon", OTHER_VM[0]), ("EPYC", PROFILE[0])):
            for name in ("profile_a.toml", "profile_b.toml"):
                prof = load(datasets.path(folder) / name)
                for key in COMPARED:
                    c = prof.costs[key]
                    out.append({"vm": label, "profile": name.removesuffix(".toml"), "cost": key,
                                "unit": c.unit, "value": c.value, "sd": c.sd})
        return out

    def sections(self) -> list[Section]:
        import pandas as pd

        t = pd.DataFrame(self.compared())
        lines = [f"{'cost':<14} {'unit':<4}" + "".join(f" {v + ' ' + p[-1]:>13}" for v in ("Xeon", "EPYC")
                                                      for p in ("profile_a", "profile_b"))]
        for key, part in t.groupby("cost", sort=False):
            cells = "".join(f" {r.value:>7.3g} {100 * r.sd / r.value:>4.0f}%" for r in part.itertuples())
            lines.append(f"{key:<14} {part['unit'].iloc[0]:<4}{cells}")
        lines.append("value and the rounds' relative sd; a, b: two profiles of one boot")
        return super().sections() + [Section("The two VMs' measured costs side by side", "\n".join(lines))]


study = Kvm618MachineEpyc()
