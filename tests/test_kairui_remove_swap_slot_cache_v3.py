"""kairui_remove_swap_slot_cache_v3: the slot cache's removal predicted from SwapModel's priors (nothing fitted).

Tolerances: the prediction is a small change (within 15 points of no
change) on the kernel switch the catalogue names (v6.15); its sign is the
known miss (xfail: -1.4% predicted, +2.8% +- 3.7% measured; -8% while every allocation's hold was
priced at a contended one's moved lines)."""

import pytest
from mmcost import studies

STUDY = studies.get("kairui_remove_swap_slot_cache_v3")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (1, 1, 8, 0)


def test_the_series_is_the_catalogues_slot_cache_switch():
    m = STUDY.model()
    assert m.switch("slot_cache") is True and m.configure(variant="after").switch("slot_cache") is False
    assert m.set(kernel="6.15").switch("slot_cache") is False
    assert abs(STUDY.predicted_change_pct()) < 15


@pytest.mark.xfail(strict=True, reason="known miss: losing the slot cache costs -1.4% in the model (each allocation "
                   "its CPU's own cluster lock, no lines moved); measured +2.8%: the cache's refill and free path, "
                   "which the series' per-CPU cluster skips, is not itemised")
def test_after_within_2_sigma():
    assert STUDY.counts()["hits"] == 1
