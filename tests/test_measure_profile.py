"""mmcost measure machine: the probe's output read, costs summarised, profiles written and read."""

import math
import os
import subprocess

import numpy as np
import pytest

from mmcost.measure import profile as P


def test_a_cost_is_the_median_and_the_robust_spread():
    rounds = [10.0, 11.0, 9.0, 10.5, 30.0]  # one outlier
    c = P.Cost.of("x_us", rounds, "us", "m")
    assert c.value == 10.5  # the median, not the mean (14.1)
    # MAD about 10.5: |-.5, .5, -1.5, 0, 19.5| -> median 0.5; x 1.4826
    assert c.sd == pytest.approx(1.4826 * 0.5)
    assert c.rel_spread == pytest.approx(1.4826 * 0.5 / 10.5)
    with pytest.raises(P.ProbeError, match="x_us"):
        P.Cost.of("x_us", [1.0, float("nan")], "us", "m")


@pytest.mark.parametrize("text,match", [
    ("", "no rounds"),
    ("round=0 zero_gb_s=5.0\n", "lacks"),
    ("round=0 zero_gb_s=5.0 copy_gb_s=\n", "line 1 is not a round"),
    ("round=0 zero_gb_s=5.0 copy_gb_s=6.0\nSegmentation fault\n", "line 2 is not a round"),
    ("round=0 zero_gb_s=5.0 copy_gb_s=6.0 extra\n", "line 1"),
])
def test_garbled_probe_output_is_refused_naming_the_line(text, match):
    with pytest.raises(P.ProbeError, match=match):
        P.parse_rounds(text, ("zero_gb_s", "copy_gb_s"))


def test_probe_output_is_read_in_its_units():
    rows = P.parse_rounds("round=0 zero_gb_s=5.5 copy_gb_s=6.25\nround=1 zero_gb_s=1e1 copy_gb_s=7\n",
                          ("zero_gb_s", "copy_gb_s"))
    assert rows == [{"round": 0, "zero_gb_s": 5.5, "copy_gb_s": 6.25}, {"round": 1, "zero_gb_s": 10.0, "copy_gb_s": 7.0}]


def fake_probe(lines):
    """A runner that answers every probe call with ``lines``."""
    def run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 0, stdout="".join(lines), stderr="")
    return run


def test_ipi_costs_from_the_shootdown_rounds(monkeypatch):
    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    # 1 IPI per zap; the sender takes 6 us more with the target, the target loses 2 us per IPI
    lines = [f"round={i} targets=1 ops=100 sender_us={8 + d} sender_base_us=2 tlb_irqs=1 target_lost_us={2 + d}\n"
             for i, d in enumerate([0.0, 0.1, -0.1])]
    prof = P.Profile({})
    P.measure_ipi(prof, [0, 1], 3, 100, runner=fake_probe(lines))
    assert prof.costs["ipi_sender_extra_us"].value == pytest.approx(6.0)
    assert prof.costs["ipi_target_us"].value == pytest.approx(2.0)
    assert prof.costs["ipi_sender_us"].value == pytest.approx(4.0)  # less the ack wait
    # targets that took no IPI (descheduled, lazy TLB) give no cost, and a note saying why
    quiet = [f"round={i} targets=1 ops=100 sender_us=2.1 sender_base_us=2 tlb_irqs=0.03 target_lost_us=-1\n"
             for i in range(3)]
    prof = P.Profile({})
    P.measure_ipi(prof, [0, 1], 3, 100, runner=fake_probe(quiet))
    assert prof.costs == {} and "not running the mm" in prof.notes[0]


def refill_line(i, us_per_flush, pages=1024.0, huge=0):
    return (f"round={i} bytes=4194304 stride=1 cold_bytes=0 evict_bytes=0 huge={huge} cold_huge=0 flush_every=4096 "
            f"flushes=244 base_ns_per_load=5.1 flush_op_us=1.56 noop_op_us=0.105 interval_extra_us={us_per_flush + 1.45} "
            f"refill_us_per_flush={us_per_flush} refill_sem_us=0.8 hot_pages_touched={pages} cold_pages_touched=0.00 "
            f"hot_thp_kib=0 cold_thp_kib=0 check=0\n")


def test_the_refill_cost_is_per_page_refilled_in_ns(monkeypatch):
    """The probe prints microseconds per flush and the pages refilled per flush: 14.336 us over 1,024 pages is
    14 ns a page (not 14,000, not 0.014)."""
    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    prof = P.Profile({})
    P.measure_refill(prof, 1, 3, runner=fake_probe([refill_line(i, u) for i, u in enumerate((14.336, 13.312, 15.36))]))
    c = prof.costs["tlb_refill_ns"]
    assert c.unit == "ns" and c.value == pytest.approx(14.0) and c.rounds == pytest.approx((14.0, 13.0, 15.0))
    # a round over 2M pages, or one that touched nothing, is not this measurement
    for bad in (refill_line(0, 14.0, huge=1), refill_line(0, 14.0, pages=0.0)):
        with pytest.raises(P.ProbeError, match="refill round 0"):
            P.measure_refill(P.Profile({}), 1, 3, runner=fake_probe([bad]))
    with pytest.raises(ValueError, match="ops"):
        P.measure_refill(P.Profile({}), 1, 3, ops=-5, runner=fake_probe([]))


def test_a_measured_refill_is_the_tlb_models_refill_cost(tmp_path):
    from mmcost.tlb import TlbModel

    prof = P.load(a_profile(tmp_path))
    prof.costs["tlb_refill_ns"] = P.Cost.of("tlb_refill_ns", [14.0, 15.0, 16.0], "ns", "refill")
    path = tmp_path / "vm2.toml"
    path.write_text(P.to_toml(prof))
    m = TlbModel(cpu_model=str(path), virtualized=True)
    assert m.costs.refill_ns == 15.0
    prior = {p.name: p.prior for p in m.parameters}["refill_ns"]
    assert "Test CPU" in prior.source and prior.width == pytest.approx(np.hypot(P.Cost.of("x", [14.0, 15.0, 16.0],
                                                                                         "ns", "").sd, 1.5))
    assert TlbModel(cpu_model=str(a_profile(tmp_path)), virtualized=True).costs.refill_ns is None  # not measured


@pytest.mark.skipif(os.cpu_count() < 2, reason="pinned to the last CPU")
def test_the_packaged_probe_measures_a_refill_in_ns():
    """The real probe, one short round: it parses, in ns per page (a refill is a page walk: not us, not ps)."""
    prof = P.Profile({})
    P.measure_refill(prof, 1, 1, ops=40_960)
    assert abs(prof.costs["tlb_refill_ns"].value) < 1e4
    rows = P.run_probe("refill", 2 << 20, "--stride", 8, "--flush-every", 256, "--ops", 1024, "--rounds", 1,
                       keys=("refill_us_per_flush", "hot_pages_touched"))
    assert rows[0]["hot_pages_touched"] == 64 and rows[0]["stride"] == 8
    for args, match in (((-4096,), "BYTES must be an integer"), ((1 << 20, "--flush-every", 0), "--flush-every"),
                        ((1 << 20, "--stride", 1024), "at least one --stride")):
        with pytest.raises(P.ProbeError, match=match):
            P.run_probe("refill", *args, "--rounds", 1, keys=("refill_us_per_flush",))


def test_a_failing_probe_says_what_it_printed(monkeypatch):
    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    def run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="mmcost-probe: pin to CPU 7: Invalid argument")
    with pytest.raises(P.ProbeError, match="pin to CPU 7"):
        P.measure_bandwidth(P.Profile({}), 3, runner=run)


def test_a_profile_reads_back_as_written(tmp_path):
    prof = P.Profile({"cpu": 'Xeon "quoted"', "vcpus": 2, "virtualized": True, "loadavg_1m": float("nan"),
                      "mthp_kb": [16, 64], "flags": {"pcid": True, "invlpgb": False}},
                     notes=["one note"])
    prof.costs["ipi_target_us"] = P.Cost.of("ipi_target_us", [2.0, 2.5, 3.0], "us", "shootdown")
    prof.per_size[64] = {"fault_us_per_folio": P.Cost.of("fault_us_per_folio", [5.0, 6.0], "us", "fault")}
    prof.per_compressor["lzo-rle"] = {"compression_ratio": P.Cost.of("compression_ratio", [2.6], "1", "mm_stat")}
    path = tmp_path / "p.toml"
    path.write_text(P.to_toml(prof))
    back = P.load(path)
    assert back.description["cpu"] == 'Xeon "quoted"' and back.description["flags"] == {"pcid": True, "invlpgb": False}
    assert math.isnan(back.description["loadavg_1m"]) and back.notes == ["one note"]
    assert back.costs["ipi_target_us"] == prof.costs["ipi_target_us"]
    assert back.per_size[64]["fault_us_per_folio"].value == 5.5
    assert back.per_compressor["lzo-rle"]["compression_ratio"].value == 2.6


@pytest.mark.parametrize("text,match", [
    ("[costs.x]\nvalue = 1.0\nsd = 0.1\nunit = 'us'\n", r"no \[machine\]"),
    ("[machine]\n[costs.x]\nvalue = 1.0\nunit = 'us'\n", r"costs.x has no 'sd'"),
    ("[machine]\n[costs.x]\nvalue = nan\nsd = 0.1\nunit = 'us'\n", r"costs.x needs a finite value"),
    ("[machine]\n[costs.x]\nvalue = 1.0\nsd = -0.1\nunit = 'us'\n", r"costs.x needs"),
    ("[machine]\n[fault.64k.x]\nvalue = 1.0\nsd = 0.1\nunit = 'us'\n", r"fault.64k"),
    ("[machine\n", "not TOML"),
])
def test_a_bad_profile_is_refused_naming_the_table(tmp_path, text, match):
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        P.load(path)


def test_the_description_comes_from_procfs_and_sysfs(tmp_path):
    files = {
        "proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU @ 2.0GHz\nflags\t\t: fpu pcid invpcid hypervisor\n",
        "sys/devices/system/cpu/vulnerabilities/meltdown": "Mitigation: PTI\n",
        "proc/sys/kernel/osrelease": "6.18.0-test\n",
        "proc/loadavg": "0.25 0.10 0.05 1/100 42\n",
        "sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled": "never\n",
        "sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled": "never\n",
        "sys/block/zram0/comp_algorithm": "lzo [lz4] zstd\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    d = P.describe(tmp_path)
    assert d["cpu"] == "Test CPU @ 2.0GHz" and d["virtualized"] and d["pti"]
    assert d["flags"]["pcid"] and d["flags"]["invpcid"] and not d["flags"]["invlpgb"]
    assert d["kernel"] == "6.18.0-test" and d["mthp_kb"] == [64, 2048] and d["loadavg_1m"] == 0.25
    assert d["zram_compressors"] == ["lzo", "lz4", "zstd"] and d["lru_gen"] is False


@pytest.mark.skipif(os.cpu_count() < 2, reason="the handoff needs two CPUs")
def test_the_packaged_probe_runs_and_prints_its_units():
    """The real probe, one short round each: its output parses, in plausible units."""
    prof = P.Profile({})
    P.measure_bandwidth(prof, 1, nbytes=8 << 20)
    P.measure_handoff(prof, [0, 1], 1, ops=20_000)
    assert 0.05 < prof.costs["zero_gb_s"].value < 1000  # GB/s, not B/s or MB/s
    assert 1 < prof.costs["handoff_ns"].value < 1e6  # ns per transfer
    with pytest.raises(P.ProbeError, match="--rounds must be an integer"):
        P.run_probe("bandwidth", 1 << 20, "--rounds", 0, keys=("zero_gb_s",))


# --- a profile as a CPU model ------------------------------------------------------------------------
def a_profile(tmp_path, **extra):
    """A profile of hand-chosen numbers: faults on an exact line 0.8 us + 0.06 us per page after zeroing at
    10 GB/s; a zram write of 3.05 us per page; IPIs 10 us on the target, 7.5 us for the sender."""
    prof = P.Profile({"cpu": "Test CPU", "arch": "x86_64", "vcpus": 2, "virtualized": True, "hypervisor": "kvm",
                      "kernel": "6.18.0", "clock_ghz": 2.0, **extra})
    prof.costs["ipi_target_us"] = P.Cost.of("ipi_target_us", [9.8, 10.0, 10.2], "us", "shootdown")
    prof.costs["ipi_sender_us"] = P.Cost.of("ipi_sender_us", [7.5, 7.5, 7.5], "us", "shootdown")
    prof.costs["zero_gb_s"] = P.Cost.of("zero_gb_s", [10.0, 10.0, 10.0], "GB/s", "bandwidth")
    for kb in (4, 64, 2048):
        f = 0.8 + 0.06 * kb / 4
        prof.per_size[kb] = {"fault_us_per_folio": P.Cost.of("fault_us_per_folio", [f] * 3, "us", "fault")}
    prof.per_compressor["lz4"] = {"zram_write_us_per_page": P.Cost.of("w", [3.05] * 3, "us", "blockwrite"),
                                  "compression_ratio": P.Cost.of("r", [2.5], "1", "mm_stat")}
    path = tmp_path / "vm.toml"
    path.write_text(P.to_toml(prof))
    return path


def test_a_profile_is_a_cpu_model_whose_measured_costs_replace_the_presets(tmp_path):
    from mmcost import cpu_models
    from mmcost.swap import SwapModel

    path = a_profile(tmp_path)
    cpu = cpu_models.get(str(path))
    assert cpu.arch == "x86" and cpu.clock_ghz == 2.0 and cpu.based_on == "generic-x86"
    # the fault line's intercept and slope, recovered from the three sizes
    assert cpu.measured["fault_us_per_folio"].value == pytest.approx(0.8, rel=1e-9)
    assert cpu.measured["pte_us"].value == pytest.approx(0.06, rel=1e-9)
    # zram's write less its other work in the swap model's priors (zram_us_per_page 0.3 + zs_malloc 0.15)
    assert cpu.measured["compress_us_per_page@lz4"].value == pytest.approx(3.05 - 0.45)
    # the guest's exit is inside the measured send: none on top
    assert cpu.measured["vm_exit_us"].value == 0.0
    m = SwapModel(cpu_model=str(path), compressor="lz4", virtualized=True, cpus=2)
    assert (m.irq_us, m.ipi_send_us, m.compression_ratio, m.core_write_gb_s) == (10.0, 7.5, 2.5, 10.0)
    # priors: the measured spread and 10% of the value in quadrature, naming the machine
    prior = {p.name: p.prior for p in m.parameters}["irq_us"]
    sd = P.Cost.of("x", [9.8, 10.0, 10.2], "us", "").sd
    assert prior.width == pytest.approx(np.hypot(sd, 1.0)) and "Test CPU" in prior.source
    # the same model on the generic preset takes none of them
    g = SwapModel(compressor="lz4", virtualized=True, cpus=2)
    assert g.irq_us == pytest.approx(1.0) and g.compression_ratio == pytest.approx(2.10)


def test_describe_says_where_each_value_comes_from(tmp_path):
    from mmcost.swap import SwapModel

    path = a_profile(tmp_path)
    d = SwapModel(cpu_model=str(path), compressor="lz4", processes=3).describe().set_index("field")["origin"]
    assert d["irq_us"] == d["compression_ratio"] == d["fault_us_per_folio"] == "profile vm.toml"
    assert d["mem_bw_gb_s"] == "preset generic-x86 (not measured)"
    assert d["processes"] == "set" and d["reclaim_us_per_folio"] == "default"
    g = SwapModel(compressor="lz4").describe().set_index("field")["origin"]
    assert g["irq_us"] == "preset generic-x86" and g["compression_ratio"] == "compressor lz4"


def test_a_row_names_a_profile_as_its_cpu_model(tmp_path):
    import pandas as pd

    from mmcost.swap import SwapModel

    path = a_profile(tmp_path)
    m = SwapModel(compressor="lz4", virtualized=True, cpus=2, processes=2, memcg_mb=256, bytes_per_process=768 << 20)
    rows = pd.DataFrame({"metric": ["usemem_throughput_kib_s"] * 2, "cpu_model": [str(path), "generic-x86"]})
    got = m.evaluate(rows)
    assert got[0] == pytest.approx(m.configure(cpu_model=str(path)).solve()["usemem_throughput_kib_s"])
    assert got[0] != pytest.approx(got[1], rel=1e-3)
    with pytest.raises(ValueError, match="cpu_model: no machine profile"):
        SwapModel(cpu_model=str(tmp_path / "missing.toml"))
    with pytest.raises(ValueError, match=r"cpu_model must be one of .* or the path of a \.toml file"):
        SwapModel(cpu_model="not-a-preset")


def test_nothing_fitted_predicts_from_the_priors_alone():
    import pandas as pd

    from mmcost.fit import FitResult
    from mmcost.swap import SwapModel

    m = SwapModel(processes=2, memcg_mb=256, bytes_per_process=768 << 20)
    fit = FitResult.of_priors(m)
    assert fit.names == [] and fit.params == {}
    rows = pd.DataFrame({"metric": ["usemem_throughput_kib_s"], "folio_kb": [64]})
    pred = fit.predict(rows, n_samples=50, fixed_priors=True)
    assert pred["best"].item() == pytest.approx(m.evaluate(rows)[0])
    assert pred["lo"].item() < pred["best"].item() < pred["hi"].item()  # the priors' band


def test_measure_machine_dry_run_changes_nothing_and_says_what_it_would(tmp_path, capsys):
    from mmcost.measure.controls import Machine

    said = []
    m = Machine(root=tmp_path, dry_run=True, log=said.append)
    prof = P.machine(None, dry_run=True, machine_control=m, progress=False, root=tmp_path)
    assert prof.costs == {} and any("would measure flush IPIs" in s for s in said)
    assert not list(tmp_path.rglob("*.journal"))


def _bundled_profile():
    from mmcost import datasets

    return str(datasets.path("kvm_6_18_machine") / "profile_b.toml")


@pytest.mark.parametrize("column, theirs, status", [
    ("machine_profile", "profile-id", "same"),            # (the profile's own id, filled in below)
    ("machine_profile", "machine.toml@0123456789ab", "other"),
    ("boot_id", "1901ae91-0d86-411b-93a4-a42f4e41b06b", "same"),
    ("boot_id", "00000000-0000-0000-0000-000000000000", "other"),
    ("kernel", "6.18.44-fc-v973", "other"),             # kvm_6_18_swapout's VM: another build, another host
])
def test_verify_says_whether_the_profile_is_the_runs_machine(column, theirs, status):
    import pandas as pd
    from mmcost.measure.verify import machine_match
    from mmcost.swap import SwapModel

    path = _bundled_profile()
    if theirs == "profile-id":
        theirs = P.profile_id(path)
    runs = pd.DataFrame({column: [theirs, theirs]})
    got = machine_match(runs, SwapModel(cpu_model=path))
    assert (got["status"], got["by"]) == (status, column)
    assert ("WARNING" in got["text"]) == (status == "other")


def test_verify_compares_the_most_specific_record_and_names_mixed_runs():
    import pandas as pd
    from mmcost.measure.verify import machine_match
    from mmcost.swap import SwapModel

    path = _bundled_profile()
    model = SwapModel(cpu_model=path)
    # the boot ids disagree with the profile even though the kernel build is the same: boot_id decides
    runs = pd.DataFrame({"boot_id": ["1901ae91-0d86-411b-93a4-a42f4e41b06b", "ffffffff-0000-0000-0000-000000000000"],
                         "kernel": ["6.18.44-fc-v1147"] * 2})
    assert machine_match(runs, model)["status"] == "mixed"
    assert machine_match(pd.DataFrame({"value": [1.0]}), model)["status"] == "unknown"
    assert machine_match(runs, SwapModel())["status"] == ""  # no profile: nothing to say


# --- swap-in faults ----------------------------------------------------------------------------------
class SwapinMachine:
    """The controls measure_swapin uses: a zram swap of its own per compressor, one mTHP size at a time."""

    def __init__(self):
        self.kb, self.log = 4, []

    def make_zram(self, compressor, disksize, swap=True):
        self.log.append(("make", compressor, disksize, swap))
        return 7

    def drop(self, kind, what):
        self.log.append(("drop", kind, what))

    def mthp_sizes(self):
        return [16, 64, 2048]

    def set_mthp(self, kb):
        self.kb = kb


def test_swapin_faults_are_timed_per_folio_and_a_size_that_fell_back_is_noted(monkeypatch):
    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    m, nbytes = SwapinMachine(), 8 << 20
    pages = nbytes // 4096  # 2048

    def run(cmd, **kwargs):
        assert cmd[1:3] == ["swapin", str(nbytes)]
        # 4K and 16K come back in folios of their size; 64K comes back as 4K pages (one fault a page)
        faults = {4: pages, 16: pages // 4, 64: pages}[m.kb]
        lines = [f"round={r} bytes={nbytes} pswpout_pages={pages} pswpin_pages={pages} majflt={faults} "
                 f"read_us={faults * (5.0 + r)} pageout_us={pages * (7.0 + r)}\n" for r in range(3)]
        return subprocess.CompletedProcess(cmd, 0, stdout="".join(lines), stderr="")

    prof = P.Profile({})
    P.measure_swapin(prof, m, 3, nbytes=nbytes, compressors=["lz4", "lzo"], runner=run)
    # each compressor's device is the only swap while it is measured: swapped off and removed before the next
    assert m.log == [("make", "lz4", 64 << 20, True), ("drop", "swapon", "/dev/zram7"), ("drop", "zram", 7),
                     ("make", "lzo", 64 << 20, True), ("drop", "swapon", "/dev/zram7"), ("drop", "zram", 7)]
    assert sorted(prof.per_compressor["lz4"]) == ["pageout_us_per_folio@16K", "pageout_us_per_folio@4K",
                                                  "swapin_us_per_fault@16K", "swapin_us_per_fault@4K"]  # 64K fell back
    assert prof.per_compressor["lz4"]["swapin_us_per_fault@16K"].value == pytest.approx(6.0)  # the median round
    # the pageout's time over the folios swapped out: 2048 pages in 512 16K folios, 8 us a page in the median round
    assert prof.per_compressor["lz4"]["pageout_us_per_folio@16K"].value == pytest.approx(4 * 8.0)
    assert sorted(P.swapin_sizes(prof.per_compressor["lz4"], "pageout_us_per_folio")) == [4, 16]
    assert any("lz4 64K" in n and "not kept" in n for n in prof.notes)
    assert sorted(P.swapin_sizes(prof.per_compressor["lzo"])) == [4, 16]


def test_a_swapin_line_gives_the_decompression_and_the_per_folio_swapin(tmp_path):
    """Swap-in faults on an exact line, 3.0 us a folio + 2.5 us a page, on a_profile's machine (4K fault
    0.86 us: kernel speed 0.86 / 1.55; 2.0 GHz; a guest). By hand, with SwapInModel's priors:
    per page besides decompression, the PTE 0.06 + the 2-D walk 3 x 75 cycles at 2 GHz (0.1125) + the
    speed x (swapin_us_per_page 0.1 + swap_free 0.1 + zram_read 0.2 + two slot updates 2 x 0.03);
    per folio besides swapin_us_per_folio, the fault 0.8 + the speed x (lookup 0.03 + folio_add_lru 0.05)."""
    from mmcost import cpu_models
    from mmcost.swap import SwapInModel

    prof = P.load(a_profile(tmp_path))
    for kb in (4, 16, 64):
        prof.per_compressor["lz4"][P.swapin_name(kb)] = P.Cost.of("s", [3.0 + 2.5 * kb / 4] * 3, "us", "swapin")
    path = tmp_path / "swapin.toml"
    path.write_text(P.to_toml(prof))
    speed = 0.86 / 1.55
    cpu = cpu_models.get(str(path))
    assert cpu.measured["decompress_us_per_page@lz4"].value == pytest.approx(
        2.5 - (0.06 + 0.1125 + speed * (0.1 + 0.1 + 0.2 + 0.06)), rel=1e-6)
    assert P.swapin_per_folio(P.load(path), cpu_models.default_for("x86")) == pytest.approx(
        (3.0 - 0.8 - speed * (0.03 + 0.05)) / speed, rel=1e-6)
    m = SwapInModel(cpu_model=str(path), compressor="lz4", virtualized=True, cpus=2)
    assert m.decompress_us_per_page == pytest.approx(cpu.measured["decompress_us_per_page@lz4"].value)
    # another compressor keeps lzbench's (nothing measured it)
    assert SwapInModel(cpu_model=str(path), compressor="lzo", virtualized=True, cpus=2).decompress_us_per_page \
        == pytest.approx(5.7 * 4096 / 2.0e3)
