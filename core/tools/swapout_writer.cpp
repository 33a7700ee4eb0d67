// mmcost-writer: the swap-out workload, as usemem (vm-scalability) runs it.
//
// Forks P processes that start together (a pipe releases them at once); each
// mmaps BYTES of private anonymous memory, optionally madvise(MADV_HUGEPAGE),
// and writes every 8-byte word in order, then prints usemem's line
// "B bytes / U usecs = K KB/s" (K = B * 1e6 / 1024 / U, usemem.c). The parent
// prints bash-style real/user/sys of the whole run (getrusage of children).
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

double now() {
  timeval t{};
  gettimeofday(&t, nullptr);
  return t.tv_sec + t.tv_usec * 1e-6;
}

void hms(const char* name, double s) {
  const int m = static_cast<int>(s / 60);
  std::printf("%s\t%dm%.3fs\n", name, m, s - 60.0 * m);
}

int usage() {
  std::fprintf(stderr, "usage: mmcost-writer PROCESSES BYTES [--madvise]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) return usage();
  const long n = std::strtol(argv[1], nullptr, 10);
  const unsigned long long bytes = std::strtoull(argv[2], nullptr, 10);
  const bool madvise = argc == 4 && std::string(argv[3]) == "--madvise";
  if (n < 1 || bytes < 8 || (argc == 4 && !madvise)) return usage();
  int go[2];
  if (pipe(go) != 0) return std::perror("pipe"), 1;
  for (long i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid < 0) return std::perror("fork"), 1;
    if (pid == 0) {
      close(go[1]);
      char c;
      if (read(go[0], &c, 1) < 0) _exit(1);  // EOF when the parent closes: all start together
      auto* p = static_cast<unsigned long*>(
          mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) std::perror("mmap"), _exit(1);
      if (madvise && ::madvise(p, bytes, MADV_HUGEPAGE) != 0) std::perror("madvise"), _exit(1);
      timeval a{}, b{};
      gettimeofday(&a, nullptr);
      const unsigned long long words = bytes / 8;
      for (unsigned long long w = 0; w < words; ++w) p[w] = w;
      gettimeofday(&b, nullptr);
      unsigned long long us = (b.tv_sec - a.tv_sec) * 1000000ULL + (b.tv_usec - a.tv_usec);
      if (us == 0) us = 1;
      std::printf("%llu bytes / %llu usecs = %llu KB/s\n", bytes, us, bytes * 1000000ULL / 1024 / us);
      std::fflush(stdout);
      _exit(0);
    }
  }
  close(go[0]);
  const double t0 = now();
  close(go[1]);
  int status = 0, bad = 0;
  while (wait(&status) > 0) bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  hms("real", now() - t0);
  hms("user", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6);
  hms("sys", ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
  return bad;
}
