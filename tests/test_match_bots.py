"""Bots, headless matches, the match CLI and the calibration (the benchmarks: tests/test_bench.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.bots import GreedyBot, RandomBot, make_bot, BotSpecError
from basilica_p2p.calibrate import Row
from basilica_p2p.cli import app
from basilica_p2p.engine import Game, Options, default_manifest, observe, reconstruct_default
from basilica_p2p.match import MatchConfig, play_game, run_match

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
MANIFEST = default_manifest()


def test_match_is_reproducible_and_seed_sensitive() -> None:
    cfg = MatchConfig("greedy", "random", games=3, seed="repro")
    a = run_match(cfg, MANIFEST, progress=False).to_json()
    b = run_match(cfg, MANIFEST, progress=False).to_json()
    assert a == b
    c = run_match(MatchConfig("greedy", "random", games=3, seed="other"), MANIFEST, progress=False).to_json()
    assert [r["state_hash"] for r in a["results"]] != [r["state_hash"] for r in c["results"]]


def test_match_summary_adds_up() -> None:
    s = run_match(MatchConfig("random", "random", games=12, seed="sum"), MANIFEST, progress=False).to_json()
    assert s["wins"][0] + s["wins"][1] + s["draws"] == 12
    assert s["ended_third_scoring"] + s["ended_stack"] == 12
    for r in s["results"]:
        a, b = r["scores"]
        assert r["winner"] == (1 if a > b else 2 if b > a else None)
        assert r["end"] in ("last-scoring", "stack")
        # A game that ended at the third scoring scored three times.
        assert r["end"] != "last-scoring" or r["scorings"] == 3


def test_greedy_beats_random() -> None:
    s = run_match(MatchConfig("greedy", "random", games=10, seed="strength"), MANIFEST, progress=False)
    assert s.wins(1) >= 9, s.to_json()["results"]


def test_bots_choose_legal_actions_in_every_ruleset() -> None:
    for options in (Options("classic"), Options("portal2022", festum=True, festum_removal=True)):
        bots = (GreedyBot(MANIFEST, 1), RandomBot(2))
        g = play_game(MANIFEST, options, bytes(32), bots)  # apply() raises on an illegal choice
        assert g.over


def test_greedy_depends_only_on_the_observation() -> None:
    # Two games that differ only in the hidden stack order below its top tile
    # look the same to the bot, so a bot with the same seed must choose the same.
    g = Game.new(MANIFEST, Options(), bytes(range(32)))
    h = g.clone()
    h.stack[:-1] = h.stack[:-1][::-1]
    assert h.stack != g.stack
    assert observe(g, g.to_move) == observe(h, h.to_move)
    compared = 0
    while observe(g, g.to_move) == observe(h, h.to_move):
        p = g.to_move
        a = GreedyBot(MANIFEST, 5).choose(observe(g, p), g.legal_actions())
        b = GreedyBot(MANIFEST, 5).choose(observe(h, p), h.legal_actions())
        assert a == b
        g.apply(a)
        h.apply(b)
        compared += 1
    # The games part once a draw reveals different tiles; until then several
    # decisions were compared.
    assert compared >= 1


def test_unknown_bot_is_refused() -> None:
    with pytest.raises(BotSpecError):
        make_bot("alphago", MANIFEST, 0)
    r = runner.invoke(app, ["match", "--p1", "alphago"])
    assert r.exit_code == 2
    assert "unknown bot 'alphago'" in r.output
    assert "Traceback" not in r.output


def test_match_cli_json_and_table() -> None:
    r = runner.invoke(app, ["match", "--p1", "greedy", "--p2", "random", "--games", "2", "--json", "--seed", "x"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["games"] == 2 and data["p1"] == "greedy" and data["manifest"] == MANIFEST.hash
    r = runner.invoke(app, ["match", "--games", "2", "--seed", "x"])
    assert r.exit_code == 0
    assert "wins" in r.output and "mean turns" in r.output and "third scoring" in r.output


def test_match_cli_show_prints_actions_and_scorings() -> None:
    r = runner.invoke(app, ["match", "--p1", "greedy", "--p2", "greedy", "--show", "--seed", "s"])
    assert r.exit_code == 0
    assert "scoring 1:" in r.output
    assert "P1  V" in r.output or "P1  O" in r.output
    assert "game over after" in r.output


def test_match_cli_rejects_festum_with_classic() -> None:
    r = runner.invoke(app, ["match", "--ruleset", "classic", "--festum"])
    assert r.exit_code == 2
    assert "festum" in r.output and "Traceback" not in r.output


def test_match_cli_with_users_manifest(tmp_path: Path) -> None:
    m = reconstruct_default(50, name="my box")
    path = tmp_path / "box.json"
    path.write_text(json.dumps(m.to_json()))
    r = runner.invoke(app, ["match", "--manifest", str(path), "--json", "--games", "1"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["manifest"] == m.hash != MANIFEST.hash


def test_match_cli_bad_manifest_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    data = MANIFEST.to_json()
    data["tiles"][3]["colors"] = "P"
    path.write_text(json.dumps(data))
    proc = subprocess.run([sys.executable, "-m", "basilica_p2p.cli", "match", "--manifest", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "tiles[3].colors" in proc.stderr and "Traceback" not in proc.stderr
    missing = subprocess.run([sys.executable, "-m", "basilica_p2p.cli", "match", "--manifest", str(tmp_path / "no")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read manifest" in missing.stderr


def test_shipped_manifest_matches_protocol_copy() -> None:
    assert (ROOT / "protocol" / "manifest.json").read_bytes() == (
        ROOT / "basilica_p2p" / "data" / "manifest.json"
    ).read_bytes()


def test_wilson_lower_bound() -> None:
    # p = 0.5, n = 100, z = 1.96: (0.519208 - 0.099866) / 1.038416 = 0.40383
    row = Row(crowns=48, games=100, third_share=0.5, median_turns=30, q1_turns=28, q3_turns=32, mean_turns=30)
    assert row.third_low == pytest.approx(0.40383, abs=1e-4)
    assert not row.meets_target  # 0.40 < 0.75
    good = Row(48, 300, 0.92, 30, 28, 32, 30)
    assert good.meets_target
    too_short = Row(48, 300, 0.99, 20, 18, 22, 20)
    assert not too_short.meets_target  # median below 25 turns


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], capture_output=True, text=True,
                          input=stdin, timeout=120)


@pytest.mark.parametrize("args", [["match", "--games", "-1"], ["match", "--ruleset", "foo"],
                                  ["match", "--games", "abc"], ["bogus"], ["match", "--nope"]])
def test_usage_errors_are_one_line(args: list[str]) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "╭" not in proc.stderr


def test_ruleset_is_case_insensitive_and_bot_names_normalised() -> None:
    r = runner.invoke(app, ["match", "--ruleset", "Classic", "--p1", "GREEDY", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["ruleset"] == "classic" and data["p1"] == "greedy"


def test_festum_needs_festum_tiles_in_the_manifest(tmp_path: Path) -> None:
    data = MANIFEST.to_json()
    del data["festum"]
    path = tmp_path / "nofestum.json"
    path.write_text(json.dumps(data))
    proc = _cli("match", "--manifest", str(path), "--festum")
    assert proc.returncode == 2 and "festum tiles" in proc.stderr


def test_summary_names_the_last_scoring_of_the_manifest(tmp_path: Path) -> None:
    data = MANIFEST.to_json()
    data["crown_spaces"] = [1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    r = runner.invoke(app, ["match", "--manifest", str(path), "--games", "2"])
    assert r.exit_code == 0, r.output
    assert "ended at the first scoring: 2" in r.output
    assert "manifest" in r.output  # a custom manifest is named in the summary


def test_show_with_json_adds_the_moves() -> None:
    r = runner.invoke(app, ["match", "--json", "--show", "--seed", "m"])
    game = json.loads(r.output)["results"][0]
    assert len(game["moves"]) == game["decisions"] > 0
    plain = json.loads(runner.invoke(app, ["match", "--json", "--seed", "m"]).output)["results"][0]
    assert "moves" not in plain and plain["state_hash"] == game["state_hash"]


def test_rules_score_reads_stdin_and_the_shipped_examples() -> None:
    example = (ROOT / "examples" / "rulebook-example.json").read_text()
    proc = _cli("rules", "score", "-", "--json", stdin=example)
    assert proc.returncode == 0, proc.stderr
    # The rulebook's example: (4x2)+2 = 10 for player 2 in blue, 2x2 = 4 + 1 for player 1.
    assert json.loads(proc.stdout)["total"] == [5, 10]
    binary = _cli("rules", "score", sys.executable)
    assert binary.returncode == 2 and "not UTF-8 text" in binary.stderr


def test_manifest_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    text = json.dumps(MANIFEST.to_json())
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"schema": ', '"name": "x", "schema": ', 1).replace('"name": "default', '"name": "y', 1))
    proc = _cli("match", "--manifest", str(path))
    assert proc.returncode == 2 and "appears twice" in proc.stderr
