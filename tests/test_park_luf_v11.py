"""park_luf_v11: migrc's fit (XSBench's rates) predicts LUF on bare metal; nothing fitted here.

Tolerances: the shootdown cut within 10 points of the claimed -97%; the
runtime change has migrc's sign; its size is migrc's known miss (xfail:
about -0.4% for -4.5%)."""

import pytest
from mmcost import studies

STUDY = studies.get("park_luf_v11")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (15, 17, 0, 0)


def test_nothing_is_fitted_and_the_shootdown_cut_is_predicted():
    assert STUDY.fit().params == studies.get("migrc_tlb").fit().params
    held = STUDY.held_out().set_index("configuration")
    cut = held.loc["cover letter claim (tlb_shootdowns_change_pct)"]
    assert abs(cut["error"]) <= 10 and cut["lo"] <= cut["predicted"] <= cut["hi"]
    rt = held.loc["cover letter claim (program_runtime_s_change_pct)"]
    assert rt["predicted"] < 0
    for s in STUDY.sections():
        assert max(len(line) for line in s.text.splitlines()) <= 80


@pytest.mark.xfail(strict=True, reason="known miss (migrc's): the runtime change predicted about -0.4% for -4.5%")
def test_luf_inference_times_within_2_sigma():
    c = STUDY.counts()
    assert c["hits"] >= c["held_out"] - 2
