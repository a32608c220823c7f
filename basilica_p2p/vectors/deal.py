"""Test vectors for ``sra-p256-v1`` (protocol/DEAL-FORMAT.md), written to protocol/vectors/deal.json.

Fixed inputs: the game id of the other vectors, two fixed secrets, and a
small layout of three face classes (one, two and three tiles), so a main
deck of 6 face cards and two sub-decks.  Every value is derived, dealt and
opened; tests/test_deal.py checks the committed file against a fresh build
and re-derives its points with plain integer arithmetic.  Regenerate with::

    python -m basilica_p2p.vectors.deal --write protocol/vectors
"""

from __future__ import annotations

import json
from typing import Any

import msgpack

from ..deal import (DealMessage, DealRecord, DeckDeal, HashedDeck, Share, audit, deck_keys, hash_deck, hash_to_card,
                    layout)
from ..deal._curve import CARD_TAG, KEY_COMMIT_TAG, key_commitment, tagged_hash, tagged_preimage
from ..deal._keys import CARD_KEY, DECK_KEY, KEY_TAG, PERM_TAG, card_key, deck_key
from ._files import emit, parser
from ._inputs import GAME_ID

SECRETS = (bytes([0xD1]) * 32, bytes([0xD2]) * 32)
CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("MOVE-B", ("t1",)),
    ("PROMOTE-Y", ("t2", "t3")),
    ("RECRUIT-R", ("t4", "t5", "t6")),
)
FILE = "deal.json"


def _message(msg: DealMessage) -> dict[str, Any]:
    value = msg.to_value()
    return {
        "cards": [c.hex() for c in msg.cards],
        **({"keys": [k.hex() for k in msg.keys]} if msg.keys else {}),
        "msgpack": msgpack.packb(value, use_bin_type=True).hex(),
    }


def _keys(deck: HashedDeck) -> dict[str, Any]:
    k1 = deck_keys(SECRETS[0], 1, GAME_ID, deck.deck_id, len(deck))
    k2 = deck_keys(SECRETS[1], 2, GAME_ID, deck.deck_id, len(deck))
    return {
        "p1_deck_key": k1.deck.to_bytes(32, "big").hex(),
        "p1_card_keys": [k.to_bytes(32, "big").hex() for k in k1.cards],
        "p1_permutation": list(k1.permutation),
        "p2_card_keys": [k.to_bytes(32, "big").hex() for k in k2.cards],
        "p2_permutation": list(k2.permutation),
    }


def deal_deck(deck: HashedDeck) -> tuple[dict[str, Any], DealRecord]:
    """Deal one deck between the two fixed secrets and open every position (player 2's share first)."""
    p1, p2 = DeckDeal(deck, 1, SECRETS[0]), DeckDeal(deck, 2, SECRETS[1])
    p2.receive(p1.make())
    p1.receive(p2.make())
    p2.receive(p1.make())
    verifier = DeckDeal(deck)
    for m in p1.messages:
        verifier.receive(m.to_value())
    shares, opened = [], []
    for i in range(len(deck)):
        s1, s2 = p1.my_share(i), p2.my_share(i)
        verifier.add_share(2, i, s2)
        opened.append(verifier.add_share(1, i, s1))
        shares.append((s1, s2))
    entry = {
        "deck": deck.deck_id,
        "labels": list(deck.deck.labels),
        "cards": [{"label": lab, "counter": c, "x": x.hex()}
                  for lab, c, x in zip(deck.deck.labels, deck.counters, deck.cards)],
        "keys": _keys(deck),
        "shuffle": _message(verifier.messages[0]),
        "key": _message(verifier.messages[1]),
        "rekey": _message(verifier.messages[2]),
        "shares": [{"position": i, "p1": s1.hex(), "p2": s2.hex()} for i, (s1, s2) in enumerate(shares)],
        "opened": opened,
    }
    record = DealRecord(deck, verifier.messages,
                        tuple(Share(p, i, s[p - 1]) for i, s in enumerate(shares) for p in (2, 1)))
    return entry, record


def build() -> dict[str, Any]:
    lay = layout(CLASSES)
    entries, records = [], []
    for d in lay.decks:
        entry, record = deal_deck(hash_deck(GAME_ID, d))
        entries.append(entry)
        records.append(record)
    # A cheat for the audit: player 2 swaps two cards of its keyed deck (a false permutation).
    main = records[0]
    m2 = main.messages[1]
    swapped = DealMessage(m2.step, m2.deck_id, (m2.cards[1], m2.cards[0], *m2.cards[2:]), m2.keys)
    cheat = DealRecord(main.deck, (main.messages[0], swapped, main.messages[2]), ())
    return {
        "description": "The hidden deal sra-p256-v1 (protocol/DEAL-FORMAT.md): a layout of three face classes "
                       "(main deck of face cards and two sub-decks) dealt between two fixed secrets, every "
                       "position opened. Binary values are hex; scalars are 32-byte big-endian.",
        "inputs": {
            "game": GAME_ID.hex(),
            "secrets": [s.hex() for s in SECRETS],
            "classes": [[face, list(tiles)] for face, tiles in CLASSES],
        },
        "decks": entries,
        "audit": {
            "honest": audit(SECRETS, records),
            # Player 2's audit alone: the record keeps player 1's re-key of the key message before
            # the swap, so auditing player 1 first (the one order, DEAL-FORMAT.md §8) names player 1.
            "p2_swaps_cards_0_and_1_of_its_key_message_in_deck_faces": audit(SECRETS, [cheat], check=(2,)),
        },
    }


def preimages(game: bytes) -> list[dict[str, Any]]:
    """The exact bytes H hashes for each kind of derivation (DEAL-FORMAT.md §2, §3, §5), in game
    ``game`` with :data:`SECRETS`: each field named, the bytes hashed and their SHA-256.  (The game
    vectors of protocol/vectors/deal-game.json hold them, beside the game they come from.)"""
    s1, s2 = SECRETS
    deck, label = "faces", "CONFUSE.2.p.n#0"

    def u32(n: int) -> bytes:
        return n.to_bytes(4, "big")

    x, counter = hash_to_card(game, deck, label)
    b3 = card_key(s2, 2, game, deck, 3)
    cases = [
        (f"card point: deck {deck}, label {label}, counter {counter}", CARD_TAG,
         [("game", game), ("deck", deck.encode()), ("label", label.encode()), ("counter", u32(counter))], x),
        (f"player 1's deck key of deck {deck} (kind deck, index 0, counter 0)", KEY_TAG,
         [("secret", s1), ("player", bytes([1])), ("game", game), ("deck", deck.encode()), ("kind", DECK_KEY),
          ("index", u32(0)), ("counter", u32(0))], deck_key(s1, 1, game, deck).to_bytes(32, "big")),
        (f"player 2's per-card key for position 3 of deck {deck} (kind card, counter 0)", KEY_TAG,
         [("secret", s2), ("player", bytes([2])), ("game", game), ("deck", deck.encode()), ("kind", CARD_KEY),
          ("index", u32(3)), ("counter", u32(0))], b3.to_bytes(32, "big")),
        ("player 1's permutation stream of deck tiles/PROMOTE.1.p.c, block 0", PERM_TAG,
         [("secret", s1), ("player", bytes([1])), ("game", game), ("deck", b"tiles/PROMOTE.1.p.c"),
          ("block", u32(0))], None),
        (f"player 2's key commitment for position 3 of deck {deck} (the key of the case before)", KEY_COMMIT_TAG,
         [("game", game), ("deck", deck.encode()), ("player", bytes([2])), ("position", u32(3)),
          ("key", b3.to_bytes(32, "big"))], key_commitment(game, deck, 2, 3, b3)),
    ]
    out = []
    for what, tag, fields, value in cases:
        data = tagged_preimage(tag, *(v for _, v in fields))
        digest = tagged_hash(tag, *(v for _, v in fields))
        # Each is the value the deal itself derives (the counters above are those that succeed).
        assert value is None or value == digest, what
        out.append({"what": what, "tag": tag.decode(), "fields": [{"name": n, "hex": v.hex()} for n, v in fields],
                    "preimage": data.hex(), "sha256": digest.hex()})
    return out


def build_vectors() -> dict[str, bytes]:
    return {FILE: (json.dumps(build(), indent=2) + "\n").encode("utf-8")}


def main(argv: list[str] | None = None) -> int:
    emit(build_vectors(), parser("Build the deal test vectors.", FILE).parse_args(argv).write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
