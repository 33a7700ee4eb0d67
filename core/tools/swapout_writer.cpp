// mmcost-writer: the swap-out workload, as usemem (vm-scalability) runs it, and
// its read-back (the swap-in workload).
//
// Forks P processes that start together (a pipe releases them at once); each
// mmaps BYTES of private anonymous memory, optionally madvise(MADV_HUGEPAGE),
// and writes every 8-byte word in order, then prints usemem's line
// "B bytes / U usecs = K KB/s" (K = B * 1e6 / 1024 / U, usemem.c). The parent
// prints bash-style real/user/sys of the whole run (getrusage of children).
//
// With --readback seq|rand (swap-in): after every process has written, the
// parent prints "written" and waits for a line on stdin (the caller snapshots
// the counters), then releases all processes at once to read their memory
// back: every word in address order (seq), or page by page in a random order
// (rand; a fixed permutation per process, every word of each page). Each
// prints "readback B bytes / U usecs = K KB/s swapped S at start T at touch"
// with U the read-back phase alone, S the pages /proc/self/pagemap showed
// swapped (bit 62) when it began, and T (seq only; -1 for rand) the pages
// swapped just before each 2 MiB chunk was read (pagemap read per chunk, its
// time left out of U). When all have read, the parent prints "read" and waits
// for a second line before the processes exit (the caller snapshots again,
// with the memory still mapped).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double now() {
  timeval t{};
  gettimeofday(&t, nullptr);
  return t.tv_sec + t.tv_usec * 1e-6;
}

unsigned long long usecs() {
  timeval t{};
  gettimeofday(&t, nullptr);
  return t.tv_sec * 1000000ULL + t.tv_usec;
}

void hms(const char* name, double s) {
  const int m = static_cast<int>(s / 60);
  std::printf("%s\t%dm%.3fs\n", name, m, s - 60.0 * m);
}

int usage() {
  std::fprintf(stderr, "usage: mmcost-writer PROCESSES BYTES [--madvise] [--readback seq|rand]\n");
  return 2;
}

constexpr unsigned long kPage = 4096;
constexpr unsigned long kChunkPages = 512;  // 2 MiB: one pagemap read per chunk

// Pages of [p, p + npages) that pagemap shows swapped (bit 62, Documentation/admin-guide/mm/pagemap.rst).
long long swapped(int pagemap, const void* p, unsigned long npages) {
  std::vector<uint64_t> e(npages);
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / kPage * 8);
  if (pread(pagemap, e.data(), npages * 8, at) != static_cast<ssize_t>(npages * 8)) return -1;
  long long n = 0;
  for (uint64_t v : e) n += (v >> 62) & 1;
  return n;
}

void wait_close(int fd) {
  char c;
  while (read(fd, &c, 1) > 0) {
  }
}

// The parent waits for one byte from each of n processes on fd; a process that dies first (the memcg's
// OOM killer, say) would leave it waiting forever (its siblings keep the pipe open), so every 100 ms it
// reaps what has exited. Returns false, having said which died and how and killed the rest, if one did.
bool await_all(int fd, long n, const std::vector<pid_t>& pids, const char* phase) {
  long got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char c;
      const ssize_t r = read(fd, &c, 1);
      if (r == 1) {
        ++got;
        continue;
      }
    }
    int status = 0;
    const pid_t dead = waitpid(-1, &status, WNOHANG);
    if (dead > 0) {
      if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "mmcost-writer: process %d was killed by signal %d while %s (SIGKILL: the memcg's OOM "
                     "killer?)\n", static_cast<int>(dead), WTERMSIG(status), phase);
      } else {
        std::fprintf(stderr, "mmcost-writer: process %d exited with status %d while %s\n", static_cast<int>(dead),
                     WEXITSTATUS(status), phase);
      }
      for (pid_t q : pids) kill(q, SIGKILL);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const long n = std::strtol(argv[1], nullptr, 10);
  const unsigned long long bytes = std::strtoull(argv[2], nullptr, 10);
  bool madvise = false;
  int readback = 0;  // 0: none, 1: seq, 2: rand
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--madvise") {
      madvise = true;
    } else if (a == "--readback" && i + 1 < argc) {
      const std::string how = argv[++i];
      readback = how == "seq" ? 1 : how == "rand" ? 2 : -1;
      if (readback < 0) return usage();
    } else {
      return usage();
    }
  }
  if (n < 1 || bytes < 8 || (readback && bytes < kPage)) return usage();
  int go[2], ready[2], read_go[2], done[2], exit_go[2];
  if (pipe(go) != 0 || pipe(ready) != 0 || pipe(read_go) != 0 || pipe(done) != 0 || pipe(exit_go) != 0)
    return std::perror("pipe"), 1;
  std::vector<pid_t> pids;
  for (long i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid < 0) return std::perror("fork"), 1;
    if (pid > 0) pids.push_back(pid);
    if (pid == 0) {
      close(go[1]);
      close(read_go[1]);
      close(exit_go[1]);
      wait_close(go[0]);  // EOF when the parent closes: all start together
      auto* p = static_cast<unsigned long*>(
          mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) std::perror("mmap"), _exit(1);
      if (madvise && ::madvise(p, bytes, MADV_HUGEPAGE) != 0) std::perror("madvise"), _exit(1);
      unsigned long long a = usecs();
      const unsigned long long words = bytes / 8;
      for (unsigned long long w = 0; w < words; ++w) p[w] = w;
      unsigned long long us = usecs() - a;
      if (us == 0) us = 1;
      std::printf("%llu bytes / %llu usecs = %llu KB/s\n", bytes, us, bytes * 1000000ULL / 1024 / us);
      std::fflush(stdout);
      if (!readback) _exit(0);
      // --- read-back --------------------------------------------------------------------
      const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
      if (pagemap < 0) std::perror("open /proc/self/pagemap"), _exit(1);
      const unsigned long pages = bytes / kPage;
      const unsigned long words_per_page = kPage / 8;
      std::vector<unsigned long> order;
      if (readback == 2) {  // the permutation is drawn before the phase starts
        order.resize(pages);
        for (unsigned long k = 0; k < pages; ++k) order[k] = k;
        std::mt19937_64 rng(12345 + i);
        for (unsigned long k = pages - 1; k > 0; --k) std::swap(order[k], order[rng() % (k + 1)]);
      }
      if (write(ready[1], "w", 1) != 1) _exit(1);
      wait_close(read_go[0]);
      const long long at_start = swapped(pagemap, p, pages);
      long long at_touch = readback == 1 ? 0 : -1;
      unsigned long long skipped = 0, sum = 0;
      a = usecs();
      if (readback == 1) {
        for (unsigned long c = 0; c < pages; c += kChunkPages) {
          const unsigned long m = pages - c < kChunkPages ? pages - c : kChunkPages;
          const unsigned long long t = usecs();
          const long long s = swapped(pagemap, p + c * words_per_page, m);
          skipped += usecs() - t;
          if (s < 0 || at_touch < 0) {
            at_touch = -1;
          } else {
            at_touch += s;
          }
          const unsigned long long end = (c + m) * words_per_page;
          for (unsigned long long w = c * words_per_page; w < end; ++w) sum += p[w];
        }
      } else {
        for (unsigned long k = 0; k < pages; ++k) {
          const unsigned long* q = p + order[k] * words_per_page;
          for (unsigned long w = 0; w < words_per_page; ++w) sum += q[w];
        }
      }
      us = usecs() - a - skipped;
      if (us == 0) us = 1;
      const unsigned long long rbytes = static_cast<unsigned long long>(pages) * kPage;
      // the words written were 0, 1, ..., words-1: their sum checks that every one came back
      const unsigned long long rwords = rbytes / 8;
      if (sum != rwords * (rwords - 1) / 2) std::fprintf(stderr, "read back a wrong sum\n"), _exit(1);
      std::printf("readback %llu bytes / %llu usecs = %llu KB/s swapped %lld at start %lld at touch\n", rbytes, us,
                  rbytes * 1000000ULL / 1024 / us, at_start, at_touch);
      std::fflush(stdout);
      if (write(done[1], "r", 1) != 1) _exit(1);
      wait_close(exit_go[0]);
      _exit(0);
    }
  }
  close(go[0]);
  close(ready[1]);
  close(done[1]);
  close(read_go[0]);
  close(exit_go[0]);
  const double t0 = now();
  close(go[1]);
  int bad = 0;
  if (readback) {
    char line[64];
    if (!await_all(ready[0], n, pids, "writing")) {
      bad = 1;  // no "written": the caller sees the writer end before the read-back
    } else {
      std::printf("written\n");
      std::fflush(stdout);
      if (std::fgets(line, sizeof line, stdin) != nullptr) {
        close(read_go[1]);
        if (!await_all(done[0], n, pids, "reading back")) {
          bad = 1;
        } else {
          std::printf("read\n");
          std::fflush(stdout);
          std::fgets(line, sizeof line, stdin);
        }
      }
    }
    close(read_go[1]);
    close(exit_go[1]);
  }
  int status = 0;
  while (wait(&status) > 0) bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  hms("real", now() - t0);
  hms("user", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6);
  hms("sys", ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
  return bad;
}
