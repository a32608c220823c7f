"""Test vectors of the hidden deal inside a game (PROTOCOL.md §5b and §6, DEAL-FORMAT.md).

protocol/vectors/deal.json deals decks chosen by hand; these show what a
game deals and when, and what a verifier refuses, so that a second
implementation can audit every deal without guessing:

* ``hidden.replay``: a whole game dealt face down, from a small manifest
  whose order faces show crowns, with tiles whose numeric and text orders
  differ and faces whose code-point and numeric orders differ; its discard
  pile is reshuffled (D11) into a second deal with a sub-deck, and one of
  that sub-deck's cards is opened.
* ``hidden-six.replay``: a game of six tiles, whose setup reshuffles an
  empty discard pile (no second deal at all) and whose first decision ends it.
* ``deal-game.json``: the inputs; the decks of three boxes (classes, deck ids,
  labels); the cards of every round of both games; the pile of the D11
  reshuffle and the decks made from it; the exact bytes hashed for each
  kind of derivation; and cases: an envelope after a prefix of one of the
  games, refused (with the error) or taken (with the verdict).

Written with the other protocol vectors by
``python -m basilica_p2p.vectors.protocol --write protocol/vectors``;
tests/test_deal_game_vectors.py checks them.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots import RandomBot
from ..deal import DealError, hash_to_card
from ..dealer import box_layout
from ..engine import Manifest, Options, Ruleset, default_manifest, parse_manifest
from ..engine.manifest import SCHEMA
from ..schemes import HIDDEN_DEAL
from ..replay.file import MAGIC, frame, parse
from ..replay import Verdict, known_manifests, play_recorded, seat_for, verify_file
from ..seat import Refused, Seat
from ..wire import PROTOCOL_VERSION, Envelope, encode, open_envelope
from ..wire.envelope import TAG
from ._inputs import MANIFEST_CASES, NONCES, counter_salts, identities
from .deal import SECRETS, preimages

FILES = ("hidden.replay", "hidden-six.replay", "deal-game.json")

# A box of 14 tiles whose order faces show crowns (so face texts end in c or n), with a
# class whose ids sort differently as numbers and as text (9, 10, 100) and classes whose face
# texts sort differently by code point and by colour number (MOVE.12 before MOVE.2).
SMALL_MANIFEST = json.dumps({
    "schema": SCHEMA, "name": "deal vectors", "crown_spaces": [2, 4, 6], "order_faces_show_crown": True,
    "tiles": [
        {"id": i, "colors": c, "crown": crown, "order": order, "paid": paid}
        for i, c, crown, order, paid in (
            (9, "Y", True, "PROMOTE", True), (10, "Y", True, "PROMOTE", True), (100, "Y", True, "PROMOTE", True),
            (2, "Y", False, "PROMOTE", True), (11, "B", True, "MOVE", False), (3, "B", True, "MOVE", False),
            (4, "R/G", False, "MOVE", False), (12, "G/R", False, "MOVE", False), (5, "G", False, "RECRUIT", False),
            (6, "G", False, "RECRUIT", False), (7, "Y/B", True, "STAINED_GLASS", False),
            (8, "R", False, "SCAFFOLDING", False), (13, "B", False, "CONFUSE", True),
            (14, "G", False, "DISASTER", False))
    ],
}, indent=1) + "\n"
# Own game ids: a key never signs two hellos for one game (PROTOCOL.md §9).
HIDDEN_GAME_ID = bytes(range(64, 96))
SIX_GAME_ID = bytes(range(96, 128))
# Bot seeds picked by search: a game whose D11 pile holds two classes of two or more (two
# sub-decks in deal1) and opens a card of one (see _check_hidden_game).
HIDDEN_BOT_SEEDS = (56, 57)
SIX_BOT_SEEDS = (1, 2)


@dataclass(frozen=True)
class _Game:
    name: str
    manifest: Manifest
    replay: bytes

    @property
    def envelopes(self) -> list[Envelope]:
        return [open_envelope(r) for r in parse(self.replay).records]

    def seat_after(self, k: int) -> Seat:
        """A verifier's seat fed the game's first ``k`` envelopes."""
        replay = parse(self.replay)
        seat = seat_for(replay, known_manifests([self.manifest]), views=False)
        for raw in replay.records[:k]:
            got = seat.receive(raw, known=True)
            assert not isinstance(got, Refused), got.detail
        return seat


def six_manifest() -> Manifest:
    return parse_manifest(MANIFEST_CASES[0][2])


def _play(manifest: Manifest, game_id: bytes, seeds: tuple[int, int]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "game.replay"
        play_recorded(path, manifest, Options(), identities(), (RandomBot(seeds[0]), RandomBot(seeds[1])),
                      NONCES, game_id, counter_salts(), shuffle=HIDDEN_DEAL, deal_secrets=SECRETS)
        return path.read_bytes()


def games() -> tuple[_Game, _Game]:
    return (_Game("hidden.replay", parse_manifest(SMALL_MANIFEST), _play(parse_manifest(SMALL_MANIFEST),
                                                                         HIDDEN_GAME_ID, HIDDEN_BOT_SEEDS)),
            _Game("hidden-six.replay", six_manifest(), _play(six_manifest(), SIX_GAME_ID, SIX_BOT_SEEDS)))


# --- what is dealt -----------------------------------------------------------------------


def layouts() -> list[dict[str, Any]]:
    def one(name: str, manifest: Manifest, options: Options) -> dict[str, Any]:
        layout, _ = box_layout(manifest, options)
        return {
            "manifest": name, "festum": options.festum,
            "classes": [[face, list(tiles)] for face, tiles in layout.classes],
            "decks": [{"deck": d.deck_id, "labels": list(d.labels)} for d in layout.decks],
        }

    return [one("small", parse_manifest(SMALL_MANIFEST), Options()),
            one("default", default_manifest(), Options(Ruleset.PORTAL2022, True)),
            one("six", six_manifest(), Options())]


def rounds(game: _Game) -> list[dict[str, Any]]:
    """Every round: the record number of its first `shares` and the cards both players' list."""
    out: list[dict[str, Any]] = []
    envs = game.envelopes
    i = 0
    while i < len(envs):
        env = envs[i]
        if env.type == "shares":  # the first player's, then the other's: one round (a second may follow)
            cards = [[deck, position] for deck, position, _ in env.body["shares"]]
            assert [[d, p] for d, p, _ in envs[i + 1].body["shares"]] == cards
            out.append({"record": i + 1, "from": 1 + (env.sender != envs[0].sender), "cards": cards})
            i += 1
        i += 1
    return out


def reshuffle(game: _Game) -> dict[str, Any]:
    """The D11 pile in discard order with each position's face (from its opened face card), and
    the decks of the deal made from it; an empty pile deals nothing."""
    envs = game.envelopes
    first = next((i for i, e in enumerate(envs) if e.type == "deal" and e.body["decks"][0]["deck"] == "deal1"),
                 None)
    if first is None:
        seat = game.seat_after(len(envs))
        assert seat.game is not None and seat.game.reshuffles == 1 and seat.game.deal(1).size == 0
        return {"record": None, "pile": [], "decks": []}
    seat = game.seat_after(first)
    ref = seat.referee
    assert ref.game is not None and ref.deal_table is not None
    dealer = ref.deal_table.dealer
    pile = [[f"{p.deal}.{p.index}", dealer.face_text(p)] for p in ref.game.deal(1).sources]
    decks = [{"deck": d, "labels": list(ref.deal_table.machines[d].deck.deck.labels)} for d in ref.deal_table.dealing]
    return {"record": first + 1, "pile": pile, "decks": decks}


def _check_hidden_game(game: _Game, shuffled: dict[str, Any]) -> None:
    """What hidden.replay is chosen for; a change of the engine that loses it needs new seeds."""
    subdecks = [d["deck"] for d in shuffled["decks"][1:]]
    shared = {deck for r in rounds(game) for deck, _ in r["cards"]}
    if len(subdecks) < 2 or not shared & set(subdecks):
        raise SystemExit(f"hidden.replay no longer reshuffles into two sub-decks and opens one "
                         f"({subdecks}): pick new HIDDEN_BOT_SEEDS in {__name__}")


# --- cases: one envelope after a prefix ------------------------------------------------------


def _signed(key: Any, payload: dict[str, Any]) -> bytes:
    """An envelope signed as given, whether or not its body fits the schema (for schema cases)."""
    data = encode(payload)
    return encode([data, key.sign(data)])


@dataclass(frozen=True)
class _Case:
    name: str
    about: str
    game: _Game
    after: int  # the game's envelopes kept
    make: Callable[[Seat, list[Envelope]], list[tuple[int, str, dict[str, Any]]]]  # (player 1|2, type, body)...
    check: Callable[[Seat, dict[str, Any]], tuple[str, str] | None] | None = None


def _run(case: _Case) -> dict[str, Any]:
    ids = identities()
    seat = case.game.seat_after(case.after)
    envs = case.game.envelopes
    made = case.make(seat, envs)
    raws: list[bytes] = []
    for n, (player, type_, body) in enumerate(made):
        ref = seat.referee
        payload = {"tag": TAG, "v": PROTOCOL_VERSION, "game": envs[0].game, "seq": ref.seq, "prev": ref.prev,
                   "from": ids[player - 1].public, "type": type_, "body": body}
        last = n == len(made) - 1
        named = case.check(seat, body) if last and case.check is not None else None
        raw = _signed(ids[player - 1].key, payload)
        got = seat.receive(raw, known=True)
        raws.append(raw)
        if isinstance(got, Refused):
            assert last, f"{case.name}: envelope {n} refused: {got.detail}"
            return {"name": case.name, "about": case.about, "replay": case.game.name, "after": case.after,
                    "accepted": [r.hex() for r in raws[:-1]], "envelope": raw.hex(), "from": player, "type": type_,
                    "refused": got.detail, "error": None if named is None else {"class": named[0], "check": named[1]},
                    "verdict": None}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.replay"
        replay = parse(case.game.replay)
        path.write_bytes(b"".join([MAGIC, frame(replay.header_bytes),
                                   *(frame(r) for r in [*replay.records[:case.after], *raws])]))
        verdict = verify_file(path, known_manifests([case.game.manifest]))
    assert verdict.ok, f"{case.name}: {verdict.error}"
    return {"name": case.name, "about": case.about, "replay": case.game.name, "after": case.after,
            "accepted": [r.hex() for r in raws[:-1]], "envelope": raws[-1].hex(), "from": made[-1][0],
            "type": made[-1][1], "refused": None, "error": None, "verdict": verdict.summary()}


def _index(envs: list[Envelope], type_: str, nth: int = 0) -> int:
    return [i for i, e in enumerate(envs) if e.type == type_][nth]


def _deal_error(deck_index: int) -> Callable[[Seat, dict[str, Any]], tuple[str, str] | None]:
    """The deal package's error for the deck value at ``deck_index`` of a `deal` body."""
    def named(seat: Seat, body: dict[str, Any]) -> tuple[str, str] | None:
        table = seat.referee.deal_table
        assert table is not None
        value = body["decks"][deck_index]
        try:
            table.machines[table.dealing[deck_index]].check(value)
        except DealError as e:
            return type(e).__name__, e.check
        return None

    return named


def _share_error(item: int) -> Callable[[Seat, dict[str, Any]], tuple[str, str] | None]:
    def named(seat: Seat, body: dict[str, Any]) -> tuple[str, str] | None:
        table = seat.referee.deal_table
        assert table is not None
        deck, position, value = body["shares"][item]
        try:
            table.machines[deck].check_share(seat.referee.waiting_for()[1] + 1, position, value)
        except DealError as e:
            return type(e).__name__, e.check
        return None

    return named


def _deal_step(envs: list[Envelope], nth: int, edit: Callable[[list[dict[str, Any]]], object]
               ) -> Callable[[Seat, list[Envelope]], list[tuple[int, str, dict[str, Any]]]]:
    """The game's ``nth`` deal step, its deck list edited."""
    def make(seat: Seat, all_envs: list[Envelope]) -> list[tuple[int, str, dict[str, Any]]]:
        env = all_envs[_index(all_envs, "deal", nth)]
        decks = [dict(d, cards=list(d["cards"]), **({"keys": list(d["keys"])} if "keys" in d else {}))
                 for d in env.body["decks"]]
        edit(decks)
        return [(2 if nth == 1 else 1, "deal", {"decks": decks})]

    return make


def _shares(nth: int, edit: Callable[[list[list[Any]]], object], player: int | None = None
            ) -> Callable[[Seat, list[Envelope]], list[tuple[int, str, dict[str, Any]]]]:
    """The game's ``nth`` shares envelope, its list edited (and sent by ``player`` if given)."""
    def make(seat: Seat, envs: list[Envelope]) -> list[tuple[int, str, dict[str, Any]]]:
        env = envs[_index(envs, "shares", nth)]
        items = [list(item) for item in env.body["shares"]]
        edit(items)
        sender = player or 1 + (env.sender != envs[0].sender)
        return [(sender, "shares", {"shares": items})]

    return make


def _swap(items: list[Any], i: int, j: int) -> None:
    items[i], items[j] = items[j], items[i]


def cases(hidden: _Game, six: _Game) -> list[dict[str, Any]]:
    h_envs, s_envs = hidden.envelopes, six.envelopes
    first_deal = _index(h_envs, "deal")
    first_shares = _index(h_envs, "shares")
    s_secret = _index(s_envs, "secret")
    s_result = _index(s_envs, "result")
    secret1, secret2 = (s_envs[s_secret].body, s_envs[s_secret + 1].body)
    foreign = hash_to_card(HIDDEN_GAME_ID, "elsewhere", "not a tile")[0]

    def out_of_range(items: list[list[Any]]) -> None:
        items[0][1] = 9999

    def unknown_deck(items: list[list[Any]]) -> None:
        items[0][0] = "nowhere"

    def repeated(items: list[list[Any]]) -> None:
        items[1] = list(items[0])

    def not_in_round(items: list[list[Any]]) -> None:
        items[-1][1] += 1

    def false_share(items: list[list[Any]]) -> None:
        items[2][2] = h_envs[first_shares + 1].body["shares"][2][2]  # the other player's share for that card

    def zero_share(items: list[list[Any]]) -> None:
        items[0][2] = bytes(32)

    def opening_fault(seat: Seat, envs: list[Envelope]) -> list[tuple[int, str, dict[str, Any]]]:
        # Player 1 slips a point of no card of the deck into its re-key step where O1's face card
        # lies; both shares of that card still match their commitments.
        rekey = envs[first_deal + 2]
        decks = [dict(d, cards=list(d["cards"])) for d in rekey.body["decks"]]
        decks[0]["cards"][0] = foreign
        return [(1, "deal", {"decks": decks}), (1, "shares", envs[first_shares].body),
                (2, "shares", envs[first_shares + 1].body)]

    def then(*more: tuple[int, str, dict[str, Any]]
             ) -> Callable[[Seat, list[Envelope]], list[tuple[int, str, dict[str, Any]]]]:
        def make(seat: Seat, envs: list[Envelope]) -> list[tuple[int, str, dict[str, Any]]]:
            return [*opening_fault(seat, envs), *more]

        return make

    def one(player: int, type_: str, body: dict[str, Any]
            ) -> Callable[[Seat, list[Envelope]], list[tuple[int, str, dict[str, Any]]]]:
        return lambda seat, envs: [(player, type_, body)]

    table: list[_Case] = [
        # The deck list of one `deal`: its count, its order, each deck's checks.
        _Case("deal-too-few-decks", "player 1's shuffle step without its last deck", hidden, first_deal,
              _deal_step(h_envs, 0, lambda decks: decks.pop())),
        _Case("deal-too-many-decks", "player 1's shuffle step with its first deck twice", hidden, first_deal,
              _deal_step(h_envs, 0, lambda decks: decks.append(decks[0]))),
        _Case("deal-decks-out-of-order", "player 1's shuffle step with its first two decks swapped", hidden,
              first_deal, _deal_step(h_envs, 0, lambda decks: _swap(decks, 0, 1)), _deal_error(0)),
        _Case("deal-no-deck", "a deal step of no deck: the body's schema refuses it", hidden, first_deal,
              _deal_step(h_envs, 0, lambda decks: decks.clear())),
        _Case("deal-card-count", "player 2's key step with one card too few in its second deck", hidden,
              first_deal + 1, _deal_step(h_envs, 1, lambda decks: decks[1]["cards"].pop()), _deal_error(1)),
        _Case("deal-key-count", "player 2's key step with one key commitment too many in deck faces", hidden,
              first_deal + 1, _deal_step(h_envs, 1, lambda decks: decks[0]["keys"].append(bytes(32))),
              _deal_error(0)),
        _Case("deal-malformed-card", "player 1's shuffle step with a card of 31 bytes", hidden, first_deal,
              _deal_step(h_envs, 0, lambda decks: decks[0]["cards"].__setitem__(0, bytes(31))), _deal_error(0)),
        _Case("deal-not-on-curve", "player 1's shuffle step with x = 0 for a card", hidden, first_deal,
              _deal_step(h_envs, 0, lambda decks: decks[0]["cards"].__setitem__(0, bytes(32))), _deal_error(0)),
        _Case("deal-repeated-card", "player 2's key step with one card twice", hidden, first_deal + 1,
              _deal_step(h_envs, 1, lambda decks: decks[0]["cards"].__setitem__(1, decks[0]["cards"][0])),
              _deal_error(0)),
        _Case("deal-card-not-keyed", "player 2's key step carrying a card of player 1's shuffle unkeyed", hidden,
              first_deal + 1, _deal_step(h_envs, 1, lambda decks: decks[0]["cards"].__setitem__(
                  0, h_envs[first_deal].body["decks"][0]["cards"][0])), _deal_error(0)),
        _Case("deal-bare-card-point", "player 1's shuffle step with a card point not encrypted", hidden,
              first_deal, _deal_step(h_envs, 0, lambda decks: decks[0]["cards"].__setitem__(
                  0, hash_to_card(HIDDEN_GAME_ID, decks[0]["deck"], "CONFUSE.2.p.n#0")[0])), _deal_error(0)),
        # The shares of a round: exactly the round's cards, in order; each share checked.
        _Case("shares-unknown-deck", "the first share names a deck that is not dealt", hidden, first_shares,
              _shares(0, unknown_deck)),
        _Case("shares-position-out-of-range", "the first share names position 9999", hidden, first_shares,
              _shares(0, out_of_range)),
        _Case("shares-repeated", "the second share repeats the first", hidden, first_shares, _shares(0, repeated)),
        _Case("shares-card-not-in-round", "the last share is for the next position, a card not due", hidden,
              first_shares, _shares(0, not_in_round)),
        _Case("shares-out-of-order", "the first two shares swapped", hidden, first_shares,
              _shares(0, lambda items: _swap(items, 0, 1))),
        _Case("shares-one-missing", "the last share left out", hidden, first_shares,
              _shares(0, lambda items: items.pop())),
        _Case("shares-false-share", "player 1's third share is not the key its commitment binds", hidden,
              first_shares, _shares(0, false_share), _share_error(2)),
        _Case("shares-zero", "player 1's first share is 0, not a scalar 1..n-1", hidden, first_shares,
              _shares(0, zero_share), _share_error(0)),
        _Case("shares-wrong-player-first", "player 2's shares where player 1's come first", hidden, first_shares,
              _shares(1, lambda items: None, player=2)),
        _Case("secret-before-the-board-decided", "player 1's secret where its shares are due", hidden,
              first_shares, one(1, "secret", secret1)),
        # The secrets: player 1's, then player 2's, each audited when it arrives.
        _Case("secret-player-2-first", "player 2's secret where player 1's comes first", six, s_secret,
              one(2, "secret", secret2)),
        _Case("secret-twice", "a second secret of player 1 where player 2's is due", six, s_secret + 1,
              one(1, "secret", secret1)),
        _Case("secret-false-player-1", "player 1 publishes a secret that does not give its deal", six, s_secret,
              one(1, "secret", {"secret": bytes([9]) * 32})),
        _Case("secret-false-player-2", "player 2 publishes player 1's secret as its own", six, s_secret + 1,
              one(2, "secret", secret1)),
        # Forfeits around the deal and the audit.
        _Case("forfeit-during-the-deal", "player 2 resigns where its key step is due: the decks are never "
              "dealt whole, and never audited", hidden, first_deal + 1,
              one(2, "forfeit", {"loser": 2, "reason": "quit"})),
        _Case("forfeit-claimed-while-a-secret-is-due", "the board has decided; player 1 does not publish its "
              "secret and player 2 claims the game", six, s_secret,
              one(2, "forfeit", {"loser": 1, "reason": "no secret within 20 s"})),
        _Case("forfeit-resigned-while-a-secret-is-due", "the board has decided; player 2 resigns instead of "
              "publishing its secret", six, s_secret + 1, one(2, "forfeit", {"loser": 2, "reason": "quit"})),
        _Case("forfeit-after-both-secrets", "a forfeit where the results are due", six, s_result,
              one(2, "forfeit", {"loser": 1, "reason": "x"})),
        # An opening fault: a card that opens to nothing sends the game to the secrets.
        _Case("opening-fault-then-the-cheaters-secret", "player 1's re-key step holds a point of no card at O1's "
              "face card; both shares match their commitments, the card opens to nothing, the game goes to "
              "the secrets, and player 1's own secret names it", hidden, first_deal + 2,
              then((1, "secret", secret1))),
        _Case("opening-fault-then-a-claim", "the same, but player 1 withholds its secret and player 2 claims "
              "the game", hidden, first_deal + 2, then((2, "forfeit", {"loser": 1, "reason": "no secret"}))),
        _Case("opening-fault-then-shares", "the same, and then shares instead of player 1's secret", hidden,
              first_deal + 2, then((1, "shares", h_envs[first_shares].body))),
    ]
    return [_run(c) for c in table]


def _verdict(game: _Game) -> Verdict:
    """``basilica verify`` of a game's replay: it must pass."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / game.name
        path.write_bytes(game.replay)
        verdict = verify_file(path, known_manifests([game.manifest]))
    assert verdict.ok, verdict.error
    return verdict


def build() -> dict[str, bytes]:
    hidden, six = games()
    shuffled = reshuffle(hidden)
    _check_hidden_game(hidden, shuffled)
    ids = identities()
    value = {
        "description": "The hidden deal sra-p256-v1 inside games (PROTOCOL.md 5b and 6, DEAL-FORMAT.md): the "
                       "decks of three boxes, the cards of every round and the D11 reshuffle of hidden.replay and "
                       "hidden-six.replay, the bytes hashed by each derivation, and cases: one envelope after a "
                       "prefix of a game, refused with its error or taken with the verdict. Binary values are hex; "
                       "records are numbered as in replay files (record 1 is the first envelope).",
        "inputs": {
            "private_key_seeds": [bytes([1]).hex() * 32, bytes([2]).hex() * 32],
            "public_keys": [i.public.hex() for i in ids],
            "deal_secrets": [s.hex() for s in SECRETS],
            "manifests": {"small": {"json": SMALL_MANIFEST, "hash": parse_manifest(SMALL_MANIFEST).hash},
                          "six": {"json": "manifest.json: cases[0] (minimal)", "hash": six.manifest.hash},
                          "default": {"json": "../manifest.json", "hash": default_manifest().hash}},
            "games": {
                "hidden.replay": {"manifest": "small", "game": HIDDEN_GAME_ID.hex(), "bot_seeds": list(HIDDEN_BOT_SEEDS)},
                "hidden-six.replay": {"manifest": "six", "game": SIX_GAME_ID.hex(), "bot_seeds": list(SIX_BOT_SEEDS)},
            },
        },
        "layouts": layouts(),
        "games": {
            g.name: {"verdict": _verdict(g).summary(), "rounds": rounds(g),
                     "reshuffle": shuffled if g is hidden else reshuffle(g)}
            for g in (hidden, six)
        },
        "preimages": preimages(HIDDEN_GAME_ID),
        "cases": cases(hidden, six),
    }
    return {"hidden.replay": hidden.replay, "hidden-six.replay": six.replay,
            "deal-game.json": (json.dumps(value, indent=2) + "\n").encode("utf-8")}


__all__ = ["FILES", "build"]
