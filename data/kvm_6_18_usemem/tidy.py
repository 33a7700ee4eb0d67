"""raw/ -> measurements.csv, with mmcost.parse: every number as the tools printed it.

Run from the repository root after measure.py: ``python data/kvm_6_18_usemem/tidy.py``.
"""

from pathlib import Path

import pandas as pd

from mmcost import parse

HERE = Path(__file__).resolve().parent
BYTES = 768 * 2**20
CONFIG = dict(experiment="usemem_swapout", variant="6.18", arch="x86", cpus=2, memcg_mb=256, bytes_per_process=BYTES,
              swap_device="zram", compressor="lzo-rle", virtualized=True)


def run_rows(stem: str) -> pd.DataFrame:
    kb, procs, rep = stem.split("-")
    ctx = dict({k: v for k, v in CONFIG.items() if k != "compressor"}, folio_kb=int(kb.removesuffix("k")),
               processes=int(procs[1:]), n_runs=1)
    raw = HERE / "raw"
    text = (raw / f"{stem}.usemem.txt").read_text()
    parts = [parse.usemem("\n".join(line for line in text.splitlines() if "bytes /" in line), **ctx),
             parse.time_output("\n".join(line for line in text.splitlines() if "bytes /" not in line), **ctx)]
    before, after = (raw / f"{stem}.interrupts.txt").read_text().splitlines()
    tlb = parse.interrupts_tlb(after, **ctx).copy()
    tlb["value"] = tlb["value"].to_numpy() - parse.interrupts_tlb(before, **ctx)["value"].to_numpy()
    tlb["printed"] = f"{before} -> {after}"
    parts.append(tlb)
    vm = parse.vmstat((raw / f"{stem}.vmstat_before.txt").read_text(), (raw / f"{stem}.vmstat_after.txt").read_text(),
                      **ctx)
    parts.append(vm[vm["source_name"].isin(["pswpout", "pgfault", "pgmajfault", "thp_fault_alloc",
                                            "thp_fault_fallback", "thp_swpout", "thp_swpout_fallback"])])
    stats = (raw / f"{stem}.mthp_stats.txt").read_text().strip()
    if stats:
        m = parse.mthp_stats(stats, **{k: v for k, v in ctx.items() if k != "folio_kb"})
        parts.append(m[m["metric"].isin(["fault_alloc_count", "fault_fallback_count", "fault_fallback_charge_count",
                                         "swpout_count", "swpout_fallback_count", "split_count"])])
    out = pd.concat(parts, ignore_index=True)
    return out.assign(run=stem, compressor=CONFIG["compressor"])


def main() -> None:
    stems = sorted({p.name.split(".")[0] for p in (HERE / "raw").glob("*.usemem.txt")})
    df = pd.concat([run_rows(s) for s in stems], ignore_index=True)
    df.to_csv(HERE / "measurements.csv", index=False)
    print(f"{len(df)} rows from {len(stems)} runs")


if __name__ == "__main__":
    main()
