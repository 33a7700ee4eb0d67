"""This project's swap-in matrix (mmcost measure swapin on the 6.18 KVM guest): coverage and the kernel's
own accounting, checked on every run."""

import pandas as pd
import pytest

from mmcost import datasets, studies

STUDY = studies.get("kvm_6_18_swapin")


def test_the_matrix_covers_sizes_processes_compressors_and_repetitions():
    runs = datasets.load("kvm_6_18_swapin").drop_duplicates("run")
    seq = runs[runs["experiment"] == "usemem_swapin"]
    assert sorted(seq["folio_kb"].unique()) == [4, 16, 64, 2048]
    assert sorted(seq["processes"].unique()) == [1, 2] and sorted(seq["compressor"].unique()) == ["lz4", "lzo-rle"]
    assert seq.groupby(["folio_kb", "processes", "compressor"]).size().min() >= 3
    assert runs["boot_id"].nunique() == 1 and (pd.to_numeric(runs["steal_share"]) < 0.05).all()


def test_pswpin_counts_every_page_read_back_that_was_swapped():
    """In order, every run: pswpin within 1% + 256 pages of the pages pagemap showed swapped just before
    they were read (the writers' other pages in the memcg account for the excess: 15-20 pages here)."""
    r = STUDY.runs()
    seq = r[r["order"] == "seq"]
    assert len(seq) >= 48
    assert ((seq["pswpin"] - seq["at_touch"]).abs() <= 0.01 * seq["at_touch"] + 256).all()
    # all of it was swapped: 512 MiB per process, about half swapped out when the read-back began
    assert (seq["at_touch"] == seq["processes"] * 512 * 2**20 // 4096).all()
    assert (seq["at_start"] > 0.4 * seq["at_touch"]).all()


def test_large_folios_come_back_whole_below_pmd_order_only():
    """16K and 64K: some whole (swpin > 0), every fallback the memcg's charge; 2M: none tried, one
    major fault per 4K page (alloc_swap_folio() tries orders below PMD_ORDER)."""
    r = STUDY.runs()
    small = r[r["folio_kb"].isin([16, 64])]
    assert (small["swpin"] > 0).all() and (small["fallback"] == small["fallback_charge"]).all()
    pmd = r[r["folio_kb"] == 2048]
    assert (pmd["swpin"] == 0).all() and (pmd["fallback"] == 0).all()
    assert ((pmd["majflt"] - pmd["pswpin"]).abs() <= 0.01 * pmd["pswpin"] + 256).all()


def test_the_table_fits_an_email():
    assert max(len(line) for s in STUDY.sections() for line in s.text.splitlines()) <= 80
    assert STUDY.counts()["unaccounted"] == 0


# --- the fit: SwapInModel on the 1-process in-order runs, the rest predicted ---------------------------------
CSV = "data/kvm_6_18_swapin/measurements.csv"


def _raw_means(metric="swapin_throughput_kib_s"):
    """Per (order, folio_kb, processes, compressor): the mean of the metric's rows, read with the standard
    library (the order from the run id's suffix, '-seq-rN' / '-rand-rN')."""
    import csv
    from pathlib import Path

    sums = {}
    with open(Path(__file__).resolve().parents[1] / CSV, newline="") as f:
        for row in csv.DictReader(f):
            if row["metric"] != metric:
                continue
            order = row["run"].rsplit("-", 2)[1]
            key = (order, int(row["folio_kb"]), int(row["processes"]), row["compressor"])
            s, n = sums.get(key, (0.0, 0))
            sums[key] = (s + float(row["value"]), n + 1)
    return {k: s / n for k, (s, n) in sums.items()}


def _size(kb):
    return {4: "4K", 16: "16K", 64: "64K", 2048: "2M"}[kb]


def test_held_out_throughput_within_15_percent_median_and_bands_cover_80_percent():
    """From held_out() (one prediction per configuration, repeated on its runs' rows) against the runs' means
    recomputed from the CSV: issue 36's 'done when' on this kernel."""
    held = STUDY.held_out()
    tp = held[held["metric"] == "swapin_throughput_kib_s"]
    means = _raw_means()
    errs, inside, seen = [], [], set()
    for (order, kb, procs, comp), mean in means.items():
        if procs == 1 and order == "seq":
            continue  # fitted
        part = tp[tp["configuration"] == f"{order}, {_size(kb)}, {procs} proc, {comp}"]
        assert len(part) == procs * 3 and part["predicted"].nunique() == 1
        best, lo, hi = part.iloc[0][["predicted", "lo", "hi"]]
        errs.append(abs(best / mean - 1))
        inside.append(lo <= mean <= hi)
        seen.add((order, kb, procs, comp))
    assert len(seen) == 14  # 8 in order with 2 processes, 6 in random order
    errs = sorted(errs)
    median = (errs[6] + errs[7]) / 2
    assert median <= 0.15, median
    assert sum(inside) / len(inside) >= 0.8


def test_a_row_by_hand():
    """1 process, 4K, lzo-rle, in order: the 3 runs' read-back KiB/s from the CSV; 2 processes, 4K, lz4:
    the held-out mean is the 6 process rows' mean."""
    means = _raw_means()
    t = STUDY.table()
    row = t[(t["order"] == "seq") & (t["folio_kb"] == 4) & (t["processes"] == 1) & (t["compressor"] == "lzo-rle")]
    assert row["swapin_kib_s"].iloc[0] == pytest.approx(means[("seq", 4, 1, "lzo-rle")], rel=1e-12)
    by = STUDY.held_out_by_configuration()
    two = by[(by["metric"] == "swapin_throughput_kib_s") & (by["configuration"] == "seq, 4K, 2 proc, lz4")]
    assert two["n"].iloc[0] == 6
    assert two["measured"].iloc[0] == pytest.approx(means[("seq", 4, 2, "lz4")], rel=1e-12)
    # a derived count by hand: one 16K run's share swapped in as 16K folios = swpin x 4 / pswpin
    d = datasets.load("kvm_6_18_swapin")
    run = sorted(d.loc[(d["folio_kb"] == 16) & (d["processes"] == 1), "run"].unique())[0]
    part = d[d["run"] == run].set_index("metric")["value"]
    held = STUDY.held_out()
    large = held[(held["metric"] == "large_swapin_share_pct") & (held["configuration"].str.contains("16K, 1 proc"))]
    assert (large["published"] - 100 * part["swpin_count"] * 4 / part["pswpin_count"]).abs().min() < 1e-9


def test_fit_reads_only_1_process_in_order_throughput_and_the_readback_order_comes_from_the_runs():
    rows = STUDY.fit_rows()
    assert set(rows["metric"]) == {"swapin_throughput_kib_s"} and len(rows) == 24
    assert (rows["processes"] == 1).all() and (rows["readback"] == "seq").all()
    every = STUDY.rows()
    assert (every["readback"] == every["run"].str.rsplit("-", n=2).str[1]).all()
    held = STUDY.held_out()
    # counts are held out on every run, never fitted
    assert {"pswpin_count", "pgmajfault_count", "large_swapin_share_pct",
            "readback_tlb_shootdowns_per_swapped_page"} <= set(held["metric"])
    assert (held["metric"] == "pswpin_count").sum() == 66
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["unaccounted"]) == (24, 66 + 66 + 66, 0)


def test_fitted_parameters_within_3_sigma_of_their_priors():
    """Both free costs within 3 sigma of priors measured on the same data (usemem's: the mean of two VMs'
    swap-in probes): the decompression at 2.5 us a page for 3.05 +- 1.5 (-0.4 sigma), do_swap_page's
    per-folio work at 0.38 generic us for 0.98 +- 1.37 (-0.4 sigma), chi2/dof 0.04 (at its lower bound,
    0, while the swap slot's hold was priced at a contended one's lines: the fit says a bound when it
    hits one). With lzbench's Silesia figures (9 us a page) and a per-folio guess of 1.0 +- 0.5 the fit
    had 1.2 us and 3.2 us, 4.4 sigma off, at chi2/dof 4.3."""
    fit = STUDY.fit()
    for name in STUDY.free:
        prior = fit.model.params[name].prior
        assert abs(fit.params[name] - prior.value) <= 3 * prior.width, name
    assert fit.at_bound.get("swapin_us_per_folio") in (None, "lower")
    assert any("swapin_us_per_folio" in w for w in fit.warnings) == ("swapin_us_per_folio" in fit.at_bound)
    # the profile the study uses is this VM's, the machine study's
    assert STUDY.model().cpu_model.endswith("kvm_6_18_machine/profile_b.toml")


def test_the_per_folio_work_fitted_here_is_what_a_second_vm_of_this_kind_measures():
    """Two measurements of do_swap_page's per-folio work on 2-vCPU Xeon guests: this study's fit to the
    read-backs (0.38) and the swap-in probe of a second VM (0.02 +- 0.27 generic us) agree
    within the probe's 2 sigma, where the EPYC guest's probe (1.93 +- 0.53) is 3.5 of its sigma away."""
    from mmcost import cpu_models
    from mmcost.measure import profile as P
    from mmcost.studies.kvm_6_18_swapin import SECOND_VM

    fitted = STUDY.fit().params["swapin_us_per_folio"]
    probe, sd = P.swapin_per_folio_prior(P.load(datasets.path(STUDY.id) / SECOND_VM[0]),
                                         cpu_models.default_for("x86"))
    assert abs(fitted - probe) <= 2 * sd


def test_a_second_vm_of_this_kind_is_predicted_with_nothing_fitted_on_it():
    """Held out across VMs of one kind: six in-order read-backs (4K, 64K) on a second Xeon guest (another
    boot and kernel build) right after its profile. The costs fitted here, carried at its kernel speed,
    predict them within 5% (-0.3%, +1.3%); its own profile with nothing fitted, within 15% (-5.5%,
    -5.1%; -12.1% and -9.4% while the swap slot's hold was priced at a contended one's lines)."""
    t = pd.DataFrame(STUDY.second_vm()).set_index(["model", "folio_kb"])["error_pct"]
    for kb in (4, 64):
        assert abs(t[("this study's fit carried", kb)]) <= 5, kb
        assert abs(t[("its profile, nothing fitted", kb)]) <= 15, kb
    folder = datasets.path(STUDY.id)
    boots = [set(pd.read_csv(folder / f)["boot_id"]) for f in ("second_vm_readbacks.csv", "measurements.csv")]
    assert len(boots[0]) == 1 and not boots[0] & boots[1]
    assert max(len(line) for line in STUDY.sections()[-1].text.splitlines()) <= 80


def test_busy_runs_are_flagged():
    """Runs with another runnable task at their start or end (the CSV's runnable_before/after), counted per
    configuration and named in the text: 14 of the 18 random-order runs, none in order."""
    import csv
    from pathlib import Path

    busy = {}
    with open(Path(__file__).resolve().parents[1] / CSV, newline="") as f:
        for row in csv.DictReader(f):
            busy[row["run"]] = float(row["runnable_before"]) >= 1 or float(row["runnable_after"]) >= 1
    assert sum(busy.values()) == 14 and not any(b for r, b in busy.items() if "-seq-" in r)
    t = STUDY.held_out_by_configuration()
    assert int(t.loc[t["metric"] == "swapin_throughput_kib_s", "busy"].sum()) == 14
    assert "busy" in STUDY.held_out_text()


def test_the_study_is_a_member_of_the_joint_fit():
    from mmcost.corpus import sharing, sources

    assert "kvm_6_18_swapin" in [s.id for s in sources._candidates(studies.names())]
    keys = sharing.keys(STUDY)
    assert keys["swapin_us_per_folio"][0] == "swapin_us_per_folio@era:6"
    # keyed by the machine the profile was measured on (its boot_id), not by the file's name
    assert keys["decompress_us_per_page"][0].startswith("decompress_us_per_page@cpu:boot:1901ae91|")


def _pageout_lines():
    """Per compressor, (per folio, per page) of the measured and the model's MADV_PAGEOUT over 4K-64K."""
    import numpy as np

    t = STUDY.second_vm_pageout()
    assert set(t["compressor"]) == {"lzo-rle", "lzo", "lz4"} and set(t["folio_kb"]) == {4, 16, 64}
    return {comp: {what: np.polyfit(p["folio_kb"] // 4, p[what], 1)[::-1] for what in ("measured", "model")}
            for comp, p in t.groupby("compressor")}


def test_madvise_pageout_per_page_on_the_second_vm_is_the_model_s_swap_out():
    """MADV_PAGEOUT timed by the second VM's profile (second_vm_profile_b): the per-page work of
    shrink_folio_list's swap-out (the line's slope over 4K-64K: the zram write, measured by the same
    profile, and the model's unmap, swap cache and slot work per page; swap.paths.madvise_pageout_us,
    nothing fitted) within a measured cost's allowance, 10%, for each compressor (-3%, -3%, -7%); every
    size within 7%."""
    for comp, line in _pageout_lines().items():
        assert line["model"][1] == pytest.approx(line["measured"][1], rel=0.10), comp


@pytest.mark.xfail(strict=True, reason="known miss: the model's per-folio swap-out work at one task is 1.20 us "
                   "where MADV_PAGEOUT measures 1.24 and 1.21 (lzo-rle, lzo) but 0.35 with lz4, whose line is "
                   "steeper (6.5 us a page for 5.9); 2.0 us while the swap slot's hold was priced at a contended "
                   "one's moved lines")
def test_madvise_pageout_per_folio_on_the_second_vm_is_the_model_s_swap_out():
    """The same line's intercept, a folio's fixed work: within 0.5 us."""
    for comp, line in _pageout_lines().items():
        assert line["model"][0] == pytest.approx(line["measured"][0], abs=0.5), comp
