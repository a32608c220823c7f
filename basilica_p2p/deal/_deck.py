"""Decks: what is dealt (labels chosen by the caller) and their card points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..wire import is_text
from ._curve import hash_to_point
from ._errors import InvalidDeck

MAX_CARDS = 512  # a 3rd message of 512 cards is ~35 KB, well under the 64 KiB envelope cap
MAX_LABEL = 64  # code points, the wire's text(64)
FACE_SEPARATOR = "#"


@dataclass(frozen=True)
class Deck:
    """A deck: its id (unique within a game) and its distinct card labels, in a fixed public order."""

    deck_id: str
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if not is_text(self.deck_id, MAX_LABEL):
            raise InvalidDeck(f"deck id {self.deck_id!r} is not text of 1 to {MAX_LABEL} printable code points")
        if not isinstance(self.labels, tuple) or not 1 <= len(self.labels) <= MAX_CARDS:
            raise InvalidDeck(f"deck {self.deck_id!r} needs a tuple of 1 to {MAX_CARDS} labels")
        for label in self.labels:
            if not is_text(label, MAX_LABEL):
                raise InvalidDeck(f"label {label!r} of deck {self.deck_id!r} is not text of 1 to {MAX_LABEL} "
                                  "printable code points")
        if len(set(self.labels)) != len(self.labels):
            raise InvalidDeck(f"deck {self.deck_id!r} repeats a label")

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class HashedDeck:
    """A deck in one game: ``cards[j]`` is the point (x-coordinate) hashed from ``labels[j]``.

    Build it with :func:`hash_deck`; it is the context every deal operation
    takes, so the points are hashed once per deck and game.
    """

    game: bytes
    deck: Deck
    cards: tuple[bytes, ...]
    counters: tuple[int, ...]
    _points: tuple[Any, ...] = field(repr=False, compare=False)
    _by_card: dict[bytes, int] = field(repr=False, compare=False)

    @property
    def deck_id(self) -> str:
        return self.deck.deck_id

    def __len__(self) -> int:
        return len(self.cards)

    def label_of(self, card: bytes) -> str | None:
        """The label whose point has x-coordinate ``card``, or None."""
        j = self._by_card.get(card)
        return None if j is None else self.deck.labels[j]


def hash_deck(game: bytes, deck: Deck) -> HashedDeck:
    """Hash every label of ``deck`` to its card point in game ``game`` (32 bytes)."""
    if not isinstance(game, bytes) or len(game) != 32:
        raise InvalidDeck("a game id is 32 bytes")
    if not isinstance(deck, Deck):
        raise InvalidDeck("not a Deck")
    hashed = [hash_to_point(game, deck.deck_id, label) for label in deck.labels]
    cards = tuple(x for x, _, _ in hashed)
    by_card = {x: j for j, x in enumerate(cards)}
    if len(by_card) != len(cards):  # pragma: no cover - a SHA-256 collision
        raise InvalidDeck(f"two labels of deck {deck.deck_id!r} hash to one card")
    return HashedDeck(game, deck, cards, tuple(c for _, c, _ in hashed), tuple(p for _, _, p in hashed), by_card)


@dataclass(frozen=True)
class Layout:
    """The two-level deck of a game whose tiles fall into order-face classes.

    The main deck holds one face card per tile, ``"<face>#<j>"`` for copies
    j = 0, 1, ... of its class; opening one shows only the order face.  A
    class of two or more tiles has a sub-deck ``"tiles/<face>"`` of its tile
    labels: turning face card (face, j) vault side up opens position j of
    that sub-deck.  A class of one tile needs no sub-deck: its face is its
    tile.
    """

    main: Deck
    subdecks: tuple[Deck, ...]
    classes: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def decks(self) -> tuple[Deck, ...]:
        """Every deck, the main deck first, then the sub-decks in class order."""
        return (self.main, *self.subdecks)

    def face_of(self, face_card: str) -> tuple[str, int]:
        """(face, copy) of a main-deck label."""
        if face_card not in self.main.labels:
            raise InvalidDeck(f"{face_card!r} is not a face card of deck {self.main.deck_id!r}")
        face, _, copy = face_card.rpartition(FACE_SEPARATOR)
        return face, int(copy)

    def known_tile(self, face_card: str) -> str | None:
        """The tile a face card shows when its class has one tile, else None (its sub-deck must open)."""
        face, _ = self.face_of(face_card)
        tiles = dict(self.classes)[face]
        return tiles[0] if len(tiles) == 1 else None

    def subdeck_position(self, face_card: str) -> tuple[Deck, int] | None:
        """(sub-deck, position) that turning ``face_card`` vault side up opens; None for a one-tile class."""
        face, copy = self.face_of(face_card)
        for deck in self.subdecks:
            if deck.deck_id == subdeck_id(face):
                return deck, copy
        return None


def subdeck_id(face: str) -> str:
    return f"tiles/{face}"


def layout(classes: Sequence[tuple[str, Sequence[str]]], main_id: str = "faces") -> Layout:
    """Build the main deck and sub-decks from (face label, tile labels) pairs, in the order given.

    Face labels must not contain ``#``; every tile label must be distinct.
    """
    seen_faces: set[str] = set()
    seen_tiles: set[str] = set()
    fixed: list[tuple[str, tuple[str, ...]]] = []
    for face, tiles in classes:
        tiles = tuple(tiles)
        if not isinstance(face, str) or FACE_SEPARATOR in face or face in seen_faces or not tiles:
            raise InvalidDeck(f"face {face!r}: a face is distinct text without {FACE_SEPARATOR!r} with 1+ tiles")
        if seen_tiles & set(tiles):
            raise InvalidDeck(f"face {face!r} repeats a tile of another face")
        seen_faces.add(face)
        seen_tiles.update(tiles)
        fixed.append((face, tiles))
    main = Deck(main_id, tuple(f"{face}{FACE_SEPARATOR}{j}" for face, tiles in fixed for j in range(len(tiles))))
    subs = tuple(Deck(subdeck_id(face), tiles) for face, tiles in fixed if len(tiles) >= 2)
    return Layout(main, subs, tuple(fixed))
