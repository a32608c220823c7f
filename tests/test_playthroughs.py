"""protocol/vectors/playthroughs.json and state-hash-setups.json: the committed
files are the generator's output, every listed game replays through the
engine from the inputs written in the file to every listed hash and byte, and
each game still reaches the corner of the rules it is there for."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest

from basilica_p2p.engine import Action, Game, Options, default_manifest, parse_action, parse_manifest
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.components import JESTER
from basilica_p2p.vectors.playthroughs import FILES, build, main

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
REGENERATE = "regenerate with: python -m basilica_p2p.vectors.playthroughs --write protocol/vectors"

# What the samples never reach; the vectors must keep covering all of it.
REQUIRED = {
    "redeal", "redeal-after-placement", "paid-confuse", "stack-end-in-refill", "stack-end-in-vault-refill",
    "stack-end-in-redeal", "empty-reshuffle", "stack-end-jesters", "last-scoring-jesters",
    "cleanup-refill-stack-end", "actions-3-at-end",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def packed(g: Game) -> bytes:
    return msgpack.packb(g.canonical(), use_bin_type=True)  # type: ignore[no-any-return]


def options(o: dict[str, Any]) -> Options:
    return Options(ruleset=o["ruleset"], festum=o["festum"], festum_removal=o["removal"])


def manifest_of(entry: dict[str, Any]) -> Any:
    m = default_manifest() if entry["manifest"] is None else parse_manifest(json.dumps(entry["manifest"]))
    assert m.hash == entry["manifest_hash"]
    return m


# --- (a) the committed files are a fresh build ------------------------------------


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    return build()


def test_committed_files_match_a_fresh_build(built: dict[str, bytes]) -> None:
    assert sorted(built) == sorted(FILES)
    for name, data in built.items():
        assert (VECTORS / name).read_bytes() == data, f"{name} differs from a fresh build; {REGENERATE}"


def test_main_writes_the_same_files(built: dict[str, bytes], tmp_path: Path) -> None:
    assert main(["--write", str(tmp_path)]) == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == built


# --- (b) every game replays to every hash -------------------------------------------


@dataclass
class Step:
    before: Game
    action: Action
    events: list[str]
    after: Game


def replay(game: dict[str, Any]) -> list[Step]:
    """Play the game from the file's own inputs, checking every hash and byte on the way."""
    g = Game.new(manifest_of(game), options(game["options"]), bytes.fromhex(game["seed"]))
    assert g.state_hash() == game["setup_state"]
    points = {c["after"]: bytes.fromhex(c["bytes"]) for c in game["canonical"]}
    assert 0 in points and len(game["decisions"]) in points
    states = [game["setup_state"]]
    steps = []
    for i, d in enumerate(game["decisions"]):
        if i in points:
            assert packed(g) == points[i], f"{game['name']}: canonical bytes after {i} decisions"
        assert d["ply"] == i and g.to_move is not None and d["player"] == g.to_move + 1
        before = g.clone()
        action = parse_action(d["action"])
        events = [e.kind for e in g.apply(action)]
        assert events == d["events"], f"{game['name']} ply {i}"
        assert g.state_hash() == d["state"], f"{game['name']} ply {i}: {d['action']}"
        states.append(d["state"])
        steps.append(Step(before, action, events, g.clone()))
    assert g.over and packed(g) == points[len(steps)]
    # The listed bytes hash, by plain SHA-256, to the hash listed after that decision.
    for n, raw in points.items():
        assert hashlib.sha256(raw).hexdigest() == states[n]
        assert msgpack.unpackb(raw, raw=False)[0] == "basilica-state/1"
    assert game["end"] == {"scores": g.scores, "end_reason": g.end_reason, "turn": g.turn,
                           "scorings": g.scorings}
    return steps


GAMES = load("playthroughs.json")["games"]


@pytest.fixture(scope="module")
def replays() -> dict[str, list[Step]]:
    return {game["name"]: replay(game) for game in GAMES}


def test_every_game_replays_to_every_listed_hash(replays: dict[str, list[Step]]) -> None:
    assert len(replays) == len(GAMES) >= 4


def test_a_wrong_decision_is_caught() -> None:
    game = json.loads(json.dumps(GAMES[0]))
    game["decisions"][-1]["state"] = "00" * 32
    with pytest.raises(AssertionError):
        replay(game)


# --- (c) each game reaches what it is there for -------------------------------------


def _stack_out(s: Step) -> bool:
    return "stack-out" in s.events


def check(feature: str, steps: list[Step], game: dict[str, Any]) -> None:
    end = steps[-1].after
    crown_spaces = len(manifest_of(game).crown_spaces)
    if feature == "redeal":
        i = next(i for i, s in enumerate(steps)
                 if s.action.kind == A.REDEAL and "redeal" in s.events and not _stack_out(s))
        s, nxt = steps[i], steps[i + 1]
        assert s.after.pending.kind == "after-redeal" and s.after.actions == s.before.actions  # V* is no action
        # The placement after it is the action that counts (here, possibly the turn's third).
        assert nxt.action.kind == A.VAULT and s.after.actions < 3
        assert nxt.after.actions == s.after.actions + 1 or (s.after.actions == 2 and nxt.after.turn == s.after.turn + 1)
        assert set(s.before.market) <= set(s.after.discard) and set(s.before.market) <= s.after.discard_up
    elif feature == "redeal-after-placement":
        s = next(s for s in steps if s.action.kind == A.REDEAL and s.before.last_placed >= 0)
        assert s.after.last_placed == -1 and not s.after.is_legal(Action(A.BUILDER, cell=s.before.last_placed))
    elif feature == "paid-confuse":
        s = next(s for s in steps if s.before.pending.kind == "confuse-pay" and s.action.kind == A.PAY)
        payer = s.before.pending.player
        assert payer != s.before.active and s.before.pending.order is None
        assert s.before.in_hand is not None and s.before.orders[s.before.in_hand[1] - 1] is None
        assert s.after.pending.kind == "confuse-move" and s.after.pending.player == payer and s.after.pending.paid
        assert s.after.coins[payer] == s.before.coins[payer] - 1
    elif feature == "stack-end-in-refill":
        s = next(s for s in steps if _stack_out(s) and s.action.kind != A.REDEAL)
        assert "scoring" not in s.events[: s.events.index("stack-out")]
        assert s.before.reshuffles == 1 and not s.after.stack and end.end_reason == "stack"
        assert None in s.after.orders and s.after.in_hand is None  # the refill's order space stays empty
    elif feature == "stack-end-in-vault-refill":
        s = steps[-1]
        k = s.action.space
        assert s.action.kind == A.VAULT and _stack_out(s) and end.end_reason == "stack"
        # Ok's tile moved down to Vk before the draw that found nothing; the cell just placed is kept.
        assert end.market[k - 1] == s.before.orders[k - 1] and end.orders[k - 1] is None
        assert end.last_placed == s.action.cell and end.vaults[s.action.cell] == s.before.market[k - 1]
    elif feature == "stack-end-in-redeal":
        s = steps[-1]
        assert s.action.kind == A.REDEAL and _stack_out(s) and end.end_reason == "stack"
        assert None in s.after.market
    elif feature == "empty-reshuffle":
        s = next(s for s in steps if "reshuffle" in s.events)
        assert not s.before.discard and not s.after.stack and not s.after.over and s.after.reshuffles == 1
    elif feature == "stack-end-jesters":
        s = next(s for s in steps if _stack_out(s))
        assert s.after.pending.kind == "jester" and s.after.pending.player == s.after.active
        assert steps[-1].action.kind == A.JESTER and end.end_reason == "stack"
        assert end.pending.kind == "jester" and end.jester_choices == {}
    elif feature == "last-scoring-jesters":
        first, last = steps[-2], steps[-1]
        assert first.action.kind == last.action.kind == A.JESTER
        assert first.before.pending.player == first.before.active != last.before.pending.player
        assert first.after.canonical()[31] == [[first.before.active, [list(p) for p in first.action.colors]]]
        assert all(r == JESTER for c, col in last.action.colors for _, r in [last.before.builders[c]])
        assert end.end_reason == "last-scoring" and end.scorings == crown_spaces
        assert end.pending.kind == "jester" and end.canonical()[31] == []
        assert end.scoring_space in (1, 2, 3) and end.market[end.scoring_space - 1] is None
    elif feature == "cleanup-refill-stack-end":
        s = steps[-1]
        assert s.events == ["scoring", "stack-out", "game-over"]
        # One scoring, not the last one, then the refill after its clean-up ended the game (D26).
        assert end.end_reason == "stack" and end.scorings == s.before.scorings + 1 < crown_spaces
        assert end.builders == {} and end.scoring_space != 0
    elif feature == "actions-3-at-end":
        assert end.actions == 3 and end.turn == steps[-1].before.turn
    else:  # pragma: no cover - a feature name the test does not know
        raise AssertionError(f"unknown feature {feature!r}")


@pytest.mark.parametrize("game", GAMES, ids=[g["name"] for g in GAMES])
def test_each_game_exercises_its_features(game: dict[str, Any], replays: dict[str, list[Step]]) -> None:
    assert game["exercises"]
    for feature in game["exercises"]:
        check(feature, replays[game["name"]], game)


def test_the_games_cover_everything_required() -> None:
    assert {f for g in GAMES for f in g["exercises"]} >= REQUIRED


# --- state-hash-setups.json ----------------------------------------------------------


def test_setup_state_hashes() -> None:
    v = load("state-hash-setups.json")
    seed = bytes.fromhex(v["seed"])
    assert v["seed"] == load("commit-reveal.json")["seed"]
    names = []
    for case in v["setups"]:
        m = manifest_of(case)
        opts = options(case["options"])
        raw = bytes.fromhex(case["canonical"])
        assert hashlib.sha256(raw).hexdigest() == case["state"]
        g = Game.new(m, opts, seed)
        assert packed(g) == raw and g.state_hash() == case["state"]
        decoded = msgpack.unpackb(raw, raw=False)
        fields = case["fields"]
        assert len(fields) == len(decoded) == 35
        assert [bytes.fromhex(x) if k in ("manifest", "seed") else x for k, x in fields.items()] == decoded
        # The state right after setup, field by field, as PROTOCOL.md section 8 lists it.
        supply = (m.builders, m.promotion_tokens, m.coins)
        assert fields["coins"] == [supply[2]] * 2 and fields["supply"] == [supply[0]] * 2
        assert fields["tokens"] == [supply[1]] * 2
        assert fields["altar_supply"] == (m.altar_tokens if opts.festum else 0)
        assert len(fields["out"]) == (6 if opts.festum_removal else 0) and fields["out"] == sorted(fields["out"])
        assert fields["pending"] == ["main", fields["active"], None, 0, False]
        assert (fields["in_hand"], fields["last_placed"], fields["scoring_space"], fields["jester_colors"],
                fields["turn"], fields["actions"], fields["over"], fields["end_reason"]) == \
            (None, -1, 0, [], 1, 0, False, "")
        names.append(case["name"])
        if case["manifest"] is not None:
            d = default_manifest()
            assert m.hash != d.hash and supply != (d.builders, d.promotion_tokens, d.coins)
    assert names == ["festum", "festum-removal", "custom-manifest"]
