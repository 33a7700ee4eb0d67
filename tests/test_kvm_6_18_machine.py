"""This VM's profile and swap-out matrix: the profile's costs and what they predict with nothing fitted."""

import pytest

from mmcost import datasets, studies
from mmcost.cli import main as cli_main
from mmcost.measure.profile import load

STUDY = studies.get("kvm_6_18_machine")


def test_the_two_profiles_of_the_vm_agree_on_the_ipi_within_the_prior_allowance():
    """Measured twice on one VM, 20 minutes apart: the flush IPI's price agrees within 10% (the
    allowance cpu_models.MEASURED_ALLOWANCE adds to each measured cost's spread), which the
    rounds of one measurement alone (1-3%) understate."""
    a, b = (load(datasets.path("kvm_6_18_machine") / f"profile_{x}.toml") for x in "ab")
    for name in ("ipi_target_us", "ipi_sender_extra_us", "zero_gb_s"):
        assert a.costs[name].value == pytest.approx(b.costs[name].value, rel=0.10), name
    # a guest's flush IPI is dear: VM exits on both sides, far above the generic preset's 0.5 + 1 us
    assert b.costs["ipi_sender_extra_us"].value > 10 and b.costs["ipi_target_us"].value > 5


def test_every_run_is_predicted_and_nothing_is_fitted():
    held = STUDY.held_out()
    runs = STUDY.runs()
    assert len(held) == runs.groupby(["folio_kb", "processes", "memcg_mb", "compressor", "metric"]).ngroups == 64
    assert STUDY.fitted_rows() == []


def test_the_measured_ipi_price_is_what_predicts_two_processes():
    """Two writers in one memcg flush each other's CPU: with the measured IPI costs the 2-process
    throughput is predicted within 20% (median; the default prior misses by 30% or more), and the
    shootdowns per swapped page within 10% with no cost at all (the flush structure)."""
    s = STUDY.summary().set_index(["cpu_model", "metric", "processes"])["median_abs_error_pct"]
    measured = s[("this VM's profile", "usemem_throughput_kib_s", 2)]
    default_ipi = s[("profile, IPI costs at the default prior", "usemem_throughput_kib_s", 2)]
    assert measured < 20 and default_ipi > 30
    assert s[("this VM's profile", "tlb_shootdowns_per_swapped_page", 2)] < 10


def test_the_profile_alone_predicts_the_matrix_within_10_percent_with_honest_bands():
    """Issue 34's target. The profile's fault path sets the machine's kernel-path speed
    (cpu_models.kernel_speed); before it, the 1-process runs were 16% faster than the model
    (median): the rest of reclaim took ~2.6 us per swapped 4K page against 5.1 us of generic
    priors. Met since a swap allocation's hold prices the lines moved from another CPU only when
    one held the lock last (swap.paths.slot_hold_us): 5.5% at one process and 7.9% at two, 13
    and 14 of 16 in band (11.2% and 10.3% before)."""
    s = STUDY.summary()
    thr = s[(s["cpu_model"] == "this VM's profile") & (s["metric"] == "usemem_throughput_kib_s")]
    assert (thr["median_abs_error_pct"] <= 10).all()
    assert (thr["in_band"] >= 0.8 * thr["n"]).all()


def test_the_cli_verifies_runs_against_a_profile_with_nothing_fitted(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    datasets.load("kvm_6_18_machine").to_csv(runs, index=False)
    profile = str(datasets.path("kvm_6_18_machine") / "profile_b.toml")
    assert cli_main(["measure", "verify", "--runs", str(runs), "--machine", profile, "--no-fit"]) == 0
    out = capsys.readouterr().out
    assert "nothing fitted" in out and max(len(line) for line in out.splitlines()) <= 80
    assert cli_main(["measure", "verify", "--runs", str(runs), "--machine", str(tmp_path / "no.toml")]) == 2
    assert "--machine" in capsys.readouterr().err
