"""``mmcost.parse.interrupts_tlb`` scales linearly in its input.

Builds ``/proc/interrupts`` text (a ``CPU0 ... CPU<n>`` header and a ``TLB:``
row per snapshot), times the parser on n snapshots and on 8n, and prints
the ratio of the two (best of several repeats). Linear work gives about 8;
the former per-row scan of every earlier word gave about 64 (320 KiB took
10 s).

    python benchmarks/bench_parse_interrupts.py [--snapshots 500] [--cpus 8]
"""

from __future__ import annotations

import argparse
import timeit

from mmcost import parse


def text(snapshots: int, cpus: int) -> str:
    header = "      " + " ".join(f"CPU{c}" for c in range(cpus)) + "\n"
    row = "TLB: " + " ".join(str(1000 + 7 * c) for c in range(cpus)) + "   TLB shootdowns\n"
    return (header + row) * snapshots


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snapshots", type=int, default=500)
    ap.add_argument("--cpus", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    times = {}
    for n in (args.snapshots, 8 * args.snapshots):
        t = text(n, args.cpus)
        times[n] = min(timeit.repeat(lambda t=t: parse.interrupts_tlb(t), number=1, repeat=args.repeat))
        print(f"{n:7d} snapshots, {len(t) / 1024:8.1f} KiB: {times[n]:.3f} s")
    print(f"ratio 8n / n: {times[8 * args.snapshots] / times[args.snapshots]:.1f} (linear: about 8)")


if __name__ == "__main__":
    main()
