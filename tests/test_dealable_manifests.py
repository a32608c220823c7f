"""Manifests the hidden deal cannot deal: every valid manifest either deals, or is refused in one
line before any game begins (by match, host, join and verify, and by the referee under all of
them); the same manifests play when dealt by commit-reveal-v1 (PROTOCOL.md §5b, "Which boxes
can be dealt")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from basilica_p2p.deal import MAX_CARDS
from basilica_p2p.dealer import MAX_BOX_CARDS, box_layout, deal_problem
from basilica_p2p.engine import Manifest, Options, parse_manifest
from basilica_p2p.match import MatchConfig, run_match
from basilica_p2p.referee import GENESIS
from basilica_p2p.schemes import HIDDEN_DEAL
from basilica_p2p.replay.file import Header, ReplayWriter
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.seat import hello_body
from basilica_p2p.wire import MAX_MESSAGE, seal
from basilica_p2p.wire.envelope import MAX_SEQ
from basilica_p2p.wire.messages import MAX_DECKS
from support.replay_builders import ALICE, BOB, GAME_ID

COLOURS = ("Y", "B", "R", "G", "Y/B", "Y/R", "Y/G", "B/R", "B/G", "R/G")


def face_classes(crown_shown: bool) -> list[tuple[str, str, bool, bool]]:
    """Every order-face class a base manifest can have: (order, colours, paid, crown)."""
    plain = [(order, c, paid) for order in ("PROMOTE", "RECRUIT", "CONFUSE") for paid in (False, True)
             for c in COLOURS] + [(order, c, False) for order in ("MOVE", "STAINED_GLASS", "SCAFFOLDING", "DISASTER")
                                  for c in COLOURS]
    crowns = (False, True) if crown_shown else (False,)
    return [(order, c, paid, crown) for crown in crowns for order, c, paid in plain]


def box(sizes: list[int], crown_shown: bool = False, festum: int = 0) -> dict[str, Any]:
    """A valid manifest whose tiles fall into one order-face class per entry of ``sizes``
    (and ``festum`` Altar tiles of one class)."""
    tiles, next_id = [], 1
    for (order, colours, paid, crown), n in zip(face_classes(crown_shown), sizes, strict=False):
        for k in range(n):
            # Without crowns on the order faces, crowns vary inside a class, as in a real box.
            tiles.append({"id": next_id, "colors": colours, "crown": crown if crown_shown else k % 3 == 0,
                          "order": order, "paid": paid})
            next_id += 1
    assert sum(sizes) == len(tiles), "more classes asked for than a manifest has"
    out: dict[str, Any] = {"schema": "basilica-manifest/1", "crown_spaces": [10, 20, 30],
                           "order_faces_show_crown": crown_shown, "tiles": tiles}
    if festum:
        out["festum"] = {"tiles": [{"id": next_id + k, "colors": "Y", "crown": False, "order": "ALTAR",
                                    "paid": False} for k in range(festum)], "altar_tokens": 14}
    return out


# The two boxes of issue 20: valid manifests whose deal crashed match --shuffle sra-p256-v1.
PAIRS = box([2] * 64)  # 128 tiles, 64 classes of two: 65 decks, one more than a deal message holds
BIG = box([74] * 6 + [68])  # 512 tiles in 7 classes: 1024 cards, over the 64 KiB envelope cap
BOXES = {"64 classes of two tiles": (PAIRS, "64 order-face classes hold two or more tiles, and it deals at most 63"),
         "512 tiles in 7 classes": (BIG, "they make 1024 cards")}


def manifest_of(value: dict[str, Any]) -> Manifest:
    return parse_manifest(json.dumps(value))


@pytest.fixture(params=sorted(BOXES), ids=lambda name: name.replace(" ", "-"))
def too_big(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """A manifest file the hidden deal cannot deal, and the words its refusal says."""
    value, words = BOXES[request.param]
    path = tmp_path / "box.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path, words


def basilica(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    env.update(LOGNAME="carol", COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", "--home", str(cwd / "home"), *args],
                          cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300)


def refused_in_one_line(proc: subprocess.CompletedProcess[str], words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: manifest ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "the hidden deal sra-p256-v1 cannot deal" in proc.stderr and words in proc.stderr
    assert "--shuffle commit-reveal-v1" in proc.stderr


def test_match_refuses_a_box_the_hidden_deal_cannot_deal_in_one_line(too_big: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    path, words = too_big
    proc = basilica("match", "--p1", "random", "--p2", "random", "--shuffle", HIDDEN_DEAL, "--manifest", str(path),
                    "--replay-dir", "out", cwd=tmp_path)
    refused_in_one_line(proc, words)
    assert not (tmp_path / "out").exists()  # refused before any game


@pytest.mark.parametrize("role", [["host", "--no-invite", "--port", "0"], ["join", "127.0.0.1:9"]],
                         ids=["host", "join"])
def test_host_and_join_refuse_it_before_any_connection(too_big: tuple[Path, str], tmp_path: Path,
                                                       role: list[str]) -> None:
    path, words = too_big
    proc = basilica(*role, "--bot", "random", "--manifest", str(path), cwd=tmp_path)
    refused_in_one_line(proc, words)
    assert not (tmp_path / "home" / "replays").exists()


def test_verify_refuses_the_file_of_such_a_game_at_its_header(too_big: tuple[Path, str], tmp_path: Path) -> None:
    path, words = too_big
    manifest = parse_manifest(path.read_text(encoding="utf-8"))
    options = Options()
    # The start of a game between clients that did not check: a header and both signed hellos.
    header = Header(options.ruleset.value, False, False, bytes.fromhex(manifest.hash), GAME_ID,
                    ((ALICE.public, ALICE.name), (BOB.public, BOB.name)), shuffle=HIDDEN_DEAL)
    first = seal(ALICE.key, GAME_ID, 0, GENESIS, "hello", hello_body(ALICE.name, options, manifest, HIDDEN_DEAL))
    second = seal(BOB.key, GAME_ID, 1, first.hash, "hello", hello_body(BOB.name, options, manifest, HIDDEN_DEAL))
    replay = tmp_path / "game.replay"
    with ReplayWriter.create(replay, header) as out:
        out.append(first.raw)
        out.append(second.raw)
    verdict = verify_file(replay, known_manifests([manifest]))
    assert not verdict.ok
    assert verdict.error.startswith("record 0 ") and words in verdict.error, verdict.error
    proc = basilica("verify", str(replay), "--manifest", str(path), cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and said.count("\n") == 1, said
    assert said.startswith(f"{replay}: FAILED: record 0 (byte 8): the hidden deal sra-p256-v1 cannot deal")


def test_the_same_boxes_play_when_dealt_by_commit_reveal(too_big: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = too_big
    proc = basilica("match", "--p1", "random", "--p2", "random", "--manifest", str(path), "--replay-dir", "out",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (replay,) = (tmp_path / "out").glob("*.replay")
    manifest = parse_manifest(path.read_text(encoding="utf-8"))
    assert verify_file(replay, known_manifests([manifest])).ok
    # basilica play deals by commit-reveal-v1 as well: a person quits at once, the replay verifies.
    proc = basilica("play", "--plain", "--vs", "random", "--manifest", str(path), cwd=tmp_path, stdin="quit\nyes\n")
    assert proc.returncode == 0, proc.stderr
    assert ": ok: " in proc.stdout


@pytest.mark.parametrize("value,options,problem", [
    (box([2] * 63), Options(), None),
    (box([2] * 64), Options(), "64 order-face classes hold two or more tiles"),
    (box([2] * 63 + [1] * 137, crown_shown=True), Options(), None),  # 263 tiles, 389 cards
    (box([7] * 55 + [1] * 127, crown_shown=True), Options(), None),  # 512 tiles, 897 cards
    (box([7] * 55 + [3] + [1] * 124, crown_shown=True), Options(), None),  # 512 tiles, exactly 900 cards
    (box([7] * 55 + [4] + [1] * 123, crown_shown=True), Options(), "they make 901 cards"),
    (box([74] * 6 + [68]), Options(), "they make 1024 cards"),
    (box([1] * 200, crown_shown=True), Options(), None),  # 200 classes of one: a main deck, no sub-deck
    (box([2] * 63 + [1] * 137, crown_shown=True, festum=1), Options("portal2022", True), None),  # 264 tiles
    (box([1] * 190 + [32] * 9 + [34], crown_shown=True, festum=1), Options("portal2022", True),
     "it deals at most 512 tiles"),  # 513 tiles in play with festum
    (box([1] * 190 + [32] * 9 + [34], crown_shown=True, festum=1), Options(), None),  # without: 512, 834 cards
])
def test_the_limits_are_exactly_what_a_deal_message_holds(value: dict[str, Any], options: Options,
                                                          problem: str | None) -> None:
    got = deal_problem(manifest_of(value), options)
    if problem is None:
        assert got is None
        layout, _ = box_layout(manifest_of(value), options)
        assert len(layout.decks) <= MAX_DECKS and len(layout.main) <= MAX_CARDS
        assert sum(len(d) for d in layout.decks) <= MAX_BOX_CARDS
    else:
        assert got is not None and problem in got


def largest_deal_envelope(deck_ids: list[str], cards: int) -> int:
    """The bytes of a `key` step dealing ``cards`` cards over ``deck_ids`` (every card and key 32
    bytes, whatever their values), signed at the largest seq."""
    per = [cards // len(deck_ids) + (k < cards % len(deck_ids)) for k in range(len(deck_ids))]
    body = {"decks": [{"deck": d, "cards": [bytes(32)] * m, "keys": [bytes(32)] * m} for d, m in zip(deck_ids, per)]}
    return len(seal(ALICE.key, GAME_ID, MAX_SEQ, GENESIS, "deal", body).raw)


def test_the_largest_box_allowed_fits_every_deal_message() -> None:
    # The longest deck id a box can have: "tiles/" and the longest face text (STAINED_GLASS.12.f.c);
    # a D11 deal's ("deal1/...") are as long, and it holds no more cards or decks than the box.
    longest = "tiles/STAINED_GLASS.12.f.c"
    assert len(longest) == 26
    assert largest_deal_envelope(["faces"] + [longest] * (MAX_DECKS - 1), MAX_BOX_CARDS) <= MAX_MESSAGE
    # A real box at the limits, its own deck ids.
    layout, _ = box_layout(manifest_of(box([7] * 55 + [3] + [1] * 124, crown_shown=True)), Options())
    assert sum(len(d) for d in layout.decks) == MAX_BOX_CARDS
    assert largest_deal_envelope([d.deck_id for d in layout.decks], MAX_BOX_CARDS) <= MAX_MESSAGE


def test_a_box_of_63_classes_of_two_deals_a_whole_game_face_down(tmp_path: Path) -> None:
    manifest = manifest_of(box([2] * 63))  # 64 decks in each deal message: the most one holds
    summary = run_match(MatchConfig(p1="random", p2="random", games=1, shuffle=HIDDEN_DEAL), manifest,
                        progress=False)
    (game,) = summary.games
    assert not game.end.startswith("forfeit"), game.end


def test_the_largest_deal_message_still_fits_inside_a_fault_that_cites_it() -> None:
    """Issue 20: a false deal step is cited whole in the other side's fault (PROTOCOL.md §4c), so
    the largest deal envelope a box may need, wrapped in a fault at the largest seq, is still one
    message of at most 64 KiB."""
    longest = "tiles/STAINED_GLASS.12.f.c"
    ids = ["faces"] + [longest] * (MAX_DECKS - 1)
    per = [MAX_BOX_CARDS // len(ids) + (k < MAX_BOX_CARDS % len(ids)) for k in range(len(ids))]
    body = {"decks": [{"deck": d, "cards": [bytes(32)] * m, "keys": [bytes(32)] * m} for d, m in zip(ids, per)]}
    cited = seal(ALICE.key, GAME_ID, MAX_SEQ, GENESIS, "deal", body).raw
    fault = seal(ALICE.key, GAME_ID, MAX_SEQ, GENESIS, "fault", {"loser": 2, "message": cited})
    assert len(fault.raw) <= MAX_MESSAGE, len(fault.raw)
