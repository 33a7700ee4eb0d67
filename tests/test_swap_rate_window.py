"""SwapModel.rate_window: the window a source averages its swap-out rate over (LKP's whole job, or the loop).

Hand-derived: over LKP's window the same bytes are swapped in the loop and
the exit's seconds, so the reported rate is the loop's times loop / (loop +
exit); the throughput (the loop's) does not move; a source's swap-out /
throughput ratio gives the swapped share s = ratio * (loop + exit) / loop.
"""

import pytest
from mmcost.swap import SwapModel

TOY = dict(processes=4, swap_device="pmem", memcg_mb=None, swapped_share=0.5, kernel="4.7", cpu_model="haswell-ep")


def _times(r):
    return r["real_time_s"] - r["exit_time_s"], r["exit_time_s"]


def test_the_loop_window_is_the_default_and_lkp_divides_by_the_whole_job():
    loop_r = SwapModel(**TOY).solve()
    lkp_r = SwapModel(**TOY, rate_window="lkp_job").solve()
    loop, exit_s = _times(loop_r)
    assert exit_s > 0
    assert lkp_r["vm_scalability_throughput_kib_s"] == pytest.approx(loop_r["vm_scalability_throughput_kib_s"])
    assert lkp_r["real_time_s"] == pytest.approx(loop_r["real_time_s"])
    assert lkp_r["swapout_kib_s"] == pytest.approx(loop_r["swapout_kib_s"] * loop / (loop + exit_s), rel=1e-12)
    # the loop's swap-out rate is the swapped share of its throughput
    assert loop_r["swapout_kib_s"] == pytest.approx(0.5 * loop_r["vm_scalability_throughput_kib_s"], rel=1e-12)


def test_a_faster_loop_gains_less_over_the_whole_job():
    """Two kernels, the same bytes and exit: the swap-out change is (T + F) / (T' + F) - 1, below the
    throughput's T / T' - 1 (seed 004's arithmetic: +28.1% with F = 0.2 T gives +22.4%)."""
    base = SwapModel(**TOY, rate_window="lkp_job").solve()
    patched = SwapModel(**{**TOY, "kernel": "4.7+writeback_tags=false"}, rate_window="lkp_job").solve()
    (t0, f0), (t1, f1) = _times(base), _times(patched)
    assert f1 == pytest.approx(f0)  # the tags are no part of the exit
    thr = patched["vm_scalability_throughput_kib_s"] / base["vm_scalability_throughput_kib_s"] - 1
    assert thr == pytest.approx(t0 / t1 - 1, rel=1e-9)
    so = patched["swapout_kib_s"] / base["swapout_kib_s"] - 1
    assert so == pytest.approx((t0 + f0) / (t1 + f1) - 1, rel=1e-9)
    assert 0 < so < thr
    assert 1.2 / (1 / 1.281 + 0.2) - 1 == pytest.approx(0.224, abs=5e-4)


def test_the_swapped_share_reproduces_the_published_ratio():
    m = SwapModel(**TOY, rate_window="lkp_job")
    s = m.lkp_swapped_share(0.4)
    r = m.set(swapped_share=s).solve()
    loop, exit_s = _times(r)
    assert s == pytest.approx(0.4 * (loop + exit_s) / loop, rel=1e-5)
    assert r["swapout_kib_s"] / r["vm_scalability_throughput_kib_s"] == pytest.approx(0.4, rel=1e-5)
    assert SwapModel(**TOY).lkp_swapped_share(0.4) == 0.4  # over the loop the ratio is the share


def test_a_ratio_that_swaps_everything_is_refused():
    m = SwapModel(**TOY, rate_window="lkp_job")
    with pytest.raises(ValueError, match="ratio"):
        m.lkp_swapped_share(1.2)
    with pytest.raises(ValueError, match="ratio"):
        m.lkp_swapped_share(0.95)  # over the window more than every byte written
    with pytest.raises(ValueError, match="rate_window"):
        SwapModel(**TOY, rate_window="job")


def test_the_window_is_a_column_of_the_users_frame():
    """A frame's rate_window column sets each row's window; the loop's rate is the default."""
    import pandas as pd

    from mmcost.fit import FitResult

    m = SwapModel(**TOY)
    fit = FitResult.of_priors(m)
    rows = pd.DataFrame({"metric": ["swapout_kib_s"] * 2, "rate_window": ["loop", "lkp_job"]})
    loop_rate, lkp_rate = fit.predict(rows, n_samples=2)["best"]
    r = m.solve()
    loop, exit_s = _times(r)
    assert loop_rate == pytest.approx(r["swapout_kib_s"])
    assert lkp_rate == pytest.approx(r["swapout_kib_s"] * loop / (loop + exit_s))
