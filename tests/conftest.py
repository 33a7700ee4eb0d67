from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO.parent / "shared" / "seeds"


@pytest.fixture
def seed_text():
    """Text of a seed email from ../shared/seeds (the published ground truth)."""

    def read(prefix: str) -> str:
        matches = sorted(SEEDS.glob(f"{prefix}_*.txt"))
        if not matches:
            pytest.skip(f"seed {prefix} not found under {SEEDS}")
        return matches[0].read_text(encoding="utf-8")

    return read
