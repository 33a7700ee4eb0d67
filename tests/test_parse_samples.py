"""Each parser on further realistic samples (other CPU counts, other counter
names, other layouts), written for these tests in the tools' own formats.
Expected values are typed from the sample text, not computed by the parser."""

import math

import numpy as np
import pandas as pd
import pytest

from mmcost import parse
from mmcost.parse import ParseError


def values(df, metric):
    return df.loc[df["metric"] == metric, "value"].tolist()


# --- perf stat ---------------------------------------------------------------

PERF_STAT_64CPU = """
 Performance counter stats for 'system wide':

        128,006.31 msec cpu-clock                        #   64.002 CPUs utilized
            15,432      context-switches                 #  120.558 /sec
     4,127,553,903      dTLB-loads                       #   32.245 M/sec
        12,345,678      dTLB-load-misses                 #    0.30% of all dTLB cache accesses
           987,654      tlb:tlb_flush
       <not supported>      itlb.itlb_flush

       2.000087612 seconds time elapsed
"""

PERF_STAT_REPEATED_QUOTED = """> Performance counter stats for './usemem -n 8 1G' (5 runs):
>
>      3,456,789,012      cycles                   ( +-  0.45% )  (62.50%)
>        123,456,789      instructions             #    0.04  insn per cycle  ( +-  1.20% )
>             54,321      page-faults              ( +-  0.01% )
>
>        4.5612 +- 0.0123 seconds time elapsed  ( +-  0.27% )
"""


def test_perf_stat_system_wide_64_cpus():
    df = parse.perf_stat(PERF_STAT_64CPU)
    assert values(df, "cpu_clock_ms") == [128006.31]
    assert values(df, "context_switches_count") == [15432]
    assert values(df, "dtlb_loads_count") == [4127553903]
    assert values(df, "dtlb_load_miss_count") == [12345678]
    assert values(df, "tlb_tlb_flush_count") == [987654]
    assert values(df, "real_time_s") == [2.000087612]
    nf = df[df["source_name"] == "itlb.itlb_flush"].iloc[0]
    assert math.isnan(nf["value"]) and "not supported" in nf["note"]
    assert df.loc[df["metric"] == "tlb_tlb_flush_count", "source_name"].item() == "tlb:tlb_flush"


def test_perf_stat_repeated_runs_mail_quoted():
    df = parse.perf_stat(PERF_STAT_REPEATED_QUOTED)
    assert values(df, "cycles_count") == [3456789012]
    assert values(df, "instructions_count") == [123456789]
    assert values(df, "page_faults_count") == [54321]
    elapsed = df[df["metric"] == "real_time_s"].iloc[0]
    assert elapsed["value"] == 4.5612 and elapsed["stddev"] == 0.0123 and elapsed["stddev_pct"] == 0.27
    sd = df.set_index("metric")["stddev_pct"]
    assert sd["cycles_count"] == 0.45 and sd["instructions_count"] == 1.20 and sd["page_faults_count"] == 0.01



# perf stat -x, and -j on the same run as PERF_STAT_64CPU, field by field as
# tools/perf/util/stat-display.c prints them: value,unit,event,run,pcnt,metric,
# metric-unit (print_counter_value_csv, print_running_csv, print_metric_csv);
# duration_time (a tool event, ns) stands for the 'seconds time elapsed' footer
# that -x and -j do not print
PERF_STAT_64CPU_CSV = """\
128006.31,msec,cpu-clock,128006310000,100.00,64.002,CPUs utilized
15432,,context-switches,128006310000,100.00,120.558,/sec
4127553903,,dTLB-loads,128006310000,100.00,32.245,M/sec
12345678,,dTLB-load-misses,128006310000,100.00,0.30,of all dTLB cache accesses
987654,,tlb:tlb_flush,128006310000,100.00,,
<not supported>,,itlb.itlb_flush,0,100.00,,
2000087612,ns,duration_time,2000087612,100.00,,
"""

# perf 6.x -j: one object per line, "counter-value" and "metric-value" as "%f" strings
PERF_STAT_64CPU_JSON = """\
{"counter-value" : "128006.310000", "unit" : "msec", "event" : "cpu-clock", "event-runtime" : 128006310000, "pcnt-running" : 100.00, "metric-value" : "64.002000", "metric-unit" : "CPUs utilized"}
{"counter-value" : "15432.000000", "unit" : "", "event" : "context-switches", "event-runtime" : 128006310000, "pcnt-running" : 100.00, "metric-value" : "120.558000", "metric-unit" : "/sec"}
{"counter-value" : "4127553903.000000", "unit" : "", "event" : "dTLB-loads", "event-runtime" : 128006310000, "pcnt-running" : 100.00, "metric-value" : "32.245000", "metric-unit" : "M/sec"}
{"counter-value" : "12345678.000000", "unit" : "", "event" : "dTLB-load-misses", "event-runtime" : 128006310000, "pcnt-running" : 100.00, "metric-value" : "0.300000", "metric-unit" : "of all dTLB cache accesses"}
{"counter-value" : "987654.000000", "unit" : "", "event" : "tlb:tlb_flush", "event-runtime" : 128006310000, "pcnt-running" : 100.00}
{"counter-value" : "<not supported>", "unit" : "", "event" : "itlb.itlb_flush", "event-runtime" : 0, "pcnt-running" : 100.00}
{"counter-value" : "2000087612.000000", "unit" : "ns", "event" : "duration_time", "event-runtime" : 2000087612, "pcnt-running" : 100.00}
"""

# perf 6.1 -j: the metric value unquoted, a nan metric printed bare; -r: "variance"
PERF_STAT_REPEATED_JSON_61 = """\
{"counter-value" : "3456789012.000000", "unit" : "", "event" : "cycles", "variance" : 0.45, "event-runtime" : 2160000000, "pcnt-running" : 62.50, "metric-value" : 0.000000, "metric-unit" : ""}
{"counter-value" : "123456789.000000", "unit" : "", "event" : "instructions", "variance" : 1.20, "event-runtime" : 3456000000, "pcnt-running" : 100.00, "metric-value" : 0.040000, "metric-unit" : "insn per cycle"}
{"counter-value" : "54321.000000", "unit" : "", "event" : "page-faults", "variance" : 0.01, "event-runtime" : 3456000000, "pcnt-running" : 100.00, "metric-value" : -nan, "metric-unit" : "/sec"}
{"counter-value" : "<not counted>", "unit" : "", "event" : "dTLB-load-misses", "event-runtime" : 0, "pcnt-running" : 0.00, "metric-value" : 0.000000, "metric-unit" : ""}
"""

# -r (print_noise_pct_csv before the run time), quoted in a mail, a continuation
# line of a second derived metric (new_line_csv: empty value, unit, event)
PERF_STAT_REPEATED_CSV = """\
> 3456789012,,cycles,0.45%,2160000000,62.50,,
> 123456789,,instructions,1.20%,3456000000,100.00,0.04,insn per cycle
> ,,,,,0.02,stalled cycles per insn
> 54321,,page-faults,0.01%,3456000000,100.00,15.710,K/sec
> <not counted>,,dTLB-load-misses,0.00%,0,0.00,,
"""


def _counters(df):
    cols = ["metric", "unit", "value", "source_name", "note", "stddev_pct"]
    return df[cols].sort_values("metric").reset_index(drop=True)


def test_perf_stat_csv_and_json_give_the_human_rows():
    human = _counters(parse.perf_stat(PERF_STAT_64CPU))
    human.loc[human["metric"] == "real_time_s", "source_name"] = "duration_time"
    for text in (PERF_STAT_64CPU_CSV, PERF_STAT_64CPU_JSON):
        got = _counters(parse.perf_stat(text))
        pd.testing.assert_frame_equal(got, human)
    df = parse.perf_stat(PERF_STAT_64CPU_CSV)
    assert values(df, "cpu_clock_ms") == [128006.31] and values(df, "dtlb_loads_count") == [4127553903]
    assert values(df, "real_time_s") == [2.000087612] and df["line"].tolist() == list(range(1, 8))


def test_perf_stat_repeated_runs_csv_and_json():
    for text in (PERF_STAT_REPEATED_CSV, PERF_STAT_REPEATED_JSON_61):
        df = parse.perf_stat(text)
        assert values(df, "cycles_count") == [3456789012] and values(df, "page_faults_count") == [54321]
        sd = df.set_index("metric")["stddev_pct"]
        assert sd["cycles_count"] == 0.45 and sd["instructions_count"] == 1.20 and sd["page_faults_count"] == 0.01
        nc = df[df["source_name"] == "dTLB-load-misses"].iloc[0]
        assert math.isnan(nc["value"]) and nc["note"] == "perf: not counted"
        assert len(df) == 4


def test_perf_stat_csv_per_cpu_interval_and_socket():
    per_cpu = "CPU0,1000,,cycles,500,100.00,,\nCPU1,2000,,cycles,500,100.00,,\nCPU0,30,,tlb:tlb_flush,500,100.00,,\n"
    df = parse.perf_stat(per_cpu)
    assert df["cpu"].tolist() == [0, 1, 0] and df["value"].tolist() == [1000, 2000, 30]
    interval = ("1.000123456;1200;;cycles;1000;100.00;;\n1.000123456;5;;tlb:tlb_flush;1000;100.00;;\n"
                "2.000234567;1300;;cycles;1000;100.00;;\n2.000234567;7;;tlb:tlb_flush;1000;100.00;;\n")
    df = parse.perf_stat(interval)  # -x';'
    assert df["block"].tolist() == [0, 0, 1, 1] and values(df, "cycles_count") == [1200, 1300]
    sockets = "S0,32,1500,,cycles,800,100.00,,\nS1,32,1700,,cycles,800,100.00,,\n"
    df = parse.perf_stat(sockets)
    assert df["row"].tolist() == ["S0", "S1"] and df["value"].tolist() == [1500, 1700]
    raw = "12,,cpu/event=0x3c,umask=0x0/,900,100.00,,\n"  # a raw event's ',' is not a separator
    assert parse.perf_stat(raw)["source_name"].tolist() == ["cpu/event=0x3c,umask=0x0/"]


def test_perf_stat_json_per_cpu_and_interval():
    text = ('{"interval" : 1.000123456, "cpu" : "0", "counter-value" : "1200.000000", "unit" : "", '
            '"event" : "cycles", "event-runtime" : 1000, "pcnt-running" : 100.00}\n'
            '{"interval" : 1.000123456, "cpu" : "3", "counter-value" : "<not counted>", "unit" : "", '
            '"event" : "cycles", "event-runtime" : 0, "pcnt-running" : 0.00}\n'
            '{"interval" : 2.000234567, "cpu" : "0", "counter-value" : "1300.000000", "unit" : "", '
            '"event" : "cycles", "event-runtime" : 1000, "pcnt-running" : 100.00}\n'
            '{"interval" : 2.000234567, "cpu" : "0", "metric-value" : "1.000000", "metric-unit" : "GHz"}\n')
    df = parse.perf_stat(text)
    assert df["cpu"].tolist() == [0, 3, 0] and df["block"].tolist() == [0, 0, 1]
    assert df["value"].iloc[0] == 1200 and math.isnan(df["value"].iloc[1]) and df["value"].iloc[2] == 1300


# --- /proc/interrupts -----------------------------------------------------------

INTERRUPTS_4CPU = """\
           CPU0       CPU1       CPU2       CPU3
  0:         44          0          0          0   IO-APIC   2-edge      timer
LOC:    2356781    2298765    2401234    2387654   Local timer interrupts
CAL:      12345      13456      11234      12987   Function call interrupts
TLB:      98765      87654      91234      90123   TLB shootdowns
TRM:          0          0          0          0   Thermal event interrupts
"""

INTERRUPTS_8CPU_FOLDED = "> > TLB: 11 22 33 44 > > 55 66 77 88 > > TLB shootdowns > > more prose"


def test_interrupts_four_cpus_with_header():
    df = parse.interrupts_tlb(INTERRUPTS_4CPU)
    assert df["cpu"].tolist() == [0, 1, 2, 3]
    assert df["value"].tolist() == [98765, 87654, 91234, 90123]
    assert (df["line"] == 5).all()


def test_interrupts_eight_cpus_folded_quoted():
    df = parse.interrupts_tlb(INTERRUPTS_8CPU_FOLDED, variant="after", virtualized=True)
    assert df["value"].tolist() == [11, 22, 33, 44, 55, 66, 77, 88]
    assert df["cpu"].tolist() == list(range(8))
    assert (df["variant"] == "after").all() and df["virtualized"].all()


def test_interrupts_header_names_cpus():
    text = "    CPU0  CPU2  CPU4\nTLB:  5  6  7  TLB shootdowns\n"
    assert parse.interrupts_tlb(text)["cpu"].tolist() == [0, 2, 4]



def test_interrupts_many_snapshots_equal_a_reference():
    """A long log of /proc/interrupts snapshots (the parser was quadratic in
    its input; benchmarks/bench_parse_interrupts.py prints the scaling): every
    row's counts and CPU numbers equal the ones the text was written from."""
    rng = np.random.default_rng(31)
    lines, want = [], []  # want: (block, cpu, value, line)
    for block in range(3000):
        # the online CPUs differ between snapshots (hotplug): header of 2..6 CPUs
        cpus = sorted(rng.choice(64, size=int(rng.integers(2, 7)), replace=False).tolist())
        counts = rng.integers(0, 10**9, size=len(cpus)).tolist()
        lines.append("        " + "  ".join(f"CPU{c}" for c in cpus))
        lines.append("LOC:  " + "  ".join("1" for _ in cpus) + "   Local timer interrupts")
        lines.append("TLB:  " + "  ".join(str(v) for v in counts) + "   TLB shootdowns")
        want += [(block, c, v, len(lines)) for c, v in zip(cpus, counts)]
    df = parse.interrupts_tlb("\n".join(lines) + "\n")
    got = list(zip(df["block"], df["cpu"], df["value"], df["line"]))
    assert len(lines) == 9000 and got == want


def test_interrupts_work_is_linear_in_the_input():
    """Counted, not timed: the Python and C calls made for 8x the snapshots
    are at most about 8x (a per-row scan of the earlier words gave ~64x)."""
    import sys

    def calls(n):
        text = ("      CPU0 CPU1 CPU2 CPU3\nTLB: 1 2 3 4  TLB shootdowns\n") * n
        count = 0

        def prof(frame, event, arg):
            nonlocal count
            count += 1

        sys.setprofile(prof)
        try:
            parse.interrupts_tlb(text)
        finally:
            sys.setprofile(None)
        return count

    assert calls(400) < 10 * calls(50)

# --- time ----------------------------------------------------------------------

def test_time_bash():
    df = parse.time_output("\nreal\t1m23.456s\nuser\t10m1.500s\nsys\t0m42.010s\n")
    assert values(df, "real_time_s") == [83.456]
    assert values(df, "user_time_s") == [601.5]
    assert values(df, "sys_time_s") == [42.01]


def test_time_gnu_and_zsh_quoted():
    gnu = "3601.20user 120.33system 1:02:03.50elapsed 99%CPU (0avgtext+0avgdata 5120maxresident)k\n"
    df = parse.time_output(gnu)
    assert values(df, "real_time_s") == [3723.5]
    assert values(df, "cpu_pct") == [99]
    zsh = ">> make -j8  1.50s user 0.25s system 175% cpu 1.000 total"
    df = parse.time_output(zsh)
    assert values(df, "user_time_s") == [1.5] and values(df, "real_time_s") == [1.0]


# --- sysbench --------------------------------------------------------------------

SYSBENCH_FULL = """
SQL statistics:
    queries performed:
        read:                            1401960
        write:                           400560
        other:                           200280
        total:                           2002800
    transactions:                        100140 (1668.61 per sec.)
    queries:                             2002800 (33372.24 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          60.0125s
    total number of events:              100140

Latency (ms):
         min:                                    2.11
         avg:                                   19.17
         max:                                  210.42
         95th percentile:                       36.89
         sum:                              1919823.47
"""


def test_sysbench_full_report():
    df = parse.sysbench(SYSBENCH_FULL, threads=32)
    assert values(df, "transactions_count") == [100140] and values(df, "transactions_per_s") == [1668.61]
    assert values(df, "queries_per_s") == [33372.24]
    assert values(df, "ignored_errors_count") == [0] and values(df, "reconnects_per_s") == [0.0]
    assert values(df, "real_time_s") == [60.0125] and values(df, "events_count") == [100140]
    assert values(df, "latency_p95_ms") == [36.89] and values(df, "latency_sum_ms") == [1919823.47]
    assert values(df, "latency_min_ms") == [2.11] and values(df, "latency_max_ms") == [210.42]
    assert (df["threads"] == 32).all()


def test_sysbench_quoted_folded():
    df = parse.sysbench("> transactions: 5 (0.50 per sec.) > queries: 80 (8.00 per sec.)")
    assert values(df, "transactions_count") == [5] and values(df, "queries_per_s") == [8.0]


# --- XSBench ------------------------------------------------------------------------

XSBENCH_FULL = """
================================================================================
                                     RESULTS
================================================================================
NOTE: Timings are for the simulation only.
Threads:     64
Runtime:     12.345 seconds
Lookups:     17,000,000
Lookups/s:   1,377,075
Verification checksum: 299541 (Valid)
================================================================================
"""


def test_xsbench_full_results():
    df = parse.xsbench(XSBENCH_FULL)
    assert values(df, "threads_count") == [64] and values(df, "runtime_s") == [12.345]
    assert values(df, "lookups_count") == [17000000] and values(df, "lookups_per_s") == [1377075]


def test_xsbench_quoted_two_runs():
    text = "> Threads: 8\n> Runtime: 1.000 seconds\n> Lookups/s: 100\n>\n> Threads: 8\n> Runtime: 2.000 seconds\n> Lookups/s: 50\n"
    df = parse.xsbench(text)
    assert df.groupby("block").size().tolist() == [3, 3]
    assert values(df, "runtime_s") == [1.0, 2.0]


# --- usemem ------------------------------------------------------------------------

def test_usemem_processes():
    text = "1073741824 bytes / 1234567 usecs = 849347 KB/s\n1073741824 bytes / 987654 usecs = 1061683 KB/s\n"
    df = parse.usemem(text, processes=2, folio_kb=64)
    assert values(df, "usemem_throughput_kib_s") == [849347, 1061683]
    assert values(df, "usemem_time_us") == [1234567, 987654]
    assert df["block"].tolist() == [0, 0, 0, 1, 1, 1]


def test_usemem_read_again_intro_quoted():
    df = parse.usemem("> read again 536870912 bytes / 2000001 usecs = 262143 KB/s")
    assert values(df, "usemem_bytes") == [536870912] and values(df, "usemem_throughput_kib_s") == [262143]


# --- LKP ------------------------------------------------------------------------------

LKP_COMMITS = """
      v6.10-rc1 a1b2c3d4e5f6
---------------- ---------------------------
         %stddev     %change         %stddev
             \\          |                \\
    123456           +10.0%     135802        will-it-scale.per_process_ops
      5.25 ±  3%      -4.8%       5.00 ±  2%  perf-stat.ps.dTLB-load-miss-rate%
"""


def test_lkp_commit_ids_and_missing_stddev():
    df = parse.lkp_compare(LKP_COMMITS)
    assert set(df["variant"]) == {"v6.10-rc1", "a1b2c3d4e5f6"}
    base = df[(df["variant"] == "v6.10-rc1") & (df["metric"] == "will_it_scale_per_process_ops")].iloc[0]
    assert base["value"] == 123456 and np.isnan(base["stddev_pct"])
    ch = df[df["metric"] == "perf_stat_ps_dtlb_load_miss_rate_change_pct"].iloc[0]
    assert ch["value"] == -4.8 and ch["baseline"] == "v6.10-rc1"
    assert df[df["metric"] == "perf_stat_ps_dtlb_load_miss_rate"]["stddev_pct"].tolist() == [3.0, 2.0]


def test_lkp_quoted_folded_without_header():
    text = "> >   100 ±  1%     +50.0%    150 ±  2%  foo.bar > >   7 +-5% -1.0% 6 +-4% baz.qux"
    df = parse.lkp_compare(text)
    assert set(df["variant"]) == {"base", "patched"}
    assert values(df, "foo_bar") == [100, 150] and values(df, "baz_qux_change_pct") == [-1.0]
    assert df[df["metric"] == "baz_qux"]["stddev_pct"].tolist() == [5.0, 4.0]


# --- perf lock contention -----------------------------------------------------------

PERF_LOCK_MIXED = """
 contended   total wait     max wait     avg wait         type   name

      1234     12.34 ms     45.67 us     10.00 us     spinlock   swap_info_struct
        56    789.00 ns     30.00 ns     14.09 ns      rwsem:R   mmap_lock
         3      1.50 s     900.00 ms    500.00 ms        mutex   cgroup_mutex
"""


def test_perf_lock_units_and_types():
    """perf prints each wait in its own unit (builtin-lock.c lock_stat_key_print_time): every
    one is read into one metric in microseconds, the printed text kept."""
    df = parse.perf_lock_contention(PERF_LOCK_MIXED)
    assert df["lock_type"].unique().tolist() == ["spinlock", "rwsem:R", "mutex"]
    assert values(df, "lock_contended_count") == [1234, 56, 3]
    assert sorted(df["metric"].unique()) == ["lock_contended_count", "lock_wait_avg_us", "lock_wait_max_us",
                                             "lock_wait_total_us"]
    assert set(df.loc[df["metric"] != "lock_contended_count", "unit"]) == {"us"}
    assert values(df, "lock_wait_total_us") == [12340.0, 0.789, 1_500_000.0]
    assert values(df, "lock_wait_max_us") == [45.67, 0.03, 900_000.0]
    assert values(df, "lock_wait_avg_us") == [10.0, 0.01409, 500_000.0]
    assert df.loc[df["metric"] == "lock_wait_total_us", "printed"].tolist() == ["12.34 ms", "789.00 ns", "1.50 s"]


def test_perf_lock_minutes_and_hours():
    """perf prints a wait of a minute or more in 'm' and of an hour or more in 'h'."""
    text = ("contended total wait max wait avg wait type caller\n"
            "  40  1.50 h  2.00 m  2.25 m  mutex  foo+0x10\n")
    df = parse.perf_lock_contention(text)
    assert values(df, "lock_wait_total_us") == [5.4e9] and values(df, "lock_wait_max_us") == [1.2e8]
    assert values(df, "lock_wait_avg_us") == [1.35e8]


@pytest.mark.parametrize("cut,line", [
    ("      1234     12.34 ms     45.67 us     10.00 us     spinlock   swap_info_struct",
     "      1234     12.34 ms     45.67 us     10.00 us     spinlock"),  # the caller lost
    ("      1234     12.34 ms     45.67 us     10.00 us     spinlock   swap_info_struct",
     "     12.34 ms     45.67 us     10.00 us     spinlock   swap_info_struct"),  # the count lost
    ("      1234     12.34 ms     45.67 us     10.00 us     spinlock   swap_info_struct",
     "  us     10.00 us     spinlock   swap_info_struct"),  # only the tail left
])
def test_perf_lock_truncated_row_names_its_line_and_text(cut, line):
    """A truncated row between whole ones is an error naming the line and its text, not a row dropped."""
    text = PERF_LOCK_MIXED.replace(cut, line)
    with pytest.raises(ParseError, match=r"line 4: truncated or garbled table row: '") as info:
        parse.perf_lock_contention(text)
    assert info.value.line == 4 and " ".join(line.split()) in str(info.value)


def test_perf_lock_quoted_folded():
    text = "> > contended total wait max wait avg wait type caller > > 7 1.40 us 0.50 us 0.20 us spinlock foo+0x10"
    df = parse.perf_lock_contention(text)
    assert values(df, "lock_wait_avg_us") == [0.2] and df["call_site"].unique().tolist() == ["foo+0x10"]


# --- markdown ---------------------------------------------------------------------------

def test_markdown_units_and_single_header():
    text = "| device | before | after |\n|---|---:|---:|\n| zram | 1.2 GB/s | 1.5 GB/s |\n| nvme | 900 MB/s | 950 MB/s |\n"
    df = parse.markdown_table(text, metric="swapout_bw")
    assert df["value"].tolist() == [1.2, 1.5, 900, 950]
    assert df["unit"].tolist() == ["GB/s", "GB/s", "MB/s", "MB/s"]
    assert df["row"].tolist() == ["zram", "zram", "nvme", "nvme"] and df["variant_detail"].isna().all()


def test_markdown_quoted_two_header_rows():
    text = "> | size | A | B |\n> | | v1 | v2 |\n> |:--|--:|--:|\n> | 16K | 1.0% | -2.5% |\n"
    df = parse.markdown_table(text)
    assert df["variant"].tolist() == ["A", "B"] and df["variant_detail"].tolist() == ["v1", "v2"]
    assert df["value"].tolist() == [1.0, -2.5] and (df["line"] == 4).all()
