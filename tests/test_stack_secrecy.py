"""Issue 10's starting point, pinned: under commit-reveal-v1 the first six records of a replay
predict the draws.  PROTOCOL.md §5 says so; a hidden deal (sra-p256-v1) must end it, and its
test will assert that this same predictor then fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from basilica_p2p.engine import default_manifest
from stack_predictor import predicted_draws, seen_draws

SAMPLES = sorted((Path(__file__).parent.parent / "replays").glob("*.replay"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_commit_reveal_lets_the_first_records_predict_every_draw(sample: Path) -> None:
    manifest = default_manifest()
    seen = seen_draws(sample, manifest)
    predicted = predicted_draws(sample, manifest)
    assert len(seen) >= 10
    # Tiles can come back after the D11 reshuffle; up to then, every draw was foreseeable.
    upto = len(seen) if len(seen) <= len(predicted) else len(predicted)
    assert seen[:upto] == predicted[:upto]
