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
//   bandwidth BYTES --rounds R
//     memset and memcpy over pre-faulted buffers: zero_gb_s, copy_gb_s
//     (decimal GB/s, bytes written per second).
//   handoff CPU_A CPU_B --ops N --rounds R
//     Two threads pass one cache line back and forth (an atomic flag each
//     waits on): handoff_ns, one transfer of a contended line between the
//     two CPUs, the handoff term of a queued lock (Boyd-Wickizer et al.,
//     "Non-scalable locks are dangerous", Linux Symposium 2012).
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
#include <cerrno>
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

int usage() {
  std::fprintf(stderr,
               "usage: mmcost-probe shootdown CPU TARGET... [--ops N] [--rounds R]\n"
               "       mmcost-probe fault BYTES [--rounds R]\n"
               "       mmcost-probe bandwidth BYTES [--rounds R]\n"
               "       mmcost-probe handoff CPU_A CPU_B [--ops N] [--rounds R]\n"
               "       mmcost-probe blockwrite DEVICE BYTES [--rounds R]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  const Options o = parse(argc - 2, argv + 2);
  if (cmd == "shootdown") return shootdown(o);
  if (cmd == "fault") return fault(o);
  if (cmd == "bandwidth") return bandwidth(o);
  if (cmd == "handoff") return handoff(o);
  if (cmd == "blockwrite") return blockwrite(o);
  return usage();
}
