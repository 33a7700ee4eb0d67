// mmcost-probe: per-primitive costs of the machine it runs on, for `mmcost measure machine`.
//
// Each subcommand runs ROUNDS rounds of one microbenchmark and prints one line
// per round, "key=value" pairs with the unit in the key's suffix, so the
// caller can state each cost's spread across rounds. Threads are pinned
// (sched_setaffinity) to the CPUs given. Nothing here changes a kernel
// setting: the caller sets the mTHP sizes and owns any zram device.
//
//   shootdown CPU TARGETS... --ops N --rounds R
//     The sender on CPU writes one 4 KiB page and drops it with
//     madvise(MADV_DONTNEED), N times. zap_page_range_single ->
//     tlb_finish_mmu -> flush_tlb_mm_range (arch/x86/mm/tlb.c) sends a flush
//     IPI to every other CPU in the mm's cpumask that runs the mm: here one
//     spinning thread of this process per TARGET CPU. Each round runs once
//     with the spinners and once without (the same faults and zaps, no
//     IPI), alternating, so the difference is the IPI's price:
//       sender_us      wall time per op with the targets,
//       sender_base_us the same without them,
//       tlb_irqs       flush IPIs the targets took per op (/proc/interrupts "TLB"),
//       target_lost_us a target's time per IPI taken from its spin loop
//                      (its loop rate during the zaps against a quiet phase).
//   fault BYTES --rounds R
//     First-touch faults of a fresh private anonymous mapping, one write
//     per 4 KiB page (the kernel picks the folio size from the mTHP
//     controls, which the caller set): fault_ns_per_kib, then the munmap:
//     unmap_ns_per_kib.
//   firsttouch BYTES --rounds R
//     First touch of PMD-sized THPs (MADV_HUGEPAGE; the caller enabled the
//     2048K size), one 2 MiB chunk at a time, the whole mapping held until
//     the round ends, so no chunk reuses another's memory: touch_us per
//     chunk, one line each. In a guest whose host takes back free guest
//     memory (free page reporting: mm/page_reporting.c, v5.7, and
//     virtio-balloon's VIRTIO_BALLOON_F_REPORTING), a THP that lands on
//     such memory pays an EPT violation and a host fault per host page
//     while it is zeroed; one that reuses memory the guest freed moments
//     ago does not. Later rounds reuse the first round's memory.
//   bandwidth BYTES --rounds R
//     memset and memcpy over pre-faulted buffers: zero_gb_s, copy_gb_s
//     (decimal GB/s, bytes written per second).
//   handoff CPU_A CPU_B --ops N --rounds R
//     Two threads pass one cache line back and forth (an atomic flag each
//     waits on): handoff_ns, one transfer of a contended line between the
//     two CPUs, the handoff term of a queued lock (Boyd-Wickizer et al.,
//     "Non-scalable locks are dangerous", Linux Symposium 2012).
//   swapin BYTES --rounds R
//     Swap-in faults with no reclaim in them: a fresh private mapping written
//     with usemem's data (the folio size is the mTHP controls', set by the
//     caller), swapped out whole by madvise(MADV_PAGEOUT) (v5.4:
//     reclaim_pages -> shrink_folio_list; onto the caller's zram swap, which
//     writes synchronously), then read back one word per 4 KiB page in
//     address order: each fault is do_swap_page (mm/memory.c) with the zram
//     read and decompression in it (SWP_SYNCHRONOUS_IO). Per round
//     pswpout_pages / pswpin_pages (/proc/vmstat), majflt (getrusage),
//     read_us, the read-back's wall time, and pageout_us, the madvise's:
//     shrink_folio_list's swap-out of every folio without the LRU scan or
//     the reference check (reclaim_pages passes ignore_references); the
//     caller divides by the folios.
//   refill BYTES [--stride S] [--cold BYTES] [--evict BYTES] [--huge] [--cold-4k] [--flush-every K] [--ops N] [--rounds R] [--cpu C]
//     The price of refilling the TLB after a full flush. A dependent pointer
//     chase (one node per 4 KiB page, or per --stride S pages so that each
//     node's PTE has a line of its own (S >= 8) or a page-table page of its
//     own (S >= 512), at a random cache line of the page, the pages
//     in one random cycle: Sattolo) over a "hot" buffer of BYTES, 4 KiB pages
//     (MADV_NOHUGEPAGE) or with --huge 2 MiB ones (MADV_HUGEPAGE); with
//     --cold, every hot load is followed by a dependent load from a second
//     random cycle over a cold buffer (THP by default, so its translations
//     take few TLB entries; --cold-4k for 4 KiB) that evicts the caches
//     between refills, as XSBench's table lookups do; with --evict, a THP
//     buffer of that size is read, one word per line, before each interval
//     (untimed), so both kinds of interval start with the chase's data and
//     page-table lines out of the caches. Each round runs N
//     loads on CPU C, in intervals of K loads, each after one of
//     two operations, alternating:
//       flush     a full flush of this mm: one mprotect of a separate
//                 64-page touched mapping, toggling PROT_READ <->
//                 PROT_READ|PROT_WRITE. It changes 64 PTEs:
//                 change_protection -> tlb_finish_mmu -> flush_tlb_mm_range
//                 (arch/x86/mm/tlb.c), 64 pages > tlb_single_page_flush_ceiling
//                 (33) -> a full flush, in both directions on 6.18 (the
//                 tlb:tlb_flush tracepoint: 2,001 pages=-1 events per 1,000
//                 RO/RW pairs);
//       noop      mprotect to the protection it has (mprotect_fixup returns
//                 early: no PTE, no flush), the same syscall entry and exit.
//     interval_extra_us: a flush interval's time over a noop interval's;
//     flush_op_us / noop_op_us: each call timed alone (the flush's own cost);
//     base_ns_per_load: a noop interval's loads;
//     refill_us_per_flush = interval_extra_us - (flush_op_us - noop_op_us),
//     refill_sem_us its standard error within the round. The pages each
//     flush makes the chase refill: hot_pages_touched (min(K, hot nodes):
//     the chase is one cycle) and cold_pages_touched (expected distinct cold
//     pages, of the cold buffer's page size, among K cold loads), all of them
//     refilled when they fit the STLB (the caller bounds them by its size).
//   blockwrite DEVICE BYTES --rounds R
//     Writes usemem's data (mmcost-writer's: word w holds w) to DEVICE with
//     O_DIRECT, 64 KiB per write: the device's work (zram_write_page ->
//     zram_compress) runs in this thread, so its CPU time per 4 KiB page is
//     write_us_per_page (cpu_us_per_page counts sys + user).
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kPage = 4096;

double now_s(clockid_t clock = CLOCK_MONOTONIC) {
  timespec t{};
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "mmcost-probe: %s: %s\n", what.c_str(), errno ? std::strerror(errno) : "bad argument");
  std::exit(1);
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) die("pin to CPU " + std::to_string(cpu));
}

long parse_long(const char* s, const char* what, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    errno = 0;
    die(std::string(what) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
        "], got '" + s + "'");
  }
  return v;
}

// Flush IPIs taken so far by each CPU: the "TLB:" row of /proc/interrupts (x86).
std::vector<long long> tlb_irqs(int ncpus) {
  std::ifstream in("/proc/interrupts");
  std::string line;
  std::vector<long long> out(ncpus, 0);
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string label;
    words >> label;
    if (label != "TLB:") continue;
    for (int i = 0; i < ncpus && (words >> out[i]); ++i) {
    }
    return out;
  }
  return {};  // no such row (arm64 flushes by broadcast TLBI, not IPIs)
}

struct Options {
  long ops = 20000;
  long rounds = 7;
  std::vector<std::string> args;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ops" && i + 1 < argc) {
      o.ops = parse_long(argv[++i], "--ops", 1, 100000000);
    } else if (a == "--rounds" && i + 1 < argc) {
      o.rounds = parse_long(argv[++i], "--rounds", 1, 1000);
    } else {
      o.args.push_back(a);
    }
  }
  return o;
}

// --- shootdown ------------------------------------------------------------------------------
struct alignas(64) Spinner {
  std::atomic<long long> loops{0};
  std::atomic<bool> ready{false};
};

int shootdown(const Options& o) {
  if (o.args.size() < 2) die("shootdown needs CPU and at least one TARGET CPU");
  const int ncpus = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  const int cpu = static_cast<int>(parse_long(o.args[0].c_str(), "CPU", 0, ncpus - 1));
  std::vector<int> targets;
  for (std::size_t i = 1; i < o.args.size(); ++i)
    targets.push_back(static_cast<int>(parse_long(o.args[i].c_str(), "TARGET", 0, ncpus - 1)));
  pin(cpu);
  auto* page = static_cast<volatile char*>(
      mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (page == MAP_FAILED) die("mmap");
  auto zap_loop = [&](long n) {
    const double t0 = now_s();
    for (long i = 0; i < n; ++i) {
      page[0] = 1;
      if (madvise(const_cast<char*>(page), kPage, MADV_DONTNEED) != 0) die("madvise");
    }
    return now_s() - t0;
  };
  zap_loop(o.ops / 10 + 1);  // warm
  for (long r = 0; r < o.rounds; ++r) {
    // without targets: the same faults and zaps, the mm on this CPU alone
    const double base = zap_loop(o.ops);
    std::vector<Spinner> spin(targets.size());
    std::atomic<int> phase{0};  // 0 quiet, 1 zapping, 2 stop
    std::vector<std::thread> threads;
    std::vector<long long> quiet_loops(targets.size()), zap_loops(targets.size());
    for (std::size_t t = 0; t < targets.size(); ++t) {
      threads.emplace_back([&, t] {
        pin(targets[t]);
        spin[t].ready.store(true);
        long long n = 0;
        while (phase.load(std::memory_order_relaxed) != 2) {
          ++n;
          if ((n & 1023) == 0) spin[t].loops.store(n, std::memory_order_relaxed);
        }
      });
    }
    for (auto& s : spin)
      while (!s.ready.load()) sched_yield();
    // quiet: the targets spin while the sender spins too (no syscalls), as long as the zaps will take
    const double quiet_s = std::max(base, 0.05);
    std::vector<long long> q0(spin.size());
    for (std::size_t t = 0; t < spin.size(); ++t) q0[t] = spin[t].loops.load();
    const double tq = now_s();
    while (now_s() - tq < quiet_s) {
    }
    const double quiet_elapsed = now_s() - tq;
    for (std::size_t t = 0; t < spin.size(); ++t) quiet_loops[t] = spin[t].loops.load() - q0[t];
    const auto irq0 = tlb_irqs(ncpus);
    for (std::size_t t = 0; t < spin.size(); ++t) q0[t] = spin[t].loops.load();
    phase.store(1);
    const double with = zap_loop(o.ops);
    for (std::size_t t = 0; t < spin.size(); ++t) zap_loops[t] = spin[t].loops.load() - q0[t];
    const auto irq1 = tlb_irqs(ncpus);
    phase.store(2);
    for (auto& th : threads) th.join();
    double irqs = 0, lost_us = 0;
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const double taken = irq0.empty() ? 0.0 : static_cast<double>(irq1[targets[t]] - irq0[targets[t]]);
      irqs += taken;
      const double rate_quiet = quiet_loops[t] / quiet_elapsed, rate_zap = zap_loops[t] / with;
      if (taken > 0) lost_us += (1.0 - rate_zap / rate_quiet) * with * 1e6 / taken;
    }
    std::printf("round=%ld targets=%zu ops=%ld sender_us=%.4f sender_base_us=%.4f tlb_irqs=%.4f target_lost_us=%.4f\n",
                r, targets.size(), o.ops, with * 1e6 / o.ops, base * 1e6 / o.ops, irqs / o.ops,
                irqs > 0 ? lost_us / targets.size() : -1.0);
    std::fflush(stdout);
  }
  return 0;
}

// --- fault ----------------------------------------------------------------------------------
int fault(const Options& o) {
  if (o.args.size() != 1) die("fault needs BYTES");
  const long bytes = parse_long(o.args[0].c_str(), "BYTES", 2 << 20, 1L << 34) & ~((2L << 20) - 1);
  for (long r = 0; r < o.rounds; ++r) {
    // 2 MiB-aligned, so every folio size up to PMD fits whole
    const std::size_t span = bytes + (2 << 20);
    auto* raw = static_cast<char*>(mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) die("mmap");
    auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + (2 << 20) - 1) & ~uintptr_t((2 << 20) - 1));
    const double t0 = now_s();
    for (long off = 0; off < bytes; off += kPage) p[off] = 1;
    const double t1 = now_s();
    if (munmap(raw, span) != 0) die("munmap");
    const double t2 = now_s();
    std::printf("round=%ld bytes=%ld fault_ns_per_kib=%.4f unmap_ns_per_kib=%.4f\n", r, bytes,
                (t1 - t0) * 1e9 / (bytes / 1024.0), (t2 - t1) * 1e9 / (bytes / 1024.0));
    std::fflush(stdout);
  }
  return 0;
}

// --- firsttouch -----------------------------------------------------------------------------
int firsttouch(const Options& o) {
  if (o.args.size() != 1) die("firsttouch needs BYTES");
  constexpr long kChunk = 2L << 20;
  const long bytes = parse_long(o.args[0].c_str(), "BYTES", kChunk, 1L << 34) & ~(kChunk - 1);
  for (long r = 0; r < o.rounds; ++r) {
    const std::size_t span = bytes + kChunk;
    auto* raw = static_cast<char*>(mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) die("mmap");
    auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kChunk - 1) & ~uintptr_t(kChunk - 1));
    if (madvise(p, bytes, MADV_HUGEPAGE) != 0) die("madvise(MADV_HUGEPAGE)");
    std::vector<double> us(bytes / kChunk);
    for (long c = 0; c < bytes / kChunk; ++c) {
      char* q = p + c * kChunk;
      const double t0 = now_s();
      for (long off = 0; off < kChunk; off += kPage) q[off] = 1;
      us[c] = (now_s() - t0) * 1e6;
    }
    if (munmap(raw, span) != 0) die("munmap");
    for (std::size_t c = 0; c < us.size(); ++c) std::printf("round=%ld chunk=%zu touch_us=%.3f\n", r, c, us[c]);
    std::fflush(stdout);
  }
  return 0;
}

// --- bandwidth ------------------------------------------------------------------------------
int bandwidth(const Options& o) {
  if (o.args.size() != 1) die("bandwidth needs BYTES");
  const long bytes = parse_long(o.args[0].c_str(), "BYTES", 1 << 20, 1L << 34);
  std::vector<char> a(bytes, 1), b(bytes, 2);  // faulted in by the fill
  for (long r = 0; r < o.rounds; ++r) {
    double t0 = now_s();
    std::memset(a.data(), static_cast<int>(r), bytes);
    const double zero = now_s() - t0;
    t0 = now_s();
    std::memcpy(b.data(), a.data(), bytes);
    const double copy = now_s() - t0;
    std::printf("round=%ld bytes=%ld zero_gb_s=%.4f copy_gb_s=%.4f check=%d\n", r, bytes, bytes / zero * 1e-9,
                bytes / copy * 1e-9, b[bytes / 2]);
    std::fflush(stdout);
  }
  return 0;
}

// --- handoff --------------------------------------------------------------------------------
int handoff(const Options& o) {
  if (o.args.size() != 2) die("handoff needs CPU_A and CPU_B");
  const int ncpus = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  const int a = static_cast<int>(parse_long(o.args[0].c_str(), "CPU_A", 0, ncpus - 1));
  const int b = static_cast<int>(parse_long(o.args[1].c_str(), "CPU_B", 0, ncpus - 1));
  for (long r = 0; r < o.rounds; ++r) {
    alignas(64) std::atomic<long> turn{0};
    std::thread other([&] {
      pin(b);
      for (long i = 0; i < o.ops; ++i) {
        while (turn.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        turn.store(2 * i + 2, std::memory_order_release);
      }
    });
    pin(a);
    const double t0 = now_s();
    for (long i = 0; i < o.ops; ++i) {
      turn.store(2 * i + 1, std::memory_order_release);
      while (turn.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    const double dt = now_s() - t0;
    other.join();
    std::printf("round=%ld ops=%ld handoff_ns=%.4f\n", r, o.ops, dt * 1e9 / (2.0 * o.ops));  // two transfers a trip
    std::fflush(stdout);
  }
  return 0;
}

// --- blockwrite -----------------------------------------------------------------------------
int blockwrite(const Options& o) {
  if (o.args.size() != 2) die("blockwrite needs DEVICE and BYTES");
  const long bytes = parse_long(o.args[1].c_str(), "BYTES", 1 << 20, 1L << 34) & ~long(kPage * 16 - 1);
  const std::size_t chunk = kPage * 16;
  void* buf = nullptr;
  if (posix_memalign(&buf, kPage, chunk) != 0) die("posix_memalign");
  auto* words = static_cast<unsigned long*>(buf);
  for (long r = 0; r < o.rounds; ++r) {
    const int fd = open(o.args[0].c_str(), O_WRONLY | O_DIRECT);
    if (fd < 0) die("open " + o.args[0]);
    rusage u0{}, u1{};
    getrusage(RUSAGE_THREAD, &u0);
    const double t0 = now_s();
    for (long off = 0; off < bytes; off += chunk) {
      const unsigned long w0 = off / sizeof(unsigned long);
      for (std::size_t w = 0; w < chunk / sizeof(unsigned long); ++w) words[w] = w0 + w;  // usemem's data
      if (pwrite(fd, buf, chunk, off) != static_cast<ssize_t>(chunk)) die("pwrite " + o.args[0]);
    }
    const double wall = now_s() - t0;
    getrusage(RUSAGE_THREAD, &u1);
    close(fd);
    auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
    const double sys = secs(u1.ru_stime) - secs(u0.ru_stime), user = secs(u1.ru_utime) - secs(u0.ru_utime);
    const double pages = static_cast<double>(bytes) / kPage;
    std::printf("round=%ld bytes=%ld write_us_per_page=%.4f cpu_us_per_page=%.4f wall_us_per_page=%.4f\n", r, bytes,
                sys * 1e6 / pages, (sys + user) * 1e6 / pages, wall * 1e6 / pages);
    std::fflush(stdout);
  }
  std::free(buf);
  return 0;
}

// --- refill ---------------------------------------------------------------------------------
// A private anonymous mapping of BYTES (2 MiB-aligned), THP asked for or refused, every page written.
char* chase_buffer(long bytes, bool huge) {
  const std::size_t span = bytes + (2 << 20);
  auto* raw = static_cast<char*>(mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (raw == MAP_FAILED) die("mmap");
  auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + (2 << 20) - 1) & ~uintptr_t((2 << 20) - 1));
  if (madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) die("madvise huge page hint");
  for (long off = 0; off < bytes; off += kPage) p[off] = 1;
  return p;
}

// kB of anonymous THP this process maps (/proc/self/smaps_rollup AnonHugePages)
long anon_huge_kib() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string key;
  long kib = 0;
  while (in >> key) {
    if (key == "AnonHugePages:") {
      in >> kib;
      return kib;
    }
  }
  return -1;
}

// One node per STRIDE-th 4 KiB page at a random line, linked into one random cycle (Sattolo); returns the first node.
void** chase_cycle(char* base, long bytes, unsigned long long& rng, long stride = 1) {
  const long pages = bytes / static_cast<long>(kPage) / stride;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  std::vector<long> order(pages);
  for (long i = 0; i < pages; ++i) order[i] = i;
  for (long i = pages - 1; i > 0; --i) std::swap(order[i], order[next() % i]);  // Sattolo: one cycle
  auto node = [&](long page) {
    return reinterpret_cast<void**>(base + page * stride * kPage + (next() % (kPage / 64)) * 64);
  };
  std::vector<void**> at(pages);
  for (long i = 0; i < pages; ++i) at[i] = node(i);
  for (long i = 0; i < pages; ++i) *at[order[i]] = at[order[(i + 1) % pages]];
  return at[order[0]];
}

int refill(const Options& o) {
  long hot_bytes = -1, cold_bytes = 0, evict_bytes = 0, every = 4096, cpu = 0, stride = 1;
  bool huge = false, cold_huge = true;
  const int ncpus = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  for (std::size_t i = 0; i < o.args.size(); ++i) {
    const std::string& a = o.args[i];
    const bool more = i + 1 < o.args.size();
    if (a == "--cold" && more) {
      cold_bytes = parse_long(o.args[++i].c_str(), "--cold", 0, 1L << 36);
    } else if (a == "--stride" && more) {
      stride = parse_long(o.args[++i].c_str(), "--stride", 1, 1L << 20);
    } else if (a == "--evict" && more) {
      evict_bytes = parse_long(o.args[++i].c_str(), "--evict", 0, 1L << 36);
    } else if (a == "--flush-every" && more) {
      every = parse_long(o.args[++i].c_str(), "--flush-every", 16, 1L << 30);
    } else if (a == "--cpu" && more) {
      cpu = parse_long(o.args[++i].c_str(), "--cpu", 0, ncpus - 1);
    } else if (a == "--huge") {
      huge = true;
    } else if (a == "--cold-4k") {
      cold_huge = false;
    } else if (hot_bytes < 0) {
      hot_bytes = parse_long(a.c_str(), "BYTES", 64 * 1024, 1L << 36);
    } else {
      die("refill: unexpected argument '" + a + "'");
    }
  }
  if (hot_bytes < 0) die("refill needs BYTES");
  const long align = huge ? (2L << 20) : long(kPage);
  hot_bytes = std::max(align, hot_bytes & ~(align - 1));
  if (hot_bytes / static_cast<long>(kPage) < stride) die("refill: BYTES must hold at least one --stride of pages");
  if (cold_bytes) cold_bytes = std::max(2L << 20, cold_bytes & ~((2L << 20) - 1));
  pin(static_cast<int>(cpu));
  unsigned long long rng = 0x9e3779b97f4a7c15ULL;
  const long thp0 = anon_huge_kib();
  char* hot = chase_buffer(hot_bytes, huge);
  const long thp1 = anon_huge_kib();
  char* cold = cold_bytes ? chase_buffer(cold_bytes, cold_huge) : nullptr;
  const long thp2 = anon_huge_kib();
  if (evict_bytes) evict_bytes = std::max(2L << 20, evict_bytes & ~((2L << 20) - 1));
  char* evict = evict_bytes ? chase_buffer(evict_bytes, true) : nullptr;
  volatile long sink = 0;
  auto sweep = [&] {  // reads one word per cache line: evicts the page-table and data lines of the chase
    long acc = 0;
    for (long off = 0; off < evict_bytes; off += 64) acc += evict[off];
    sink = sink + acc;
  };
  void** hot0 = chase_cycle(hot, hot_bytes, rng, stride);
  void** cold0 = cold ? chase_cycle(cold, cold_bytes, rng) : nullptr;
  constexpr long kFlushPages = 64;  // > tlb_single_page_flush_ceiling (33): a full flush
  auto* region = static_cast<char*>(
      mmap(nullptr, kFlushPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (region == MAP_FAILED) die("mmap");
  if (madvise(region, kFlushPages * kPage, MADV_NOHUGEPAGE) != 0) die("madvise");
  for (long i = 0; i < kFlushPages; ++i) region[i * kPage] = 1;
  int prot = PROT_READ | PROT_WRITE;
  auto flush_op = [&] {  // toggles the protection: one full flush per call (both directions flush here)
    prot ^= PROT_WRITE;
    if (mprotect(region, kFlushPages * kPage, prot) != 0) die("mprotect");
  };
  auto noop_op = [&] {  // the protection it has: mprotect_fixup returns early, no PTE touched, no flush
    if (mprotect(region, kFlushPages * kPage, prot) != 0) die("mprotect");
  };
  volatile uintptr_t zero_src = 0;
  const uintptr_t zero = zero_src;  // unknown to the compiler: ties the two chases into one dependent chain
  void** p = hot0;
  void** q = cold0 ? cold0 : hot0;
  const bool with_cold = cold0 != nullptr;
  auto loads = [&](long run) {
    if (with_cold) {
      for (long i = 0; i < run; ++i) {
        p = static_cast<void**>(*p);
        q = static_cast<void**>(
            *reinterpret_cast<void**>(reinterpret_cast<uintptr_t>(q) | (reinterpret_cast<uintptr_t>(p) & zero)));
        p = reinterpret_cast<void**>(reinterpret_cast<uintptr_t>(p) | (reinterpret_cast<uintptr_t>(q) & zero));
      }
    } else {
      for (long i = 0; i < run; ++i) p = static_cast<void**>(*p);
    }
  };
  auto ops_alone = [&](long n, int op) {
    const double t0 = now_s();
    for (long i = 0; i < n; ++i) op == 1 ? flush_op() : noop_op();
    return now_s() - t0;
  };
  const long nops = std::max(1L, o.ops / every / 2);  // intervals of each kind per round
  for (long i = 0; i < 2 * nops; ++i) loads(every);   // warm the caches and the TLB
  const long hot_nodes = hot_bytes / static_cast<long>(kPage) / stride;
  const double hot_touched = huge ? std::ceil(static_cast<double>(std::min(every, hot_nodes)) * stride / 512.0)
                                  : static_cast<double>(std::min(every, hot_nodes));
  double cold_touched = 0;
  if (with_cold) {  // distinct pages among `every` uniform draws: P (1 - (1 - 1/P)^K)
    const double units = static_cast<double>(cold_bytes) / (cold_huge ? double(2 << 20) : double(kPage));
    cold_touched = units * (1.0 - std::pow(1.0 - 1.0 / units, static_cast<double>(every)));
  }
  for (long r = 0; r < o.rounds; ++r) {
    // flush and noop intervals alternate (each: the op, then K loads), so drift and the other tenants'
    // load fall on both alike; the interval that follows a flush refills what the one before warmed
    double sum[2] = {0, 0}, sq[2] = {0, 0};
    for (long i = 0; i < 2 * nops; ++i) {
      const int kind = static_cast<int>(i & 1);  // 0: noop, 1: flush
      if (evict) sweep();  // untimed
      const double t0 = now_s();
      kind ? flush_op() : noop_op();
      loads(every);
      const double dt = now_s() - t0;
      sum[kind] += dt;
      sq[kind] += dt * dt;
    }
    const double flush_alone = ops_alone(nops, 1) / nops, noop_alone = ops_alone(nops, 2) / nops;
    const double mean_f = sum[1] / nops, mean_n = sum[0] / nops;
    auto var = [&](int k, double m) { return nops > 1 ? std::max(0.0, (sq[k] - nops * m * m) / (nops - 1)) : 0.0; };
    const double sem = std::sqrt((var(1, mean_f) + var(0, mean_n)) / nops);
    const double extra = mean_f - mean_n;
    std::printf("round=%ld bytes=%ld stride=%ld cold_bytes=%ld evict_bytes=%ld huge=%d cold_huge=%d flush_every=%ld flushes=%ld "
                "base_ns_per_load=%.4f flush_op_us=%.4f noop_op_us=%.4f interval_extra_us=%.4f "
                "refill_us_per_flush=%.4f refill_sem_us=%.4f hot_pages_touched=%.2f cold_pages_touched=%.2f "
                "hot_thp_kib=%ld cold_thp_kib=%ld check=%d\n",
                r, hot_bytes, stride, cold_bytes, evict_bytes, huge ? 1 : 0, with_cold && cold_huge ? 1 : 0, every, nops,
                (mean_n - noop_alone) * 1e9 / every, flush_alone * 1e6, noop_alone * 1e6, extra * 1e6,
                (extra - (flush_alone - noop_alone)) * 1e6, sem * 1e6, hot_touched, cold_touched, thp1 - thp0,
                thp2 - thp1, static_cast<int>((reinterpret_cast<uintptr_t>(p) ^ reinterpret_cast<uintptr_t>(q)) & 1));
    std::fflush(stdout);
  }
  return 0;
}

// --- swapin ---------------------------------------------------------------------------------
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

// One /proc/vmstat counter (pswpin, pswpout), or -1 when it is missing.
long long vmstat(const std::string& name) {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long long value = 0;
  while (in >> key >> value)
    if (key == name) return value;
  return -1;
}

int swapin(const Options& o) {
  if (o.args.size() != 1) die("swapin needs BYTES");
  const long bytes = parse_long(o.args[0].c_str(), "BYTES", 2 << 20, 1L << 34) & ~((2L << 20) - 1);
  for (long r = 0; r < o.rounds; ++r) {
    const std::size_t span = bytes + (2 << 20);  // 2 MiB-aligned: every mTHP size fits whole
    auto* raw = static_cast<char*>(mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) die("mmap");
    auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + (2 << 20) - 1) & ~uintptr_t((2 << 20) - 1));
    auto* words = reinterpret_cast<unsigned long*>(p);
    for (std::size_t w = 0; w < bytes / sizeof(unsigned long); ++w) words[w] = w;  // usemem's data
    const long long out0 = vmstat("pswpout");
    const double p0 = now_s();
    if (madvise(p, bytes, MADV_PAGEOUT) != 0) die("madvise(MADV_PAGEOUT)");
    const double pageout = now_s() - p0;
    const long long out1 = vmstat("pswpout"), in0 = vmstat("pswpin");
    rusage u0{}, u1{};
    getrusage(RUSAGE_SELF, &u0);
    unsigned long sum = 0;
    const double t0 = now_s();
    for (long off = 0; off < bytes; off += kPage) sum += *reinterpret_cast<volatile unsigned long*>(p + off);
    const double read = now_s() - t0;
    getrusage(RUSAGE_SELF, &u1);
    const long long in1 = vmstat("pswpin");
    if (munmap(raw, span) != 0) die("munmap");
    std::printf("round=%ld bytes=%ld pswpout_pages=%lld pswpin_pages=%lld majflt=%ld read_us=%.1f pageout_us=%.1f "
                "check=%lu\n", r, bytes, out1 - out0, in1 - in0, u1.ru_majflt - u0.ru_majflt, read * 1e6, pageout * 1e6,
                sum & 1);
    std::fflush(stdout);
  }
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: mmcost-probe shootdown CPU TARGET... [--ops N] [--rounds R]\n"
               "       mmcost-probe fault BYTES [--rounds R]\n"
               "       mmcost-probe firsttouch BYTES [--rounds R]\n"
               "       mmcost-probe bandwidth BYTES [--rounds R]\n"
               "       mmcost-probe handoff CPU_A CPU_B [--ops N] [--rounds R]\n"
               "       mmcost-probe blockwrite DEVICE BYTES [--rounds R]\n"
               "       mmcost-probe swapin BYTES [--rounds R]\n"
               "       mmcost-probe refill BYTES [--stride S] [--cold BYTES] [--evict BYTES] [--huge] [--cold-4k] [--flush-every K] [--ops N]"
               " [--rounds R] [--cpu C]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  const Options o = parse(argc - 2, argv + 2);
  if (cmd == "shootdown") return shootdown(o);
  if (cmd == "fault") return fault(o);
  if (cmd == "firsttouch") return firsttouch(o);
  if (cmd == "bandwidth") return bandwidth(o);
  if (cmd == "handoff") return handoff(o);
  if (cmd == "blockwrite") return blockwrite(o);
  if (cmd == "refill") return refill(o);
  if (cmd == "swapin") return swapin(o);
  return usage();
}
