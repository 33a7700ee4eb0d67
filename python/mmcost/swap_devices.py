"""Swap devices and zram/zswap compressors: moved to :mod:`mmcost.swap.devices`
(this name stays importable)."""

from __future__ import annotations

from .swap.devices import (BLOCK, COMPRESSED, COMPRESSORS, DEVICES, LZBENCH_GHZ, RAM_DISKS, compress_us_per_page,
                           decompress_us_per_page)

__all__ = ["BLOCK", "COMPRESSED", "COMPRESSORS", "DEVICES", "LZBENCH_GHZ", "RAM_DISKS", "compress_us_per_page",
           "decompress_us_per_page"]
