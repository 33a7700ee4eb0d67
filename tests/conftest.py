import signal
from pathlib import Path

import pytest

# A suite started in the background (`cmd &`) inherits SIGINT ignored, and Python then installs no
# Ctrl-C handler: the tests that send themselves SIGINT would wait forever. Give them Python's own.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
#: the seed emails, bundled (tests/fixtures/seeds/README.md names each one's thread)
SEEDS = REPO / "tests" / "fixtures" / "seeds"
#: the project's copy, beside the repository where it is checked out with it
SHARED_SEEDS = REPO.parent / "shared" / "seeds"


@pytest.fixture
def seed_text():
    """Text of a seed email (the published ground truth), from the bundled copy."""

    def read(prefix: str) -> str:
        matches = sorted(SEEDS.glob(f"{prefix}_*.txt"))
        assert len(matches) == 1, f"seed {prefix}: expected one file under {SEEDS}, found {matches}"
        return matches[0].read_text(encoding="utf-8")

    return read
