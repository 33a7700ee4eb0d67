"""This project's own VM measured, then predicted with nothing fitted.

``mmcost measure machine`` measured the guest's per-primitive costs
(``data/kvm_6_18_machine/profile_b.toml``: a flush IPI's price on the
sender and the target, faults per mTHP size, zeroing bandwidth, zram's
compression time and ratio per compressor), then ``mmcost measure swapout``
ran the default matrix (4K-2M, 1 and 2 processes, 256 and 512 MiB memcgs,
lzo-rle and lz4, 2 repetitions). Mechanism: :class:`mmcost.swap.SwapModel`
with ``cpu_model`` the profile (:func:`mmcost.cpu_models.get`), so every
measured cost replaces the generic preset's and brings its spread as its
prior.

Free: nothing. Held out: every run, per process throughput and TLB
shootdowns per swapped page, at the run's measured large-folio share
(:func:`mmcost.measure.verify.verify` with ``fit_query=None``), with the 90%
band of the priors alone. The section also predicts the same runs with the
IPI costs left to the library's default prior (what the measurement buys)
and with the generic preset (what it replaces).

In the joint fit (:mod:`mmcost.corpus`) its per-process throughput rows are
a member's (``Study.PROFILE``: a source on a measured machine): they set
this VM's machine factor and the era's kernel-path costs with
:mod:`~mmcost.studies.kvm_6_18_swapin`, the other study on this boot;
leaving it out, its runs are predicted with the joint fit's values of those.

=========================================  =====  ==========================
rows                                        n     how
=========================================  =====  ==========================
throughput and IPIs/page per run            all   predicted from the profile
counters (bytes, times, vmstat, mTHP)       rest  inputs of those (the run's
                                                  share swapped, large share)
=========================================  =====  ==========================
"""

from __future__ import annotations

import warnings

import pandas as pd

from ..measure.profile import as_cpu_model, load
from ..measure.verify import model_rows, verify
from ..swap import SwapModel
from ._study import Section, Study

PROFILE = ("kvm_6_18_machine", "profile_b.toml")


class Kvm618Machine(Study):
    id = "kvm_6_18_machine"
    miss = ("left out, predicted with the joint fit's kernel-path costs at this VM's machine factor (from "
            "kvm_6_18_swapin, the other study on its boot): 15 of the 16 one-process rows of TLB shootdowns per "
            "swapped page miss a count of 1.5-4e-5 (a few IPIs per run from outside the writer's mm; the model "
            "says 0, and two runs' spread is smaller still); from the profile alone, one process at 64K and 2M in "
            "512M is 78-173% slower than predicted in some runs (on the EPYC guest the same runs' fresh large "
            "folios landed on memory the host had taken back, which its warm-up removes; no profile of this VM "
            "measured its host) and 2M at two processes 18-35% faster")
    mechanism = SwapModel
    free = ()
    PROFILE = PROFILE

    def model(self, cpu_model: str | None = None) -> SwapModel:
        """The source's defaults with ``cpu_model`` the bundled profile (:attr:`Study.PROFILE`), or
        another preset or profile to compare with."""
        src = self._model_fields()
        if cpu_model:
            src["cpu_model"] = cpu_model
        return SwapModel(**src)

    def runs(self) -> pd.DataFrame:
        return model_rows(self.data())

    def verified(self, cpu_model: str | None = None) -> dict:
        """:func:`verify` with nothing fitted, every run predicted (cached per CPU model)."""
        cache = self.__dict__.setdefault("_verified", {})
        if cpu_model not in cache:
            # this VM's profile: with the study's fit (the profile and priors alone; in leave-one-source-out
            # the joint fit's shared costs, Study.fit); another CPU model: its priors alone
            fit = self.fit() if cpu_model is None else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (a band's dropped draws are counted in its table)
                cache[cpu_model] = verify(self.data(), None, model=self.model(cpu_model), n_samples=100, seed=3,
                                          level=self.level, fit=fit)
        return cache[cpu_model]

    def fit_rows(self) -> pd.DataFrame:
        """Every run's per-process throughput: nothing of the study is fitted to them (``free`` is
        empty), but as a member of the joint fit they say what this machine's shared costs are
        (its machine factor, the era's kernel-path costs) for the other studies on it."""
        r = self.runs()
        return r[r["metric"] == "usemem_throughput_kib_s"].reset_index(drop=True)

    def fitted_rows(self):
        return []

    def held_out(self) -> pd.DataFrame:
        t = self.verified()["table"].reset_index(drop=True)
        rows = t.rename(columns={"measured": "value"})
        config = [f"{m.split('_')[0]}, {kb}K, {p} proc, {mb:g}M, {c}" for m, kb, p, mb, c in
                  zip(t["metric"], t["folio_kb"], t["processes"], t["memcg_mb"], t["compressor"])]
        return self._held_out_frame(rows, config, t, stddev=t["sd"])

    def summary(self) -> pd.DataFrame:
        """Per CPU model (the profile, the profile without its IPI costs, the
        generic preset) and metric: median |error|, runs' means in band, median
        band width (relative)."""
        out = []
        for label, cpu in self.cpu_models():
            t = self.verified(cpu)["table"]
            t = t[~((t["metric"] == "tlb_shootdowns_per_swapped_page") & (t["processes"] == 1))]  # 0 by design
            for (met, procs), part in t.groupby(["metric", "processes"]):
                out.append({"cpu_model": label, "metric": met, "processes": procs,
                            "median_abs_error_pct": float(part["error_pct"].abs().median()),
                            "in_band": int(part["in_band"].sum()), "n": len(part),
                            "band_width_pct": float(100 * ((part["hi"] - part["lo"]) / part["best"]).median())})
        return pd.DataFrame(out)

    def cpu_models(self) -> list[tuple[str, str | None]]:
        """(label, cpu_model) the runs are predicted with in :meth:`summary`: None is this VM's
        profile."""
        return [("this VM's profile", None), ("profile, IPI costs at the default prior", self._profile_without_ipis()),
                ("generic-x86 preset", "generic-x86")]

    def _profile_without_ipis(self) -> str:
        """The bundled profile with its flush-IPI costs left out (a file in the user's cache)."""
        import tempfile
        from pathlib import Path

        from ..measure.profile import to_toml

        prof = load(self.profile_path())
        for k in [k for k in prof.costs if k.startswith("ipi_")]:
            del prof.costs[k]
        path = Path(tempfile.gettempdir()) / f"mmcost_{self.id}_no_ipi.toml"
        text = to_toml(prof)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        return str(path)

    def sections(self) -> list[Section]:
        cpu = as_cpu_model(load(self.profile_path()), self.PROFILE[1])
        lines = [f"{'measured cost':<28} {'value':>9} {'prior sd':>9}"]
        for name in ("irq_us", "ipi_send_us", "vm_exit_us", "core_write_gb_s", "fault_us_per_folio", "pte_us",
                     "compress_us_per_page@lzo-rle", "compression_ratio@lzo-rle", "compress_us_per_page@lz4",
                     "compression_ratio@lz4"):
            if name in cpu.measured:
                p = cpu.measured[name]
                lines.append(f"{name:<28} {p.value:>9.4g} {p.width:>9.3g}")
        s = self.summary()
        rows = [f"{'CPU model':<40} {'metric':<9} {'P':>1} {'|err|':>6} {'in band':>7} {'width':>6}"]
        for r in s.itertuples():
            short = "KiB/s" if r.metric.startswith("usemem") else "IPIs/pg"
            rows.append(f"{r.cpu_model:<40} {short:<9} {r.processes:>1} {r.median_abs_error_pct:>5.1f}% "
                        f"{r.in_band:>3}/{r.n:<3} {r.band_width_pct:>5.0f}%")
        rows.append("nothing fitted; |err|: median over configurations; width: the 90% band, relative")
        rows.append("IPIs/pg: no cost moves them, no band; in: within 1% or the runs' own interval")
        return [Section("This VM's costs, measured (mmcost measure machine)", "\n".join(lines)),
                Section("Its swap-out matrix predicted from them, nothing fitted", "\n".join(rows))]


study = Kvm618Machine()
