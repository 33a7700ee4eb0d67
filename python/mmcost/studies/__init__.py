"""Studies: one module per bundled source, the same stem as its ``data/<id>`` folder.

A study is small: which source, which mechanism, which fields are fitted,
the mechanism's defaults read from the source's ``source.toml`` (``[model]``,
``[variants.<name>]``), and its tables and figures. It holds no solver logic.

    from mmcost import studies
    studies.names()                          # the bundled sources with a study
    studies.get("small_thp_swapout").fit()   # its fit (a FitResult)
    studies.get("small_thp_swapout").held_out()  # published, predicted, lo, hi, error
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module

from ._study import HELD_OUT_COLUMNS, STATUSES, Section, Study, hit, select

_NAMES = ("amit_concurrent_tlb_flushes_v3", "arm64_batched_tlb_v2_unixbench", "barry_yicong_arm64_batched_tlb_v9", "huang_thp_swap_delay_split_2016", "huang_thp_swap_delay_split_v8_2017", "kairui_lock_rework_v1_perf_profile_reply", "kairui_remove_swap_slot_cache_v3", "kvm_6_18_lazyfree_unmap", "kvm_6_18_machine", "kvm_6_18_machine_epyc", "kvm_6_18_memcg_failcnt", "kvm_6_18_memcgs", "kvm_6_18_munmap", "kvm_6_18_pageout_flush", "kvm_6_18_swapin", "kvm_6_18_swapout", "kvm_6_18_thp_split", "kvm_6_18_usemem", "migrc_tlb", "molnar_x86_tlb_flush_microbench_2015", "park_luf_v11", "roberts_mthp_swapout_v4", "roberts_mthp_swapout_v5", "small_thp_swapout", "swap_alloc_locks", "swap_alloc_locks_cover", "swapcache_wb_tags")


def names() -> list[str]:
    """The ids of the sources with a study (``mmcost.datasets.names()`` lists all sources)."""
    return list(_NAMES)


@lru_cache(maxsize=None)
def get(source_id: str) -> Study:
    """The study of ``source_id`` (one instance per process: its fit is computed once)."""
    if not isinstance(source_id, str):
        raise TypeError(f"source_id must be a string, got {type(source_id).__name__}")
    if source_id not in _NAMES:
        raise ValueError(f"no study for {source_id!r}; studies: {list(_NAMES)}")
    return import_module(f".{source_id}", __name__).study


__all__ = ["HELD_OUT_COLUMNS", "STATUSES", "Section", "Study", "get", "hit", "names", "select"]
