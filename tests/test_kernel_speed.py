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


#: configurations whose paths read different kernel-path fields: the memcg-limited zram path, kswapd's
#: (no memcg), the si->lock era with writeback tags and brd, the delay-split THP path, nvme
PATHS = [BASE,
         dict(processes=2, swapped_share=0.5, memcg_mb=None, folio_kb=4, swap_device="zram", kernel="6.18"),
         dict(processes=8, swapped_share=0.5, memcg_mb=None, folio_kb=4, swap_device="brd", kernel="4.7"),
         dict(processes=4, swapped_share=0.5, memcg_mb=None, folio_kb=2048, swap_device="brd",
              kernel="4.8+thp_swap_delay_split"),
         dict(processes=2, memcg_mb=256, folio_kb=4, swap_device="nvme", kernel="6.6")]


@pytest.mark.parametrize("config", PATHS, ids=["zram-memcg", "kswapd", "v4.7-brd", "delay-split", "nvme"])
@pytest.mark.parametrize("speed", [0.5, 2.0])
def test_speed_is_every_kernel_path_cost_multiplied(speed, config):
    """kernel_speed = k solves as the same configuration at speed 1 with each field of
    KERNEL_PATH_FIELDS multiplied by k, and nothing else changed (the fault, PTEs, IPIs,
    compression, lines moved between CPUs and user time are the machine's own or the profile's)."""
    fast = SwapModel(**config, kernel_speed=speed)
    ref = SwapModel(**config, kernel_speed=1.0)
    by_hand = ref.set(**{f: getattr(ref, f) * speed for f in KERNEL_PATH_FIELDS})
    a, b = fast.solve(), by_hand.solve()
    for q in ("usemem_throughput_kib_s", "sys_time_s", "exit_time_s", "tlb_shootdowns_per_swapped_page"):
        assert a[q] == pytest.approx(b[q], rel=1e-12), q
    kb = config["folio_kb"]
    assert fast.swapout_cpu_us(kb, True) == pytest.approx(by_hand.swapout_cpu_us(kb, True), rel=1e-12)
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


def test_swap_in_scales_its_own_kernel_paths_too():
    from mmcost.swap import SwapInModel

    cfg = dict(processes=1, memcg_mb=256, folio_kb=4, swap_device="zram", kernel="6.18")
    ref = SwapInModel(**cfg, kernel_speed=1.0)
    assert set(KERNEL_PATH_FIELDS) < set(SwapInModel.KERNEL_PATHS)
    by_hand = ref.set(**{f: getattr(ref, f) * 2.0 for f in SwapInModel.KERNEL_PATHS})
    a, b = SwapInModel(**cfg, kernel_speed=2.0).solve(), by_hand.solve()
    assert a["swapin_throughput_kib_s"] == pytest.approx(b["swapin_throughput_kib_s"], rel=1e-12)


def test_lines_moved_between_cpus_are_not_kernel_paths():
    """Holds whose priors are a line fetched from another CPU are the hardware's, as lock_line_us is; the
    own work of the swap allocation, swap_avail_lock and zone->lock sections is the kernel's, their lines
    apart (swap.paths.moved_share)."""
    for name in ("slot_hold_us_per_acquisition", "swap_avail_hold_us", "zone_lock_hold_us"):
        assert name in KERNEL_PATH_FIELDS, name
    for name in ("memcg_charge_hold_us",
                 "lock_line_us", "lru_line_us", "free_line_us", "cold_line_us", "zram_us_per_page",
                 "zs_malloc_hold_us", "user_us_per_page", "fault_us_per_folio", "pte_us"):
        assert name not in KERNEL_PATH_FIELDS, name
        assert name in SwapModel.__dataclass_fields__, name
