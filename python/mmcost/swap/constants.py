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

# --- memory.high (mm/memcontrol.c, v5.4 on: 0e4b01df8659) ------------------------------------------------
#: extra bits of the overage ratio (usage - high) / high before squaring (MEMCG_DELAY_PRECISION_SHIFT)
MEMCG_DELAY_PRECISION_SHIFT = 20
#: bits the squared overage is scaled down by, to jiffies (MEMCG_DELAY_SCALING_SHIFT)
MEMCG_DELAY_SCALING_SHIFT = 14
#: the cap of one over-high sleep, in seconds (MEMCG_MAX_HIGH_DELAY_JIFFIES = 2UL*HZ)
MEMCG_MAX_HIGH_DELAY_S = 2
#: no-progress reclaim passes before an over-high task sleeps, v5.8 on (MAX_RECLAIM_RETRIES, d977aa939fca)
MAX_RECLAIM_RETRIES = 16
#: the CONFIG_HZ choices of kernel/Kconfig.hz
CONFIG_HZ_CHOICES = (100, 250, 300, 1000)
