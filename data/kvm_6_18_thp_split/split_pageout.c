/* split_pageout: what one MADV_PAGEOUT costs per page for large folios swapped
 * out whole, and for the same folios split first, on this kernel.
 *
 * The caller (measure.py) enables one folio size (hugepages-<size>kB/enabled
 * = always, the others never) and a zram swap device of its own. This writes
 * BYTES of anonymous memory (2 MiB-aligned; each 8-byte word its index, as
 * usemem writes, so zram stores every page), then:
 *   whole  pages the region out with one MADV_PAGEOUT: every folio is
 *          swapped out whole (shrink_folio_list -> folio_alloc_swap of the
 *          folio's slots);
 *   split  first zaps the last 4 KiB page of every folio (MADV_DONTNEED,
 *          untimed: a PMD-mapped THP's PMD is split to PTEs there), so each
 *          folio is partially mapped; the timed MADV_PAGEOUT then finds fewer
 *          PTEs than the folio has pages and splits it to 4 KiB folios
 *          (madvise_cold_or_pageout_pte_range -> split_folio, mm/madvise.c,
 *          v6.9 on: unmap_folio's migration entries, __split_huge_page, remap_page's
 *          remove_migration_ptes per new folio) before reclaiming each page
 *          alone.
 * The call's wall time is what is measured (CLOCK_MONOTONIC around it).
 * Each run also pages out a reference region of BYTES in 4 KiB folios
 * (MADV_NOHUGEPAGE), written before and paged out right before (REF_FIRST
 * 1) or right after (0) the measured one: a paired 4K baseline in the same
 * process, so the two differ by the folio path and not by the VM's drift
 * between runs.
 *
 * usage: split_pageout whole|split FOLIO_KB BYTES REF_FIRST
 * output: "pageout_us U pages N folios F ref_pageout_us R ref_pages M"
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* A 2 MiB-aligned private anonymous region of BYTES, written with usemem's data. */
static char *region(long bytes, int small) {
    const long align = 2L << 20;
    char *raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die("mmap");
    char *p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (small && madvise(p, bytes, MADV_NOHUGEPAGE)) die("madvise(MADV_NOHUGEPAGE)");
    unsigned long *w = (unsigned long *)p;
    for (long i = 0; i < bytes / (long)sizeof *w; i++) w[i] = i;
    return p;
}

static double pageout_us(char *p, long bytes) {
    const long long t0 = nsec();
    if (madvise(p, bytes, MADV_PAGEOUT)) die("madvise(MADV_PAGEOUT)");
    return (nsec() - t0) / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "whole") && strcmp(argv[1], "split"))) {
        fprintf(stderr, "usage: split_pageout whole|split FOLIO_KB BYTES REF_FIRST\n");
        return 2;
    }
    const int split = !strcmp(argv[1], "split"), ref_first = atoi(argv[4]);
    const long folio = atol(argv[2]) * 1024L, bytes = atol(argv[3]);
    if (folio < 4096 || folio > (2L << 20) || (folio & (folio - 1)) || bytes <= 0 || bytes % (2L << 20)) {
        fprintf(stderr, "FOLIO_KB must be a power of two from 4 to 2048 and BYTES a multiple of 2 MiB\n");
        return 2;
    }
    if (split && folio == 4096) {
        fprintf(stderr, "a 4 KiB folio cannot be split\n");
        return 2;
    }
    char *ref = region(bytes, 1), *p = region(bytes, folio == 4096);
    if (split)
        for (long off = 0; off < bytes; off += folio)
            if (madvise(p + off + folio - 4096, 4096, MADV_DONTNEED)) die("madvise(MADV_DONTNEED)");
    double ref_us = 0, us;
    if (ref_first) ref_us = pageout_us(ref, bytes);
    us = pageout_us(p, bytes);
    if (!ref_first) ref_us = pageout_us(ref, bytes);
    printf("pageout_us %.1f pages %ld folios %ld ref_pageout_us %.1f ref_pages %ld\n", us,
           bytes / 4096 - (split ? bytes / folio : 0), bytes / folio, ref_us, bytes / 4096);
    return 0;
}
