"""The mechanisms as models: fitted directly to synthetic frames made from known
parameters, with configuration columns varying per row; the parameters come
back within their reported errors and predict() gives bands for other knobs.
Plus the generic rules: free=[...], column overrides, variants, kernel and
CPU tables, pickling, bad input."""

import pickle

import numpy as np
import pandas as pd
import pytest
from mmcost.locks import LockSystem
from mmcost.swap import SwapModel
from mmcost.tlb import TlbModel

RNG = np.random.default_rng(2026)


def synthetic(model, rows: pd.DataFrame, rel: float = 0.01) -> pd.DataFrame:
    """The model's own predictions with Gaussian noise of ``rel``, stddev published."""
    truth = model.evaluate(rows)
    out = rows.copy()
    out["value"] = truth * (1 + rel * RNG.standard_normal(len(rows)))
    out["stddev"] = rel * np.abs(truth)
    return out


def recovered(fit, truth: dict, k: float = 4.0):
    for name, value in truth.items():
        assert abs(fit.params[name] - value) < k * fit.stderr[name], (name, fit.params[name], value, fit.stderr[name])


def test_swap_model_recovers_its_costs_from_varied_configurations():
    truth = dict(reclaim_us_per_folio=4.5, core_write_gb_s=5.0, fault_us_per_folio=2.2)
    gen = SwapModel(**truth)
    configs = []
    for kb in (4, 16, 64, 2048):
        for procs, cpus in ((1, 1), (2, 2), (4, 2)):
            for dev, comp, virt, kernel in (("zram", "lzo-rle", False, "6.18"), ("zram", "zstd", True, "6.18"),
                                            ("brd", "lz4", False, "6.12"), ("nvme", "lz4", True, "6.18")):
                configs.append(dict(folio_kb=kb, processes=procs, cpus=cpus, swap_device=dev, compressor=comp,
                                    virtualized=virt, kernel=kernel, memcg_mb=384, bytes_per_process=2**30))
    rows = pd.DataFrame([{**c, "metric": m} for c in configs for m in ("usemem_throughput_kib_s", "sys_time_s")])
    data = synthetic(gen, rows)
    fit = SwapModel().fit(data, free=list(truth))
    recovered(fit, truth)
    ask = pd.DataFrame([dict(metric="swapout_kib_s", folio_kb=kb, processes=p, cpus=c, swap_device="zram",
                             virtualized=True, memcg_mb=m, bytes_per_process=2**30)
                        for kb, p, c, m in ((32, 3, 2, 512), (128, 8, 4, 1024), (4, 16, 8, 2048))])
    pred = fit.predict(ask, level=0.9, n_samples=60)
    assert (pred["lo"] <= pred["best"]).all() and (pred["best"] <= pred["hi"]).all() and (pred["lo"] > 0).all()


def test_a_users_usemem_frame_fits_with_the_default_free_set():
    """The issue's frame: metric, value and the configuration columns a user has."""
    gen = SwapModel(reclaim_us_per_folio=3.6, core_write_gb_s=7.0)
    rows = pd.DataFrame([dict(metric="usemem_throughput_kib_s", folio_kb=kb, processes=p, cpus=2, memcg_mb=m,
                              bytes_per_process=1536 * 2**20, swap_device="zram", compressor="lzo-rle",
                              virtualized=True, arch="x86_64", large_share=ls)
                         for kb, ls in ((4, 1.0), (16, 0.94), (64, 0.63), (2048, 0.2))
                         for p in (1, 2) for m in (256, 512)])
    data = synthetic(gen, rows, rel=0.02)
    fit = SwapModel().fit(data)
    assert set(fit.names) == set(SwapModel.FREE)
    recovered(fit, dict(reclaim_us_per_folio=3.6, core_write_gb_s=7.0))
    ask = pd.DataFrame([dict(metric="usemem_throughput_kib_s", folio_kb=kb, processes=p, cpus=2, memcg_mb=m,
                             bytes_per_process=1536 * 2**20, swap_device="zram", virtualized=True, arch="x86")
                        for kb, p, m in ((32, 1, 384), (128, 3, 768), (256, 2, 1024))])
    pred = fit.predict(ask, level=0.9, n_samples=60)
    assert {"best", "mean", "lo", "hi", "lo_fit", "hi_fit", "dropped_draws", "uninformative"} <= set(pred.columns)
    assert (pred["hi"] > pred["lo"]).all() and (pred["hi"] >= pred["hi_fit"]).all() and (pred["lo"] <= pred["lo_fit"]).all()
    # the summary does not report a class default that every row overrode as a fixed value
    text = fit.summary()
    fixed = text[text.index("(fixed)"):]
    assert "memcg_mb" not in fixed and "bytes_per_process" not in fixed and "fault_us_per_folio" in fixed
    assert "memcg_mb" in text[text.index("(set by every row)"):text.index("(fixed)")]


def test_tlb_model_recovers_its_rates_across_cpus_guests_and_policies():
    truth = dict(demotion_rate_per_s=3e4, irq_us=1.7)
    gen = TlbModel(work_s=100.0).set(**truth)  # nested fields (costs.irq_us) by their flat names
    rows = pd.DataFrame([dict(metric=m, cpus=n, virtualized=virt, policy=pol)
                         for n in (4, 16, 64) for virt in (False, True) for pol in ("immediate", "batched")
                         for m in ("tlb_shootdowns_per_s", "tlb_overhead_pct")])
    data = synthetic(gen, rows)
    fit = TlbModel(work_s=100.0).fit(data, free=list(truth))
    recovered(fit, truth)
    pred = fit.predict(pd.DataFrame([dict(metric="tlb_overhead_pct", cpus=32, virtualized=True,
                                          policy="batched", batch_folios=512)]), n_samples=60)
    assert pred["lo"].iloc[0] <= pred["best"].iloc[0] <= pred["hi"].iloc[0]


def test_lock_system_recovers_hold_and_work_from_a_cpu_sweep():
    truth = dict(critical_section_hold_us=0.35, work_us=2.5)
    gen = LockSystem().set(**truth)
    rows = pd.DataFrame([dict(metric=m, cpus=n, lock="lock") for n in (1, 2, 4, 8, 16, 32)
                         for m in ("operations_per_s", "lock_wait_avg_us")])
    rows = rows[~((rows["metric"] == "lock_wait_avg_us") & (rows["cpus"] == 1))]  # nobody waits alone
    data = synthetic(gen, rows)
    fit = LockSystem().fit(data, free=list(truth))
    recovered(fit, truth)
    pred = fit.predict(pd.DataFrame({"metric": ["operations_per_s"], "cpus": [64], "lock": ["lock"]}), n_samples=60)
    assert pred["lo"].iloc[0] <= pred["best"].iloc[0] <= pred["hi"].iloc[0]


# --- the generic rules --------------------------------------------------------------------------
def test_a_column_named_like_a_field_overrides_it_for_its_row():
    m = SwapModel()
    rows = pd.DataFrame({"metric": ["swapout_kib_s"] * 3, "processes": [1, 2, np.nan]})
    a, b, c = m.evaluate(rows)
    assert a == c == m.solve()["swapout_kib_s"] and b == m.set(processes=2).solve()["swapout_kib_s"]
    with pytest.raises(TypeError, match="processes"):
        m.evaluate(rows.assign(processes=["many", 2, 1]))


def test_free_must_name_fittable_fields():
    with pytest.raises(ValueError, match="no field 'zero_us'"):
        SwapModel().with_free(["zero_us"])
    with pytest.raises(ValueError, match="processes is a count"):
        SwapModel().with_free(["processes"])
    with pytest.raises(ValueError, match="virtualized is a switch"):
        SwapModel().with_free(["virtualized"])
    with pytest.raises(TypeError, match="free"):
        SwapModel().with_free("reclaim_us_per_folio")


def test_variants_map_a_variant_column_and_refuse_unknown_ones():
    m = SwapModel(kernel="6.9", folio_kb=64, variants={"old": {"swap_whole_mthp": False}, "new": {"swap_whole_mthp": True}})
    rows = pd.DataFrame({"metric": ["swapout_kib_s_change_pct"], "variant": ["new"], "baseline": ["old"]})
    assert m.evaluate(rows)[0] > 0  # whole 64K folios beat split ones
    with pytest.raises(ValueError, match="variant"):
        m.evaluate(rows.assign(variant="newer"))
    with pytest.raises(ValueError, match="variants"):
        SwapModel(variants={"x": {"no_such_field": 1}})


def test_a_cost_moves_with_the_cpu_preset():
    """Table-derived costs follow a row's cpu_model in proportion to the presets; a fitted value keeps its ratio."""
    m = SwapModel(cpu_model="generic-x86")
    moved = m.configure(cpu_model="zen3-epyc")
    assert moved.ipi_send_us == pytest.approx(m.ipi_send_us * 2.5 / 2.45)
    fitted = m.set(ipi_send_us=2 * m.ipi_send_us).configure(cpu_model="zen3-epyc")
    assert fitted.ipi_send_us == pytest.approx(2 * moved.ipi_send_us)
    assert m.configure(cpu_model="ampere-altra").arch == "arm64"


def test_set_of_a_cpu_or_compressor_brings_its_costs():
    """set() of a table's input is the other table's costs, as configure() and a fresh construction give:
    it kept the first preset's costs under the new name before (mem_bw_gb_s 143 for haswell-ep's 95.6, a
    profile's kernel_speed 1.0 for its measured 0.54)."""
    from mmcost import datasets

    for cpu in ("haswell-ep", "ampere-altra", str(datasets.path("kvm_6_18_swapin") / "second_vm_profile_b.toml")):
        fresh, via_set = SwapModel(cpu_model=cpu), SwapModel().set(cpu_model=cpu)
        for f in ("mem_bw_gb_s", "ipi_send_us", "kernel_speed", "compress_us_per_page", "arch"):
            assert via_set.get(f) == pytest.approx(fresh.get(f)) if f != "arch" else via_set.arch == fresh.arch, (cpu, f)
    lz4 = SwapModel(compressor="lz4")
    assert SwapModel().set(compressor="lz4").compress_us_per_page == pytest.approx(lz4.compress_us_per_page)
    # a number set with the change is the caller's; a float-only set leaves the tables alone
    assert SwapModel().set(cpu_model="haswell-ep", mem_bw_gb_s=50.0).mem_bw_gb_s == 50.0
    assert SwapModel(cpu_model="haswell-ep").set(mem_bw_gb_s=50.0).ipi_send_us == pytest.approx(
        SwapModel(cpu_model="haswell-ep").ipi_send_us)


def test_mechanisms_pickle_and_describe_themselves():
    for m in (SwapModel(), TlbModel(), LockSystem()):
        m.solve()
        back = pickle.loads(pickle.dumps(m))
        assert back == m and back.solve()[back.solve().quantities[0].name] == m.solve()[m.solve().quantities[0].name]
        d = m.describe()
        assert {"field", "value", "kind", "unit", "free", "prior"} <= set(d.columns)
        assert (d.loc[d["kind"] == "float", "unit"] != "").all()


def test_a_plan_equals_configuring_each_row_at_each_parameter_set():
    """Model.plan reuses each row group's configuration across parameter sets
    (setting the parameters on top) unless a parameter is one the row moves
    with its tables. Both cases against the definition: the mechanism set to
    the parameters, then configured by the row, then solved."""
    from mmcost.swap import SwapModel

    model = SwapModel()
    rows = pd.DataFrame([
        {"metric": "swapout_kib_s", "folio_kb": 64, "processes": 8},
        {"metric": "swapout_kib_s", "folio_kb": 4, "processes": 8, "cpu_model": "ampere-altra"},  # moves costs
        {"metric": "sys_time_s", "folio_kb": 4, "processes": 2, "cpu_model": "xeon-8255c"},
        {"metric": "swapout_kib_s", "folio_kb": 4, "processes": 4, "ipi_send_us": 0.7},  # the row's own value wins
    ])
    plan = model.plan(rows)
    sets = ({"reclaim_us_per_folio": model.get("reclaim_us_per_folio") * 1.3},  # not a table leaf
            {"tlbi_us": model.get("tlbi_us") * 3.0, "reclaim_us_per_folio": 0.9},  # a leaf ampere-altra moves
            {"mem_bw_gb_s": model.get("mem_bw_gb_s") / 8},  # one xeon-8255c moves
            {})
    wants = []
    for p in sets:
        base = model.set(**p) if p else model
        wants.append([base.configure(**{k: v for k, v in r.items() if k != "metric" and pd.notna(v)}).solve()[r["metric"]]
                      for r in rows.to_dict("records")])
        np.testing.assert_allclose(plan(p), wants[-1], rtol=1e-12)
    # the batch (one MVA call for every draw's networks) is the same, row by row
    np.testing.assert_allclose(model.plan(rows).many(sets), wants, rtol=1e-12)


def test_a_lock_plan_over_many_draws_is_each_draw_alone():
    """Plan.many solves every draw's networks in one batch (analytic_many):
    the same numbers as the draws one at a time, for rows of several CPU counts."""
    model = LockSystem(8)
    rows = pd.DataFrame([{"metric": m, "cpus": n, "lock": "lock"} for n in (1, 2, 16, 96)
                         for m in ("operations_per_s", "lock_wait_avg_us")])
    sets = [{"critical_section_hold_us": h, "work_us": w} for h, w in ((0.05, 1.0), (0.2, 0.7), (1.5, 3.0))]
    np.testing.assert_allclose(model.plan(rows).many(sets), [model.plan(rows)(p) for p in sets], rtol=1e-13)


def test_setting_many_nested_fields_at_once_equals_setting_them_one_by_one():
    """set() copies each nested object once for all its changed leaves; the
    result is what one leaf at a time gives."""
    from mmcost.locks import Dist

    m = TlbModel(cpus=8, policy="deferred", reuse=Dist.exponential(5000.0))
    values = {"irq_us": 1.5, "ipi_send_us": 0.7, "walk_ns": 31.0, "reuse_mean_us": 800.0, "cpus": 16,
              "vm_exit_us": 2.5, "reuse_cv": 0.0}
    one_by_one = m
    for name, val in values.items():
        one_by_one = one_by_one.set(**{name: val})
    together = m.set(**values)
    assert together == one_by_one
    assert together.costs.irq_us == 1.5 and together.reuse.mean_us == 800.0 and together.cpus == 16
    assert m.costs.irq_us != 1.5  # the original is untouched


def test_changes_to_a_whole_field_and_its_leaves_apply_in_order():
    """A value for a whole field drops the changes below it made before, and
    is the start of those made after (what one change at a time does)."""
    from dataclasses import dataclass

    from mmcost.mechanism import _set, _set_many

    @dataclass(frozen=True)
    class Inner:
        a: float = 0.0
        b: float = 0.0

    @dataclass(frozen=True)
    class Outer:
        inner: Inner = Inner()
        pair: tuple = (Inner(), Inner())

    inner, a, b = (("attr", "inner"),), (("attr", "inner"), ("attr", "a")), (("attr", "inner"), ("attr", "b"))
    second_b = (("attr", "pair"), ("item", 1), ("attr", "b"))
    for changes in ([(a, 1.0), (inner, Inner(5.0, 6.0)), (b, 2.0)],
                    [(inner, Inner(5.0, 6.0)), (a, 1.0), (second_b, 3.0)],
                    [(b, 2.0), (second_b, 3.0), (a, 1.0), (inner, Inner(7.0, 8.0))]):
        expected = Outer()
        for path, value in changes:
            expected = _set(expected, path, value)  # one change at a time
        assert _set_many(Outer(), changes) == expected
    assert _set_many(Outer(), [(a, 1.0), (inner, Inner(5.0, 6.0)), (b, 2.0)]) == Outer(Inner(5.0, 2.0))
    assert _set_many(Outer(), [(second_b, 3.0)]).pair == (Inner(), Inner(0.0, 3.0))


def test_no_bundled_study_variant_pins_a_switch_a_kernel_column_sets():
    """A study's kernel variants name their kernel (patches after '+'), so a row's kernel column
    sets every switch; only what no kernel has (migrc's deferred flushing) is set as a field."""
    from mmcost import studies
    from mmcost.mechanism import Mechanism
    from mmcost.swap_alloc_lock import SwapAllocLockModel

    with_model = [studies.get(name) for name in studies.names() if studies.get(name).mechanism is not type(None)]
    models = [s.model() for s in with_model] + [SwapAllocLockModel()]  # (a study that fits nothing has no model)
    models = [m for m in models if isinstance(m, Mechanism)]  # (a study of a table model has no switches)
    assert len(models) >= 10
    for m in models:
        switches = {n for n, lf in m.leaves.items() if lf.knob.kernel}
        for name, over in m.variants.items():
            assert not switches & set(over), (m.name, name, over)
            assert over.get("policy") in (None, "deferred"), (m.name, name, over)


def test_a_row_kernel_overrides_a_study_variant_and_the_model():
    """migrc's 'before' is v6.9 itself: a row with kernel 6.2 flushes per PTE (before v6.3), a row
    that also sets the switch keeps it; the 'per-folio' counterfactual is v6.9 without the batch."""
    from mmcost import studies

    m = studies.get("migrc_tlb").model()
    policy = {k: m.configure(variant=v, **extra).flush_policy.value for k, v, extra in (
        ("before", "before", {}), ("before 6.2", "before", {"kernel": "6.2"}), ("per-folio", "per-folio", {}),
        ("6.2, switch on", "before", {"kernel": "6.2", "batched_migration_flush": True}),
        ("after 6.2", "after", {"kernel": "6.2"}))}
    assert policy == {"before": "batched", "before 6.2": "immediate", "per-folio": "immediate",
                      "6.2, switch on": "batched", "after 6.2": "deferred"}


def test_a_configuration_column_is_bounded_by_the_field_not_by_a_fits_parameter_bounds():
    """A study narrows a fitted rate to [0.5, 5e7] and a prior's rate to <= 200/s: a row asking
    about 0.1 demotions/s or 500 other rounds/s is a configuration, answered as the unbounded
    mechanism answers it; only the field's own validation (a rate >= 0) refuses a row."""
    truth = dict(demotion_rate_per_s=3e4)
    narrow = dict(demotion_rate_per_s=dict(value=5e4, lower=0.5, upper=5e7),
                  other_round_rate_per_s=dict(value=2.0, upper=200.0))
    gen = TlbModel(work_s=100.0).set(**truth)
    rows = pd.DataFrame([dict(metric="tlb_shootdowns_per_s", cpus=n, policy=pol)
                         for n in (4, 16, 64) for pol in ("immediate", "batched")])
    fit = TlbModel(work_s=100.0).with_parameters(**narrow).fit(synthetic(gen, rows), free=list(truth))
    ask = pd.DataFrame([dict(metric="tlb_shootdowns_per_s", cpus=16, policy="batched", demotion_rate_per_s=0.1),
                        dict(metric="tlb_shootdowns_per_s", cpus=16, policy="batched", other_round_rate_per_s=500.0)])
    pred = fit.predict(ask, n_samples=20)
    plain = TlbModel(work_s=100.0).set(**fit.model.values())  # the mechanism's own bounds only
    want = [plain.set(cpus=16, policy="batched", demotion_rate_per_s=0.1).solve()["tlb_shootdowns_per_s"],
            plain.set(cpus=16, policy="batched", other_round_rate_per_s=500.0).solve()["tlb_shootdowns_per_s"]]
    np.testing.assert_allclose(pred["best"], want, rtol=1e-12)
    # the row sets the only free parameter: no band from the parameters (the structural error's remains)
    assert pred["lo_fit"].iloc[0] == pred["hi_fit"].iloc[0] == pred["best"].iloc[0]
    with pytest.raises(ValueError, match="demotion_rate_per_s"):
        fit.predict(ask.assign(demotion_rate_per_s=-1.0), n_samples=2)
    with pytest.raises(ValueError, match="demotion_rate_per_s"):  # a parameter's value keeps its bounds
        fit.model.with_parameters(demotion_rate_per_s=0.1)


def test_a_row_says_no_memcg_limit_and_no_cpu_preset_with_none():
    """An empty cell keeps the fit's memcg limit and CPU; "none" (or inf for memcg_mb, in a CSV
    column too) means no memcg limit (global reclaim at the row's swapped_share) and the arch's
    generic CPU preset, through a fit's predict frame."""
    import io

    truth = dict(reclaim_us_per_folio=4.5)
    base = SwapModel(cpu_model="ampere-altra", memcg_mb=512, bytes_per_process=2**30)
    rows = pd.DataFrame([dict(metric="swapout_kib_s", folio_kb=kb, processes=p) for kb in (4, 64) for p in (1, 2)])
    fit = base.fit(synthetic(base.set(**truth), rows), free=list(truth))
    ask = pd.read_csv(io.StringIO("metric,memcg_mb,swapped_share,cpu_model\n"
                                  "swapout_kib_s,,,\n"             # the fit's own: 512 MiB, Altra
                                  "swapout_kib_s,none,0.5,\n"      # global reclaim, half the bytes swapped
                                  "swapout_kib_s,inf,0.5,\n"       # the same, spelled as no limit
                                  "swapout_kib_s,256,,none\n"))    # a number in a column of strings; generic arm64
    pred = fit.predict(ask, n_samples=10)
    m = fit.model
    assert m.cpu_model == "ampere-altra" and m.memcg_mb == 512
    want = [m.solve()["swapout_kib_s"],
            m.set(memcg_mb=None, swapped_share=0.5).solve()["swapout_kib_s"],
            m.set(memcg_mb=None, swapped_share=0.5).solve()["swapout_kib_s"],
            m.set(memcg_mb=256.0, cpu_model=None).solve()["swapout_kib_s"]]
    np.testing.assert_allclose(pred["best"], want, rtol=1e-12)
    assert m.set(cpu_model=None).arch == "arm64" and m.set(cpu_model=None).cpu_model is None
    assert len(set(np.round(pred["best"], 6))) == 3  # none differs from the empty cell
    with pytest.raises(ValueError, match="processes"):  # a field that has no None refuses "none"
        fit.predict(ask.assign(processes="none"), n_samples=2)


def test_a_column_the_mechanism_ignores_warns_with_the_closest_field_names():
    import warnings

    from mmcost.model import UnknownColumnWarning

    m = SwapModel()
    rows = pd.DataFrame({"metric": ["swapout_kib_s"] * 2, "folio_kib": [64, 64], "swap_table": [True, False]})
    with pytest.warns(UnknownColumnWarning, match=r"'folio_kib' \(closest: folio_kb\).*'swap_table'"):
        typo = m.evaluate(rows)
    assert (typo == m.solve()["swapout_kib_s"]).all()  # what the warning says: the columns changed nothing
    data = synthetic(m, pd.DataFrame({"metric": ["swapout_kib_s"] * 2, "folio_kb": [4, 64]}))
    with pytest.warns(UnknownColumnWarning, match="folio_kib") as said:
        fit = m.fit(data.assign(folio_kib=64), free=["reclaim_us_per_folio"])
    assert len([w for w in said if w.category is UnknownColumnWarning]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.residuals, fit.loo()  # said once, by the fit
        # every column a mechanism reads or the schema knows: fields, variant, baseline_<field>, the
        # schema's own (numa_nodes, experiment, note), a fit's outputs, labels; LockSystem's lock column
        known = data.assign(experiment="e", variant="base", baseline="base", baseline_folio_kb=4, note="",
                            numa_nodes=1, scenario="mine", best=0.0)
        fit.predict(known, n_samples=2)
        LockSystem().evaluate(pd.DataFrame({"metric": ["lock_wait_avg_us"], "cpus": [4], "lock": ["lock"]}))
    with pytest.warns(UnknownColumnWarning, match="'lock'"):  # a SwapModel reads no lock column
        fit.predict(known.assign(lock="x"), n_samples=2)
