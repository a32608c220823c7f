"""The sample replays in replays/ verify, cover what they claim, and regenerate byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from basilica_p2p.engine import default_manifest
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.samples import SAMPLES, write_sample
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import open_envelope

REPLAYS = Path(__file__).resolve().parent.parent / "replays"


@pytest.mark.parametrize("path", sorted(REPLAYS.glob("*.replay")), ids=lambda p: p.name)
def test_sample_replay_verifies(path: Path) -> None:
    verdict = verify_file(path)
    assert verdict.ok, verdict.error
    assert verdict.outcome is not None and verdict.outcome.moves > 20


def test_samples_cover_both_rulesets_festum_stack_and_secret_jesters() -> None:
    verdicts = {p.name: verify_file(p) for p in REPLAYS.glob("*.replay")}
    assert {v.ruleset for v in verdicts.values()} == {"classic", "portal2022"}
    assert any(v.festum for v in verdicts.values())
    assert any(v.outcome and v.outcome.end == "stack" for v in verdicts.values())
    types = {open_envelope(r).type for r in read_replay(REPLAYS / "secret-jesters-random-vs-random.replay").records}
    assert {"jcommit", "jreveal"} <= types


def test_a_sample_regenerates_byte_for_byte(tmp_path: Path) -> None:
    sample = next(s for s in SAMPLES if s.name.startswith("portal2022"))
    path, _ = write_sample(sample, tmp_path, default_manifest())
    assert path.read_bytes() == (REPLAYS / sample.name).read_bytes()
