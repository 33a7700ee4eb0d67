"""TLB flushes of MADV_PAGEOUT on this project's KVM guest (6.18): who is flushed, how often, at what cost.

Mechanism: :class:`mmcost.tlb.TlbModel`'s reclaim path. ``reclaim_pages``
runs ``shrink_folio_list`` in the calling task (``sender_in_mm``); a folio
unmapped from a dirty PTE is flushed alone before ``pageout()``
(``try_to_unmap_flush_dirty``), clean ones once per batch; the flush
reaches the non-lazy CPUs running the mm (``should_flush_tlb``): the
helper's CPU when it spins, no one when it sleeps (lazy) or does not exist.

Held out (the structure, no parameter fitted): TLB shootdowns per folio for
all six configurations, each run with the share of the call the spinning
helper was on CPU 1 (``mm_cpus`` = 1 + that share: the rest of the time CPU
1 ran a kernel thread, lazily, and flushes skipped it).

Fitted: one VM exit (``vm_exit_us``), on the dirty runs only, to both the
target's time (the spinning helper's lost time: an exit to take the IPI,
then the handler) and the sender's (the call's extra time with a running
helper over a sleeping one: the PV-IPI hypercall, then the wait for the
target's exit, handler and flush). One number has to explain both sides;
the handler (``irq_us``) and the ICR bookkeeping stay at their priors.
Held out again: the clean runs' per-folio costs, with 1/30 as many IPIs
(within the timing noise of about 1 us per folio).
"""

from __future__ import annotations

import pandas as pd

from ..tlb import TlbModel
from ._study import Section, Study, repetition_sd

PER_FOLIO = ("tlb_shootdowns_per_folio", "ipi_receive_us_per_folio", "flush_ipi_sender_us_per_folio")


class Kvm618PageoutFlush(Study):
    id = "kvm_6_18_pageout_flush"
    miss = ("a flush IPI's VM exit is 1 us at its prior against about 6.5 us fitted here: a machine's cost, "
            'measured by mmcost measure machine (issue 34), not carried by any other source; its runs '
            '(6.18.44-fc-v1045, 2026-12-02) ran on another VM than the one profile (kvm_6_18_machine, '
            'fc-v1147, boot 1901ae91) measures, so that profile is not its measurement')
    mechanism = TlbModel
    free = ("vm_exit_us",)

    def model(self):
        # each flush IPI exits on its target too (no posted interrupt): one exit cost explains both sides
        return super().model().set(posted_interrupts=False)

    def per_folio_rows(self) -> pd.DataFrame:
        """Per run, derived from the measured counts and times: shootdowns on
        the helper's CPU per page; the spinning helper's lost time, less its
        time off CPU 1, per page;
        the call's time per page above the same PTEs' sleeping-helper median
        (the sender's IPIs and their wait: the sleeping helper's CPU is lazy,
        so that call sends none)."""
        d = self.data()
        pages = d["bytes_per_process"] / 4096
        keep = ["experiment", "variant", "cpus", "virtualized", "arch", "kernel", "run", "n_runs"]
        shoot = d[(d["metric"] == "tlb_shootdowns") & (d["cpu"] == 1)]
        rows = [shoot[keep].assign(metric=PER_FOLIO[0], unit="1/folio",
                                   value=shoot["value"] / pages[shoot.index])]
        t = d[d["metric"] == "pageout_time_us"]
        # the helper's lost loop time is its time off CPU 1 plus the IPIs' time on it; its CPU time says
        # how long it was off: (1 - on-CPU share) x the call's duration
        on = (d[d["metric"] == "helper_on_cpu_pct"].set_index("run")["value"] / 100.0).clip(0.0, 1.0)
        wall = t.set_index("run")["value"]
        lost = d[d["metric"] == "helper_lost_us"]
        handling = lost["value"] - (1.0 - lost["run"].map(on)) * lost["run"].map(wall)
        rows.append(lost[keep].assign(metric=PER_FOLIO[1], unit="us", value=handling / pages[lost.index]))
        for mode in ("dirty", "clean"):
            quiet = t[t["variant"] == f"{mode} PTEs, helper sleep"]["value"].median()
            busy = t[t["variant"] == f"{mode} PTEs, helper spin"]
            rows.append(busy[keep].assign(metric=PER_FOLIO[2], unit="us",
                                          value=(busy["value"] - quiet) / pages[busy.index]))
        out = pd.concat(rows, ignore_index=True)
        # CPU 1 runs the mm only while the helper is on it: a spinning helper's on-CPU share of the call
        on = d[d["metric"] == "helper_on_cpu_pct"].set_index("run")["value"]
        out["mm_cpus"] = 1.0 + (out["run"].map(on).fillna(0.0).astype(float) / 100.0).clip(0.0, 1.0)
        return out

    def fit_rows(self) -> pd.DataFrame:
        r = self.per_folio_rows()
        return r[(r["metric"] != PER_FOLIO[0]) & r["variant"].str.startswith("dirty")].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        """Shootdowns per folio in every configuration (from the priors' model:
        no cost enters a count), and the clean runs' per-folio IPI costs from
        the fitted per-IPI costs."""
        if getattr(self, "_held", None) is not None:
            return self._held.copy()
        r = self.per_folio_rows()
        r = r[(r["metric"] == PER_FOLIO[0]) | r["variant"].str.startswith("clean")]
        # one row per configuration: the medians of its 7 runs (value and the helper's on-CPU share)
        rows = (r.groupby(["variant", "metric"], sort=False)[["value", "mm_cpus"]].median().reset_index()
                .assign(experiment="pageout_flush", cpus=2, virtualized=True))
        pred = self.fit().predict(rows, level=self.level, n_samples=100, seed=3, fixed_priors=True)
        names = [f"{v} ({m.removesuffix('_per_folio')})" for v, m in zip(rows["variant"], rows["metric"])]
        self._held = self._held_out_frame(rows, names, pred, stddev=repetition_sd(r, ["variant", "metric"], rows))
        return self._held.copy()

    def prior_costs(self) -> dict:
        """The per-folio IPI costs of a dirty, spinning-helper run at the priors."""
        rows = pd.DataFrame({"metric": list(PER_FOLIO), "variant": "dirty PTEs, helper spin"})
        return dict(zip(PER_FOLIO, self.model().evaluate(rows)))

    def sections(self) -> list[Section]:
        held = self.held_out()
        lines = [f"{'configuration (median of 7 runs)':<52} {'measured':>9} {'model':>9}"]
        for x in held.itertuples():
            lines.append(f"{x.configuration[:52]:<52} {x.published:>9.4g} {x.predicted:>9.4g}")
        fit = self.fit()
        prior = self.prior_costs()
        p = fit.model
        text = (f"one VM exit in this guest: {p.costs.vm_exit_us:.1f} us (a flush IPI costs its target "
                f"{p.costs.irq_us + p.costs.vm_exit_us:.1f} us)\n"
                f"at the priors a dirty folio's IPI costs the target {prior[PER_FOLIO[1]]:.1f} us and the sender "
                f"{prior[PER_FOLIO[2]]:.1f} us")
        return [Section("MADV_PAGEOUT of 16384 pages: shootdowns and IPI costs per folio",
                        "\n".join(lines)),
                Section.of_fit("flush IPI costs fitted to the dirty runs", fit, text)]


study = Kvm618PageoutFlush()
