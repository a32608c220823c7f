"""The dealer: what a hidden game asks to see, as cards of a hidden deal's decks.

The engine (``Game.new_hidden``) knows the tiles only as positions of a deal
and waits for facts (``Game.needed_reveals``): the order face of a position
(``FACE``) or its tile (``TILE``).  The deal
(:mod:`basilica_p2p.deal`) knows only decks of labelled cards that open when
both players give a share.  This module maps one onto the other, both ways,
with no cryptography of its own and no I/O:

* deal 0, the box, is the deal package's two-level :func:`~basilica_p2p.deal.layout`:
  engine position ``(0, i)`` is card ``i`` of the main deck, whose label
  names the tile's order-face class and a copy number ``j``; the tile itself
  is position ``j`` of that class's sub-deck (a class of one tile needs none);
* the festum removal is the main deck's last six cards, never opened;
* a later deal (the D11 reshuffle of the discard pile) is two-level too: a
  main deck ``deal{d}`` of face cards (engine position ``(d, k)`` is its card
  ``k``) and per-class sub-decks ``deal{d}/FACE`` of the earlier positions the
  pile gathers (``"0.17"``), whose tiles open as those positions' would.  So
  turning up a reshuffled tile's order face shows its face and nothing more.

Cards open in two steps at most, so :meth:`Dealer.cards_for` says what can
be opened *now* for a list of reveals, :meth:`Dealer.record` takes each
label as it opens, and :meth:`Dealer.facts` turns what is open into facts
for ``Game.reveal``.  The same object serves a player and a verifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from .deal import Deck, Layout, layout
from .deal._deck import FACE_SEPARATOR
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
    """The main deck id of a later deal (the D11 reshuffle is deal 1)."""
    return f"deal{deal}"


def position_label(p: Position) -> str:
    return f"{p.deal}.{p.index}"


def parse_position_label(label: str) -> Position:
    deal, _, index = label.partition(".")
    return Position(int(deal), int(index))


def _split(face_card: str) -> tuple[str, int]:
    face, _, copy = face_card.rpartition(FACE_SEPARATOR)
    return face, int(copy)


class Dealer:
    def __init__(self, manifest: Manifest, options: Options) -> None:
        self.layout, self._faces = box_layout(manifest, options)
        self._opened: dict[Card, str] = {}
        # A later deal: for each face class of the pile, the positions it gathers (pile order).
        self._later: dict[int, dict[str, tuple[str, ...]]] = {}

    @property
    def decks(self) -> tuple[Deck, ...]:
        """The decks dealt at setup, in the order their messages go: the main deck, then the sub-decks."""
        return self.layout.decks

    def add_deal(self, deal: int, sources: tuple[Position, ...]) -> tuple[Deck, ...]:
        """The decks of a later deal of the engine (the D11 reshuffle of the discard pile, whose
        order faces were all up): two levels, like the box, so that turning up a tile's order face
        says nothing more than its face.  The main deck ``deal{d}`` holds a face card ``FACE#j``
        per tile; a class of two or more has a sub-deck ``deal{d}/FACE`` of the earlier positions
        it gathers (``"0.17"``), whose tiles open as those positions' would."""
        if deal != len(self._later) + 1:
            raise DealerError(f"deal {deal} comes out of order")
        classes: dict[str, list[str]] = {}
        for p in sources:
            face = self._face_text(p)
            if face is None:
                raise DealerError(f"position {position_label(p)} of the pile was never turned face up")
            classes.setdefault(face, []).append(position_label(p))
        fixed = {face: tuple(labels) for face, labels in sorted(classes.items())}
        self._later[deal] = fixed
        main = Deck(deal_id(deal), tuple(f"{face}{FACE_SEPARATOR}{j}" for face, labels in fixed.items()
                                         for j in range(len(labels))))
        subs = tuple(Deck(f"{deal_id(deal)}/{face}", labels) for face, labels in fixed.items() if len(labels) >= 2)
        return (main, *subs)

    def record(self, card: Card, label: str) -> None:
        """A card opened to ``label`` (the deal package has checked that it is a card of its deck)."""
        self._opened[card] = label

    def opened(self, card: Card) -> str | None:
        return self._opened.get(card)

    def _face_card(self, position: Position) -> Card:
        if position.deal == 0:
            return Card(MAIN, position.index)
        if position.deal not in self._later:
            raise DealerError(f"deal {position.deal} is not known to this dealer")
        return Card(deal_id(position.deal), position.index)

    def _face_text(self, position: Position) -> str | None:
        """The order-face class (as text) of ``position``, once its face card is open."""
        label = self._opened.get(self._face_card(position))
        return None if label is None else _split(label)[0]

    def _tile_step(self, position: Position) -> Card | str:
        """The next shut card on the way to ``position``'s tile, or the tile id (text) once open."""
        card = self._face_card(position)
        label = self._opened.get(card)
        if label is None:
            return card
        if position.deal == 0:
            tile = self.layout.known_tile(label)
            if tile is not None:
                return tile
            found = self.layout.subdeck_position(label)
            assert found is not None
            sub = Card(found[0].deck_id, found[1])
            return self._opened.get(sub) or sub
        face, copy = _split(label)
        sources = self._later[position.deal][face]
        if len(sources) == 1:
            source = sources[0]
        else:
            sub = Card(f"{deal_id(position.deal)}/{face}", copy)
            source = self._opened.get(sub)  # type: ignore[assignment]
            if source is None:
                return sub
        return self._tile_step(parse_position_label(source))

    def cards_for(self, reveals: tuple[Reveal, ...]) -> list[Card]:
        """The cards that must open next for ``reveals``, in a fixed order (each once)."""
        need: set[Card] = set()
        for r in reveals:
            if r.level is Level.FACE:
                card = self._face_card(r.position)
                if card not in self._opened:
                    need.add(card)
            else:
                step = self._tile_step(r.position)
                if isinstance(step, Card):
                    need.add(step)
        return sorted(need)

    def facts(self, reveals: tuple[Reveal, ...]) -> list[tuple[Position, FaceClass | int]]:
        """What the open cards tell of ``reveals``, as arguments for ``Game.reveal``."""
        out: list[tuple[Position, FaceClass | int]] = []
        for r in reveals:
            if r.level is Level.FACE:
                face = self._face_text(r.position)
                if face is not None:
                    out.append((r.position, self._faces[face]))
            else:
                step = self._tile_step(r.position)
                if isinstance(step, str):
                    out.append((r.position, int(step)))
        return out
