/* The swap-out workload, as usemem does it: fork N processes, each mmaps
 * `bytes` of anonymous memory and writes every 8-byte word in order, then
 * prints usemem's per-process line "B bytes / U usecs = K KB/s". The parent
 * prints bash-style real/user/sys of the whole run (getrusage of children). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static double now(void) { struct timeval t; gettimeofday(&t, NULL); return t.tv_sec + t.tv_usec * 1e-6; }

static void hms(const char *name, double s) { printf("%s\t%dm%.3fs\n", name, (int)(s / 60), s - 60 * (int)(s / 60)); }

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: writer PROCESSES BYTES\n"); return 2; }
  int n = atoi(argv[1]);
  unsigned long bytes = strtoul(argv[2], NULL, 10);
  double t0 = now();
  for (int i = 0; i < n; i++) {
    if (fork() == 0) {
      unsigned long *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) { perror("mmap"); _exit(1); }
      struct timeval a, b;
      gettimeofday(&a, NULL);
      for (unsigned long w = 0; w < bytes / 8; w++) p[w] = w;
      gettimeofday(&b, NULL);
      unsigned long us = (b.tv_sec - a.tv_sec) * 1000000UL + (b.tv_usec - a.tv_usec);
      printf("%lu bytes / %lu usecs = %lu KB/s\n", bytes, us, bytes * 1000000UL / 1024 / us);
      fflush(stdout);
      _exit(0);
    }
  }
  int status, bad = 0;
  while (wait(&status) > 0) bad |= !WIFEXITED(status) || WEXITSTATUS(status);
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  hms("real", now() - t0);
  hms("user", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6);
  hms("sys", ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
  return bad;
}
