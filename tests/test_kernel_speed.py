"""kernel_speed: a machine's time for the kernel's own paths, relative to the generic machine of the
kernel-path priors, from a profile's measured 4K fault (cpu_models.kernel_speed)."""

import math

import numpy as np
import pytest

from mmcost import cpu_models, datasets
from mmcost.measure.profile import as_cpu_model, load
from mmcost.swap import SwapModel
from mmcost.swap.model import KERNEL_PATH_FIELDS

BASE = dict(processes=2, memcg_mb=256, folio_kb=64, swap_device="zram", kernel="6.18")


def test_the_generic_machine_is_speed_one():
    assert cpu_models.kernel_speed(cpu_models.FAULT_PRIOR.value + cpu_models.PTE_PRIOR.value) == 1.0
    assert SwapModel(**BASE).kernel_speed == 1.0  # a preset's


@pytest.mark.parametrize("speed", [0.5, 2.0])
def test_speed_is_every_kernel_path_cost_multiplied(speed):
    """kernel_speed = k solves as the same configuration at speed 1 with each field of
    KERNEL_PATH_FIELDS multiplied by k, and nothing else changed (the fault, PTEs, IPIs,
    compression and user time are the machine's own or the profile's)."""
    fast = SwapModel(**BASE, kernel_speed=speed)
    ref = SwapModel(**BASE, kernel_speed=1.0)
    by_hand = ref.set(**{f: getattr(ref, f) * speed for f in KERNEL_PATH_FIELDS})
    a, b = fast.solve(), by_hand.solve()
    for q in ("usemem_throughput_kib_s", "sys_time_s", "exit_time_s", "tlb_shootdowns_per_swapped_page"):
        assert a[q] == pytest.approx(b[q], rel=1e-12), q
    assert fast.swapout_cpu_us(64, True) == pytest.approx(by_hand.swapout_cpu_us(64, True), rel=1e-12)
    # slower kernel paths, slower swap-out (the work is not all waiting)
    assert (a["usemem_throughput_kib_s"] < ref.solve()["usemem_throughput_kib_s"]) == (speed > 1)


def test_a_band_s_draws_of_the_speed_are_each_its_own_solve():
    m = SwapModel(**BASE, kernel_speed=0.8)
    draws = [{"kernel_speed": s} for s in np.linspace(0.5, 1.5, 12)]
    lanes = SwapModel.solve_draws(m, draws)
    assert lanes is not None
    for d, res in zip(draws, lanes):
        assert res["usemem_throughput_kib_s"] == pytest.approx(m.set(**d).solve()["usemem_throughput_kib_s"],
                                                                rel=1e-9)


@pytest.mark.parametrize("source", ["kvm_6_18_machine", "kvm_6_18_machine_epyc"])
def test_a_profile_s_speed_is_its_4k_fault_over_the_generic_one(source):
    """Worked from the file: the 4K first-touch fault less zeroing over 1.5 + 0.05 us, with the rounds'
    spread, the measured allowance and the transfer sd in quadrature."""
    path = datasets.path(source) / "profile_b.toml"
    prof = load(path)
    f4 = prof.per_size[4]["fault_us_per_folio"]
    prior = as_cpu_model(prof, path).measured["kernel_speed"]
    assert prior.value == pytest.approx(f4.value / 1.55, rel=1e-12)
    rel = math.sqrt((f4.sd / f4.value) ** 2 + 0.1 ** 2 + 0.2 ** 2)
    assert prior.width == pytest.approx(prior.value * rel, rel=1e-12)
    assert SwapModel(**BASE, cpu_model=str(path)).kernel_speed == pytest.approx(prior.value)


def test_the_two_vms_speeds_are_the_measured_ratio_of_their_fault_paths():
    """The Xeon guest's fault path is 0.86 us, the EPYC guest's 1.49: 0.55 and 0.96 of the generic
    machine's; so the same kernel costs 1.73x longer on the second VM."""
    s = {src: SwapModel(**BASE, cpu_model=str(datasets.path(src) / "profile_b.toml")).kernel_speed
         for src in ("kvm_6_18_machine", "kvm_6_18_machine_epyc")}
    assert 0.5 < s["kvm_6_18_machine"] < 0.6 and 0.9 < s["kvm_6_18_machine_epyc"] < 1.0


@pytest.mark.parametrize("bad", [-1.0, 0.0, float("nan"), 100.0])
def test_bad_speed_names_the_field(bad):
    with pytest.raises(ValueError, match="kernel_speed"):
        SwapModel(**BASE, kernel_speed=bad)
