"""The kernel's own constants the swap paths use (each named where the kernel defines it)."""

from __future__ import annotations

PAGE_KB = 4
PMD_KB = 2048
#: folios per shrink_folio_list call (SWAP_CLUSTER_MAX, include/linux/swap.h)
RECLAIM_BATCH = 32
#: pages MGLRU's scan_folios isolates per lruvec lock hold (MIN_LRU_BATCH = BITS_PER_LONG, mm/vmscan.c, v6.1)
MGLRU_BATCH = 64
#: swap slots taken under si->lock per per-CPU cache refill (SWAP_SLOTS_CACHE_SIZE, mm/swap_slots.c)
SLOT_CACHE_BATCH = 64

#: pages one memcg stock refill charges (MEMCG_CHARGE_BATCH, include/linux/memcontrol.h)
MEMCG_CHARGE_BATCH = 64
