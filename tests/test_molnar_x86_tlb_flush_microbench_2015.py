"""molnar_x86_tlb_flush_microbench_2015: the CPU presets' TLB primitives predicted against measured cycles.

Tolerances: an operation is composed of the primitives the docstring says;
the Intel CPU's cache-cold INVLPG of a 4K page (328-356 cycles) lies inside
the haswell-ep preset's 90% prior band; its CR3 flush (152-168 cycles) is
below the preset's 250 (the presets are not changed here; the rows are
checked against the reply, <20150625114819.GA20478@gmail.com>)."""

import pytest
from mmcost import studies
from mmcost.studies.molnar_x86_tlb_flush_microbench_2015 import primitives

STUDY = studies.get("molnar_x86_tlb_flush_microbench_2015")


def test_every_row_is_accounted_for():
    c = STUDY.counts()
    assert (c["fitted"], c["predicted"], c["not expressible"], c["unaccounted"]) == (0, 60, 28, 0)


def test_operations_are_composed_of_primitives():
    assert primitives("__flush_tlb()") == {"full_flush": 1}
    assert primitives("flush+access 3x 4K page") == {"full_flush": 1, "walk": 3}
    assert primitives("invlpg+access 2x 4K page") == {"invlpg": 2, "walk": 2}
    assert primitives("flush 4K page") == {"invlpg": 1}
    assert primitives("__flush_tlb_global()") is None and primitives("access 2x 4K page") is None


def test_intel_invlpg_cold_inside_the_preset_band_and_cr3_flush_below_it():
    held = STUDY.held_out().set_index("configuration")
    for op in ("flush 4K page, cold", "access+invlpg 4K page, cold", "invlpg+access 1x 4K page, cold"):
        r = held.loc[f"haswell-ep: {op}"]
        assert r["lo"] <= r["published"] <= r["hi"], op
    for cache in ("hot", "cold"):
        r = held.loc[f"haswell-ep: __flush_tlb(), {cache}"]
        assert r["published"] < r["predicted"] == pytest.approx(250.0)
