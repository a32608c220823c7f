"""The dealer: what a hidden game asks to see, as cards of a hidden deal's decks.

The engine (``Game.new_hidden``) knows the tiles only as positions of a deal
and asks for facts with :class:`~basilica_p2p.engine.NeedReveal`: the order
face of a position (``FACE``) or its tile (``TILE``).  The deal
(:mod:`basilica_p2p.deal`) knows only decks of labelled cards that open when
both players give a share.  This module maps one onto the other, both ways,
with no cryptography of its own and no I/O:

* deal 0, the box, is the deal package's two-level :func:`~basilica_p2p.deal.layout`:
  engine position ``(0, i)`` is card ``i`` of the main deck, whose label
  names the tile's order-face class and a copy number ``j``; the tile itself
  is position ``j`` of that class's sub-deck (a class of one tile needs none);
* the festum removal is the main deck's last six cards, never opened;
* a later deal (the D11 reshuffle of the discard pile) is a new deck whose
  labels name the positions it gathers (``"0.17"``): engine position
  ``(1, k)`` is its card ``k``, and opening it says which earlier position
  lies there, whose face was public and whose tile opens as before.

Cards open in two steps at most, so :meth:`Dealer.cards_for` says what can
be opened *now* for a list of reveals, :meth:`Dealer.record` takes each
label as it opens, and :meth:`Dealer.facts` turns what is open into facts
for ``Game.reveal``.  The same object serves a player and a verifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from .deal import Deck, Layout, layout
from .engine import FaceClass, Level, Manifest, Options, Position, Reveal

MAIN = "faces"


@dataclass(frozen=True, order=True)
class Card:
    """Position ``position`` of the deck named ``deck``."""

    deck: str
    position: int


class DealerError(Exception):
    """A reveal the deal cannot answer (a label that is not a card of its deck, a deal the
    engine does not know); ``str(e)`` is one line."""


def face_label(face: FaceClass) -> str:
    """A face class as the text of its cards (no ``#``, which separates the copy number)."""
    crown = "-" if face.crown is None else ("c" if face.crown else "n")
    return f"{face.order.value}.{face.colors}.{'p' if face.paid else 'f'}.{crown}"


def box_layout(manifest: Manifest, options: Options) -> tuple[Layout, dict[str, FaceClass]]:
    """The two-level deck of every tile in play, classes in a fixed order, and each face label's class."""
    shown = manifest.order_faces_show_crown
    tiles = list(manifest.tiles) + (list(manifest.festum_tiles) if options.festum else [])
    classes: dict[str, list[str]] = {}
    faces: dict[str, FaceClass] = {}
    for t in sorted(tiles, key=lambda t: t.id):
        face = t.face_class(shown)
        label = face_label(face)
        faces[label] = face
        classes.setdefault(label, []).append(str(t.id))
    return layout(sorted(classes.items()), main_id=MAIN), faces


def deal_id(deal: int) -> str:
    """The deck id of a later deal (the D11 reshuffle is deal 1)."""
    return f"deal{deal}"


def position_label(p: Position) -> str:
    return f"{p.deal}.{p.index}"


def parse_position_label(label: str) -> Position:
    deal, _, index = label.partition(".")
    return Position(int(deal), int(index))


class Dealer:
    def __init__(self, manifest: Manifest, options: Options) -> None:
        self.layout, self._faces = box_layout(manifest, options)
        self._opened: dict[Card, str] = {}
        self._later: dict[int, Deck] = {}

    @property
    def decks(self) -> tuple[Deck, ...]:
        """The decks dealt at setup, in the order their messages go: the main deck, then the sub-decks."""
        return self.layout.decks

    def add_deal(self, deal: int, sources: tuple[Position, ...]) -> Deck:
        """A later deal of the engine (the D11 reshuffle): a new deck of the positions it gathers,
        in the order the engine lists them; to be dealt like the others before its cards open."""
        if deal != len(self._later) + 1:
            raise DealerError(f"deal {deal} comes out of order")
        deck = Deck(deal_id(deal), tuple(position_label(p) for p in sources))
        self._later[deal] = deck
        return deck

    def _origin(self, position: Position) -> Position | None:
        """The deal-0 position behind ``position``, once the cards that say so are open; None before."""
        while position.deal != 0:
            if position.deal not in self._later:
                raise DealerError(f"deal {position.deal} is not known to this dealer")
            label = self._opened.get(Card(deal_id(position.deal), position.index))
            if label is None:
                return None
            position = parse_position_label(label)
        return position

    def record(self, card: Card, label: str) -> None:
        """A card opened to ``label`` (the deal package has checked that it is a card of its deck)."""
        self._opened[card] = label

    def opened(self, card: Card) -> str | None:
        return self._opened.get(card)

    def _main(self, position: Position) -> Card | None:
        """The main-deck card of ``position``, or None while a later deal's card must open first."""
        origin = self._origin(position)
        return None if origin is None else Card(MAIN, origin.index)

    def _first_shut(self, position: Position) -> Card:
        """The next card to open on the way from ``position`` back to deal 0."""
        while position.deal != 0:
            card = Card(deal_id(position.deal), position.index)
            label = self._opened.get(card)
            if label is None:
                return card
            position = parse_position_label(label)
        return Card(MAIN, position.index)

    def _tile_card(self, face_card: str) -> Card | None:
        """The sub-deck card that shows the tile behind a face card; None for a class of one tile."""
        found = self.layout.subdeck_position(face_card)
        return None if found is None else Card(found[0].deck_id, found[1])

    def cards_for(self, reveals: tuple[Reveal, ...]) -> list[Card]:
        """The cards that must open next for ``reveals``, in a fixed order (each once)."""
        need: list[Card] = []
        for r in reveals:
            main = self._main(r.position)
            label = self._opened.get(main) if main is not None else None
            if label is None:
                need.append(self._first_shut(r.position))
            elif r.level is Level.TILE:
                sub = self._tile_card(label)
                if sub is not None and sub not in self._opened:
                    need.append(sub)
        return sorted(set(need))

    def facts(self, reveals: tuple[Reveal, ...]) -> list[tuple[Position, FaceClass | int]]:
        """What the open cards tell of ``reveals``, as arguments for ``Game.reveal``."""
        out: list[tuple[Position, FaceClass | int]] = []
        for r in reveals:
            main = self._main(r.position)
            label = self._opened.get(main) if main is not None else None
            if label is None:
                continue
            face, _ = self.layout.face_of(label)
            if r.level is Level.FACE:
                out.append((r.position, self._faces[face]))
                continue
            tile = self.layout.known_tile(label)
            if tile is None:
                sub = self._tile_card(label)
                tile = self._opened.get(sub) if sub is not None else None
            if tile is not None:
                out.append((r.position, int(tile)))
        return out
