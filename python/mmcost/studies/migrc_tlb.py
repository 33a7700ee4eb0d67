"""Seed 001: migration TLB flushes on a tiered-memory KVM guest, before and after migrc.

Mechanism: :class:`mmcost.tlb.TlbModel` with the source's defaults
(``[model]``: 16 vCPUs, x86 guest, v6.9, 32-folio calls, 1 GiB fast node)
and the two kernels as flush policies (``batched`` before, migrc's
``deferred`` after). XSBench's 5.6 GiB working set cannot fit the fast node,
so pages cycle: NUMA-balancing promotions (PROT_NONE, no flush) and kswapd
demotions in calls of 32 folios.

What the counters identify: the demotion rate (shootdowns before), migrc's
flush rate after (the mean reuse time, once the other full-flush IPI rounds
are set by their prior), each perf flush event per full flush and its
background, each TLB stream's refill misses per full flush and steady-state
misses, and the useful work per CPU from the two runtimes. The primitive
costs stay at their priors, so the runtime *change* is predicted, not fitted.
Held out: that change, and the cover letter's rounded claims.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .. import datasets, plot, report
from ..model import Prior
from ..tlb import TlbModel, walk_ns
from ._study import Section, Study

#: XSBench "large" problem (the default of ``-s``): 355 nuclides x 11303 grid points
#: (XSBench io.c / GridInit.c; Tramm et al., PHYSOR 2014)
XSBENCH_NUCLIDES = 355
XSBENCH_GRIDPOINTS = 11303


def xsbench_footprint_mib(nuclides: int = XSBENCH_NUCLIDES, gridpoints: int = XSBENCH_GRIDPOINTS) -> float:
    """XSBench's unionized-grid memory: nuclide grids (6 doubles per point),
    the unionized energy grid (one double per point) and its index grid (one
    int per point per nuclide); what its 'Est. Memory Usage' line adds up."""
    points = nuclides * gridpoints
    return (points * 6 * 8 + points * 8 + points * nuclides * 4) / 2**20


_NUMA_SCAN = ("NUMA balancing defaults (Documentation/admin-guide/sysctl/kernel.rst: "
              "numa_balancing_scan_period_min_ms=1000, scan_size_mb=256): task_numa_work makes one "
              "change_prot_numa full-flush round per VMA range per scan, a few per second")
_ONE_MM_PER_CPU = ("16 XSBench threads on 16 CPUs: switch_mm_irqs_off (arch/x86/mm/tlb.c) only flushes when a "
                   "CPU switches to an mm whose PCID was recycled (TLB_NR_DYN_ASIDS = 6 per CPU); kernel threads "
                   "borrow the mm lazily, so almost no natural full flushes")

#: the study's starting values, bounds and priors of the fitted fields (the rest are TlbModel's)
SETTINGS = {
    "demotion_rate_per_s": dict(value=5e4, lower=0.5, upper=5e7),
    "reuse_mean_us": dict(value=5e3, lower=1.0, upper=1e8),
    "other_round_rate_per_s": dict(value=2.0, upper=200.0, prior=Prior(2.0, 2.0, _NUMA_SCAN)),
    "natural_flush_rate_per_s": dict(value=0.0, upper=1e5, prior=Prior(0.0, 5.0, _ONE_MM_PER_CPU)),
    "itlb_flush_count_per_full_flush": dict(value=1.5, lower=1.0, upper=2.0),
    "dtlb_thread_flush_count_per_full_flush": dict(value=2.0, upper=50.0),
    "dtlb_thread_flush_count_background_per_s": dict(value=1e3, upper=1e7),
    "stlb_any_flush_count_per_full_flush": dict(value=2.0, upper=50.0),
    "stlb_any_flush_count_background_per_s": dict(value=1e3, upper=1e7),
    "itlb_load_working_set_pages": dict(value=30.0, upper=128.0),
    "dtlb_store_working_set_pages": dict(value=10.0, upper=1536.0),
    "itlb_load_misses_per_work_s": dict(value=1e5, upper=1e10),
    "dtlb_load_misses_per_work_s": dict(value=1e6, upper=1e10),
    "dtlb_store_misses_per_work_s": dict(value=1e4, upper=1e10),
    "work_s": dict(value=900.0, lower=1.0, upper=1e6),
}

#: the reviewer's questions (and the seed's own machine), each with the assumption it rests on
SCENARIOS: dict[str, tuple[dict, str]] = {
    "seed 001 machine": ({}, "KVM guest, 16 vCPUs, 1 GiB fast + 99 GiB slow, 32-folio calls: as measured"),
    "bare metal": ({"virtualized": False}, "same rates; IPI and page-walk costs without the VM-exit and 2-D walk factors"),
    "1:4 of 100 GiB": ({"fast_mem_mb": 102400 / 5}, "20 GiB fast holds XSBench's working set: nothing left to promote"),
    "1:8 of 100 GiB": ({"fast_mem_mb": 102400 / 9}, "11.1 GiB fast holds XSBench's working set: nothing left to promote"),
    "1:4, working set = memory": ({"fast_mem_mb": "ws/5"}, "migrations scale with the slow-resident share of a uniformly accessed working set"),
    "1:8, working set = memory": ({"fast_mem_mb": "ws/9"}, "migrations scale with the slow-resident share of a uniformly accessed working set"),
    "8 CPUs": ({"cpus": 8}, "migration rate set per mm by the NUMA scanner, not per thread; every CPU runs the mm"),
    "32 CPUs": ({"cpus": 32}, "as 8 CPUs; the sender's wait for the slowest of N-1 acks is not modelled"),
    "64 CPUs": ({"cpus": 64}, "as 32 CPUs"),
    "512-folio calls": ({"batch_folios": 512}, "one flush per NR_MAX_BATCHED_MIGRATION (512) folios instead of SWAP_CLUSTER_MAX (32)"),
    "arm64, 16 CPUs": ({"cpu_model": "generic-arm64", "virtualized": False},
                       "bare metal, generic 3.0 GHz arm64 costs; broadcast TLBI per entry + one DSB per call, no IPI; "
                       "migrc's reuse flush = ASID flush of all CPUs; DVM-message cost on the other cores not modelled"),
    "arm64, 80 CPUs": ({"cpu_model": "ampere-altra", "virtualized": False, "cpus": 80},
                       "as arm64, 16 CPUs, on Ampere Altra (seed 000's machine)"),
}

#: what the prediction table reports per scenario: (column, metric, variant)
PREDICTED = (
    ("runtime change %", "runtime_s_change_pct", "after"),
    ("overhead before %", "tlb_overhead_pct", "before"),
    ("overhead after %", "tlb_overhead_pct", "after"),
    ("shootdowns/CPU/s before", "tlb_shootdowns_per_s", "before"),
    ("shootdowns/CPU/s after", "tlb_shootdowns_per_s", "after"),
)


#: the refill probe's rounds (mmcost-probe refill), in the kvm_6_18_machine source's folder
REFILL_FILE = "tlb_refill.csv"
#: cases whose every touched page refills after a flush (the hot set fits the STLB; with cache-evicting traffic)
REFILL_COUNTED = ("fits_stlb", "cold_traffic")


class MigrcTlb(Study):
    id = "migrc_tlb"
    mechanism = TlbModel
    free = tuple(SETTINGS)
    #: no stddev is published (one run each); the per-CPU spread of the before run's
    #: shootdowns (1.5% rms over 16 CPUs) stands in for run-to-run noise
    default_rel_error = 0.02

    def model(self):
        ws = xsbench_footprint_mib()
        m = super().model().set(working_set_mb=ws, dtlb_load_working_set_pages=ws * 256)  # the grids, looked up uniformly
        return replace(m, default_rel_error=self.default_rel_error).with_parameters(**SETTINGS)

    def fit_rows(self) -> pd.DataFrame:
        """Per-CPU shootdowns, the six perf counters and XSBench's runtime,
        before and after (the cover letter's rounded claims are checks, not data)."""
        df = self.data()
        keep = df["experiment"].isin(["xsbench_interrupts", "xsbench_perf_stat"]) | (
            (df["experiment"] == "xsbench_summary") & (df["metric"] == "runtime_s"))
        return df[keep & df["metric"].isin(self.model().METRICS)].reset_index(drop=True)

    def measured_runtime_change_pct(self) -> float:
        df = self.data()
        rt = df[(df["experiment"] == "xsbench_summary") & (df["metric"] == "runtime_s")].set_index("variant")["value"]
        return 100.0 * (float(rt["after"]) / float(rt["before"]) - 1.0)

    def held_out(self) -> pd.DataFrame:
        """The runtime change after vs before (the costs are priors; work_s is
        fitted to the two runtimes, their ratio is the prediction), and the
        cover letter's claimed changes of the counters."""
        df = self.data()
        claims = df[df["metric"].str.endswith("_change_pct") & df["metric"].str.removesuffix("_change_pct").isin(
            self.model().METRICS)].reset_index(drop=True)
        runtime = pd.DataFrame([{"metric": "runtime_s_change_pct", "variant": "after", "baseline": "before",
                                 "value": self.measured_runtime_change_pct()}])
        rows = pd.concat([runtime, claims[["metric", "variant", "baseline", "value"]]], ignore_index=True)
        pred = self.fit().predict(rows, level=self.level, n_samples=200, seed=1, fixed_priors=True)
        config = ["runtime (from the two runtimes)"] + [f"cover letter claim ({m})" for m in claims["metric"]]
        return self._held_out_frame(rows, config, pred)

    def scenario_rows(self, scenarios: dict | None = None) -> pd.DataFrame:
        """One row per (scenario, predicted quantity). ``fast_mem_mb`` given as
        ``"ws/k"`` means a fast node of working set / k."""
        ws = xsbench_footprint_mib()
        rows = []
        for name, (cfg, _) in (scenarios or SCENARIOS).items():
            cfg = dict(cfg)
            if isinstance(cfg.get("fast_mem_mb"), str):
                cfg["fast_mem_mb"] = ws / float(cfg["fast_mem_mb"].split("/")[1])
            for column, metric, variant in PREDICTED:
                rows.append({"scenario": name, "column": column, "metric": metric, "variant": variant,
                             "baseline": "before" if metric.endswith("_change_pct") else None, **cfg})
        return pd.DataFrame(rows)

    def prediction_table(self, scenarios: dict | None = None, *, n_samples: int = 300, seed: int = 1) -> pd.DataFrame:
        """Each scenario's predictions as 'best [lo, hi]' (90% band over the
        fit's covariance and the cost priors), with the assumption it rests on."""
        scenarios = scenarios or SCENARIOS
        pred = self.fit().predict(self.scenario_rows(scenarios), n_samples=n_samples, seed=seed, fixed_priors=True)
        pred["text"] = [f"{b:.3g} [{lo:.3g}, {hi:.3g}]" for b, lo, hi in zip(pred["best"], pred["lo"], pred["hi"])]
        table = pred.pivot(index="scenario", columns="column", values="text").reindex(list(scenarios))
        table = table[[c for c, _, _ in PREDICTED]]
        table["assumption"] = [scenarios[s][1] for s in table.index]
        return table

    def missing_mechanism(self) -> dict:
        """The gap between the predicted and the measured runtime change, as
        evidence: the measured user and system time saved per avoided
        shootdown, the model's price of one, and the refill misses the
        counters show per avoided shootdown with the per-miss cost that
        would close the gap. All computed from the seed's numbers and the fit."""
        d = self.data()

        def total(experiment, metric, variant):
            sel = (d["experiment"] == experiment) & (d["metric"] == metric) & (d["variant"] == variant)
            return float(d[sel]["value"].sum())

        shoot = {v: total("xsbench_interrupts", "tlb_shootdowns", v) for v in ("before", "after")}
        avoided = shoot["before"] - shoot["after"]
        user = total("xsbench_time", "user_time_s", "before") - total("xsbench_time", "user_time_s", "after")
        sys_ = total("xsbench_time", "sys_time_s", "before") - total("xsbench_time", "sys_time_s", "after")
        misses = sum(total("xsbench_perf_stat", f"{s}_miss_count", "before")
                     - total("xsbench_perf_stat", f"{s}_miss_count", "after")
                     for s in ("itlb_load", "dtlb_load", "dtlb_store"))
        model = self.fit().model
        rows = pd.DataFrame([{"metric": m, "variant": v} for v in ("before", "after")
                             for m in ("tlb_overhead_pct", "tlb_shootdowns_per_s")])
        o_b, s_b, o_a, s_a = model.evaluate(rows)
        priced_us = (o_b - o_a) / 100 / (s_b - s_a) * 1e6
        costs = model.costs
        walk = walk_ns(costs, model.virtualized)
        return {"avoided_shootdowns": avoided, "user_s_saved": user, "sys_s_saved": sys_,
                "measured_us_per_avoided_shootdown": (user + sys_) / avoided * 1e6,
                "model_us_per_avoided_shootdown": priced_us, "misses_per_avoided_shootdown": misses / avoided,
                "needed_ns_per_miss": (user + sys_) / misses * 1e9, "model_walk_ns": walk}

    def refill_measurements(self) -> pd.DataFrame:
        """The refill probe's rounds on this project's KVM guest
        (``data/kvm_6_18_machine/tlb_refill.csv``, ``mmcost-probe refill``),
        one row per configuration: the extra time per full flush (median
        and range over the rounds), the hot pages it refilled, ns per hot
        page where every touched hot page refills (``fits_stlb``: the hot
        set fits the STLB; ``cold_traffic``: the same with a dependent load
        from a 2 GiB THP buffer after each hot load, the cold pages' own
        refills counted as none, so an upper bound per hot page), and the
        chase's time per load without a flush. ``beyond_stlb`` and ``thp``
        miss the STLB in their steady state already: a flush adds only the
        C^2 / 2W extra misses of :func:`mmcost.tlb.refill_misses`, no count
        to divide by. ``evicted``: a 64 MiB sweep before every interval
        drops the hot translations too (its no-flush intervals walk: 4K
        chase slower than 2M), so a flush has nothing left to add."""
        raw = pd.read_csv(datasets.path("kvm_6_18_machine") / REFILL_FILE)
        keys = ["case", "bytes", "stride", "cold_bytes", "evict_bytes", "huge", "flush_every"]
        rows = []
        for cfg, g in raw.groupby(keys, sort=False):  # (in the file's order)
            pages = g["hot_pages_touched"]  # a cold page's translation is not counted as a refill (see the doc)
            per = g["refill_us_per_flush"] * 1e3 / pages
            counted = cfg[0] in REFILL_COUNTED
            rows.append({**dict(zip(keys, cfg)), "rounds": len(g), "hot_pages_refilled": float(pages.median()),
                         "us_per_flush": float(g["refill_us_per_flush"].median()),
                         "us_per_flush_min": float(g["refill_us_per_flush"].min()),
                         "us_per_flush_max": float(g["refill_us_per_flush"].max()),
                         "ns_per_refill": float(per.median()) if counted else float("nan"),
                         "ns_per_refill_min": float(per.min()) if counted else float("nan"),
                         "ns_per_refill_max": float(per.max()) if counted else float("nan"),
                         "base_ns_per_load": float(g["base_ns_per_load"].median())})
        return pd.DataFrame(rows)

    def refill_prediction(self) -> dict:
        """Seed 001's runtime change with the refill walk as measured on
        this project's KVM guest (every walk the model charges at
        ``refill_ns``), against the published -5.7%: at the measured refill
        after a full flush (median over the fits-the-STLB rounds), at an
        upper bound of any walk this guest showed (a whole dependent load of
        the 4K chase over 1 GiB: a steady-state STLB miss, its walk and a
        data access that misses the caches; the walk alone, that less the
        same chase on 2M pages, is ``steady_walk_ns_1gib``), and the refill
        cost the model would need for -5.7%."""
        from scipy.optimize import brentq

        m = self.measured_runtime_change_pct()
        tab = self.refill_measurements()
        fits = tab[tab["case"] == "fits_stlb"]
        raw = pd.read_csv(datasets.path("kvm_6_18_machine") / REFILL_FILE)
        fit_rounds = raw[raw["case"] == "fits_stlb"]
        per = fit_rounds["refill_us_per_flush"] * 1e3 / fit_rounds["hot_pages_touched"]
        big = tab[(tab["case"].isin(["beyond_stlb", "thp"])) & (tab["bytes"] == 1 << 30) & (tab["stride"] == 1)]
        load = float(big[big["huge"] == 0]["base_ns_per_load"].iloc[0])
        steady = load - float(big[big["huge"] == 1]["base_ns_per_load"].iloc[0])
        model = self.fit().model
        row = pd.DataFrame([{"metric": "runtime_s_change_pct", "variant": "after", "baseline": "before"}])

        def change(ns: float) -> float:
            return float(model.set(refill_ns=float(ns)).evaluate(row)[0])

        measured = float(per.median())
        return {"measured_refill_ns": measured, "refill_ns_lo": float(fits["ns_per_refill"].min()),
                "refill_ns_hi": float(fits["ns_per_refill"].max()), "steady_walk_ns_1gib": steady,
                "load_ns_1gib": load,
                "preset_walk_ns": walk_ns(model.costs, model.virtualized),
                "change_at_preset_pct": change(walk_ns(model.costs, model.virtualized)),
                "change_at_measured_pct": change(measured), "change_at_load_bound_pct": change(load),
                "published_pct": m, "needed_refill_ns": float(brentq(lambda ns: change(ns) - m, 1.0, 1e5, xtol=1e-3))}

    def per_folio_counterfactual(self, *, n_samples: int = 200, seed: int = 1) -> pd.DataFrame:
        """What the same demotions would cost without batching (a flush per
        PTE, ``ptep_clear_flush``: migration before v6.3), against the
        measured 'before' kernel: best and 90% band over the fit and the cost
        priors. kswapd's load (``migrator_busy_pct``) says whether it could
        still keep up."""
        rows = pd.DataFrame([
            {"quantity": "runtime change vs batched %", "metric": "runtime_s_change_pct", "variant": "per-folio",
             "baseline": "before"},
            {"quantity": "shootdowns/CPU/s", "metric": "tlb_shootdowns_per_s", "variant": "per-folio"},
            {"quantity": "TLB overhead %", "metric": "tlb_overhead_pct", "variant": "per-folio"},
            {"quantity": "kswapd busy % (batched)", "metric": "migrator_busy_pct", "variant": "before"},
            {"quantity": "kswapd busy % (per-folio)", "metric": "migrator_busy_pct", "variant": "per-folio"},
        ])
        pred = self.fit().predict(rows, level=0.9, n_samples=n_samples, seed=seed, fixed_priors=True)
        return pred[["quantity", "metric", "variant", "best", "lo", "hi"]]

    def sections(self) -> list[Section]:
        df = self.data()
        counters = df[df["experiment"].isin(["xsbench_perf_stat", "xsbench_summary", "xsbench_time"])]
        shoot = df[df["experiment"] == "xsbench_interrupts"]
        total = shoot.groupby("variant", as_index=False)["value"].sum().assign(
            metric="tlb_shootdowns", source_name="TLB shootdowns (16 CPUs)")
        rows = report.compare(pd.concat([counters, total], ignore_index=True), "before", "after")
        fig = plot.spread(shoot, "tlb_shootdowns", ["before", "after"], over="cpu",
                          title="XSBench, 16-vCPU KVM guest, v6.9-rc4, tiering + demotion: without and with migrc")
        fit = self.fit()
        res = fit.residuals
        res = res.assign(metric=res["metric"].where(res["metric"] != "tlb_shootdowns", "tlb_shootdowns (per CPU)"))
        agg = res.groupby(["variant", "metric"], sort=False)[["measured", "predicted"]].mean().reset_index()
        lines = [f"{'variant':<7} {'metric':<32} {'measured':>11} {'model':>11} {'error':>8}"]
        for r in agg.itertuples():
            lines.append(f"{r.variant:<7} {r.metric:<32} {r.measured:>11.5g} {r.predicted:>11.5g} "
                         f"{100 * (r.predicted / r.measured - 1):>+7.2f}%")
        held = self.held_out()
        lines += ["", "held out (change %)                          published  predicted [90% band]"]
        for r in held.itertuples():
            what = r.configuration.replace("cover letter claim (", "cover letter: ").removesuffix("_change_pct)")
            lines.append(f"  {what[:42]:<42} {r.published:>+9.1f}  {r.predicted:>+9.1f} "
                         f"[{r.lo:+.0f}, {r.hi:+.0f}]")
        table = self.prediction_table(n_samples=200)
        pred = "\n".join(f"{s:<26} runtime {t['runtime change %']}%" for s, t in table.iterrows())
        pred += "\n\nassumptions:\n" + "\n".join(report.wrap(f"  {s:<26} {a}", indent=" " * 27)
                                                  for s, a in table["assumption"].items())
        ws = xsbench_footprint_mib()
        band = plot.scaling(fit, "fast_mem_mb", "runtime_s_change_pct", xs=np.linspace(0.02, 1.2, 25) * ws,
                            configs={"variant": "after", "baseline": "before"}, n_samples=100, fixed_priors=True,
                            measured=pd.DataFrame({"fast_mem_mb": [1024.0], "value": [self.measured_runtime_change_pct()]}),
                            xlabel="fast-tier memory [MiB]", ylabel="XSBench runtime change with migrc [%]",
                            title=f"migrc's runtime change vs fast memory (XSBench's {ws / 1024:.1f} GiB), "
                                  "16-vCPU KVM guest, v6.9-rc4")
        cf = self.per_folio_counterfactual()
        cf_text = "\n".join(f"{r.quantity:<28} {r.best:>10.4g} [{r.lo:.4g}, {r.hi:.4g}]" for r in cf.itertuples())
        gap = self.missing_mechanism()
        gap_text = "\n".join([
            f"shootdowns avoided (all CPUs)      {gap['avoided_shootdowns']:>12,.0f}",
            f"user / system time saved           {gap['user_s_saved']:>9.0f} s / {gap['sys_s_saved']:.0f} s",
            f"measured CPU time per avoided one  {gap['measured_us_per_avoided_shootdown']:>9.1f} us",
            f"the model's price of one           {gap['model_us_per_avoided_shootdown']:>9.1f} us",
            f"TLB misses saved per avoided one   {gap['misses_per_avoided_shootdown']:>9.0f}",
            f"cost per miss that would close it  {gap['needed_ns_per_miss']:>9.0f} ns "
            f"(the model's 2-D walk: {gap['model_walk_ns']:.0f} ns)",
            "missing: not the refill walk (measured on a KVM guest below: it is cheaper",
            "than the model's); demotion's feedback on where XSBench's pages live, or",
            "the seed host's own walk, are not modelled (see the README)."])
        rp = self.refill_prediction()
        tab = self.refill_measurements()

        def size(b):
            return f"{b / 2**30:g} GiB" if b >= 2**30 else f"{b / 2**20:g} MiB" if b >= 2**20 else f"{b / 1024:g} KiB"

        refill_lines = [f"{'case':<12} {'hot set':>11} {'us/flush [range]':>21} {'ns/refill [range]':>21} "
                        f"{'ns/load':>7}"]
        for r in tab.itertuples():
            hot = size(r.bytes) + (f" /{r.stride}" if r.stride > 1 else "") + (" 2M" if r.huge else "")
            per = (f"{r.ns_per_refill:.1f} [{r.ns_per_refill_min:.1f},{r.ns_per_refill_max:.1f}]"
                   if np.isfinite(r.ns_per_refill) else "")
            us = f"{r.us_per_flush:.2f} [{r.us_per_flush_min:.1f}, {r.us_per_flush_max:.1f}]"
            refill_lines.append(f"{r.case:<12} {hot:>11} {us:>21} {per:>21} {r.base_ns_per_load:7.1f}")
        refill_lines += [
            "",
            f"a refill after a full flush (fits_stlb rounds)     {rp['measured_refill_ns']:6.1f} ns per 4K page",
            f"  (the configurations' medians {rp['refill_ns_lo']:.1f}-{rp['refill_ns_hi']:.1f} ns)",
            f"a steady-state walk, 1 GiB random (4K less 2M)    {rp['steady_walk_ns_1gib']:6.1f} ns per load",
            f"a whole load of that chase (bounds any walk)       {rp['load_ns_1gib']:6.1f} ns",
            f"the model's 2-D walk (walk_ns x nested factor)     {rp['preset_walk_ns']:6.1f} ns",
            "",
            f"seed 001 runtime change, published                 {rp['published_pct']:+6.2f}%",
            f"  predicted, the model's 2-D walk                  {rp['change_at_preset_pct']:+6.2f}%",
            f"  predicted, the measured refill                   {rp['change_at_measured_pct']:+6.2f}%",
            f"  predicted, every walk at the bound               {rp['change_at_load_bound_pct']:+6.2f}%",
            f"  refill cost the model needs for the published    {rp['needed_refill_ns']:6.0f} ns",
            "",
            *report.wrap(
                "Refuted on this kernel: a TLB refill after a full flush in a KVM guest (EPT) costs about "
                f"{rp['measured_refill_ns']:.0f} ns per 4K page ({rp['refill_ns_lo']:.0f}-{rp['refill_ns_hi']:.0f} "
                "over hot sets of 512-1,536 pages, packed or one page-table page each), not several DRAM latencies; "
                "with a dependent load from a 2 GiB buffer between hot loads (cold_traffic) a hot page's refill is "
                "still tens of ns. A chase over 64 MiB-1 GiB misses the STLB anyway, and a flush adds nothing "
                "measurable to it (medians within 0.5 us per flush). Even if every walk the model charges cost a whole "
                f"load of the 1 GiB chase ({rp['load_ns_1gib']:.0f} ns, walk and DRAM access together), migrc's "
                f"change would be {rp['change_at_load_bound_pct']:+.1f}%, not {rp['published_pct']:+.1f}%: that "
                f"needs {rp['needed_refill_ns']:.0f} ns per walk. The missing 44 us per avoided shootdown is not the "
                "refill walk of this kind of guest; left untested: demotion's feedback on where XSBench's pages "
                "live, and the seed's host (its EPT page size and caches).").splitlines()]
        return [Section("XSBench in a KVM guest, before/after migrc", report.lkp_block(rows, "before", "after"), fig,
                        "migrc_tlb_shootdowns.png"),
                Section.of_fit("TLB model (mmcost.tlb.TlbModel), fit", fit),
                Section("TLB model: measured vs fitted (per-CPU shootdowns as their mean)", "\n".join(lines)),
                Section("TLB model: predictions (best [90% band]), each with its assumption", pred, band,
                        "migrc_tlb_fast_memory.png"),
                Section("counterfactual: the same demotions flushed per folio (best [90% band])", cf_text),
                Section("what the model still misses, with its evidence", gap_text),
                Section("the refill walk measured on a KVM guest, Linux 6.18 (tlb_refill.csv)",
                        "\n".join(refill_lines))]


study = MigrcTlb()
