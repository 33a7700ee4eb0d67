#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t mb=atol(argv[1]); int huge=atoi(argv[2]); double sleep_s=atof(argv[3]); int reps=atoi(argv[4]);
  size_t n=mb<<20;
  for(int r=0;r<reps;r++){
    char*p=mmap(NULL,n+(2<<20),PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
    p=(char*)(((unsigned long)p+(2<<20)-1)&~((2UL<<20)-1));
    madvise(p,n,huge?MADV_HUGEPAGE:MADV_NOHUGEPAGE);
    double t0=now();
    for(size_t i=0;i<n;i+=4096)p[i]=1;
    double t1=now();
    printf("rep %d sleep %.1f huge %d: %.3f s, %.2f us/4K\n",r,sleep_s,huge,t1-t0,(t1-t0)*1e6/(n/4096));
    munmap(p-0,n); /* approx */
    usleep((useconds_t)(sleep_s*1e6));
  }
}
