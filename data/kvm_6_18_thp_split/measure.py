"""Measure what splitting a large folio costs MADV_PAGEOUT on this machine's own kernel: the method of this source.

Run as root from the repository root: ``python data/kvm_6_18_thp_split/measure.py``.
It compiles ``split_pageout.c``, hot-adds a zram device of its own (lzo-rle,
1 GiB) as swap, and for each folio size (16K, 64K and 2M, each swapped out
whole and split first) enables that size alone (``hugepages-<size>kB/
enabled`` = always, every other never) and runs ``split_pageout MODE KB
64MiB REF_FIRST``: one timed MADV_PAGEOUT of 64 MiB of usemem's data, and
one of a 64 MiB region of 4K folios in the same process just before or
after it (alternating with the repetition). 15 repetitions, the
configurations shuffled within each (seed 0). /proc/vmstat and the
size's ``stats/`` counters are read around each run and every run is checked
against them (every page swapped; whole: every folio swapped whole; split:
every folio split). Every setting touched is recorded and restored (mTHP
files, the zram device, swap), on error and on Ctrl-C too. Output: raw/*.txt,
machine.toml (this VM's description) and measurements.csv in mmcost's tidy
schema.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from mmcost.measure.controls import Machine, compile_helper, kernel_release, shuffled_runs, vmstat, wait_zram_below  # noqa: E402

CONFIGS = ((16, "whole"), (16, "split"), (64, "whole"), (64, "split"), (2048, "whole"), (2048, "split"))
REPS = 15
BYTES = 64 * 2**20
ZRAM_BYTES = 2**30
COMPRESSOR = "lzo-rle"
THP = Path("/sys/kernel/mm/transparent_hugepage")


def size_stats(kb: int) -> dict[str, int]:
    """The size's counters (hugepages-<kb>kB/stats; 2M: the same counters, PMD THPs included)."""
    if kb == 4:
        return {}
    d = THP / f"hugepages-{kb}kB" / "stats"
    return {f.name: int(f.read_text()) for f in d.iterdir()}


def check(kb: int, mode: str, pages: int, folios: int, vm: dict, st: dict) -> str:
    """'' when the counters say the run did what it says (``pages``: both regions'), else why not."""
    if vm["pswpout"] < pages:
        return f"pswpout {vm['pswpout']} < {pages} pages"
    if mode == "whole" and st["swpout"] != folios:
        return f"stats/swpout {st['swpout']} != {folios} folios (swpout_fallback {st['swpout_fallback']})"
    if mode == "split" and st["split"] < folios:
        return f"stats/split {st['split']} < {folios} folios"
    return ""


def main() -> int:
    from mmcost.measure import profile

    exe = compile_helper(HERE / "split_pageout.c")
    order = shuffled_runs(REPS, CONFIGS)
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    kernel = kernel_release()
    d = profile.describe()
    d["busy"] = profile.busy() or "idle"
    (HERE / "machine.toml").write_text(
        "[machine]\n" + "".join(f"{k} = {profile._toml_value(v)}\n" for k, v in d.items() if not isinstance(v, dict))
        + "".join(f"\n[machine.{k}]\n" + "".join(f"{kk} = {profile._toml_value(vv)}\n" for kk, vv in v.items())
                  for k, v in d.items() if isinstance(v, dict)))
    rows = []
    m = Machine()
    try:
        zid = m.make_zram(COMPRESSOR, ZRAM_BYTES)
        for rep, (kb, mode) in order:
            run = f"{kb}k-{mode}-r{rep}"
            m.set_mthp(kb)
            vm0, st0 = vmstat(), size_stats(kb)
            out = subprocess.run([str(exe), mode, str(kb), str(BYTES), str(rep % 2)], check=True,
                                 capture_output=True, text=True).stdout
            vm1, st1 = vmstat(), size_stats(kb)
            vm = {k: vm1[k] - vm0[k] for k in vm1 if k in vm0}
            st = {k: st1[k] - st0[k] for k in st1}
            (raw / f"{run}.txt").write_text(out + "".join(f"vmstat.{k} {v}\n" for k, v in sorted(vm.items()) if v)
                                            + "".join(f"stats.{k} {v}\n" for k, v in sorted(st.items()) if v))
            f = out.split()
            vals = dict(zip(f[0::2], f[1::2]))
            pages, folios, ref_pages = int(vals["pages"]), int(vals["folios"]), int(vals["ref_pages"])
            bad = check(kb, mode, pages + ref_pages, folios, vm, st)
            print(f"{run}: {vals['pageout_us']} us for {pages} pages, 4K reference {vals['ref_pageout_us']} us "
                  f"for {ref_pages}, pswpout {vm['pswpout']}" + (f"  NOT KEPT: {bad}" if bad else ""), flush=True)
            if not bad:
                variant = f"{kb}K " + ("whole" if mode == "whole" else "split first")
                note = ("one MADV_PAGEOUT, every folio swapped out whole" if mode == "whole" else
                        "one MADV_PAGEOUT of folios with their last 4K page zapped: each split to 4K first")
                order = "before" if rep % 2 else "after"
                common = dict(experiment="thp_split_pageout", variant=variant, unit="us", processes=1, cpus=2,
                              bytes_per_process=BYTES, swap_device="zram", compressor=COMPRESSOR, virtualized=True,
                              arch="x86", kernel=kernel, run=run, n_runs=1)
                rows.append(dict(common, metric="reclaim_us_per_page", folio_kb=kb,
                                 value=float(vals["pageout_us"]) / pages, note=f"{note}; {pages} pages swapped"))
                rows.append(dict(common, metric="reference_reclaim_us_per_page", folio_kb=4,
                                 value=float(vals["ref_pageout_us"]) / ref_pages,
                                 note=f"the same run's 4K folios (MADV_NOHUGEPAGE), paged out {order} the "
                                      f"measured region; {ref_pages} pages"))
            wait_zram_below(zid, 8 * 2**20)  # the previous run's objects are gone first
    finally:
        m.restore()
    from mmcost import schema  # measurements.csv in the tidy schema's column order

    schema.write_csv(rows, HERE / "measurements.csv", ("compressor", "kernel", "run", "note"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
