/* pageout_flush: how many TLB shootdowns one MADV_PAGEOUT sends, and what
 * they cost the caller, for dirty and clean PTEs and a second thread that
 * is running (spin), idle (sleep: its CPU goes lazy) or absent (none).
 *
 * The main thread (CPU 0) writes BYTES of anonymous 4K pages (each 8-byte
 * word its index, so zram stores every page). "clean": it pages them out
 * once and reads them back (read faults map clean PTEs), so the measured
 * MADV_PAGEOUT unmaps clean PTEs. The helper thread is pinned to CPU 1.
 * /proc/interrupts' "TLB" row is read just before and after the measured
 * MADV_PAGEOUT. A spinning helper counts its loop iterations: its rate over
 * the 100 ms before the call against its rate during it gives the time the
 * flush IPIs took from it (helper_lost_us), and its CPU time over the
 * call's wall time says how much of the call it was on CPU 1, running the
 * mm (helper_on_cpu_pct: the rest of the time CPU 1 ran another thread, or
 * a kernel thread, lazily, and a flush skipped it).
 *
 * usage: pageout_flush dirty|clean spin|sleep|none BYTES
 * output: "tlb_cpu0 A tlb_cpu1 B pageout_us U pages N helper_lost_us L helper_on_cpu_pct C"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static volatile int stop;
static volatile unsigned long long iters;
static int wake[2];

static long long nsec(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof(s), &s)) {
        perror("sched_setaffinity");
        exit(1);
    }
}

/* the TLB row of /proc/interrupts: one count per CPU */
static void tlb_counts(long long out[2]) {
    FILE *f = fopen("/proc/interrupts", "r");
    char line[4096];
    out[0] = out[1] = -1;
    while (f && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ') p++;
        if (strncmp(p, "TLB:", 4) == 0) {
            sscanf(p + 4, "%lld %lld", &out[0], &out[1]);
            break;
        }
    }
    if (f) fclose(f);
    if (out[0] < 0 || out[1] < 0) {
        fprintf(stderr, "no TLB row with two CPUs in /proc/interrupts\n");
        exit(1);
    }
}

static void *helper(void *arg) {
    pin(1);
    if (strcmp((const char *)arg, "spin") == 0) {
        while (!stop) iters++;  /* in user space: the mm loaded, not lazy */
    } else {
        char c;
        if (read(wake[0], &c, 1) < 0) perror("read");  /* blocked: CPU 1 idles, lazy */
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "dirty") && strcmp(argv[1], "clean")) ||
        (strcmp(argv[2], "spin") && strcmp(argv[2], "sleep") && strcmp(argv[2], "none"))) {
        fprintf(stderr, "usage: pageout_flush dirty|clean spin|sleep|none BYTES\n");
        return 2;
    }
    unsigned long long bytes = strtoull(argv[3], NULL, 10) & ~4095ULL;
    if (bytes < 4096) return 2;
    pin(0);
    if (pipe(wake)) return 1;
    pthread_t th;
    int threaded = strcmp(argv[2], "none") != 0;
    if (threaded && pthread_create(&th, NULL, helper, argv[2])) return 1;
    unsigned long long *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 1;
    madvise(m, bytes, MADV_NOHUGEPAGE);
    for (unsigned long long i = 0; i < bytes / 8; i++) m[i] = i;
    if (strcmp(argv[1], "clean") == 0) {
        if (madvise(m, bytes, MADV_PAGEOUT)) { perror("madvise"); return 1; }
        unsigned long long sum = 0;
        for (unsigned long long i = 0; i < bytes / 8; i += 512) sum += ((volatile unsigned long long *)m)[i];
        if (sum == 1) fprintf(stderr, "?\n");
    }
    usleep(100000);  /* let the helper settle (running or idle) */
    long long tc = nsec();
    unsigned long long ic = iters;
    usleep(100000);  /* calibration: the helper's rate without flush IPIs */
    long long a[2], b[2];
    clockid_t hc;
    struct timespec h0 = {0, 0}, h1 = {0, 0};
    int spinning = strcmp(argv[2], "spin") == 0;
    if (spinning && pthread_getcpuclockid(th, &hc) == 0) clock_gettime(hc, &h0);
    tlb_counts(a);
    unsigned long long i0 = iters;
    long long t0 = nsec();
    if (madvise(m, bytes, MADV_PAGEOUT)) { perror("madvise"); return 1; }
    long long t1 = nsec();
    unsigned long long i1 = iters;
    if (spinning) clock_gettime(hc, &h1);
    tlb_counts(b);
    double on_cpu = spinning ? 100.0 * ((h1.tv_sec - h0.tv_sec) * 1e9 + (h1.tv_nsec - h0.tv_nsec)) / (double)(t1 - t0)
                             : 0.0;
    double rate = (double)(i0 - ic) / (double)(t0 - tc);  /* iterations per ns */
    double lost_us = rate > 0 ? ((t1 - t0) - (double)(i1 - i0) / rate) / 1e3 : 0.0;
    stop = 1;
    if (threaded) {
        if (write(wake[1], "x", 1) < 0) perror("write");
        pthread_join(th, NULL);
    }
    printf("tlb_cpu0 %lld tlb_cpu1 %lld pageout_us %.1f pages %llu helper_lost_us %.1f helper_on_cpu_pct %.1f\n",
           b[0] - a[0], b[1] - a[1], (t1 - t0) / 1e3, bytes / 4096, lost_us, on_cpu);
    return 0;
}
