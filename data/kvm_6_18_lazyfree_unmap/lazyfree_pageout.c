/* lazyfree_pageout: how long reclaim takes to unmap and free lazyfree folios
 * of one size: write BYTES of anonymous memory (faulted as folios of the
 * size the mTHP controls allow), MADV_FREE all of it (the folios become
 * lazyfree: clean, not swap-backed), then time one MADV_PAGEOUT, which
 * reclaims them in this task without any I/O (shrink_folio_list discards a
 * lazyfree folio after try_to_unmap). Single-threaded: no flush IPI.
 *
 * usage: lazyfree_pageout BYTES
 * output: "pageout_us U pages N"
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static long long nsec(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: lazyfree_pageout BYTES\n");
        return 2;
    }
    unsigned long long bytes = strtoull(argv[1], NULL, 10) & ~((2ULL << 20) - 1);
    if (bytes == 0) return 2;
    /* 2 MiB-aligned, so every folio size up to 2M lies whole inside the range */
    char *raw = mmap(NULL, bytes + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return 1;
    unsigned long long *m = (unsigned long long *)(((uintptr_t)raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
    for (unsigned long long i = 0; i < bytes / 8; i++) m[i] = i;
    if (madvise(m, bytes, MADV_FREE)) { perror("MADV_FREE"); return 1; }
    long long t0 = nsec();
    if (madvise(m, bytes, MADV_PAGEOUT)) { perror("MADV_PAGEOUT"); return 1; }
    long long t1 = nsec();
    printf("pageout_us %.1f pages %llu\n", (t1 - t0) / 1e3, bytes / 4096);
    return 0;
}
