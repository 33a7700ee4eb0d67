"""roberts_mthp_swapout_v4: v5's setup one series earlier; the tests it shares with v5 run there
(test_roberts_mthp_swapout_v5.py, over both series). Here what differs: its base kernel."""

from mmcost import datasets, studies


def test_v4s_baseline_is_v6_6_with_the_anonfolio_series():
    """"v6.6-rc4+anonfolio" (the label seed 000 uses): anonymous mTHP faults without swapping them
    out whole; the series adds the whole swap-out on top."""
    assert set(datasets.load("roberts_mthp_swapout_v4")["kernel"]) == {"6.6+anon_mthp"}
    variants = studies.get("roberts_mthp_swapout_v4").fit().model.variants
    assert variants == {"baseline": {"kernel": "6.6+anon_mthp"},
                        "swap-out-mthp-v4": {"kernel": "6.6+anon_mthp+swap_whole_mthp"}}
