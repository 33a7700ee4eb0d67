"""amit_concurrent_tlb_flushes_v3: every row listed as not expressible, with the missing mechanism."""

from mmcost import studies

STUDY = studies.get("amit_concurrent_tlb_flushes_v3")


def test_every_row_is_not_expressible_with_its_reason():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (0, 0, 48, 0)
    acc = STUDY.accounting()
    assert acc["reason"].str.contains("flush_tlb_multi").all()
    assert not STUDY.has_held_out()


def test_the_report_table_fits_an_email():
    for s in STUDY.sections():
        assert max(len(line) for line in s.text.splitlines()) <= 80
