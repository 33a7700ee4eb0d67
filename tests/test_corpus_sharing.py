"""Which costs the bundled sources share in the joint fit."""

import warnings

import pytest

from mmcost import studies
from mmcost.corpus import fit_all, sharing


def test_a_per_primitive_cost_is_per_cpu_model_and_a_kernel_cost_per_era_at_the_machines_speed():
    k = sharing.keys(studies.get("small_thp_swapout"))  # Ampere Altra, v6.6
    assert k["tlbi_us"] == ("tlbi_us@cpu:ampere-altra", None)
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:6", "log_machine@cpu:ampere-altra")
    k = sharing.keys(studies.get("swapcache_wb_tags"))  # Haswell-EP, v4.7
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:4", "log_machine@cpu:haswell-ep")


def test_a_study_predicting_with_another_sources_fit_shares_that_sources_machine():
    """Roberts v5 names no machine of its own: it predicts with seed 000's fit on the Altra."""
    k = sharing.keys(studies.get("roberts_mthp_swapout_v5"))
    assert k["reclaim_us_per_folio"] == ("reclaim_us_per_folio@era:6", "log_machine@cpu:ampere-altra")


def test_a_fitted_parameter_without_a_prior_is_its_sources_own():
    """swap_alloc_locks fits CPU-second totals of one build: no other source has them."""
    study = studies.get("swap_alloc_locks")
    k = sharing.keys(study)
    assert all(k[n] == (f"{n}@source:swap_alloc_locks", None) for n in study.free)


def test_the_joint_fit_shares_one_cost_across_machines_and_fits_each_source_once():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = fit_all()
    sources = {m.source for m in joint.members}
    assert "kvm_6_18_swapout" in sources and "kvm_6_18_memcgs" not in sources  # the same rows: one member
    table = joint.table().set_index("parameter")
    users = table.loc["reclaim_us_per_folio@era:6", "sources"]
    assert "small_thp_swapout" in users and "kvm_6_18_swapout" in users
    # every global with a prior is within 5 sigma of it, or the report would show a cost bent to fit
    pulls = table["pull"].dropna().abs()
    assert (pulls < 5).all(), pulls[pulls >= 5]
    assert joint.params["log_machine@cpu:generic-x86"] != pytest.approx(0.0, abs=1e-6)  # the data move it


# --- studies on a measured machine (Study.PROFILE) ---------------------------------------------------------
BOOT_P = "aaaaaaaa-0000-4000-8000-000000000001"
BOOT_Q = "bbbbbbbb-0000-4000-8000-000000000002"
#: the CPUs running the mm (one sender, the rest targets, a share of the time) in the toy sources' rows
MM, MM_B = (1.5, 1.75, 2.0), (1.25, 1.6, 1.9)


def _profile(path, boot, ipi_target_us):
    """A machine profile of mmcost measure machine with one measured cost: the flush IPI's target time."""
    from mmcost.measure.profile import Cost, Profile, to_toml

    path.parent.mkdir(parents=True, exist_ok=True)
    prof = Profile({"cpu": "Test CPU", "arch": "x86_64", "vcpus": 2, "virtualized": True, "boot_id": boot},
                   {"ipi_target_us": Cost("ipi_target_us", ipi_target_us, 0.1, "us", (ipi_target_us,), "test")})
    path.write_text(to_toml(prof))
    return str(path)


def test_a_profile_is_keyed_by_the_machine_it_was_measured_on_not_by_its_file_name(tmp_path):
    """Two VMs' profiles both called profile.toml are two machines; two profiles of one boot (profile_a,
    profile_b) are one."""
    p = _profile(tmp_path / "vm1" / "profile.toml", BOOT_P, 10.0)
    q = _profile(tmp_path / "vm2" / "profile.toml", BOOT_Q, 2.0)
    p2 = _profile(tmp_path / "vm1" / "profile_again.toml", BOOT_P, 10.5)
    assert sharing.profile_machine(p) == "boot:aaaaaaaa" == sharing.profile_machine(p2)
    assert sharing.profile_machine(q) == "boot:bbbbbbbb"


def _toy_studies(tmp_path):
    """Three sources of TLB-shootdown costs per folio (TlbModel's reclaim path, dirty PTEs: one flush
    IPI per folio to each other CPU running the mm, taken at ``irq_us`` with posted interrupts, so a
    row is (mm_cpus - 1) x the target's time per IPI). A and B ran on machine P (profile: 10 us per
    IPI taken), C on machine Q (its profile has the same file name: 2 us). A and C fit ``irq_us``; B
    frees nothing (a member for its machine's rows only). Each row was measured at its machine's value."""
    import pandas as pd

    from mmcost.studies import Study
    from mmcost.tlb import TlbModel

    p = _profile(tmp_path / "vm1" / "profile.toml", BOOT_P, 10.0)
    q = _profile(tmp_path / "vm2" / "profile.toml", BOOT_Q, 2.0)

    class Toy(Study):
        """One toy source; its settings are class attributes (leave-one-source-out makes fresh instances)."""

        mechanism = TlbModel
        PROFILE = ("toy", "profile.toml")
        path, boot, runs_boot, ipi_us, mm = "", "", "", 0.0, MM

        def profile_path(self):
            return self.path

        def source(self):
            return {"model": {"virtualized": True, "cpus": 2, "kernel": "6.18", "sender_in_mm": True,
                              "dirty_fraction": 1.0, "reclaim_unmap_rate_per_s": 1000.0}}

        def fit_rows(self):
            value = [(m - 1) * self.ipi_us for m in self.mm]
            return pd.DataFrame({"metric": "ipi_receive_us_per_folio", "mm_cpus": list(self.mm), "cpus": 2,
                                 "virtualized": True, "value": value, "stddev": [0.02 * v for v in value]})

        def data(self):
            return self.fit_rows().assign(boot_id=self.runs_boot or self.boot)

        def held_out(self):
            rows = self.fit_rows()
            pred = self.fit().predict(rows, level=0.9, n_samples=20, seed=0, fixed_priors=True)
            return self._held_out_frame(rows, [f"mm_cpus={m}" for m in rows["mm_cpus"]], pred)

    def toy(sid, path, boot, ipi_us, free, runs_boot="", mm=MM):
        cls = type(f"Toy_{sid}", (Toy,), dict(id=sid, path=path, boot=boot, ipi_us=ipi_us, free=free,
                                              runs_boot=runs_boot, mm=mm))
        return cls()

    return {"toy_a": toy("toy_a", p, BOOT_P, 10.0, ("irq_us",)), "toy_b": toy("toy_b", p, BOOT_P, 10.0, (), mm=MM_B),
            "toy_c": toy("toy_c", q, BOOT_Q, 2.0, ("irq_us",)), "toy": toy, "p": p}


def test_leaving_a_source_out_predicts_it_with_its_machines_measured_costs(tmp_path, monkeypatch):
    """Left out, A is predicted from the joint fit of B (the same machine: the measured 10 us) and C;
    B from A's; C, whose profile shares A's file name but not its machine, from its own measured 2 us,
    never P's. The generic preset would say 1 us (posted interrupt, cpu_models' ipi_receive cycles)."""
    from mmcost import studies
    from mmcost.corpus import loso, sources

    toys = _toy_studies(tmp_path)
    names = ["toy_a", "toy_b", "toy_c"]
    monkeypatch.setattr(studies, "get", lambda name: toys[name])
    sources._rows.cache_clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert [s.id for s in sources._candidates(names)] == names  # B is a member for its machine's rows
            fallback = sources.fallback_parameters(names)
            for name, per_ipi, mm in (("toy_a", 10.0, MM), ("toy_b", 10.0, MM_B), ("toy_c", 2.0, MM)):
                joint = sources.fit_all(exclude=[name], names=names)
                got = loso.source_rows(toys[name], joint, fallback, True)
                held = got[got["kind"] == "held out"]
                # the reference: (mm_cpus - 1) x the machine's measured time per IPI taken, by hand
                want = [(m - 1) * per_ipi for m in mm]
                assert held["predicted"].to_numpy() == pytest.approx(want, rel=0.02), name
    finally:
        sources._rows.cache_clear()


def test_a_study_whose_runs_ran_elsewhere_does_not_get_the_profiles_costs(tmp_path):
    """Runs recorded on boot Q, declared on P's profile: refused, naming the study and the boot_id."""
    toys = _toy_studies(tmp_path)
    stray = toys["toy"]("toy_d", toys["p"], BOOT_P, 10.0, ("irq_us",), runs_boot=BOOT_Q)
    with pytest.raises(ValueError, match=r"study toy_d: PROFILE toy/profile.toml is not the machine of its runs "
                                         r"\(other, by boot_id\)"):
        stray.model()
    assert toys["toy_a"].model().params["irq_us"].value == pytest.approx(10.0)  # the measured value, not 1 us
