"""protocol/vectors/deal-game.json, hidden.replay and hidden-six.replay: the hidden deal inside a
game, checked against PROTOCOL.md §5b/§6 and DEAL-FORMAT.md as written (the layout of a box, the
cards of a round, the D11 reshuffle, the bytes hashed, what is refused and what is taken), with as
little of the reference as possible.  tests/test_vectors.py checks the files are what the
generator builds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from basilica_p2p.deal import DealError, hash_deck, open_card, parse_message
from basilica_p2p.deal import Deck as DealDeck
from basilica_p2p.engine import Manifest, default_manifest, parse_manifest
from basilica_p2p.replay.file import MAGIC, frame, read_replay
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.replay.walk import seat_for
from basilica_p2p.seat import Refused
from basilica_p2p.wire import Envelope, open_envelope

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
DATA = json.loads((VECTORS / "deal-game.json").read_text(encoding="utf-8"))
HIDDEN = "sra-p256-v1"
BITS = {"Y": 1, "B": 2, "R": 4, "G": 8}


def manifest_text(name: str) -> str:
    if name == "small":
        return str(DATA["inputs"]["manifests"]["small"]["json"])
    if name == "six":
        return str(json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["cases"][0]["json"])
    return (VECTORS.parent / "manifest.json").read_text(encoding="utf-8")


def manifest_of(game: str) -> Manifest:
    return parse_manifest(manifest_text(DATA["inputs"]["games"][game]["manifest"]))


def envelopes(game: str) -> list[Envelope]:
    return [open_envelope(r) for r in read_replay(VECTORS / game).records]


def code_points(text: str) -> list[int]:
    return [ord(c) for c in text]


# --- the layout of a box, from the text alone ------------------------------------------------


def layout_by_hand(text: str, festum: bool) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    """PROTOCOL.md §5b "Decks" and DEAL-FORMAT.md §4, from the manifest's JSON."""
    m = json.loads(text)
    tiles = list(m["tiles"]) + (list(m.get("festum", {}).get("tiles", [])) if festum else [])
    shown = m.get("order_faces_show_crown", False)
    classes: dict[str, list[int]] = {}
    for t in tiles:
        bits = sum(BITS[c] for c in t["colors"].split("/"))
        crown = ("c" if t["crown"] else "n") if shown else "-"
        face = f"{t['order']}.{bits}.{'p' if t['paid'] else 'f'}.{crown}"
        classes.setdefault(face, []).append(t["id"])
    ordered = sorted(classes, key=code_points)
    fixed = [[face, [str(i) for i in sorted(classes[face])]] for face in ordered]  # ids as numbers
    decks = [{"deck": "faces", "labels": [f"{face}#{j}" for face, ids in fixed for j in range(len(ids))]}]
    decks += [{"deck": f"tiles/{face}", "labels": ids} for face, ids in fixed if len(ids) >= 2]
    return fixed, decks


@pytest.mark.parametrize("layout", DATA["layouts"], ids=lambda layout: f"{layout['manifest']}-{layout['festum']}")
def test_the_decks_of_a_box_follow_the_documented_rule(layout: dict[str, Any]) -> None:
    classes, decks = layout_by_hand(manifest_text(layout["manifest"]), layout["festum"])
    assert layout["classes"] == classes
    assert layout["decks"] == decks


def test_the_small_box_shows_the_orders_a_second_implementation_could_get_wrong() -> None:
    small = next(layout for layout in DATA["layouts"] if layout["manifest"] == "small")
    faces = [face for face, _ in small["classes"]]
    tiles = dict((face, ids) for face, ids in small["classes"])
    assert tiles["PROMOTE.1.p.c"] == ["9", "10", "100"]  # numeric order, not text order
    assert faces.index("MOVE.12.f.n") < faces.index("MOVE.2.f.c")  # code points, not colour numbers
    assert faces.index("PROMOTE.1.p.c") < faces.index("PROMOTE.1.p.n")  # crowns c and n
    assert any(face.endswith(".-") for face, _ in DATA["layouts"][2]["classes"])  # no crown on the faces


@pytest.mark.parametrize("game", ["hidden.replay", "hidden-six.replay"])
def test_each_game_deals_its_box_and_names_the_scheme(game: str) -> None:
    header = read_replay(VECTORS / game).header
    envs = envelopes(game)
    assert header.shuffle == HIDDEN and [e.body["shuffle"] for e in envs[:2]] == [HIDDEN, HIDDEN]
    _, decks = layout_by_hand(manifest_text(DATA["inputs"]["games"][game]["manifest"]), False)
    first = [e for e in envs if e.type == "deal"][:3]
    for step in first:
        assert [d["deck"] for d in step.body["decks"]] == [d["deck"] for d in decks]
        assert [len(d["cards"]) for d in step.body["decks"]] == [len(d["labels"]) for d in decks]
    verdict = verify_file(VECTORS / game, known_manifests([manifest_of(game)]))
    assert verdict.ok and verdict.summary() == DATA["games"][game]["verdict"]
    assert verdict.summary().endswith(", deal audited")


# --- opening cards, with the deal package's primitives only ------------------------------------


class Opener:
    """Every card a replay opened, from its deal messages and both players' shares."""

    def __init__(self, game: str) -> None:
        envs = envelopes(game)
        self.game_id = envs[0].game
        steps: dict[str, list[dict[str, Any]]] = {}
        self.shares: dict[tuple[str, int], dict[int, bytes]] = {}
        for e in envs:
            if e.type == "deal":
                for d in e.body["decks"]:
                    steps.setdefault(d["deck"], []).append(d)
            elif e.type == "shares":
                player = 1 if e.sender == envs[0].sender else 2
                for deck, position, value in e.body["shares"]:
                    self.shares.setdefault((deck, position), {})[player] = value
        self.steps = steps

    def open(self, deck: str, position: int, labels: tuple[str, ...]) -> str:
        hashed = hash_deck(self.game_id, DealDeck(deck, labels))
        m1 = parse_message(hashed, 1, self.steps[deck][0], None)
        m2 = parse_message(hashed, 2, self.steps[deck][1], m1)
        m3 = parse_message(hashed, 3, self.steps[deck][2], m2)
        both = self.shares[(deck, position)]
        return open_card(hashed, m2, m3, position, both[1], both[2])


@pytest.mark.parametrize("game", ["hidden.replay", "hidden-six.replay"])
def test_the_rounds_are_the_cards_each_shares_lists_in_card_order(game: str) -> None:
    envs = envelopes(game)
    listed = []
    shares = [i for i, e in enumerate(envs) if e.type == "shares"]
    for i in shares[::2]:  # a round: one player's shares, then the other's, at once
        e, second = envs[i], envs[i + 1]
        assert second.type == "shares" and second.sender != e.sender
        cards = [[d, p] for d, p, _ in e.body["shares"]]
        assert [[d, p] for d, p, _ in second.body["shares"]] == cards
        listed.append({"record": i + 1, "from": 1 if e.sender == envs[0].sender else 2, "cards": cards})
    assert listed == DATA["games"][game]["rounds"]
    for r in listed:
        keys = [(code_points(d), p) for d, p in r["cards"]]
        assert keys == sorted(keys) and len({(d, p) for d, p in r["cards"]}) == len(keys)  # each card once


@pytest.mark.parametrize("game,stack", [("hidden.replay", True), ("hidden-six.replay", False)])
def test_the_setup_opens_the_faces_of_o_v_and_the_stack_top_then_the_market_tiles(game: str, stack: bool) -> None:
    # O1-O3 are positions 0-2, V1-V3 3-5, the stack top 6 (DEAL-FORMAT: the deal from the top).
    rounds = DATA["games"][game]["rounds"]
    assert rounds[0]["cards"] == [["faces", i] for i in range(7 if stack else 6)] and rounds[0]["from"] == 1
    layout = layout_by_hand(manifest_text(DATA["inputs"]["games"][game]["manifest"]), False)[1][0]["labels"]
    opener = Opener(game)
    sizes = {face: len(ids) for face, ids in layout_by_hand(
        manifest_text(DATA["inputs"]["games"][game]["manifest"]), False)[0]}
    due = []
    for v in (3, 4, 5):  # V1-V3 are public by their tiles: the sub-deck card of a class of two or more
        face, _, copy = opener.open("faces", v, tuple(layout)).rpartition("#")
        if sizes[face] >= 2:
            due.append([f"tiles/{face}", int(copy)])
    envs = envelopes(game)
    after = envs[rounds[0]["record"] + 1]  # the envelope after the round's two shares
    if due:
        assert rounds[1]["record"] == rounds[0]["record"] + 2 and rounds[1]["cards"] == sorted(
            due, key=lambda c: (code_points(c[0]), c[1]))
    else:
        assert after.type == "action"


def test_the_reshuffle_deals_the_pile_in_discard_order_by_faces_from_opened_cards() -> None:
    shuffled = DATA["games"]["hidden.replay"]["reshuffle"]
    pile = shuffled["pile"]
    # The decks, by the rule (PROTOCOL.md §5b): face cards by class in code-point order, copies
    # in pile order; a sub-deck per class of two or more, its labels the positions in pile order.
    classes: dict[str, list[str]] = {}
    for label, face in pile:
        classes.setdefault(face, []).append(label)
    faces = sorted(classes, key=code_points)
    decks = [{"deck": "deal1", "labels": [f"{f}#{j}" for f in faces for j in range(len(classes[f]))]}]
    decks += [{"deck": f"deal1/{f}", "labels": classes[f]} for f in faces if len(classes[f]) >= 2]
    assert shuffled["decks"] == decks
    assert any(d["labels"] != sorted(d["labels"], key=lambda s: [int(x) for x in s.split(".")]) for d in decks[1:])
    # Each face is what that position's face card opened to in the game, nothing else.
    box = layout_by_hand(manifest_text("small"), False)[1][0]["labels"]
    opener = Opener("hidden.replay")
    for label, face in pile:
        deal, index = (int(x) for x in label.split("."))
        assert deal == 0 and opener.open("faces", index, tuple(box)).rpartition("#")[0] == face
    # The deal messages deal exactly these decks, and they open as dealt.
    envs = envelopes("hidden.replay")
    steps = [e for e in envs if e.type == "deal" and e.body["decks"][0]["deck"] == "deal1"]
    assert len(steps) == 3 and envs.index(steps[0]) + 1 == shuffled["record"]
    for step in steps:
        assert [(d["deck"], len(d["cards"])) for d in step.body["decks"]] == [(d["deck"], len(d["labels"]))
                                                                                for d in decks]
    for deck in decks:
        for (name, position) in [k for k in opener.shares if k[0] == deck["deck"]]:
            assert opener.open(name, position, tuple(deck["labels"])) in deck["labels"]


def test_the_pile_is_the_discard_pile_in_the_order_discarded() -> None:
    shuffled = DATA["games"]["hidden.replay"]["reshuffle"]
    replay = read_replay(VECTORS / "hidden.replay")
    seat = seat_for(replay, known_manifests([manifest_of("hidden.replay")]), views=False)
    envs = envelopes("hidden.replay")
    last_action = max(i for i, e in enumerate(envs[:shuffled["record"] - 1]) if e.type == "action")
    for raw in replay.records[:last_action]:
        assert not isinstance(seat.receive(raw, known=True), Refused)
    g = seat.game
    assert g is not None
    # The discard pile before the decision that drew the last tile comes first, in the order
    # discarded; then what that decision discarded (here its scoring's clean-up took tiles out of
    # the cathedral), in the order the rules discard them (PROTOCOL.md §8).
    before = [f"{p.deal}.{p.index}" for p in g.discard]
    placed = {f"{p.deal}.{p.index}" for p in [*g.vaults.values(), *g.market, *g.orders] if p is not None}
    pile = [label for label, _ in shuffled["pile"]]
    assert pile[:len(before)] == before and len(before) >= 2
    assert set(pile[len(before):]) <= placed and len(pile) > len(before)


def test_an_empty_pile_deals_nothing() -> None:
    assert DATA["games"]["hidden-six.replay"]["reshuffle"] == {"record": None, "pile": [], "decks": []}
    envs = envelopes("hidden-six.replay")
    assert [e.type for e in envs].count("deal") == 3
    assert not any(d["deck"].startswith("deal1") for e in envs if e.type == "deal" for d in e.body["decks"])
    seat = seat_for(read_replay(VECTORS / "hidden-six.replay"), known_manifests([manifest_of("hidden-six.replay")]),
                    views=False)
    for raw in read_replay(VECTORS / "hidden-six.replay").records:
        seat.receive(raw, known=True)
    assert seat.game is not None and seat.game.reshuffles == 1 and seat.game.deal(1).size == 0


# --- the bytes hashed ---------------------------------------------------------------------------


def test_each_preimage_is_the_documented_encoding_of_its_fields() -> None:
    by_what = {p["what"].split(":")[0].split(" (")[0]: p for p in DATA["preimages"]}
    for p in DATA["preimages"]:
        fields = [bytes.fromhex(f["hex"]) for f in p["fields"]]
        data = p["tag"].encode("ascii") + b"\x00" + b"".join(len(f).to_bytes(4, "big") + f for f in fields)
        assert data.hex() == p["preimage"] and hashlib.sha256(data).hexdigest() == p["sha256"]
        names = {f["name"]: bytes.fromhex(f["hex"]) for f in p["fields"]}
        if "player" in names:
            assert names["player"] in (b"\x01", b"\x02")  # one byte
        if "kind" in names:
            assert names["kind"] in (b"deck", b"card")  # ASCII, length-prefixed like every field
    # They are the values the game used: player 2's share for position 3 of faces, and its commitment.
    envs = envelopes("hidden.replay")
    share = Opener("hidden.replay").shares[("faces", 3)][2]
    key = by_what["player 2's per-card key for position 3 of deck faces"]
    assert share.hex() == key["sha256"]  # counter 0 gave a scalar below n
    step2 = [e for e in envs if e.type == "deal"][1].body["decks"][0]
    assert step2["deck"] == "faces" and step2["keys"][3].hex() == by_what["player 2's key commitment for position 3 "
                                                                          "of deck faces"]["sha256"]


# --- cases: one envelope after a prefix --------------------------------------------------------


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_each_case_is_refused_or_taken_as_the_vector_says(case: dict[str, Any], tmp_path: Path) -> None:
    game = case["replay"]
    replay = read_replay(VECTORS / game)
    manifests = known_manifests([manifest_of(game)])
    seat = seat_for(replay, manifests, views=False)
    for raw in replay.records[:case["after"]]:
        assert not isinstance(seat.receive(raw, known=True), Refused)
    for hexed in case["accepted"]:
        got = seat.receive(bytes.fromhex(hexed), known=True)
        assert not isinstance(got, Refused), got.detail
    raw = bytes.fromhex(case["envelope"])
    keys = [k for k, _ in replay.header.players]
    if case["refused"] is not None:
        got = seat.receive(raw, known=True)
        assert isinstance(got, Refused) and got.detail == case["refused"]
        if case["type"] != "deal" or case["name"] != "deal-no-deck":  # a schema refusal opens no envelope
            assert open_envelope(raw).sender == keys[case["from"] - 1]
        if case["error"] is not None:
            classes = {cls.__name__: cls for cls in DealError.__subclasses__()}
            assert classes[case["error"]["class"]].check == case["error"]["check"]
            assert case["error"]["check"] in ("malformed", "card-count", "not-on-curve", "repeated-card",
                                              "false-share")
        # Refused, it changed nothing: the game's own next envelope is still taken.
        if not case["accepted"] and case["after"] < len(replay.records):
            assert not isinstance(seat.receive(replay.records[case["after"]], known=True), Refused)
    else:
        assert open_envelope(raw).sender == keys[case["from"] - 1]
        path = tmp_path / "case.replay"
        records = [*replay.records[:case["after"]], *(bytes.fromhex(h) for h in case["accepted"]), raw]
        path.write_bytes(MAGIC + frame(replay.header_bytes) + b"".join(frame(r) for r in records))
        verdict = verify_file(path, manifests)
        assert verdict.ok and verdict.summary() == case["verdict"]


def test_the_cases_cover_every_gap_of_the_spec() -> None:
    names = {c["name"] for c in DATA["cases"]}
    for prefix in ("deal-too-few-decks", "deal-decks-out-of-order", "shares-unknown-deck",
                   "shares-position-out-of-range", "shares-repeated", "shares-card-not-in-round", "shares-out-of-order",
                   "secret-player-2-first", "secret-twice", "forfeit-during-the-deal",
                   "forfeit-claimed-while-a-secret-is-due", "forfeit-after-both-secrets",
                   "opening-fault-then-the-cheaters-secret", "opening-fault-then-a-claim"):
        assert prefix in names
    # Every check of a deal message and of a share has a case naming its error class.
    checks = {c["error"]["check"] for c in DATA["cases"] if c["error"]}
    assert checks == {"malformed", "card-count", "not-on-curve", "repeated-card", "false-share"}


def test_the_default_box_is_the_manifest_shipped() -> None:
    assert DATA["inputs"]["manifests"]["default"]["hash"] == default_manifest().hash
