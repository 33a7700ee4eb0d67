"""Swap devices and zram/zswap compressors: what each costs per page, and where.

Kinds (the ``swap_device`` column):

- ``brd`` / ``pmem``: a RAM disk written by the CPU (``brd_do_bvec`` /
  ``pmem_do_write``: a 4 KiB memcpy, 8 KiB of DRAM traffic);
- ``zram``: the CPU compresses the page and stores the result in zsmalloc
  (``zram_write_page`` -> ``zcomp_compress``), charged to no memcg;
- ``zswap``: the CPU compresses into a pool charged to the memcg of the page
  (``zswap_store`` -> ``obj_cgroup_charge_zswap``), and the
  pool's shrinker writes entries back to the backing device
  (``zswap_writeback_entry``: decompress, then a block write);
- ``nvme`` / ``ssd``: DMA, so the CPU only submits the I/O (``io_submit_us_per_io``);
  the device serves every CPU at ``bandwidth_mib_s`` with ``queue_depth`` I/Os
  of ``latency_us`` in flight (a FIFO station whose service per folio is the
  larger of size / bandwidth and latency / depth: Little's law).
"""

from __future__ import annotations

DEVICES = ("brd", "pmem", "zram", "zswap", "nvme", "ssd")
RAM_DISKS = ("brd", "pmem")
COMPRESSED = ("zram", "zswap")
BLOCK = ("nvme", "ssd")

#: compressor -> (compress cycles per byte, decompress cycles per byte, compression ratio, source).
#: lzbench 1.8 on the Silesia corpus, one core of a Core i7-8700K (turbo 4.7 GHz): lz4 737 MB/s
#: compress / 4448 MB/s decompress at 47.6% size, lzo1x-1 ~690 / ~830 MB/s at ~48%, zstd -1 485 / 1352
#: MB/s at 34.6%; deflate (zlib -1) ~100 / ~400 MB/s at ~36% (lzbench README table). lzo-rle is lzo1x
#: with run-length encoding of zero runs (commit 45ec975efb52, zram's default since v5.1). 4 KiB pages
#: compress less well and a little slower than Silesia's large blocks: these are priors, not measurements.
COMPRESSORS: dict[str, tuple[float, float, float, str]] = {
    "lz4": (6.4, 1.06, 2.10, "lzbench (Silesia, i7-8700K): lz4 737 MB/s compress, 4448 MB/s decompress, 47.6%"),
    "lzo": (6.8, 5.7, 2.08, "lzbench (Silesia, i7-8700K): lzo1x-1 ~690 MB/s compress, ~830 MB/s decompress, ~48%"),
    "lzo-rle": (6.8, 5.7, 2.08, "lzo1x-1 figures (lzbench, Silesia); RLE changes only zero runs (commit 45ec975efb52)"),
    "zstd": (9.7, 3.5, 2.89, "lzbench (Silesia, i7-8700K): zstd -1 485 MB/s compress, 1352 MB/s decompress, 34.6%"),
    "deflate": (47.0, 11.8, 2.78, "lzbench (Silesia, i7-8700K): zlib -1 ~100 MB/s compress, ~400 MB/s decompress, ~36%"),
}
#: the clock lzbench's MB/s figures are converted at (turbo of the i7-8700K)
LZBENCH_GHZ = 4.7


def compress_us_per_page(compressor: str, clock_ghz: float) -> float:
    """Compression of one 4 KiB page at ``clock_ghz`` (from :data:`COMPRESSORS`)."""
    return COMPRESSORS[compressor][0] * 4096 / clock_ghz * 1e-3


def decompress_us_per_page(compressor: str, clock_ghz: float) -> float:
    return COMPRESSORS[compressor][1] * 4096 / clock_ghz * 1e-3
