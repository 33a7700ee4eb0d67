/* pageout_munmap: P processes each write BYTES of anonymous memory, page it
 * all out with MADV_PAGEOUT, then munmap it at the same moment; each prints
 * how long its MADV_PAGEOUT and its munmap took.
 *
 * The words written are their own index (as usemem writes), so no page is
 * same-filled and zram stores every one through zsmalloc. Children report
 * "ready" on one pipe once paged out; the parent closes a second pipe to
 * release every munmap together.
 *
 * usage: pageout_munmap PROCESSES BYTES
 * output, one line per process: "pageout_us U munmap_us M"
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static long long usec(void) {
    struct timeval t;
    gettimeofday(&t, NULL);
    return (long long)t.tv_sec * 1000000LL + t.tv_usec;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: pageout_munmap PROCESSES BYTES\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    unsigned long long bytes = strtoull(argv[2], NULL, 10);
    if (n < 1 || bytes < 4096) {
        fprintf(stderr, "usage: pageout_munmap PROCESSES BYTES\n");
        return 2;
    }
    int ready[2], go[2];
    if (pipe(ready) || pipe(go)) return perror("pipe"), 1;
    for (long i = 0; i < n; ++i) {
        pid_t pid = fork();
        if (pid < 0) return perror("fork"), 1;
        if (pid == 0) {
            close(ready[0]);
            close(go[1]);
            unsigned long *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) perror("mmap"), _exit(1);
            for (unsigned long long w = 0; w < bytes / 8; ++w) p[w] = w;
            long long a = usec();
            if (madvise(p, bytes, MADV_PAGEOUT)) perror("madvise"), _exit(1);
            long long b = usec();
            char c = 'r';
            if (write(ready[1], &c, 1) != 1) _exit(1);
            if (read(go[0], &c, 1) < 0) _exit(1);  /* EOF: the parent released everyone */
            long long d = usec();
            if (munmap(p, bytes)) perror("munmap"), _exit(1);
            long long e = usec();
            printf("pageout_us %lld munmap_us %lld\n", b - a, e - d);
            fflush(stdout);
            _exit(0);
        }
    }
    close(ready[1]);
    close(go[0]);
    for (long i = 0; i < n; ++i) {
        char c;
        if (read(ready[0], &c, 1) != 1) return fprintf(stderr, "a child failed before munmap\n"), 1;
    }
    close(go[1]);
    int status, bad = 0;
    while (wait(&status) > 0) bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return bad;
}
