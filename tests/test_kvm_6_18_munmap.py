"""The munmap study: this guest's own runs of the zs_free contention experiment."""

import pytest
from mmcost import datasets, studies
from mmcost.swap import SwapModel

STUDY = studies.get("kvm_6_18_munmap")


def test_every_page_of_every_run_went_to_swap():
    d = datasets.load("kvm_6_18_munmap")
    sw = d[d["metric"] == "pswpout_count"]
    assert len(sw) == 15
    assert (sw["value"] == sw["processes"] * 256 * 2**20 / 4096).all()


def test_the_moved_lines_prior_reproduces_its_source_on_bare_metal():
    """With the x86-derived priors, 1 process frees 256 MB in the published
    11.7 ms, and 2 and 4 at once take the published 2.06x and 5.38x as long
    (the derivation assumed the freers fully serialised; MVA lets them
    overlap a little, so 4 processes come out lower: 10% tolerance)."""
    def ms(p):
        return SwapModel(processes=p, cpus=20, memcg_mb=None, swapped_share=1.0, kswapd_share=0.0,
                         bytes_per_process=256 * 2**20, swap_device="zram").solve()["munmap_time_ms"]

    one = ms(1)
    assert one == pytest.approx(11.7, rel=0.15)
    assert ms(2) / one == pytest.approx(24.1 / 11.7, rel=0.05)
    assert ms(4) / one == pytest.approx(63.0 / 11.7, rel=0.12)


def test_four_processes_are_predicted_from_one_and_two():
    r = STUDY.rows()
    fit = STUDY.lines_fit()
    held = STUDY._predicted(fit, r[r["processes"] == 4].reset_index(drop=True))
    measured, predicted = held["published"].median(), held["predicted"].median()
    assert predicted == pytest.approx(measured, rel=0.15)
    assert fit.model.params["free_line_us"].value > 2 * fit.model.params["free_line_us"].prior.value


def test_held_out_has_two_and_four_processes():
    held = STUDY.held_out()
    assert sorted(set(held["configuration"])) == ["2 proc", "4 proc"]
    assert (held["lo"] <= held["hi"]).all()
