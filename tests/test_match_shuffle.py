"""``basilica match`` and ``basilica tournament`` with ``--shuffle`` (issue 10): a local game can
be dealt face down by sra-p256-v1, with or without a replay folder, and the summary says so."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.engine import Options, default_manifest
from basilica_p2p.match import MatchConfig, run_match
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.tournament import run_tournament
from basilica_p2p.wire import open_envelope

HIDDEN = "sra-p256-v1"
runner = CliRunner()


def cli(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"BASILICA_HOME": None})


def test_match_with_a_replay_dir_records_hidden_deals_that_verify_audited(tmp_path: Path) -> None:
    out = tmp_path / "replays"
    r = cli("--home", str(tmp_path / "home"), "match", "--games", "2", "--shuffle", HIDDEN, "--replay-dir", str(out))
    assert r.exit_code == 0, r.output
    # The summary line (CliRunner mixes in stderr, where a slow run's transient progress bar
    # leaves a blank line first).
    summary = next(line for line in r.output.splitlines() if line.startswith("2 games of "))
    assert f"dealt by {HIDDEN}" in summary, r.output
    files = sorted(out.glob("*.replay"))
    assert len(files) == 2
    for f in files:
        assert read_replay(f).header.shuffle == HIDDEN
        v = verify_file(f)
        assert v.ok, v.error
        assert v.line().endswith(", deal audited")


@pytest.mark.parametrize("command", [["match"], ["tournament", "--bots", "random,greedy"]])
def test_an_unknown_scheme_is_a_one_line_usage_error(tmp_path: Path, command: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "basilica_p2p.cli", "--home", str(tmp_path / "home"), *command,
                           "--shuffle", "sra-p384-v9"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "--shuffle" in proc.stderr and "sra-p256-v1" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything was played or written


def test_a_hidden_match_without_replays_really_deals_face_down_and_repeats(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    # The temporary replays go under tmp_path, so that we can see them made and deleted.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[str] = []
    import basilica_p2p.replay as replay  # the face match.py reads play_both_seats from

    real = replay.play_both_seats

    def spy(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(replay, "play_both_seats", spy)
    config = MatchConfig("greedy", "random", games=2, seed="face down", shuffle=HIDDEN)
    a = run_match(config, default_manifest(), progress=False).to_json()
    assert len(seen) == 2 and all(s.startswith(str(tmp_path)) for s in seen)
    assert list(tmp_path.iterdir()) == []  # nothing is left behind
    assert a["shuffle"] == HIDDEN and a["replays"] == []
    b = run_match(config, default_manifest(), progress=False).to_json()
    assert a == b  # the deal's secrets come from the seed: the same arguments, the same games
    seeded = run_match(MatchConfig("greedy", "random", games=2, seed="face down"), default_manifest(),
                       progress=False).to_json()
    assert seeded["shuffle"] == "commit-reveal-v1"
    assert [r["state_hash"] for r in a["results"]] != [r["state_hash"] for r in seeded["results"]]


def test_a_bot_that_fails_in_a_hidden_match_loses_by_forfeit() -> None:
    config = MatchConfig("greedy", "cmd:sh -c 'exit 3'", games=1, seed="crash", shuffle=HIDDEN)
    s = run_match(config, default_manifest(), progress=False).to_json()
    assert s["forfeits"] == 1 and s["wins"] == [1, 0]
    assert "crashed with exit code 3" in s["results"][0]["end"]


def test_a_hidden_forfeit_is_recorded_as_a_resignation_not_audited(tmp_path: Path) -> None:
    r = cli("--home", str(tmp_path / "home"), "match", "--p2", "cmd:sh -c 'exit 3'", "--seed", "x",
            "--shuffle", HIDDEN, "--replay-dir", str(tmp_path / "r"))
    assert r.exit_code == 0, r.output
    (path,) = (tmp_path / "r").glob("*.replay")
    v = verify_file(path)
    assert v.ok, v.error
    assert "deal not audited" in v.line()
    assert open_envelope(read_replay(path).records[-1]).type == "forfeit"


def test_a_hidden_tournament_says_so_and_differs_from_the_seeded_one(tmp_path: Path) -> None:
    hidden = run_tournament(["random", "greedy"], 2, "t", Options(), 1, on_forfeit=None, shuffle=HIDDEN)
    seeded = run_tournament(["random", "greedy"], 2, "t", Options(), 1, on_forfeit=None)
    assert hidden == run_tournament(["random", "greedy"], 2, "t", Options(), 1, on_forfeit=None, shuffle=HIDDEN)
    assert [r.scores for r in hidden] != [r.scores for r in seeded]
    r = cli("tournament", "--bots", "random,greedy", "--games", "2", "--seed", "t", "--shuffle", HIDDEN,
            "--out", str(tmp_path / "t"))
    assert r.exit_code == 0, r.output
    assert f"dealt by {HIDDEN}" in r.output
    data = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert data["shuffle"] == HIDDEN
    assert [tuple(g["scores"]) for g in data["games"]] == [r.scores for r in hidden]
