"""The vocabulary of a hidden deal: positions, reveals, and what asks for them.

In a hidden game (``Game.new_hidden``) neither engine knows the stack.  The
stack, the order row, the market and every other place hold
:class:`Position` values, slots of a deal, instead of tile ids, and the
engine learns a position's order face or its identity only when the rules
make it public, through ``Game.reveal``.  When an action turns over a fact
nobody has opened yet, the game waits for it (pending ``REVEAL``;
``Game.needed_reveals`` lists what), and goes on once ``Game.reveal`` has
given every fact.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from .errors import EngineError
from .manifest import FaceClass


class Position(NamedTuple):
    """Slot ``index`` of deal ``deal``: index 0 is the first tile drawn from it.

    Deal 0 is the setup's deck (its last six slots are the festum removal,
    when it is played); deal 1 is the D11 reshuffle of the discard pile.
    Positions come from public facts only (how many tiles each deal holds),
    so both engines number them alike.
    """

    deal: int
    index: int  # type: ignore[assignment]  # a field may shadow tuple.index, which typeshed types as the method


class Level(StrEnum):
    """How much a reveal opens.  FACE: the order-face class; TILE: the tile id."""

    FACE = "face"
    TILE = "tile"


@dataclass(frozen=True, slots=True)
class Reveal:
    position: Position
    level: Level


@dataclass(frozen=True)
class Deck:
    """What is public about one deal: its size and what went into it.

    ``faces`` counts the order-face classes of its tiles (for deal 0 the
    whole box, for the reshuffle the discard pile, whose faces were up);
    ``known`` holds the tile ids known to be in it (the reshuffled vault-up
    discards), so a tile cannot be revealed in two deals.
    """

    size: int
    faces: tuple[tuple[FaceClass, int], ...]
    known: frozenset[int] = frozenset()
    # The positions of the deal before that this one gathers, in pile order (none for
    # deal 0): public, since they lay face up; a dealer deals them as a new deck.
    sources: tuple[Position, ...] = ()

    def copies(self, face: FaceClass) -> int:
        return next((n for f, n in self.faces if f == face), 0)

    def to_list(self) -> list[object]:
        return [self.size, [[*f.to_list(), n] for f, n in self.faces], sorted(self.known)]


def count_faces(faces: list[FaceClass]) -> tuple[tuple[FaceClass, int], ...]:
    counts: dict[FaceClass, int] = {}
    for f in faces:
        counts[f] = counts.get(f, 0) + 1
    # A fixed order so that the canonical state does not depend on dict order.
    return tuple(sorted(counts.items(), key=lambda item: item[0].to_list()))


class RevealError(EngineError):
    """A reveal that the engine refuses: not due, or contradicting what it knows."""


__all__ = ["Deck", "Level", "Position", "Reveal", "RevealError", "count_faces"]
