"""swap_cache_info's global line (mm/swap_state.c, to v5.19): its writes per
folio swapped out, by hand, in each era and path (mmcost.swap.paths.stats_line_us)."""

import pytest

from mmcost import kernel
from mmcost.swap import SwapModel, paths


def model(version, **kw):
    base = dict(kernel=version, folio_kb=4, processes=8, cpus=8, swap_device="pmem", swapped_share=0.5,
                lock_line_us=0.2)
    return SwapModel(**{**base, **kw})


def reclaim(m, kb, whole):
    return paths.swap_out(m, kb, whole)["reclaim"]


def test_the_switch_follows_the_kernel():
    assert kernel.features("5.19")["swap_cache_stats"] is True
    assert kernel.features("6.0")["swap_cache_stats"] is False


def test_a_4k_page_writes_the_line_twice_where_the_lock_is_no_station():
    # v4.11-v5.19: add_total at the insert, del_total at the delete, each from another CPU 7/8 of the time
    m = model("4.11")
    assert paths.stats_line_us(m, 2) == pytest.approx(2 * 7 / 8 * 0.2)
    gone = m.set(swap_cache_stats=False)
    assert reclaim(m, 4, True) - reclaim(gone, 4, True) == pytest.approx(2 * 7 / 8 * 0.2)
    # one writer: the line stays in its cache; under v4.10's global tree lock it moves with the lock instead
    assert paths.stats_line_us(model("4.11", processes=1, cpus=1), 2) == 0.0
    assert paths.stats_line_us(model("4.10"), 2) == 0.0 and paths.stats_line_us(model("6.0"), 2) == 0.0


def test_a_split_thp_writes_it_twice_a_page_and_the_delay_split_once_less_a_tail():
    m = model("4.11", folio_kb=2048)
    gone = m.set(swap_cache_stats=False)
    per = 7 / 8 * 0.2
    assert reclaim(m, 2048, False) - reclaim(gone, 2048, False) == pytest.approx(2 * 512 * per)
    d = paths.delay_split(m, paths.swap_out(m, 2048, False), 512)
    d0 = paths.delay_split(gone, paths.swap_out(gone, 2048, False), 512)
    assert d["reclaim"] - d0["reclaim"] == pytest.approx((512 + 1) * per)  # 512 deletes, one ADD_CACHE_INFO
