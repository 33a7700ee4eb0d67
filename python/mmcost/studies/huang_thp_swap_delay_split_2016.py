"""Huang Ying's "THP swap: Delay splitting THP during swapping out" (RFC, August 2016).

Mechanism: :class:`mmcost.swap.SwapModel` with seed 004's fit
(:mod:`.swapcache_wb_tags`: per-folio reclaim, swap cache and writeback-tag
holds, same author, benchmark and machine class), nothing fitted here: the
base kernel of vm-scalability swap-w-seq with 16 processes writing 2M THPs
to PMEM, on the v4.8-era mmotm the series is based on (a THP is split
before ``add_to_swap``; radix-tree writeback tags still on). The swap-out
rate is LKP's ``vmstat.swap.so``, averaged over the whole job with the
processes' exit (``rate_window = "lkp_job"``,
:meth:`mmcost.swap.SwapModel.rate_window_s`), and the swapped share the base
kernel's swap-out / throughput ratio over those windows
(:meth:`~mmcost.swap.SwapModel.lkp_swapped_share`, seed 004's costs on this
kernel: 0.640 for the ratio 0.455), as in seed 004.

The series (merged as 38d8b4e6bdc8, v4.13) is the kernel switch
``thp_swap_delay_split`` (:func:`mmcost.swap.paths.delay_split`): the THP
gets a whole swap cluster (one ``si->lock`` hold) and enters the swap cache
whole (512 inserts under one ``tree_lock`` hold, each after
``set_page_private`` of its subpage: the THP's cold tail ``struct page``
lines, which the base kernel's split touches first outside any shared lock,
are now first touched under the tree lock, ``cold_line_us`` each),
``add_to_swap`` runs once, then the THP is split and its pages are
unmapped, written and removed one by one as before. The patched kernel is
``<base>+thp_swap_delay_split``, predicted with seed 004's costs, nothing
fitted to it.

=======================================  ====  ========================================
rows                                      n    how
=======================================  ====  ========================================
base swap-out rate (vmstat.swap.so)        1   fitted: the swapped share's input
base throughput, __add_to_swap_cache       2   predicted from seed 004's fit
  spinning share
base+patchset throughput, swap-out,        6   predicted (values and changes): the
  __add_to_swap_cache spinning share             delay-split path on the same costs
elapsed-time change                        1   predicted: write loop and exit (the
                                               bytes cancel)
elapsed time (2)                           2   not expressible: the bytes written
                                               (RAM and swap size) are not stated
SwapCached, IPC (6)                        6   not expressible: no such output
=======================================  ====  ========================================

The THP setting is not in the letter but in the author's LKP job of the
time (``thp_setting`` in source.toml: intel/lkp-tests
``jobs/vm-scalability-swap.yaml`` from df740b70ce0e, 2016-07-07, to
254b52acdabc, 2017-04-12): ``enabled`` always or never, ``defrag`` never,
16 tasks among its counts. With ``defrag=never`` v4.8's
``alloc_hugepage_direct_gfpmask`` gives ``GFP_TRANSHUGE_LIGHT``: a THP fault
neither reclaims nor compacts nor wakes kswapd, and falls back to 4K pages
where no free 2M block is at hand
(:meth:`mmcost.swap.SwapModel.large_fault_may_reclaim`). So the faults that
fill memory before reclaim starts get THPs (a share 1 - s = 0.36 of what is
written, s the swapped share), those after it a share
``pressure_large_share`` that no mechanism here decides (a flat prior's
mean and sd, 1/2 and 0.29, clipped to [0, 1]:
:data:`mmcost.swap.model.PRESSURE_SHARE_PRIOR`), and reclaim takes the oldest first, the fill's THPs
(:meth:`mmcost.swap.SwapModel.swapped_large_share`): 68% of the written and
78% of the swapped pages are THPs at the prediction, 56% of the swapped with
every later fault 4K. (Before the LKP job was read, every fault was taken
for a THP: +20.8% for +10.6%, the insert's spinning -99.7%.)

Predicted (seed 004's costs, 16 writers, nothing fitted here): the delay
split's throughput gain +15.9% [+7, +25] for +10.6%, swap-out +10.8% [+3,
+19] for +12.1%, the job's time -9.7% [-17, -2] for -7.9%. Known misses:
the base throughput 7.4% high (2.64 GB/s for 2.46, stddev 1%), the base's
insert-site spinning 17.0% of the cycles for 9.82% (seed 004, 8 writers on
v4.7, spun 10.86% there: the model's spinning grows with the writers on a
saturated lock, the published one does not), and its fall with the patch,
-67% [-100, -42] for -31.6%. The model's tree lock is the bottleneck in
both kernels (utilisation 0.99): for each THP the delay split takes the
insert's per-folio part and lines off every page but one and adds the
tail lines' first touch (0.1 us each at the prior), and the slot
allocation off ``si->lock`` (utilisation 0.68 -> 0.43).

The profile checks the THP share. The delay split takes the tree lock
once a THP at ``__add_to_swap_cache`` ("[RFC 08/11] mm, THP, swap: Support
to add/delete THP to/from swap cache": one ``spin_lock_irq`` around the
512 ``radix_tree_insert`` calls) and 512 times at each other site; a
queued spinlock's waiter waits for the holds ahead of it, not its own, so
the site's spinning follows its acquisitions (:attr:`mmcost.locks.Critical.count`)
and comes from the 4K pages: with every page a THP it all but vanishes
(-99.7%). The published one falls by a third, 9.82% -> 6.72%: the model's
with 48% of the pages THPs, written and swapped alike (40-54% over the two
values' stddevs: :meth:`HuangThpSwapDelaySplit2016.spin_change_range_pct`),
where the gain is +9.4%, swap-out +6.5% and the time -6.1%
(:meth:`HuangThpSwapDelaySplit2016.thp_share_from_profile`); the fill's
THPs alone (:meth:`HuangThpSwapDelaySplit2016.at_fill_floor`, 56% of the
swapped pages) give -40.7%, +11.2%, +7.7% and -7.2%. A third row agrees:
``meminfo.SwapCached`` rises 3807 KiB with the patch, the THP tails in
flight (a THP enters the swap cache whole and leaves it a subpage at a
time, each ~30 us of the loop, mostly tree-lock waiting): 4524 KiB at 48%,
5519 at 56%, 11451 with every page a THP
(:meth:`HuangThpSwapDelaySplit2016.swap_cached_rise_kib`). Checks between
the thread's rows, not predictions: together they say nearly every fault
after the fill fell back to 4K, which ``defrag=never`` allows and the
prediction's prior does not assume. (The RFC's
``add_to_swap_trans_huge`` also hands a THP without a free swap cluster
back to the split-first path; with the device a third empty at the end,
not modelled.) The v8 thread's profile (the whole ``add_to_swap`` chain)
gives no such check.

Before the spinning was counted per acquisition, the gain was the same:
the throughput depends on the lock's demand, not how it is cut into
acquisitions. With every page a THP: +27.1% before the tail lines were
counted, +27.2% while the model split the THP with 1024 flush rounds
instead of the kernel's 2 (:func:`mmcost.swap.paths.split_pmd_thp`), which
the tree lock's bound leaves without effect here.

The windows hold: the exit (16 processes freeing one swap entry at a time
under ``si->lock``) is 0.41 of the base loop and does not change with the
patch: the series splits the THP right after ``add_to_swap`` ("[RFC 10/11]
mm, THP, swap: Support to split THP in swap cache" keeps each subpage in
the swap cache with its own entry), its pages are unmapped to 4K swap PTEs
one by one as before, so ``exit_mmap`` -> ``zap_pte_range`` frees 512
entries a THP (``free_swap_and_cache``) in both kernels; no cluster is
freed whole. So the swap-out rate and the job's time follow the
throughput's gain; at the published throughput gain the same windows give
+7.3% and -6.8% (published +12.1% and -7.9%).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from .. import report
from ..fit import FitResult
from ..model import Prior
from ..swap import SwapModel, site_of
from ..swap.model import PRESSURE_SHARE_PRIOR
from ._study import Section, Study
from . import swapcache_wb_tags

#: the share of faults still THPs while reclaim runs (SwapModel.pressure_large_share), by the run's
#: transparent_hugepage/defrag (source.toml's thp_setting: the author's LKP job of the time)
PRESSURE_PRIORS = {
    "never": PRESSURE_SHARE_PRIOR,
    "always": Prior(
        1.0, 0.5, "defrag=always: an unadvised VMA's THP fault gets GFP_TRANSHUGE | __GFP_NORETRY (v4.8 on, "
        "alloc_hugepage_direct_gfpmask): it compacts (failing at once where compaction is deferred) and reclaims "
        "once, and falls back if that frees no 2M block, so most faults get a THP and some do not, by a share no "
        "thread gives. Clipped to [0, 1]: half the draws all THPs"),
}
_NO_OUTPUT = "no such output: SwapModel predicts no IPC, cache-miss rate or SwapCached size"
_NO_SIZE = ("the bytes written are not stated (swap-w-seq fills RAM and part of swap; memory size unknown): "
            "the time's change is predicted, the bytes cancel in it")
_CHILDREN = ("a perf children share of the whole add_to_swap call chain: SwapModel's cycles_share_pct is the "
             "spinlock slow path of one call site")


class HuangThpSwapDelaySplit2016(Study):
    id = "huang_thp_swap_delay_split_2016"
    miss = ("the base 7.4% fast and its insert-site spinning 17.0% for 9.82%; the delay split's gain +15.9% for "
            "+10.6% (within 10 points) with half the faults after memory filled taken for THPs (defrag=never, the "
            "author's LKP job), its insert's spinning -67% for -31.6%: the thread's rows agree on nearly every "
            "later fault 4K (+11.2%, -40.7%)")
    mechanism = SwapModel
    free = ()
    #: the kernel the series is based on (mmcost.kernel selects the switches)
    kernel = "4.8"
    #: the series on the base kernel (mmcost.kernel: the delay-split path's switch)
    PATCH = "+thp_swap_delay_split"
    _NO_OUTPUT_METRICS = ("instructions_per_cycle", "swap_cached_kib", "cache_miss_rate_pct")
    NOT_EXPRESSIBLE = (
        ({"metric": _NO_OUTPUT_METRICS + tuple(f"{m}_change_pct" for m in _NO_OUTPUT_METRICS)}, _NO_OUTPUT),
        ({"metric": ("real_time_s",)}, _NO_SIZE),
        ({"metric": ("cycles_share_pct", "cycles_share_pct_change_pct"), "call_site": "add_to_swap.shrink_page_list"},
         _CHILDREN),
    )

    def base(self) -> pd.DataFrame:
        df = self.data()
        return df[(df["variant"] == "base") & df["metric"].isin(SwapModel.METRICS)].reset_index(drop=True)

    def swapout_ratio(self) -> float:
        """The base kernel's published swap-out rate / write throughput (LKP's windows)."""
        v = self.base().set_index("metric")["value"]
        return float(v["swapout_kib_s"]) / float(v["vm_scalability_throughput_kib_s"])

    def swapped_share(self) -> float:
        """The share of written bytes swapped: the base kernel's ratio over LKP's windows
        (:meth:`mmcost.swap.SwapModel.lkp_swapped_share`) with seed 004's costs on this kernel."""
        if self.__dict__.get("_share") is None:
            seed = swapcache_wb_tags.study.fit().model
            fields = dict(self.source().get("model", {}))
            base = seed.set(kernel=self.kernel, **fields).configure(**swapcache_wb_tags._config(self.base()))
            self._share = base.lkp_swapped_share(self.swapout_ratio())
        return self._share

    def fit(self) -> FitResult:
        """Seed 004's fit on this source's kernel, window and swapped share (nothing is fitted to this source)."""
        if self._fit is None:
            seed = swapcache_wb_tags.study.fit()
            fields = dict(self.source().get("model", {}))
            prior = PRESSURE_PRIORS[fields["thp_defrag"]]
            model = replace(seed.model.set(kernel=self.kernel, swapped_share=self.swapped_share(), large_share=None,
                                           pressure_large_share=prior.value, **fields),
                            variants={"base": {}, "base+patchset": {"kernel": self.kernel + self.PATCH}})
            model = model.with_parameters(pressure_large_share=dict(prior=prior))
            self._fit = replace(seed, model=model)
        return self._fit

    def fitted_rows(self):
        b = self.base()
        return [(b[b["metric"] == "swapout_kib_s"], "the swapped share's input (swap-out / throughput)")]

    def predicted_rows(self) -> pd.DataFrame:
        """The base kernel's throughput and spinning share; the patched kernel's throughput, swap-out and
        spinning share, as values and as changes from the base."""
        df = self.data()
        metric = df["metric"].str.removesuffix("_change_pct")
        site = ~df["call_site"].astype(str).str.startswith("add_to_swap.")
        keep = ((df["variant"] == "base") & (metric.isin(["vm_scalability_throughput_kib_s"])
                                             | ((metric == "cycles_share_pct") & site)))
        keep |= (df["variant"] == "base+patchset") & (
            metric.isin(["vm_scalability_throughput_kib_s", "swapout_kib_s"]) | ((metric == "cycles_share_pct") & site)
            | (df["metric"] == "real_time_s_change_pct"))  # the job's time: loop and exit, bytes cancel
        return df[keep].reset_index(drop=True)

    def held_out(self) -> pd.DataFrame:
        rows = self.predicted_rows()
        pred = self.fit().predict(rows, level=self.level, n_samples=60, seed=6, fixed_priors=True)
        config = [v + (f", {site_of(c)}" if isinstance(c, str) else "") for v, c in zip(rows["variant"],
                                                                                          rows["call_site"])]
        return self._held_out_frame(rows, config, pred)

    def changes(self, **fields) -> dict[str, float]:
        """The patched kernel's changes in % from the base (``spin``: the ``__add_to_swap_cache`` spinning share;
        ``throughput``, ``swapout``, ``time``) and the swapped pages' THP share (``thp_share``), with ``fields``
        set on the configured model (:meth:`_configured`)."""
        k = self._configured(**fields)
        base, patched = (k.configure(variant=v).solve() for v in ("base", "base+patchset"))
        spin = [r.details["locks"].site_values["__add_to_swap_cache"]["spin_share_pct"] for r in (base, patched)]
        return {"thp_share": float(k.swapped_large_share()), "spin": 100 * (spin[1] / spin[0] - 1),
                **{key: 100 * (patched[col] / base[col] - 1) for key, col in (
                    ("throughput", "vm_scalability_throughput_kib_s"), ("swapout", "swapout_kib_s"),
                    ("time", "real_time_s"))}}

    def at_fill_floor(self) -> dict[str, float]:
        """:meth:`changes` with every fault after memory first filled a 4K one (``pressure_large_share`` = 0):
        the fewest THPs among the swapped pages the model allows with ``defrag=never``, the fill's THPs
        alone (a share (1 - s) / s of the swapped pages, s the swapped share)."""
        return self.changes(pressure_large_share=0.0)

    def thp_share_from_profile(self, spin_change_pct: float | None = None) -> dict[str, float]:
        """The THP share of the pages, written and swapped alike (``large_share``; the rest 4K folios, swapped
        a page at a time by both kernels), at which the model's ``__add_to_swap_cache`` spinning changes with
        the patch as ``spin_change_pct`` (default: the published -31.6%), and :meth:`changes` there.
        A consistency check between the thread's own rows, not a prediction (the prediction orders the
        pages: the fill's THPs are swapped first, :meth:`mmcost.swap.SwapModel.swapped_large_share`). The
        delay split takes the lock once a THP at that site (:attr:`mmcost.locks.Critical.count`), so with
        every page a THP the site's spinning all but vanishes (-99.7%), where the published one falls by a
        third."""
        from scipy.optimize import brentq

        if spin_change_pct is None:
            rows = self._insert_spin_change()
            if rows.empty:
                raise ValueError(f"{self.id}: no published spin change at __add_to_swap_cache to check against")
            spin_change_pct = float(rows["value"].iloc[0])

        def changes(share):
            return self.changes(thp_defrag=None, large_share=share)

        lo, hi = (changes(x)["spin"] for x in (0.05, 1.0))  # (the spinning falls as the THP share grows)
        if not min(lo, hi) <= spin_change_pct <= max(lo, hi):
            raise ValueError(f"spin_change_pct: {spin_change_pct:+.1f}% is outside what a THP share of 5-100% "
                             f"gives ({hi:+.1f}% to {lo:+.1f}%)")
        share = brentq(lambda x: changes(x)["spin"] - spin_change_pct, 0.05, 1.0, xtol=1e-4)
        return changes(share)

    def swap_cached_rise_kib(self, thp_share: float) -> float:
        """The rise of LKP's ``meminfo.SwapCached`` (its mean over the job) that the delay split brings at a
        THP share ``thp_share``: a THP enters the swap cache whole and leaves it a subpage at a time as the
        reclaimer's loop reaches each (``__remove_mapping`` after its ``pageout``), so its i-th subpage
        stays i subpage-times longer than split first, 255.5 on average (Little's law: the mean extra
        pages = the rate of THP pages swapped x that extra time; the job-averaged swap-out rate over
        the job's time is the pages swapped). A subpage's time: the split path's reclaim CPU a page
        (less the split's), the tree lock at its two writeback-tag sites and ``__remove_mapping`` (hold
        and the lock's mean wait per acquisition, three acquisitions), ``si->lock`` at its three
        ``swap_map`` sites likewise. A check against the thread's SwapCached row, not a prediction."""
        from ..swap import paths

        m = self._configured(thp_defrag=None, large_share=thp_share)
        m = m.configure(variant="base+patchset")
        res = m.solve()
        waits = {k: v["wait_per_acquisition_us"] for k, v in res.details["locks"].lock_values.items()}
        k, pages = m.at_kernel_speed(), paths.PMD_KB // paths.PAGE_KB
        d = paths.swap_out(k, paths.PMD_KB, False)
        split_cpu, _ = paths.split_work(k, pages)
        subpage = ((d["reclaim"] - split_cpu + 2 * d["tags"] + d["cache_delete"] + d["map_dup"] + d["map_count"]
                    + d["map_free"]) / pages + 3 * waits.get("swapcache", 0.0) + 3 * waits.get("si_lock", 0.0))
        thp_pages_per_s = thp_share * res["swapout_kib_s"] / paths.PAGE_KB
        return thp_pages_per_s * (pages - 1) / 2 * subpage * 1e-6 * paths.PAGE_KB

    def spin_change_range_pct(self) -> tuple[float, float]:
        """The insert site's spin change in % at the ends of its two published values' stddevs (LKP's
        '± N%' of the base and the patched share, taken apart: the widest change either way)."""
        rows = self._insert_rows("cycles_share_pct").set_index("variant")
        (b, sb), (p, sp) = ((rows.loc[v, "value"], rows.loc[v, "stddev_pct"] / 100) for v in ("base", "base+patchset"))
        return 100 * (p * (1 - sp) / (b * (1 + sb)) - 1), 100 * (p * (1 + sp) / (b * (1 - sb)) - 1)

    def _insert_rows(self, metric: str) -> pd.DataFrame:
        """The published rows of ``metric`` at the ``__add_to_swap_cache`` spinlock (a self share), if any."""
        df = self.data()
        site = df["call_site"].map(lambda c: isinstance(c, str) and site_of(c) == "__add_to_swap_cache")
        return df[(df["metric"] == metric) & site]

    def _insert_spin_change(self) -> pd.DataFrame:
        """The published change of the spinning at ``__add_to_swap_cache``, if any."""
        return self._insert_rows("cycles_share_pct_change_pct").query("variant == 'base+patchset'")

    def _configured(self, **fields):
        """The fit's model as the thread ran it (its writers, PMEM, 2M THPs), with ``fields``."""
        return self.fit().model.set(processes=int(self.base()["processes"].iloc[0]), swap_device="pmem",
                                    folio_kb=2048, **fields)

    def sections(self) -> list[Section]:
        lkp = self.data()
        rows = report.compare(lkp, "base", "base+patchset")
        held = self.held_out()
        lines = [f"{'held out':<34} {'published':>10} {'model':>10} {'90% band':>17}"]
        for r in held.itertuples():
            variant = r.configuration.split(", ")[0].replace("base+patchset", "patched")
            site = r.configuration.split(", ")[1] if ", " in r.configuration else ""
            what = (variant + " " + r.metric.replace("_change_pct", " chg %").replace(
                "vm_scalability_throughput_kib_s", "throughput KiB/s").replace("swapout_kib_s", "swap-out KiB/s")
                .replace("cycles_share_pct", "spin % " + site.removeprefix("__")))
            lines.append(f"{what[:34]:<34} {r.published:>10.4g} {r.predicted:>10.4g} [{r.lo:.3g}, {r.hi:.3g}]")
        lines.append(f"seed 004's costs (swapcache_wb_tags), kernel {self.kernel}, PMEM;")
        lines.append(f"patched: {self.kernel}{self.PATCH}")
        sections = [Section(f"vm-scalability swap-w-seq, THP, PMEM swap ({self.id})",
                            report.lkp_block(rows, "base", "base+patchset")),
                    Section("swap model with seed 004's costs: both kernels predicted", "\n".join(lines))]
        if self._insert_spin_change().empty:  # (v8's profile is the whole add_to_swap chain)
            return sections
        c = self.thp_share_from_profile()
        pub = self.data().set_index(["variant", "metric"])["value"]["base+patchset"]
        lo, hi = (self.thp_share_from_profile(x)["thp_share"] for x in self.spin_change_range_pct())
        floor = self.at_fill_floor()
        check = [f"The published spin change at __add_to_swap_cache ({pub['cycles_share_pct_change_pct']:+.1f}%) is",
                 f"the model's with {100 * c['thp_share']:.0f}% of the pages in THPs ({100 * min(lo, hi):.0f}-"
                 f"{100 * max(lo, hi):.0f}% over", "its two values' stddevs), the rest 4K. With defrag=never the",
                 f"fill's THPs alone are {100 * floor['thp_share']:.0f}% of the swapped pages (every later fault 4K).",
                 "Not predicted:",
                 f"{'change %':<14} {'published':>10} {'at the share':>13} {'fill alone':>11}"]
        for what, key, metric in (("throughput", "throughput", "vm_scalability_throughput_kib_s_change_pct"),
                                  ("swap-out", "swapout", "swapout_kib_s_change_pct"),
                                  ("elapsed time", "time", "real_time_s_change_pct"),
                                  ("insert spin", "spin", "cycles_share_pct_change_pct")):
            check.append(f"{what:<14} {pub[metric]:>+10.1f} {c[key]:>+13.1f} {floor[key]:>+11.1f}")
        cached = self.data().set_index(["variant", "metric"])["value"]
        rise = cached[("base+patchset", "swap_cached_kib")] - cached[("base", "swap_cached_kib")]
        check += [f"SwapCached rise, KiB (in-flight THP tails; every page a THP: "
                  f"{self.swap_cached_rise_kib(1.0):.0f})",
                  f"{'':<14} {rise:>+10.0f} {self.swap_cached_rise_kib(c['thp_share']):>+13.0f} "
                  f"{self.swap_cached_rise_kib(floor['thp_share']):>+11.0f}"]
        return sections + [Section("the THP share the published profile implies (a check)", "\n".join(check))]


study = HuangThpSwapDelaySplit2016()
