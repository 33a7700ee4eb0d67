"""A guest's first touch of memory its host took back (free page reporting):
the swap model's per-THP charge (mmcost.swap.paths.unbacked_touch_us) derived
by hand, the profile's reading of mmcost-probe firsttouch, verify's band for
2M runs without the warm-up, and the warm-up's rows, each against what it
must be; and, on the project's EPYC guest, the 2M runs measured after the
warm-up against the profile's prediction with nothing fitted."""

import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

from mmcost.measure import profile as P
from mmcost.measure.verify import model_rows, unwarmed_large_runs, verify
from mmcost.swap import SwapModel, paths
from mmcost import datasets

MIB = 2**20


def thp(**kw):
    base = dict(folio_kb=2048, processes=1, memcg_mb=512, bytes_per_process=768 * MIB, swap_device="zram",
                virtualized=True)
    return SwapModel(**{**base, **kw})


def test_the_host_touch_is_charged_per_fresh_thp_by_hand():
    m = thp(unbacked_share=0.5, host_touch_us_per_page=10.0, large_share=0.8)
    # 512 MiB of THPs are faulted before the limit recycles memory, of the 0.8 x 768 MiB written as THPs;
    # half of those unbacked, 512 pages each
    assert paths.unbacked_touch_us(m, 2048) == pytest.approx(512 / (0.8 * 768) * 0.5 * 512 * 10.0)
    assert paths.unbacked_touch_us(m.set(memcg_mb=None, swapped_share=0.3), 2048) == pytest.approx(0.5 * 512 * 10.0)
    assert paths.unbacked_touch_us(m.set(processes=2), 2048) == pytest.approx(512 / (0.8 * 1536) * 0.5 * 512 * 10.0)
    assert paths.unbacked_touch_us(m.set(large_share=0.5), 2048) == pytest.approx(0.5 * 512 * 10.0)  # all fresh
    # a 64K folio is cut from a high-order free block too; 4K pages come from the per-CPU lists: never charged
    assert paths.unbacked_touch_us(m.set(folio_kb=64), 64) == pytest.approx(512 / (0.8 * 768) * 0.5 * 16 * 10.0)
    assert paths.unbacked_touch_us(m, 4) == 0.0
    assert paths.unbacked_touch_us(m.set(unbacked_share=0.0), 2048) == 0.0


def test_the_host_touch_is_the_writers_time_and_nothing_else():
    """One writer under a memcg (no kswapd): the extra system time is the host's price of every page
    of the 512 MiB of THPs faulted before the limit (the later THP charges fail: 4K faults)."""
    cold, warm = thp(unbacked_share=1.0, host_touch_us_per_page=10.0).solve(), thp().solve()
    assert warm["large_fault_share_pct"] == pytest.approx(100 * 2 / 3, abs=0.5)
    extra = 512 * MIB / 4096 * 10.0 * 1e-6  # s
    assert cold["sys_time_s"] - warm["sys_time_s"] == pytest.approx(extra, rel=0.02)
    assert cold["usemem_throughput_kib_s"] < warm["usemem_throughput_kib_s"]


def test_a_preset_has_no_host_and_a_profile_brings_its_own():
    assert thp().host_touch_us_per_page == 0.0
    m = thp(cpu_model=str(datasets.path("kvm_6_18_machine_epyc") / "profile_d.toml"))
    assert 5.0 < m.host_touch_us_per_page < 15.0


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_an_impossible_unbacked_share_is_refused(bad):
    with pytest.raises(ValueError, match="unbacked_share"):
        thp(unbacked_share=bad).solve()


def chunks(fresh, again):
    return [{"round": 0, "chunk": i, "touch_us": v} for i, v in enumerate(fresh)] + \
           [{"round": 1, "chunk": i, "touch_us": v} for i, v in enumerate(again)]


def test_the_profile_reads_the_unbacked_thps_off_the_first_pass():
    # 8 warm THPs at 200 us, 8 unbacked at 5320 us; the second pass warm
    per_page, warm, share = P.host_touch(chunks([200.0] * 8 + [5320.0] * 8, [200.0] * 16))
    assert warm == 200.0 and share == 0.5
    assert per_page == pytest.approx([10.0] * 8)
    with pytest.raises(P.ProbeError, match="round 1"):
        P.host_touch(chunks([200.0] * 4, []))


def fake_probe(fresh, again):
    lines = "".join(f"round={r['round']} chunk={r['chunk']} touch_us={r['touch_us']}\n" for r in chunks(fresh, again))
    return lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, stdout=lines, stderr="")


class Thp:
    def __init__(self):
        self.sizes = []

    def set_mthp(self, kb):
        self.sizes.append(kb)


def test_the_profile_keeps_the_host_touch_only_where_it_saw_one(monkeypatch):
    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    prof, m = P.Profile({}), Thp()
    P.measure_host_touch(prof, m, runner=fake_probe([200.0] * 200 + [5320.0] * 56, [200.0] * 256))
    assert m.sizes == [2048] and prof.description["unbacked_fresh_share"] == pytest.approx(56 / 256, abs=1e-3)
    assert prof.costs["host_touch_us_per_page"].value == pytest.approx(10.0)
    bare = P.Profile({})  # bare metal, or memory just freed: every THP warm
    P.measure_host_touch(bare, Thp(), runner=fake_probe([200.0] * 256, [200.0] * 256))
    assert "host_touch_us_per_page" not in bare.costs and "not measured" in bare.notes[0]
    prof.description["arch"] = "x86_64"
    cpu = P.as_cpu_model(prof, "p.toml")
    assert cpu.measured["host_touch_us_per_page"].value == pytest.approx(10.0)


def runs(warmed: bool, value: float):
    rows = []
    for r in range(2):
        run = f"x-2048k-p1-m512-lz4-r{r}{'w' if warmed else ''}"
        base = dict(run=run, folio_kb=2048, processes=1, memcg_mb=512.0, bytes_per_process=768 * MIB,
                    swap_device="zram", compressor="lz4", virtualized=True)
        rows += [dict(base, metric="usemem_throughput_kib_s", value=value * (1 + 0.02 * r)),
                 dict(base, metric="fault_alloc_count", value=384.0), dict(base, metric="fault_fallback_count", value=0.0)]
        if warmed:
            rows.append(dict(base, metric="warmup_unbacked_share", value=0.4))
    return pd.DataFrame(rows)


def test_verify_widens_only_the_unwarmed_large_folio_runs_of_a_guest_with_a_host_touch():
    both = pd.concat([runs(False, 5e5), runs(True, 5e5)], ignore_index=True)
    assert "warmed" not in model_rows(both)  # (verify's own column: the model's frame has no such field)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        guest = verify(both, None, model=thp(host_touch_us_per_page=10.0, compressor="lz4"), n_samples=40, seed=1)
        bare = verify(both, None, model=thp(compressor="lz4"), n_samples=40, seed=1)
    t = guest["table"].set_index("warmed")
    assert t.loc[False, "best"] == pytest.approx(t.loc[True, "best"])  # the point is the backed kernel's
    assert t.loc[False, "lo"] < 0.75 * t.loc[True, "lo"] and t.loc[False, "hi"] == pytest.approx(t.loc[True, "hi"])
    assert guest["table"].attrs["unwarmed_large_configurations"] == 1
    assert not unwarmed_large_runs(bare["table"], thp()).any()


def test_the_warm_up_touches_the_fresh_thps_of_the_run(monkeypatch):
    from mmcost.measure import swapout_runs as S

    calls = []

    class M:
        def run(self, cmd, **kw):
            calls.append(cmd)
            return fake_probe([5000.0] * 4 + [200.0] * 4, [200.0] * 8)(cmd)

    monkeypatch.setattr(P, "probe_path", lambda: "mmcost-probe")
    cfg = S.Config(folio_kb=2048, processes=2, memcg_mb=256, device="zram:lz4", rep=0)
    rows = S.warm_up(M(), cfg, 768 * MIB, {"folio_kb": 2048})
    assert calls[0][1:] == ["firsttouch", str(256 * MIB + S.WARMUP_MARGIN), "--rounds", "2"]
    v = rows.set_index("metric")["value"]
    assert v["warmup_bytes"] == 256 * MIB + S.WARMUP_MARGIN and v["warmup_unbacked_share"] == 0.5
    small = S.Config(folio_kb=2048, processes=1, memcg_mb=4096, device="zram:lz4", rep=0)
    S.warm_up(M(), small, 100 * MIB, {})
    assert calls[1][2] == str(100 * MIB - 100 * MIB % (2 * MIB))  # at most what the run writes


def test_after_the_warm_up_the_epyc_guests_large_folios_miss_as_its_4k_pages_do():
    """The default matrix measured again with the warm-up before each large-folio run
    (data/kvm_6_18_machine_epyc/warmed_matrix.csv) against profile_d, nothing fitted: at one
    process every large folio's error is within 10 points of the 4K runs' median (the profile,
    taken 3 hours after profile_b, puts the VM 9-11% slower than its 4K runs were), where
    unwarmed, 2M in 512M was 131-208% slower than predicted; and no large-folio run is more than
    25% slower than predicted at either process count."""
    src = datasets.path("kvm_6_18_machine_epyc")
    df = pd.read_csv(src / "warmed_matrix.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = verify(df, None, model=SwapModel(cpu_model=str(src / "profile_d.toml"), virtualized=True,
                                                swap_device="zram", bytes_per_process=768 * MIB),
                     n_samples=60, seed=2)
    t = out["table"][out["table"]["metric"] == "usemem_throughput_kib_s"]
    large = t[t["folio_kb"] > 4]
    assert large["warmed"].all() and not t.loc[t["folio_kb"] == 4, "warmed"].any() and len(t) == 32
    one = t[t["processes"] == 1]
    base = one.loc[one["folio_kb"] == 4, "error_pct"].median()
    assert ((one.loc[one["folio_kb"] > 4, "error_pct"] - base).abs() <= 10).all()
    assert (large["error_pct"] < 25).all()  # predicted / measured - 1: no large run far slower than predicted


def test_the_epyc_guests_unwarmed_large_runs_are_banded_down_to_an_unbacked_host():
    """The matrix's one-process 2M runs in 512M (measured without a warm-up) were 2.3-3.1x slower
    than the backed prediction: the point stays the backed kernel's, the band's lower edge
    reaches the all-unbacked prediction (below 0.45x of the point), and the lz4 pair lies in it."""
    from mmcost import studies

    h = studies.get("kvm_6_18_machine_epyc").held_out().set_index("configuration")
    for comp in ("lz4", "lzo-rle"):
        r = h.loc[f"usemem, 2048K, 1 proc, 512M, {comp}"]
        assert r["published"] < 0.5 * r["predicted"] and r["lo"] < 0.45 * r["predicted"]
    r = h.loc["usemem, 2048K, 1 proc, 512M, lz4"]
    assert r["lo"] <= r["published"] <= r["hi"]
