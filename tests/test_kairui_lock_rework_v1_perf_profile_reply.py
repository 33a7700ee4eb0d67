"""kairui_lock_rework_v1_perf_profile_reply: every row listed as not expressible, with the missing output."""

from mmcost import studies

STUDY = studies.get("kairui_lock_rework_v1_perf_profile_reply")


def test_every_row_is_not_expressible_with_its_reason():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (0, 0, 12, 0)
    acc = STUDY.accounting()
    assert acc.loc[acc["metric"] == "cycles_share_pct", "reason"].str.contains("children").all()
    for s in STUDY.sections():
        assert max(len(line) for line in s.text.splitlines()) <= 80
