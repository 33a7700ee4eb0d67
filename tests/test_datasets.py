"""The bundled data: found after install, typed, and equal to the seed text."""

import re

import pandas as pd
import pytest

import mmcost
from mmcost import schema


def test_names_and_source():
    assert "small_thp_swapout" in mmcost.datasets.names()
    src = mmcost.datasets.source("small_thp_swapout")
    assert src["author"] == "Ryan Roberts" and src["seed_file"].startswith("000_")


def test_loaded_dtypes_are_numbers_and_missing_values():
    df = mmcost.datasets.load("small_thp_swapout")
    assert df["value"].dtype == "float64"
    assert str(df["folio_kb"].dtype) == "Int64"
    assert df["cpus"].isna().all()  # the email does not say how many CPUs
    assert set(df["folio_kb"]) == {4, 64, 2048}


def test_seed000_numbers_transcribed_exactly(seed_text):
    # Read both markdown tables straight from the email and compare every cell.
    text = seed_text("000")
    rows = re.findall(r"\| (4K Page|64K THP|2M THP)\s*\|\s*(-?[\d.]+)%\s*\|\s*(-?[\d.]+)%\s*\|\s*(-?[\d.]+)%\s*\|", text)
    assert len(rows) == 6  # 3 sizes x (mean table, stddev table)
    folio = {"4K Page": 4, "64K THP": 64, "2M THP": 2048}
    variants = ["baseline", "remove-huge-flag", "swap-file-small-thp"]
    df = mmcost.datasets.load("small_thp_swapout").set_index(["folio_kb", "variant"])
    for i, (size, *cells) in enumerate(rows):
        col = "value" if i < 3 else "stddev_pct"
        for variant, cell in zip(variants, cells):
            assert df.loc[(folio[size], variant), col] == float(cell), (size, variant, col)


def test_unknown_dataset():
    with pytest.raises(KeyError, match="unknown dataset"):
        mmcost.datasets.load("nope")
    with pytest.raises(TypeError):
        mmcost.datasets.load(3)


def test_schema_rejects_malformed_rows():
    good = mmcost.datasets.load("small_thp_swapout").astype(object)
    bad = good.copy()
    bad.loc[0, "value"] = "12,5"
    with pytest.raises(ValueError, match="'value'"):
        schema.coerce(bad)
    with pytest.raises(ValueError, match="missing column"):
        schema.coerce(good.drop(columns=["metric"]))
    bad = good.copy()
    bad.loc[0, "virtualized"] = "maybe"
    with pytest.raises(ValueError, match="'virtualized'"):
        schema.coerce(bad)
    assert isinstance(schema.coerce(good), pd.DataFrame)


def test_the_bundled_seed_emails_are_the_published_ones():
    """Each source's seed_file is bundled, and equals the project's copy where
    ../shared/seeds is checked out beside the repository."""
    from conftest import SEEDS, SHARED_SEEDS

    seeded = [mmcost.datasets.source(n)["seed_file"] for n in mmcost.datasets.names()
              if "seed_file" in mmcost.datasets.source(n)]
    assert len(seeded) == 4
    for name in seeded:
        assert (SEEDS / name).is_file(), name
        if SHARED_SEEDS.is_dir():
            assert (SEEDS / name).read_bytes() == (SHARED_SEEDS / name).read_bytes(), name
