"""Issue 10's starting point, pinned: under commit-reveal-v1 the first six records of a replay
predict the draws.  PROTOCOL.md §5 says so; a hidden deal (sra-p256-v1) must end it, and its
test will assert that this same predictor then fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from basilica_p2p.engine import default_manifest
from basilica_p2p.replay.file import read_replay
from support.stack_predictor import predicted_draws, seen_draws

ALL = sorted((Path(__file__).parent.parent / "replays").glob("*.replay"))
SAMPLES = [p for p in ALL if read_replay(p).header.shuffle == "commit-reveal-v1"]
HIDDEN = [p for p in ALL if read_replay(p).header.shuffle == "sra-p256-v1"]


def draws(sample: Path) -> tuple[list[int], list[int]]:
    """The draws the replay shows, and those the commit-reveal seed predicts."""
    manifest = default_manifest()
    return seen_draws(sample, manifest), predicted_draws(sample, manifest)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_commit_reveal_lets_the_first_records_predict_every_draw(sample: Path) -> None:
    seen, predicted = draws(sample)
    assert len(seen) >= 10
    # Tiles can come back after the D11 reshuffle; up to then, every draw was foreseeable.
    upto = len(seen) if len(seen) <= len(predicted) else len(predicted)
    assert seen[:upto] == predicted[:upto]


@pytest.mark.parametrize("sample", HIDDEN, ids=lambda p: p.stem)
def test_the_samples_dealt_face_down_are_not_predicted(sample: Path) -> None:
    seen, predicted = draws(sample)
    assert len(seen) >= 20
    hits = sum(a == b for a, b in zip(seen, predicted))
    assert hits <= 3, f"{hits} of {len(seen)} draws predicted"
