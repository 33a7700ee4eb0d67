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

import functools

import numpy as np

from ..lanes import any_of, maximum
from .constants import PAGE_KB

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


#: what the swapped pages hold: lzbench's Silesia corpus (:data:`COMPRESSORS`), or usemem's data (each 8-byte
#: word its own index: mmcost-writer's loop, as usemem's), which every compressor measured on it compresses
#: 2-3x faster and decompresses 2-4x faster (:func:`usemem_figures`)
SWAP_DATA = ("silesia", "usemem")
#: the machine profiles whose probes measured the compressors on usemem's data: zram writes (blockwrite) and
#: swap-in faults (swapin), on the EPYC guest and a second Xeon guest, Linux 6.18
USEMEM_PROFILES = (("kvm_6_18_machine_epyc", "profile_e.toml"), ("kvm_6_18_swapin", "second_vm_profile.toml"))


@functools.lru_cache(maxsize=1)
def usemem_figures() -> dict[str, tuple[float, float, float, str]]:
    """compressor -> (compress cycles per byte, decompress cycles per byte, ratio, source) on usemem's data:
    the mean over :data:`USEMEM_PROFILES` of each one's measured costs per 4 KiB page (its zram write and its
    swap-in line's slope, each less zram's and the kernel's other work,
    :func:`mmcost.measure.profile.as_cpu_model`) at its clock. A compressor no profile measured has none."""
    from .. import cpu_models, datasets

    per_comp: dict[str, list[tuple[float, float, float]]] = {}
    for folder, name in USEMEM_PROFILES:
        cpu = cpu_models.get(str(datasets.path(folder) / name))
        per_byte = cpu.clock_ghz * 1e3 / 4096
        for comp in COMPRESSORS:
            keys = [f"{n}@{comp}" for n in ("compress_us_per_page", "decompress_us_per_page", "compression_ratio")]
            if all(k in cpu.measured for k in keys):
                c, d, r = (cpu.measured[k].value for k in keys)
                per_comp.setdefault(comp, []).append((c * per_byte, d * per_byte, r))
    where = ", ".join(f"data/{folder}/{name}" for folder, name in USEMEM_PROFILES)
    return {comp: (*(float(x) for x in np.mean(rows, axis=0)),
                   f"{comp} on usemem's data, the mean of {len(rows)} machines' cycles ({where}: zram writes and "
                   "swap-in faults)") for comp, rows in per_comp.items()}


def figures(compressor: str, data: str = "silesia") -> tuple[float, float, float, str]:
    """(compress cycles per byte, decompress cycles per byte, ratio, source) of ``compressor`` on ``data``
    (:data:`SWAP_DATA`); usemem's data falls back to Silesia's for a compressor not measured on it."""
    if data == "usemem" and compressor in usemem_figures():
        return usemem_figures()[compressor]
    return COMPRESSORS[compressor]


def compress_us_per_page(compressor: str, clock_ghz: float, data: str = "silesia") -> float:
    """Compression of one 4 KiB page of ``data`` at ``clock_ghz`` (:func:`figures`)."""
    return figures(compressor, data)[0] * 4096 / clock_ghz * 1e-3


def decompress_us_per_page(compressor: str, clock_ghz: float, data: str = "silesia") -> float:
    return figures(compressor, data)[1] * 4096 / clock_ghz * 1e-3


def zero_us(m, pages: float) -> float:
    """CPU time to write ``pages`` 4 KiB pages at one core's streaming write
    bandwidth (``clear_page``, a memcpy's stores): us."""
    return pages * 4.096 / m.core_write_gb_s


def store(m, pages: int) -> dict[str, float]:
    """Per I/O of ``pages`` pages written to ``m.swap_device``: the writer's CPU
    (``cpu``, us), the block device station (``device``, us), the zsmalloc
    class lock (``zs``, us), brd's page-tree lock (``brd_xa``, us) and DRAM
    (``dram``, bytes). zram and brd split every bio into pages
    (``zram_bio_write`` -> ``zram_write_page``, ``brd_do_bvec``), so their
    work is per page whatever the folio."""
    dev, kib = m.swap_device, pages * PAGE_KB
    out = dict(cpu=0.0, device=0.0, zs=0.0, brd_xa=0.0, dram=0.0)
    io = maximum(kib / 1024 / m.bandwidth_mib_s * 1e6, m.latency_us / m.queue_depth)
    if dev in RAM_DISKS:  # memcpy: read 4 KiB, write 4 KiB
        out.update(cpu=2 * zero_us(m, pages), dram=8192.0 * pages)
        if dev == "brd":  # brd_insert_page for a sector not yet backed: a zeroed page, one tree insert
            new = m.brd_alloc_share * pages
            out["cpu"] += new * (m.brd_alloc_us_per_page + zero_us(m, 1))
            out["brd_xa"] = new * m.brd_xa_hold_us
            out["dram"] += new * 4096.0
        return out
    if dev in COMPRESSED:
        stored = zero_us(m, pages) / m.compression_ratio
        out.update(cpu=pages * (m.compress_us_per_page + m.zram_us_per_page) + stored,
                   zs=pages * m.zs_malloc_hold_us, dram=4096.0 * pages * (1 + 1 / m.compression_ratio))
        if dev == "zswap" and any_of(m.zswap_writeback_share > 0):
            w = m.zswap_writeback_share
            out["cpu"] += w * (pages * m.decompress_us_per_page + m.io_submit_us_per_io)
            out["device"] = w * io
            out["dram"] += w * 8192.0 * pages
        return out
    out.update(cpu=m.io_submit_us_per_io, device=io, dram=4096.0 * pages)  # nvme/ssd: DMA reads the page
    return out


#: devices whose block driver completes I/O synchronously (SWP_SYNCHRONOUS_IO: BLK_FEAT_SYNCHRONOUS, set by
#: zram, brd, pmem and btt, 0bcac06f27d7, v4.15): the only ones whose swap-in this package models
SYNCHRONOUS = ("zram", "brd", "pmem")


def load(m, pages: int) -> dict[str, float]:
    """Per folio of ``pages`` pages read back from ``m.swap_device`` in the
    fault (``swap_read_folio`` -> ``swap_read_folio_bdev_sync``, the bio
    completed before it returns): the faulting CPU's work (``cpu``, us) and
    DRAM (``dram``, bytes). zram reads page by page (``zram_bio_read`` ->
    ``zram_read_page``: the slot lock, ``zs_obj_read_begin`` mapping the
    object under the pool's and zspage's locks, not the size class's,
    ``zcomp_decompress`` into the page); brd and pmem copy each page
    (``brd_do_bvec`` / ``pmem_do_read``). Other devices take the readahead
    path (``swapin_readahead``), which is not modelled: ValueError."""
    dev = m.swap_device
    if dev not in SYNCHRONOUS:
        raise ValueError(f"swap_device: swap-in is modelled for the SWP_SYNCHRONOUS_IO devices {SYNCHRONOUS} "
                         f"(the read done in the fault), not {dev!r}: a zswap load or a disk's readahead "
                         "(swapin_readahead, page-cluster) is another path")
    if dev == "zram":
        return dict(cpu=pages * (m.decompress_us_per_page + m.zram_read_us_per_page),
                    dram=4096.0 * pages * (1 + 1 / m.compression_ratio))
    return dict(cpu=2 * zero_us(m, pages), dram=8192.0 * pages)  # memcpy: read 4 KiB, write 4 KiB
