"""The sample replays in replays/ verify (those dealt face down with their deal audited), cover
what they claim, and regenerate byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from basilica_p2p.engine import default_manifest
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.samples import SAMPLES, Sample, write_sample
from basilica_p2p.replay.show import walk
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.wire import open_envelope

REPLAYS = Path(__file__).resolve().parent.parent / "replays"
HIDDEN = "sra-p256-v1"


@pytest.mark.parametrize("path", sorted(REPLAYS.glob("*.replay")), ids=lambda p: p.name)
def test_sample_replay_verifies(path: Path) -> None:
    verdict = verify_file(path)
    assert verdict.ok, verdict.error
    assert verdict.outcome is not None and verdict.outcome.moves > 20
    if read_replay(path).header.shuffle == HIDDEN:
        assert verdict.line().endswith(", deal audited") and verdict.to_json()["deal_audited"] is True


def test_samples_cover_both_rulesets_festum_stack_and_secret_jesters() -> None:
    verdicts = {p.name: verify_file(p) for p in REPLAYS.glob("*.replay")}
    assert {v.ruleset for v in verdicts.values()} == {"classic", "portal2022"}
    assert any(v.festum for v in verdicts.values())
    assert any(v.outcome and v.outcome.end == "stack" for v in verdicts.values())
    types = {open_envelope(r).type for r in read_replay(REPLAYS / "secret-jesters-random-vs-random.replay").records}
    assert {"jcommit", "jreveal"} <= types


def test_the_hidden_samples_cover_a_reshuffle_and_festum() -> None:
    hidden = [p for p in REPLAYS.glob("*.replay") if read_replay(p).header.shuffle == HIDDEN]
    assert {p.name for p in hidden} == {s.name for s in SAMPLES if s.shuffle == HIDDEN}

    def reshuffles(p: Path) -> int:
        return sum(e.kind == "reshuffle" for m in walk(p, known_manifests()).moves for e in m.events)

    assert any(reshuffles(p) for p in hidden)
    assert any(verify_file(p).festum for p in hidden)
    for p in hidden:  # every reshuffle is a new hidden deal: three steps, as for the box
        deals = sum(open_envelope(r).type == "deal" for r in read_replay(p).records)
        assert deals == 3 * (1 + reshuffles(p)), p.name


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.name.startswith("portal2022") or s.shuffle == HIDDEN],
                         ids=lambda s: s.name)
def test_a_sample_regenerates_byte_for_byte(tmp_path: Path, sample: Sample) -> None:
    path, _ = write_sample(sample, tmp_path, default_manifest())
    assert path.read_bytes() == (REPLAYS / sample.name).read_bytes()
