"""One narration of a game, in words, for every screen: what a seat's events say to a person.

The full-screen app and the line client show the same log: who sits where,
who moves first, every move (and what taking a vault did to the market),
every scoring area by area, takebacks, clocks that ran out, and how the game
ended.  Both render the :class:`Line` values a :class:`Narrator` makes from
the seat's events; neither writes a sentence of its own about the game.
Everything comes from the events' views, so nothing hidden can be said.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .clock import out_of_time
from .describe import ORDER_TITLE, describe_action, describe_scoring
from .engine import END_LAST_SCORING, END_STACK, Action, Observation, OrderFace
from .engine import actions as A
from .referee import END_FAULT, END_FORFEIT, END_TIME, Outcome
from .seat import (
    AgainOffered,
    ChatSaid,
    ClocksChanged,
    GameOver,
    GameStarted,
    MoveApplied,
    NothingToTakeBack,
    PeerAway,
    PeerBack,
    Scored,
    SeatEvent,
    TakenBack,
    TimeWarning,
    Watching,
)

END_WORDS = {END_LAST_SCORING: "after the last scoring", END_STACK: "(the stack ran out twice)"}
CLEAN_UP = ("Clean-up: every builder and rank token goes home, scaffolding is removed, rows 1-2 are discarded "
            "and the rest of the cathedral moves down to row 1.")
RESHUFFLED = "The stack ran out: the discard pile was shuffled into a new stack."


class LineKind(StrEnum):
    YOU = "you"  # a move of ours
    THEM = "them"  # a move of the other player's
    NOTE = "note"  # who moves first, what a vault did to the market, a takeback
    SCORING = "scoring"  # a scoring's headline
    DETAIL = "detail"  # a scoring's areas, the clean-up, the figures of a claim
    RESULT = "result"  # how the game ended
    CHAT = "chat"  # a line of chat, ours or the other player's


@dataclass(frozen=True)
class Line:
    text: str
    kind: LineKind
    turn: int
    ply: int  # decisions applied when it was said: a takeback drops the lines past it
    slot: int = 0  # a note on what taking V1-V3 changed at that space this turn (0: none)


def names_shown(names: tuple[str, str]) -> tuple[str, str]:
    """Two players called alike are told apart on screen."""
    a, b = names
    return (f"{a} (P1)", f"{b} (P2)") if a == b else (a, b)


class Narrator:
    """Tells one seat's game, to that seat's person; with ``seat`` None, to someone watching."""

    def __init__(self, seat: int | None, names: tuple[str, str]) -> None:
        self.seat = seat
        self.names = names_shown(names)
        self._turn = 0
        self._ply = 0

    def begin(self) -> list[Line]:
        """Who sits where, before anything is dealt."""
        names, seat = self.names, self.seat
        if seat is None:
            return [self._line(f"You watch {names[0]} (player 1) against {names[1]} (player 2); who moves first "
                               "is drawn at random.", LineKind.NOTE)]
        lines = [self._line(f"You are {names[seat]} against {names[1 - seat]} (seat {seat + 1}); who moves "
                            "first is drawn at random.", LineKind.NOTE)]
        if names[0].endswith("(P1)"):
            lines.append(self._line("Both players have the same name; 'basilica id rename NAME' changes yours.",
                                    LineKind.NOTE))
        return lines

    def tell(self, event: SeatEvent) -> list[Line]:
        if isinstance(event, GameStarted):
            return self._started(event)
        if isinstance(event, MoveApplied):
            return self._move(event)
        if isinstance(event, Scored):
            return self._scored(event)
        if isinstance(event, TakenBack):
            view = event.view
            self._ply = event.to
            self._turn = view.turn if view is not None else self._turn
            return [self._line(f"Taken back to your decision in turn {self._turn}: the moves after it are undone "
                               "(the same tiles come again; the replay records the takeback).", LineKind.NOTE)]
        if isinstance(event, NothingToTakeBack):
            return [self._line("Nothing to take back yet: this is your first decision.", LineKind.NOTE)]
        if isinstance(event, ClocksChanged):
            return []  # a clock that runs out is told with the claim that ends the game
        if isinstance(event, GameOver):
            return self._over(event.outcome)
        if isinstance(event, (PeerAway, PeerBack, TimeWarning)):
            return [self._line(presence_words(event, self.names, self.seat), LineKind.NOTE)]
        if isinstance(event, ChatSaid):
            return [self._line(chat_words(event, self.names, self.seat), LineKind.CHAT)]
        if isinstance(event, Watching):
            who = ", ".join(event.names)
            return [self._line(f"Watching this game: {who}." if who else "Nobody is watching this game now.",
                               LineKind.NOTE)]
        if isinstance(event, AgainOffered):
            return [self._line(f"{event.name} would like to play again." if event.yes else
                               f"{event.name} wants no other game.", LineKind.NOTE)]
        return []

    def _started(self, event: GameStarted) -> list[Line]:
        view = event.view
        if view is not None:
            self._turn, self._ply = view.turn, len(view.history)
        if event.resumed:
            return [self._line(f"The game goes on from turn {self._turn}.", LineKind.NOTE)]
        who = event.first
        return [self._line("You move first." if who == self.seat else f"{self.names[who]} moves first.",
                           LineKind.NOTE)]

    def _move(self, event: MoveApplied) -> list[Line]:
        self._turn, self._ply = event.turn, event.ply + 1
        before, after = event.before, event.after
        mine = event.mover == self.seat
        lines = [self._line(describe_action(event.action, event.mover, before, after, self.names, reader=self.seat),
                            LineKind.YOU if mine else LineKind.THEM)]
        slot = slot_change(event.action, before, after)
        if slot is not None:
            lines.append(self._line(slot, LineKind.NOTE, event.action.space))
        if before is not None and after is not None and after.reshuffles > before.reshuffles:
            lines.append(self._line(RESHUFFLED, LineKind.NOTE))
        return lines

    def _scored(self, event: Scored) -> list[Line]:
        said = describe_scoring(event.result, event.number, self.names)
        lines = [self._line(said[0], LineKind.SCORING)]
        lines += [self._line(text, LineKind.DETAIL) for text in said[1:]]
        if not event.last:
            lines.append(self._line(CLEAN_UP, LineKind.DETAIL))
        return lines

    def _over(self, o: Outcome) -> list[Line]:
        names, seat = self.names, self.seat
        if o.end == END_FAULT:
            return [self._line(f"Game over: {fault_words(o, names, seat)}.", LineKind.RESULT)]
        if o.end == END_TIME and o.time is not None:
            return [self._line(out_of_time(o.time.loser, names, seat), LineKind.RESULT),
                    self._line(f"({o.time.figures(names)})", LineKind.DETAIL)]
        if o.end == END_FORFEIT:
            winner = o.winner if o.winner is not None else 0
            loser = 1 - winner
            how = "resigned" if o.claimed_by == loser else "forfeited"
            who = "You" if loser == seat else names[loser]
            return [self._line(f"Game over: {who} {how} ({o.reason}): "
                               f"{'you win' if winner == seat else names[winner] + ' wins'} by forfeit.",
                               LineKind.RESULT)]
        a, b = o.scores
        you = [" (you)" if p == seat else "" for p in (0, 1)]
        who_won = "a shared victory" if a == b else f"{names[0 if a > b else 1]} wins"
        return [self._line(f"Game over {END_WORDS.get(o.end, o.end)}: {names[0]}{you[0]} {a}, "
                           f"{names[1]}{you[1]} {b}: {who_won}.", LineKind.RESULT)]

    def _line(self, text: str, kind: LineKind, slot: int = 0) -> Line:
        return Line(text, kind, self._turn, self._ply, slot)


def chat_words(event: ChatSaid, names: tuple[str, str], reader: int | None = None) -> str:
    """A line of chat as a person reads it: who said it, then what (the text rule made it safe to print)."""
    return f"{'You' if event.who == reader else names[event.who]}: {event.text}"


def presence_words(event: PeerAway | PeerBack | TimeWarning, names: tuple[str, str], reader: int | None) -> str:
    """A network game's absences and limits, to the person of seat ``reader``."""
    if isinstance(event, PeerBack):
        return f"{event.name} is back: the game goes on."
    if isinstance(event, PeerAway):
        if event.first:
            why = f" ({event.why})" if event.why else ""
            return (f"{event.name} has gone{why}. Waiting up to {event.seconds:.0f} s for them to come back "
                    "(they run 'basilica resume' if their program stopped); after that the game is yours.")
        return f"Waiting for {event.name} to come back: {event.seconds:.0f} s left."
    if event.who == reader:
        return f"You have {event.seconds:.0f} s left for this decision; after that the game is lost."
    return f"{names[event.who]} has {event.seconds:.0f} s left for this decision; after that the game is yours."


def fault_words(o: Outcome, names: tuple[str, str], reader: int | None = None) -> str:
    """A game won by proof (protocol 3): who signed the message that broke the rules, where, why.

    Every screen and report says it this way: the message is numbered as a replay file's record
    (``basilica replay show`` counts the same), and the proof is that record's fault message.
    """
    winner = o.winner if o.winner is not None else 0
    loser = 1 - winner
    who = "you" if reader == loser else f"{names[loser]} (player {loser + 1})"
    wins = "you win" if reader == winner else f"{names[winner]} wins"
    at = f" at record {o.fault + 1}" if o.fault is not None else ""
    return f"{who} signed a message that breaks the rules{at} ({o.reason}): {wins} by proof, kept in the replay"


def slot_change(action: Action, before: Observation | None, after: Observation | None) -> str | None:
    """After a vault taken from V*k*: which order now sits at O*k*, and which one it replaced
    (that one became the new V*k*).  Public facts only: both order faces were on the table."""
    if action.kind != A.VAULT or before is None or after is None or after.over or not 1 <= action.space <= 3:
        return None
    k = action.space
    was, now = before.orders[k - 1], after.orders[k - 1]
    if not isinstance(was, OrderFace):
        return None
    new = ORDER_TITLE.get(now.order, now.order.value) if isinstance(now, OrderFace) else "empty"
    return f"O{k} is now {new} (was {ORDER_TITLE.get(was.order, was.order.value)}, turned over into V{k})."
