"""mmcost.kernel: each catalogued change at the release it landed in (the version before and
the landing version, checked against the kernel trees), and kernel strings with patches."""

import pytest
from mmcost import kernel

# switch, the release before, the landing release, value before, value from (mainline, x86)
BOUNDARIES = [
    ("skip_inaccessible", "6.3", "6.4", False, True),           # 4d4b6d66db63
    ("batched_migration_flush", "6.2", "6.3", False, True),     # 7e12beb8ca2a
    ("swapcache_lock_partitions", "4.10", "4.11", 1, 0),        # 4b3ef9daa4fc, 64 MiB trunks
    ("swap_map_lock", "4.10", "4.11", "si_lock", "cluster"),   # 235b62176712, mm/swap: add cluster lock
    ("slot_cache", "4.10", "4.11", False, True),                # 67afa38e012e
    ("slot_cache", "6.14", "6.15", True, False),                # 0ff67f990bd4
    ("swap_whole_pmd_thp", "4.13", "4.14", False, True),        # bd4c82c22c36
    ("pti", "4.14", "4.15", False, True),                       # aa8c6248f8c7 (stable backports not modelled)
    ("invlpgb", "6.14", "6.15", False, True),                   # 4afeb0ed1753
    ("invlpgb_with_pti", "6.15", "6.16", True, False),          # 94a17f2dc90b
    ("swapin_skip_swapcache", "4.14", "4.15", False, True),     # 0bcac06f27d7
    ("swapin_mthp", "6.11", "6.12", False, True),               # 242d12c98174
    ("swap_table", "6.17", "6.18", False, True),                # swap table phase I (series)
    ("swapin_skip_swapcache", "6.19", "7.0", True, False),      # swap table phase II (series, after v6.18)
    ("pv_tlb_flush", "4.15", "4.16", False, True),              # 858a43aae235, kvm_flush_tlb_others
    ("concurrent_flush", "5.12", "5.13", False, True),          # 4ce94eabac16, flush_tlb_multi
    # 0e4b01df8659 ("present since v5.4", its author) and b3ff92916af3 (536d3bf261a2's stable tag, 5.8+):
    # releases read off the lists, not off the trees
    ("memcg_high_throttle", "5.3", "5.4", "none", "after_reclaim"),
    ("memcg_high_throttle", "5.7", "5.8", "after_reclaim", "after_no_progress"),
]


@pytest.mark.parametrize("switch", ["pv_tlb_flush", "concurrent_flush"])
def test_the_x86_ipi_flush_changes_are_x86_only(switch):
    # kvm_flush_tlb_multi is arch/x86/kernel/kvm.c's; arm64 broadcasts TLBIs with no IPI to order or skip
    assert switch not in kernel.features("6.18", "arm64")


@pytest.mark.parametrize("switch, before, at, old, new", BOUNDARIES, ids=[f"{b[0]}@{b[2]}" for b in BOUNDARIES])
def test_each_change_lands_in_its_release(switch, before, at, old, new):
    assert kernel.features(before)[switch] == old
    assert kernel.features(at)[switch] == new
    assert kernel.features(f"v{at}-rc4")[switch] == new  # an -rc is its release's tree


def test_pti_is_on_for_no_mainline_kernel_before_4_15_and_on_no_arm64():
    assert kernel.features("4.7")["pti"] is False
    assert "pti" not in kernel.features("6.6", "arm64")


def test_the_swap_table_switch_is_read_by_the_swap_in_path():
    """Once catalogued with nothing reading it and removed; the swap-in path reads it now (its lookup)."""
    from mmcost.swap import SwapInModel

    assert "swap_table" in kernel.switches()
    assert set(kernel.changes("swap_table")["read_by"]) == {"swapin"}
    assert "swap_table" in SwapInModel().leaves


def test_patches_set_switches_and_local_versions_are_ignored():
    assert kernel.patches("6.6+anon_mthp+swap_whole_mthp") == {"anon_mthp": True, "swap_whole_mthp": True}
    assert kernel.patches("4.7+writeback_tags=false") == {"writeback_tags": False}
    assert kernel.patches("6.12+swap_alloc_lock=per_cluster") == {"swap_alloc_lock": "per_cluster"}
    assert kernel.patches("4.8+swapcache_lock_partitions=4") == {"swapcache_lock_partitions": 4}
    f = kernel.features("6.6+anon_mthp")
    assert f["anon_mthp"] is True and f["swap_whole_mthp"] is False and kernel.parse_version("6.6+anon_mthp") == (6, 6)
    for local in ("6.9.0-rc4+", "6.6.31+rpt-rpi-v8", "6.18.44-fc-v973"):
        assert kernel.patches(local) == {}


@pytest.mark.parametrize("bad, match", [
    ("6.6+swap_whole_mthpp", "did you mean 'swap_whole_mthp'"),
    ("6.6+swap_alloc_lock", "needs a value"),
    ("4.7+writeback_tags=maybe", "not a value of writeback_tags"),
    ("6.12+swap_alloc_lock=global", "not a value of swap_alloc_lock"),
    ("6.6+no_such_switch=1", "names no switch"),
])
def test_a_bad_patch_is_refused_naming_it(bad, match):
    with pytest.raises(ValueError, match=match):
        kernel.features(bad)


@pytest.mark.parametrize("version, lock", [("3.10", "si_lock"), ("4.7", "si_lock"), ("4.10", "si_lock"),
                                           ("4.11", "cluster"), ("5.4", "cluster"), ("6.6", "cluster"),
                                           ("6.18", "cluster"), ("4.7+swap_map_lock=cluster", "cluster")])
def test_swap_out_takes_si_lock_for_its_swap_map_counts_until_4_11(version, lock):
    """v3.9-v4.10: __swap_duplicate, page_swapcount and swapcache_free each spin_lock(&si->lock) through
    swap_info_get (a second, third and fourth acquisition a page besides scan_swap_map); 235b62176712
    (v4.11) moved them to lock_cluster_or_swap_info, and nothing after moved them back."""
    assert kernel.features(version)["swap_map_lock"] == lock
    assert kernel.features(version, "arm64")["swap_map_lock"] == lock


@pytest.mark.parametrize("switch, before, at", [("tlbi_range", "5.8", "5.9"), ("contpte", "6.8", "6.9")])
def test_arm64_flush_changes_land_in_their_release_on_arm64_only(switch, before, at):
    # d1d3aa98b1d4 "arm64: tlb: Use the TLBI RANGE feature in arm64" (v5.9-rc1); 4602e5757bcc "arm64/mm: wire up
    # PTE_CONT for user mappings" (v6.9-rc1)
    assert kernel.features(before, "arm64")[switch] is False
    assert kernel.features(at, "arm64")[switch] is True
    assert switch not in kernel.features(at, "x86")
