"""mmcost.swap: memory.high as distinct from memory.max, each against a hand-derived case.

calculate_high_delay's integer arithmetic worked by hand from the kernel's formula
(mm/memcontrol.c: overage = ((usage - high) << 20) / high, penalty = overage^2 * HZ >> 20 >> 14,
times nr_pages / MEMCG_CHARGE_BATCH; the sleep capped at 2 s and skipped at or below HZ/100)
and checked against the table in the kernel's own comment; the expected sleep of two
writers by hand; the eras of the throttle; memory.high at or above memory.max as max alone;
and the refusals (cgroup v1, bad values). No measurement: this project's guest runs cgroup v1."""

import math

import pytest
from mmcost import kernel
from mmcost.swap import SwapInModel, SwapModel
from mmcost.swap import paths


def model(**kw):
    base = dict(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="zram", cpu_model="generic-x86",
                cgroup_v2=True)
    return SwapModel(**{**base, **kw})


# --- calculate_high_delay, worked by hand ---------------------------------------------------------
# memory.high 100 MiB = 25600 pages; usage 100 + m MiB is 256 m pages over; HZ = 1000, nr_pages = batch = 64:
#   101M: overage = (256 << 20) // 25600 = 268435456 // 25600 = 10485; 10485^2 = 109935225;
#         109935225 * 1000 >> 34 = 109935225000 // 17179869184 = 6
#   105M: overage = (1280 << 20) // 25600 = 52428; 52428^2 * 1000 = 2748695184000; // 2^34 = 159
#   110M: overage = 104857; 104857^2 * 1000 = 10994990449000; // 2^34 = 639
#   117M: overage = 178257; 178257^2 * 1000 = 31775558049000; // 2^34 = 1849
#   118M: overage = 188743; 188743^2 * 1000 = 35623920049000; // 2^34 = 2073, over the 2 s cap: 2000
# the kernel's comment above MEMCG_DELAY_PRECISION_SHIFT prints the same: 6, 159, 639, 1849, 2000 ms
@pytest.mark.parametrize("usage_mb, penalty, sleep", [(100, 0, 0), (101, 6, 0), (105, 159, 159), (110, 639, 639),
                                                      (117, 1849, 1849), (118, 2073, 2000)])
def test_the_penalty_is_the_kernel_formula_worked_by_hand(usage_mb, penalty, sleep):
    got = paths.calculate_high_delay(usage_mb * 256, 100 * 256, 64, 1000, 64)
    assert got == penalty
    # 6 jiffies is at or below HZ/100 = 10: no sleep ("not even worth doing")
    assert paths.high_sleep_jiffies(got, 1000) == sleep


def test_the_task_share_hz_and_the_floor_by_hand():
    # HZ = 250, 1% over: 10485^2 * 250 = 27483806250 // 2^34 = 1; times nr_pages 32 // batch 64 = 0
    assert paths.calculate_high_delay(25856, 25600, 32, 250, 64) == 0
    # nr_pages twice the batch doubles it (after the shift): 1 * 128 // 64 = 2
    assert paths.calculate_high_delay(25856, 25600, 128, 250, 64) == 2
    # the floor is HZ // 100 (10 at 1000, 2 at 250, 3 at 300); the cap 2 * HZ
    assert paths.high_sleep_jiffies(10, 1000) == 0 and paths.high_sleep_jiffies(11, 1000) == 11
    assert paths.high_sleep_jiffies(2, 250) == 0 and paths.high_sleep_jiffies(3, 250) == 3
    assert paths.high_sleep_jiffies(3, 300) == 0 and paths.high_sleep_jiffies(600, 250) == 500
    # high 0 acts as 1 page (calculate_overage): usage 1 -> overage 2^20, 2^40 * 1000 >> 34 = 64000
    assert paths.calculate_high_delay(1, 0, 64, 1000, 64) == 64000
    assert paths.high_sleep_jiffies(64000, 1000) == 2000


# --- the expected sleep of a writer among two, by hand --------------------------------------------------
def test_two_writers_sleep_by_hand():
    """v5.4 (batch 32, HZ 1000), two writers in a memcg with memory.high 1 MiB = 256 pages. After its own
    reclaim a writer finds the other's batch pending with chance f (here 0.5), and its own usage u = 0..31
    pages below high: o = 32 - u pages over, overage = o * 2^20 / 256 = 4096 o (exact), penalty =
    (4096 o)^2 * 1000 >> 34 = o^2 * 1000 // 1024 (times 32 // 32). o = 3 gives 8 (<= 10: no sleep), o = 4
    gives 15; none reaches the 2000 cap (o = 32: 1000). Sum over o = 4..32 of o^2 * 1000 // 1024 = 11145
    jiffies (sum of o^2 is 11426 before the floors). Mean sleep per check: f * 11145 / 32 jiffies of 1 ms;
    one check per 32 pages reclaimed (max(batch, SWAP_CLUSTER_MAX)), a 4K folio a page:
    0.5 * 11145 / 32 / 32 ms = 5.44189453125 ms per folio swapped."""
    m = model(kernel="5.4", processes=2, bytes_per_process=2**24, memcg_mb=8, memcg_high_mb=1)
    assert paths.high_reclaim_pages(m, 4) == 32
    assert paths.over_high_sleep_us(m, 0.5, 4.0) == pytest.approx(5441.89453125, rel=1e-12)
    # nobody else pending, nobody over: no sleep; everyone pending always: twice the sleep
    assert paths.over_high_sleep_us(m, 0.0, 4.0) == 0.0
    assert paths.over_high_sleep_us(m, 1.0, 4.0) == pytest.approx(2 * 5441.89453125, rel=1e-12)


@pytest.mark.parametrize("version, sleeps", [("5.3", False), ("5.4", True), ("5.7", True), ("5.8", False),
                                             ("6.18", False)])
def test_the_throttle_by_era(version, sleeps):
    """No sleep before v5.4 (0e4b01df8659); from v5.8 (b3ff92916af3) only after 16 passes that reclaimed
    nothing, which a memcg that can swap never meets."""
    m = model(kernel=version, processes=2, bytes_per_process=2**24, memcg_mb=8, memcg_high_mb=1)
    assert (paths.over_high_sleep_us(m, 0.5, 4.0) > 0) == sleeps
    assert (m.solve()["memcg_high_throttle_share_pct"] > 0) == sleeps


def test_the_throttle_costs_real_time_not_cpu():
    """16 writers held at a 16 MiB memory.high: v5.4 sleeps most of the time, v5.8 reclaims instead; the
    sleep is off-CPU, so real time grows while the CPU time stays within a few percent."""
    kw = dict(processes=16, cpus=16, bytes_per_process=2**26, memcg_mb=1024, memcg_high_mb=16)
    old, new = model(kernel="5.4", **kw).solve(), model(kernel="5.8", **kw).solve()
    assert old["memcg_high_throttle_share_pct"] > 50 and new["memcg_high_throttle_share_pct"] == 0
    assert old["real_time_s"] > 2 * new["real_time_s"]
    assert old["sys_time_s"] == pytest.approx(new["sys_time_s"], rel=0.02)


def test_a_lower_high_throttles_more():
    shares = [model(kernel="5.4", processes=16, cpus=16, bytes_per_process=2**26, memcg_mb=1024,
                    memcg_high_mb=h).solve()["memcg_high_throttle_share_pct"] for h in (256, 64, 32, 16, 8)]
    assert all(a <= b for a, b in zip(shares, shares[1:])) and shares[-1] > shares[0]


# --- held at memory.high: the charges and the reclaim -------------------------------------------------
@pytest.mark.parametrize("version, kb, pages", [("6.18", 4, 64), ("6.0", 4, 32), ("6.18", 64, 64),
                                                ("6.18", 2048, 512)])
def test_each_return_to_user_reclaims_the_batch_charged(version, kb, pages):
    """max(MEMCG_CHARGE_BATCH, folio pages, SWAP_CLUSTER_MAX) pages a check: memory.events high per page swapped."""
    m = model(kernel=version, folio_kb=kb, memcg_high_mb=256)
    assert paths.high_reclaim_pages(m, kb) == pages
    assert m.solve()["memcg_high_events_per_swapped_page"] == pytest.approx(1 / pages, rel=1e-15)


def test_below_max_every_charge_refills_the_stock_and_no_large_fault_falls_back():
    """4 writers in one memcg: a page's charge is 1/64 of a refill (v2: one counter, memcg and root: 2
    updates), each moving its line 3/4 of the time at both levels: 2/64 * 3/4 = 0.0234375 updates a
    page. At memory.max alone a 64K fault falls back where the last reclaim left no room; below it, never."""
    m = model(processes=4, cpus=4, bytes_per_process=2**28, memcg_mb=1024, memcg_high_mb=512)
    assert paths.memcg_charges(m, 1, 1)[0] == pytest.approx(2 / 64 * 0.75, rel=1e-15)
    r = m.solve()
    assert r["memcg_failcnt_per_swapped_page"] == 0.0
    assert model(folio_kb=64, memcg_high_mb=256).solve()["large_fault_share_pct"] == 100.0
    assert model(folio_kb=64, memcg_mb=256).solve()["large_fault_share_pct"] < 100.0


def test_memory_high_holds_the_usage_so_it_sets_the_swapped_share():
    assert model(memcg_high_mb=256).solve()["swapped_share"] == pytest.approx(0.75, rel=1e-15)


# --- limits: at or above memory.max it is memory.max alone -------------------------------------------
@pytest.mark.parametrize("kw", [dict(kernel="5.4", processes=16, cpus=16, bytes_per_process=2**26, memcg_mb=64),
                                dict(kernel="6.18", folio_kb=64), dict(kernel="6.18", folio_kb=2048),
                                dict(kernel="6.18", processes=8, cpus=4, memcg_mb=2048)])
@pytest.mark.parametrize("above", [1.0, 1.5, math.inf])
def test_high_at_or_above_max_is_max_alone(kw, above):
    alone = model(**kw)
    with_high = alone.set(memcg_high_mb=alone.memcg_mb * above)
    if above == math.inf:
        assert with_high.memcg_high_mb is None  # inf reads as no memory.high
    a, b = alone.solve(), with_high.solve()
    for q in a.quantities:
        assert b[q.name] == pytest.approx(q.value, rel=1e-12, abs=1e-300), q.name


def test_lanes_of_memory_high_match_their_configurations():
    ms = [model(kernel="5.4", processes=8, cpus=8, bytes_per_process=2**26, memcg_mb=256, memcg_high_mb=h)
          for h in (8.0, 32.0, 128.0, 256.0, 300.0)]  # throttled, held, and max alone in one lane model
    for one, lane in zip([m.solve() for m in ms], SwapModel.solve_many(ms)):
        for q in one.quantities:  # (the sleep's fixed point: Chandrupatla per lane, Brent for one)
            assert lane[q.name] == pytest.approx(q.value, rel=1e-10, abs=1e-300), q.name


# --- refusals -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-1.0, 0.0, float("nan"), -math.inf])
def test_a_bad_memory_high_is_refused_naming_the_field(bad):
    with pytest.raises(ValueError, match="memcg_high_mb"):
        model(memcg_high_mb=bad)


def test_cgroup_v1_has_no_memory_high():
    with pytest.raises(ValueError, match="memcg_high_mb: memory.high is a cgroup v2 file"):
        model(cgroup_v2=False, memcg_high_mb=256)


@pytest.mark.parametrize("kw, match", [(dict(memcg_mb=None, swapped_share=0.5), "memcg_high_mb: give memcg_mb"),
                                       (dict(kernel="3.19"), "memcg_high_mb: memory.high is in no kernel before v4.0"),
                                       (dict(config_hz=200), "config_hz"),
                                       (dict(memcg_mb=4096, memcg_high_mb=2048), "memcg_mb and memcg_high_mb")])
def test_other_refusals_name_their_field(kw, match):
    with pytest.raises(ValueError, match=match):
        model(**{"memcg_high_mb": 256, **kw})


def test_the_read_back_under_memory_high_is_refused():
    with pytest.raises(ValueError, match="memcg_high_mb"):
        SwapInModel(processes=1, bytes_per_process=2**30, memcg_mb=512, swap_device="zram", cgroup_v2=True,
                    memcg_high_mb=256)


def test_the_throttle_switch_is_catalogued_for_the_swap_model():
    assert set(kernel.changes("memcg_high_throttle")["read_by"]) == {"swap"}


def test_a_high_within_the_in_flight_batches_of_max_is_refused():
    # 16 writers x 64 pages = 1024 pages = 4 MiB over memory.high at most: a max 2 MiB above is reached too
    with pytest.raises(ValueError, match="memcg_high_mb: 510 MiB is within the writers' in-flight charges"):
        model(processes=16, cpus=16, bytes_per_process=2**28, memcg_mb=512, memcg_high_mb=510)
    model(processes=16, cpus=16, bytes_per_process=2**28, memcg_mb=512, memcg_high_mb=507)


def test_the_over_high_sleep_is_at_its_own_fixed_point():
    """The sleep lengthens the cycle that sets the chance of the other writer's batch being pending: at the
    solution, the sleep per folio is the hand-derived 11145 / 32 / 32 ms times f, f = the reclaim share of the
    solved cycle (the isolation throttle kept out by a large inactive list)."""
    m = model(kernel="5.4", processes=2, cpus=2, bytes_per_process=2**24, memcg_mb=8, memcg_high_mb=1,
              inactive_anon_mb=2**20)
    net, _, info = m._network()
    x = float(net.analytic().system["throughput_per_s"])
    d, _ = m._mix()
    f = d["reclaim"] / (2 * 1e6 / x)
    assert 0 < f < 1
    assert info["throttled_us"] == pytest.approx(f * 11145 / 32 / 32 * 1e3, rel=1e-9)
    assert info["high_sleep_us"] == pytest.approx(info["throttled_us"], rel=1e-9)
