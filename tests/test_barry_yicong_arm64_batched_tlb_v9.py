"""barry_yicong_arm64_batched_tlb_v9: the real-time change predicted from the ptep_clear_flush share and the presets.

Tolerances: both changes within 10 points (hits); the saving grows with the
DSB's domain, so the 96-CPU Kunpeng saves more than the 8-core Snapdragon,
as published; never more than the share itself."""

import pytest
from mmcost import studies
from mmcost.studies.barry_yicong_arm64_batched_tlb_v9 import saved_share

STUDY = studies.get("barry_yicong_arm64_batched_tlb_v9")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (2, 2, 13, 0)
    assert c["hits"] == 2


def test_the_saving_grows_with_the_domain_and_stays_below_the_share():
    assert 0 < saved_share(1.0, 10.0, 8) < saved_share(1.0, 10.0, 96) < 1
    held = STUDY.held_out().set_index("configuration")
    snap, kun = held.loc["snapdragon-888, batched"], held.loc["kunpeng-920, batched"]
    assert kun["predicted"] < snap["predicted"] < 0
    assert snap["predicted"] > -5.36 and kun["predicted"] > -16.99
    assert snap["lo"] <= snap["published"] <= snap["hi"]
    assert abs(kun["error"]) <= 10 and kun["predicted"] == pytest.approx(-16.1, abs=1.0)
