"""What a seat tells its driver and, through it, the person or program at the table.

Every event is a frozen value built from public facts only: the views are
observations of the seat's reader (its own player; player 1 for a
verifier), never the engine's state, so an event may go to a bot or a
screen as it is.  A seat made without views (``basilica verify``) leaves
them ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..clock import ClockView
    from ..engine import Action, Event, Observation, ScoringResult
    from ..referee import Outcome


@dataclass(frozen=True)
class GameStarted:
    """The setup is done and the first decision is due: who sits where and who moves first
    (or, ``resumed``, the game as it stands for an agent that joins it under way)."""

    names: tuple[str, str]
    first: int
    view: Observation | None = None
    resumed: bool = False  # told to an agent joining a game under way (after ``basilica resume``)


@dataclass(frozen=True)
class MoveApplied:
    """Decision number ``ply`` (0-based) of ``mover``, now applied with everything it turned over.

    ``events`` are what the rules did by themselves meanwhile (a redeal, a
    scoring, the reshuffle); ``before`` is the reader's view when the
    decision was due, ``after`` its view now.
    """

    ply: int
    turn: int
    mover: int
    action: Action
    events: tuple[Event, ...]
    before: Observation | None = None
    after: Observation | None = None


@dataclass(frozen=True)
class Scored:
    """Scoring number ``number`` (1-based), set off by the move just applied."""

    number: int
    turn: int
    ply: int
    result: ScoringResult
    last: bool  # the game ended with it


@dataclass(frozen=True)
class TakenBack:
    """Both players signed a takeback: the game went back to its first ``to`` decisions."""

    asker: int
    to: int
    view: Observation | None = None


@dataclass(frozen=True)
class NothingToTakeBack:
    """``asker`` asked for a takeback before any decision of its own: nothing was signed."""

    asker: int


@dataclass(frozen=True)
class ClocksChanged:
    view: ClockView


@dataclass(frozen=True)
class GameOver:
    outcome: Outcome


@dataclass(frozen=True)
class ChatSaid:
    """A line of chat (protocol 3), by ``who`` (0 or 1), said when ``at`` messages of the game
    were in (so a replay shows it there); ``n`` is its number among its sender's lines."""

    who: int
    text: str
    at: int
    n: int


# Told by the network driver (the seat knows no connections), beside the seat's own events.


@dataclass(frozen=True)
class PeerAway:
    """The other side has gone (its connection broke, or it fell silent): this side waits for it
    to come back, and has ``seconds`` more to wait before it claims the game (the agreed window).
    Told when the wait begins (``first``), then every few seconds with what is left."""

    name: str
    seconds: float
    first: bool = False
    why: str = ""


@dataclass(frozen=True)
class PeerBack:
    """The other side came back: the game goes on."""

    name: str


@dataclass(frozen=True)
class TimeWarning:
    """A decision's agreed limit (a network game without a clock) is near: ``who`` (0 or 1) has
    ``seconds`` left to decide, after which that side loses the game."""

    who: int
    seconds: float


@dataclass(frozen=True)
class Series:
    """The games played on one connection so far, as one side counts them: ``names`` is
    (us, the other side), ``wins`` each one's games won, ``shared`` the shared victories."""

    names: tuple[str, str]
    wins: tuple[int, int] = (0, 0)
    shared: int = 0

    @property
    def games(self) -> int:
        return self.wins[0] + self.wins[1] + self.shared

    def after(self, winner: int | None) -> Series:
        """The series after one more game, won by ``winner`` (0: us, 1: the other side, None: shared)."""
        if winner is None:
            return Series(self.names, self.wins, self.shared + 1)
        wins = (self.wins[0] + (winner == 0), self.wins[1] + (winner == 1))
        return Series(self.names, wins, self.shared)

    def line(self) -> str:
        """E.g. "alice 2 - 1 bob" (with "1 shared" when a game was)."""
        shared = f" ({self.shared} shared)" if self.shared else ""
        return f"{self.names[0]} {self.wins[0]} - {self.wins[1]} {self.names[1]}{shared}"


@dataclass(frozen=True)
class AgainOffered:
    """Between games: the other side wants another game (``yes``), or wants none (then no
    question of ours is asked any longer)."""

    name: str
    yes: bool


@dataclass(frozen=True)
class Watching:
    """Who is watching the game now (their names, as they gave them), told when it changes."""

    names: tuple[str, ...]


SeatEvent = (GameStarted | MoveApplied | Scored | TakenBack | NothingToTakeBack | ClocksChanged | GameOver
             | ChatSaid | PeerAway | PeerBack | TimeWarning | AgainOffered | Watching)
