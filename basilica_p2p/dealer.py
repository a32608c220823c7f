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

from collections.abc import Iterable
from dataclasses import dataclass

from .deal import FACE_SEPARATOR, MAX_CARDS, Deck, Layout, layout, subdeck_id
from .engine import FaceClass, Level, Manifest, Options, Position, Reveal
from .schemes import HIDDEN_DEAL
from .wire import MAX_DECKS

MAIN_DECK = "faces"
# The cards of the box's deal at most: one face card per tile, one sub-deck card per tile of a
# class of two or more.  Every `deal` envelope then fits the 65 536-byte cap (PROTOCOL.md §5b):
# 917 cards in 64 decks with the longest deck ids (26 code points) and the largest seq is the
# most that fits; a D11 deal is never larger than the box's.
MAX_BOX_CARDS = 900


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


def _box_classes(manifest: Manifest, options: Options) -> tuple[list[tuple[str, list[str]]], dict[str, FaceClass]]:
    """Every tile in play by order-face class: the classes in code-point order of their text, each
    class's tiles (decimal text) in ascending numeric order of id (9 before 10); and each face
    label's class."""
    shown = manifest.order_faces_show_crown
    tiles = list(manifest.tiles) + (list(manifest.festum_tiles) if options.festum else [])
    classes: dict[str, list[str]] = {}
    faces: dict[str, FaceClass] = {}
    for t in sorted(tiles, key=lambda t: t.id):
        face = t.face_class(shown)
        label = face_label(face)
        faces[label] = face
        classes.setdefault(label, []).append(str(t.id))
    return sorted(classes.items()), faces


def box_layout(manifest: Manifest, options: Options) -> tuple[Layout, dict[str, FaceClass]]:
    """The two-level deck of every tile in play, classes in a fixed order, and each face label's class."""
    classes, faces = _box_classes(manifest, options)
    return layout(classes, main_id=MAIN_DECK), faces


def deal_problem(manifest: Manifest, options: Options) -> str | None:
    """Why ``sra-p256-v1`` cannot deal the tiles this game plays with, in one line; None when it can.

    Both peers check it before their hellos and a verifier on reading the header, so a box too
    big for the deal's messages is refused before any game starts (PROTOCOL.md §5b): at most
    512 tiles (one deck), 63 classes of two or more tiles (a `deal` holds at most 64 decks) and
    :data:`MAX_BOX_CARDS` cards in all (a `deal` envelope stays under the 64 KiB cap)."""
    classes, _ = _box_classes(manifest, options)
    tiles = sum(len(t) for _, t in classes)
    shared = [t for _, t in classes if len(t) >= 2]
    cards = tiles + sum(len(t) for t in shared)
    what = f"the hidden deal {HIDDEN_DEAL} cannot deal this game's {tiles} tiles:"
    if tiles > MAX_CARDS:
        return f"{what} it deals at most {MAX_CARDS} tiles"
    if len(shared) > MAX_DECKS - 1:
        return (f"{what} {len(shared)} order-face classes hold two or more tiles, and it deals at most "
                f"{MAX_DECKS - 1} (one deck each, {MAX_DECKS} decks to a deal message)")
    if cards > MAX_BOX_CARDS:
        return (f"{what} they make {cards} cards (one per tile, one more per tile of a class of two or "
                f"more), and at most {MAX_BOX_CARDS} fit its messages")
    return None


def deal_id(deal: int) -> str:
    """The main deck id of a later deal (the D11 reshuffle is deal 1)."""
    return f"deal{deal}"


def position_label(p: Position) -> str:
    """A position of an earlier deal as a card of a later deal's sub-deck (``"0.17"``)."""
    return f"{p.deal}.{p.index}"


@dataclass(frozen=True)
class FaceCopy:
    """What a main deck's card opens to: copy ``copy`` of the order-face class written ``face``
    (its card's label is ``face#copy``)."""

    face: str
    copy: int

    @property
    def label(self) -> str:
        return f"{self.face}{FACE_SEPARATOR}{self.copy}"


# What an open card says, as the dealer keeps it: a face card's class and copy, a tile of the box
# (deal 0's sub-decks), or the earlier position whose tile a later deal's sub-deck card stands for.
Opened = FaceCopy | int | Position


class Dealer:
    def __init__(self, manifest: Manifest, options: Options) -> None:
        self.layout, self._faces = box_layout(manifest, options)
        # Every card's label read once, when its deck is made: opening a card looks its meaning up.
        self._meanings: dict[tuple[str, str], Opened] = {}
        self._classes = dict(self.layout.classes)  # face -> its tiles (ids as text)
        self._learn(MAIN_DECK, (FaceCopy(face, j) for face, tiles in self.layout.classes for j in range(len(tiles))))
        for face, tiles in self.layout.classes:
            if len(tiles) >= 2:
                self._learn(subdeck_id(face), (int(t) for t in tiles))
        self._opened: dict[Card, Opened] = {}
        # A later deal: for each face class of the pile, the positions it gathers (pile order).
        self._later: dict[int, dict[str, tuple[Position, ...]]] = {}

    def _learn(self, deck: str, meanings: Iterable[Opened]) -> None:
        for meaning in meanings:
            label = meaning.label if isinstance(meaning, FaceCopy) else \
                position_label(meaning) if isinstance(meaning, Position) else str(meaning)
            self._meanings[(deck, label)] = meaning

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
        classes: dict[str, list[Position]] = {}
        for p in sources:
            face = self.face_text(p)
            if face is None:
                raise DealerError(f"position {position_label(p)} of the pile was never turned face up")
            classes.setdefault(face, []).append(p)
        fixed = {face: tuple(positions) for face, positions in sorted(classes.items())}
        self._later[deal] = fixed
        main = [FaceCopy(face, j) for face, positions in fixed.items() for j in range(len(positions))]
        self._learn(deal_id(deal), main)
        subs = []
        for face, positions in fixed.items():
            if len(positions) >= 2:
                self._learn(f"{deal_id(deal)}/{face}", positions)
                subs.append(Deck(f"{deal_id(deal)}/{face}", tuple(position_label(p) for p in positions)))
        return (Deck(deal_id(deal), tuple(c.label for c in main)), *subs)

    def record(self, card: Card, label: str) -> None:
        """A card opened to ``label`` (the deal package has checked that it is a card of its deck)."""
        meaning = self._meanings.get((card.deck, label))
        if meaning is None:  # pragma: no cover - the deal package opens only its deck's labels
            raise DealerError(f"{label!r} is not a card of deck {card.deck!r}")
        self._opened[card] = meaning

    def opened(self, card: Card) -> Opened | None:
        return self._opened.get(card)

    def _face_card(self, position: Position) -> Card:
        if position.deal == 0:
            return Card(MAIN_DECK, position.index)
        if position.deal not in self._later:
            raise DealerError(f"deal {position.deal} is not known to this dealer")
        return Card(deal_id(position.deal), position.index)

    def _face_open(self, position: Position) -> FaceCopy | None:
        """What ``position``'s face card opened to, once it is open."""
        opened = self._opened.get(self._face_card(position))
        assert opened is None or isinstance(opened, FaceCopy)
        return opened

    def face_text(self, position: Position) -> str | None:
        """The order-face class (as text) of ``position``, once its face card is open."""
        opened = self._face_open(position)
        return None if opened is None else opened.face

    def _tile_step(self, position: Position) -> Card | int:
        """The next shut card on the way to ``position``'s tile, or the tile id once open."""
        card = self._face_card(position)
        opened = self._face_open(position)
        if opened is None:
            return card
        if position.deal == 0:
            tiles = self._classes[opened.face]
            if len(tiles) == 1:
                return int(tiles[0])
            sub = Card(subdeck_id(opened.face), opened.copy)
            tile = self._opened.get(sub)
            if tile is None:
                return sub
            assert isinstance(tile, int)  # the box's sub-decks open to tile ids (_learn above)
            return tile
        sources = self._later[position.deal][opened.face]
        if len(sources) == 1:
            return self._tile_step(sources[0])
        sub = Card(f"{deal_id(position.deal)}/{opened.face}", opened.copy)
        source = self._opened.get(sub)
        if source is None:
            return sub
        assert isinstance(source, Position)
        return self._tile_step(source)

    def tells_more_than_face(self, position: Position) -> bool:
        """Whether the open cards already say which tile lies at ``position`` although its order face
        alone would not (its class holds two or more tiles): the leak a two-level deal prevents
        until the rules turn the tile up (a secrecy check)."""
        opened = self._face_open(position)
        if opened is None or isinstance(self._tile_step(position), Card):
            return False
        tiles = self._later[position.deal][opened.face] if position.deal else self._classes[opened.face]
        return len(tiles) > 1

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
                face = self.face_text(r.position)
                if face is not None:
                    out.append((r.position, self._faces[face]))
            else:
                step = self._tile_step(r.position)
                if not isinstance(step, Card):
                    out.append((r.position, step))
        return out
