"""Everything a player deals with, derived from its one 32-byte secret.

All of a player's choices in every deck of a game (deck key, per-card keys,
permutation) come from the secret, the player number, the game id and the
deck id, so that one durable secret recovers them after a crash and,
published at the end, lets anyone recompute every message the player
signed.  The signed messages bind the secret: no other secret reproduces
them (that would be a SHA-256 collision or preimage).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._curve import N, tagged_hash

KEY_TAG = b"basilica-p2p/deal/sra-p256-v1/key"
PERM_TAG = b"basilica-p2p/deal/sra-p256-v1/perm"
DECK_KEY = b"deck"
CARD_KEY = b"card"


def _u32(i: int) -> bytes:
    return i.to_bytes(4, "big")


def scalar(secret: bytes, player: int, game: bytes, deck_id: str, kind: bytes, index: int) -> int:
    """A key 1 ≤ k < n by rejection: exactly uniform, never 0 (a counter retries with odds 2^-32)."""
    counter = 0
    while True:
        k = int.from_bytes(tagged_hash(KEY_TAG, secret, bytes([player]), game, deck_id.encode("utf-8"),
                                       kind, _u32(index), _u32(counter)), "big")
        if 1 <= k < N:
            return k
        counter += 1


def deck_key(secret: bytes, player: int, game: bytes, deck_id: str) -> int:
    return scalar(secret, player, game, deck_id, DECK_KEY, 0)


def card_key(secret: bytes, player: int, game: bytes, deck_id: str, position: int) -> int:
    return scalar(secret, player, game, deck_id, CARD_KEY, position)


def permutation(secret: bytes, player: int, game: bytes, deck_id: str, m: int) -> tuple[int, ...]:
    """Fisher–Yates over 0..m-1, drawing u32s from a SHA-256 counter stream.

    ``below(k)`` rejects draws ≥ 2^32 - (2^32 mod k), so every index is
    exactly equally likely; the shuffle is then exactly uniform.
    """
    fields = (secret, bytes([player]), game, deck_id.encode("utf-8"))
    block, buffer = 0, b""

    def u32() -> int:
        nonlocal block, buffer
        if not buffer:
            buffer = tagged_hash(PERM_TAG, *fields, _u32(block))
            block += 1
        r, buffer = int.from_bytes(buffer[:4], "big"), buffer[4:]
        return r

    def below(k: int) -> int:
        limit = 2**32 - 2**32 % k
        while True:
            r = u32()
            if r < limit:
                return r % k

    perm = list(range(m))
    for i in range(m - 1, 0, -1):
        j = below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


@dataclass(frozen=True)
class DeckKeys:
    """One player's keys for one deck; ``deck`` is player 1's deck key (player 2 has none: 0)."""

    deck: int
    cards: tuple[int, ...]
    permutation: tuple[int, ...]


def deck_keys(secret: bytes, player: int, game: bytes, deck_id: str, m: int) -> DeckKeys:
    return DeckKeys(
        deck_key(secret, player, game, deck_id) if player == 1 else 0,
        tuple(card_key(secret, player, game, deck_id, i) for i in range(m)),
        permutation(secret, player, game, deck_id, m),
    )
