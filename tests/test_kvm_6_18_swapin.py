"""This project's swap-in matrix (mmcost measure swapin on the 6.18 KVM guest): coverage and the kernel's
own accounting, checked on every run."""

import pandas as pd

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
    assert max(len(line) for line in STUDY.text().splitlines()) <= 80
    assert STUDY.counts()["unaccounted"] == 0
